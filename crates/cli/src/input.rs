//! Reading `[FILE|-]`: a file, or stdin when the argument is `-` or absent.

use std::io::Read;
use std::path::Path;

/// The text of `file`, or of stdin for `-`/nothing. The error is a usage message.
pub(crate) fn read(file: Option<&Path>) -> Result<String, String> {
    match file {
        Some(path) if path != Path::new("-") => std::fs::read_to_string(path)
            .map_err(|e| format!("cannot read {}: {e}", path.display())),
        _ => {
            if std::io::IsTerminal::is_terminal(&std::io::stdin()) {
                eprintln!("ask-user: reading the JSON arguments from stdin (end with Ctrl-D)");
            }
            let mut text = String::new();
            std::io::stdin()
                .read_to_string(&mut text)
                .map_err(|e| format!("cannot read stdin: {e}"))?;
            Ok(text)
        }
    }
}

/// [`read`] for a caller on a runtime: stdin that can block (a pipe, a terminal, a socket) is
/// read on a blocking thread, so the caller can give up on it (a signal); a file is read at
/// once.
pub(crate) async fn read_async(file: Option<std::path::PathBuf>) -> Result<String, String> {
    let from_stdin = file.as_deref().is_none_or(|path| path == Path::new("-"));
    if !from_stdin || stdin_is_a_file() {
        return read(file.as_deref());
    }
    tokio::task::spawn_blocking(move || read(file.as_deref()))
        .await
        .map_err(|e| format!("cannot read stdin: {e}"))?
}

/// Whether stdin is a regular file (a read of it cannot wait on a writer).
fn stdin_is_a_file() -> bool {
    rustix::fs::fstat(std::io::stdin())
        .is_ok_and(|stat| rustix::fs::FileType::from_raw_mode(stat.st_mode).is_file())
}
