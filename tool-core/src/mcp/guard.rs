//! The guard in front of rmcp's Streamable HTTP service: what every request to `/mcp` must
//! pass before rmcp sees it.
//!
//! Owns [`Guard::admit`]: `Host` or `Origin` twice (400, before anything else), authorization
//! (`gate`), a session of another subject (404), the body's size (413) and how long it takes to
//! arrive (408), that every POST is one JSON-RPC message (400 with a `-32700`/`-32600` error)
//! and that an `initialize` carries valid params (400 with `-32602`; on 2026-07-28, which has no
//! `initialize`, 404 with `-32601`), the OAuth scopes of a
//! call, each caller's `tools/call` limits (429 with `Retry-After`: `fairness`), and the cap on
//! live sessions (503). Every refusal is logged at warn with its reason.
//! The guard runs in two places, the same code: as a layer of the router an application mounts
//! (`http::router`), and called directly by `serve`'s connections for `/mcp` ([`Direct`]).
//! The shape checks are the stdio transport's too (`invalid_message`, `invalid_params`).

use std::future::Future;
use std::sync::Arc;
use std::time::Duration;

use axum::body::Body;
use axum::extract::{Request, State};
use axum::http::{HeaderMap, Method, StatusCode, header};
use axum::middleware::Next;
use axum::response::{IntoResponse, Response};
use rmcp::ServerHandler;
use rmcp::model::InitializeRequestParams;
use rmcp::transport::streamable_http_server::SessionManager;
use serde_json::value::RawValue;
use serde_json::{Value, json};
use tokio::sync::OwnedSemaphorePermit;

use super::activity::{Activity, Tracked};
use super::body::Message;
use super::fairness::{Admission, Fairness, Limit, OverLimit};
use super::gate::Gate;
use super::listen::Endpoint;
use super::session_cap::SessionSlots;
use super::shared_service::Shared;

/// What the guard checks requests against.
pub(super) struct Guard {
    /// The POSTs in flight (a call's stream is until it ends), for graceful shutdown.
    pub(super) calls: Arc<Activity>,
    pub(super) gate: Gate,
    pub(super) max_body: usize,
    pub(super) body_timeout: Duration,
    /// The live sessions' slots (`None` when stateless: no sessions).
    pub(super) sessions: Option<Arc<SessionSlots>>,
    /// The per-caller limits of `tools/call` (`None`: none set).
    pub(super) fairness: Option<Arc<Fairness>>,
    /// Adds `execution.taskSupport` to the `tools/list` answers of 2025-11-25 peers.
    pub(super) execution: super::execution::Execution,
}

fn rpc_error(status: StatusCode, id: Value, code: i64, message: String) -> Response {
    let body = json!({"jsonrpc": "2.0", "id": id, "error": {"code": code, "message": message}});
    (status, [(header::CONTENT_TYPE, "application/json")], body.to_string()).into_response()
}

/// A refused request: logged at warn with `reason` (never the request's content), answered
/// with a JSON-RPC error.
/// rmcp's answer to a request naming an unknown session (its body, with no content type).
const UNKNOWN_SESSION: &str = "Not Found: Session not found";

pub(super) fn refuse(reason: &'static str, status: StatusCode, id: Value, code: i64, message: String) -> Response {
    tracing::warn!(reason, status = status.as_u16(), code, answer = %message, "refused an MCP HTTP request");
    rpc_error(status, id, code, message)
}

/// The first of `Host` and `Origin` that the request carries more than once.
fn duplicated(headers: &HeaderMap) -> Option<header::HeaderName> {
    [header::HOST, header::ORIGIN]
        .into_iter()
        .find(|name| headers.get_all(name).iter().nth(1).is_some())
}

