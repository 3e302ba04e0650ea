//! The example tools (every `#[tool]` of the `examples` crate) served by Toolsmith's MCP server
//! over Streamable HTTP from a binary of their own: what a user who deploys their tools as one
//! MCP server (a container, a serverless function) builds, without the `toolsmith` command
//! line's store, pins and flags. The start-up bench's example row (`bench/mcp/startup.sh`)
//! measures it against bare rmcp serving the same tools with the same schemas.
//!
//! `mcp-toolsmith-examples ADDR [--stateless] [--json-response]`; prints
//! `serving MCP on http://ADDR/mcp` on stderr once it listens.

#[path = "../../toolsmith/src/args.rs"]
mod args;
#[path = "../../toolsmith/src/serve.rs"]
mod serve;

use std::process::ExitCode;

use tool_core::prelude::*;

// Linking the library keeps its `#[tool]` registrations in the binary.
extern crate examples;

const USAGE: &str = "usage: mcp-toolsmith-examples ADDR [--stateless] [--json-response]";

fn main() -> ExitCode {
    let (addr, options) = match args::parse(USAGE) {
        Ok(parsed) => parsed,
        Err(code) => return code,
    };
    let registry = match Registry::from_module("examples") {
        Ok(registry) => registry,
        Err(e) => {
            eprintln!("mcp-toolsmith-examples: {e}");
            return ExitCode::FAILURE;
        }
    };
    serve::serve("mcp-toolsmith-examples", "toolsmith-examples", registry, addr, options)
}
