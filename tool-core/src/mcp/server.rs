//! The server value: its configuration and the state every session of it shares.
//!
//! Owns [`McpConfig`], [`McpServer`] (construction, the runtime and registry it serves),
//! [`NoExtras`] and the state shared across sessions. It does not answer requests (that is the
//! handler in `mod.rs` and the modules it hands off to), and it does not decide what a session,
//! a listing or a parked call holds: those are `session`'s, `listing`'s and `parked`'s.

use std::sync::{Arc, Mutex, OnceLock};

use rmcp::ServerHandler;
use rmcp::model::ProtocolVersion;
use rmcp::service::{RequestContext, RoleServer};
use serde_json::Value;

use super::listing::ListingCache;
use super::parked::Parking;
use super::relay::Relay;
use super::results::{MemoryResults, ResultLimits, ResultStore};
use super::session::Session;
use crate::registry::Registry;
use crate::runtime::{Bus, MemoryBus, Runtime};

/// How a server presents itself and what it allows.
#[derive(Debug, Clone)]
pub struct McpConfig {
    /// The server's name in `initialize`.
    pub name: String,
    /// The server's version in `initialize`.
    pub version: String,
    /// Instructions for the client's model.
    pub instructions: Option<String>,
    /// Tools per `tools/list` page (default 100).
    pub page_size: usize,
    /// Calls that may run at once per session (default 16); past it a call is refused with an
    /// error result saying so. A request without a session (stateless HTTP, every 2026-07-28
    /// request) is a session of its own, so this bounds nothing across requests there.
    pub max_concurrent_calls: usize,
    /// The request context every call gets (MCP has none of its own).
    pub context: Option<Value>,
    /// How long a call whose tool asked the client something mid-call waits for the client to
    /// call again with the answer (2026-07-28; default 10 minutes). Past it the tool's question
    /// fails and the call's slot is freed.
    pub input_timeout: std::time::Duration,
    /// How many full results of calls whose model view was cut (see [`crate::budget`]) are kept
    /// for their sessions to read as `toolsmith://results/<call-id>`, and for how long.
    pub kept_results: ResultLimits,
    /// `tools/list` shows a caller with an [`Caller`](crate::Caller) (an authorized HTTP
    /// request) only the tools whose scopes its token grants (default: every tool is listed,
    /// and calling one without its scopes is refused).
    pub hide_unauthorized_tools: bool,
    /// The caching hints of `tools/list` results on 2026-07-28 (`ttlMs`, `cacheScope`).
    pub list_caching: super::ListCaching,
    /// Tool search (default off): `tools/list` shows the tools loaded up front and a
    /// `search_tools` tool instead of the deferred ones (`#[tool(defer_loading)]`); a search
    /// loads the tools it finds for the session (which hears `list_changed`), or, for a request
    /// without a session, for the requests that name them in `_meta` under
    /// [`LOADED_META`](super::LOADED_META). A deferred tool not loaded is refused, saying to
    /// search first; a loaded one is called as any listed tool is.
    pub tool_search: bool,
    /// Which tools tool search defers (default: each tool's own `defer_loading`); a catalog's
    /// rule ([`Catalog::deferral`](crate::catalog::Catalog::deferral)) serves the same tools
    /// the same way here. Read only with `tool_search`.
    pub deferral: crate::catalog::Deferral,
}

impl Default for McpConfig {
    fn default() -> Self {
        McpConfig {
            name: "toolsmith".into(),
            version: env!("CARGO_PKG_VERSION").into(),
            instructions: None,
            page_size: 100,
            max_concurrent_calls: 16,
            context: None,
            input_timeout: std::time::Duration::from_secs(600),
            kept_results: ResultLimits::default(),
            hide_unauthorized_tools: false,
            list_caching: super::ListCaching::default(),
            tool_search: false,
            deferral: crate::catalog::Deferral::default(),
        }
    }
}