/// Why a message is not a JSON-RPC 2.0 message, and the id to answer with.
pub(crate) fn invalid_message(m: &Message<'_>) -> Option<(Value, String)> {
    // rmcp takes no batches (MCP dropped them): it would answer one without an `id`.
    if !m.is_object() {
        return Some((
            Value::Null,
            "a JSON-RPC message must be an object (batches are not supported)".into(),
        ));
    }
    // MCP ids are strings or integers (never null); rmcp would answer others without an `id`.
    let id = m.id();
    if m.has_id() && id.is_null() {
        return Some((Value::Null, "`id` must be a string or an integer".into()));
    }
    if m.jsonrpc().as_deref() != Some("2.0") {
        return Some((id, "`jsonrpc` must be \"2.0\"".into()));
    }
    if m.method().is_none() && !m.is_response() {
        return Some((
            id,
            "a message needs a string `method` (request or notification) or an `id` with `result`/`error`".into(),
        ));
    }
    if m.params().is_some_and(|params| !params.get().starts_with('{')) {
        return Some((id, "`params` must be an object".into()));
    }
    None
}

/// Why an `initialize` request's params are not what `initialize` takes (JSON-RPC `-32602`),
/// and the id to answer with; `None` for any other message.
pub(crate) fn invalid_params(m: &Message<'_>) -> Option<(Value, String)> {
    if !m.is("initialize") {
        return None;
    }
    let params = m.params().map_or("null", RawValue::get);
    let e = serde_json::from_str::<InitializeRequestParams>(params).err()?;
    Some((
        m.id(),
        format!(
            "Invalid params: `initialize` takes `protocolVersion` (a string), `capabilities` (an object) and `clientInfo` (`name`, `version`): {e}"
        ),
    ))
}

/// The request names a protocol revision without `initialize` (2026-07-28 or later) in its
/// `MCP-Protocol-Version` header: dated revisions compare as text.
fn removed_initialize(headers: &HeaderMap) -> bool {
    headers
        .get("mcp-protocol-version")
        .and_then(|v| v.to_str().ok())
        .is_some_and(|v| v.trim() >= "2026-07-28")
}

/// The guard as a layer of the router (`http::router`).
pub(super) async fn guard(State(g): State<Arc<Guard>>, request: Request, next: Next) -> Response {
    g.admit(request, |request| next.run(request)).await
}

/// The MCP endpoint as `http::serve`'s connections call it: the guard, then rmcp's service, in
/// one future that hyper keeps per connection (see `listen`).
pub(super) struct Direct<S, M> {
    pub(super) guard: Arc<Guard>,
    pub(super) service: Shared<S, M>,
}

impl<S, M> Clone for Direct<S, M> {
    fn clone(&self) -> Self {
        Direct {
            guard: self.guard.clone(),
            service: self.service.clone(),
        }
    }
}

impl<S, M> Endpoint for Direct<S, M>
where
    S: ServerHandler + Send + 'static,
    M: SessionManager,
{
    fn serve(&self, request: Request) -> impl Future<Output = Response> + Send {
        self.guard.admit(request, |request| self.service.handle(request))
    }
}

