//! Our own versioned catalog file: every dialect's schema, the spec metadata and a content hash
//! per tool, from which a [`Catalog`] is loaded back and served or dispatched remotely.
//!
//! Owns the `toolsmith-catalog` document (format version 1): writing it from a catalog,
//! checking it (format version, hashes) and loading it back with a dispatcher that runs the
//! tools wherever they live.

use std::collections::BTreeMap;
use std::future::Future;
use std::sync::Arc;

use serde_json::{Map, Value, json};

use super::Catalog;
use crate::context::{RequestContext, ToolContext};
use crate::dialect::Dialect;
use crate::error::ToolError;
use crate::fingerprint;
use crate::registry::Registry;
use crate::spec::{ApprovalRule, BackgroundSpec, McpSpec, ToolSpec};
use crate::tool::{BoxFuture, DynamicTool, Tool};

/// The `format` field of the document.
pub const FORMAT: &str = "toolsmith-catalog";
/// The document's format version.
pub const FORMAT_VERSION: u64 = 1;

/// A catalog file that cannot be loaded.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("the toolsmith catalog cannot be loaded: {0}")]
pub struct LoadError(pub String);

/// The content hash of a tool entry: `sha256:` and the hex digest of the entry's JSON,
/// canonicalised as tool fingerprints are (RFC 8785, [`crate::fingerprint::hash`]), without its
/// `hash` field.
pub fn content_hash(entry: &Value) -> String {
    let mut entry = entry.clone();
    if let Some(obj) = entry.as_object_mut() {
        obj.remove("hash");
    }
    fingerprint::hash(&entry)
}

fn spec_json(spec: &ToolSpec) -> Value {
    let approval = match spec.policy.require_approval {
        ApprovalRule::Never => "never",
        ApprovalRule::Always => "always",
        ApprovalRule::Predicate => "predicate",
    };
    let mut entry = json!({
        "id": spec.id,
        "title": spec.title,
        "description": spec.description,
        "strict": spec.policy.strict,
        "tags": spec.presentation.tags,
        "requireApproval": approval,
        "mcp": spec.presentation.mcp,
        "providerOptions": spec.presentation.provider_options,
        "inputExamples": spec.presentation.input_examples,
        "background": spec.policy.background,
        "source": spec.source,
        "schemas": {
            "input": spec.schemas.input,
            "output": spec.schemas.output,
            "suspend": spec.schemas.suspend,
            "resume": spec.schemas.resume,
            "context": spec.schemas.request_context,
        },
    });
    // Written only when set, so the entries (and hashes) of other tools stay as they were.
    if spec.behaviour.client_side {
        entry["clientSide"] = Value::Bool(true);
    }
    let p = &spec.presentation;
    if p.defer_loading {
        entry["deferLoading"] = Value::Bool(true);
    }
    if let Some(namespace) = &p.namespace {
        entry["namespace"] = json!(namespace);
    }
    if let Some(eager) = p.eager_input_streaming {
        entry["eagerInputStreaming"] = Value::Bool(eager);
    }
    if !p.allowed_callers.is_empty() {
        entry["allowedCallers"] = json!(p.allowed_callers);
    }
    if let Some(behavior) = p.behavior {
        entry["behavior"] = json!(behavior);
    }
    entry
}

/// Writes the document for a catalog. Each dialect's result is recorded per tool (under the
/// dialect's name, in the document's `targets`): its name, its entry, or the error that keeps
/// the tool out of that dialect.
pub fn to_document(catalog: &Catalog) -> Value {
    let tools: Vec<Value> = catalog
        .tools()
        .iter()
        .enumerate()
        .map(|(i, tool)| {
            let spec = tool.spec();
            let mut entry = spec_json(spec);
            let targets: Map<String, Value> = Dialect::ALL
                .into_iter()
                .map(|dialect| {
                    let name = catalog.names[&dialect].name(&spec.id).unwrap_or(&spec.id);
                    let strict = spec.policy.strict && dialect.supports_strict();
                    let result = match catalog.entry(i, dialect, strict) {
                        Ok(entry) => json!({ "name": name, "strict": strict, "entry": entry.json, "warnings": entry.warnings }),
                        Err(e) => json!({ "name": name, "error": e.to_string() }),
                    };
                    (dialect.as_str().to_owned(), result)
                })
                .collect();
            entry["targets"] = Value::Object(targets);
            entry["fingerprint"] = Value::String(spec.fingerprint().0);
            entry["hash"] = Value::String(content_hash(&entry));
            entry
        })
        .collect();
    json!({
        "format": FORMAT,
        "formatVersion": FORMAT_VERSION,
        "name": catalog.name(),
        "version": catalog.version(),
        "generator": concat!("tool-core ", env!("CARGO_PKG_VERSION")),
        "tools": tools,
    })
}