/// What every session of one server shares.
pub(super) struct Shared {
    pub(super) runtime: Runtime,
    pub(super) config: McpConfig,
    pub(super) listing: Mutex<ListingCache>,
    /// Calls whose tool asked the client mid-call (2026-07-28), by the request state the
    /// client brings back with the answer.
    pub(super) parked: Parking,
    /// Full results of cut calls, for `resources/read`.
    pub(super) results: Arc<dyn ResultStore>,
    /// The bus of the instances sharing the runtime's store (this process's own when it
    /// shares none), and whether it is a shared one.
    pub(super) bus: Arc<dyn Bus>,
    pub(super) shares_store: bool,
    /// Tool search's index and the search tool's entry.
    pub(super) search: super::tool_search::SearchState,
    /// The task relaying parked answers and tool changes between instances (`relay`).
    pub(super) relay: OnceLock<Relay>,
    /// Counts tool changes other instances announced (their clients' `list_changed`).
    pub(super) remote_changes: tokio::sync::watch::Sender<u64>,
    /// The change counts (this registry's, other instances') when `subscriptions/listen`
    /// requests were accepted, oldest first; see [`Shared::note_listen`].
    listen_seen: Mutex<std::collections::VecDeque<(u64, u64)>>,
}

/// At most this many accepted listens wait for their stream (older ones are forgotten).
const LISTENS_PENDING: usize = 1024;

impl Shared {
    /// Notes the change counts as a `subscriptions/listen` is accepted. rmcp acknowledges the
    /// subscription before its stream starts; a change in between must not be lost, so the
    /// stream starts from counts taken before the acknowledgment (see [`Shared::listen_from`]).
    pub(super) fn note_listen(&self) {
        let (tools, remote) = (self.runtime.registry().version(), *self.remote_changes.borrow());
        let mut seen = self.listen_seen.lock().unwrap_or_else(|p| p.into_inner());
        if seen.len() == LISTENS_PENDING {
            seen.pop_front();
        }
        seen.push_back((tools, remote));
    }

    /// The counts a starting listen stream compares with: the oldest noted, which were taken
    /// no later than this stream's own acceptance (each acceptance notes its counts before its
    /// acknowledgment, and each stream takes one entry). A change between them is announced at
    /// once: at worst once more than needed ("the list may have changed"), never missed.
    pub(super) fn listen_from(&self) -> Option<(u64, u64)> {
        self.listen_seen.lock().unwrap_or_else(|p| p.into_inner()).pop_front()
    }

    fn new(runtime: Runtime, config: McpConfig, results: Arc<dyn ResultStore>, listing: ListingCache, parked: Parking) -> Shared {
        let shared_bus = runtime.bus();
        let listing = listing.deferring(config.deferral.clone());
        Shared {
            shares_store: shared_bus.is_some(),
            bus: shared_bus.unwrap_or_else(|| Arc::new(MemoryBus::new())),
            relay: OnceLock::new(),
            search: Default::default(),
            remote_changes: tokio::sync::watch::Sender::new(0),
            listen_seen: Mutex::default(),
            runtime,
            config,
            listing: Mutex::new(listing),
            parked,
            results,
        }
    }
}

/// A handler with nothing but the tools: no prompts, resources or completion.
#[derive(Debug, Clone, Copy, Default)]
pub struct NoExtras;

impl ServerHandler for NoExtras {}

/// An MCP server over a runtime's registry. `E` answers prompts, resources, resource templates,
/// completion and resource subscriptions (its capabilities are merged in); tools, logging and
/// `list_changed` are the server's own.
#[derive(Clone)]
pub struct McpServer<E = NoExtras> {
    pub(super) shared: Arc<Shared>,
    pub(super) session: Arc<Session>,
    pub(super) extras: E,
    /// What `get_info` answers, built on its first call from the config, the runtime and the
    /// extras' capabilities (rmcp asks for every request served without a session).
    pub(super) info: Arc<OnceLock<rmcp::model::ServerConfig>>,
    /// Served without sessions (stateless Streamable HTTP): a request of a revision up to
    /// 2025-11-25 has no client the server could send a request to.
    pub(super) stateless: bool,
}

