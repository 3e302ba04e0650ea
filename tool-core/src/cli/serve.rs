//! `serve`: the MCP server over stdio or Streamable HTTP, until interrupted.

use std::process::ExitCode;

use serde_json::Value;

use super::ServeCommand;
use crate::runtime::Runtime;

/// `serve`: the tools over MCP.
pub(super) async fn serve(runtime: &Runtime, serve: ServeCommand) -> Result<ExitCode, String> {
    let ServeCommand {
        stdio,
        http,
        auth_token_env,
        allow_origins,
        allow_hosts,
        max_concurrent_calls,
        page_size,
        max_body_bytes,
        context,
        input_timeout,
        stateless,
        json_response,
        execution,
    } = serve;
    runtime.registry().set_execution(execution.policy());
    let context = context
        .map(|c| serde_json::from_str::<Value>(&c).map_err(|e| format!("--context is not valid JSON: {e}")))
        .transpose()?;
    let config = crate::mcp::McpConfig {
        page_size,
        max_concurrent_calls,
        context,
        input_timeout: std::time::Duration::from_secs(input_timeout),
        ..crate::mcp::McpConfig::default()
    };
    let server = crate::mcp::McpServer::new(runtime.clone(), config);
    if stdio {
        crate::mcp::stdio::serve(server)
            .await
            .map_err(|e| format!("the stdio server stopped: {e}"))?;
        return Ok(ExitCode::SUCCESS);
    }
    let auth_token = match auth_token_env {
        None => None,
        Some(var) => match std::env::var(&var) {
            Ok(t) if !t.trim().is_empty() => Some(t.trim().to_owned()),
            _ => return Err(format!("--auth-token-env {var}: the variable is not set (or empty)")),
        },
    };
    let options = crate::mcp::http::HttpOptions {
        allowed_hosts: allow_hosts,
        allowed_origins: allow_origins,
        auth_token,
        max_body_bytes,
        stateless,
        json_response,
    };
    let addr = http.unwrap_or_else(|| std::net::SocketAddr::from(([127, 0, 0, 1], 8931)));
    let shutdown = tokio_util::sync::CancellationToken::new();
    let stop = shutdown.clone();
    tokio::spawn(async move {
        let _ = tokio::signal::ctrl_c().await;
        stop.cancel();
    });
    crate::mcp::http::serve(server, addr, options, shutdown, |bound| {
        eprintln!("serving MCP on http://{bound}/mcp")
    })
    .await
    .map_err(|e| format!("cannot serve on {addr}: {e}"))?;
    Ok(ExitCode::SUCCESS)
}
