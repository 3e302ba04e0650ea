//! An MCP server over Streamable HTTP on a free loopback port, for the tests that talk to it
//! over real TCP; it stops when dropped.

use std::net::SocketAddr;
use std::time::Duration;

use tool_core::CancellationToken;
use tool_core::mcp::McpServer;
use tool_core::mcp::http::HttpOptions;

/// A running server: where it listens, and the token that stops it (on drop).
pub struct Served {
    pub addr: SocketAddr,
    pub shutdown: CancellationToken,
}

impl Drop for Served {
    fn drop(&mut self) {
        self.shutdown.cancel();
    }
}

/// Serves `server` with `options` on `127.0.0.1:0` and waits (at most 10 s) for its address.
pub async fn serve(server: McpServer, options: HttpOptions) -> Served {
    let shutdown = CancellationToken::new();
    let (tx, rx) = tokio::sync::oneshot::channel();
    let any_port: SocketAddr = "127.0.0.1:0".parse().unwrap();
    tokio::spawn(tool_core::mcp::http::serve(server, any_port, options, shutdown.clone(), move |a| {
        let _ = tx.send(a);
    }));
    let addr = tokio::time::timeout(Duration::from_secs(10), rx)
        .await
        .expect("the server binds within 10 s")
        .expect("the server reports its address");
    Served { addr, shutdown }
}
