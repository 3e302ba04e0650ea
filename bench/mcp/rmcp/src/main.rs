//! The `echo` tool (`{"text": string}` → the text) served by bare `rmcp` over Streamable HTTP,
//! written the way rmcp's own examples write a server: a `#[tool_router]` impl and
//! `StreamableHttpService` behind axum. The baseline Toolsmith's MCP server is measured against
//! in `bench/mcp/run.sh`; it has none of Toolsmith's guards (limits, validation, runtime).
//!
//! `mcp-bare-rmcp ADDR [--stateless] [--json-response]`; prints `serving MCP on http://ADDR/mcp`
//! on stderr once it listens. TCP_NODELAY, like the other servers of the bench. `TOOLS=N` adds
//! the N generated tools of the start-up bench (`../shared/generated.rs`) as dynamic routes;
//! `TOOLS_FILE=PATH` adds the tools of a `tools/list` result's `tools` array saved in PATH (the
//! start-up bench saves Toolsmith's listing of the example tools), each answering with its
//! arguments as text: the same names, descriptions, schemas and annotations, read and parsed
//! at start as a server that keeps its tools' definitions as data does.

use std::sync::Arc;

use axum::serve::ListenerExt;
use rmcp::handler::server::router::tool::{ToolRoute, ToolRouter};
use rmcp::handler::server::wrapper::Parameters;
use rmcp::model::{CallToolResult, ContentBlock, ServerCapabilities, ServerConfig, Tool};
use rmcp::transport::streamable_http_server::session::local::LocalSessionManager;
use rmcp::transport::{StreamableHttpServerConfig, StreamableHttpService};
use rmcp::{tool, tool_handler, tool_router, ServerHandler};

#[path = "../../shared/generated.rs"]
mod generated;

#[derive(Debug, Clone)]
struct Echo {
    /// Built once at start and shared by every session (and, stateless, every request: rmcp
    /// makes a new handler per request there, and `Self::tool_router()` per request would
    /// rebuild echo's route and schema each time, about 28 k instructions a call).
    tool_router: Arc<ToolRouter<Self>>,
}

#[derive(Debug, serde::Deserialize, schemars::JsonSchema)]
struct EchoInput {
    /// The text to return
    text: String,
}

#[tool_router]
impl Echo {
    /// The generated tools' routes, built once (`TOOLS=N`; none by default), then the tools of
    /// `TOOLS_FILE` (none when it is not set).
    fn generated() -> std::io::Result<Vec<ToolRoute<Self>>> {
        let mut routes: Vec<ToolRoute<Self>> = (0..generated::count())
            .map(|i| {
                let (name, description, schema) = generated::tool(i);
                ToolRoute::new_dyn(Tool::new(name, description, schema), |cx| {
                    let id = cx.arguments.as_ref().and_then(|a| a.get("id")).and_then(|v| v.as_str()).unwrap_or_default().to_owned();
                    Box::pin(async move { Ok(CallToolResult::success(vec![ContentBlock::text(id)]).into()) })
                })
            })
            .collect();
        if let Some(path) = std::env::var_os("TOOLS_FILE") {
            let tools: Vec<Tool> = serde_json::from_slice(&std::fs::read(path)?)?;
            routes.extend(tools.into_iter().map(|tool| {
                ToolRoute::new_dyn(tool, |cx| {
                    let text = cx.arguments.as_ref().map(|a| serde_json::Value::Object(a.clone()).to_string()).unwrap_or_default();
                    Box::pin(async move { Ok(CallToolResult::success(vec![ContentBlock::text(text)]).into()) })
                })
            }));
        }
        Ok(routes)
    }

    /// The server: its `#[tool]` routes (`Self::tool_router()`, as rmcp's examples build them)
    /// and the generated ones, built once; each session or request gets a clone of the `Arc`.
    fn new(generated: Vec<ToolRoute<Self>>) -> Self {
        let mut tool_router = Self::tool_router();
        for route in generated {
            tool_router.add_route(route);
        }
        Echo { tool_router: Arc::new(tool_router) }
    }

    #[tool(description = "Returns its text")]
    async fn echo(&self, Parameters(EchoInput { text }): Parameters<EchoInput>) -> String {
        text
    }
}

// The router built at start (`self.tool_router`): rmcp 3.11's `#[tool_handler]` defaults to
// `Self::tool_router()`, which rebuilds the `#[tool]` routes (echo's schema included) on every
// call and list and never sees routes added at run time (the generated and listed tools).
#[tool_handler(router = self.tool_router)]
impl ServerHandler for Echo {
    fn get_info(&self) -> ServerConfig {
        ServerConfig::new(ServerCapabilities::builder().enable_tools().build())
    }
}

#[tokio::main]
async fn main() -> std::io::Result<()> {
    let mut args = std::env::args().skip(1);
    let addr = args.next().unwrap_or_else(|| "127.0.0.1:0".to_owned());
    let flags: Vec<String> = args.collect();
    let stateless = flags.iter().any(|f| f == "--stateless");
    let json_response = flags.iter().any(|f| f == "--json-response");
    let config = StreamableHttpServerConfig::default()
        .with_legacy_session_mode(!stateless)
        .with_json_response(json_response);
    let echo = Echo::new(Echo::generated()?);
    let service = StreamableHttpService::new(
        move || Ok(echo.clone()),
        LocalSessionManager::default().into(),
        config,
    );
    let router = axum::Router::new().nest_service("/mcp", service);
    let listener = tokio::net::TcpListener::bind(&addr).await?;
    eprintln!("serving MCP on http://{}/mcp", listener.local_addr()?);
    let listener = listener.tap_io(|tcp| {
        let _ = tcp.set_nodelay(true);
    });
    axum::serve(listener, router).await
}