impl McpServer<NoExtras> {
    /// A server over `runtime`'s tools. Full results of cut calls are kept in the runtime's
    /// store when it keeps them (SQLite, PostgreSQL: shared by every instance on it), else in
    /// this process's memory; [`with_result_store`](McpServer::with_result_store) chooses
    /// another.
    pub fn new(runtime: Runtime, config: McpConfig) -> Self {
        let results = runtime
            .kept_results(config.kept_results)
            .unwrap_or_else(|| Arc::new(MemoryResults::new(config.kept_results)));
        McpServer {
            session: Arc::new(Session::new(&config)),
            shared: Arc::new(Shared::new(
                runtime,
                config.clone(),
                results,
                ListingCache::default(),
                Parking::default(),
            )),
            extras: NoExtras,
            info: Arc::default(),
            stateless: false,
        }
    }
}

impl<E: ServerHandler + Clone> McpServer<E> {
    /// The same server, with prompts, resources and completion from `extras`.
    pub fn with_extras<X: ServerHandler + Clone>(self, extras: X) -> McpServer<X> {
        McpServer {
            shared: self.shared,
            session: self.session,
            extras,
            info: Arc::default(),
            stateless: self.stateless,
        }
    }

    /// A handler for a new client session (fresh log level and call limit), sharing the tools.
    pub fn for_new_session(&self) -> Self {
        McpServer {
            shared: self.shared.clone(),
            session: Arc::new(Session::new(&self.shared.config)),
            extras: self.extras.clone(),
            info: self.info.clone(),
            stateless: self.stateless,
        }
    }

    /// The same server, told whether it is served without sessions (each request a session of
    /// its own, no way to send the client a request): then approval, suspension and a tool's
    /// `elicit`/`sample` on revisions up to 2025-11-25 say so at once instead of asking.
    pub(crate) fn without_sessions(mut self, stateless: bool) -> Self {
        self.stateless = stateless;
        self
    }

    /// The same server keeping full results of cut calls in `store` instead of this process's
    /// memory (a store shared by instances lets any of them answer `resources/read`).
    pub fn with_result_store(self, store: Arc<dyn ResultStore>) -> Self {
        let (runtime, config) = (self.shared.runtime.clone(), self.shared.config.clone());
        let (listing, parked) = match Arc::try_unwrap(self.shared) {
            Ok(shared) => (shared.listing.into_inner().unwrap_or_else(|p| p.into_inner()), shared.parked),
            Err(_) => (ListingCache::default(), Parking::default()),
        };
        McpServer {
            shared: Arc::new(Shared::new(runtime, config, store, listing, parked)),
            session: self.session,
            extras: self.extras,
            info: Arc::default(),
            stateless: self.stateless,
        }
    }

    /// The runtime the server calls through.
    pub fn runtime(&self) -> &Runtime {
        &self.shared.runtime
    }

    pub(super) fn registry(&self) -> &Registry {
        self.shared.runtime.registry()
    }

    /// What serving starts with: when a tool's first call will compile its schemas, the
    /// compiler's one-time part is built on a thread of its own meanwhile
    /// (`call::warm_up_compiler`).
    pub(super) fn warm_up(&self) {
        if self.registry().compiles_at_first_call() {
            crate::call::warm_up_compiler();
        }
    }
}

/// Why a request served without a session cannot be sent a request of the server's own.
pub(crate) const SESSIONLESS: &str =
    "this MCP server is stateless: it keeps no sessions and cannot send the client a request during a call";

/// The request speaks 2026-07-28 or later: it carries its own log level, and the server asks
/// the client through input-required results instead of requests of its own.
/// The revision is `RequestContext::protocol_version`'s (the request's `_meta`, else the
/// session's handshake), compared where it is rather than copied.
pub(super) fn modern(ctx: &RequestContext<RoleServer>) -> bool {
    let newest = |v: &ProtocolVersion| *v >= ProtocolVersion::V_2026_07_28;
    match ctx.meta.protocol_version() {
        Some(version) => newest(&version),
        None => ctx.peer.peer_info().is_some_and(|info| newest(&info.protocol_version)),
    }
}
