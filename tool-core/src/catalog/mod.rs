//! Catalogs: named, versioned selections of tools, exported in each provider's exact format
//! and dispatching the model's tool calls back.
//!
//! Owns [`Catalog`] (selection, export, name mapping, dispatch), [`Export`] and
//! [`CatalogError`]. Which provider is a [`Dialect`]; the schema rewrites per dialect are
//! [`pass`]'s, the field layouts `format`'s, the name rules [`names`]', and our own versioned
//! JSON [`toolsmith`]'s. Must not know tool results or streams (the dialect layer's others).
//!
//! ```
//! use tool_core::catalog::Catalog;
//! use tool_core::{Dialect, DynamicTool, Registry};
//! use serde_json::json;
//!
//! let echo = DynamicTool::builder("text.echo", "Echo the text back")
//!     .input_schema(json!({"type": "object", "properties": {"text": {"type": "string"}}, "required": ["text"]}))
//!     .handler(|input, _| async move { Ok(input["text"].clone()) })
//!     .unwrap();
//! let catalog = Catalog::new("demo", "1.0.0", Registry::from_iter([echo]));
//! let tools = catalog.export(Dialect::OpenAiChat).unwrap().document();
//! // OpenAI forbids dots in names: the name is mapped, and calls are routed back.
//! let name = tools[0]["function"]["name"].as_str().unwrap();
//! assert!(name.starts_with("text_echo"));
//! # tokio::runtime::Runtime::new().unwrap().block_on(async {
//! let out = catalog.dispatch(Dialect::OpenAiChat, name, r#"{"text": "hi"}"#, Default::default()).await.unwrap();
//! assert_eq!(out.value(), json!("hi"));
//! # });
//! ```

mod deferred;
mod expand;
mod export;
mod fields;
mod format;
pub mod names;
pub mod pass;
mod placement;
mod search;
pub mod toolsmith;

pub use crate::context::Deferral;
#[cfg(feature = "runtime")]
pub(crate) use deferred::not_loaded;
pub use deferred::{LoadedTools, SEARCH_TOOL, ToolSearchMode};
#[cfg(feature = "mcp")]
pub(crate) use deferred::{search_answer, search_request, search_spec};
pub use export::Export;
#[cfg(feature = "cli")]
pub(crate) use fields::mcp_loss;
pub use placement::{InvalidNamespace, Placement};
pub use search::{SearchHit, SearchIndex};

use std::collections::BTreeMap;
use std::fmt;
use std::sync::{Arc, Mutex, OnceLock};

use serde_json::Value;

use crate::call::{CallArgs, CallOptions};
use crate::dialect::Dialect;
use crate::error::{ErrorKind, ToolError};
use crate::registry::Registry;
use crate::tool::{Tool, ToolOutput};
use export::{CachedEntry, Item};
use format::SchemaText;
use names::NameMap;
use pass::PassError;
use placement::{Overrides, Selector};

/// How strictness is decided at export.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub enum Strictness {
    /// Each tool as its `strict` flag says.
    #[default]
    AsDeclared,
    /// Every tool strict (a schema that cannot be is an error, never a downgrade).
    All,
}

type Cached = Result<Arc<CachedEntry>, PassError>;

/// How many dialects there are.
const DIALECTS: usize = Dialect::ALL.len();

/// Slots per tool: every dialect, strict and not.
const SLOTS: usize = DIALECTS * 2;

/// A dialect's position in [`Dialect::ALL`].
fn position(dialect: Dialect) -> usize {
    Dialect::ALL.iter().position(|x| *x == dialect).unwrap_or(0)
}

fn slot(dialect: Dialect, strict: bool) -> usize {
    position(dialect) * 2 + usize::from(strict)
}

/// A search index that follows a registry: built at its first search, brought up to the
/// registry's tools at each search after a change (new ones indexed, removed ones dropped,
/// replaced ones indexed again).
#[derive(Debug, Default)]
pub(crate) struct LiveIndex(Mutex<Option<(u64, SearchIndex)>>);

