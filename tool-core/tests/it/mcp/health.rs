//! `GET /healthz` of the HTTP server over real TCP: `200` with `{"store": "ok"}` while the store
//! answers, `503` with the store's error when it does not (a store whose every read fails, as
//! an unreachable database's would).

use crate::support::http_server;

use serde_json::Value;
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tool_core::Registry;
use tool_core::mcp::http::HttpOptions;
use tool_core::mcp::{McpConfig, McpServer};
use tool_core::runtime::backend::{PendingStore, StoredCall};
use tool_core::runtime::{PendingCall, Runtime, StoreError};

/// A store whose database is gone: every operation fails.
struct Unreachable;

fn gone() -> StoreError {
    StoreError::storage("cannot reach PostgreSQL: connection refused")
}

#[async_trait::async_trait]
impl PendingStore for Unreachable {
    async fn save(&self, _: &PendingCall) -> Result<(), StoreError> {
        Err(gone())
    }
    async fn claim(&self, _: &str) -> Result<Option<PendingCall>, StoreError> {
        Err(gone())
    }
    async fn release(&self, _: &str) -> Result<(), StoreError> {
        Err(gone())
    }
    async fn remove(&self, _: &str) -> Result<(), StoreError> {
        Err(gone())
    }
    async fn get(&self, _: &str) -> Result<Option<PendingCall>, StoreError> {
        Err(gone())
    }
    async fn entries(&self) -> Result<Vec<StoredCall>, StoreError> {
        Err(gone())
    }
}

/// `GET /healthz` over TCP: the status code and the JSON body.
async fn health(addr: std::net::SocketAddr) -> (u16, Value) {
    let mut tcp = tokio::net::TcpStream::connect(addr).await.unwrap();
    let request = format!("GET /healthz HTTP/1.1\r\nHost: {addr}\r\nConnection: close\r\n\r\n");
    tcp.write_all(request.as_bytes()).await.unwrap();
    let mut response = String::new();
    tcp.read_to_string(&mut response).await.unwrap();
    let status = response.split(' ').nth(1).and_then(|s| s.parse().ok()).unwrap_or(0);
    let body = response.split("\r\n\r\n").nth(1).unwrap_or_default();
    (status, serde_json::from_str(body).unwrap_or(Value::Null))
}

#[tokio::test]
async fn healthz_is_ok_while_the_store_answers() {
    let server = McpServer::new(Runtime::new(Registry::new()), McpConfig::default());
    let served = http_server::serve(server, HttpOptions::default()).await;
    let (status, body) = health(served.addr).await;
    assert_eq!(status, 200, "{body}");
    assert_eq!(body["status"], "ok");
    assert_eq!(body["store"], "ok");
    assert_eq!(body["backend"], "memory", "{body}");
    assert!(body["kept_writes"].is_u64(), "{body}");
    let since = body["since"].as_str().unwrap_or_default().to_owned();
    assert!(chrono::DateTime::parse_from_rfc3339(&since).is_ok(), "{body}");
    let (_, again) = health(served.addr).await;
    assert_eq!(again["since"], since.as_str(), "the state has not changed since: {again}");
}

#[tokio::test]
async fn healthz_is_503_with_the_reason_when_the_store_fails() {
    let runtime = Runtime::builder(Registry::new()).store(Unreachable).build();
    let server = McpServer::new(runtime, McpConfig::default());
    let served = http_server::serve(server, HttpOptions::default()).await;
    let (status, body) = health(served.addr).await;
    assert_eq!(status, 503, "{body}");
    assert_eq!(body["status"], "unavailable");
    assert!(body["store"].as_str().unwrap_or_default().contains("connection refused"), "{body}");
    assert_eq!(body["backend"], "custom", "a store of its own names no backend: {body}");
    let (_, again) = health(served.addr).await;
    assert_eq!(again["since"], body["since"], "unavailable since the first failed probe: {again}");
}
