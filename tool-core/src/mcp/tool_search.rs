//! Tool search on the MCP server ([`McpConfig::tool_search`](super::McpConfig)): `tools/list`
//! shows the tools loaded up front and a `search_tools` tool; a search loads the deferred tools
//! it finds into the session, which then lists them and may call them.
//!
//! Owns the loaded set a request sees ([`McpServer::loaded`]: its session's, on sessions that
//! last, and always the names the request carries in `_meta` under [`LOADED_META`]), answering
//! `search_tools` calls (the catalog's search answer, over an index that follows the registry)
//! and refusing calls of deferred tools the request has not loaded. Which tools are deferred is
//! the server's [`Deferral`](crate::catalog::Deferral) (`McpConfig::deferral`: by default each
//! tool's own `defer_loading`). Listing is `listing`'s, running a call `call`'s.
//!
//! Sessions that last (stdio, Streamable HTTP with sessions, revisions up to 2025-11-25) keep
//! their loaded set for their lifetime and hear `notifications/tools/list_changed` after a
//! search loads something new. A request served on its own (stateless HTTP, every 2026-07-28
//! request) has no session to keep it in: the client sends the names it has loaded (the
//! `loaded` of each search answer, accumulated) in the request's `_meta` under
//! [`LOADED_META`], on `tools/list` (which then lists them) and on `tools/call` (which then
//! runs them).

use std::sync::Mutex;

use rmcp::model::{CallToolResponse, CallToolResult, ContentBlock, JsonObject, Tool as McpTool};
use rmcp::service::{RequestContext, RoleServer};
use rmcp::{ErrorData, ServerHandler};
use serde_json::{Value, json};

use super::call::error_result;
use super::listing::Listing;
use super::server::{McpServer, modern};
use crate::Caller;
use crate::catalog::{self, LoadedTools, SEARCH_TOOL};

/// The `_meta` key under which a request served without a session (stateless HTTP, 2026-07-28)
/// names the tools it has loaded through `search_tools`: an array of tool names, as listed (the
/// `loaded` of each search answer). `tools/list` then lists them and `tools/call` runs them.
pub const LOADED_META: &str = "io.toolsmith/loaded";

/// The most names taken from [`LOADED_META`].
const MAX_LOADED_META: usize = 4096;

/// What tool search keeps for the whole server: the search tool's entry and the index.
#[derive(Default)]
pub(super) struct SearchState {
    entry: std::sync::OnceLock<Option<McpTool>>,
    index: catalog::LiveIndex,
}

/// A session's loaded tools (ids), for sessions that last.
#[derive(Debug, Default)]
pub(super) struct SessionLoaded(Mutex<LoadedTools>);

impl SessionLoaded {
    fn get(&self) -> LoadedTools {
        self.0.lock().unwrap_or_else(|p| p.into_inner()).clone()
    }

    /// Loads `ids`; whether any was not loaded yet.
    fn extend(&self, ids: &[String]) -> bool {
        let mut loaded = self.0.lock().unwrap_or_else(|p| p.into_inner());
        let before = loaded.len();
        loaded.extend(ids.iter().cloned());
        loaded.len() > before
    }
}

/// The request's `_meta` objects: the context's (rmcp moves a request's `_meta` there) and any
/// left in the params.
pub(super) fn metas<'a>(
    ctx: &'a RequestContext<RoleServer>,
    params: Option<&'a JsonObject>,
) -> impl Iterator<Item = &'a JsonObject> + Clone {
    [Some(&*ctx.meta.0), params].into_iter().flatten()
}

/// The names a request's `_meta` says it has loaded; a malformed value is a protocol error.
fn meta_names<'a>(mut metas: impl Iterator<Item = &'a JsonObject>) -> Result<Vec<&'a str>, ErrorData> {
    let Some(value) = metas.find_map(|m| m.get(LOADED_META)) else {
        return Ok(Vec::new());
    };
    let bad = || {
        ErrorData::invalid_params(
            format!(
                "`_meta[\"{LOADED_META}\"]` must be an array of at most {MAX_LOADED_META} tool names (the `loaded` of `{SEARCH_TOOL}` answers)"
            ),
            Some(json!({"meta": LOADED_META})),
        )
    };
    let names = value.as_array().filter(|a| a.len() <= MAX_LOADED_META).ok_or_else(bad)?;
    names.iter().map(|n| n.as_str().ok_or_else(bad)).collect()
}

