//! The I/O side: `/dev/tty`, raw mode, the inline viewport, and the restore guard.
//!
//! Everything is drawn on the controlling terminal, never on stdout, so stdout can carry the
//! answer or a protocol. The viewport is inline (below the text already on screen, which
//! stays visible): the cursor position is asked on `/dev/tty` itself (crossterm's own query
//! writes to stdout) when the question opens, after a resize (terminals reflow lines; the
//! hidden cursor, parked at the viewport's top left, moves with them) and after a suspend,
//! and is tracked in between. These queries run while crossterm's event reader is stopped,
//! so the reply is not read as keys. The viewport grows when the question needs more rows
//! (a long own answer); it is redrawn from scratch on Ctrl-L.
//!
//! The [`Session`] restores the terminal when dropped: viewport cleared (a summary of what
//! was answered left in its place), cursor shown, raw mode off. Dropping happens on an
//! answer, Esc, Ctrl-C, cancellation (timeout, another
//! answerer won, SIGTERM turned into cancellation by the host) and unwinding panics; a panic
//! hook also turns raw mode off before the panic message is printed.

use std::fs::{File, OpenOptions};
use std::io::{self, BufWriter, Write};
use std::sync::Once;
use std::sync::atomic::{AtomicU16, Ordering};
use std::time::{Duration, Instant};

use crossterm::cursor::{Hide, MoveTo, Show};
use crossterm::event::{DisableBracketedPaste, EnableBracketedPaste};
use crossterm::terminal::{self, Clear, ClearType};
use crossterm::{execute, queue};
use ratatui::backend::{Backend, ClearType as RClearType, CrosstermBackend, WindowSize};
use ratatui::buffer::Cell;
use ratatui::layout::{Position, Size};
use ratatui::{Terminal, TerminalOptions, Viewport};

use crate::layout::Theme;
use crate::render::{needed_height, render};
use crate::state::AskState;

/// How long to wait for the terminal to report the cursor position before assuming the
/// bottom row.
const CURSOR_QUERY_TIMEOUT: Duration = Duration::from_millis(300);

/// How long the cursor query waits: [`CURSOR_QUERY_TIMEOUT`], or in a build with the
/// `test-knobs` feature the milliseconds in [`crate::CURSOR_QUERY_TEST_ENV`] when set.
fn cursor_query_timeout() -> Duration {
    #[cfg(feature = "test-knobs")]
    if let Some(ms) = std::env::var(crate::CURSOR_QUERY_TEST_ENV)
        .ok()
        .and_then(|v| v.parse().ok())
    {
        return Duration::from_millis(ms);
    }
    CURSOR_QUERY_TIMEOUT
}

/// Opens the controlling terminal for reading and writing. Fails at once (no waiting) when
/// the process has none (e.g. under `setsid` or in a service), or when it runs in the
/// background of a shell with job control: taking the terminal there would stop the process
/// (SIGTTOU) until someone brings it to the foreground, which looks like a hang.
pub(crate) fn open() -> io::Result<File> {
    let tty = OpenOptions::new().read(true).write(true).open("/dev/tty")?;
    if let Ok(foreground) = rustix::termios::tcgetpgrp(&tty)
        && foreground != rustix::process::getpgrp()
    {
        return Err(io::Error::other(
            "the terminal belongs to another process group (running in the background)",
        ));
    }
    Ok(tty)
}

/// Raw mode on for as long as this lives.
#[derive(Debug)]
struct RawMode;

impl RawMode {
    fn enable() -> io::Result<Self> {
        install_panic_hook();
        terminal::enable_raw_mode()?;
        Ok(Self)
    }
}

impl Drop for RawMode {
    fn drop(&mut self) {
        let _ = terminal::disable_raw_mode();
    }
}

/// The row where the question is drawn, for the panic hook; [`NO_VIEWPORT`] when none is.
static VIEWPORT_TOP: AtomicU16 = AtomicU16::new(NO_VIEWPORT);
const NO_VIEWPORT: u16 = u16::MAX;

/// Before a panic message is printed: the question cleared, raw mode off and cursor shown, so
/// the message is readable where the question was and the shell usable. (The [`Session`]'s
/// drop, running while unwinding, then leaves the screen alone.)
fn install_panic_hook() {
    static HOOK: Once = Once::new();
    HOOK.call_once(|| {
        let previous = std::panic::take_hook();
        std::panic::set_hook(Box::new(move |info| {
            if terminal::is_raw_mode_enabled().unwrap_or(false) {
                let _ = terminal::disable_raw_mode();
                if let Ok(mut tty) = open() {
                    let top = VIEWPORT_TOP.swap(NO_VIEWPORT, Ordering::SeqCst);
                    if top != NO_VIEWPORT {
                        let _ = clear_below(&mut tty, top);
                        let _ = tty.flush();
                    }
                    let _ = execute!(tty, DisableBracketedPaste, Show);
                }
            }
            previous(info);
        }));
    });
}

