//! Deferred loading: a catalog's tool list when some tools wait to be found by tool search, and
//! the answers to the generated search tool.
//!
//! Owns [`ToolSearchMode`], [`LoadedTools`] (the conversation's loaded set) and, on
//! [`Catalog`], `export_deferred`, `answer_search` and `dispatch_deferred`. Native where the
//! provider has tool search — OpenAI Responses: `defer_loading` on functions, `namespace`
//! groups and a `{type: "tool_search"}` tool the API runs; Anthropic: `defer_loading` and the
//! `tool_search_tool_bm25_20251119` server tool — and generated everywhere else (Chat
//! Completions, Gemini, MCP): a [`SEARCH_TOOL`] tool whose calls the catalog answers, loading
//! the tools it finds into the conversation's [`LoadedTools`], which the next request's list
//! then carries. Must not hold the loaded set itself: it is conversation state, passed in.

use std::collections::BTreeMap;
use std::sync::Arc;

use serde_json::{Value, json};

use super::export::{Export, Group, Item};
use super::pass::PassError;
use super::{Catalog, CatalogError, Strictness};
use crate::call::{CallArgs, CallOptions};
pub use crate::context::LoadedTools;
use crate::dialect::Dialect;
use crate::error::{ErrorKind, ToolError};
use crate::spec::ToolSpec;
use crate::tool::ToolOutput;

/// The name of the generated search tool.
pub const SEARCH_TOOL: &str = crate::context::SEARCH_TOOL;

/// How many tools one search loads when the model does not say.
const DEFAULT_LIMIT: usize = 5;
/// The most tools one search loads.
const MAX_LIMIT: usize = 20;
/// The longest arguments text of a search call read.
const MAX_SEARCH_ARGS: usize = 16 * 1024;
/// How many tool names a namespace's generated description lists.
const NAMES_IN_DESCRIPTION: usize = 8;

/// Which tool search a deferred export uses.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
#[non_exhaustive]
pub enum ToolSearchMode {
    /// The provider's own where it has one (OpenAI Responses: `tool_search` run by OpenAI;
    /// Anthropic: the BM25 search server tool), the generated [`SEARCH_TOOL`] elsewhere.
    #[default]
    Native,
    /// The provider's format for deferred tools with the search run here, over the catalog's
    /// index: OpenAI Responses sends `{type: "tool_search", execution: "client", ...}`, whose
    /// calls [`Catalog::tool_search_output`] answers; Anthropic a [`SEARCH_TOOL`] tool of its
    /// own, whose calls [`Catalog::tool_references`] answers with `tool_reference` blocks. The
    /// generated [`SEARCH_TOOL`] elsewhere.
    Client,
    /// The generated [`SEARCH_TOOL`] in every dialect, answered by
    /// [`Catalog::answer_search`] over the catalog's own index.
    Generated,
}

/// Whether `dialect` has its own tool search (used in [`ToolSearchMode::Native`]).
fn native(dialect: Dialect, mode: ToolSearchMode) -> bool {
    mode != ToolSearchMode::Generated && matches!(dialect, Dialect::OpenAiResponses | Dialect::Anthropic)
}

/// Whether the export carries a tool named [`SEARCH_TOOL`].
fn named_search_tool(dialect: Dialect, mode: ToolSearchMode) -> bool {
    !native(dialect, mode) || (dialect == Dialect::Anthropic && mode == ToolSearchMode::Client)
}

/// The generated search tool's spec.
pub(crate) fn search_spec() -> ToolSpec {
    ToolSpec::new(
        SEARCH_TOOL,
        "Search the tools that are not loaded yet by what they do, and load the best matches: they can be called from the next turn on. Search again with other words when none fits.",
        json!({
            "type": "object",
            "properties": {
                "query": {"type": "string", "description": "What the tool should do, in a few words"},
                "limit": {"type": "integer", "minimum": 1, "maximum": MAX_LIMIT, "description": "How many tools to load (default 5)"}
            },
            "required": ["query"],
            "additionalProperties": false
        }),
    )
}

