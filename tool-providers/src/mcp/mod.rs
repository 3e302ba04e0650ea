//! Any MCP server as a tool provider: [`McpToolProvider`].
//!
//! An `rmcp` client over a child process's stdio ([`McpToolProvider::stdio`]) or Streamable
//! HTTP ([`McpToolProvider::http`], `http://` or `https://`, with an optional bearer token, extra
//! trusted root certificates and a connect timeout). The server is one toolkit
//! whose slug is the provider id; its tools come from `tools/list` (following `nextCursor`,
//! bounded), keep their names, schemas, annotations and `_meta`, and run through `tools/call`.
//! A `notifications/tools/list_changed` refreshes the cached list and, with
//! [`McpToolProvider::sync_into`], removes and adds the tools in a [`Registry`]. `rmcp`'s typed
//! results are kept up to the tool boundary, where a call's content becomes the value the
//! application receives and the content parts the model sees: text, images, audio, resource
//! links and embedded resources alike.
//!
//! This module owns the provider, its settings and its [`ToolProvider`] surface; `session`
//! the live session (tool list, synced registry), `progress` where each call's progress goes,
//! `tools` one remote call,
//! `content` a result's mapping onto our output, and `tls` the HTTP client.
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

use std::collections::BTreeMap;
use std::sync::Arc;
use std::time::Duration;

use rmcp::model::ServerPeerInfo;
use rmcp::service::{RoleClient, RunningService};
use rmcp::transport::TokioChildProcess;
use rmcp::transport::streamable_http_client::StreamableHttpClientTransportConfig;
use serde_json::Value;
use tool_core::Registry;
use tool_core::credentials::CredentialStore;
use tool_core::pins::PinStore;
use tool_core::provider::{
    Health, ListResult, ListToolsOptions, Pagination, ProviderError, ProviderInfo, ResolveOptions, ResolvedTools, ToolInfo, ToolProvider,
    Toolkit,
};
use tool_core::tool::BoxFuture;

use session::{Notifier, Shared, refresh, transport_error};
use tools::build_tool;

mod ask;
mod content;
pub mod oauth;
mod progress;
mod session;
mod tls;
mod tools;

/// At most this many `tools/list` pages are read (a server whose cursor never ends is cut off).
pub const MAX_PAGES: usize = 100;

/// The default of [`McpToolProvider::connect_timeout`].
pub const DEFAULT_CONNECT_TIMEOUT: Duration = Duration::from_secs(30);

/// The default of [`McpToolProvider::pool_max_idle_per_host`].
pub const DEFAULT_IDLE_CONNECTIONS: usize = 8;

