//! `ask-user schema`: the definition's golden bytes, optionally wrapped for a provider.

use ask_user_core::definition::definition;

use crate::{Ended, SchemaArgs};

/// Prints `definition(format)` exactly: no trailing newline, so `ask-user schema > file`
/// yields the golden bytes.
pub(crate) fn run(args: &SchemaArgs) -> Ended {
    Ended::Printed {
        stdout: definition(args.format),
        status: 0,
    }
}
