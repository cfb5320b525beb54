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
