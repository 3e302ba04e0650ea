//! The `tools/list` side of the server: which tools are listed, under which names, one page at
//! a time, and telling clients when that changes.
//!
//! Owns [`Listing`] (one version of the registry's tools as MCP lists them, and the way back
//! from an MCP name to a tool id), [`ListingCache`] (each tool's entry converted once, when
//! first needed, kept per tool for as long as the registry holds that very tool under that
//! name), cursor paging and the `list_changed` notifications. A listing's routes (names, ids,
//! scopes, deferral) come from the specs when it is made; the entries are converted when a
//! `tools/list` (or a lookup of one tool's entry) first needs them: a `tools/call` needs only
//! the routes, so a cold server's first call does not convert every tool. How one tool becomes an entry is `convert`'s; calling a
//! tool is `call`'s.

use std::collections::HashMap;
use std::fmt;
use std::sync::{Arc, OnceLock};

use rmcp::model::{ListToolsResult, Tool as McpTool};
use rmcp::service::{Peer, RoleServer, SubscriptionContext};
use rmcp::{ErrorData, ServerHandler};
use tokio::sync::watch;

use super::convert::{self, NotListable};
use super::server::McpServer;
use crate::Caller;
use crate::catalog::LoadedTools;
use crate::catalog::names::NameMap;
use crate::dialect::Dialect;
use crate::registry::Registry;
use crate::tool::Tool;

/// The `tools/list` entries of one version of the registry, ordered by tool id.
pub(super) struct Listing {
    version: u64,
    names: NameMap,
    /// Each tool's entry, in listing order (converted when first needed).
    entries: Vec<Arc<Entry>>,
    /// Every entry converted, once a page or a search needed them all; the tools MCP cannot
    /// list otherwise (a listing fails whole, naming each).
    tools: OnceLock<Result<Vec<McpTool>, Unlistable>>,
    /// The scopes each listed tool needs (`Policy::scopes` of its spec), in listing order.
    scopes: Vec<Vec<String>>,
    /// Each listed tool's id, in listing order (ordered).
    ids: Vec<String>,
    /// Whether each listed tool is deferred (`defer_loading`), in listing order.
    deferred: Vec<bool>,
}

impl Listing {
    /// The id of the tool listed as `name`.
    pub(super) fn id(&self, name: &str) -> Option<&str> {
        self.names.id(name)
    }

    /// Every listed name, in listing order.
    pub(super) fn names(&self) -> impl Iterator<Item = &str> {
        self.entries.iter().map(|e| e.name.as_str())
    }

    /// Every entry, converted now if no page needed them before; the tools MCP cannot list
    /// otherwise.
    fn tools(&self) -> Result<&[McpTool], &Unlistable> {
        let tools = self.tools.get_or_init(|| {
            let (mut listed, mut unlistable) = (Vec::with_capacity(self.entries.len()), Vec::new());
            for entry in &self.entries {
                match entry.listed() {
                    Ok(mcp) => listed.push(McpTool::clone(mcp)),
                    Err(e) => unlistable.push(e.clone()),
                }
            }
            if unlistable.is_empty() {
                Ok(listed)
            } else {
                Err(Unlistable(unlistable))
            }
        });
        tools.as_ref().map(Vec::as_slice)
    }

    /// The entry listed as `name`, converted now if nothing needed it before (`None`: no such
    /// name; `Some(Err)`: MCP cannot list that tool).
    pub(super) fn entry(&self, name: &str) -> Option<Result<&McpTool, &NotListable>> {
        self.entry_of(self.id(name)?)
    }

    /// The entry of the tool with this id (see [`Listing::entry`]).
    pub(super) fn entry_of(&self, id: &str) -> Option<Result<&McpTool, &NotListable>> {
        let i = self.position(id)?;
        Some(self.entries[i].listed().as_ref().map(|t| &**t))
    }

    /// The entry listed as `name`, when MCP can list it.
    pub(super) fn tool(&self, name: &str) -> Option<&McpTool> {
        self.entry(name)?.ok()
    }

