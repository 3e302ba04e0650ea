//! Any MCP server as a tool provider: [`McpToolProvider`].
//!
//! An `rmcp` client over a child process's stdio ([`McpToolProvider::stdio`]) or Streamable
//! HTTP ([`McpToolProvider::http`], `http://` or `https://`, with an optional bearer token, extra
//! trusted root certificates and a connect timeout). The server is one toolkit
//! whose slug is the provider id; its tools come from `tools/list` (following `nextCursor`,
//! bounded), keep their names, schemas, annotations and `_meta`, and run through `tools/call`.
//! A `notifications/tools/list_changed` refreshes the cached list and, with
//! [`McpToolProvider::sync_into`], removes and adds the tools in a [`Registry`].
//!
//! ```no_run
//! # async fn demo() -> Result<(), tool_core::provider::ProviderError> {
//! use tool_providers::mcp::McpToolProvider;
//! let provider = McpToolProvider::stdio("local", "toolsmith", ["serve", "--stdio"]);
//! provider.connect().await?;
//! # Ok(()) }
//! ```
//!
//! # TLS
//!
//! `https://` endpoints use rustls with the *ring* crypto provider (or the process-default
//! rustls `CryptoProvider` when the application installed one; nothing is installed globally).
//! Server certificates are always verified, against the system's trusted roots (as
//! `rustls-platform-verifier` finds them) plus any added with
//! [`McpToolProvider::root_certificate_pem`]; there is no way to turn verification off.
//!
//! ```no_run
//! # async fn demo() -> Result<(), tool_core::provider::ProviderError> {
//! # use tool_providers::mcp::McpToolProvider;
//! let company_ca = std::fs::read("/etc/company/ca.pem").unwrap();
//! let provider = McpToolProvider::http("internal", "https://mcp.internal.example/mcp")
//!     .root_certificate_pem(company_ca)
//!     .connect_timeout(std::time::Duration::from_secs(5));
//! provider.connect().await?;
//! # Ok(()) }
//! ```

use std::collections::{BTreeMap, BTreeSet, HashMap};
use std::sync::{Arc, Mutex, RwLock, Weak};
use std::time::Duration;

use rmcp::model::{
    CallToolRequest, CallToolRequestParams, CancelledNotification, CancelledNotificationParam, ClientNotification, ClientRequest,
    PaginatedRequestParams, ProgressNotificationParam, ProgressToken, RequestId, ServerResult,
};
use rmcp::service::{NotificationContext, Peer, PeerRequestOptions, RoleClient, RunningService};
use rmcp::transport::streamable_http_client::{StreamableHttpClientTransportConfig, StreamableHttpError};
use rmcp::transport::{StreamableHttpClientTransport, TokioChildProcess};
use rmcp::{ClientHandler, ServiceExt};
use rustls::pki_types::pem::PemObject;
use rustls::pki_types::CertificateDer;
use serde_json::Value;
use tool_core::context::McpHandle;
use tool_core::provider::{
    Health, ListResult, ListToolsOptions, Pagination, ProviderError, ProviderInfo, ResolveOptions, ResolvedTools, ToolInfo, ToolProvider,
    Toolkit,
};
use tool_core::tool::BoxFuture;
use tool_core::{DynamicTool, Registry, Tool, ToolError};

/// At most this many `tools/list` pages are read (a server whose cursor never ends is cut off).
pub const MAX_PAGES: usize = 100;

/// The default of [`McpToolProvider::connect_timeout`].
pub const DEFAULT_CONNECT_TIMEOUT: Duration = Duration::from_secs(30);

/// The default of [`McpToolProvider::pool_max_idle_per_host`].
pub const DEFAULT_IDLE_CONNECTIONS: usize = 8;

/// Redirects followed for one request (same-origin 307/308 only, as `rmcp`'s own client).
const MAX_REDIRECTS: usize = 10;

/// How the client reaches the server.
#[derive(Clone)]
enum Endpoint {
    Stdio {
        command: String,
        args: Vec<String>,
    },
    Http {
        url: String,
        bearer: Option<String>,
        /// PEM texts of extra trusted root certificates, parsed at connect.
        root_pems: Vec<Vec<u8>>,
        connect_timeout: Duration,
        /// Idle keep-alive connections kept for reuse.
        idle_connections: usize,
    },
}

impl std::fmt::Debug for Endpoint {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Endpoint::Stdio { command, args } => f.debug_struct("Stdio").field("command", command).field("args", args).finish(),
            Endpoint::Http {
                url,
                bearer,
                root_pems,
                connect_timeout,
                idle_connections,
            } => f
                .debug_struct("Http")
                .field("url", url)
                .field("bearer", &bearer.as_ref().map(|_| "<redacted>"))
                .field("extra_root_certificates", &root_pems.len())
                .field("connect_timeout", connect_timeout)
                .field("pool_max_idle_per_host", idle_connections)
                .finish(),
        }
    }
}