impl Catalog {
    /// The tool list in `dialect` for a request of a conversation that uses tool search: the
    /// tools loaded up front (see [`Catalog::placement`]), the deferred ones as the format
    /// carries them, and a tool search tool.
    ///
    /// - OpenAI Responses (native): every tool, deferred ones with `defer_loading: true`,
    ///   namespaced ones inside `{type: "namespace", name, description, tools}` groups, and
    ///   `{type: "tool_search"}` (OpenAI runs the search and keeps the loaded tools in the
    ///   conversation).
    /// - Anthropic (native): every tool, deferred ones with `defer_loading: true`, and
    ///   `{type: "tool_search_tool_bm25_20251119", name: "tool_search_tool_bm25"}`. Anthropic has
    ///   no namespaces: a namespace is reported in the warnings.
    /// - Everywhere else, and in [`ToolSearchMode::Generated`]: the tools loaded up front and
    ///   those in `loaded`, plus the generated [`SEARCH_TOOL`], whose calls
    ///   [`Catalog::answer_search`] answers.
    ///
    /// With no deferred tool, it is [`Catalog::export`].
    pub fn export_deferred(&self, dialect: Dialect, mode: ToolSearchMode, loaded: &LoadedTools) -> Result<Export, CatalogError> {
        let mut export = self.export_entries(dialect, Strictness::AsDeclared)?;
        if !self.placements.iter().any(|p| p.deferred) {
            return Ok(self.finish(export));
        }
        if self.resolve(dialect, SEARCH_TOOL).is_some() && named_search_tool(dialect, mode) {
            return Err(CatalogError(vec![PassError {
                tool: SEARCH_TOOL.to_owned(),
                dialect,
                path: String::new(),
                rule: format!("a tool of the catalog is named `{SEARCH_TOOL}`, the generated search tool's name: rename it"),
            }]));
        }
        let entries = std::mem::take(&mut export.items);
        export.items = if native(dialect, mode) {
            let mut items = self.native_items(dialect, entries, &mut export.warnings);
            items.push(self.native_search_item(dialect, mode)?);
            items
        } else {
            let mut items: Vec<Item> = entries
                .into_iter()
                .zip(&self.placements)
                .zip(&self.tools)
                .filter(|((_, p), t)| !p.deferred || loaded.contains(&t.spec().id))
                .map(|((item, _), _)| item)
                .collect();
            items.push(self.search_item(dialect)?);
            items
        };
        Ok(self.finish(export))
    }

    /// The native items: entries (deferred ones marked), grouped by namespace for OpenAI
    /// Responses, and the provider's search tool.
    fn native_items(&self, dialect: Dialect, entries: Vec<Item>, warnings: &mut Vec<String>) -> Vec<Item> {
        let mut top: Vec<Item> = Vec::with_capacity(entries.len() + 1);
        // Per namespace: its items, the first names (for a description) and how many.
        let mut groups: BTreeMap<&str, (Vec<Item>, Vec<&str>, usize)> = BTreeMap::new();
        let mut unsent: BTreeMap<&str, usize> = BTreeMap::new();
        let names = &self.names_in_order[super::position(dialect)];
        for (i, (item, placement)) in entries.into_iter().zip(&self.placements).enumerate() {
            let item = match item {
                Item::Entry(e) if placement.deferred => Item::Deferred(e),
                other => other,
            };
            match (placement.namespace.as_deref(), dialect) {
                (Some(ns), Dialect::OpenAiResponses) => {
                    let (items, shown, count) = groups.entry(ns).or_default();
                    items.push(item);
                    if shown.len() < NAMES_IN_DESCRIPTION {
                        shown.push(names.get(i).map_or("", String::as_str));
                    }
                    *count += 1;
                }
                (Some(ns), _) => {
                    *unsent.entry(ns).or_default() += 1;
                    top.push(item);
                }
                (None, _) => top.push(item),
            }
        }
        for (ns, count) in unsent {
            warnings.push(format!("{dialect} has no namespaces: namespace `{ns}` ({count} tools) is not sent"));
        }
        for (name, (items, shown, count)) in groups {
            let description = self
                .overrides
                .description(name)
                .map_or_else(|| describe(name, &shown, count), str::to_owned);
            top.push(Item::Namespace(Box::new(Group {
                name: name.to_owned(),
                description,
                items,
            })));
        }
        top
    }