/// Runs a loaded tool: `(tool id, validated arguments, context)` to its JSON output.
pub type Dispatcher = Arc<dyn Fn(String, Value, ToolContext<RequestContext>) -> BoxFuture<'static, Result<Value, ToolError>> + Send + Sync>;

/// Wraps an async function as a [`Dispatcher`].
pub fn dispatcher<F, Fut>(f: F) -> Dispatcher
where
    F: Fn(String, Value, ToolContext<RequestContext>) -> Fut + Send + Sync + 'static,
    Fut: Future<Output = Result<Value, ToolError>> + Send + 'static,
{
    Arc::new(move |id, args, cx| Box::pin(f(id, args, cx)))
}

fn field<'a>(tool: &'a Value, key: &str, id: &str) -> Result<&'a Value, LoadError> {
    tool.get(key).ok_or_else(|| LoadError(format!("tool `{id}` has no `{key}`")))
}

fn opt<T: serde::de::DeserializeOwned>(tool: &Value, key: &str, id: &str) -> Result<Option<T>, LoadError> {
    match tool.get(key) {
        None | Some(Value::Null) => Ok(None),
        Some(v) => T::deserialize(v)
            .map(Some)
            .map_err(|e| LoadError(format!("tool `{id}`: `{key}` is malformed: {e}"))),
    }
}

/// Loads a document back into a catalog whose tools run through `dispatch`. The format
/// version and every tool's content hash are checked first.
pub fn from_document(doc: &Value, dispatch: Dispatcher) -> Result<Catalog, LoadError> {
    if doc.get("format").and_then(Value::as_str) != Some(FORMAT) {
        return Err(LoadError(format!("not a `{FORMAT}` document")));
    }
    match doc.get("formatVersion").and_then(Value::as_u64) {
        Some(FORMAT_VERSION) => {}
        other => {
            return Err(LoadError(format!(
                "format version {other:?} is not supported (this build reads {FORMAT_VERSION})"
            )));
        }
    }
    let tools = doc
        .get("tools")
        .and_then(Value::as_array)
        .ok_or_else(|| LoadError("no `tools` array".into()))?;
    let registry = Registry::new();
    for tool in tools {
        let id = tool
            .get("id")
            .and_then(Value::as_str)
            .ok_or_else(|| LoadError("a tool has no `id`".into()))?
            .to_owned();
        let recorded = tool.get("hash").and_then(Value::as_str).unwrap_or_default();
        let actual = content_hash(tool);
        if recorded != actual {
            return Err(LoadError(format!(
                "tool `{id}` does not match its content hash (recorded {recorded}, computed {actual}): the file was edited"
            )));
        }
        let schemas = field(tool, "schemas", &id)?;
        let description = field(tool, "description", &id)?.as_str().unwrap_or_default().to_owned();
        let input = field(schemas, "input", &id)?.clone();
        let outputs: BTreeMap<&str, Option<Value>> = ["output", "suspend", "resume", "context"]
            .into_iter()
            .map(|k| (k, schemas.get(k).filter(|v| !v.is_null()).cloned()))
            .collect();
        let approval = match tool.get("requireApproval").and_then(Value::as_str) {
            Some("always") | Some("predicate") => ApprovalRule::Always,
            _ => ApprovalRule::Never,
        };
        let title: Option<String> = opt(tool, "title", &id)?;
        let mcp: Option<McpSpec> = opt::<Value>(tool, "mcp", &id)?.map(|m| mcp_from(&m));
        let provider_options: Option<BTreeMap<String, Value>> = opt(tool, "providerOptions", &id)?;
        let examples: Option<Vec<Value>> = opt(tool, "inputExamples", &id)?;
        let tags: Option<Vec<String>> = opt(tool, "tags", &id)?;
        let background: Option<Value> = opt(tool, "background", &id)?;
        let strict = tool.get("strict").and_then(Value::as_bool).unwrap_or(false);
        let defer_loading = tool.get("deferLoading").and_then(Value::as_bool).unwrap_or(false);
        let namespace: Option<String> = opt(tool, "namespace", &id)?;
        let eager: Option<bool> = opt(tool, "eagerInputStreaming", &id)?;
        let callers: Option<Vec<String>> = opt(tool, "allowedCallers", &id)?;
        let behavior: Option<crate::spec::CallBehavior> = opt(tool, "behavior", &id)?;
        let dispatch = dispatch.clone();
        let target_id = id.clone();
        let builder = DynamicTool::builder(id.clone(), description).input_schema(input).with_spec(|s| {
            s.title = title;
            s.policy.strict = strict;
            s.schemas.output = outputs["output"].clone();
            s.schemas.suspend = outputs["suspend"].clone();
            s.schemas.resume = outputs["resume"].clone();
            s.schemas.request_context = outputs["context"].clone();
            // A predicate cannot travel in a file: the loaded tool asks every time (fail closed).
            s.policy.require_approval = approval;
            s.presentation.mcp = mcp.unwrap_or_default();
            s.presentation.provider_options = provider_options.unwrap_or_default();
            s.presentation.input_examples = examples.unwrap_or_default();
            s.presentation.tags = tags.unwrap_or_default();
            s.presentation.defer_loading = defer_loading;
            s.presentation.namespace = namespace;
            s.presentation.eager_input_streaming = eager;
            s.presentation.allowed_callers = callers.unwrap_or_default();
            s.presentation.behavior = behavior;
            s.policy.background = background.as_ref().map(background_from);
        });
        // A client-side tool stays one: the application answers its calls, wherever it is loaded.
        let loaded = if tool.get("clientSide").and_then(Value::as_bool) == Some(true) {
            builder.client_side()
        } else {
            builder.handler(move |args, cx| (dispatch)(target_id.clone(), args, cx))
        };
        let loaded = loaded.map_err(|e| LoadError(format!("tool `{id}`: {e}")))?;
        let recorded = tool.get("fingerprint").and_then(Value::as_str).unwrap_or_default();
        let actual = loaded.spec().fingerprint();
        if recorded != actual.0 {
            return Err(LoadError(format!(
                "tool `{id}` does not match its fingerprint (recorded `{recorded}`, its definition is `{actual}`)"
            )));
        }
        registry.insert(loaded).map_err(|e| LoadError(e.to_string()))?;
    }
    let name = doc.get("name").and_then(Value::as_str).unwrap_or("default");
    let version = doc.get("version").and_then(Value::as_str).unwrap_or("0.0.0");
    Ok(Catalog::new(name, version, registry))
}