    /// The scopes the tool listed as `name` needs.
    pub(super) fn scopes(&self, name: &str) -> Option<&[String]> {
        self.scopes_of(self.id(name)?)
    }

    /// The position of the tool with this id.
    fn position(&self, id: &str) -> Option<usize> {
        self.ids.binary_search_by(|i| i.as_str().cmp(id)).ok()
    }

    /// The registry's tool with this id, as this listing has it: what a call reads of its
    /// spec without looking the registry up again.
    pub(super) fn tool_of(&self, id: &str) -> Option<&dyn Tool> {
        self.position(id).map(|i| &*self.entries[i].tool)
    }

    /// The name the tool with this id is listed as.
    pub(super) fn name(&self, id: &str) -> Option<&str> {
        self.position(id).map(|i| self.entries[i].name.as_str())
    }

    /// Whether the tool with this id is deferred: listed (with tool search) once loaded.
    pub(super) fn deferred(&self, id: &str) -> bool {
        self.position(id).is_some_and(|i| self.deferred[i])
    }

    /// The scopes the tool with this id needs.
    pub(super) fn scopes_of(&self, id: &str) -> Option<&[String]> {
        self.position(id).map(|i| self.scopes[i].as_slice())
    }

    /// Every scope some tool needs, each once (Protected Resource Metadata).
    #[cfg(feature = "oauth")]
    pub(super) fn all_scopes(&self) -> Vec<String> {
        let mut all: Vec<String> = Vec::new();
        for s in self.scopes.iter().flatten() {
            if !all.contains(s) {
                all.push(s.clone());
            }
        }
        all
    }

    /// The page starting at `cursor` (an index this server gave as `nextCursor`) of the tools
    /// `visible` accepts (by id and scopes), then `extra`.
    fn page(
        &self,
        cursor: Option<&str>,
        size: usize,
        visible: impl Fn(&str, &[String]) -> bool,
        extra: Option<&McpTool>,
    ) -> Result<ListToolsResult, ErrorData> {
        let all = self.tools().map_err(|e| ErrorData::internal_error(e.to_string(), None))?;
        let mut tools: Vec<&McpTool> = all
            .iter()
            .zip(self.ids.iter().zip(&self.scopes))
            .filter(|(_, (id, scopes))| visible(id, scopes))
            .map(|(tool, _)| tool)
            .collect();
        tools.extend(extra);
        let start = match cursor {
            None => 0,
            Some(c) => c
                .parse::<usize>()
                .ok()
                .filter(|n| *n <= tools.len())
                .ok_or_else(|| ErrorData::invalid_params(format!("the cursor `{c}` is not one this server gave"), None))?,
        };
        let end = (start + size.max(1)).min(tools.len());
        let mut result = ListToolsResult::with_all_items(tools[start..end].iter().copied().cloned().collect());
        result.next_cursor = (end < tools.len()).then(|| end.to_string());
        Ok(result)
    }
}

/// One tool's entry, and what it was derived from.
struct Entry {
    /// The registry's tool: the entry stands while the registry holds this very `Arc`.
    tool: Arc<dyn Tool>,
    /// The MCP name it was listed under (a mapped name can change when other tools come).
    name: String,
    /// The tool as MCP lists it, converted when first needed.
    listed: OnceLock<Result<Arc<McpTool>, NotListable>>,
}

impl Entry {
    /// The tool as MCP lists it, converted now if nothing needed it before.
    fn listed(&self) -> &Result<Arc<McpTool>, NotListable> {
        self.listed
            .get_or_init(|| convert::tool(self.tool.spec(), &self.name).map(Arc::new))
    }
}

/// The current listing and every tool's entry, so that a registry change converts only the
/// tools it added (or renamed) and drops the ones it removed.
#[derive(Default)]
pub(super) struct ListingCache {
    current: Option<Arc<Listing>>,
    entries: HashMap<String, Arc<Entry>>,
    /// Which tools tool search defers ([`McpConfig::deferral`](super::McpConfig)).
    deferral: crate::catalog::Deferral,
}

