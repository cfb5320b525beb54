mod pty;