impl Guard {
    /// Admits `request` or answers it with a refusal; an admitted request is answered by
    /// `inner` (rmcp's service).
    async fn admit<F, Fut>(&self, mut request: Request, inner: F) -> Response
    where
        F: FnOnce(Request) -> Fut,
        Fut: Future<Output = Response>,
    {
        if let Some(refused) = self.check_head(request.headers()) {
            return refused;
        }
        let caller = match self.gate.admit(request.headers_mut()).await {
            Ok(caller) => caller,
            Err(refused) => return refused,
        };
        if !matches!(self.gate, Gate::Open) {
            request.extensions_mut().insert(super::caching::Authorized);
        }
        if let Some(caller) = &caller {
            if let Some(refused) = self.foreign_session(request.headers(), caller) {
                return refused;
            }
            // rmcp hands the request's parts, extensions included, to the handler.
            request.extensions_mut().insert(caller.clone());
        }
        if request.method() != Method::POST {
            return logged(inner(request).await);
        }
        let (mut parts, body) = request.into_parts();
        let bytes = match self.read_body(body).await {
            Ok(bytes) => bytes,
            Err(refused) => return refused,
        };
        // Parsed once, refusing what is not JSON and objects that repeat a key (I-JSON).
        let message = match super::body::parse(&bytes) {
            Err(r) => return refuse("not JSON, or a repeated key", StatusCode::BAD_REQUEST, r.id, r.code, r.message),
            Ok(v) => v,
        };
        if let Some((id, why)) = invalid_message(&message) {
            return refuse(
                "not a JSON-RPC message",
                StatusCode::BAD_REQUEST,
                id,
                -32600,
                format!("Invalid request: {why}"),
            );
        }
        if message.is("initialize") && removed_initialize(&parts.headers) {
            let why = "`initialize` is not a method of MCP 2026-07-28: each request carries its own `_meta`".to_owned();
            return refuse("initialize on 2026-07-28", StatusCode::NOT_FOUND, message.id(), -32601, why);
        }
        if let Some((id, why)) = invalid_params(&message) {
            return refuse("invalid initialize params", StatusCode::BAD_REQUEST, id, -32602, why);
        }
        if let Some(refused) = caller.as_ref().and_then(|c| self.gate.check_call(c, &message)) {
            return refused;
        }
        if let Some(refused) = self.limit_call(&mut parts, &message) {
            return refused;
        }
        let slot = match self.reserve_session(&parts.headers, &message) {
            Ok(slot) => slot,
            Err(refused) => return *refused,
        };
        // A 2025-11-25 listing gets each tool's `execution` on its way out (`execution`).
        let lists = message.is("tools/list")
            && parts
                .headers
                .get("mcp-protocol-version")
                .is_some_and(|v| v.as_bytes().trim_ascii() == super::execution::REVISION.as_bytes());
        let call = self.calls.begin();
        let mut response = logged(inner(Request::from_parts(parts, Body::from(bytes))).await);
        if lists {
            response = self.execution.rewrite(response).await;
        }
        let response = response.map(|body| Tracked::body(body, call));
        if let (Some(slot), Some(sessions)) = (slot, &self.sessions) {
            // The slot goes to the session the request created (none: it frees at once).
            if let Some(id) = response.headers().get(SESSION_HEADER).and_then(|v| v.to_str().ok()) {
                sessions.adopt(id, slot, caller.as_ref().map(crate::Caller::owner));
            }
        }
        response
    }

    /// Refuses a request by its head: `Host` or `Origin` twice.
    fn check_head(&self, headers: &HeaderMap) -> Option<Response> {
        if let Some(name) = duplicated(headers) {
            return Some(refuse(
                "duplicate header",
                StatusCode::BAD_REQUEST,
                Value::Null,
                -32600,
                format!("Invalid request: the `{name}` header appears more than once"),
            ));
        }
        None
    }

    /// A request naming a session another subject's token created: answered byte for byte as
    /// the transport answers an unknown session (404, `Not Found: Session not found`), so a
    /// token can neither ride on nor learn of someone else's session.
    fn foreign_session(&self, headers: &HeaderMap, caller: &crate::Caller) -> Option<Response> {
        let id = headers.get(SESSION_HEADER)?.to_str().ok()?;
        if !self.sessions.as_ref()?.owned_by_another(id, &caller.owner()) {
            return None;
        }
        super::identity::refused_as_unknown("session");
        let mut unknown = Response::new(Body::from(UNKNOWN_SESSION));
        *unknown.status_mut() = StatusCode::NOT_FOUND;
        Some(unknown)
    }

    /// The whole body, if it is small enough and arrives in time.
    async fn read_body(&self, body: Body) -> Result<axum::body::Bytes, Response> {
        match tokio::time::timeout(self.body_timeout, axum::body::to_bytes(body, self.max_body)).await {
            Ok(Ok(bytes)) => Ok(bytes),
            Ok(Err(_)) => Err(refuse(
                "body too large",
                StatusCode::PAYLOAD_TOO_LARGE,
                Value::Null,
                -32600,
                format!("The request body is larger than {} bytes.", self.max_body),
            )),
            Err(_) => {
                let mut r = refuse(
                    "body too slow",
                    StatusCode::REQUEST_TIMEOUT,
                    Value::Null,
                    -32600,
                    format!(
                        "The request body did not arrive within {} ms; send it at once.",
                        self.body_timeout.as_millis()
                    ),
                );
                // The rest of the body is never read: the connection cannot carry another request.
                r.headers_mut()
                    .insert(header::CONNECTION, header::HeaderValue::from_static("close"));
                Err(r)
            }
        }
    }