/// Tools MCP cannot list, each with why.
#[derive(Debug)]
pub(super) struct Unlistable(Vec<NotListable>);

impl fmt::Display for Unlistable {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "the tools could not be listed:")?;
        for e in &self.0 {
            write!(f, "\n- {e}")?;
        }
        Ok(())
    }
}

impl ListingCache {
    /// The cache, deferring the tools `deferral` selects.
    pub(super) fn deferring(mut self, deferral: crate::catalog::Deferral) -> Self {
        if deferral != self.deferral {
            self.current = None;
        }
        self.deferral = deferral;
        self
    }

    /// The listing of the registry as it is now: the current one when the registry has not
    /// changed since, else one rebuilt from the entries of the tools it still holds (an entry
    /// is converted when first needed, see [`Listing::tools`]).
    pub(super) fn listing(&mut self, registry: &Registry) -> Arc<Listing> {
        let version = registry.version();
        if let Some(listing) = self.current.as_ref().filter(|l| l.version == version) {
            return listing.clone();
        }
        self.current = None;
        let tools = registry.tools();
        let names = NameMap::build(Dialect::Mcp, tools.iter().map(|t| t.spec().id.as_str()));
        let mut previous = std::mem::take(&mut self.entries);
        let mut entries = Vec::with_capacity(tools.len());
        let mut scopes = Vec::with_capacity(tools.len());
        let (mut ids, mut deferred) = (Vec::with_capacity(tools.len()), Vec::with_capacity(tools.len()));
        for tool in tools {
            let id = tool.spec().id.clone();
            let name = names.name(&id).unwrap_or(&id).to_owned();
            let entry = match previous.remove(&id) {
                Some(entry) if Arc::ptr_eq(&entry.tool, &tool) && entry.name == name => entry,
                _ => Arc::new(Entry {
                    tool,
                    name,
                    listed: OnceLock::new(),
                }),
            };
            let spec = entry.tool.spec();
            scopes.push(spec.policy.scopes.clone());
            deferred.push(self.deferral.defers(spec));
            ids.push(id.clone());
            entries.push(entry.clone());
            self.entries.insert(id, entry);
        }
        let listing = Arc::new(Listing {
            version,
            names,
            entries,
            tools: OnceLock::new(),
            scopes,
            ids,
            deferred,
        });
        self.current = Some(listing.clone());
        listing
    }
}

impl<E: ServerHandler + Clone> McpServer<E> {
    /// The current listing, rebuilt (per changed tool) when the registry changed.
    pub(super) fn listing(&self) -> Result<Arc<Listing>, ErrorData> {
        // Every request lists (a call looks its tool up): the first one starts the relay.
        self.ensure_relay();
        let mut cache = self.shared.listing.lock().unwrap_or_else(|p| p.into_inner());
        Ok(cache.listing(self.registry()))
    }

    /// One `tools/list` page; with [`McpConfig::hide_unauthorized_tools`](super::McpConfig)
    /// and a caller's identity, of the tools it may call only; with
    /// [`McpConfig::tool_search`](super::McpConfig), of the tools loaded up front and those
    /// `loaded` (see `tool_search`), then `search_tools`.
    pub(super) fn list_page(
        &self,
        listing: &Listing,
        cursor: Option<&str>,
        caller: Option<&Caller>,
        loaded: Option<&LoadedTools>,
    ) -> Result<ListToolsResult, ErrorData> {
        let hide = caller.filter(|_| self.shared.config.hide_unauthorized_tools);
        let visible = |id: &str, scopes: &[String]| {
            hide.is_none_or(|caller| caller.missing(scopes).is_empty())
                && loaded.is_none_or(|loaded| !listing.deferred(id) || loaded.contains(id))
        };
        let extra = loaded.and_then(|_| self.search_entry(listing));
        listing.page(cursor, self.shared.config.page_size, visible, extra)
    }