/// The crossterm backend on `/dev/tty`, with the cursor position tracked instead of asked
/// (crossterm's `cursor::position()` writes its query to stdout).
#[derive(Debug)]
struct TtyBackend {
    inner: CrosstermBackend<BufWriter<File>>,
    cursor: Position,
}

impl Backend for TtyBackend {
    type Error = io::Error;

    fn draw<'a, I>(&mut self, content: I) -> io::Result<()>
    where
        I: Iterator<Item = (u16, u16, &'a Cell)>,
    {
        self.inner.draw(content)
    }
    fn append_lines(&mut self, n: u16) -> io::Result<()> {
        let rows = self.inner.size()?.height;
        self.cursor.y = self.cursor.y.saturating_add(n).min(rows.saturating_sub(1));
        self.inner.append_lines(n)
    }
    fn hide_cursor(&mut self) -> io::Result<()> {
        self.inner.hide_cursor()
    }
    fn show_cursor(&mut self) -> io::Result<()> {
        self.inner.show_cursor()
    }
    fn get_cursor_position(&mut self) -> io::Result<Position> {
        Ok(self.cursor)
    }
    fn set_cursor_position<P: Into<Position>>(&mut self, position: P) -> io::Result<()> {
        self.cursor = position.into();
        self.inner.set_cursor_position(self.cursor)
    }
    fn clear(&mut self) -> io::Result<()> {
        self.inner.clear()
    }
    fn clear_region(&mut self, clear_type: RClearType) -> io::Result<()> {
        self.inner.clear_region(clear_type)
    }
    fn size(&self) -> io::Result<Size> {
        size().map(|(width, height)| Size { width, height })
    }
    fn window_size(&mut self) -> io::Result<WindowSize> {
        self.inner.window_size()
    }
    fn flush(&mut self) -> io::Result<()> {
        Backend::flush(&mut self.inner)
    }
}

/// The question on the terminal: raw mode, the inline viewport, the restore on drop.
pub(crate) struct Session {
    terminal: Terminal<TtyBackend>,
    tty: File,
    theme: Theme,
    /// The viewport's height and the terminal's size it was made for.
    height: u16,
    size: (u16, u16),
    /// Lines to leave where the question was (what was answered), written by the restore.
    summary: Vec<String>,
    // Dropped last: raw mode goes off after the viewport is cleared.
    _raw: RawMode,
}

impl std::fmt::Debug for Session {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Session").finish_non_exhaustive()
    }
}

impl Session {
    /// Takes the terminal: raw mode, cursor hidden, a viewport tall enough for the batch
    /// below the current line, and the bell.
    pub(crate) fn start(tty: File, state: &AskState<'_>, theme: Theme) -> io::Result<Self> {
        let raw = RawMode::enable()?;
        // Takes crossterm's reader lock: a reader thread of an earlier ask has let go of the
        // tty, so the cursor-position reply below is not read as keys. (In raw mode: in
        // cooked mode a read after a readiness report can block until a whole line comes.)
        let _ = crossterm::event::poll(Duration::ZERO);
        let mut tty = tty;
        let size = size()?;
        let top = start_line(&mut tty, size.1)?;
        discard_typed_ahead();
        queue!(tty, Hide, EnableBracketedPaste)?;
        tty.write_all(b"\x07")?;
        let height = needed_height(state, size.0, size.1, theme);
        let terminal = viewport(tty.try_clone()?, top, height)?;
        Ok(Self {
            terminal,
            tty,
            theme,
            height,
            size,
            summary: Vec::new(),
            _raw: raw,
        })
    }

    /// Whether the question can be drawn at the terminal's size (else only a message is).
    pub(crate) fn fits(&self) -> bool {
        crate::render::fits(self.size.0, self.size.1)
    }

    /// Draws the state and parks the (hidden) cursor at the viewport's top left, where the
    /// next redraw, a resize or the restore expects it. The viewport grows (up to the
    /// screen's height) when the question needs more rows, e.g. for a long own answer.
    pub(crate) fn draw(&mut self, state: &AskState<'_>) -> io::Result<()> {
        let now = size()?;
        if now != self.size {
            // The resize event (which asks where the view went) is on its way; until then
            // the view stays where it was known to be.
            self.size = now;
            let top = self.top().y.min(now.1.saturating_sub(1));
            tracing::debug!(top, ?now, "size changed before its event");
            let height = needed_height(state, now.0, now.1, self.theme);
            self.rebuild(Position::new(0, top), height)?;
        }
        let needed = needed_height(state, self.size.0, self.size.1, self.theme);
        if needed > self.height {
            let top = self.top();
            self.rebuild(top, needed)?;
        }
        let theme = self.theme;
        self.terminal
            .draw(|frame| render(state, frame.area(), frame.buffer_mut(), theme))?;
        let top = self.top();
        VIEWPORT_TOP.store(top.y, Ordering::SeqCst);
        self.terminal.set_cursor_position(top)?;
        Backend::flush(self.terminal.backend_mut())
    }