/// A synced registry and the definitions of the tools this provider put there.
type Synced = (Arc<Registry>, BTreeMap<String, Value>);

/// State shared by the provider, its notification handler and its tools' handlers.
struct Shared {
    id: String,
    /// Put before each server tool's name to make its Toolsmith id.
    prefix: String,
    peer: RwLock<Option<Peer<RoleClient>>>,
    /// The server's tools (as the wire shows them), in server order.
    tools: RwLock<Vec<Value>>,
    /// Where list changes are mirrored, and the definitions of the tools put there.
    sync: Mutex<Option<Synced>>,
    /// Serialises refreshes.
    refreshing: tokio::sync::Mutex<()>,
    /// Where the progress of each running call goes (the MCP client of the call, when it came
    /// from one), and the last progress passed on, by the progress token of its `tools/call`.
    progress: Mutex<ProgressRoutes>,
}

/// The MCP client each running call reports progress to, and the last progress passed on.
type ProgressRoutes = HashMap<ProgressToken, (Arc<dyn McpHandle>, f64)>;

/// Hears the server's notifications.
struct Notifier(Weak<Shared>);

impl ClientHandler for Notifier {
    async fn on_progress(&self, params: ProgressNotificationParam, _context: NotificationContext<RoleClient>) {
        let Some(shared) = self.0.upgrade() else { return };
        let mut routes = shared.progress.lock().unwrap_or_else(|e| e.into_inner());
        // rmcp runs notification handlers concurrently, so they can come here out of order;
        // progress must increase, so one overtaken by a later one is dropped. Passed on under
        // the lock, in the order accepted.
        if let Some((sink, last)) = routes.get_mut(&params.progress_token) {
            if params.progress > *last {
                *last = params.progress;
                sink.progress(params.progress, params.total, params.message);
            }
        }
    }

    async fn on_tool_list_changed(&self, context: NotificationContext<RoleClient>) {
        if let Some(shared) = self.0.upgrade() {
            if let Err(e) = refresh(&shared, &context.peer).await {
                tracing::warn!(provider = %shared.id, error = %e, "refreshing the MCP tool list after list_changed failed");
            }
        }
    }
}

/// An MCP server's tools as a [`ToolProvider`].
pub struct McpToolProvider {
    info: ProviderInfo,
    endpoint: Endpoint,
    shared: Arc<Shared>,
    service: tokio::sync::Mutex<Option<RunningService<RoleClient, Notifier>>>,
}

impl std::fmt::Debug for McpToolProvider {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("McpToolProvider")
            .field("id", &self.info.id)
            .field("endpoint", &self.endpoint)
            .finish_non_exhaustive()
    }
}

fn transport_error(id: &str, message: impl std::fmt::Display) -> ProviderError {
    ProviderError::Transport {
        provider: id.to_owned(),
        message: message.to_string(),
    }
}

impl McpToolProvider {
    fn new(id: impl Into<String>, endpoint: Endpoint) -> Self {
        let id = id.into();
        McpToolProvider {
            info: ProviderInfo {
                id: id.clone(),
                name: id.clone(),
                description: None,
            },
            endpoint,
            shared: Arc::new(Shared {
                id,
                prefix: String::new(),
                peer: RwLock::new(None),
                tools: RwLock::new(Vec::new()),
                sync: Mutex::new(None),
                refreshing: tokio::sync::Mutex::new(()),
                progress: Mutex::default(),
            }),
            service: tokio::sync::Mutex::new(None),
        }
    }

    /// A server run as a child process speaking MCP on its stdio.
    pub fn stdio<S: Into<String>>(id: impl Into<String>, command: impl Into<String>, args: impl IntoIterator<Item = S>) -> Self {
        Self::new(
            id,
            Endpoint::Stdio {
                command: command.into(),
                args: args.into_iter().map(Into::into).collect(),
            },
        )
    }

    /// A server at a Streamable HTTP endpoint (`http://host:port/mcp` or
    /// `https://host:port/mcp`).
    ///
    /// `https://` is verified against the system's trusted root certificates (see the
    /// [module docs](self#tls)); add a private CA or a self-signed certificate with
    /// [`root_certificate_pem`](Self::root_certificate_pem).
    pub fn http(id: impl Into<String>, url: impl Into<String>) -> Self {
        Self::new(
            id,
            Endpoint::Http {
                url: url.into(),
                bearer: None,
                root_pems: Vec::new(),
                connect_timeout: DEFAULT_CONNECT_TIMEOUT,
                idle_connections: DEFAULT_IDLE_CONNECTIONS,
            },
        )
    }

    /// Also trusts the root certificate(s) in `pem` (one or more `-----BEGIN CERTIFICATE-----`
    /// blocks; other blocks, such as keys, are ignored) for `https://` servers: a company CA, or
    /// a test server's self-signed certificate. The system's roots stay trusted; call it again
    /// to add more. HTTP only (ignored for stdio).
    ///
    /// The text is read by [`connect`](Self::connect): a `pem` without a usable certificate
    /// makes it fail with [`ProviderError::Config`].
    pub fn root_certificate_pem(mut self, pem: impl AsRef<[u8]>) -> Self {
        if let Endpoint::Http { root_pems, .. } = &mut self.endpoint {
            root_pems.push(pem.as_ref().to_vec());
        }
        self
    }

