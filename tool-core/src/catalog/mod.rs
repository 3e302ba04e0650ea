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

mod format;
pub mod names;
pub mod pass;
pub mod toolsmith;

use std::collections::BTreeMap;
use std::fmt;
use std::sync::{Arc, OnceLock};

use serde_json::Value;
use serde_json::value::RawValue;

use crate::call::{CallArgs, CallOptions};
use crate::dialect::Dialect;
use crate::error::{ErrorKind, ToolError};
use crate::registry::Registry;
use crate::tool::{Tool, ToolOutput};
use format::SchemaText;
use names::NameMap;
use pass::PassError;

/// How strictness is decided at export.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub enum Strictness {
    /// Each tool as its `strict` flag says.
    #[default]
    AsDeclared,
    /// Every tool strict (a schema that cannot be is an error, never a downgrade).
    All,
}

/// A dialect's tool list for one request, and what the passes warned about.
///
/// It serialises as the document in the dialect's exact shape, straight from the catalog's
/// cached entries; [`Export::document`] builds it as a value.
#[derive(Debug, Clone)]
pub struct Export {
    dialect: Dialect,
    entries: Vec<Arc<CachedEntry>>,
    /// Warnings (constraints removed for a target, per-request limits passed).
    pub warnings: Vec<String>,
}

impl PartialEq for Export {
    fn eq(&self, other: &Self) -> bool {
        self.dialect == other.dialect && self.warnings == other.warnings && self.document() == other.document()
    }
}

impl Export {
    /// The document as a JSON value.
    pub fn document(&self) -> Value {
        let parse = |e: &Arc<CachedEntry>| serde_json::from_str(e.json.get()).unwrap_or(Value::Null);
        format::document(self.dialect, self.entries.iter().map(parse).collect())
    }
}

impl serde::Serialize for Export {
    fn serialize<S: serde::Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        use serde::ser::SerializeMap;
        match format::wrapper(self.dialect) {
            None => serializer.collect_seq(self.entries.iter().map(|e| &*e.json)),
            Some(key) => {
                let mut map = serializer.serialize_map(Some(1))?;
                map.serialize_entry(key, &EntriesSeq(&self.entries))?;
                map.end()
            }
        }
    }
}

struct EntriesSeq<'a>(&'a [Arc<CachedEntry>]);

impl serde::Serialize for EntriesSeq<'_> {
    fn serialize<S: serde::Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        serializer.collect_seq(self.0.iter().map(|e| &*e.json))
    }
}

/// One tool's entry for one dialect and strictness, computed once per catalog: as a value and
/// already serialised, so exports after the first only copy bytes.
#[derive(Debug)]
struct CachedEntry {
    json: Box<RawValue>,
    warnings: Vec<String>,
    strict_input: Option<Value>,
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
        Catalog {
            name: name.into(),
            version: version.into(),
            registry,
            tools,
            names,
            names_in_order,
            entries,
            texts,
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
        Catalog::select(&self.name, &self.version, tools, self.registry.limits())
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

    /// The tool list in `dialect`, each tool strict as it declares.
    pub fn export(&self, dialect: Dialect) -> Result<Export, CatalogError> {
        self.export_with(dialect, Strictness::AsDeclared)
    }

    /// The tool list in `dialect` with the given strictness. Every tool that cannot be
    /// exported is reported (tool, path, rule); nothing is silently downgraded.
    pub fn export_with(&self, dialect: Dialect, strictness: Strictness) -> Result<Export, CatalogError> {
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
            entries,
            warnings,
        })
    }

    /// The cached entry of tool `i` for a dialect and strictness.
    fn entry(&self, i: usize, dialect: Dialect, strict: bool) -> &Cached {
        self.entries[i][slot(dialect, strict)].get_or_init(|| {
            let spec = self.tools[i].spec();
            let name = self.names_in_order[position(dialect)].get(i).unwrap_or(&spec.id);
            format::entry(dialect, spec, name, strict, &self.texts[i]).map(|e| {
                Arc::new(CachedEntry {
                    json: e.json,
                    warnings: e.warnings,
                    strict_input: e.strict_input,
                })
            })
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
