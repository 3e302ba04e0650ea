//! The MCP conformance fixture: the tools, prompts and resources the official conformance
//! suite (`@modelcontextprotocol/conformance`) calls, served by Toolsmith's MCP server.
//!
//! ```text
//! mcp_fixture --stdio
//! mcp_fixture --http 127.0.0.1:PORT     # port 0: prints `serving MCP on http://ADDR/mcp` to stderr
//! mcp_fixture --http 127.0.0.1:0 --stateless --json-response   # the stateless modes
//! ```
//!
//! The tools are ordinary `#[tool]` functions served from an explicit registry (not
//! `Registry::global()`, so the examples library's tools stay out): the suite's fixture tools
//! ([`suite`]: `test_*`, `json_schema_2020_12_tool`, whose schema carries `allOf`,
//! `if`/`then`/`else` and an `$anchor`; the 2026-07-28 diagnostic tools ([`diagnostics`]):
//! `test_input_required_result_*`, which ask under keys of their own, `test_missing_capability`
//! (`mcp(requires = ["sampling"])`), `test_streaming_elicitation`, `test_logging_tool`,
//! `test_trigger_tool_change`, `test_custom_headers` (a `#[tool(header = "Region")]` parameter);
//! the tasks extension's ([`tasks`]): `greet`, `slow_compute`, `failing_job`, `protocol_error_job`,
//! `confirm_delete`, and `multi_input` and `test_tool_with_task` from [`mrtr`]), each bounded
//! (sleeps of at most 120 s, echoes of at most 200 characters), and a few more for our own client
//! tests ([`client_tests`]): `echo` (the benchmark tool), `slow` (runs until cancelled; with
//! `MCP_FIXTURE_CANCEL_LOG` set it appends `cancelled <tool_call_id>` to that file when it sees the
//! cancellation; `MCP_FIXTURE_INPUT_TIMEOUT_MS` shortens how long a mid-call question waits for its
//! answer), `add_tool`/`remove_tool` (add or remove `dynamic_echo` at run time, so clients hear
//! `notifications/tools/list_changed`), `ask_twice` (two elicitations in one call, progress between
//! them), `approve_me` (requires approval; reports progress once it runs) and `overflow` (overflows
//! its stack in a child process: `isolate = "process"`). Prompts, resources, resource subscriptions
//! and completion, which `#[tool]` does not cover, come from [`FixtureExtras`] ([`extras`]), an
//! `rmcp` handler written directly.

#[path = "mcp_fixture/client_tests.rs"]
mod client_tests;
#[path = "mcp_fixture/diagnostics.rs"]
mod diagnostics;
#[path = "mcp_fixture/extras.rs"]
mod extras;
#[path = "mcp_fixture/mrtr.rs"]
mod mrtr;
#[path = "mcp_fixture/suite.rs"]
mod suite;
#[path = "mcp_fixture/tasks.rs"]
mod tasks;

use std::net::SocketAddr;
use std::process::ExitCode;
use std::sync::{Arc, OnceLock};
use std::time::Duration;

use extras::FixtureExtras;
use tool_core::mcp::http::HttpOptions;
use tool_core::mcp::{McpConfig, McpServer};
use tool_core::prelude::*;
use tool_core::runtime::Runtime;

/// A 1×1 PNG.
const PNG: &str = "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8/5+hHgAHggJ/PchI7wAAAABJRU5ErkJggg==";

/// The registry being served, for the tools that change it.
static SERVED: OnceLock<Arc<Registry>> = OnceLock::new();

/// At most the first 200 characters of a text a client sent (what the tools echo stays small).
fn bounded(text: &str) -> &str {
    text.char_indices().nth(200).map_or(text, |(end, _)| &text[..end])
}

/// The MCP client of a call, or an error saying the tool needs one.
fn client(cx: &ToolContext) -> Result<&dyn tool_core::context::McpHandle, ToolError> {
    cx.mcp()
        .ok_or_else(|| ToolError::new("This tool talks to the MCP client that calls it; call it through an MCP server."))
}

// ---- the server ----

enum Transport {
    Stdio,
    Http(SocketAddr, Box<HttpOptions>),
}

const USAGE: &str =
    "usage: mcp_fixture [--store FILE_OR_URL] --stdio | --http 127.0.0.1:PORT [--stateless] [--json-response] (port 0 picks a free port)";

/// `--store FILE_OR_URL` first, when given (several fixture instances on one PostgreSQL).
fn parse_store(args: &mut Vec<String>) -> Option<String> {
    if args.first().map(String::as_str) != Some("--store") || args.len() < 2 {
        return None;
    }
    let store = args.remove(1);
    args.remove(0);
    Some(store)
}

fn parse_args(args: Vec<String>) -> Result<Transport, String> {
    match args.iter().map(String::as_str).collect::<Vec<_>>().as_slice() {
        ["--stdio"] => Ok(Transport::Stdio),
        ["--http", addr, flags @ ..] => {
            let addr = addr
                .parse()
                .map_err(|e| format!("`{addr}` is not an address like 127.0.0.1:8931: {e}"))?;
            let mut options = HttpOptions::default();
            for flag in flags {
                match *flag {
                    "--stateless" => options.stateless = true,
                    "--json-response" => options.json_response = true,
                    _ => return Err(USAGE.into()),
                }
            }
            options.check().map_err(|e| e.to_string())?;
            Ok(Transport::Http(addr, Box::new(options)))
        }
        _ => Err(USAGE.into()),
    }
}