    /// How long [`connect`](Self::connect) may take to open the HTTP session: the bound on each
    /// request's TCP connect and TLS handshake, and on the MCP `initialize` exchange (default
    /// [`DEFAULT_CONNECT_TIMEOUT`]). HTTP only (ignored for stdio).
    pub fn connect_timeout(mut self, timeout: Duration) -> Self {
        if let Endpoint::Http { connect_timeout, .. } = &mut self.endpoint {
            *connect_timeout = timeout;
        }
        self
    }

    /// How many idle connections to the server are kept open for the next requests (default
    /// [`DEFAULT_IDLE_CONNECTIONS`]; idle ones close after 90 s). Reuse saves a TCP connect and,
    /// over `https://`, a TLS handshake per request: a call over TLS to a local server took
    /// 0.37× the time with reuse, 308 vs 837 µs (`cargo bench -p tool-providers --bench
    /// mcp_call`); the saving grows with the network's round-trip time. `0` opens a connection per request, as `rmcp`'s own
    /// client does to avoid a stall it saw when a connection was reused after a response that
    /// was not read to the end. HTTP only (ignored for stdio).
    pub fn pool_max_idle_per_host(mut self, connections: usize) -> Self {
        if let Endpoint::Http { idle_connections, .. } = &mut self.endpoint {
            *idle_connections = connections;
        }
        self
    }

    /// Sends `Authorization: Bearer TOKEN` (HTTP only; never shown in `Debug` or errors).
    pub fn bearer_token(mut self, token: impl Into<String>) -> Self {
        if let Endpoint::Http { bearer, .. } = &mut self.endpoint {
            *bearer = Some(token.into());
        }
        self
    }

    /// The name shown in pickers (default: the id; replaced by the server's name on connect
    /// only when it was not set).
    pub fn name(mut self, name: impl Into<String>) -> Self {
        self.info.name = name.into();
        self
    }

    /// Gives every tool of this server the id `PREFIX<name>` (calls still use the server's
    /// name), so that servers whose tools share names, or share them with local tools, can sit
    /// in one registry: `tool_prefix("github_")` turns `create_issue` into
    /// `github_create_issue` (the `server_tool` form Mastra's MCP client uses). Slugs
    /// ([`ToolProvider::list_tools`], [`ToolProvider::resolve_tools`]) stay the server's names.
    /// Set it before [`connect`](Self::connect); later it is ignored.
    pub fn tool_prefix(mut self, prefix: impl Into<String>) -> Self {
        match Arc::get_mut(&mut self.shared) {
            Some(shared) => shared.prefix = prefix.into(),
            None => tracing::warn!(provider = %self.info.id, "tool_prefix after connect is ignored"),
        }
        self
    }

    /// Mirrors the server's tools in `registry`: on connect every tool is inserted (ids taken
    /// by other tools are skipped with a warning), and each `list_changed` removes the tools
    /// that are gone and adds (or replaces) the others.
    pub fn sync_into(self, registry: Arc<Registry>) -> Self {
        *self.shared.sync.lock().unwrap_or_else(|e| e.into_inner()) = Some((registry, BTreeMap::new()));
        self
    }

    /// Starts the client (spawns the process or opens the HTTP session), initialises the MCP
    /// session and reads the tool list. Call it once; a second call is a no-op.
    pub async fn connect(&self) -> Result<(), ProviderError> {
        let mut service = self.service.lock().await;
        if service.is_some() {
            return Ok(());
        }
        let id = &self.info.id;
        let handler = Notifier(Arc::downgrade(&self.shared));
        let running = match &self.endpoint {
            Endpoint::Stdio { command, args } => {
                let mut cmd = tokio::process::Command::new(command);
                cmd.args(args);
                let transport =
                    TokioChildProcess::new(cmd).map_err(|e| transport_error(id, format!("could not start `{command}`: {e}")))?;
                handler.serve(transport).await.map_err(|e| transport_error(id, e))?
            }
            Endpoint::Http {
                url,
                bearer,
                root_pems,
                connect_timeout,
                idle_connections,
            } => {
                let client = http_client(id, url, root_pems, *connect_timeout, *idle_connections)?;
                let mut config = StreamableHttpClientTransportConfig::with_uri(url.as_str());
                if let Some(token) = bearer {
                    config = config.auth_header(token.as_str());
                }
                let transport = StreamableHttpClientTransport::with_client(client, config);
                match tokio::time::timeout(*connect_timeout, handler.serve(transport)).await {
                    Ok(running) => running.map_err(|e| transport_error(id, initialize_error(&e)))?,
                    Err(_) => {
                        return Err(transport_error(
                            id,
                            format!("no MCP session with {url} within {connect_timeout:?} (see `connect_timeout`)"),
                        ))
                    }
                }
            }
        };
        let peer = running.peer().clone();
        *self.shared.peer.write().unwrap_or_else(|e| e.into_inner()) = Some(peer.clone());
        *service = Some(running);
        drop(service);
        refresh(&self.shared, &peer).await
    }

