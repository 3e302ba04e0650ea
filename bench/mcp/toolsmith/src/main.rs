//! The `echo` tool (`{"text": string}` → the text) served by Toolsmith's MCP server over
//! Streamable HTTP: our side of `bench/mcp`, built as a user who serves one tool builds it
//! (tool-core with its `mcp` feature alone: no stores, OAuth, TLS or OpenTelemetry linked). The
//! server runs every call through Toolsmith's guards: limits, input and output validation, the
//! runtime, panic catching, cancellation.
//!
//! `mcp-toolsmith-echo ADDR [--stateless] [--json-response]`; prints
//! `serving MCP on http://ADDR/mcp` on stderr once it listens (TCP_NODELAY, as every server of
//! the bench). `TOOLS=N` adds the N generated tools of the start-up bench
//! (`../shared/generated.rs`) as dynamic tools.

mod args;
#[path = "../../shared/generated.rs"]
mod generated;
mod serve;

use std::process::ExitCode;

use tool_core::prelude::*;

/// Returns the text it is given
#[tool(id = "echo", mcp(read_only_hint = true, idempotent_hint = true, open_world_hint = false))]
pub async fn echo(
    /// The text to return
    text: String,
) -> String {
    text
}

/// `echo` and the generated tools (each returns its `id` argument).
fn registry() -> Registry {
    let registry = Registry::from_iter([echo::tool()]);
    for i in 0..generated::count() {
        let (name, description, schema) = generated::tool(i);
        let tool = DynamicTool::builder(name, description)
            .input_schema(schema.into())
            .handler(|args, _| async move { Ok(args.get("id").cloned().unwrap_or_default()) });
        if let Err(e) = tool
            .map_err(|e| e.to_string())
            .and_then(|t| registry.insert(t).map_err(|e| e.to_string()))
        {
            eprintln!("mcp-toolsmith-echo: generated tool {i}: {e}");
            std::process::exit(1);
        }
    }
    registry
}

const USAGE: &str = "usage: mcp-toolsmith-echo ADDR [--stateless] [--json-response]";

fn main() -> ExitCode {
    let (addr, options) = match args::parse(USAGE) {
        Ok(parsed) => parsed,
        Err(code) => return code,
    };
    serve::serve("mcp-toolsmith-echo", "toolsmith-echo", registry(), addr, options)
}