    /// The provider's search tool: run by the provider ([`ToolSearchMode::Native`]) or here.
    fn native_search_item(&self, dialect: Dialect, mode: ToolSearchMode) -> Result<Item, CatalogError> {
        let value = match (dialect, mode) {
            (Dialect::Anthropic, ToolSearchMode::Client) => return self.search_item(dialect),
            (Dialect::Anthropic, _) => json!({"type": "tool_search_tool_bm25_20251119", "name": "tool_search_tool_bm25"}),
            (_, ToolSearchMode::Client) => {
                let spec = search_spec();
                json!({"type": "tool_search", "execution": "client", "description": spec.description, "parameters": spec.schemas.input})
            }
            _ => json!({"type": "tool_search"}),
        };
        let raw = serde_json::value::to_raw_value(&value).map_err(|e| {
            CatalogError(vec![PassError {
                tool: SEARCH_TOOL.to_owned(),
                dialect,
                path: String::new(),
                rule: format!("the search tool could not be serialised: {e}"),
            }])
        })?;
        Ok(Item::Value(Arc::from(raw)))
    }

    /// The generated search tool's entry in `dialect`.
    fn search_item(&self, dialect: Dialect) -> Result<Item, CatalogError> {
        let spec = search_spec();
        let texts = [std::sync::OnceLock::new(), std::sync::OnceLock::new()];
        let entry = super::format::entry(dialect, &spec, SEARCH_TOOL, false, &texts).map_err(|e| CatalogError(vec![e]))?;
        Ok(Item::Value(Arc::from(entry.json)))
    }

    /// Answers a call of the generated [`SEARCH_TOOL`] (`{"query": "...", "limit": 5}`):
    /// searches the deferred tools, loads the best matches into `loaded` (several in one call)
    /// and tells the model which tools it can now call, by the names they have in `dialect`.
    pub fn answer_search(&self, dialect: Dialect, args: &Value, loaded: &mut LoadedTools) -> Result<Value, ToolError> {
        let hits = self.find(args)?;
        let tools: Vec<Value> = hits
            .iter()
            .filter_map(|h| {
                let i = self.tools.binary_search_by(|t| t.spec().id.as_str().cmp(h)).ok()?;
                let name = self.provider_name(dialect, h).unwrap_or(h);
                let mut found = json!({"name": name, "description": self.tools[i].spec().description});
                // Formats without namespaces still tell the model where the tool belongs.
                if let Some(ns) = self.placements.get(i).and_then(|p| p.namespace.as_ref()) {
                    found["namespace"] = json!(ns);
                }
                Some(found)
            })
            .collect();
        loaded.extend(hits.iter().cloned());
        Ok(search_answer(tools, hits))
    }

    /// The ids of the deferred tools that best match a search call's arguments
    /// (`{"query": "...", "limit": 5}`).
    fn find(&self, args: &Value) -> Result<Vec<String>, ToolError> {
        let (query, limit) = search_request(args)?;
        let deferred = |id: &str| self.placement(id).is_some_and(|p| p.deferred);
        Ok(self.search_where(query, limit, deferred).into_iter().map(|h| h.id).collect())
    }