fn mcp_from(v: &Value) -> McpSpec {
    let b = |k: &str| v.get(k).and_then(Value::as_bool);
    McpSpec {
        title: v.get("title").and_then(Value::as_str).map(str::to_owned),
        read_only_hint: b("readOnlyHint"),
        destructive_hint: b("destructiveHint"),
        idempotent_hint: b("idempotentHint"),
        open_world_hint: b("openWorldHint"),
        meta: v.get("_meta").cloned(),
        icons: words(v, "icons"),
        requires: words(v, "requires"),
    }
}

/// A list of strings under `key` (none when absent).
fn words(v: &Value, key: &str) -> Vec<String> {
    v.get(key)
        .and_then(Value::as_array)
        .map(|items| items.iter().filter_map(Value::as_str).map(str::to_owned).collect())
        .unwrap_or_default()
}

fn background_from(v: &Value) -> BackgroundSpec {
    BackgroundSpec {
        enabled: v.get("enabled").and_then(Value::as_bool).unwrap_or(false),
        required: v.get("required").and_then(Value::as_bool).unwrap_or(false),
        asks_first: v.get("asksFirst").and_then(Value::as_bool).unwrap_or(false),
        timeout_ms: v.get("timeoutMs").and_then(Value::as_u64),
        max_retries: v.get("maxRetries").and_then(Value::as_u64).and_then(|n| u32::try_from(n).ok()),
        wait_timeout_ms: v.get("waitTimeoutMs").and_then(Value::as_u64),
    }
}

impl Catalog {
    /// This catalog as a `toolsmith-catalog` document (see [`to_document`]).
    pub fn to_toolsmith(&self) -> Value {
        to_document(self)
    }

    /// Loads a `toolsmith-catalog` document (see [`from_document`]).
    pub fn from_toolsmith(doc: &Value, dispatch: Dispatcher) -> Result<Catalog, LoadError> {
        from_document(doc, dispatch)
    }

    /// Loads a `toolsmith-catalog` document whose tools run in `running`, refusing it unless
    /// every tool it lists runs there with the same fingerprint (the same name, description,
    /// schemas and annotations: see [`crate::fingerprint`]).
    pub fn from_toolsmith_running(doc: &Value, running: Arc<Registry>) -> Result<Catalog, LoadError> {
        let tools = doc.get("tools").and_then(Value::as_array).map(Vec::as_slice).unwrap_or_default();
        for tool in tools {
            let id = tool.get("id").and_then(Value::as_str).unwrap_or_default();
            let recorded = tool.get("fingerprint").and_then(Value::as_str).unwrap_or_default();
            let running_one = running
                .get(id)
                .ok_or_else(|| LoadError(format!("tool `{id}` is not running here")))?;
            let actual = running_one.spec().fingerprint();
            if actual.0 != recorded {
                return Err(LoadError(format!(
                    "tool `{id}` runs here with another definition than the catalog's (fingerprint `{actual}`, the catalog has `{recorded}`)"
                )));
            }
        }
        let target = running.clone();
        let dispatch = dispatcher(move |id, args, _cx| {
            let target = target.clone();
            async move { target.call(&id, args, crate::call::CallOptions::default()).await.map(|o| o.value()) }
        });
        from_document(doc, dispatch)
    }
}
