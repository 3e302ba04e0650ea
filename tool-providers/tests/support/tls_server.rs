//! Toolsmith's own MCP server (`tool_core::mcp::http::router`, one `echo` tool) served
//! in-process over TLS (rustls on ring) with a fresh self-signed certificate for `localhost`
//! made by rcgen: what the `https://` tests and the `mcp_call` bench connect to.
//!
//! Owns [`start_tls_server`], the TLS listener (each accepted connection handshaken before axum
//! sees it; failed or stalled handshakes recorded and skipped) and the count of accepted
//! connections (how many TCP connections the clients opened).

#![allow(dead_code)]

use std::net::SocketAddr;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use serde_json::json;
use tokio::net::{TcpListener, TcpStream};
use tokio_rustls::TlsAcceptor;
use tokio_rustls::rustls;
use tool_core::mcp::http::HttpOptions;
use tool_core::mcp::{McpConfig, McpServer};
use tool_core::runtime::Runtime;
use tool_core::{DynamicTool, Registry};

/// How long a handshake may take on the test server before it is dropped.
const HANDSHAKE_PATIENCE: Duration = Duration::from_secs(10);

/// A TCP listener whose connections are TLS: each accepted connection is handshaken before it is
/// handed to axum; failed (or stalled) handshakes are recorded and skipped.
struct TlsListener {
    tcp: TcpListener,
    acceptor: TlsAcceptor,
    failed_handshakes: Arc<Mutex<Vec<String>>>,
    accepted: Arc<AtomicUsize>,
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
            self.accepted.fetch_add(1, Ordering::Relaxed);
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
pub struct TlsServer {
    pub port: u16,
    /// The server's certificate, to trust with `root_certificate_pem`.
    pub cert_pem: String,
    /// Handshakes that failed or stalled.
    pub failed_handshakes: Arc<Mutex<Vec<String>>>,
    accepted: Arc<AtomicUsize>,
    serving: tokio::task::JoinHandle<()>,
}

impl TlsServer {
    /// TCP connections accepted so far.
    pub fn connections(&self) -> usize {
        self.accepted.load(Ordering::Relaxed)
    }
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
pub async fn start_tls_server() -> TlsServer {
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
    let accepted = Arc::new(AtomicUsize::new(0));
    let listener = TlsListener {
        tcp,
        acceptor: TlsAcceptor::from(Arc::new(config)),
        failed_handshakes: failed_handshakes.clone(),
        accepted: accepted.clone(),
    };
    let serving = tokio::spawn(async move {
        let _ = axum::serve(listener, router).await;
    });
    TlsServer {
        port,
        cert_pem: cert.pem(),
        failed_handshakes,
        accepted,
        serving,
    }
}

/// The server's MCP endpoint.
pub fn url(port: u16) -> String {
    format!("https://localhost:{port}/mcp")
}