    /// Reads the tool list again (a `list_changed` notification does this by itself).
    pub async fn refresh(&self) -> Result<(), ProviderError> {
        let peer = current_peer(&self.shared).map_err(|e| ProviderError::Config(e.message().to_owned()))?;
        refresh(&self.shared, &peer).await
    }

    /// The server's `initialize` answer (name, version, capabilities, instructions) as JSON.
    pub fn server_info(&self) -> Option<Value> {
        let peer = self.shared.peer.read().unwrap_or_else(|e| e.into_inner()).clone()?;
        peer.peer_info().and_then(|i| serde_json::to_value(&*i).ok())
    }

    /// The cached tools, as the server listed them.
    pub fn tools(&self) -> Vec<Value> {
        self.shared.tools.read().unwrap_or_else(|e| e.into_inner()).clone()
    }

    /// Ends the session (and the child process).
    pub async fn close(&self) {
        *self.shared.peer.write().unwrap_or_else(|e| e.into_inner()) = None;
        if let Some(running) = self.service.lock().await.take() {
            let _ = running.cancel().await;
        }
    }

    fn connected(&self) -> Result<(), ProviderError> {
        if self.shared.peer.read().unwrap_or_else(|e| e.into_inner()).is_some() {
            Ok(())
        } else {
            Err(ProviderError::Config(format!(
                "the MCP provider `{}` is not connected: call `connect().await` first",
                self.info.id
            )))
        }
    }
}

/// `error`'s message followed by those of its sources that it does not already contain (so a
/// TLS failure such as `invalid peer certificate: UnknownIssuer` is not hidden behind "error
/// sending request").
fn error_chain(error: &dyn std::error::Error) -> String {
    let mut message = error.to_string();
    append_sources(&mut message, error);
    message
}

/// Appends to `message` the messages of `error` and its sources that it does not contain yet.
fn append_sources(message: &mut String, error: &dyn std::error::Error) {
    let mut next = Some(error);
    while let Some(e) = next {
        let part = e.to_string();
        if !part.is_empty() && !message.contains(&part) {
            message.push_str(": ");
            message.push_str(&part);
        }
        next = e.source();
    }
}

/// A failed HTTP `initialize`, with the HTTP client's own error chain (rmcp keeps it out of
/// `source()`, and it holds the reason: refused connection, certificate not trusted, ...).
fn initialize_error(error: &rmcp::service::ClientInitializeError) -> String {
    let mut message = error_chain(error);
    if let rmcp::service::ClientInitializeError::TransportError { error, .. } = error {
        let http = error.error.downcast_ref::<StreamableHttpError<reqwest13::Error>>();
        match http {
            Some(StreamableHttpError::Client(client)) => append_sources(&mut message, client),
            Some(StreamableHttpError::AuthRequired(_)) => {
                return "the server refused the request as unauthorized (HTTP 401): set or correct its bearer token (`bearer_token`)"
                    .to_owned()
            }
            _ => {}
        }
    }
    message
}

/// The certificates in the `root_certificate_pem` texts, each checked as a trust anchor.
fn extra_roots(id: &str, pems: &[Vec<u8>]) -> Result<Vec<CertificateDer<'static>>, ProviderError> {
    let mut roots = Vec::new();
    for (n, pem) in pems.iter().enumerate() {
        let bad = |why: String| {
            ProviderError::Config(format!(
                "the MCP provider `{id}`: root certificate #{} (`root_certificate_pem`) {why}",
                n + 1
            ))
        };
        let before = roots.len();
        for cert in CertificateDer::pem_slice_iter(pem) {
            let cert = cert.map_err(|e| bad(format!("is not valid PEM: {e}")))?;
            rustls::RootCertStore::empty()
                .add(cert.clone())
                .map_err(|e| bad(format!("is not a usable X.509 certificate: {e}")))?;
            roots.push(cert);
        }
        if roots.len() == before {
            return Err(bad("has no `-----BEGIN CERTIFICATE-----` block".to_owned()));
        }
    }
    Ok(roots)
}

