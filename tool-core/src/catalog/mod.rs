//! Catalogs: named, versioned selections of tools, exported in each provider's exact format
//! and dispatching the model's tool calls back.
//!
//! Owns [`Catalog`] (selection, export, name mapping, dispatch), [`Format`] and
//! [`CatalogError`]. The schema rewrites per target are [`pass`]'s, the field layouts
//! `format`'s, the name rules [`names`]', and our own versioned JSON [`toolsmith`]'s.
//!
//! ```
//! use tool_core::catalog::{Catalog, Format};
//! use tool_core::{DynamicTool, Registry};
//! use serde_json::json;
//!
//! let echo = DynamicTool::builder("text.echo", "Echo the text back")
//!     .input_schema(json!({"type": "object", "properties": {"text": {"type": "string"}}, "required": ["text"]}))
//!     .handler(|input, _| async move { Ok(input["text"].clone()) })
//!     .unwrap();
//! let catalog = Catalog::new("demo", "1.0.0", Registry::from_iter([echo]));
//! let tools = catalog.export(Format::OpenAi).unwrap().document();
//! // OpenAI forbids dots in names: the name is mapped, and calls are routed back.
//! let name = tools[0]["function"]["name"].as_str().unwrap();
//! assert!(name.starts_with("text_echo"));
//! # tokio::runtime::Runtime::new().unwrap().block_on(async {
//! let out = catalog.dispatch(Format::OpenAi, name, r#"{"text": "hi"}"#, Default::default()).await.unwrap();
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

use serde_json::value::RawValue;
use serde_json::Value;

use crate::call::{CallArgs, CallOptions};
use crate::error::{ErrorKind, ToolError};
use crate::registry::Registry;
use crate::tool::{Tool, ToolOutput};
use names::NameMap;
use pass::{PassError, Target};

/// An export format.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Format {
    /// OpenAI Chat Completions: `[{type: "function", function: {...}}]`.
    OpenAi,
    /// OpenAI Responses: `[{type: "function", name, parameters, strict}]`.
    OpenAiResponses,
    /// Anthropic Messages: `[{name, description, input_schema, ...}]`.
    Anthropic,
    /// Gemini `{functionDeclarations: [...]}` with `parameters` in the OpenAPI 3.0 subset.
    GeminiOpenApi,
    /// Gemini `{functionDeclarations: [...]}` with `parametersJsonSchema`.
    GeminiJsonSchema,
    /// MCP `tools/list` result: `{tools: [...]}`.
    Mcp,
}

impl Format {
    /// Every format.
    pub const ALL: [Format; 6] = [
        Format::OpenAi,
        Format::OpenAiResponses,
        Format::Anthropic,
        Format::GeminiOpenApi,
        Format::GeminiJsonSchema,
        Format::Mcp,
    ];

    /// The schema target behind the format.
    pub fn target(self) -> Target {
        match self {
            Format::OpenAi => Target::OpenAiChat,
            Format::OpenAiResponses => Target::OpenAiResponses,
            Format::Anthropic => Target::Anthropic,
            Format::GeminiOpenApi => Target::GeminiOpenApi,
            Format::GeminiJsonSchema => Target::GeminiJsonSchema,
            Format::Mcp => Target::Mcp,
        }
    }

    fn strict_capable(self) -> bool {
        matches!(self, Format::OpenAi | Format::OpenAiResponses | Format::Anthropic)
    }
}

/// How strictness is decided at export.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub enum Strictness {
    /// Each tool as its `strict` flag says.
    #[default]
    AsDeclared,
    /// Every tool strict (a schema that cannot be is an error, never a downgrade).
    All,
}

/// A format's tool list for one request, and what the passes warned about.
///
/// It serialises as the document in the format's exact shape, straight from the catalog's
/// cached entries; [`Export::document`] builds it as a value.
#[derive(Debug, Clone)]
pub struct Export {
    target: Target,
    entries: Vec<Arc<CachedEntry>>,
    /// Warnings (constraints removed for a target, per-request limits passed).
    pub warnings: Vec<String>,
}

impl PartialEq for Export {
    fn eq(&self, other: &Self) -> bool {
        self.target == other.target && self.warnings == other.warnings && self.document() == other.document()
    }
}

impl Export {
    /// The document as a JSON value.
    pub fn document(&self) -> Value {
        let parse = |e: &Arc<CachedEntry>| serde_json::from_str(e.json.get()).unwrap_or(Value::Null);
        format::document(self.target, self.entries.iter().map(parse).collect())
    }
}