impl LiveIndex {
    /// [`SearchIndex::search_where`] over `registry`'s tools as they are now.
    pub(crate) fn search_where(&self, registry: &Registry, query: &str, k: usize, keep: impl Fn(&str) -> bool) -> Vec<SearchHit> {
        let mut guard = self.0.lock().unwrap_or_else(|p| p.into_inner());
        let version = registry.version();
        match guard.as_mut() {
            Some((v, _)) if *v == version => {}
            Some((v, index)) => {
                sync_index(index, registry);
                *v = version;
            }
            None => {
                let tools = registry.tools();
                *guard = Some((version, SearchIndex::new(tools.iter().map(|t| t.spec()))));
            }
        }
        guard
            .as_ref()
            .map(|(_, index)| index.search_where(query, k, keep))
            .unwrap_or_default()
    }
}

fn sync_index(index: &mut SearchIndex, registry: &Registry) {
    let tools = registry.tools();
    let now: std::collections::HashSet<&str> = tools.iter().map(|t| t.spec().id.as_str()).collect();
    let gone: Vec<String> = index.ids().filter(|id| !now.contains(id)).map(str::to_owned).collect();
    for id in gone {
        index.remove(&id);
    }
    for tool in &tools {
        if !index.indexed_same(tool.spec()) {
            index.insert(tool.spec());
        }
    }
}

/// Every tool that could not be exported, each with its path and rule.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub struct CatalogError(pub Vec<PassError>);

impl fmt::Display for CatalogError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "the catalog could not be exported:")?;
        for e in &self.0 {
            write!(f, "\n- {e}")?;
        }
        Ok(())
    }
}

/// A named, versioned selection of tools: exported in provider formats, and the way the
/// model's calls come back in.
pub struct Catalog {
    name: String,
    version: String,
    registry: Arc<Registry>,
    tools: Vec<Arc<dyn Tool>>,
    names: BTreeMap<Dialect, NameMap>,
    /// Each tool's name per dialect, by `Dialect::ALL` position then tool position.
    names_in_order: [Vec<String>; DIALECTS],
    entries: Vec<[OnceLock<Cached>; SLOTS]>,
    /// Each tool's input and output schemas serialised, shared by the formats that send them
    /// as they are.
    texts: Vec<[OnceLock<SchemaText>; 2]>,
    /// The catalog's overrides of the tools' own tool-search defaults.
    overrides: Overrides,
    /// Each tool's placement under `overrides`, in tool order.
    placements: Vec<Placement>,
    /// The search index, built at the first search, and the registry version it reflects.
    index: LiveIndex,
    /// The code execution versions the tools' `allowed_callers` name (see
    /// `fields::code_versions`), read once.
    code_versions: Vec<String>,
}

impl fmt::Debug for Catalog {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Catalog")
            .field("name", &self.name)
            .field("version", &self.version)
            .field("tools", &self.registry.ids())
            .finish()
    }
}

impl Catalog {
    /// A catalog over every tool of a registry.
    pub fn new(name: impl Into<String>, version: impl Into<String>, registry: Registry) -> Catalog {
        let registry = Arc::new(registry);
        let tools = registry.tools();
        let ids: Vec<&str> = tools.iter().map(|t| t.spec().id.as_str()).collect();
        let mut names = BTreeMap::new();
        let names_in_order = std::array::from_fn(|d| {
            let dialect = Dialect::ALL[d];
            let (map, in_order) = NameMap::build_in_order(dialect, ids.iter().copied());
            names.insert(dialect, map);
            in_order
        });
        let entries = tools.iter().map(|_| std::array::from_fn(|_| OnceLock::new())).collect();
        let texts = tools.iter().map(|_| std::array::from_fn(|_| OnceLock::new())).collect();
        let overrides = Overrides::default();
        let placements = tools.iter().map(|t| overrides.place(t.spec())).collect();
        let code_versions = fields::code_versions(tools.iter().map(|t| t.spec()));
        Catalog {
            name: name.into(),
            version: version.into(),
            registry,
            tools,
            names,
            names_in_order,
            entries,
            texts,
            overrides,
            placements,
            index: LiveIndex::default(),
            code_versions,
        }
    }