fn registry() -> Registry {
    Registry::from_iter([
        suite::test_simple_text::tool(),
        suite::test_image_content::tool(),
        suite::test_audio_content::tool(),
        suite::test_embedded_resource::tool(),
        suite::test_multiple_content_types::tool(),
        suite::test_tool_with_logging::tool(),
        suite::test_tool_with_progress::tool(),
        suite::test_error_handling::tool(),
        suite::test_sampling::tool(),
        suite::test_elicitation::tool(),
        suite::test_elicitation_sep1034_defaults::tool(),
        suite::test_elicitation_sep1330_enums::tool(),
        suite::json_schema_2020_12_tool::tool(),
        suite::test_reconnection::tool(),
        tasks::greet::tool(),
        tasks::slow_compute::tool(),
        tasks::failing_job::tool(),
        tasks::protocol_error_job::tool(),
        tasks::confirm_delete::tool(),
        mrtr::multi_input::tool(),
        mrtr::test_tool_with_task::tool(),
        diagnostics::test_streaming_elicitation::tool(),
        diagnostics::test_logging_tool::tool(),
        diagnostics::test_trigger_tool_change::tool(),
        diagnostics::test_custom_headers::tool(),
        diagnostics::test_missing_capability::tool(),
        diagnostics::test_input_required_result_elicitation::tool(),
        diagnostics::test_input_required_result_sampling::tool(),
        diagnostics::test_input_required_result_list_roots::tool(),
        diagnostics::test_input_required_result_request_state::tool(),
        diagnostics::test_input_required_result_multiple_inputs::tool(),
        diagnostics::test_input_required_result_multi_round::tool(),
        diagnostics::test_input_required_result_tampered_state::tool(),
        diagnostics::test_input_required_result_capabilities::tool(),
        client_tests::echo::tool(),
        client_tests::long_log::tool(),
        client_tests::overflow::tool(),
        client_tests::slow::tool(),
        client_tests::add_tool::tool(),
        client_tests::remove_tool::tool(),
        client_tests::ask_twice::tool(),
        client_tests::approve_me::tool(),
        client_tests::slow_task::tool(),
        client_tests::approve_task::tool(),
    ])
}

fn main() -> ExitCode {
    // An isolated tool's call runs in a child process of this binary: be that worker when asked.
    tool_core::isolate::worker_main();
    match tokio::runtime::Builder::new_multi_thread().enable_all().build() {
        Ok(runtime) => runtime.block_on(serve()),
        Err(e) => {
            eprintln!("mcp_fixture: cannot start the async runtime: {e}");
            ExitCode::FAILURE
        }
    }
}

async fn serve() -> ExitCode {
    let mut args: Vec<String> = std::env::args().skip(1).collect();
    let store = parse_store(&mut args);
    let transport = match parse_args(args) {
        Ok(t) => t,
        Err(e) => {
            eprintln!("{e}");
            return ExitCode::from(2);
        }
    };
    let registry = SERVED.get_or_init(|| Arc::new(registry())).clone();
    let config = McpConfig {
        name: "toolsmith-mcp-fixture".into(),
        instructions: Some("Test fixtures for the MCP conformance suite and Toolsmith's client tests.".into()),
        // Tests shorten the wait for a mid-call answer to see it expire.
        input_timeout: std::env::var("MCP_FIXTURE_INPUT_TIMEOUT_MS")
            .ok()
            .and_then(|ms| ms.parse().ok())
            .map_or(McpConfig::default().input_timeout, Duration::from_millis),
        ..McpConfig::default()
    };
    let mut runtime = Runtime::builder(registry);
    if let Some(store) = store {
        match tool_core::runtime::open_stores(&tool_core::runtime::StoreLocation::parse(&store)).await {
            Ok(opened) => {
                let tasks = tool_core::runtime::TaskOptions::default().poll_interval(Duration::from_millis(100));
                runtime = runtime.shared_store(opened.pending).task_store(opened.tasks, tasks);
            }
            Err(e) => {
                eprintln!("mcp_fixture: --store: {e}");
                return ExitCode::FAILURE;
            }
        }
    }
    let runtime = runtime.build();
    if let Some(bus) = runtime.bus()
        && let Err(e) = bus.listening().await
    {
        eprintln!("mcp_fixture: --store: {e}");
        return ExitCode::FAILURE;
    }
    let server = McpServer::new(runtime, config).with_extras(FixtureExtras::default());
    let served = match transport {
        Transport::Stdio => tool_core::mcp::stdio::serve(server).await,
        Transport::Http(addr, options) => {
            // Never cancelled: the server runs until the process is stopped.
            let shutdown = Default::default();
            tool_core::mcp::http::serve(server, addr, *options, shutdown, |bound| {
                eprintln!("serving MCP on http://{bound}/mcp")
            })
            .await
        }
    };
    match served {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("mcp_fixture: {e}");
            ExitCode::FAILURE
        }
    }
}