    /// Tells a session of an older revision about tool changes, as notifications, until it
    /// closes.
    pub(super) fn notify_list_changes(&self, peer: Peer<RoleServer>) {
        let mut changes = self.registry().subscribe();
        let mut remote = self.shared.remote_changes.subscribe();
        self.ensure_relay();
        tokio::spawn(async move {
            // rmcp has no "session closed" future: look every 30 s, so a finished session's
            // watcher does not wait for the next change to end.
            let mut check = tokio::time::interval(std::time::Duration::from_secs(30));
            loop {
                tokio::select! {
                    changed = changes.changed() => {
                        if changed.is_err() || peer.is_transport_closed() || peer.notify_tool_list_changed().await.is_err() {
                            break;
                        }
                    }
                    // Another instance's tools changed (over the store's bus).
                    Ok(()) = remote.changed() => {
                        if peer.is_transport_closed() || peer.notify_tool_list_changed().await.is_err() {
                            break;
                        }
                    }
                    _ = check.tick() => {
                        if peer.is_transport_closed() {
                            break;
                        }
                    }
                }
            }
        });
    }

    /// Sends a 2026-07-28 subscription every tool change until it is cancelled.
    /// The receivers of a starting listen stream: a change after its subscription was accepted
    /// (and acknowledged) but before they were made reads as not yet seen.
    fn listen_receivers(&self) -> (watch::Receiver<u64>, watch::Receiver<u64>) {
        let mut changes = self.registry().subscribe();
        let mut remote = self.shared.remote_changes.subscribe();
        if let Some((tools, others)) = self.shared.listen_from() {
            if *changes.borrow() != tools {
                changes.mark_changed();
            }
            if *remote.borrow() != others {
                remote.mark_changed();
            }
        }
        (changes, remote)
    }

