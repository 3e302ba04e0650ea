//! A fixed number of calls in a loop, for counting instructions per call (`bench/instructions.sh`
//! runs it under valgrind twice and takes the difference): deterministic where a shared
//! machine's clock is not. Modes: `baseline` (the hand-written `from_str` + call + `to_string`
//! of `call_overhead`), `registry` (the same tool through the registry), `plain` (a tool whose
//! output type the registry vouches for), `noop` (a dynamic tool that does nothing) and `mcp`
//! (the registry's tool as an MCP `tools/call`: a POST through the Streamable HTTP router,
//! stateless with JSON answers, in-process — the HTTP guard, rmcp, the server's handler and
//! the runtime, without the network). `register` is not a call: it registers CALLS generated
//! dynamic tools (a three-parameter schema each, as a remote catalog brings them), so the
//! difference of two runs is what registering one tool costs (start-up, the performance
//! issue's goal 3).
//!
//! `cargo run --release -p tool-core --example call_loop -- registry 1000`

use tool_core::prelude::*;

#[path = "../benches/support/forecast.rs"]
mod forecast_tool;
use forecast_tool::{ARGS, ForecastInput, forecast};

/// The same arguments, returned as words (a `Vec<String>`: vouched for, not checked again)
#[tool(id = "loop-plain")]
pub async fn plain(
    /// City name
    city: String,
    /// Days ahead
    days: u32,
    /// Metric units
    metric: bool,
) -> Vec<String> {
    vec![city, days.to_string(), metric.to_string()]
}

fn main() {
    let mut args = std::env::args().skip(1);
    let (Some(mode), Some(n)) = (args.next(), args.next().and_then(|n| n.parse::<usize>().ok())) else {
        eprintln!("usage: call_loop baseline|registry|plain|noop|mcp|register CALLS");
        std::process::exit(2);
    };
    if mode == "register" {
        std::hint::black_box(register(n));
        return;
    }
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .expect("a runtime");
    let registry = Registry::from_iter([forecast::tool(), plain::tool()].map(|t| t.expect("a tool")));
    let noop = DynamicTool::builder("noop", "Does nothing")
        .handler(|_, _| async { Ok(serde_json::Value::Null) })
        .expect("a tool");
    let small = Registry::from_iter([noop]);
    let mcp = (mode == "mcp").then(|| mcp::router(Registry::from_iter([forecast::tool().expect("a tool")])));
    rt.block_on(async {
        for _ in 0..n {
            let done = match mode.as_str() {
                "baseline" => {
                    let input: ForecastInput = serde_json::from_str(std::hint::black_box(ARGS)).expect("valid");
                    let out = forecast(input.city, input.days, input.metric).await;
                    std::hint::black_box(serde_json::to_string(&out).expect("serialisable"));
                    Ok(())
                }
                "registry" => registry
                    .call("bench-forecast", std::hint::black_box(ARGS), CallOptions::default())
                    .await
                    .map(|o| {
                        std::hint::black_box(o);
                    }),
                "plain" => registry
                    .call("loop-plain", std::hint::black_box(ARGS), CallOptions::default())
                    .await
                    .map(|o| {
                        std::hint::black_box(o);
                    }),
                "noop" => small
                    .call("noop", std::hint::black_box("{}"), CallOptions::default())
                    .await
                    .map(|o| {
                        std::hint::black_box(o);
                    }),
                "mcp" => match &mcp {
                    Some(router) => mcp::call(router).await.map_err(ToolError::new),
                    None => unreachable!("built for the mcp mode"),
                },
                other => {
                    eprintln!("unknown mode `{other}`");
                    std::process::exit(2);
                }
            };
            done.expect("the call succeeds");
        }
    });
}

/// The tools of the start-up bench (`bench/mcp/startup.sh`), generated the same way here.
#[path = "../../bench/mcp/shared/generated.rs"]
#[allow(dead_code)] // `count` reads the servers' TOOLS; here the count is the argument
mod generated;

/// The `register` mode: a registry of `n` generated tools.
fn register(n: usize) -> Registry {
    let registry = Registry::from_iter(std::iter::empty::<DynamicTool>());
    for i in 0..n {
        let (name, description, schema) = generated::tool(i);
        let tool = DynamicTool::builder(name, description)
            .input_schema(schema.into())
            .handler(|args, _| async move { Ok(args) })
            .expect("a tool");
        registry.insert(tool).expect("a new id");
    }
    registry
}

/// The `mcp` mode: one `tools/call` of `bench-forecast` through the HTTP router.
mod mcp {
    use axum::body::{Body, to_bytes};
    use axum::http::{Request, StatusCode, header};
    use tool_core::Registry;
    use tool_core::mcp::http::{HttpOptions, router as http_router};
    use tool_core::mcp::{McpConfig, McpServer};
    use tool_core::runtime::Runtime;
    use tower::ServiceExt;

    const BODY: &str = r#"{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"bench-forecast","arguments":{"city":"Lisbon","days":3,"metric":true}}}"#;

    pub fn router(registry: Registry) -> axum::Router {
        let server = McpServer::new(Runtime::new(registry), McpConfig::default());
        let options = HttpOptions {
            stateless: true,
            json_response: true,
            ..HttpOptions::default()
        };
        http_router(server, &options)
    }

    pub async fn call(router: &axum::Router) -> Result<(), String> {
        let request = Request::post("/mcp")
            .header(header::HOST, "localhost")
            .header(header::ACCEPT, "application/json, text/event-stream")
            .header(header::CONTENT_TYPE, "application/json")
            .header("mcp-protocol-version", "2025-11-25")
            .body(Body::from(std::hint::black_box(BODY)))
            .map_err(|e| e.to_string())?;
        let response = router.clone().oneshot(request).await.map_err(|e| e.to_string())?;
        let status = response.status();
        let body = to_bytes(response.into_body(), 1 << 20).await.map_err(|e| e.to_string())?;
        let failed = body.windows(14).any(|w| w == b"\"isError\":true");
        match status == StatusCode::OK && !failed {
            true => Ok(()),
            false => Err(format!("{status}: {}", String::from_utf8_lossy(&body))),
        }
    }
}
