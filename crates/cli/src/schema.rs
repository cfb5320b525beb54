//! `ask-user schema`: the definition's golden bytes, optionally wrapped for a provider.
//!
//! The `--format` names are those of [`ProviderFormat::ALL`] (with their aliases), so a
//! format added to the core is listed, parsed and completed here without a second list.

use ask_user_core::definition::{ProviderFormat, definition};
use clap::builder::{PossibleValue, PossibleValuesParser, TypedValueParser};

use crate::Ended;

/// Options of `ask-user schema`.
#[derive(Debug, clap::Args)]
pub(crate) struct SchemaArgs {
    /// The provider format (`deepseek` is `openai-chat`).
    ///
    /// A `*-strict` format turns on the provider's strict mode: the model's calls always
    /// match the schema, at the price of a longer definition and explicit nulls for unused
    /// fields (docs/tool-catalog.md compares the sizes and says when to choose strict).
    #[arg(long, value_name = "NAME", default_value = "canonical", value_parser = format_parser())]
    pub(crate) format: ProviderFormat,
}

/// Parses a name of [`ProviderFormat::ALL`] or one of its aliases.
fn format_parser() -> impl TypedValueParser<Value = ProviderFormat> {
    PossibleValuesParser::new(
        ProviderFormat::ALL
            .map(|format| PossibleValue::new(format.name()).aliases(format.aliases().to_vec())),
    )
    .try_map(|name| name.parse::<ProviderFormat>())
}

/// Prints `definition(format)` exactly: no trailing newline, so `ask-user schema > file`
/// yields the golden bytes.
pub(crate) fn run(args: &SchemaArgs) -> Ended {
    Ended::Printed {
        stdout: definition(args.format),
        status: 0,
    }
}
