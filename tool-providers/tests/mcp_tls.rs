//! `McpToolProvider` over `https://`: Toolsmith's own MCP server (`tool_core::mcp::http::router`)
//! served in-process behind rustls (ring) with a self-signed certificate for `localhost` made by
//! the test (rcgen). Trusting that certificate with `root_certificate_pem` connects, lists and
//! calls; without it the handshake fails on the certificate (verification is on); a bad PEM is
//! a `ProviderError::Config`; a server that never finishes the handshake runs into
//! `connect_timeout`.

use std::net::SocketAddr;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use serde_json::json;
use tokio::net::{TcpListener, TcpStream};
use tokio_rustls::rustls;
use tokio_rustls::TlsAcceptor;
use tool_core::mcp::http::HttpOptions;
use tool_core::mcp::{McpConfig, McpServer};
use tool_core::provider::{ListToolsOptions, ProviderError, ResolveOptions, ToolProvider};
use tool_core::runtime::Runtime;
use tool_core::{CallOptions, DynamicTool, Registry};
use tool_providers::mcp::McpToolProvider;

/// How long a handshake may take on the test server before it is dropped.
const HANDSHAKE_PATIENCE: Duration = Duration::from_secs(10);

/// A TCP listener whose connections are TLS: each accepted connection is handshaken before it is
/// handed to axum; failed (or stalled) handshakes are recorded and skipped.
struct TlsListener {
    tcp: TcpListener,
    acceptor: TlsAcceptor,
    failed_handshakes: Arc<Mutex<Vec<String>>>,
}

impl axum::serve::Listener for TlsListener {
    type Io = tokio_rustls::server::TlsStream<TcpStream>;
    type Addr = SocketAddr;

    async fn accept(&mut self) -> (Self::Io, Self::Addr) {
        loop {
            let (tcp, addr) = match self.tcp.accept().await {
                Ok(accepted) => accepted,
                Err(_) => {
                    tokio::time::sleep(Duration::from_millis(10)).await;
                    continue;
                }
            };
            let _ = tcp.set_nodelay(true);
            match tokio::time::timeout(HANDSHAKE_PATIENCE, self.acceptor.accept(tcp)).await {
                Ok(Ok(tls)) => return (tls, addr),
                Ok(Err(e)) => self.failed_handshakes.lock().unwrap().push(e.to_string()),
                Err(_) => self.failed_handshakes.lock().unwrap().push("handshake timed out".to_owned()),
            }
        }
    }

    fn local_addr(&self) -> std::io::Result<Self::Addr> {
        self.tcp.local_addr()
    }
}

/// The running HTTPS server; dropping it stops the server.
struct TlsServer {
    port: u16,
    cert_pem: String,
    failed_handshakes: Arc<Mutex<Vec<String>>>,
    serving: tokio::task::JoinHandle<()>,
}

impl Drop for TlsServer {
    fn drop(&mut self) {
        self.serving.abort();
    }
}

fn echo_tool() -> DynamicTool {
    DynamicTool::builder("echo", "Answers with the text it was given")
        .input_schema(json!({
            "type": "object",
            "properties": {"text": {"type": "string"}},
            "required": ["text"]
        }))
        .handler(|input, _cx| async move { Ok(json!({"echo": input["text"]})) })
        .unwrap()
}

/// Toolsmith's MCP server (one `echo` tool) at `https://localhost:PORT/mcp`, with a fresh
/// self-signed certificate for `localhost`.
async fn start_tls_server() -> TlsServer {
    let rcgen::CertifiedKey { cert, signing_key } = rcgen::generate_simple_self_signed(vec!["localhost".to_owned()]).unwrap();
    let key = rustls::pki_types::PrivateKeyDer::Pkcs8(signing_key.serialize_der().into());
    let mut config = rustls::ServerConfig::builder_with_provider(Arc::new(rustls::crypto::ring::default_provider()))
        .with_safe_default_protocol_versions()
        .unwrap()
        .with_no_client_auth()
        .with_single_cert(vec![cert.der().clone()], key)
        .unwrap();
    config.alpn_protocols = vec![b"http/1.1".to_vec()];

    let server = McpServer::new(Runtime::new(Registry::from_iter([echo_tool()])), McpConfig::default());
    let router = tool_core::mcp::http::router(server, &HttpOptions::default());
    let tcp = TcpListener::bind("127.0.0.1:0").await.unwrap();
    let port = tcp.local_addr().unwrap().port();
    let failed_handshakes = Arc::new(Mutex::new(Vec::new()));
    let listener = TlsListener {
        tcp,
        acceptor: TlsAcceptor::from(Arc::new(config)),
        failed_handshakes: failed_handshakes.clone(),
    };
    let serving = tokio::spawn(async move {
        let _ = axum::serve(listener, router).await;
    });
    TlsServer {
        port,
        cert_pem: cert.pem(),
        failed_handshakes,
        serving,
    }
}

fn url(port: u16) -> String {
    format!("https://localhost:{port}/mcp")
}

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
