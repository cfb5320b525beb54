//! How `ask-user setup` reads and writes an agent host's config file without ever harming it
//! (docs/contract.md §7 "Setup never harms a config"):
//!
//! - only a regular file the user owns, at most [`MAX_BYTES`], inside the host's config folder;
//!   a symlink (the file or a folder below the root, dangling or not) is refused by name and
//!   never followed; a FIFO or device is refused from its `lstat`, never opened for a blocking
//!   read (the open is `O_NOFOLLOW | O_NONBLOCK` and checked again on the open file);
//! - [`read`] only reads: every file of a setup is read and checked before [`write`] changes
//!   any, so a refusal changes nothing;
//! - [`write`] writes a temporary file beside the target (created exclusively, mode 0600),
//!   gives it the old file's mode (never wider; 0600 for a new file) and renames it over the
//!   target;
//! - [`json`]: JSON text edited through `serde_json` with every number's text kept as written
//!   (no rounding of big or long numbers) and the key order kept.

use std::io::{Read, Write};
use std::os::unix::fs::{DirBuilderExt, MetadataExt, OpenOptionsExt, PermissionsExt};
use std::path::{Path, PathBuf};

/// The largest config file setup reads (1 MiB).
pub(crate) const MAX_BYTES: u64 = 1 << 20;

/// The mode of a config file setup creates.
const NEW_FILE_MODE: u32 = 0o600;

/// A config file as found: its text (`None`: no such file yet) and permission bits.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Found {
    /// The file's text.
    pub(crate) text: Option<String>,
    /// The permission bits kept when it is written (`None`: a new file, [`NEW_FILE_MODE`]).
    pub(crate) mode: Option<u32>,
    /// Warnings about the file's folder (writable by every user).
    pub(crate) warnings: Vec<String>,
}

fn refused(path: &Path, why: &str) -> String {
    format!("{}: {why}; nothing was changed", path.display())
}

fn kind(file_type: std::fs::FileType) -> &'static str {
    use std::os::unix::fs::FileTypeExt;
    if file_type.is_dir() {
        "a directory"
    } else if file_type.is_fifo() {
        "a FIFO"
    } else if file_type.is_char_device() || file_type.is_block_device() {
        "a device"
    } else if file_type.is_socket() {
        "a socket"
    } else {
        "not a regular file"
    }
}

/// Refuses a symlink among the folders from `root` (excluded) down to `file`'s folder, and
/// anything there that is not a folder; warns when `file`'s folder is writable by every user
/// (without the sticky bit).
fn check_folders(root: &Path, file: &Path) -> Result<Vec<String>, String> {
    let mut warnings = Vec::new();
    let Some(folder) = file.parent() else {
        return Ok(warnings);
    };
    let below: Vec<&Path> = folder
        .ancestors()
        .take_while(|dir| *dir != root && dir.starts_with(root))
        .collect();
    for dir in below.iter().rev() {
        match dir.symlink_metadata() {
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => break,
            Err(e) => return Err(refused(dir, &format!("cannot be read ({e})"))),
            Ok(meta) if meta.file_type().is_symlink() => {
                return Err(refused(
                    dir,
                    "is a symbolic link; setup does not follow it out of the host's config folder (edit the folder it points to yourself, or replace the link with a folder)",
                ));
            }
            Ok(meta) if !meta.is_dir() => {
                return Err(refused(
                    dir,
                    &format!("is {}, not a folder", kind(meta.file_type())),
                ));
            }
            Ok(_) => {}
        }
    }
    if let Ok(meta) = folder.metadata()
        && meta.is_dir()
        && meta.mode() & 0o002 != 0
        && meta.mode() & 0o1000 == 0
    {
        warnings.push(format!(
            "{} is writable by every user: anyone on this machine can change what the host runs (chmod o-w {})",
            folder.display(),
            folder.display()
        ));
    }
    Ok(warnings)
}

