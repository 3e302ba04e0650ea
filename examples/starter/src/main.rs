//! `my-agent`: the `toolsmith` command line over the starter's tools (`list`, `schema`,
//! `catalog`, `call`, `serve`, `check`, …).

// Linking the library keeps its `#[tool]` registrations in the binary.
extern crate toolsmith_starter;

fn main() -> std::process::ExitCode {
    tool_core::cli::run()
}