    /// Answers a client-executed OpenAI Responses `tool_search_call` (its `call_id` and
    /// `arguments`, see [`ToolSearchMode::Client`]): the `tool_search_output` input item with
    /// the found tools' definitions; they are also loaded into `loaded`.
    pub fn tool_search_output(&self, call_id: &str, args: &Value, loaded: &mut LoadedTools) -> Result<Value, ToolError> {
        let hits = self.find(args)?;
        let mut tools = Vec::with_capacity(hits.len());
        for id in &hits {
            let Ok(i) = self.tools.binary_search_by(|t| t.spec().id.as_str().cmp(id)) else {
                continue;
            };
            let strict = self.tools[i].spec().policy.strict;
            if let Ok(entry) = self.entry(i, Dialect::OpenAiResponses, strict) {
                tools.push(serde_json::from_str::<Value>(entry.json.get()).unwrap_or(Value::Null));
            }
        }
        loaded.extend(hits);
        Ok(json!({"type": "tool_search_output", "call_id": call_id, "execution": "client", "status": "completed", "tools": tools}))
    }

    /// Answers a call of Anthropic's client-side [`SEARCH_TOOL`] ([`ToolSearchMode::Client`]):
    /// the `content` of its `tool_result`, one `{type: "tool_reference", tool_name}` block per
    /// tool found (Anthropic then loads their definitions), or a text block when none matched;
    /// the tools are also loaded into `loaded`.
    pub fn tool_references(&self, args: &Value, loaded: &mut LoadedTools) -> Result<Value, ToolError> {
        let hits = self.find(args)?;
        let blocks: Vec<Value> = hits
            .iter()
            .map(|id| json!({"type": "tool_reference", "tool_name": self.provider_name(Dialect::Anthropic, id).unwrap_or(id)}))
            .collect();
        loaded.extend(hits);
        if blocks.is_empty() {
            return Ok(json!([{"type": "text", "text": "No tool matched: search again with other words."}]));
        }
        Ok(Value::Array(blocks))
    }

    /// A `tool_choice` that lets the model call only the tools loaded up front and those in
    /// `loaded` (OpenAI's `allowed_tools`: Chat Completions and Responses), so a request can
    /// send the whole catalog, unchanged from turn to turn for the prompt cache, and still
    /// keep the deferred tools out of reach; `None` for dialects without it.
    pub fn allowed_tools(&self, dialect: Dialect, loaded: &LoadedTools) -> Option<Value> {
        let names = self
            .tools
            .iter()
            .zip(&self.placements)
            .filter(|(t, p)| !p.deferred || loaded.contains(&t.spec().id))
            .map(|(t, _)| self.provider_name(dialect, &t.spec().id).unwrap_or(&t.spec().id));
        match dialect {
            Dialect::OpenAiChat => {
                let tools: Vec<Value> = names.map(|n| json!({"type": "function", "function": {"name": n}})).collect();
                Some(json!({"type": "allowed_tools", "allowed_tools": {"mode": "auto", "tools": tools}}))
            }
            Dialect::OpenAiResponses => {
                let tools: Vec<Value> = names.map(|n| json!({"type": "function", "name": n})).collect();
                Some(json!({"type": "allowed_tools", "mode": "auto", "tools": tools}))
            }
            _ => None,
        }
    }

    /// The generated [`SEARCH_TOOL`] as an ordinary tool, answering with
    /// [`Catalog::answer_search`] for `dialect`: register it where a runtime runs the model's
    /// calls (the catalog's own registry will do: the search never returns it), and fold each of
    /// its results into the conversation's loaded set with [`LoadedTools::record`]. It holds
    /// the catalog weakly: once the catalog is dropped, its calls fail.
    pub fn search_tool(self: &Arc<Self>, dialect: Dialect) -> crate::tool::DynamicTool {
        let catalog = Arc::downgrade(self);
        let spec = search_spec();
        crate::tool::DynamicTool::builder(SEARCH_TOOL, spec.description)
            .input_schema(spec.schemas.input)
            .handler(move |input, _| {
                let answer = match catalog.upgrade() {
                    Some(catalog) => catalog.answer_search(dialect, &input, &mut LoadedTools::default()),
                    None => Err(ToolError::new("Tool search is no longer available in this conversation")),
                };
                async move { answer }
            })
            .expect("the search tool's own spec is valid")
    }