/// The rustls client configuration: the process-default crypto provider if the application
/// installed one, else ring; the platform verifier with the system's roots plus `extra` (never
/// without verification).
fn tls_config(id: &str, url: &str, extra: Vec<CertificateDer<'static>>) -> Result<rustls::ClientConfig, ProviderError> {
    let config_error = |what: &str, e: &dyn std::fmt::Display| ProviderError::Config(format!("the MCP provider `{id}`: {what}: {e}"));
    let provider = rustls::crypto::CryptoProvider::get_default()
        .cloned()
        .unwrap_or_else(|| Arc::new(rustls::crypto::ring::default_provider()));
    let builder = rustls::ClientConfig::builder_with_provider(provider.clone())
        .with_safe_default_protocol_versions()
        .map_err(|e| config_error("the TLS crypto provider is unusable", &e))?;
    let has_extra = !extra.is_empty();
    #[cfg(not(target_os = "android"))]
    let verifier = rustls_platform_verifier::Verifier::new_with_extra_roots(extra, provider);
    #[cfg(target_os = "android")]
    let verifier = if extra.is_empty() {
        rustls_platform_verifier::Verifier::new(provider)
    } else {
        Err(rustls::Error::General(
            "extra root certificates are not supported on Android".to_owned(),
        ))
    };
    let mut config = match verifier {
        // `dangerous()` is only rustls' door to a custom verifier: this one verifies fully.
        Ok(verifier) => builder.dangerous().with_custom_certificate_verifier(Arc::new(verifier)),
        // A machine without CA certificates can still use plain `http://`; any TLS attempt
        // then fails (no trusted root at all).
        Err(_) if !has_extra && !url.trim_start().get(..8).is_some_and(|s| s.eq_ignore_ascii_case("https://")) => {
            builder.with_root_certificates(rustls::RootCertStore::empty())
        }
        Err(e) => return Err(config_error("no trusted root certificates for TLS", &e)),
    }
    .with_no_client_auth();
    config.alpn_protocols = vec![b"http/1.1".to_vec()];
    Ok(config)
}

/// The reqwest 0.13 client `rmcp` runs on, with our TLS settings and connection reuse;
/// otherwise as `rmcp`'s own default client (same-origin 307/308 redirects only).
fn http_client(
    id: &str,
    url: &str,
    root_pems: &[Vec<u8>],
    connect_timeout: Duration,
    idle_connections: usize,
) -> Result<reqwest13::Client, ProviderError> {
    let tls = tls_config(id, url, extra_roots(id, root_pems)?)?;
    reqwest13::Client::builder()
        .tls_backend_preconfigured(tls)
        .connect_timeout(connect_timeout)
        .pool_max_idle_per_host(idle_connections)
        .redirect(same_origin_redirects())
        .build()
        .map_err(|e| {
            ProviderError::Config(format!(
                "the MCP provider `{id}`: could not build the HTTP client: {}",
                error_chain(&e)
            ))
        })
}

/// Follows only 307/308 redirects (which keep the method and body) to the same origin (so the
/// session id and the bearer token never go elsewhere), at most [`MAX_REDIRECTS`] times.
fn same_origin_redirects() -> reqwest13::redirect::Policy {
    reqwest13::redirect::Policy::custom(|attempt| {
        let keeps_body = matches!(
            attempt.status(),
            reqwest13::StatusCode::TEMPORARY_REDIRECT | reqwest13::StatusCode::PERMANENT_REDIRECT
        );
        let same_origin = attempt
            .previous()
            .first()
            .is_some_and(|first| first.origin() == attempt.url().origin());
        if !keeps_body || !same_origin {
            attempt.stop()
        } else if attempt.previous().len() > MAX_REDIRECTS {
            attempt.error(format!("more than {MAX_REDIRECTS} redirects"))
        } else {
            attempt.follow()
        }
    })
}

fn current_peer(shared: &Shared) -> Result<Peer<RoleClient>, ToolError> {
    shared
        .peer
        .read()
        .unwrap_or_else(|e| e.into_inner())
        .clone()
        .ok_or_else(|| ToolError::new(format!("The MCP server `{}` is not connected.", shared.id)))
}

/// Reads every page of `tools/list` (bounded) and updates the cache and the synced registry.
async fn refresh(shared: &Arc<Shared>, peer: &Peer<RoleClient>) -> Result<(), ProviderError> {
    let _one_at_a_time = shared.refreshing.lock().await;
    let mut tools = Vec::new();
    let mut cursor: Option<String> = None;
    let mut seen = BTreeSet::new();
    for page in 0.. {
        if page == MAX_PAGES {
            tracing::warn!(provider = %shared.id, "tools/list still had more pages after {MAX_PAGES}; the rest are ignored");
            break;
        }
        let params = cursor.clone().map(|c| PaginatedRequestParams::default().with_cursor(Some(c)));
        let result = peer
            .list_tools(params)
            .await
            .map_err(|e| transport_error(&shared.id, format!("tools/list failed: {e}")))?;
        for tool in &result.tools {
            tools.push(serde_json::to_value(tool).map_err(|e| transport_error(&shared.id, e))?);
        }
        match result.next_cursor {
            Some(next) if !next.is_empty() => {
                if !seen.insert(next.clone()) {
                    tracing::warn!(provider = %shared.id, cursor = %next, "tools/list repeated a cursor; stopping");
                    break;
                }
                cursor = Some(next);
            }
            _ => break,
        }
    }
    *shared.tools.write().unwrap_or_else(|e| e.into_inner()) = tools.clone();
    sync_registry(shared, &tools);
    Ok(())
}