    /// The viewport's top left (the completed frame's `area` is the whole screen).
    fn top(&mut self) -> Position {
        self.terminal.get_frame().area().as_position()
    }

    /// A new viewport of `height` rows at `top`, everything from there down cleared (the
    /// next draw paints it all).
    fn rebuild(&mut self, top: Position, height: u16) -> io::Result<()> {
        clear_below(&mut self.tty, top.y)?;
        self.height = height;
        self.terminal = viewport(self.tty.try_clone()?, Position::new(0, top.y), height)?;
        Ok(())
    }

    /// After a resize: the viewport again where the terminal moved its top left (terminals
    /// reflow lines; the parked cursor moves with them), everything below cleared. The
    /// screen is never cleared as a whole, so no copies of the question pile up in the
    /// scrollback and what was above stays.
    ///
    /// Call with the event reader stopped (see [`Session::locate`]).
    pub(crate) fn resize(&mut self, state: &AskState<'_>) -> io::Result<()> {
        self.size = size()?;
        let (columns, rows) = self.size;
        let known = self.top();
        let located = locate(&mut self.tty);
        tracing::debug!(?known, ?located, columns, rows, "resized");
        let top = located.map_or(known.y, |p| p.y).min(rows.saturating_sub(1));
        let height = needed_height(state, columns, rows, self.theme);
        self.rebuild(Position::new(0, top), height)
    }

    /// Ctrl-L: everything from the viewport's top down cleared and drawn again (output of
    /// another process written over the question goes away).
    pub(crate) fn redraw(&mut self) -> io::Result<()> {
        let top = self.top();
        let height = self.height;
        self.rebuild(top, height)
    }

    /// Ctrl-Z or SIGTSTP: the question cleared, the terminal given back, the process stopped;
    /// when it continues (`fg`), raw mode again and the question drawn below the shell's
    /// lines. Call with the event reader stopped.
    pub(crate) fn suspend(&mut self, state: &AskState<'_>) -> io::Result<()> {
        let top = self.top();
        clear_below(&mut self.tty, top.y)?;
        execute!(self.tty, DisableBracketedPaste, Show)?;
        VIEWPORT_TOP.store(NO_VIEWPORT, Ordering::SeqCst);
        terminal::disable_raw_mode()?;
        // SIGSTOP, not SIGTSTP: a handler for SIGTSTP may be installed (ours).
        rustix::process::kill_process(rustix::process::getpid(), rustix::process::Signal::STOP)
            .map_err(io::Error::from)?;
        self.resume(state)
    }

    /// Whether the terminal is still in raw mode: nobody reset it while the process was
    /// stopped (or this process's own suspend already resumed it).
    pub(crate) fn still_raw(&self) -> bool {
        rustix::termios::tcgetattr(&self.tty)
            .is_ok_and(|t| !t.local_modes.contains(rustix::termios::LocalModes::ICANON))
    }

    /// The process continues: raw mode (the shell may have reset the terminal), cursor
    /// hidden, bracketed paste, and the viewport on a line of its own.
    pub(crate) fn resume(&mut self, state: &AskState<'_>) -> io::Result<()> {
        raw_again()?;
        self.size = size()?;
        let top = start_line(&mut self.tty, self.size.1)?;
        queue!(self.tty, Hide, EnableBracketedPaste)?;
        let height = needed_height(state, self.size.0, self.size.1, self.theme);
        self.rebuild(top, height)
    }

    /// Lines to leave on screen after the restore, in place of the question.
    pub(crate) fn leave(&mut self, summary: Vec<String>) {
        self.summary = summary;
    }

    fn restore(&mut self) -> io::Result<()> {
        let drawn = VIEWPORT_TOP.swap(NO_VIEWPORT, Ordering::SeqCst) != NO_VIEWPORT;
        if std::thread::panicking() || !drawn {
            // A panic (here or in the thread that asked) cleared the question in the panic
            // hook; its message is on screen now, where the question was.
            return execute!(self.tty, DisableBracketedPaste, Show);
        }
        let top = self.top();
        clear_below(&mut self.tty, top.y)?;
        for line in &self.summary {
            write!(self.tty, "{line}\r\n")?;
        }
        execute!(self.tty, DisableBracketedPaste, Show)
    }
}

impl Drop for Session {
    fn drop(&mut self) {
        if let Err(error) = self.restore() {
            tracing::warn!(%error, "could not clear the question from the terminal");
        }
    }
}

