//! The MCP server over Streamable HTTP, at `/mcp`.
//!
//! Owns [`HttpOptions`], [`router`] and [`serve`]: `rmcp`'s Streamable HTTP service (sessions
//! with CSPRNG ids, every protocol revision, the 2026-07-28 stateless path) behind a guard that
//! checks `Host` and `Origin` (local names only unless allowed: 403), an optional bearer token
//! (401), the body size (413) and that every POST is a JSON-RPC message (400 with a JSON-RPC
//! `-32700`/`-32600` error instead of a bare status).
//!
//! Two deployment modes:
//!
//! - **Sessions** (the default): `initialize` answers with an `Mcp-Session-Id` the client sends
//!   on every later request (revisions up to 2025-11-25), every POST is answered with an SSE
//!   stream, and a GET stream carries `notifications/tools/list_changed`. The session lives in
//!   this process, so a load balancer must keep a client on one instance.
//! - **Stateless** ([`HttpOptions::stateless`]; the MCP TypeScript SDK's
//!   `sessionIdGenerator: undefined`): no `Mcp-Session-Id`, and every POST is served on its own
//!   by any instance (load-balanced or serverless deployments). With
//!   [`HttpOptions::json_response`] too, a call whose first message is its result is answered
//!   `Content-Type: application/json`; one that reports progress or logs first is answered with
//!   an SSE stream (those messages, then the result), so nothing is lost. A request without a
//!   session cannot be sent a request of the server's own, so on revisions up to 2025-11-25:
//!   approval and suspension are not asked through elicitation (the result names the waiting
//!   call and the `toolsmith` command that continues it), a tool's `cx.mcp().elicit`/`sample`
//!   fails with an error saying why, `logging/setLevel` has nothing to keep its level in (no
//!   log notifications), there is no GET stream (no `notifications/tools/list_changed`: clients
//!   list again), and `max_concurrent_calls` bounds the calls of one request, i.e. nothing
//!   across requests (limit concurrency in front of the server).
//!
//! 2026-07-28 requests are stateless in both modes (their per-request metadata carries what a
//! session did; questions travel as input-required results), so neither option changes them
//! except that `json_response` applies to them as well.

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
    /// Serve without sessions (rmcp's `legacy_session_mode = false`): no `Mcp-Session-Id`,
    /// each request on its own, no GET stream. Off by default. See the module documentation
    /// for what a request without a session cannot do (approval through elicitation, a tool
    /// asking the client mid-call, `logging/setLevel`, `list_changed`).
    pub stateless: bool,
    /// Answer a request whose first message is its result with `Content-Type:
    /// application/json` instead of an SSE stream (a request whose handler sends a
    /// notification first still gets a stream). Requires [`Self::stateless`]: with sessions
    /// every POST is answered with a stream, so [`serve`] refuses the combination (and
    /// [`router`] panics) rather than ignoring it.
    pub json_response: bool,
}

impl Default for HttpOptions {
    fn default() -> Self {
        HttpOptions {
            allowed_hosts: Vec::new(),
            allowed_origins: Vec::new(),
            auth_token: None,
            max_body_bytes: 4 << 20,
            stateless: false,
            json_response: false,
        }
    }
}

impl HttpOptions {
    /// Why these options cannot be served (`json_response` without `stateless`).
    pub fn check(&self) -> Result<(), String> {
        if self.json_response && !self.stateless {
            return Err(
                "`json_response` requires `stateless` (`--json-response` requires `--stateless`): with sessions every request is answered with an SSE stream"
                    .into(),
            );
        }
        Ok(())
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
    match super::body::parse(&bytes) {
        Err(r) => return rpc_error(StatusCode::BAD_REQUEST, r.id, r.code, r.message),
        Ok(v) => {
            if let Some((id, why)) = invalid_message(&v) {
                return rpc_error(StatusCode::BAD_REQUEST, id, -32600, format!("Invalid request: {why}"));
            }
        }
    }
    next.run(Request::from_parts(parts, Body::from(bytes))).await
}

/// The axum router serving `server` at `/mcp`.
///
/// # Panics
///
/// When [`HttpOptions::check`] refuses `options` (`json_response` without `stateless`).
pub fn router<E: ServerHandler + Clone + Send + Sync + 'static>(server: McpServer<E>, options: &HttpOptions) -> axum::Router {
    if let Err(why) = options.check() {
        panic!("invalid HTTP options: {why}");
    }
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
        .with_max_request_body_bytes(options.max_body_bytes)
        .with_legacy_session_mode(!options.stateless)
        .with_json_response(options.json_response);
    // Stateless, the factory runs for every request: each is a session of its own, told it
    // has no client to send requests to.
    let server = server.without_sessions(options.stateless);
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
/// (useful with port 0). Options [`HttpOptions::check`] refuses are an
/// [`std::io::ErrorKind::InvalidInput`] error, before anything is bound.
pub async fn serve<E: ServerHandler + Clone + Send + Sync + 'static>(
    server: McpServer<E>,
    addr: SocketAddr,
    options: HttpOptions,
    shutdown: CancellationToken,
    ready: impl FnOnce(SocketAddr),
) -> std::io::Result<()> {
    use axum::serve::ListenerExt;
    options
        .check()
        .map_err(|why| std::io::Error::new(std::io::ErrorKind::InvalidInput, why))?;
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