    pub(super) async fn stream_list_changes(&self, cx: SubscriptionContext) {
        let (mut changes, mut remote) = self.listen_receivers();
        self.ensure_relay();
        loop {
            tokio::select! {
                _ = cx.cancelled() => return,
                changed = changes.changed() => {
                    if changed.is_err() || cx.sink().notify_tool_list_changed().await.is_err() {
                        return;
                    }
                }
                Ok(()) = remote.changed() => {
                    if cx.sink().notify_tool_list_changed().await.is_err() {
                        return;
                    }
                }
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;
    use crate::DynamicTool;

    fn echo(id: &str) -> DynamicTool {
        DynamicTool::builder(id, "Echo")
            .input_schema(json!({"type": "object", "properties": {"text": {"type": "string"}}}))
            .handler(|input, _| async move { Ok(input) })
            .unwrap()
    }

    /// Each tool's entry, by id, converted (the `Arc` says whether it was converted again).
    fn entries(cache: &ListingCache) -> HashMap<String, Arc<McpTool>> {
        let entries = cache.entries.iter();
        entries.map(|(id, e)| (id.clone(), e.listed().clone().unwrap())).collect()
    }

    fn names(listing: &Listing) -> Vec<&str> {
        listing.names().collect()
    }

    #[test]
    fn a_registry_change_converts_only_the_tools_it_touched() {
        let registry = Registry::from_iter([echo("a"), echo("b"), echo("c")]);
        let mut cache = ListingCache::default();
        let first = cache.listing(&registry);
        assert_eq!(names(&first), ["a", "b", "c"]);
        assert!(
            cache.entries.values().all(|e| e.listed.get().is_none()),
            "a listing converts nothing until an entry is needed"
        );
        assert_eq!(first.tool("b").map(|t| &*t.name), Some("b"));
        assert!(cache.entries["b"].listed.get().is_some() && cache.entries["a"].listed.get().is_none());
        let before = entries(&cache);
        assert!(
            Arc::ptr_eq(&first, &cache.listing(&registry)),
            "an unchanged registry reuses its listing"
        );

        registry.insert(echo("d")).unwrap();
        registry.remove("b");
        let second = cache.listing(&registry);
        assert_eq!(names(&second), ["a", "c", "d"]);
        let after = entries(&cache);
        assert_eq!(after.len(), 3, "a removed tool's entry goes");
        for kept in ["a", "c"] {
            assert!(Arc::ptr_eq(&before[kept], &after[kept]), "`{kept}` was converted again");
        }

        // The same id for another tool is another entry.
        registry.remove("a");
        registry.insert(echo("a")).unwrap();
        cache.listing(&registry);
        let replaced = entries(&cache);
        assert!(!Arc::ptr_eq(&after["a"], &replaced["a"]), "a replaced tool keeps its old entry");
        assert!(Arc::ptr_eq(&after["c"], &replaced["c"]));
    }

    #[test]
    fn a_tool_whose_mapped_name_changes_is_listed_under_the_new_one() {
        // `a/b` is listed as `a_b` until a tool takes that spelling as its id.
        let registry = Registry::from_iter([echo("a/b")]);
        let mut cache = ListingCache::default();
        assert_eq!(names(&cache.listing(&registry)), ["a_b"]);
        registry.insert(echo("a_b")).unwrap();
        let listing = cache.listing(&registry);
        let mapped = listing.names.name("a/b").unwrap().to_owned();
        assert!(mapped.starts_with("a_b_"), "{mapped}");
        assert!(names(&listing).contains(&mapped.as_str()));
        assert_eq!(listing.id(&mapped), Some("a/b"));
        assert_eq!(listing.id("a_b"), Some("a_b"));
    }

    #[test]
    fn pages_follow_the_cursor_and_refuse_foreign_ones() {
        let registry = Registry::from_iter(["a", "b", "c"].map(echo));
        let listing = ListingCache::default().listing(&registry);
        let first = listing.page(None, 2, |_, _| true, None).unwrap();
        assert_eq!(first.next_cursor.as_deref(), Some("2"));
        let last = listing.page(first.next_cursor.as_deref(), 2, |_, _| true, None).unwrap();
        assert_eq!((last.tools.len(), last.next_cursor), (1, None));
        assert!(listing.page(Some("9"), 2, |_, _| true, None).is_err());
        assert!(listing.page(Some("x"), 2, |_, _| true, None).is_err());
    }

    #[test]
    fn a_tool_mcp_cannot_list_fails_the_listing_and_says_which() {
        let bad = DynamicTool::builder("bad", "Bad")
            .input_schema(json!({"type": "object"}))
            .with_spec(|s| s.presentation.mcp.meta = Some(json!("not an object")))
            .handler(|input, _| async move { Ok(input) })
            .unwrap();
        let registry = Registry::from_iter([echo("a"), bad]);
        let listing = ListingCache::default().listing(&registry);
        let err = listing.page(None, 10, |_, _| true, None).unwrap_err();
        assert!(err.message.starts_with("the tools could not be listed:\n- tool `bad`"), "{err:?}");
        // The routes stand: a call finds each tool, and the one MCP cannot list says why.
        assert!(listing.entry("a").is_some_and(|e| e.is_ok()));
        let bad = listing.entry("bad").unwrap().unwrap_err();
        assert!(bad.to_string().starts_with("tool `bad`"), "{bad}");
    }

    #[tokio::test]
    async fn a_change_between_a_listens_acceptance_and_its_stream_is_announced() {
        let runtime = crate::runtime::Runtime::new(Registry::from_iter([echo("a")]));
        let server = McpServer::new(runtime, super::super::McpConfig::default());
        let filter = rmcp::model::SubscriptionFilter::default();
        // Accepted, and nothing changed before its stream starts: nothing to announce.
        assert!(server.accepted_subscription_filter(&filter).is_some());
        let (changes, remote) = server.listen_receivers();
        assert!(!changes.has_changed().unwrap() && !remote.has_changed().unwrap());
        // Accepted (and acknowledged), then a tool added here and one on another instance,
        // before the stream made its receivers: both are announced.
        server.accepted_subscription_filter(&filter);
        server.registry().insert(echo("b")).unwrap();
        server.shared.remote_changes.send_modify(|n| *n += 1);
        let (changes, remote) = server.listen_receivers();
        assert!(changes.has_changed().unwrap() && remote.has_changed().unwrap());
        // A stream whose acceptance was not noted (none pending) starts from now.
        let (changes, _) = server.listen_receivers();
        assert!(!changes.has_changed().unwrap());
    }
}
