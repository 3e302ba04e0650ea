//! Toolsmith's own MCP server over Streamable HTTP on a free loopback port, as the remote end
//! of the MCP provider's tests; it serves until the test process ends.

use tool_core::CancellationToken;
use tool_core::mcp::McpServer;
use tool_core::mcp::http::HttpOptions;

/// Serves `server` on `127.0.0.1:0`; its endpoint URL (`http://ADDR/mcp`).
pub async fn serve(server: McpServer) -> String {
    let (tx, rx) = tokio::sync::oneshot::channel();
    tokio::spawn(async move {
        let _ = tool_core::mcp::http::serve(
            server,
            "127.0.0.1:0".parse().unwrap(),
            HttpOptions::default(),
            CancellationToken::new(),
            |addr| {
                let _ = tx.send(addr);
            },
        )
        .await;
    });
    format!("http://{}/mcp", rx.await.unwrap())
}
