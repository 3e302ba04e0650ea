//! The MCP server over Streamable HTTP, at `/mcp`.
//!
//! Owns [`HttpOptions`], [`router`] and [`serve`]: `rmcp`'s Streamable HTTP service (sessions
//! with CSPRNG ids, every protocol revision, the 2026-07-28 stateless path) behind a guard that
//! checks `Host` and `Origin` (local names only unless allowed: 403; either header twice: 400,
//! before anything else), authorization (`gate`: none, a static bearer token, or an OAuth 2.1
//! resource server with Protected Resource Metadata: 401/403), the body size (413) and how long the
//! body takes to arrive (408), that every POST is a JSON-RPC message (400 with a JSON-RPC
//! `-32700`/`-32600` error instead of a bare status) and that an `initialize` carries valid
//! params (400 with `-32602`), and the cap on live sessions (503). Every refusal is logged at
//! warn with its reason. The connections themselves are limited by [`HttpLimits`] (header read
//! and idle timeouts, a cap on open connections: see `listen`).
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

use std::future::Future;
use std::net::SocketAddr;
use std::sync::Arc;
use std::time::Duration;

use axum::body::Body;
use axum::extract::{Request, State};
use axum::http::{header, HeaderMap, Method, StatusCode};
use axum::middleware::Next;
use axum::response::{IntoResponse, Response};
use rmcp::model::InitializeRequestParams;
use rmcp::transport::streamable_http_server::session::local::LocalSessionManager;
use rmcp::transport::streamable_http_server::SessionManager;
use rmcp::transport::{StreamableHttpServerConfig, StreamableHttpService};
use rmcp::ServerHandler;
use serde_json::value::RawValue;
use serde_json::{json, Value};
use tokio::sync::OwnedSemaphorePermit;
use tokio_util::sync::CancellationToken;

use super::activity::{Activity, Tracked};
use super::body::Message;
use super::gate::Gate;
use super::listen::{serve_router, ConnLimits, Drain, Endpoint, Routes, TlsAcceptor, MCP_PATH};
use super::session_cap::{CappedSessions, SessionSlots};
use super::shared_service::Shared;
use super::McpServer;

/// What the HTTP transport accepts.
#[derive(Debug, Clone)]
pub struct HttpOptions {
    /// `Host` names accepted besides `localhost`, `127.0.0.1` and `::1`.
    pub allowed_hosts: Vec<String>,
    /// `Origin`s accepted besides local ones (`http://localhost:*`, `http://127.0.0.1:*`,
    /// `http://[::1]:*`); `*` as the port matches any port.
    pub allowed_origins: Vec<String>,
    /// When set, every request must carry `Authorization: Bearer <token>`: one shared secret,
    /// no identities (for a private deployment). Not together with [`Self::oauth`].
    pub auth_token: Option<String>,
    /// When set, the server is an OAuth 2.1 resource server: every request must carry an
    /// access token this resource server accepts, whose identity reaches the calls, and the
    /// Protected Resource Metadata is served at `/.well-known/oauth-protected-resource` (and
    /// with the resource URI's path appended).
    #[cfg(feature = "oauth")]
    pub oauth: Option<Arc<super::oauth::ResourceServer>>,
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
    /// Timeouts and caps on connections and sessions.
    pub limits: HttpLimits,
    /// How often an open SSE stream with nothing to send carries a comment (`: ping`), so
    /// proxies and clients do not take it for dead (default 15 s; `None`: never).
    pub sse_keep_alive: Option<Duration>,
    /// Once [`serve`]'s shutdown is asked: how long the calls in flight get to finish before
    /// what still runs is cancelled (default 30 s). No new connection is accepted meanwhile.
    pub shutdown_grace: Duration,
    /// Serve HTTPS with this certificate and key (feature `tls`).
    #[cfg(feature = "tls")]
    pub tls: Option<super::tls::TlsFiles>,
    /// Serve plain HTTP on an address other than loopback (behind a proxy that terminates
    /// TLS). Off by default: [`serve`] refuses it, since MCP requires HTTPS off the machine.
    pub insecure_http: bool,
}