/// Brings the synced registry (if any) in line with `tools`.
fn sync_registry(shared: &Arc<Shared>, tools: &[Value]) {
    let mut sync = shared.sync.lock().unwrap_or_else(|e| e.into_inner());
    let Some((registry, owned)) = sync.as_mut() else { return };
    let current: BTreeMap<String, &Value> = tools.iter().filter_map(|t| Some((tool_name(t)?.to_owned(), t))).collect();
    owned.retain(|name, def| {
        let keep = current.get(name).is_some_and(|now| *now == def);
        if !keep {
            registry.remove(&format!("{}{name}", shared.prefix));
        }
        keep
    });
    for (name, def) in current {
        if owned.contains_key(&name) {
            continue;
        }
        let Some(tool) = build_tool(shared, def) else { continue };
        match registry.insert(tool) {
            Ok(()) => {
                owned.insert(name, def.clone());
            }
            Err(e) => tracing::warn!(provider = %shared.id, tool = %name, error = %e, "the MCP tool was not added to the registry"),
        }
    }
}

fn tool_name(tool: &Value) -> Option<&str> {
    tool.get("name").and_then(Value::as_str)
}

fn text_of(tool: &Value, key: &str) -> Option<String> {
    tool.get(key)
        .and_then(Value::as_str)
        .map(str::to_owned)
        .filter(|s| !s.trim().is_empty())
}

/// A [`DynamicTool`] calling `tools/call` for one listed tool, or `None` (with a warning) when
/// its name or schemas are not usable.
fn build_tool(shared: &Arc<Shared>, def: &Value) -> Option<Arc<dyn Tool>> {
    let name = tool_name(def)?.to_owned();
    let description = text_of(def, "description")
        .or_else(|| text_of(def, "title"))
        .unwrap_or_else(|| format!("The `{name}` tool of the MCP server `{}`", shared.id));
    let mut builder = DynamicTool::builder(format!("{}{name}", shared.prefix), description).input_schema(
        def.get("inputSchema")
            .cloned()
            .unwrap_or_else(|| serde_json::json!({"type": "object"})),
    );
    if let Some(out) = def.get("outputSchema").filter(|v| !v.is_null()) {
        builder = builder.output_schema(out.clone());
    }
    if let Some(title) = text_of(def, "title") {
        builder = builder.title(title);
    }
    let annotations = def.get("annotations").cloned().unwrap_or(Value::Null);
    let meta = def.get("_meta").cloned().filter(|m| !m.is_null());
    builder = builder.with_spec(|s| {
        let hint = |k: &str| annotations.get(k).and_then(Value::as_bool);
        s.mcp.title = annotations.get("title").and_then(Value::as_str).map(str::to_owned);
        s.mcp.read_only_hint = hint("readOnlyHint");
        s.mcp.destructive_hint = hint("destructiveHint");
        s.mcp.idempotent_hint = hint("idempotentHint");
        s.mcp.open_world_hint = hint("openWorldHint");
        s.mcp.meta = meta;
    });
    let weak = Arc::downgrade(shared);
    let tool_name = name.clone();
    let built = builder.handler(move |input, cx| {
        let weak = weak.clone();
        let tool_name = tool_name.clone();
        let caller = cx.call().mcp.clone();
        async move {
            let shared = weak
                .upgrade()
                .ok_or_else(|| ToolError::new(format!("The MCP provider of `{tool_name}` is gone.")))?;
            call_tool(&shared, &tool_name, input, caller).await
        }
    });
    match built {
        Ok(tool) => Some(tool.into_tool()),
        Err(e) => {
            tracing::warn!(provider = %shared.id, tool = %name, error = %e, "skipping an MCP tool that is not a valid Toolsmith tool");
            None
        }
    }
}

/// Routes a call's progress to its caller while it runs.
struct ProgressRoute<'a> {
    shared: &'a Shared,
    token: ProgressToken,
}

impl Drop for ProgressRoute<'_> {
    fn drop(&mut self) {
        self.shared.progress.lock().unwrap_or_else(|e| e.into_inner()).remove(&self.token);
    }
}

/// Tells the server a `tools/call` is no longer wanted when the call is dropped unanswered
/// (the caller cancelled it, or its timeout ran out).
struct Abandon {
    peer: Peer<RoleClient>,
    id: Option<RequestId>,
}

impl Drop for Abandon {
    fn drop(&mut self) {
        let Some(id) = self.id.take() else { return };
        let peer = self.peer.clone();
        let notification = ClientNotification::CancelledNotification(CancelledNotification::new(CancelledNotificationParam::new(
            Some(id),
            Some("cancelled by the caller".to_owned()),
        )));
        if let Ok(runtime) = tokio::runtime::Handle::try_current() {
            runtime.spawn(async move {
                let _ = peer.send_notification(notification).await;
            });
        }
    }
}