    /// Every `#[tool]` linked into the process ([`Registry::global`]), as the catalog `default`
    /// version `0.0.0`; rename it with [`Catalog::named`] and [`Catalog::versioned`].
    ///
    /// # Panics
    /// When the global registry cannot be built (see [`Registry::global`]).
    pub fn from_registry() -> Catalog {
        let global = Registry::global();
        Catalog::select("default", "0.0.0", global.tools(), global.limits())
    }

    fn select(name: &str, version: &str, tools: Vec<Arc<dyn Tool>>, limits: crate::Limits) -> Catalog {
        // The tools already passed a registry's checks (unique ids, compiling schemas), so a
        // subset of them cannot fail to build.
        let registry = Registry::try_from_tools(tools).unwrap_or_default().with_limits(limits);
        Catalog::new(name, version, registry)
    }

    fn filtered(self, keep: impl Fn(&dyn Tool) -> bool) -> Catalog {
        let tools = self.registry.tools().into_iter().filter(|t| keep(&**t)).collect();
        Catalog::select(&self.name, &self.version, tools, self.registry.limits()).with_overrides(self.overrides)
    }

    fn with_overrides(mut self, overrides: Overrides) -> Catalog {
        self.placements = self.tools.iter().map(|t| overrides.place(t.spec())).collect();
        self.overrides = overrides;
        self
    }