impl Default for HttpOptions {
    fn default() -> Self {
        HttpOptions {
            allowed_hosts: Vec::new(),
            allowed_origins: Vec::new(),
            auth_token: None,
            #[cfg(feature = "oauth")]
            oauth: None,
            max_body_bytes: 4 << 20,
            stateless: false,
            json_response: false,
            limits: HttpLimits::default(),
            sse_keep_alive: Some(Duration::from_secs(15)),
            shutdown_grace: Duration::from_secs(30),
            #[cfg(feature = "tls")]
            tls: None,
            insecure_http: false,
        }
    }
}

/// How long clients get and how many may be served at once; refusals are HTTP errors with a
/// JSON-RPC body, never a hang. [`serve`] enforces every limit; a [`router`] mounted in an
/// application of your own enforces the body read timeout and the session cap (the others are
/// the listener's: set them on your server).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct HttpLimits {
    /// How long a request head (request line and headers) may take to arrive (default 15 s);
    /// the connection is closed past it. Counted from the moment the server waits for the
    /// head: on a kept-alive connection, from the end of the previous response.
    pub header_read_timeout: Duration,
    /// How long a request body may take to arrive in full (default 30 s); past it the request
    /// is answered `408` and the connection closed.
    pub body_read_timeout: Duration,
    /// How long a connection may stay open with no request in flight and nothing arriving
    /// (default 10 s): a kept-alive connection between requests, or one that never sends.
    /// An open SSE stream is a request in flight. Between requests the header read timeout
    /// runs too (hyper starts it when it waits for a head), so the shorter of the two applies.
    pub idle_timeout: Duration,
    /// Connections served at once (default 512); one past it is answered `503` with
    /// `Retry-After` and closed.
    pub max_connections: usize,
    /// Live sessions at once (default 1024); an `initialize` past it is answered `503`. A
    /// session's slot is freed when the client deletes it (`DELETE /mcp`) or it expires.
    /// Not used when stateless.
    pub max_sessions: usize,
    /// How long a session lives without any request (default 5 minutes); then it expires.
    pub session_idle_timeout: Duration,
}

impl Default for HttpLimits {
    fn default() -> Self {
        HttpLimits {
            header_read_timeout: Duration::from_secs(15),
            body_read_timeout: Duration::from_secs(30),
            idle_timeout: Duration::from_secs(10),
            max_connections: 512,
            max_sessions: 1024,
            session_idle_timeout: Duration::from_secs(300),
        }
    }
}

impl HttpLimits {
    /// Why these limits cannot be served (a zero timeout or cap).
    pub fn check(&self) -> Result<(), String> {
        let timeouts = [
            ("header_read_timeout", self.header_read_timeout),
            ("body_read_timeout", self.body_read_timeout),
            ("idle_timeout", self.idle_timeout),
            ("session_idle_timeout", self.session_idle_timeout),
        ];
        if let Some((name, _)) = timeouts.iter().find(|(_, d)| d.is_zero()) {
            return Err(format!("`{name}` must be longer than zero"));
        }
        if self.max_connections == 0 || self.max_sessions == 0 {
            return Err("`max_connections` and `max_sessions` must be at least 1".into());
        }
        Ok(())
    }

    fn conn(&self) -> ConnLimits {
        ConnLimits {
            header_read_timeout: self.header_read_timeout,
            idle_timeout: self.idle_timeout,
            max_connections: self.max_connections,
        }
    }
}

impl HttpOptions {
    /// Why these options cannot be served (`json_response` without `stateless`, or limits
    /// [`HttpLimits::check`] refuses).
    pub fn check(&self) -> Result<(), String> {
        if self.json_response && !self.stateless {
            return Err(
                "`json_response` requires `stateless` (`--json-response` requires `--stateless`): with sessions every request is answered with an SSE stream"
                    .into(),
            );
        }
        if self.sse_keep_alive.is_some_and(|d| d.is_zero()) {
            return Err("`sse_keep_alive` must be longer than zero (`None` turns it off)".into());
        }
        #[cfg(feature = "oauth")]
        if self.auth_token.is_some() && self.oauth.is_some() {
            return Err("`auth_token` and `oauth` exclude each other: a request is authorized one way".into());
        }
        self.limits.check()
    }
}

const LOCAL_HOSTS: [&str; 3] = ["localhost", "127.0.0.1", "::1"];
// `:*` matches any port and none (rmcp warns about entries without a port).
const LOCAL_ORIGINS: [&str; 3] = ["http://localhost:*", "http://127.0.0.1:*", "http://[::1]:*"];

