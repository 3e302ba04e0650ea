//! The live session with one MCP server: the state the provider, its notification handler
//! and its tools' handlers share ([`Shared`]), the server's tool list (read page by page,
//! bounded, kept as `rmcp`'s typed [`Tool`]s), the registry mirrored on `list_changed`, and
//! the routing of each running call's progress to its caller.
//!
//! Owns the session's state. Must not build the HTTP client (`tls`) nor run calls (`tools`).

use std::collections::{BTreeMap, BTreeSet, HashMap};
use std::sync::{Arc, Mutex, RwLock, Weak};

use rmcp::ClientHandler;
use rmcp::model::{
    ClientConfig, ElicitRequestParams, ElicitResult, ElicitationCapability, ErrorData, FormElicitationCapability, Implementation,
    PaginatedRequestParams, ProgressNotificationParam, ProtocolVersion, RequestId, ServerNotification, SubscriptionFilter, Tool,
};
use rmcp::service::{
    ClientInitializeError, ClientLifecycleMode, ClientServiceExt, InboundStreamOrigin, NotificationContext, Peer, RequestContext,
    RoleClient, RunningService,
};
use rmcp::transport::StreamableHttpClientTransport;
use rmcp::transport::streamable_http_client::{StreamableHttpClient, StreamableHttpClientTransportConfig};
use tool_core::context::McpHandle;
use tool_core::pins::{self, PinStore};
use tool_core::provider::ProviderError;
use tool_core::{Registry, ToolError};

use super::tools::build_tool;
use super::{MAX_PAGES, PIN_PROVIDER};

/// A synced registry and the definitions of the tools this provider put there.
type Synced = (Arc<Registry>, BTreeMap<String, Tool>);

/// State shared by the provider, its notification handler and its tools' handlers.
pub(super) struct Shared {
    pub(super) id: String,
    /// Put before each server tool's name to make its Toolsmith id.
    pub(super) prefix: String,
    pub(super) peer: RwLock<Option<Peer<RoleClient>>>,
    /// The server's tools, in server order.
    pub(super) tools: RwLock<Vec<Tool>>,
    /// Where list changes are mirrored, and the definitions of the tools put there.
    pub(super) sync: Mutex<Option<Synced>>,
    /// Where this server's tools are pinned, when they are (`pins`).
    pub(super) pins: Option<Arc<dyn PinStore>>,
    /// Where this server's tools sit for tool search (their namespace: the provider's id).
    pub(super) placement: crate::placement::ImportPlacement,
    /// Serialises refreshes.
    refreshing: tokio::sync::Mutex<()>,
    /// Where the progress of each running call goes (the MCP client of the call, when it came
    /// from one), by the progress token of its `tools/call`.
    pub(super) progress: Mutex<super::progress::ProgressRoutes>,
    /// The requests of running calls, by JSON-RPC id, each with the MCP client of its call
    /// (when it came from one): a question the server sends during a call goes there (`ask`).
    pub(super) calls: Mutex<HashMap<RequestId, Option<Arc<dyn McpHandle>>>>,
    /// Woken when a call enters `calls`: a question can come before its call's entry does.
    pub(super) call_started: tokio::sync::Notify,
    /// What the user must do before a refused request can pass (an OAuth session's step-up or
    /// new authorization server): said in the errors of calls and listings.
    pub(super) login_note: super::oauth::LoginNote,
}

impl Shared {
    pub(super) fn new(id: String) -> Self {
        Shared {
            id,
            prefix: String::new(),
            peer: RwLock::new(None),
            tools: RwLock::new(Vec::new()),
            sync: Mutex::new(None),
            pins: None,
            placement: Default::default(),
            refreshing: tokio::sync::Mutex::new(()),
            progress: Mutex::default(),
            calls: Mutex::default(),
            call_started: tokio::sync::Notify::new(),
            login_note: super::oauth::LoginNote::default(),
        }
    }

    /// `"; "` and what the user must do before a refused request can pass, when the session
    /// noted something (see `login_note`); else nothing.
    pub(super) fn login_note(&self) -> String {
        self.login_note.note().map(|n| format!("; {n}")).unwrap_or_default()
    }

    /// The connected peer, if any.
    pub(super) fn peer(&self) -> Option<Peer<RoleClient>> {
        self.peer.read().unwrap_or_else(|e| e.into_inner()).clone()
    }

    /// The connected peer, or the model-readable error saying the server is not connected.
    pub(super) fn current_peer(&self) -> Result<Peer<RoleClient>, ToolError> {
        self.peer()
            .ok_or_else(|| ToolError::new(format!("The MCP server `{}` is not connected.", self.id)))
    }

    /// The cached tools.
    pub(super) fn tools(&self) -> Vec<Tool> {
        self.tools.read().unwrap_or_else(|e| e.into_inner()).clone()
    }

