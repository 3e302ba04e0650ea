//! `McpToolProvider` over `https://`: Toolsmith's own MCP server (`tool_core::mcp::http::router`)
//! served in-process behind rustls (ring) with a self-signed certificate for `localhost` made by
//! the test (rcgen). Trusting that certificate with `root_certificate_pem` connects, lists and
//! calls; without it the handshake fails on the certificate (verification is on); a bad PEM is
//! a `ProviderError::Config`; a server that never finishes the handshake runs into
//! `connect_timeout`. Connections are reused (one TLS handshake for many calls) unless
//! `pool_max_idle_per_host(0)` asks for one per request.

use crate::support;

use std::time::{Duration, Instant};

use serde_json::json;
use support::tls_server::{start_tls_server, url};
use tokio::net::TcpListener;
use tool_core::provider::{ListToolsOptions, ProviderError, ResolveOptions, ToolProvider};
use tool_core::{CallOptions, Registry};
use tool_providers::mcp::McpToolProvider;

fn config_message(err: ProviderError) -> String {
    match err {
        ProviderError::Config(message) => message,
        other => panic!("expected ProviderError::Config, got {other:?}"),
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn https_with_the_servers_certificate_trusted_lists_and_calls() {
    let server = start_tls_server().await;
    let provider = McpToolProvider::http("secure", url(server.port))
        .root_certificate_pem(&server.cert_pem)
        .connect_timeout(Duration::from_secs(20));
    provider.connect().await.unwrap();

    let listed = provider.list_tools(ListToolsOptions::default()).await.unwrap();
    let slugs: Vec<&str> = listed.data.iter().map(|t| t.slug.as_str()).collect();
    assert_eq!(slugs, ["echo"]);

    let resolved = provider
        .resolve_tools(vec!["echo".into()], ResolveOptions::default())
        .await
        .unwrap();
    let registry = Registry::from_iter(resolved.into_values());
    let out = registry
        .call("echo", json!({"text": "over TLS"}), CallOptions::default())
        .await
        .unwrap();
    // The server sends the object as JSON text (and as `structuredContent` when it declares an
    // output schema); either way it is the echo.
    let value = match out.value() {
        serde_json::Value::String(text) => serde_json::from_str(&text).unwrap(),
        other => other,
    };
    assert_eq!(value, json!({"echo": "over TLS"}));
    assert!(
        server.failed_handshakes.lock().unwrap().is_empty(),
        "{:?}",
        server.failed_handshakes.lock().unwrap()
    );
    provider.close().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn https_without_the_certificate_fails_verification() {
    let server = start_tls_server().await;
    let provider = McpToolProvider::http("secure", url(server.port)).connect_timeout(Duration::from_secs(20));
    let err = provider.connect().await.unwrap_err();
    let shown = err.to_string();
    assert!(matches!(err, ProviderError::Transport { .. } | ProviderError::Config(_)), "{err:?}");
    assert!(
        shown.to_lowercase().contains("certificate"),
        "the error names the certificate: {shown}"
    );
    assert!(provider.tools().is_empty());

    // Another self-signed certificate (not the server's) is no better.
    let other = rcgen::generate_simple_self_signed(vec!["localhost".to_owned()]).unwrap();
    let provider = McpToolProvider::http("secure", url(server.port))
        .root_certificate_pem(other.cert.pem())
        .connect_timeout(Duration::from_secs(20));
    let err = provider.connect().await.unwrap_err().to_string();
    assert!(err.to_lowercase().contains("certificate"), "{err}");

    // The server saw the client abort the handshakes (the client did verify).
    let failed = server.failed_handshakes.lock().unwrap().clone();
    assert!(!failed.is_empty(), "the server saw no failed handshake");
}

#[tokio::test]
async fn a_bad_root_certificate_pem_is_a_config_error() {
    // Nothing listens here: the PEM is refused before any connection.
    let garbage = McpToolProvider::http("secure", "https://localhost:1/mcp").root_certificate_pem("this is not a certificate");
    let message = config_message(garbage.connect().await.unwrap_err());
    assert!(
        message.contains("root certificate #1") && message.contains("BEGIN CERTIFICATE"),
        "{message}"
    );

    let not_base64 = "-----BEGIN CERTIFICATE-----\n!!!!\n-----END CERTIFICATE-----\n";
    let message = config_message(
        McpToolProvider::http("secure", "https://localhost:1/mcp")
            .root_certificate_pem(not_base64)
            .connect()
            .await
            .unwrap_err(),
    );
    assert!(message.contains("not valid PEM"), "{message}");

    let not_der = "-----BEGIN CERTIFICATE-----\nAAAAAAAA\n-----END CERTIFICATE-----\n";
    let message = config_message(
        McpToolProvider::http("secure", "https://localhost:1/mcp")
            .root_certificate_pem(not_der)
            .connect()
            .await
            .unwrap_err(),
    );
    assert!(message.contains("not a usable X.509 certificate"), "{message}");

    // The second PEM is the bad one; the first (a real certificate) is fine.
    let good = rcgen::generate_simple_self_signed(vec!["localhost".to_owned()]).unwrap().cert.pem();
    let message = config_message(
        McpToolProvider::http("secure", "https://localhost:1/mcp")
            .root_certificate_pem(good)
            .root_certificate_pem("junk")
            .connect()
            .await
            .unwrap_err(),
    );
    assert!(message.contains("root certificate #2"), "{message}");
}

#[tokio::test]
async fn a_stalled_handshake_runs_into_the_connect_timeout() {
    // Accepts TCP connections and never answers the TLS ClientHello.
    let silent = TcpListener::bind("127.0.0.1:0").await.unwrap();
    let port = silent.local_addr().unwrap().port();
    let held = tokio::spawn(async move {
        let mut open = Vec::new();
        while let Ok((tcp, _)) = silent.accept().await {
            open.push(tcp);
        }
    });
    let provider = McpToolProvider::http("secure", url(port)).connect_timeout(Duration::from_millis(500));
    let started = Instant::now();
    let err = provider.connect().await.unwrap_err();
    assert!(started.elapsed() < Duration::from_secs(10), "took {:?}", started.elapsed());
    assert!(matches!(err, ProviderError::Transport { .. }), "{err:?}");
    held.abort();
}

/// Calls `echo` `calls` times through `provider` and answers how many TCP connections the
/// server accepted meanwhile.
async fn connections_for_calls(server: &support::tls_server::TlsServer, provider: &McpToolProvider, calls: usize) -> usize {
    let resolved = provider
        .resolve_tools(vec!["echo".into()], ResolveOptions::default())
        .await
        .unwrap();
    let registry = Registry::from_iter(resolved.into_values());
    let before = server.connections();
    for n in 0..calls {
        registry
            .call("echo", json!({"text": format!("call {n}")}), CallOptions::default())
            .await
            .unwrap();
    }
    server.connections() - before
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn connections_are_reused_unless_pooling_is_off() {
    let server = start_tls_server().await;
    let pooled = McpToolProvider::http("pooled", url(server.port)).root_certificate_pem(&server.cert_pem);
    pooled.connect().await.unwrap();
    let opened = connections_for_calls(&server, &pooled, 20).await;
    assert!(opened <= 2, "20 calls over a pooled client opened {opened} connections");
    pooled.close().await;

    let unpooled = McpToolProvider::http("unpooled", url(server.port))
        .root_certificate_pem(&server.cert_pem)
        .pool_max_idle_per_host(0);
    unpooled.connect().await.unwrap();
    let opened = connections_for_calls(&server, &unpooled, 20).await;
    assert!(opened >= 20, "without pooling each call opens a connection: {opened}");
    unpooled.close().await;
    assert!(server.failed_handshakes.lock().unwrap().is_empty());
}