/// The provider name MCP servers' tools are pinned under ([`McpToolProvider::pin_in`]).
pub const PIN_PROVIDER: &str = "mcp";

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
        /// Where an OAuth login for this server may be stored, and the command that logs in.
        oauth: Option<(Arc<dyn CredentialStore>, String)>,
        /// How a login that needs the user is run during the import, when a person asked.
        interactive: Option<oauth::InteractiveLogin>,
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
                oauth,
                interactive,
            } => f
                .debug_struct("Http")
                .field("url", url)
                .field("bearer", &bearer.as_ref().map(|_| "<redacted>"))
                .field("extra_root_certificates", &root_pems.len())
                .field("connect_timeout", connect_timeout)
                .field("pool_max_idle_per_host", idle_connections)
                .field("oauth", &oauth.as_ref().map(|(store, _)| store))
                .field("interactive", interactive)
                .finish(),
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
            shared: Arc::new(Shared::new(id)),
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
                oauth: None,
                interactive: None,
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

    /// Uses the OAuth login stored in `store` under this provider's id ([`oauth::login`],
    /// `toolsmith mcp login ID URL`), when there is one for this URL: its access token is sent,
    /// refreshed before it expires (a machine client fetches a new one), and a login that can no
    /// longer be refreshed fails [`connect`](Self::connect) with an error naming `login_command`
    /// (the command that logs in again). Without a stored login the server is reached without a
    /// token (or with [`bearer_token`](Self::bearer_token)'s). HTTP only.
    pub fn oauth(mut self, store: Arc<dyn CredentialStore>, login_command: impl Into<String>) -> Self {
        if let Endpoint::Http { oauth, .. } = &mut self.endpoint {
            *oauth = Some((store, login_command.into()));
        }
        self
    }

    /// Runs a login that only the user can renew (a step-up, a new authorization server, a
    /// token that can no longer be refreshed, no login yet) during the import, as `how` says,
    /// and sends the refused request again, once, instead of failing naming `login_command`
    /// (see [`oauth::InteractiveLogin`]: for a person at the keyboard who asked for it, never
    /// by default). Needs [`oauth`](Self::oauth). HTTP only.
    pub fn interactive_login(mut self, how: oauth::InteractiveLogin) -> Self {
        if let Endpoint::Http { interactive, .. } = &mut self.endpoint {
            *interactive = Some(how);
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

    /// Defers every tool of this server: it is left out of a request's tool list until the
    /// model finds it with tool search (a catalog may still override it). Set it before
    /// [`connect`](Self::connect); later it is ignored.
    pub fn defer_loading(mut self) -> Self {
        match Arc::get_mut(&mut self.shared) {
            Some(shared) => shared.placement.defer = true,
            None => tracing::warn!(provider = %self.info.id, "defer_loading after connect is ignored"),
        }
        self
    }

    /// Puts every tool of this server in a namespace named after the provider's id (`github`;
    /// lower-cased, characters outside `a-z 0-9 _ -` as `_`), listed and searched under it. Set
    /// it before [`connect`](Self::connect); later it is ignored.
    pub fn namespace_by_server(mut self) -> Self {
        match Arc::get_mut(&mut self.shared) {
            Some(shared) => shared.placement.by_group = true,
            None => tracing::warn!(provider = %self.info.id, "namespace_by_server after connect is ignored"),
        }
        self
    }

    /// Pins this server's tools in `store` (provider `mcp`, connection: this provider's id):
    /// the first listing pins each tool's definition, and a tool whose definition later
    /// differs is not called until the change is accepted (`toolsmith pins accept`,
    /// [`tool_core::pins::accept`]). Set it before [`connect`](Self::connect); later
    /// it is ignored.
    pub fn pin_in(mut self, store: Arc<dyn PinStore>) -> Self {
        match Arc::get_mut(&mut self.shared) {
            Some(shared) => shared.pins = Some(store),
            None => tracing::warn!(provider = %self.info.id, "pin_in after connect is ignored"),
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
                let spawn = || {
                    let mut cmd = tokio::process::Command::new(command);
                    cmd.args(args);
                    TokioChildProcess::new(cmd).map_err(|e| transport_error(id, format!("could not start `{command}`: {e}")).caused_by(e))
                };
                session::start_stdio(handler, spawn).await?
            }
            Endpoint::Http { .. } => self.connect_http(handler).await?,
        };
        let peer = running.peer().clone();
        *self.shared.peer.write().unwrap_or_else(|e| e.into_inner()) = Some(peer.clone());
        *service = Some(running);
        drop(service);
        session::listen_for_tool_changes(Arc::downgrade(&self.shared), &peer);
        refresh(&self.shared, &peer).await
    }

    /// Opens the Streamable HTTP session, with the stored OAuth login when there is one.
    async fn connect_http(&self, handler: Notifier) -> Result<RunningService<RoleClient, Notifier>, ProviderError> {
        let Endpoint::Http {
            url,
            bearer,
            root_pems,
            connect_timeout,
            idle_connections,
            oauth,
            interactive,
        } = &self.endpoint
        else {
            return Err(ProviderError::Config(format!(
                "the MCP provider `{}` is not an HTTP endpoint",
                self.info.id
            )));
        };
        let id = &self.info.id;
        let client = tls::http_client(id, url, root_pems, *connect_timeout, *idle_connections)?;
        let login = oauth.as_ref().map(|(_, login)| login.as_str());
        let failed = |e: rmcp::service::ClientInitializeError| {
            // A note of the session (a new authorization server) says more than the 401.
            let said = match self.shared.login_note.note() {
                Some(note) => note,
                None => tls::initialize_error(&e, login),
            };
            transport_error(id, said).caused_by(e)
        };
        let timed_out = || {
            transport_error(
                id,
                format!("no MCP session with {url} within {connect_timeout:?} (see `connect_timeout`)"),
            )
        };
        // With an interactive login, a start refused for want of the user's login runs it and
        // starts again, once.
        let mut logged_in = false;
        loop {
            let mut config = StreamableHttpClientTransportConfig::with_uri(url.as_str());
            let authorized = match oauth {
                Some((store, login)) => {
                    let http = tls::oauth_clients(id, url, root_pems, *connect_timeout)?;
                    let renewal = oauth::Renewal {
                        login,
                        note: self.shared.login_note.clone(),
                        interactive: interactive.clone(),
                    };
                    match oauth::authorized(id, url, store.clone(), http, client.clone(), renewal).await {
                        Ok(authorized) => authorized,
                        Err(e) if e.needs_the_user() && !logged_in && interactive.is_some() => {
                            if let Err(login) = self.log_in(store, &[]).await {
                                tracing::warn!(provider = %id, error = %login, "the interactive login failed");
                                return Err(transport_error(id, &e).caused_by(e));
                            }
                            logged_in = true;
                            continue;
                        }
                        Err(e) => return Err(transport_error(id, &e).caused_by(e)),
                    }
                }
                None => None,
            };
            if authorized.is_none()
                && let Some(token) = bearer
            {
                config = config.auth_header(token.as_str());
            }
            let unauthorized = authorized.is_none();
            let started = match authorized {
                Some(auth) => tokio::time::timeout(*connect_timeout, session::start(handler.clone(), auth, config)).await,
                None => tokio::time::timeout(*connect_timeout, session::start(handler.clone(), client.clone(), config)).await,
            };
            return match started {
                Ok(Err(e)) if unauthorized && e.auth_challenge().is_some() && !logged_in && interactive.is_some() => {
                    let Some((store, _)) = oauth else { return Err(failed(e)) };
                    if let Err(login) = self.log_in(store, &[]).await {
                        tracing::warn!(provider = %id, error = %login, "the interactive login failed");
                        return Err(failed(e));
                    }
                    logged_in = true;
                    continue;
                }
                Ok(running) => running.map_err(failed),
                Err(_) => Err(timed_out()),
            };
        }
    }

    /// Runs the interactive login of this import (see [`interactive_login`](Self::interactive_login)).
    async fn log_in(&self, store: &Arc<dyn CredentialStore>, scopes: &[String]) -> Result<oauth::Logged, oauth::OAuthError> {
        let Endpoint::Http {
            url,
            interactive: Some(how),
            ..
        } = &self.endpoint
        else {
            return Err(oauth::OAuthError::Login("no interactive login was asked for".into()));
        };
        how.run(&self.info.id, url, store.clone(), scopes.to_vec()).await
    }

    /// Reads the tool list again (a `list_changed` notification does this by itself).
    pub async fn refresh(&self) -> Result<(), ProviderError> {
        let peer = self
            .shared
            .current_peer()
            .map_err(|e| ProviderError::Config(e.message().to_owned()))?;
        refresh(&self.shared, &peer).await
    }

    /// The server's `initialize` answer (name, version, capabilities, instructions).
    pub fn server_info(&self) -> Option<Arc<ServerPeerInfo>> {
        self.shared.peer()?.peer_info()
    }

    /// The cached tools, as the server listed them.
    pub fn tools(&self) -> Vec<rmcp::model::Tool> {
        self.shared.tools()
    }

    /// Ends the session (and the child process).
    pub async fn close(&self) {
        *self.shared.peer.write().unwrap_or_else(|e| e.into_inner()) = None;
        if let Some(running) = self.service.lock().await.take() {
            let _ = running.cancel().await;
        }
    }

    fn connected(&self) -> Result<(), ProviderError> {
        if self.shared.peer().is_some() {
            Ok(())
        } else {
            Err(ProviderError::Config(format!(
                "the MCP provider `{}` is not connected: call `connect().await` first",
                self.info.id
            )))
        }
    }
}