    /// The MCP client of the running call a question of the server came with: the call whose
    /// response stream carried it (Streamable HTTP), else the only call running (stdio cannot
    /// tell), else no one.
    ///
    /// A question can arrive before its call's entry: the request is sent before the entry can
    /// be made (rmcp chooses its id as it sends it). A question naming a request with no entry
    /// yet waits for it, up to [`QUESTION_WAIT`].
    async fn caller_of(&self, origin: Option<&InboundStreamOrigin>) -> Option<Arc<dyn McpHandle>> {
        if let Some(InboundStreamOrigin::OutboundRequest(id)) = origin {
            let deadline = tokio::time::Instant::now() + QUESTION_WAIT;
            loop {
                let started = self.call_started.notified();
                tokio::pin!(started);
                started.as_mut().enable();
                if let Some(caller) = self.calls.lock().unwrap_or_else(|e| e.into_inner()).get(id) {
                    return caller.clone();
                }
                if tokio::time::timeout_at(deadline, started).await.is_err() {
                    return None;
                }
            }
        }
        let calls = self.calls.lock().unwrap_or_else(|e| e.into_inner());
        match origin {
            Some(InboundStreamOrigin::Unassociated | InboundStreamOrigin::OutboundRequest(_)) => None,
            None if calls.len() == 1 => calls.values().next().cloned().flatten(),
            None => None,
        }
    }
}

/// How long a question of the server waits for the entry of the call it came with.
const QUESTION_WAIT: std::time::Duration = std::time::Duration::from_secs(2);

/// How a session starts first: `server/discover` at 2026-07-28 (stateless requests, each with
/// its own `_meta` and the standard headers); a server that answers it with an error (e.g. that
/// it does not know the method), or not within 10 s, gets `initialize` at 2025-11-25 on the
/// same connection (`rmcp`'s fallback).
fn lifecycle() -> ClientLifecycleMode {
    ClientLifecycleMode::Auto {
        preferred_versions: vec![ProtocolVersion::V_2026_07_28],
        legacy_version: Some(ProtocolVersion::LATEST_WITH_INITIALIZE),
    }
}

/// Starts a Streamable HTTP session: at 2026-07-28 when the server offers it, else (it
/// rejected `server/discover` in any other way than an authorization challenge, e.g. answered
/// it with an empty result or an HTTP error) over a fresh connection with `initialize` at
/// 2025-11-25.
pub(super) async fn start<C>(
    handler: Notifier,
    client: C,
    config: StreamableHttpClientTransportConfig,
) -> Result<RunningService<RoleClient, Notifier>, ClientInitializeError>
where
    C: StreamableHttpClient + Clone + Send + Sync + 'static,
{
    let modern = StreamableHttpClientTransport::with_client(client.clone(), config.clone());
    match handler.clone().serve_with_lifecycle(modern, lifecycle()).await {
        Err(e) if e.auth_challenge().is_none() && !matches!(e, ClientInitializeError::Cancelled) => {
            tracing::debug!(error = %e, "no MCP 2026-07-28 session; starting one with `initialize`");
            let legacy = StreamableHttpClientTransport::with_client(client, config);
            handler.serve_with_lifecycle(legacy, ClientLifecycleMode::Initialize).await
        }
        started => started,
    }
}

/// Starts a session with the process `spawn` starts (stdio), as [`start`] does over HTTP: at
/// 2026-07-28 when the server offers it (`rmcp`'s fallback to `initialize` on the same pipe when
/// it answers `server/discover` with an error), else — the process ended or answered in a way
/// that is neither (e.g. not at all) — with a process started again and `initialize` at
/// 2025-11-25.
pub(super) async fn start_stdio<T>(
    handler: Notifier,
    spawn: impl Fn() -> Result<T, ProviderError>,
) -> Result<RunningService<RoleClient, Notifier>, ProviderError>
where
    T: rmcp::transport::Transport<RoleClient> + Send + 'static,
{
    let id = handler.0.upgrade().map(|s| s.id.clone()).unwrap_or_default();
    match handler.clone().serve_with_lifecycle(spawn()?, lifecycle()).await {
        Err(e) if !matches!(e, ClientInitializeError::Cancelled) => {
            tracing::debug!(provider = %id, error = %e, "no MCP 2026-07-28 session over stdio; starting the server again with `initialize`");
            handler
                .serve_with_lifecycle(spawn()?, ClientLifecycleMode::Initialize)
                .await
                .map_err(|e| transport_error(&id, &e).caused_by(e))
        }
        started => started.map_err(|e| transport_error(&id, &e).caused_by(e)),
    }
}

/// A [`ProviderError::Transport`] of the server `id` saying `message` (its cause, if any, added
/// with [`ProviderError::caused_by`]).
pub(super) fn transport_error(id: &str, message: impl std::fmt::Display) -> ProviderError {
    ProviderError::transport(id, message.to_string())
}

/// Hears the server's notifications and answers its questions.
#[derive(Clone)]
pub(super) struct Notifier(pub(super) Weak<Shared>);