    /// Defers every tool but the `core` ones, whatever the tools declare: the core set loads
    /// up front, the rest only once the model finds them with tool search.
    ///
    /// ```
    /// use tool_core::catalog::Catalog;
    /// use tool_core::{DynamicTool, Registry};
    ///
    /// let tool = |id: &str| DynamicTool::builder(id, "A tool").handler(|_, _| async { Ok(serde_json::json!(null)) }).unwrap();
    /// let catalog = Catalog::new("agent", "1.0.0", Registry::from_iter([tool("search_web"), tool("crm_find"), tool("crm_update")]))
    ///     .defer_all_except(["search_web"]);
    /// assert!(!catalog.placement("search_web").unwrap().deferred);
    /// assert!(catalog.placement("crm_find").unwrap().deferred);
    /// ```
    pub fn defer_all_except<'a>(self, core: impl IntoIterator<Item = &'a str>) -> Catalog {
        self.deferring(Deferral::all_except(core))
    }

    /// Loads every tool up front, whatever the tools declare (`#[tool(defer_loading)]`).
    pub fn defer_none(self) -> Catalog {
        self.deferring(Deferral::none())
    }

    /// Defers the tools `deferral` selects, whatever the tools declare. Hand the same rule to
    /// the runtime's loaded-set check ([`CallOptions::deferral`], with
    /// [`Catalog::deferral`]) and to an MCP server (`McpConfig::deferral`), so every part
    /// agrees on which tools wait to be found.
    ///
    /// ```
    /// use tool_core::catalog::{Catalog, Deferral};
    /// use tool_core::{DynamicTool, Registry};
    ///
    /// let tool = |id: &str, tag: &str| DynamicTool::builder(id, "A tool").with_spec(|s| s.presentation.tags = vec![tag.into()]).handler(|_, _| async { Ok(serde_json::json!(null)) }).unwrap();
    /// let catalog = Catalog::new("agent", "1.0.0", Registry::from_iter([tool("search_web", "core"), tool("crm_find", "crm")]))
    ///     .deferring(Deferral::tagged(["crm"]));
    /// assert!(catalog.placement("crm_find").unwrap().deferred);
    /// assert!(!catalog.placement("search_web").unwrap().deferred);
    /// assert_eq!(catalog.deferral(), &Deferral::tagged(["crm"]));
    /// ```
    pub fn deferring(self, deferral: Deferral) -> Catalog {
        let mut overrides = self.overrides.clone();
        overrides.deferral = deferral;
        self.with_overrides(overrides)
    }

    /// The catalog's deferral rule ([`Deferral::as_declared`] unless one was set).
    pub fn deferral(&self) -> &Deferral {
        &self.overrides.deferral
    }

    /// Puts the tools carrying `tag` in `namespace` (over their own; an earlier rule that
    /// selects a tool wins).
    pub fn namespace_by_tag(self, tag: &str, namespace: impl Into<String>) -> Result<Catalog, InvalidNamespace> {
        self.namespace_rule(Selector::Tag(tag.to_owned()), namespace.into())
    }

    /// Puts the tools defined in this module path or below it (`my_crate::crm`), or in this
    /// crate (`my-crate`), in `namespace` (over their own; an earlier rule that selects a tool
    /// wins).
    pub fn namespace_by_module(self, path: &str, namespace: impl Into<String>) -> Result<Catalog, InvalidNamespace> {
        self.namespace_rule(Selector::Module(path.to_owned()), namespace.into())
    }

    fn namespace_rule(self, selector: Selector, namespace: String) -> Result<Catalog, InvalidNamespace> {
        let mut overrides = self.overrides.clone();
        overrides.namespaces.push((selector, placement::checked(namespace)?));
        Ok(self.with_overrides(overrides))
    }

    /// What the model is told a namespace holds, where a format lists namespaces (OpenAI
    /// Responses); without it, the namespace's tools are named.
    pub fn describe_namespace(mut self, namespace: impl Into<String>, description: impl Into<String>) -> Catalog {
        let namespace = namespace.into();
        self.overrides.descriptions.retain(|(n, _)| *n != namespace);
        self.overrides.descriptions.push((namespace, description.into()));
        self
    }

    /// Marks the last tool of every export as a prompt-cache breakpoint, so the provider
    /// caches the tool definitions between requests: Anthropic's `"cache_control": {"type":
    /// "ephemeral"}` on the last tool (the search tool, in a deferred export). Formats without
    /// it (OpenAI caches by itself; Gemini, MCP) say so in the export's warnings.
    ///
    /// ```
    /// use tool_core::catalog::Catalog;
    /// use tool_core::{Dialect, DynamicTool, Registry};
    ///
    /// let tool = |id: &str| DynamicTool::builder(id, "A tool").handler(|_, _| async { Ok(serde_json::json!(null)) }).unwrap();
    /// let catalog = Catalog::new("agent", "1.0.0", Registry::from_iter([tool("a"), tool("b")])).cache_tool_definitions();
    /// let tools = catalog.export(Dialect::Anthropic).unwrap().document();
    /// assert_eq!(tools[1]["cache_control"], serde_json::json!({"type": "ephemeral"}));
    /// assert!(tools[0].get("cache_control").is_none());
    /// ```
    pub fn cache_tool_definitions(mut self) -> Catalog {
        self.overrides.cache_tools = true;
        self
    }

    /// Where a tool sits for tool search: deferred or not, and its namespace (the catalog's
    /// overrides, else the tool's own `defer_loading` and `namespace`).
    pub fn placement(&self, id: &str) -> Option<&Placement> {
        let i = self.tools.binary_search_by(|t| t.spec().id.as_str().cmp(id)).ok()?;
        self.placements.get(i)
    }

    /// Renames the catalog.
    pub fn named(mut self, name: impl Into<String>) -> Catalog {
        self.name = name.into();
        self
    }

    /// Sets the catalog's version.
    pub fn versioned(mut self, version: impl Into<String>) -> Catalog {
        self.version = version.into();
        self
    }

    /// Only tools carrying `tag` (`#[tool(tags = [...])]`).
    pub fn tagged(self, tag: &str) -> Catalog {
        self.filtered(|t| t.spec().presentation.tags.iter().any(|x| x == tag))
    }

    /// Only the tools with these ids.
    pub fn only<'a>(self, ids: impl IntoIterator<Item = &'a str>) -> Catalog {
        let ids: Vec<&str> = ids.into_iter().collect();
        self.filtered(|t| ids.contains(&t.spec().id.as_str()))
    }

    /// Only tools defined in this module path or below it (`my_crate::weather`), or in this
    /// crate (`my-crate`).
    pub fn from_module(self, path: &str) -> Catalog {
        self.filtered(|t| {
            let s = &t.spec().source;
            crate::registry::defined_in(&s.crate_name, &s.module_path, path)
        })
    }

    /// The catalog's name.
    pub fn name(&self) -> &str {
        &self.name
    }

    /// The catalog's version.
    pub fn version(&self) -> &str {
        &self.version
    }

    /// The tools, ordered by id.
    pub fn tools(&self) -> Vec<Arc<dyn Tool>> {
        self.tools.clone()
    }

    /// The registry behind the catalog.
    pub fn registry(&self) -> &Registry {
        &self.registry
    }

    /// The name a tool has in a dialect.
    pub fn provider_name(&self, dialect: Dialect, id: &str) -> Option<&str> {
        self.names.get(&dialect)?.name(id)
    }

    /// The tool id behind a name a model used in a dialect.
    pub fn resolve(&self, dialect: Dialect, name: &str) -> Option<&str> {
        self.names.get(&dialect)?.id(name)
    }

    /// The `k` tools of the catalog's registry that best match `query`, best first, with their
    /// scores (BM25 over each tool's id, title, namespace, tags, description and parameter
    /// names and descriptions: see [`SearchIndex`]). The index is built at the first search
    /// and follows the registry: tools inserted or removed since are indexed or dropped at the
    /// next search.
    ///
    /// ```
    /// use tool_core::catalog::Catalog;
    /// use tool_core::{DynamicTool, Registry};
    ///
    /// let tool = |id: &str, d: &str| DynamicTool::builder(id, d).handler(|_, _| async { Ok(serde_json::json!(null)) }).unwrap();
    /// let catalog = Catalog::new("agent", "1.0.0", Registry::from_iter([
    ///     tool("calendar.create_event", "Create an event in the user's calendar"),
    ///     tool("mail.send", "Send an email message"),
    /// ]));
    /// let hits = catalog.search("schedule a calendar event", 3);
    /// assert_eq!(hits[0].id, "calendar.create_event");
    /// catalog.registry().insert(tool("weather.forecast", "The weather forecast for a city")).unwrap();
    /// assert_eq!(catalog.search("weather in Paris", 1)[0].id, "weather.forecast");
    /// ```
    pub fn search(&self, query: &str, k: usize) -> Vec<SearchHit> {
        self.search_where(query, k, |_| true)
    }

    /// [`Catalog::search`] among the tools `keep` accepts (by id).
    pub fn search_where(&self, query: &str, k: usize, keep: impl Fn(&str) -> bool) -> Vec<SearchHit> {
        self.index.search_where(&self.registry, query, k, keep)
    }

    /// The tool list in `dialect`, each tool strict as it declares.
    pub fn export(&self, dialect: Dialect) -> Result<Export, CatalogError> {
        self.export_with(dialect, Strictness::AsDeclared)
    }

    /// The tool list in `dialect` with the given strictness. Every tool that cannot be
    /// exported is reported (tool, path, rule); nothing is silently downgraded.
    pub fn export_with(&self, dialect: Dialect, strictness: Strictness) -> Result<Export, CatalogError> {
        self.export_entries(dialect, strictness).map(|e| self.finish(e))
    }

    /// The export's last touches, whatever built its items: the tool programmatic callers need
    /// (see `fields::programmatic_tool`), then the cache breakpoint.
    fn finish(&self, mut export: Export) -> Export {
        if let Some(tool) = fields::programmatic_tool(export.dialect, &self.code_versions, &mut export.warnings)
            .and_then(|v| serde_json::value::to_raw_value(&v).ok())
        {
            export.items.push(export::Item::Value(Arc::from(tool)));
        }
        if self.overrides.cache_tools {
            if export.dialect == Dialect::Anthropic {
                if let Some(last) = export.items.pop() {
                    export.items.push(last.cache_breakpoint());
                }
            } else {
                export.warnings.push(format!(
                    "{} cannot carry `cache_control` (Anthropic's): the tool definitions are not marked for caching",
                    export.dialect.as_str()
                ));
            }
        }
        export
    }

    /// The tools' entries in `dialect`, before [`Catalog::finish`].
    fn export_entries(&self, dialect: Dialect, strictness: Strictness) -> Result<Export, CatalogError> {
        let mut entries = Vec::with_capacity(self.tools.len());
        let mut warnings = Vec::new();
        let mut errors = Vec::new();
        let mut strict_inputs = Vec::new();
        for (i, tool) in self.tools.iter().enumerate() {
            let spec = tool.spec();
            let strict = dialect.supports_strict() && (spec.policy.strict || strictness == Strictness::All);
            match self.entry(i, dialect, strict) {
                Ok(entry) => {
                    warnings.extend(entry.warnings.iter().cloned());
                    if dialect == Dialect::Anthropic {
                        strict_inputs.push((strict, entry.clone()));
                    }
                    entries.push(entry.clone());
                }
                Err(e) => errors.push(e.clone()),
            }
        }
        if !errors.is_empty() {
            return Err(CatalogError(errors));
        }
        if dialect == Dialect::Anthropic {
            let refs: Vec<(bool, &Value)> = strict_inputs
                .iter()
                .filter_map(|(s, e)| e.strict_input.as_ref().map(|v| (*s, v)))
                .collect();
            warnings.extend(pass::anthropic_request_warnings(&refs));
        }
        Ok(Export {
            dialect,
            items: entries.into_iter().map(Item::Entry).collect(),
            warnings,
        })
    }

    /// The cached entry of tool `i` for a dialect and strictness.
    fn entry(&self, i: usize, dialect: Dialect, strict: bool) -> &Cached {
        self.entries[i][slot(dialect, strict)].get_or_init(|| {
            let spec = self.tools[i].spec();
            let name = self.names_in_order[position(dialect)].get(i).unwrap_or(&spec.id);
            format::entry(dialect, spec, name, strict, &self.texts[i])
                .map(|e| Arc::new(CachedEntry::new(e.json, e.warnings, e.strict_input)))
        })
    }

    /// Routes a model's tool call (by the name it has in `dialect`) to the tool and calls it
    /// with the registry's validation against the tool's original contract (so a strict-mode
    /// `null` for an optional field counts as absent).
    pub async fn dispatch<'a>(
        &self,
        dialect: Dialect,
        name: &str,
        args: impl Into<CallArgs<'a>>,
        options: CallOptions,
    ) -> Result<ToolOutput, ToolError> {
        match self.resolve(dialect, name) {
            Some(id) => self.registry.call(id, args, options).await,
            None => {
                let known: Vec<&str> = self.names[&dialect].names().collect();
                Err(ToolError::with_details(
                    format!(
                        "There is no tool `{name}` in catalog `{}`. Available tools: {}",
                        self.name,
                        known.join(", ")
                    ),
                    serde_json::json!({ "available": known }),
                )
                .with_kind_of(ErrorKind::UnknownTool))
            }
        }
    }
}
