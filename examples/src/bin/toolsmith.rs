//! The `toolsmith` command line over every example tool.
//!
//! ```text
//! cargo run -p examples --bin toolsmith -- list
//! cargo run -p examples --bin toolsmith -- call convert-units '{"value": 100, "from": "C", "to": "F"}'
//! ```

// Linking the library keeps its `#[tool]` registrations in the binary.
extern crate examples;

fn main() -> std::process::ExitCode {
    tool_core::cli::run()
}
