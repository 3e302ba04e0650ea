//! The `toolsmith` command line over every example tool, plus the tools of any MCP server
//! imported with `--import-mcp NAME=TARGET` (see `tool_providers::cli`).
//!
//! ```text
//! cargo run -p examples --bin toolsmith -- list
//! cargo run -p examples --bin toolsmith -- call convert-units '{"value": 100, "from": "C", "to": "F"}'
//! cargo run -p examples --bin toolsmith -- --import-mcp 'fs=npx -y @modelcontextprotocol/server-filesystem /tmp' list
//! ```

// Linking the library keeps its `#[tool]` registrations in the binary.
extern crate examples;

fn main() -> std::process::ExitCode {
    tool_providers::cli::run()
}