impl<E: ServerHandler + Clone> McpServer<E> {
    /// Whether this server lists deferred tools only once searched.
    pub(super) fn searching(&self) -> bool {
        self.shared.config.tool_search
    }

    /// Whether this request's session lasts, so that it keeps what it loads.
    fn lasting_session(&self, ctx: &RequestContext<RoleServer>) -> bool {
        !self.stateless && !modern(ctx)
    }

    /// The tools (ids) this request has loaded: its session's, and those its `_meta` names.
    pub(super) fn loaded<'a>(
        &self,
        listing: &Listing,
        ctx: &RequestContext<RoleServer>,
        metas: impl Iterator<Item = &'a JsonObject>,
    ) -> Result<LoadedTools, ErrorData> {
        let mut loaded = if self.lasting_session(ctx) {
            self.session.loaded.get()
        } else {
            LoadedTools::default()
        };
        loaded.extend(meta_names(metas)?.into_iter().filter_map(|name| listing.id(name)));
        Ok(loaded)
    }

    /// The search tool's entry in `tools/list` (`None`: a tool of the registry has its name).
    pub(super) fn search_entry(&self, listing: &Listing) -> Option<&McpTool> {
        if listing.id(SEARCH_TOOL).is_some() {
            return None;
        }
        let entry = self.shared.search.entry.get_or_init(|| {
            let spec = catalog::search_spec();
            super::convert::tool(&spec, SEARCH_TOOL).ok()
        });
        entry.as_ref()
    }

    /// Whether the call of the tool listed as `name` (id `id`) is refused because it is deferred
    /// and this request has not loaded it: the error result saying to search first.
    pub(super) fn refuse_unloaded(&self, listing: &Listing, name: &str, id: &str, loaded: &LoadedTools) -> Option<CallToolResponse> {
        (listing.deferred(id) && !loaded.contains(id)).then(|| error_result(catalog::not_loaded(name).message().to_owned()))
    }

    /// Answers a `search_tools` call: the deferred tools (not loaded yet, visible to the caller)
    /// that best match the query, loaded into the session when it lasts (which then hears
    /// `list_changed`), named in the answer's `loaded` for clients that keep the set themselves.
    pub(super) async fn answer_search(
        &self,
        listing: &Listing,
        args: &Value,
        loaded: &LoadedTools,
        caller: Option<&Caller>,
        ctx: &RequestContext<RoleServer>,
    ) -> CallToolResponse {
        let (query, limit) = match catalog::search_request(args) {
            Ok(asked) => asked,
            Err(e) => return error_result(e.message().to_owned()),
        };
        let hide = caller.filter(|_| self.shared.config.hide_unauthorized_tools);
        let keep = |id: &str| {
            listing.deferred(id)
                && !loaded.contains(id)
                && hide.is_none_or(|c| listing.scopes_of(id).is_some_and(|s| c.missing(s).is_empty()))
        };
        let hits = self.shared.search.index.search_where(self.registry(), query, limit, keep);
        let mut found = Vec::with_capacity(hits.len());
        let (mut ids, mut names) = (Vec::with_capacity(hits.len()), Vec::with_capacity(hits.len()));
        for hit in hits {
            let (Some(name), Some(tool)) = (listing.name(&hit.id), self.registry().get(&hit.id)) else {
                continue;
            };
            let spec = tool.spec();
            let mut entry = json!({"name": name, "description": spec.description});
            if let Some(ns) = &spec.presentation.namespace {
                entry["namespace"] = json!(ns);
            }
            found.push(entry);
            names.push(name.to_owned());
            ids.push(hit.id);
        }
        if self.lasting_session(ctx) && self.session.loaded.extend(&ids) {
            // The session's list changed: tell it (its client lists again).
            let _ = ctx.peer.notify_tool_list_changed().await;
        }
        let answer = catalog::search_answer(found, names);
        CallToolResult::success(vec![ContentBlock::text(answer.to_string())]).into()
    }
}