impl serde::Serialize for Export {
    fn serialize<S: serde::Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        use serde::ser::SerializeMap;
        match self.target {
            Target::OpenAiChat | Target::OpenAiResponses | Target::Anthropic => {
                serializer.collect_seq(self.entries.iter().map(|e| &*e.json))
            }
            Target::GeminiOpenApi | Target::GeminiJsonSchema | Target::Mcp => {
                let key = if self.target == Target::Mcp {
                    "tools"
                } else {
                    "functionDeclarations"
                };
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

/// One tool's entry for one target and strictness, computed once per catalog: as a value and
/// already serialised, so exports after the first only copy bytes.
#[derive(Debug)]
struct CachedEntry {
    json: Box<RawValue>,
    warnings: Vec<String>,
    strict_input: Option<Value>,
}

type Cached = Result<Arc<CachedEntry>, PassError>;

/// Slots per tool: every target, strict and not.
const SLOTS: usize = 12;

fn slot(target: Target, strict: bool) -> usize {
    let t = Target::ALL.iter().position(|x| *x == target).unwrap_or(0);
    t * 2 + usize::from(strict)
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
    names: BTreeMap<Target, NameMap>,
    entries: Vec<[OnceLock<Cached>; SLOTS]>,
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
        let names = pass::Target::ALL
            .into_iter()
            .map(|t| (t, NameMap::build(t, ids.iter().copied())))
            .collect();
        let entries = tools.iter().map(|_| std::array::from_fn(|_| OnceLock::new())).collect();
        Catalog {
            name: name.into(),
            version: version.into(),
            registry,
            tools,
            names,
            entries,
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
        self.filtered(|t| t.spec().tags.iter().any(|x| x == tag))
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
            s.crate_name == path || s.module_path == path || s.module_path.strip_prefix(path).is_some_and(|rest| rest.starts_with("::"))
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

    /// The name a tool has in a format.
    pub fn provider_name(&self, format: Format, id: &str) -> Option<&str> {
        self.names.get(&format.target())?.name(id)
    }

    /// The tool id behind a name a model used in a format.
    pub fn resolve(&self, format: Format, name: &str) -> Option<&str> {
        self.names.get(&format.target())?.id(name)
    }

    /// The tool list in `format`, each tool strict as it declares.
    pub fn export(&self, format: Format) -> Result<Export, CatalogError> {
        self.export_with(format, Strictness::AsDeclared)
    }

    /// The tool list in `format` with the given strictness. Every tool that cannot be
    /// exported is reported (tool, path, rule); nothing is silently downgraded.
    pub fn export_with(&self, format: Format, strictness: Strictness) -> Result<Export, CatalogError> {
        let target = format.target();
        let mut entries = Vec::with_capacity(self.tools.len());
        let mut warnings = Vec::new();
        let mut errors = Vec::new();
        let mut strict_inputs = Vec::new();
        for (i, tool) in self.tools.iter().enumerate() {
            let spec = tool.spec();
            let strict = format.strict_capable() && (spec.strict || strictness == Strictness::All);
            match self.entry(i, target, strict) {
                Ok(entry) => {
                    warnings.extend(entry.warnings.iter().cloned());
                    if target == Target::Anthropic {
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
        if target == Target::Anthropic {
            let refs: Vec<(bool, &Value)> = strict_inputs
                .iter()
                .filter_map(|(s, e)| e.strict_input.as_ref().map(|v| (*s, v)))
                .collect();
            warnings.extend(pass::anthropic_request_warnings(&refs));
        }
        Ok(Export { target, entries, warnings })
    }

    /// The cached entry of tool `i` for a target and strictness.
    fn entry(&self, i: usize, target: Target, strict: bool) -> &Cached {
        self.entries[i][slot(target, strict)].get_or_init(|| {
            let spec = self.tools[i].spec();
            let name = self.names[&target].name(&spec.id).unwrap_or(&spec.id);
            format::entry(target, spec, name, strict).map(|e| {
                Arc::new(CachedEntry {
                    json: e.json,
                    warnings: e.warnings,
                    strict_input: e.strict_input,
                })
            })
        })
    }

    /// Routes a model's tool call (by the name it has in `format`) to the tool and calls it
    /// with the registry's validation against the tool's original contract (so a strict-mode
    /// `null` for an optional field counts as absent).
    pub async fn dispatch<'a>(
        &self,
        format: Format,
        name: &str,
        args: impl Into<CallArgs<'a>>,
        options: CallOptions,
    ) -> Result<ToolOutput, ToolError> {
        match self.resolve(format, name) {
            Some(id) => self.registry.call(id, args, options).await,
            None => {
                let known: Vec<&str> = self.names[&format.target()].names().collect();
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