    /// [`Catalog::dispatch`] for a conversation that uses the generated tool search: a call of
    /// [`SEARCH_TOOL`] is answered ([`Catalog::answer_search`]) and loads tools into `loaded`;
    /// a deferred tool that is not loaded is refused as unknown (the model has not seen it);
    /// any other call runs as [`Catalog::dispatch`] runs it.
    pub async fn dispatch_deferred<'a>(
        &self,
        dialect: Dialect,
        name: &str,
        args: impl Into<CallArgs<'a>>,
        options: CallOptions,
        loaded: &mut LoadedTools,
    ) -> Result<ToolOutput, ToolError> {
        if name == SEARCH_TOOL && self.resolve(dialect, name).is_none() {
            let args = match args.into() {
                CallArgs::Value(v) => v,
                CallArgs::Text(t) if t.len() <= MAX_SEARCH_ARGS => serde_json::from_str(&t).map_err(|e| {
                    ToolError::new(format!("The arguments of `{SEARCH_TOOL}` are not JSON: {e}")).with_kind_of(ErrorKind::InvalidInput)
                })?,
                CallArgs::Text(_) => {
                    return Err(
                        ToolError::new(format!("The arguments of `{SEARCH_TOOL}` are too long")).with_kind_of(ErrorKind::InvalidInput)
                    );
                }
            };
            return self.answer_search(dialect, &args, loaded).map(ToolOutput::new);
        }
        if let Some(id) = self.resolve(dialect, name)
            && self.placement(id).is_some_and(|p| p.deferred)
            && !loaded.contains(id)
        {
            return Err(not_loaded(name));
        }
        self.dispatch(dialect, name, args, options).await
    }
}

/// The query and the number of tools a search call's arguments (`{"query": "...", "limit": 5}`)
/// ask for.
pub(crate) fn search_request(args: &Value) -> Result<(&str, usize), ToolError> {
    let Some(query) = args.get("query").and_then(Value::as_str) else {
        return Err(
            ToolError::new(format!("`{SEARCH_TOOL}` needs a `query`: what the tool should do, in a few words"))
                .with_kind_of(ErrorKind::InvalidInput),
        );
    };
    let limit = args
        .get("limit")
        .and_then(Value::as_u64)
        .map_or(DEFAULT_LIMIT, |l| usize::try_from(l).unwrap_or(MAX_LIMIT).clamp(1, MAX_LIMIT));
    Ok((query, limit))
}

/// The answer to a call of the generated [`SEARCH_TOOL`]: the tools found (`{name, description,
/// namespace?}`, best first), a note for the model and the `loaded` names.
pub(crate) fn search_answer(tools: Vec<Value>, loaded: Vec<String>) -> Value {
    let note = if tools.is_empty() {
        "No tool matched: search again with other words."
    } else {
        "These tools are loaded: call them from the next turn on."
    };
    json!({"tools": tools, "note": note, "loaded": loaded})
}

/// The refusal of a call of a deferred tool the conversation has not loaded (named as the
/// caller named it): an unknown tool to the model, which has not seen it, told to search first.
pub(crate) fn not_loaded(name: &str) -> ToolError {
    ToolError::new(format!("The tool `{name}` is not loaded: find it with `{SEARCH_TOOL}` first")).with_kind_of(ErrorKind::UnknownTool)
}

/// A namespace's description when none is set: the tools it holds (the first `names` of
/// `count`).
fn describe(namespace: &str, shown: &[&str], count: usize) -> String {
    let more = count.saturating_sub(shown.len());
    let more = if more > 0 { format!(" and {more} more") } else { String::new() };
    format!("The {namespace} tools: {}{more}.", shown.join(", "))
}
