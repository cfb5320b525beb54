//! `ask-user check`: decode and validate without asking anyone.

use ask_user_core::{Limits, decode};

use crate::{CheckArgs, Ended, input};

/// On success: the canonical request on stdout, one `leniency: …` line per leniency on
/// stderr, exit 0. Otherwise the model-facing `Error: invalid arguments: …` text, exit 3.
pub(crate) fn run(args: &CheckArgs) -> Ended {
    let text = match input::read(args.file.as_deref()) {
        Ok(text) => text,
        Err(message) => return Ended::Usage(message),
    };
    match decode(text, &Limits::default()) {
        Ok(decoded) => {
            for leniency in &decoded.leniencies {
                eprintln!("leniency: {leniency}");
            }
            Ended::Printed {
                stdout: decoded.request.to_canonical_json(),
                status: 0,
            }
        }
        Err(invalid) => Ended::Printed {
            stdout: invalid.to_string(),
            status: 3,
        },
    }
}
