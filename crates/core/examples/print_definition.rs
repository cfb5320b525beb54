//! Prints the canonical definition: `cargo run -p ask-user-core --example print_definition`.
fn main() {
    print!(
        "{}",
        ask_user_core::definition::definition(ask_user_core::definition::ProviderFormat::Canonical)
    );
}