/// Reads `file` (below `root`, the host's config folder or HOME) for an edit, refusing what
/// setup must not touch (see the module docs). Nothing is written.
///
/// # Errors
/// The refusal, naming the file and why, ending "nothing was changed".
pub(crate) fn read(root: &Path, file: &Path) -> Result<Found, String> {
    let warnings = check_folders(root, file)?;
    let meta = match file.symlink_metadata() {
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
            return Ok(Found {
                text: None,
                mode: None,
                warnings,
            });
        }
        Err(e) => return Err(refused(file, &format!("cannot be read ({e})"))),
        Ok(meta) => meta,
    };
    check_meta(file, &meta)?;
    // The checks again on the open file: it may have been swapped since the lstat.
    let mut opened = std::fs::OpenOptions::new()
        .read(true)
        .custom_flags(open_flags())
        .open(file)
        .map_err(|e| refused(file, &format!("cannot be opened ({e})")))?;
    let open_meta = opened
        .metadata()
        .map_err(|e| refused(file, &format!("cannot be read ({e})")))?;
    check_meta(file, &open_meta)?;
    if (open_meta.dev(), open_meta.ino()) != (meta.dev(), meta.ino()) {
        return Err(refused(file, "changed while setup read it"));
    }
    let mut bytes = Vec::new();
    (&mut opened)
        .take(MAX_BYTES + 1)
        .read_to_end(&mut bytes)
        .map_err(|e| refused(file, &format!("cannot be read ({e})")))?;
    if bytes.len() as u64 > MAX_BYTES {
        return Err(refused(file, "is over 1 MiB"));
    }
    let text = String::from_utf8(bytes).map_err(|_| refused(file, "is not UTF-8 text"))?;
    Ok(Found {
        text: Some(text),
        mode: Some(open_meta.permissions().mode() & 0o7777),
        warnings,
    })
}

/// `O_NOFOLLOW | O_NONBLOCK`: a link is not followed, a FIFO does not block the open.
fn open_flags() -> i32 {
    let flags = rustix::fs::OFlags::NOFOLLOW | rustix::fs::OFlags::NONBLOCK;
    i32::try_from(flags.bits()).unwrap_or(0)
}

fn check_meta(file: &Path, meta: &std::fs::Metadata) -> Result<(), String> {
    if meta.file_type().is_symlink() {
        let target = std::fs::read_link(file)
            .map(|t| format!(" to {}", t.display()))
            .unwrap_or_default();
        return Err(refused(
            file,
            &format!(
                "is a symbolic link{target}; setup does not follow it (edit the file it points to yourself, or replace the link with a copy)"
            ),
        ));
    }
    if !meta.file_type().is_file() {
        return Err(refused(
            file,
            &format!(
                "is {}; setup edits only a regular file",
                kind(meta.file_type())
            ),
        ));
    }
    if meta.uid() != rustix::process::geteuid().as_raw() {
        return Err(refused(
            file,
            &format!("is owned by another user (uid {})", meta.uid()),
        ));
    }
    if meta.len() > MAX_BYTES {
        return Err(refused(file, "is over 1 MiB"));
    }
    Ok(())
}

/// Writes `text` to `file`: a temporary file beside it with `mode` (the old file's; 0600 for a
/// new one), renamed over it. Folders missing on the way are created (0700).
///
/// # Errors
/// What failed, naming the file; the target is then as it was.
pub(crate) fn write(file: &Path, text: &str, mode: Option<u32>) -> Result<(), String> {
    let folder = file.parent().unwrap_or(Path::new("."));
    std::fs::DirBuilder::new()
        .recursive(true)
        .mode(0o700)
        .create(folder)
        .map_err(|e| format!("cannot create {}: {e}", folder.display()))?;
    let temp = temp_path(file);
    let result = write_temp(&temp, text, mode.unwrap_or(NEW_FILE_MODE))
        .and_then(|()| std::fs::rename(&temp, file));
    if let Err(e) = result {
        let _ = std::fs::remove_file(&temp);
        return Err(format!("cannot write {}: {e}", file.display()));
    }
    Ok(())
}

fn temp_path(file: &Path) -> PathBuf {
    let name = file
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_default();
    file.with_file_name(format!(".{name}.ask-user-{}.tmp", std::process::id()))
}

fn write_temp(temp: &Path, text: &str, mode: u32) -> std::io::Result<()> {
    let mut out = std::fs::OpenOptions::new()
        .write(true)
        .create_new(true)
        .mode(NEW_FILE_MODE)
        .custom_flags(open_flags())
        .open(temp)?;
    out.write_all(text.as_bytes())?;
    out.set_permissions(std::fs::Permissions::from_mode(mode))?;
    out.sync_all()
}

