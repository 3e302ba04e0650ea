//! The MCP server over Streamable HTTP, at `/mcp`.
//!
//! Owns [`HttpOptions`], [`router`] and [`serve`]: `rmcp`'s Streamable HTTP service (sessions
//! with CSPRNG ids, every protocol revision, the 2026-07-28 stateless path) behind a guard that
//! checks `Host` and `Origin` (local names only unless allowed: 403), an optional bearer token
//! (401), the body size (413) and that every POST is a JSON-RPC message (400 with a JSON-RPC
//! `-32700`/`-32600` error instead of a bare status).

use std::net::SocketAddr;
use std::sync::Arc;

use axum::body::Body;
use axum::extract::{Request, State};
use axum::http::{header, HeaderMap, Method, StatusCode};
use axum::middleware::Next;
use axum::response::{IntoResponse, Response};
use rmcp::transport::streamable_http_server::session::local::LocalSessionManager;
use rmcp::transport::{StreamableHttpServerConfig, StreamableHttpService};
use rmcp::ServerHandler;
use serde_json::{json, Value};
use tokio_util::sync::CancellationToken;

use super::McpServer;

/// What the HTTP transport accepts.
#[derive(Debug, Clone)]
pub struct HttpOptions {
    /// `Host` names accepted besides `localhost`, `127.0.0.1` and `::1`.
    pub allowed_hosts: Vec<String>,
    /// `Origin`s accepted besides local ones (`http://localhost:*`, `http://127.0.0.1:*`,
    /// `http://[::1]:*`); `*` as the port matches any port.
    pub allowed_origins: Vec<String>,
    /// When set, every request must carry `Authorization: Bearer <token>`.
    pub auth_token: Option<String>,
    /// Largest accepted request body (default 4 MiB).
    pub max_body_bytes: usize,
}

impl Default for HttpOptions {
    fn default() -> Self {
        HttpOptions {
            allowed_hosts: Vec::new(),
            allowed_origins: Vec::new(),
            auth_token: None,
            max_body_bytes: 4 << 20,
        }
    }
}

const LOCAL_HOSTS: [&str; 3] = ["localhost", "127.0.0.1", "::1"];
const LOCAL_ORIGINS: [&str; 6] = [
    "http://localhost:*",
    "http://127.0.0.1:*",
    "http://[::1]:*",
    "http://localhost",
    "http://127.0.0.1",
    "http://[::1]",
];

struct Guard {
    token: Option<String>,
    max_body: usize,
}

fn rpc_error(status: StatusCode, id: Value, code: i64, message: String) -> Response {
    let body = json!({"jsonrpc": "2.0", "id": id, "error": {"code": code, "message": message}});
    (status, [(header::CONTENT_TYPE, "application/json")], body.to_string()).into_response()
}

/// Compares without an early exit on the first differing byte.
fn same_secret(a: &[u8], b: &[u8]) -> bool {
    a.len() == b.len() && a.iter().zip(b).fold(0u8, |acc, (x, y)| acc | (x ^ y)) == 0
}

fn authorized(headers: &HeaderMap, token: &str) -> bool {
    headers
        .get(header::AUTHORIZATION)
        .and_then(|v| v.to_str().ok())
        // The scheme name is case-insensitive (RFC 9110 §11.1).
        .and_then(|v| v.get(..7).filter(|scheme| scheme.eq_ignore_ascii_case("bearer ")).map(|_| &v[7..]))
        .is_some_and(|t| same_secret(t.trim().as_bytes(), token.as_bytes()))
}

/// Why a JSON value is not a JSON-RPC 2.0 message, and the id to answer with.
pub(crate) fn invalid_message(v: &Value) -> Option<(Value, String)> {
    // rmcp takes no batches (MCP dropped them): it would answer one without an `id`.
    let Some(obj) = v.as_object() else {
        return Some((
            Value::Null,
            "a JSON-RPC message must be an object (batches are not supported)".into(),
        ));
    };
    // MCP ids are strings or integers (never null); rmcp would answer others without an `id`.
    if obj.get("id").is_some_and(|id| !(id.is_string() || id.is_i64() || id.is_u64())) {
        return Some((Value::Null, "`id` must be a string or an integer".into()));
    }
    let id = obj.get("id").cloned().unwrap_or(Value::Null);
    if obj.get("jsonrpc").and_then(Value::as_str) != Some("2.0") {
        return Some((id, "`jsonrpc` must be \"2.0\"".into()));
    }
    let is_request = obj.get("method").is_some_and(Value::is_string);
    let is_response = obj.contains_key("id") && (obj.contains_key("result") || obj.contains_key("error"));
    if !is_request && !is_response {
        return Some((
            id,
            "a message needs a string `method` (request or notification) or an `id` with `result`/`error`".into(),
        ));
    }
    if let Some(params) = obj.get("params") {
        if !params.is_object() {
            return Some((id, "`params` must be an object".into()));
        }
    }
    None
}