    /// Counts a `tools/call` against its caller's limits (`fairness`): its permit goes with the
    /// request to the call handler, which holds it until the call is answered. Over a limit:
    /// `429` with `Retry-After`, except a call over its concurrency inside a session, which
    /// the handler answers with a JSON-RPC error (the session's client waits for the answer on
    /// the session).
    fn limit_call(&self, parts: &mut axum::http::request::Parts, message: &Message<'_>) -> Option<Response> {
        let fairness = self.fairness.as_ref()?;
        if !message.is("tools/call") {
            return None;
        }
        match fairness.admit(&super::fairness::key_of(&parts.extensions)) {
            Ok(None) => None,
            Ok(Some(permit)) => {
                parts.extensions.insert(Admission::granted(permit));
                None
            }
            Err(over) if matches!(over.limit, Limit::Concurrency(_)) && self.in_session(&parts.headers) => {
                parts.extensions.insert(Admission::refused(over));
                None
            }
            Err(over) => Some(too_many(message.id(), &over)),
        }
    }

    /// Whether the request belongs to a session (it names one, and the server keeps sessions).
    fn in_session(&self, headers: &HeaderMap) -> bool {
        self.sessions.is_some() && headers.contains_key(SESSION_HEADER)
    }

    /// A session slot for an `initialize` that will create a session; refused (503) when every
    /// slot is taken.
    fn reserve_session(&self, headers: &HeaderMap, message: &Message<'_>) -> Result<Option<OwnedSemaphorePermit>, Box<Response>> {
        let Some(sessions) = &self.sessions else {
            return Ok(None);
        };
        if headers.contains_key(SESSION_HEADER) || !message.is("initialize") {
            return Ok(None);
        }
        if let Some(slot) = sessions.reserve() {
            return Ok(Some(slot));
        }
        let id = message.id();
        let mut r = refuse(
            "session limit",
            StatusCode::SERVICE_UNAVAILABLE,
            id,
            -32000,
            format!(
                "The server has its limit of {} live sessions; retry once a session ends (a client ends its session with DELETE /mcp).",
                sessions.cap()
            ),
        );
        r.headers_mut().insert(header::RETRY_AFTER, header::HeaderValue::from_static("5"));
        Err(Box::new(r))
    }
}

const SESSION_HEADER: &str = "mcp-session-id";

/// A call over its caller's limit: `429`, `Retry-After` in seconds, and a JSON-RPC error with
/// the retry time in its message and `data.retryAfterMs`.
fn too_many(id: Value, over: &OverLimit) -> Response {
    let reason = match over.limit {
        Limit::Rate(_) => "caller over its call rate",
        Limit::Concurrency(_) => "caller at its concurrency limit",
    };
    // A flood repeats this thousands of times a second: one line per reason per 10 s, counted.
    if let Some(folded) = crate::runtime::settle::quiet(reason) {
        tracing::warn!(
            reason,
            status = 429,
            refused_since_last_line = folded,
            "refused an MCP HTTP request"
        );
    }
    let body = json!({"jsonrpc": "2.0", "id": id, "error": {"code": over.code(), "message": over.message(), "data": over.data()}});
    let mut r = (
        StatusCode::TOO_MANY_REQUESTS,
        [(header::CONTENT_TYPE, "application/json")],
        body.to_string(),
    )
        .into_response();
    r.headers_mut()
        .insert(header::RETRY_AFTER, header::HeaderValue::from(over.retry_after_secs()));
    r
}

/// Logs at warn a request that `rmcp` refused (its status says why), and passes the response on.
fn logged(response: Response) -> Response {
    let status = response.status();
    if status.is_client_error() || status.is_server_error() {
        let reason = match status {
            StatusCode::FORBIDDEN => "Host or Origin not allowed",
            StatusCode::NOT_FOUND => "unknown or expired session",
            StatusCode::METHOD_NOT_ALLOWED => "method not allowed",
            StatusCode::NOT_ACCEPTABLE => "Accept must allow application/json and text/event-stream",
            StatusCode::UNSUPPORTED_MEDIA_TYPE => "Content-Type must be application/json",
            _ => "refused by the MCP service",
        };
        tracing::warn!(reason, status = status.as_u16(), "refused an MCP HTTP request");
    }
    response
}