/// Raw mode on again, also when crossterm believes it still is (the shell may have reset the
/// terminal while the process was stopped).
pub(crate) fn raw_again() -> io::Result<()> {
    let _ = terminal::disable_raw_mode();
    terminal::enable_raw_mode()
}

/// Clears the screen from row `top` down, one line at a time, and leaves the cursor at the
/// start of row `top`. (Not "erase below": from the top left that is a whole-screen clear,
/// which tmux's `scroll-on-clear` turns into a copy of the screen in the scrollback.)
fn clear_below(tty: &mut File, top: u16) -> io::Result<()> {
    let (_, rows) = size()?;
    for y in top..rows {
        queue!(tty, MoveTo(0, y), Clear(ClearType::CurrentLine))?;
    }
    queue!(tty, MoveTo(0, top))
}

/// Where the viewport starts: the cursor's line when it is at the start of one, else the
/// next line (asked on the tty; the bottom row when the terminal does not answer).
fn start_line(tty: &mut File, rows: u16) -> io::Result<Position> {
    let mut cursor = query_cursor(tty).unwrap_or(Position::new(0, rows.saturating_sub(1)));
    if cursor.x > 0 {
        tty.write_all(b"\r\n")?;
        cursor = Position::new(0, (cursor.y + 1).min(rows.saturating_sub(1)));
    }
    Ok(cursor)
}

/// Where the terminal has the (parked) cursor now; `None` when it does not answer.
fn locate(tty: &mut File) -> Option<Position> {
    query_cursor(tty)
}

/// Drops keys typed before the question appeared (or left over from an earlier question in
/// this process): a key meant for something else must never answer a question.
fn discard_typed_ahead() {
    for _ in 0..1024 {
        match crossterm::event::poll(Duration::ZERO) {
            Ok(true) => {
                let _ = crossterm::event::read();
            }
            _ => break,
        }
    }
}

/// The terminal's size; 80×24 when it reports none (a pty nobody sized).
fn size() -> io::Result<(u16, u16)> {
    let (columns, rows) = terminal::size()?;
    if columns == 0 || rows == 0 {
        return Ok((80, 24));
    }
    Ok((columns, rows))
}

fn viewport(tty: File, cursor: Position, height: u16) -> io::Result<Terminal<TtyBackend>> {
    let backend = TtyBackend {
        inner: CrosstermBackend::new(BufWriter::with_capacity(64 * 1024, tty)),
        cursor,
    };
    Terminal::with_options(
        backend,
        TerminalOptions {
            viewport: Viewport::Inline(height),
        },
    )
}

/// Asks the terminal where the cursor is (`ESC [ 6 n` → `ESC [ row ; col R`), on the tty
/// itself, waiting at most [`CURSOR_QUERY_TIMEOUT`] ([`cursor_query_timeout`]). Bytes typed ahead are discarded.
fn query_cursor(tty: &mut File) -> Option<Position> {
    use rustix::event::{PollFd, PollFlags, Timespec, poll};
    tty.write_all(b"\x1b[6n").ok()?;
    tty.flush().ok()?;
    let deadline = Instant::now() + cursor_query_timeout();
    let mut reply = Vec::new();
    loop {
        let left = deadline.checked_duration_since(Instant::now())?;
        let timeout = Timespec::try_from(left).ok()?;
        let mut fds = [PollFd::new(&*tty, PollFlags::IN)];
        if poll(&mut fds, Some(&timeout)).ok()? == 0 {
            return None;
        }
        let mut chunk = [0u8; 64];
        let n = io::Read::read(tty, &mut chunk).ok()?;
        if n == 0 {
            return None;
        }
        reply.extend_from_slice(&chunk[..n]);
        if let Some(position) = parse_cursor_report(&reply) {
            return Some(position);
        }
    }
}

/// The last complete `ESC [ row ; col R` in `bytes`, as a 0-based position.
fn parse_cursor_report(bytes: &[u8]) -> Option<Position> {
    let text = String::from_utf8_lossy(bytes);
    let end = text.rfind('R')?;
    let start = text[..end].rfind("\x1b[")?;
    let (row, col) = text[start + 2..end].split_once(';')?;
    let row: u16 = row.parse().ok()?;
    let col: u16 = col.parse().ok()?;
    Some(Position::new(col.saturating_sub(1), row.saturating_sub(1)))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn cursor_reports_parse_and_typed_ahead_bytes_are_skipped() {
        assert_eq!(
            parse_cursor_report(b"\x1b[12;1R"),
            Some(Position::new(0, 11))
        );
        assert_eq!(
            parse_cursor_report(b"jj\x1b[A\x1b[3;40R"),
            Some(Position::new(39, 2))
        );
        assert_eq!(parse_cursor_report(b"\x1b[3;4"), None);
    }
}
