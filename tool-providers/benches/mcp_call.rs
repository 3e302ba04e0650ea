//! `mcp_call`: one `echo` call through an `McpToolProvider` to Toolsmith's own MCP server over
//! `https://` (in-process, rustls on both ends, a self-signed certificate trusted with
//! `root_certificate_pem`), with the provider's default connection reuse against the baseline
//! of a fresh connection and TLS handshake per request (`pool_max_idle_per_host(0)`, which is
//! what `rmcp`'s own client does), both against the same server in the same run.

#[path = "../tests/support/tls_server.rs"]
mod tls_server;

use criterion::{Criterion, criterion_group, criterion_main};
use serde_json::json;
use tool_core::provider::{ResolveOptions, ToolProvider};
use tool_core::{CallOptions, Registry};
use tool_providers::mcp::McpToolProvider;

fn mcp_call(c: &mut Criterion) {
    let rt = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .unwrap();
    let (server, reused, per_request) = rt.block_on(async {
        let server = tls_server::start_tls_server().await;
        let registry = |provider: McpToolProvider| async move {
            provider.connect().await.unwrap();
            let tools = provider
                .resolve_tools(vec!["echo".into()], ResolveOptions::default())
                .await
                .unwrap();
            (provider, Registry::from_iter(tools.into_values()))
        };
        let trusted = |id: &str| McpToolProvider::http(id, tls_server::url(server.port)).root_certificate_pem(&server.cert_pem);
        let reused = registry(trusted("reused")).await;
        let per_request = registry(trusted("per_request").pool_max_idle_per_host(0)).await;
        (server, reused, per_request)
    });
    let mut group = c.benchmark_group("mcp_call_tls");
    for (name, (_, registry)) in [("reused_connection", &reused), ("connection_per_request", &per_request)] {
        group.bench_function(name, |b| {
            b.to_async(&rt).iter(|| async {
                registry
                    .call("echo", json!({"text": "bench"}), CallOptions::default())
                    .await
                    .unwrap()
            })
        });
    }
    group.finish();
    rt.block_on(async {
        reused.0.close().await;
        per_request.0.close().await;
    });
    assert!(server.failed_handshakes.lock().unwrap().is_empty());
}

criterion_group!(benches, mcp_call);
criterion_main!(benches);