/// `tools/call`: `structuredContent` when present, else the content (text-only → the text).
/// The server's progress reaches `caller` (the MCP client of this call, if any); a call dropped
/// before its answer is cancelled on the server (`notifications/cancelled`).
async fn call_tool(shared: &Shared, name: &str, input: Value, caller: Option<Arc<dyn McpHandle>>) -> Result<Value, ToolError> {
    let peer = current_peer(shared)?;
    let mut params = CallToolRequestParams::new(name.to_owned());
    match input {
        Value::Object(args) => params = params.with_arguments(args),
        Value::Null => {}
        other => return Err(ToolError::new(format!("`{name}` takes a JSON object, not {other}"))),
    }
    let failed = |e: rmcp::ServiceError| ToolError::new(format!("The MCP server `{}` failed to run `{name}`: {e}", shared.id));
    let request = ClientRequest::CallToolRequest(CallToolRequest::new(params));
    let handle = peer
        .send_cancellable_request(request, PeerRequestOptions::no_options())
        .await
        .map_err(failed)?;
    let _route = caller.map(|sink| {
        let token = handle.progress_token.clone();
        shared
            .progress
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .insert(token.clone(), (sink, f64::NEG_INFINITY));
        ProgressRoute { shared, token }
    });
    let mut abandon = Abandon {
        peer: peer.clone(),
        id: Some(handle.id.clone()),
    };
    let response = handle.await_response().await;
    abandon.id = None;
    let result = match response.map_err(failed)? {
        ServerResult::CallToolResult(result) => serde_json::to_value(&result),
        ServerResult::InputRequiredResult(_) => {
            return Err(ToolError::new(format!(
                "The MCP server `{}` asked for input in the middle of `{name}`, which this client does not answer.",
                shared.id
            )))
        }
        // Some servers answer an empty object; read whatever came like a result.
        other => serde_json::to_value(&other),
    }
    .map_err(|e| ToolError::new(e.to_string()))?;
    let content = result.get("content").and_then(Value::as_array).cloned().unwrap_or_default();
    let texts: Option<Vec<&str>> = content
        .iter()
        .map(|b| {
            (b.get("type").and_then(Value::as_str) == Some("text"))
                .then(|| b.get("text").and_then(Value::as_str))
                .flatten()
        })
        .collect();
    let text = texts.filter(|t| !t.is_empty()).map(|t| t.join("\n"));
    if result.get("isError").and_then(Value::as_bool) == Some(true) {
        let message = text.unwrap_or_else(|| format!("The MCP server `{}` reported an error from `{name}`.", shared.id));
        return Err(ToolError::with_details(message, result));
    }
    if let Some(structured) = result.get("structuredContent") {
        return Ok(structured.clone());
    }
    Ok(match text {
        Some(t) => Value::String(t),
        None => Value::Array(content),
    })
}

fn matches_search(tool: &Value, search: &str) -> bool {
    let needle = search.trim().to_lowercase();
    needle.is_empty()
        || ["name", "title", "description"].iter().any(|k| {
            tool.get(*k)
                .and_then(Value::as_str)
                .is_some_and(|s| s.to_lowercase().contains(&needle))
        })
}

impl ToolProvider for McpToolProvider {
    fn info(&self) -> &ProviderInfo {
        &self.info
    }