struct Guard {
    /// The POSTs in flight (a call's stream is until it ends), for graceful shutdown.
    calls: Arc<Activity>,
    gate: Gate,
    max_body: usize,
    body_timeout: Duration,
    /// The live sessions' slots (`None` when stateless: no sessions).
    sessions: Option<Arc<SessionSlots>>,
}

fn rpc_error(status: StatusCode, id: Value, code: i64, message: String) -> Response {
    let body = json!({"jsonrpc": "2.0", "id": id, "error": {"code": code, "message": message}});
    (status, [(header::CONTENT_TYPE, "application/json")], body.to_string()).into_response()
}

/// A refused request: logged at warn with `reason` (never the request's content), answered
/// with a JSON-RPC error.
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
        format!("Invalid params: `initialize` takes `protocolVersion` (a string), `capabilities` (an object) and `clientInfo` (`name`, `version`): {e}"),
    ))
}

/// The guard as a layer of the router ([`router`]).
async fn guard(State(g): State<Arc<Guard>>, request: Request, next: Next) -> Response {
    g.admit(request, |request| next.run(request)).await
}

/// The MCP endpoint as [`serve`]'s connections call it: the guard, then rmcp's service, in one
/// future that hyper keeps per connection (see `listen`).
struct Direct<S, M> {
    guard: Arc<Guard>,
    service: Shared<S, M>,
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
        let this = self.clone();
        async move { this.guard.admit(request, |request| this.service.handle(request)).await }
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
        let (parts, body) = request.into_parts();
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
        if let Some((id, why)) = invalid_params(&message) {
            return refuse("invalid initialize params", StatusCode::BAD_REQUEST, id, -32602, why);
        }
        if let Some(refused) = caller.as_ref().and_then(|c| self.gate.check_call(c, &message)) {
            return refused;
        }
        let slot = match self.reserve_session(&parts.headers, &message) {
            Ok(slot) => slot,
            Err(refused) => return *refused,
        };
        let call = self.calls.begin();
        let response = logged(inner(Request::from_parts(parts, Body::from(bytes))).await);
        let response = response.map(|body| Tracked::body(body, call));
        if let (Some(slot), Some(sessions)) = (slot, &self.sessions) {
            // The slot goes to the session the request created (none: it frees at once).
            if let Some(id) = response.headers().get(SESSION_HEADER).and_then(|v| v.to_str().ok()) {
                sessions.adopt(id, slot, caller.as_ref().map(|c| c.subject.clone()));
            }
        }
        response
    }
}

const SESSION_HEADER: &str = "mcp-session-id";

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

impl Guard {
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

    /// A request naming a session another subject's token created: answered as an unknown
    /// session (404), so a token cannot ride on, or learn of, someone else's session.
    fn foreign_session(&self, headers: &HeaderMap, caller: &super::Identity) -> Option<Response> {
        let id = headers.get(SESSION_HEADER)?.to_str().ok()?;
        if !self.sessions.as_ref()?.owned_by_another(id, &caller.subject) {
            return None;
        }
        Some(refuse(
            "session of another subject",
            StatusCode::NOT_FOUND,
            Value::Null,
            -32001,
            "Session not found".into(),
        ))
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

/// The axum router serving `server` at `/mcp`.
///
/// # Panics
///
/// When [`HttpOptions::check`] refuses `options` (`json_response` without `stateless`, a zero
/// limit).
pub fn router<E: ServerHandler + Clone + Send + Sync + 'static>(server: McpServer<E>, options: &HttpOptions) -> axum::Router {
    build_router(server, options, CancellationToken::new()).0.router
}

/// The router and the same MCP endpoint for a connection to call directly, its SSE streams
/// ended when `cancel` is, and its calls (POSTs) in flight.
fn build_router<E: ServerHandler + Clone + Send + Sync + 'static>(
    server: McpServer<E>,
    options: &HttpOptions,
    cancel: CancellationToken,
) -> (Routes<impl Endpoint>, Arc<Activity>) {
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
        .with_sse_keep_alive(options.sse_keep_alive)
        .with_json_response(options.json_response)
        .with_cancellation_token(cancel);
    // Stateless, the factory runs for every request: each is a session of its own, told it
    // has no client to send requests to.
    let server = server.without_sessions(options.stateless);
    let health = super::health::routes(server.runtime().clone());
    let gate = gate(&server, options);
    let slots = SessionSlots::new(options.limits.max_sessions);
    let mut local = LocalSessionManager::default();
    local.session_config.keep_alive = Some(options.limits.session_idle_timeout);
    let sessions = CappedSessions::new(local, slots.clone());
    let service = StreamableHttpService::new(move || Ok(server.for_new_session()), sessions.into(), config);
    let metadata = gate.metadata_routes();
    let calls = Activity::new();
    let guard_state = Arc::new(Guard {
        calls: calls.clone(),
        gate,
        max_body: options.max_body_bytes,
        body_timeout: options.limits.body_read_timeout,
        sessions: (!options.stateless).then_some(slots),
    });
    let service = Shared::new(service);
    let router = axum::Router::new()
        .nest_service(MCP_PATH, service.clone())
        .layer(axum::middleware::from_fn_with_state(guard_state.clone(), guard))
        .merge(health);
    let router = match metadata {
        Some(metadata) => router.merge(metadata),
        None => router,
    };
    let mcp = Direct {
        guard: guard_state,
        service,
    };
    (Routes { router, mcp }, calls)
}