impl ClientHandler for Notifier {
    /// Toolsmith as the client: it can answer a server's form questions (`ask`).
    fn get_info(&self) -> ClientConfig {
        let mut info = ClientConfig::default();
        // What `initialize` offers (2026-07-28 is reached through `server/discover`).
        info.protocol_version = ProtocolVersion::LATEST_WITH_INITIALIZE;
        info.client_info = Implementation::new("toolsmith", env!("CARGO_PKG_VERSION"));
        let mut elicitation = ElicitationCapability::new();
        elicitation.form = Some(FormElicitationCapability::new());
        info.capabilities.elicitation = Some(elicitation);
        info
    }

    async fn create_elicitation(
        &self,
        request: ElicitRequestParams,
        context: RequestContext<RoleClient>,
    ) -> Result<ElicitResult, ErrorData> {
        let Some(shared) = self.0.upgrade() else {
            return Ok(super::ask::without_anyone(&request));
        };
        let caller = shared.caller_of(context.extensions.get::<InboundStreamOrigin>()).await;
        super::ask::elicit(&shared.id, caller.as_ref(), request)
            .await
            .map_err(|e| ErrorData::internal_error(e.message().to_owned(), None))
    }

    async fn on_progress(&self, params: ProgressNotificationParam, _context: NotificationContext<RoleClient>) {
        let Some(shared) = self.0.upgrade() else { return };
        shared.progress.lock().unwrap_or_else(|e| e.into_inner()).report(params);
    }

    async fn on_tool_list_changed(&self, context: NotificationContext<RoleClient>) {
        if let Some(shared) = self.0.upgrade()
            && let Err(e) = refresh(&shared, &context.peer).await
        {
            tracing::warn!(provider = %shared.id, error = %e, "refreshing the MCP tool list after list_changed failed");
        }
    }
}

/// At 2026-07-28 a server sends `notifications/tools/list_changed` only on a
/// `subscriptions/listen` stream the client opened (there is no session to send it on): with a
/// server that says its tool list changes, open one for the tool list and refresh on each
/// notification, as [`Notifier::on_tool_list_changed`] does for a session of an earlier
/// revision. The stream ends with the session.
pub(super) fn listen_for_tool_changes(shared: Weak<Shared>, peer: &Peer<RoleClient>) {
    let Some(info) = peer.peer_info() else { return };
    let changes = info.capabilities.tools.as_ref().and_then(|t| t.list_changed) == Some(true);
    if info.protocol_version != ProtocolVersion::V_2026_07_28 || !changes {
        return;
    }
    let peer = peer.clone();
    tokio::spawn(async move {
        let filter = SubscriptionFilter::builder().tools_list_changed().build();
        let mut subscription = match peer.listen(filter).await {
            Ok(subscription) => subscription,
            Err(e) => {
                let id = shared.upgrade().map(|s| s.id.clone()).unwrap_or_default();
                tracing::warn!(provider = %id, error = %e, "cannot listen for tool list changes: the imported tools are read again only on a reconnect");
                return;
            }
        };
        while let Ok(Some(notification)) = subscription.next().await {
            if !matches!(notification, ServerNotification::ToolListChangedNotification(_)) {
                continue;
            }
            let Some(shared) = shared.upgrade() else { return };
            if let Err(e) = refresh(&shared, &peer).await {
                tracing::warn!(provider = %shared.id, error = %e, "refreshing the MCP tool list after list_changed failed");
            }
        }
    });
}

/// Reads every page of `tools/list` (bounded) and updates the cache and the synced registry.
pub(super) async fn refresh(shared: &Arc<Shared>, peer: &Peer<RoleClient>) -> Result<(), ProviderError> {
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
            .map_err(|e| transport_error(&shared.id, format!("tools/list failed: {e}{}", shared.login_note())).caused_by(e))?;
        tools.extend(result.tools);
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
    if let Some(store) = &shared.pins {
        // The first listing pins each tool; a later one that differs is recorded for review.
        let built: Vec<_> = tools.iter().filter_map(|def| build_tool(shared, def)).collect();
        pins::pin_all(&**store, PIN_PROVIDER, &shared.id, &built)
            .await
            .map_err(|e| transport_error(&shared.id, &e).caused_by(e))?;
    }
    Ok(())
}

/// Brings the synced registry (if any) in line with `tools`.
fn sync_registry(shared: &Arc<Shared>, tools: &[Tool]) {
    let mut sync = shared.sync.lock().unwrap_or_else(|e| e.into_inner());
    let Some((registry, owned)) = sync.as_mut() else { return };
    let current: BTreeMap<&str, &Tool> = tools.iter().map(|t| (t.name.as_ref(), t)).collect();
    owned.retain(|name, def| {
        let keep = current.get(name.as_str()).is_some_and(|now| *now == def);
        if !keep {
            registry.remove(&format!("{}{name}", shared.prefix));
        }
        keep
    });
    for (name, def) in current {
        if owned.contains_key(name) {
            continue;
        }
        let Some(tool) = build_tool(shared, def) else { continue };
        match registry.insert(tool) {
            Ok(()) => {
                owned.insert(name.to_owned(), def.clone());
            }
            Err(e) => tracing::warn!(provider = %shared.id, tool = %name, error = %e, "the MCP tool was not added to the registry"),
        }
    }
}