#[cfg(test)]
mod tests {
    use super::*;

    /// `invalid_message` of `v`'s text, as a transport parses it.
    fn shape(v: Value) -> Option<(Value, String)> {
        let text = v.to_string();
        let message = super::super::body::parse(text.as_bytes())
            .ok()
            .expect("JSON with distinct keys parses");
        invalid_message(&message)
    }

    /// `invalid_params` of a body's text.
    fn params(text: &str) -> Option<(Value, String)> {
        invalid_params(&super::super::body::parse(text.as_bytes()).ok().expect("the text parses"))
    }

    #[test]
    fn jsonrpc_shapes() {
        assert!(shape(json!({"jsonrpc": "2.0", "id": 1, "method": "ping"})).is_none());
        assert!(shape(json!({"jsonrpc": "2.0", "method": "notifications/initialized"})).is_none());
        assert!(shape(json!({"jsonrpc": "2.0", "id": 1, "result": {}})).is_none());
        assert_eq!(shape(json!({"jsonrpc": "1.0", "id": 7, "method": "x"})).unwrap().0, json!(7));
        assert!(shape(json!({"jsonrpc": "2.0", "id": 1})).is_some());
        assert!(shape(json!({"jsonrpc": "2.0", "id": 1, "method": "x", "params": "bad"})).is_some());
        assert!(shape(json!(42)).is_some());
        assert!(shape(json!([{"jsonrpc": "2.0", "id": 1, "method": "ping"}])).is_some());
        assert!(shape(json!({"jsonrpc": "2.0", "id": 1, "method": "x", "params": [1]})).is_some());
        for bad in [json!(null), json!({"a": 1}), json!(1.5), json!(true)] {
            let (id, _) = shape(json!({"jsonrpc": "2.0", "id": bad, "method": "ping"})).unwrap();
            assert_eq!(id, Value::Null);
        }
        assert!(shape(json!({"jsonrpc": "2.0", "id": "a", "method": "ping"})).is_none());
    }

    #[test]
    fn members_are_read_as_json_whatever_their_spelling() {
        // Escapes in `jsonrpc` and `method` decode as the JSON they are.
        let m = super::super::body::parse(br#"{"jsonrpc": "2\u002e0", "id": "7", "method": "init\u0069alize"}"#)
            .ok()
            .unwrap();
        assert!(invalid_message(&m).is_none());
        assert!(m.is("initialize"));
        assert_eq!(m.id(), json!("7"));
        // A member present as null is present: a null id is refused, not taken for no id.
        let m = super::super::body::parse(br#"{"jsonrpc": "2.0", "id": null, "method": "ping"}"#)
            .ok()
            .unwrap();
        assert_eq!(
            invalid_message(&m).map(|(_, why)| why),
            Some("`id` must be a string or an integer".into())
        );
        // A request's result member does not make it a response without an id.
        assert!(shape(json!({"jsonrpc": "2.0", "result": {}})).is_some());
        assert!(shape(json!({"jsonrpc": "2.0", "id": 1, "error": {"code": 1, "message": "x"}})).is_none());
    }

    #[test]
    fn initialize_params_are_checked_from_the_text() {
        let good = r#"{"jsonrpc": "2.0", "id": 3, "method": "initialize", "params": {"protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": {"name": "c", "version": "1"}}}"#;
        assert!(params(good).is_none());
        let (id, why) = params(r#"{"jsonrpc": "2.0", "id": 3, "method": "initialize", "params": {"capabilities": {}}}"#).unwrap();
        assert_eq!(id, json!(3));
        assert!(why.starts_with("Invalid params: `initialize` takes"), "{why}");
        assert!(params(r#"{"jsonrpc": "2.0", "id": 3, "method": "initialize"}"#).is_some());
        assert!(params(r#"{"jsonrpc": "2.0", "id": 3, "method": "ping"}"#).is_none());
    }
}