/// How `options` admit requests to `server`.
fn gate<E: ServerHandler + Clone + Send + Sync + 'static>(server: &McpServer<E>, options: &HttpOptions) -> Gate {
    #[cfg(feature = "oauth")]
    if let Some(oauth) = &options.oauth {
        return Gate::OAuth {
            server: oauth.clone(),
            tools: Arc::new(server.clone()),
        };
    }
    let _ = server;
    match &options.auth_token {
        Some(token) => Gate::Token(token.clone()),
        None => Gate::Open,
    }
}

#[cfg(feature = "oauth")]
impl<E: ServerHandler + Clone + Send + Sync + 'static> super::gate::ToolScopes for McpServer<E> {
    fn of(&self, name: &str) -> Option<Vec<String>> {
        Some(self.listing().ok()?.scopes(name)?.to_vec())
    }

    fn all(&self) -> Vec<String> {
        self.listing().map(|l| l.all_scopes()).unwrap_or_default()
    }
}

/// Serves `server` on `addr` until `shutdown` is cancelled; `ready` receives the bound address
/// (useful with port 0). Options [`HttpOptions::check`] refuses, plain HTTP on an address other
/// than loopback without [`HttpOptions::insecure_http`], and TLS files that cannot be used are
/// an [`std::io::ErrorKind::InvalidInput`] error, before anything is bound. Connections are
/// limited by [`HttpOptions::limits`]. Once `shutdown` is cancelled, no new connection is
/// accepted, idle ones close, the calls in flight get [`HttpOptions::shutdown_grace`] to
/// finish (their clients get their results), then every stream ends and what still runs is
/// cancelled; calls waiting in the runtime's store (approval, suspension) stay there.
pub async fn serve<E: ServerHandler + Clone + Send + Sync + 'static>(
    server: McpServer<E>,
    addr: SocketAddr,
    options: HttpOptions,
    shutdown: CancellationToken,
    ready: impl FnOnce(SocketAddr),
) -> std::io::Result<()> {
    let invalid = |why: String| std::io::Error::new(std::io::ErrorKind::InvalidInput, why);
    options.check().map_err(invalid)?;
    let tls = acceptor(&options)?;
    if tls.is_none() && !addr.ip().is_loopback() && !options.insecure_http {
        return Err(invalid(format!(
            "refusing to serve plain HTTP on {addr}, which is not a loopback address: MCP requires HTTPS there. Give a certificate and key (`--tls-cert FILE --tls-key FILE`), or `--insecure-http` when a proxy in front terminates TLS"
        )));
    }
    let listener = tokio::net::TcpListener::bind(addr).await?;
    ready(listener.local_addr()?);
    let streams = CancellationToken::new();
    let (routes, calls) = build_router(server, &options, streams.clone());
    let drain = Drain {
        calls,
        grace: options.shutdown_grace,
        streams,
    };
    serve_router(listener, routes, options.limits.conn(), shutdown, drain, tls).await;
    Ok(())
}

/// The TLS acceptor of `options`, if they ask for TLS.
#[cfg(feature = "tls")]
fn acceptor(options: &HttpOptions) -> std::io::Result<Option<TlsAcceptor>> {
    options.tls.as_ref().map(|files| files.acceptor()).transpose()
}

#[cfg(not(feature = "tls"))]
fn acceptor(_: &HttpOptions) -> std::io::Result<Option<TlsAcceptor>> {
    Ok(None)
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
