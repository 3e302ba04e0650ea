//! The MCP server over Streamable HTTP, at `/mcp`.
//!
//! Owns [`HttpOptions`], [`router`] and [`serve`]: `rmcp`'s Streamable HTTP service (sessions
//! with CSPRNG ids, every protocol revision, the 2026-07-28 stateless path) behind the guard
//! (`guard`) that checks `Host` and `Origin` (local names only unless allowed: 403; either
//! header twice: 400, before anything else), authorization (`gate`: none, a static bearer
//! token, or an OAuth 2.1 resource server with Protected Resource Metadata: 401/403), the body
//! size (413) and how long the body takes to arrive (408), that every POST is a JSON-RPC message (400 with a JSON-RPC
//! `-32700`/`-32600` error instead of a bare status) and that an `initialize` carries valid
//! params (400 with `-32602`), each caller's `tools/call` limits (429 with `Retry-After`:
//! [`HttpLimits::per_caller`]), and the cap on live sessions (503). Every refusal is logged at
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
//!   across requests (bound each caller with [`HttpLimits::per_caller`], or limit concurrency
//!   in front of the server).
//!
//! 2026-07-28 requests are stateless in both modes (their per-request metadata carries what a
//! session did; questions travel as input-required results), so neither option changes them
//! except that `json_response` applies to them as well.

use std::net::SocketAddr;
use std::sync::Arc;
use std::time::Duration;

use rmcp::ServerHandler;
use rmcp::transport::streamable_http_server::session::local::LocalSessionManager;
use rmcp::transport::{StreamableHttpServerConfig, StreamableHttpService};
use tokio_util::sync::CancellationToken;

use super::McpServer;
use super::activity::Activity;
use super::gate::Gate;
use super::guard::{Direct, Guard, guard};
use super::listen::{ConnLimits, Drain, Endpoint, MCP_PATH, Routes, TlsAcceptor, serve_router};
use super::session_cap::{CappedSessions, SessionSlots};
use super::shared_service::Shared;

pub use super::fairness::{CallRate, CallerLimits};

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
    #[cfg_attr(docsrs, doc(cfg(feature = "oauth")))]
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
    #[cfg_attr(docsrs, doc(cfg(feature = "tls")))]
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
    /// How many `tools/call`s one caller may run at once and start per second (default: no
    /// limit). Past its rate a call is answered `429` with `Retry-After`; past its
    /// concurrency too, except inside a session, where the call is answered with a JSON-RPC
    /// error (its client waits for the answer there); both carry the retry time in the message
    /// and in `data.retryAfterMs`. Other callers are not affected.
    pub per_caller: CallerLimits,
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
            per_caller: CallerLimits::default(),
        }
    }
}

/// Why HTTP options cannot be served.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum HttpOptionsError {
    /// A timeout of zero.
    #[error("`{0}` must be longer than zero")]
    ZeroTimeout(&'static str),
    /// A cap of zero.
    #[error("`max_connections` and `max_sessions` must be at least 1")]
    ZeroCap,
    /// `json_response` with sessions.
    #[error(
        "`json_response` requires `stateless` (`--json-response` requires `--stateless`): with sessions every request is answered with an SSE stream"
    )]
    JsonResponseNeedsStateless,
    /// A keep-alive of zero.
    #[error("`sse_keep_alive` must be longer than zero (`None` turns it off)")]
    ZeroKeepAlive,
    /// Both a static token and OAuth.
    #[error("`auth_token` and `oauth` exclude each other: a request is authorized one way")]
    TwoAuthorizations,
}

impl HttpLimits {
    /// Why these limits cannot be served (a zero timeout or cap).
    pub fn check(&self) -> Result<(), HttpOptionsError> {
        let timeouts = [
            ("header_read_timeout", self.header_read_timeout),
            ("body_read_timeout", self.body_read_timeout),
            ("idle_timeout", self.idle_timeout),
            ("session_idle_timeout", self.session_idle_timeout),
        ];
        if let Some((name, _)) = timeouts.iter().find(|(_, d)| d.is_zero()) {
            return Err(HttpOptionsError::ZeroTimeout(name));
        }
        if self.per_caller.rate.is_some_and(|r| r.interval.is_zero()) {
            return Err(HttpOptionsError::ZeroTimeout("per_caller.rate.interval"));
        }
        if self.max_connections == 0 || self.max_sessions == 0 {
            return Err(HttpOptionsError::ZeroCap);
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
    pub fn check(&self) -> Result<(), HttpOptionsError> {
        if self.json_response && !self.stateless {
            return Err(HttpOptionsError::JsonResponseNeedsStateless);
        }
        if self.sse_keep_alive.is_some_and(|d| d.is_zero()) {
            return Err(HttpOptionsError::ZeroKeepAlive);
        }
        #[cfg(feature = "oauth")]
        if self.auth_token.is_some() && self.oauth.is_some() {
            return Err(HttpOptionsError::TwoAuthorizations);
        }
        self.limits.check()
    }
}

const LOCAL_HOSTS: [&str; 3] = ["localhost", "127.0.0.1", "::1"];
// `:*` matches any port and none (rmcp warns about entries without a port).
const LOCAL_ORIGINS: [&str; 3] = ["http://localhost:*", "http://127.0.0.1:*", "http://[::1]:*"];

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
) -> (Routes<impl Endpoint + use<E>>, Arc<Activity>) {
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
    let execution = super::execution::Execution::of(&server);
    let service = StreamableHttpService::new(move || Ok(server.for_new_session()), sessions.into(), config);
    let metadata = gate.metadata_routes();
    let calls = Activity::new();
    let guard_state = Arc::new(Guard {
        calls: calls.clone(),
        gate,
        max_body: options.max_body_bytes,
        body_timeout: options.limits.body_read_timeout,
        sessions: (!options.stateless).then_some(slots),
        fairness: super::fairness::Fairness::new(&options.limits.per_caller),
        execution,
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
    options
        .check()
        .map_err(|e| std::io::Error::new(std::io::ErrorKind::InvalidInput, e))?;
    let tls = acceptor(&options)?;
    if tls.is_none() && !addr.ip().is_loopback() && !options.insecure_http {
        return Err(invalid(format!(
            "refusing to serve plain HTTP on {addr}, which is not a loopback address: MCP requires HTTPS there. Give a certificate and key (`--tls-cert FILE --tls-key FILE`), or `--insecure-http` when a proxy in front terminates TLS"
        )));
    }
    server.warm_up();
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