/// JSON text edited with `serde_json` keeping every number's text.
pub(crate) mod json {
    use serde_json::Value;

    /// A string no config holds: a number's text is kept in a string starting with it.
    const MARK: &str = "\u{E000}ask-user-number:";

    /// Parses `text` with every number kept as a marked string holding its exact text.
    ///
    /// # Errors
    /// Not JSON (serde_json's message), or the text holds the mark (never in a real config).
    pub(crate) fn parse(text: &str) -> Result<Value, String> {
        if text.contains("ask-user-number:") {
            return Err("holds text setup cannot keep exactly (ask-user-number:)".to_owned());
        }
        serde_json::from_str(&mark_numbers(text)).map_err(|e| e.to_string())
    }

    /// Pretty text of `value` (two spaces, a final newline) with the marked numbers written
    /// back as they were.
    pub(crate) fn text(value: &Value) -> String {
        let pretty = serde_json::to_string_pretty(value).unwrap_or_default();
        let mut text = unmark_numbers(&pretty);
        text.push('\n');
        text
    }

    /// JSON text cut into string tokens (with their quotes) and the runs between them.
    enum Piece<'a> {
        String(&'a str),
        Other(&'a str),
    }

    fn pieces(text: &str) -> Vec<Piece<'_>> {
        let bytes = text.as_bytes();
        let mut pieces = Vec::new();
        let (mut at, mut start) = (0, 0);
        while at < bytes.len() {
            if bytes[at] != b'"' {
                at += 1;
                continue;
            }
            pieces.push(Piece::Other(&text[start..at]));
            let open = at;
            at += 1;
            while at < bytes.len() && bytes[at] != b'"' {
                at += if bytes[at] == b'\\' { 2 } else { 1 };
            }
            at = (at + 1).min(bytes.len());
            pieces.push(Piece::String(&text[open..at]));
            start = at;
        }
        pieces.push(Piece::Other(&text[start..]));
        pieces
    }

    fn mark_numbers(text: &str) -> String {
        let mut out = String::with_capacity(text.len() + 64);
        for piece in pieces(text) {
            let run = match piece {
                Piece::String(s) => {
                    out.push_str(s);
                    continue;
                }
                Piece::Other(run) => run,
            };
            let mut chars = run.char_indices().peekable();
            while let Some((i, c)) = chars.next() {
                if c != '-' && !c.is_ascii_digit() {
                    out.push(c);
                    continue;
                }
                let mut end = i + 1;
                while let Some(&(j, d)) = chars.peek() {
                    if !(d.is_ascii_digit() || matches!(d, '.' | 'e' | 'E' | '+' | '-')) {
                        break;
                    }
                    end = j + 1;
                    chars.next();
                }
                out.push('"');
                out.push_str(MARK);
                out.push_str(&run[i..end]);
                out.push('"');
            }
        }
        out
    }

    fn unmark_numbers(text: &str) -> String {
        let mut out = String::with_capacity(text.len());
        for piece in pieces(text) {
            match piece {
                Piece::String(s) => {
                    let inner = s.strip_prefix('"').and_then(|s| s.strip_suffix('"'));
                    match inner.and_then(|i| i.strip_prefix(MARK)) {
                        Some(number) => out.push_str(number),
                        None => out.push_str(s),
                    }
                }
                Piece::Other(run) => out.push_str(run),
            }
        }
        out
    }

    #[cfg(test)]
    mod tests {
        use super::*;

        #[test]
        fn numbers_keep_their_text_and_strings_are_untouched() {
            let text = "{\"a\": 12345678901234567890123, \"b\": [1.50, -0.0, 1e-400, 2E+3], \"s\": \"12 \\\" 3\", \"t\": true, \"n\": null}";
            let value = parse(text).unwrap();
            assert_eq!(value["s"], "12 \" 3");
            assert_eq!(
                text_of(&value),
                "{\"a\":12345678901234567890123,\"b\":[1.50,-0.0,1e-400,2E+3],\"s\":\"12 \\\" 3\",\"t\":true,\"n\":null}"
            );
            assert!(parse("{\"x\": \"ask-user-number:1\"}").is_err());
            assert!(parse("{\"x\": ").is_err());
        }

        fn text_of(value: &Value) -> String {
            unmark_numbers(&value.to_string())
        }
    }
}