async fn guard(State(g): State<Arc<Guard>>, request: Request, next: Next) -> Response {
    if let Some(token) = &g.token {
        if !authorized(request.headers(), token) {
            let mut r = rpc_error(
                StatusCode::UNAUTHORIZED,
                Value::Null,
                -32001,
                "Unauthorized: send `Authorization: Bearer <token>`".into(),
            );
            r.headers_mut()
                .insert(header::WWW_AUTHENTICATE, header::HeaderValue::from_static("Bearer"));
            return r;
        }
    }
    if request.method() != Method::POST {
        return next.run(request).await;
    }
    let (parts, body) = request.into_parts();
    let Ok(bytes) = axum::body::to_bytes(body, g.max_body).await else {
        return rpc_error(
            StatusCode::PAYLOAD_TOO_LARGE,
            Value::Null,
            -32600,
            format!("The request body is larger than {} bytes.", g.max_body),
        );
    };
    match serde_json::from_slice::<Value>(&bytes) {
        Err(e) => return rpc_error(StatusCode::BAD_REQUEST, Value::Null, -32700, format!("Parse error: {e}")),
        Ok(v) => {
            if let Some((id, why)) = invalid_message(&v) {
                return rpc_error(StatusCode::BAD_REQUEST, id, -32600, format!("Invalid request: {why}"));
            }
        }
    }
    next.run(Request::from_parts(parts, Body::from(bytes))).await
}

/// The axum router serving `server` at `/mcp`.
pub fn router<E: ServerHandler + Clone + Send + Sync + 'static>(server: McpServer<E>, options: &HttpOptions) -> axum::Router {
    let hosts: Vec<String> = LOCAL_HOSTS
        .iter()
        .map(|h| (*h).to_owned())
        .chain(options.allowed_hosts.iter().cloned())
        .collect();
    let origins: Vec<String> = LOCAL_ORIGINS
        .iter()
        .map(|o| (*o).to_owned())
        .chain(options.allowed_origins.iter().cloned())
        .collect();
    let config = StreamableHttpServerConfig::default()
        .with_allowed_hosts(hosts)
        .with_allowed_origins(origins)
        .with_max_request_body_bytes(options.max_body_bytes);
    let service = StreamableHttpService::new(move || Ok(server.for_new_session()), LocalSessionManager::default().into(), config);
    let guard_state = Arc::new(Guard {
        token: options.auth_token.clone(),
        max_body: options.max_body_bytes,
    });
    axum::Router::new()
        .nest_service("/mcp", service)
        .layer(axum::middleware::from_fn_with_state(guard_state, guard))
}

/// Serves `server` on `addr` until `shutdown` is cancelled; `ready` receives the bound address
/// (useful with port 0).
pub async fn serve<E: ServerHandler + Clone + Send + Sync + 'static>(
    server: McpServer<E>,
    addr: SocketAddr,
    options: HttpOptions,
    shutdown: CancellationToken,
    ready: impl FnOnce(SocketAddr),
) -> std::io::Result<()> {
    use axum::serve::ListenerExt;
    let listener = tokio::net::TcpListener::bind(addr).await?;
    ready(listener.local_addr()?);
    // Without TCP_NODELAY, small SSE frames wait on delayed ACKs.
    let listener = listener.tap_io(|tcp| {
        let _ = tcp.set_nodelay(true);
    });
    axum::serve(listener, router(server, &options))
        .with_graceful_shutdown(async move { shutdown.cancelled().await })
        .await
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn jsonrpc_shapes() {
        assert!(invalid_message(&json!({"jsonrpc": "2.0", "id": 1, "method": "ping"})).is_none());
        assert!(invalid_message(&json!({"jsonrpc": "2.0", "method": "notifications/initialized"})).is_none());
        assert!(invalid_message(&json!({"jsonrpc": "2.0", "id": 1, "result": {}})).is_none());
        assert_eq!(
            invalid_message(&json!({"jsonrpc": "1.0", "id": 7, "method": "x"})).unwrap().0,
            json!(7)
        );
        assert!(invalid_message(&json!({"jsonrpc": "2.0", "id": 1})).is_some());
        assert!(invalid_message(&json!({"jsonrpc": "2.0", "id": 1, "method": "x", "params": "bad"})).is_some());
        assert!(invalid_message(&json!(42)).is_some());
        assert!(invalid_message(&json!([{"jsonrpc": "2.0", "id": 1, "method": "ping"}])).is_some());
        assert!(invalid_message(&json!({"jsonrpc": "2.0", "id": 1, "method": "x", "params": [1]})).is_some());
        for bad in [json!(null), json!({"a": 1}), json!(1.5), json!(true)] {
            let (id, _) = invalid_message(&json!({"jsonrpc": "2.0", "id": bad, "method": "ping"})).unwrap();
            assert_eq!(id, Value::Null);
        }
        assert!(invalid_message(&json!({"jsonrpc": "2.0", "id": "a", "method": "ping"})).is_none());
    }

    #[test]
    fn bearer_tokens_compare_exactly() {
        let mut h = HeaderMap::new();
        h.insert(header::AUTHORIZATION, "Bearer s3cret".parse().unwrap());
        assert!(authorized(&h, "s3cret"));
        h.insert(header::AUTHORIZATION, "bearer s3cret".parse().unwrap());
        assert!(authorized(&h, "s3cret"), "the scheme is case-insensitive");
        assert!(!authorized(&h, "s3cre"));
        assert!(!authorized(&HeaderMap::new(), "s3cret"));
    }
}
