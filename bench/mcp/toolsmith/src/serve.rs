//! What both bench servers do once their flags are read: serve one tool over Streamable HTTP on a
//! multi-threaded runtime, print `serving MCP on http://ADDR/mcp` on stderr once listening, and
//! exit with the server's outcome. Included by `main.rs` and `fair.rs` (`mod serve;`).

use std::process::ExitCode;
use std::sync::Arc;

use tool_core::mcp::http::HttpOptions;
use tool_core::mcp::{McpConfig, McpServer};
use tool_core::prelude::*;
use tool_core::runtime::Runtime;

/// Serves the tools of `registry` as the server `name` (`toolsmith-echo`, …) on `addr` until the process is
/// stopped; `program` prefixes its error lines.
pub fn serve(program: &str, name: &str, registry: Registry, addr: std::net::SocketAddr, options: HttpOptions) -> ExitCode {
    let runtime = match tokio::runtime::Builder::new_multi_thread().enable_all().build() {
        Ok(runtime) => runtime,
        Err(e) => {
            eprintln!("{program}: cannot start the async runtime: {e}");
            return ExitCode::FAILURE;
        }
    };
    let served = runtime.block_on(async move {
        let registry = Arc::new(registry);
        let config = McpConfig {
            name: name.into(),
            ..McpConfig::default()
        };
        let server = McpServer::new(Runtime::builder(registry).build(), config);
        // Never cancelled: the server runs until the process is stopped.
        tool_core::mcp::http::serve(server, addr, options, Default::default(), |bound| {
            eprintln!("serving MCP on http://{bound}/mcp")
        })
        .await
    });
    match served {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("{program}: {e}");
            ExitCode::FAILURE
        }
    }
}
