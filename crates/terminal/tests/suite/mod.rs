mod pty;
mod text;