    fn list_toolkits(&self) -> BoxFuture<'_, Result<ListResult<Toolkit>, ProviderError>> {
        Box::pin(async move {
            self.connected()?;
            let server = self.server_info().unwrap_or(Value::Null);
            let name = server
                .pointer("/serverInfo/title")
                .or_else(|| server.pointer("/serverInfo/name"))
                .and_then(Value::as_str)
                .unwrap_or(&self.info.name)
                .to_owned();
            let description = server.get("instructions").and_then(Value::as_str).map(str::to_owned);
            Ok(ListResult {
                data: vec![Toolkit {
                    slug: self.info.id.clone(),
                    name,
                    description,
                    icon: None,
                }],
                pagination: Some(Pagination {
                    total: Some(1),
                    page: Some(1),
                    per_page: Some(1),
                    has_more: false,
                }),
            })
        })
    }

    fn list_tools(&self, options: ListToolsOptions) -> BoxFuture<'_, Result<ListResult<ToolInfo>, ProviderError>> {
        Box::pin(async move {
            self.connected()?;
            if options.toolkit.as_deref().is_some_and(|t| !t.eq_ignore_ascii_case(&self.info.id)) {
                return Ok(ListResult::empty());
            }
            let all: Vec<ToolInfo> = self
                .tools()
                .iter()
                .filter(|t| options.search.as_deref().is_none_or(|s| matches_search(t, s)))
                .filter_map(|t| {
                    let name = tool_name(t)?.to_owned();
                    Some(ToolInfo {
                        slug: name.clone(),
                        name: text_of(t, "title").unwrap_or(name),
                        description: text_of(t, "description"),
                        toolkit: Some(self.info.id.clone()),
                    })
                })
                .collect();
            let total = all.len();
            let per_page = options.per_page.filter(|p| *p > 0).map(|p| p as usize).unwrap_or(total.max(1));
            let page = options.page.filter(|p| *p > 0).unwrap_or(1) as usize;
            let start = (page - 1).saturating_mul(per_page).min(total);
            let end = start.saturating_add(per_page).min(total);
            Ok(ListResult {
                data: all[start..end].to_vec(),
                pagination: Some(Pagination {
                    total: Some(total as u64),
                    page: Some(page as u32),
                    per_page: Some(per_page as u32),
                    has_more: end < total,
                }),
            })
        })
    }

    fn get_tool_schema(&self, slug: &str) -> BoxFuture<'_, Result<Option<Value>, ProviderError>> {
        let slug = slug.to_owned();
        Box::pin(async move {
            self.connected()?;
            Ok(self.tools().into_iter().find(|t| tool_name(t) == Some(slug.as_str())).map(|t| {
                t.get("inputSchema")
                    .cloned()
                    .unwrap_or_else(|| serde_json::json!({"type": "object"}))
            }))
        })
    }

    fn resolve_tools(&self, slugs: Vec<String>, options: ResolveOptions) -> BoxFuture<'_, Result<ResolvedTools, ProviderError>> {
        let _ = options;
        Box::pin(async move {
            self.connected()?;
            let tools = self.tools();
            let mut out = ResolvedTools::new();
            for slug in slugs {
                let Some(def) = tools.iter().find(|t| tool_name(t) == Some(slug.as_str())) else {
                    continue;
                };
                if let Some(tool) = build_tool(&self.shared, def) {
                    out.insert(slug, tool);
                }
            }
            Ok(out)
        })
    }

    fn get_health(&self) -> BoxFuture<'_, Result<Health, ProviderError>> {
        Box::pin(async move {
            let peer = self.shared.peer.read().unwrap_or_else(|e| e.into_inner()).clone();
            let ok = peer.as_ref().is_some_and(|p| !p.is_transport_closed());
            Ok(Health {
                ok,
                message: (!ok).then(|| "not connected".to_owned()),
                details: Some(serde_json::json!({"tools": self.tools().len()})),
            })
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn search_matches_name_title_and_description_without_case() {
        let t = json!({"name": "convert-units", "description": "Convert an amount between units"});
        assert!(matches_search(&t, "CONVERT") && matches_search(&t, "amount") && !matches_search(&t, "weather"));
    }

    #[test]
    fn debug_hides_the_bearer_token() {
        let p = McpToolProvider::http("remote", "http://127.0.0.1:1/mcp").bearer_token("sk-secret-canary");
        let shown = format!("{p:?}");
        assert!(!shown.contains("sk-secret-canary") && shown.contains("redacted"), "{shown}");
    }

    #[test]
    fn debug_counts_root_certificates_without_showing_them() {
        let p = McpToolProvider::http("remote", "https://localhost:1/mcp")
            .root_certificate_pem("-----BEGIN CERTIFICATE-----\nQ0FOQVJZ\n-----END CERTIFICATE-----\n")
            .connect_timeout(Duration::from_secs(3));
        let shown = format!("{p:?}");
        assert!(shown.contains("extra_root_certificates: 1") && shown.contains("3s"), "{shown}");
        assert!(!shown.contains("Q0FOQVJZ"), "{shown}");
    }

    #[test]
    fn a_plain_http_client_needs_no_roots_and_no_global_provider() {
        http_client(
            "plain",
            "http://127.0.0.1:1/mcp",
            &[],
            DEFAULT_CONNECT_TIMEOUT,
            DEFAULT_IDLE_CONNECTIONS,
        )
        .unwrap();
        let empty_pem: [Vec<u8>; 1] = [Vec::new()];
        match http_client(
            "plain",
            "http://127.0.0.1:1/mcp",
            &empty_pem,
            DEFAULT_CONNECT_TIMEOUT,
            DEFAULT_IDLE_CONNECTIONS,
        ) {
            Err(ProviderError::Config(m)) => assert!(m.contains("`plain`") && m.contains("#1"), "{m}"),
            other => panic!("{other:?}"),
        }
    }

    #[test]
    fn unusable_names_are_skipped() {
        let p = McpToolProvider::stdio("s", "true", Vec::<String>::new());
        assert!(build_tool(&p.shared, &json!({"name": "has space", "inputSchema": {"type": "object"}})).is_none());
        let ok = build_tool(
            &p.shared,
            &json!({"name": "ok.tool", "inputSchema": {"type": "object"}, "annotations": {"readOnlyHint": true}, "_meta": {"k": 1}}),
        )
        .unwrap();
        assert_eq!(ok.spec().mcp.read_only_hint, Some(true));
        assert_eq!(ok.spec().mcp.meta, Some(json!({"k": 1})));
    }
}