/// Whether a listed tool's name, title or description contains `search` (without case).
fn matches_search(tool: &rmcp::model::Tool, search: &str) -> bool {
    let needle = search.trim().to_lowercase();
    let has = |s: Option<&str>| s.is_some_and(|s| s.to_lowercase().contains(&needle));
    needle.is_empty() || has(Some(&tool.name)) || has(tool.title.as_deref()) || has(tool.description.as_deref())
}

/// A listed tool as a listing shows it.
fn tool_info(tool: &rmcp::model::Tool, toolkit: &str) -> ToolInfo {
    let text = |s: Option<&str>| s.filter(|s| !s.trim().is_empty()).map(str::to_owned);
    ToolInfo {
        slug: tool.name.to_string(),
        name: text(tool.title.as_deref()).unwrap_or_else(|| tool.name.to_string()),
        description: text(tool.description.as_deref()),
        toolkit: Some(toolkit.to_owned()),
    }
}

impl ToolProvider for McpToolProvider {
    fn info(&self) -> &ProviderInfo {
        &self.info
    }

    fn list_toolkits(&self) -> BoxFuture<'_, Result<ListResult<Toolkit>, ProviderError>> {
        Box::pin(async move {
            self.connected()?;
            let server = self.server_info();
            let implementation = server.as_ref().and_then(|s| s.server_info.as_ref());
            let name = implementation
                .and_then(|i| i.title.clone())
                .or_else(|| implementation.map(|i| i.name.clone()))
                .unwrap_or_else(|| self.info.name.clone());
            let description = server.as_ref().and_then(|s| s.instructions.clone());
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
                .map(|t| tool_info(t, &self.info.id))
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
            let tools = self.tools();
            let tool = tools.iter().find(|t| t.name == slug.as_str());
            Ok(tool.map(|t| Value::Object((*t.input_schema).clone())))
        })
    }

    fn resolve_tools(&self, slugs: Vec<String>, options: ResolveOptions) -> BoxFuture<'_, Result<ResolvedTools, ProviderError>> {
        let _ = options;
        Box::pin(async move {
            self.connected()?;
            let tools = self.tools();
            let mut out = ResolvedTools::new();
            for slug in slugs {
                let Some(def) = tools.iter().find(|t| t.name == slug.as_str()) else {
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
            let ok = self.shared.peer().is_some_and(|p| !p.is_transport_closed());
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
        let t: rmcp::model::Tool = serde_json::from_value(
            json!({"name": "convert-units", "description": "Convert an amount between units", "inputSchema": {"type": "object"}}),
        )
        .unwrap();
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
}
