//! Schema passes: one per target, turning a tool's canonical JSON Schema (2020-12, from
//! schemars) into what that target accepts, or an error naming the tool, the path and the rule.
//!
//! The canonical schema stays the contract: the runtime validates every call against it (with
//! its forgiveness: a `null` for an optional field reads as absent). A pass may therefore drop
//! what a target cannot express when it is only a *constraint* on values the target's schema
//! still describes (a length bound, `uniqueItems`, a numeric bound for Anthropic strict): the
//! model may be told a little less, the tool still gets only valid input, and each removal is
//! reported in [`PassOutput::warnings`]. What changes the *shape* of the accepted values (a map
//! under strict mode, a tuple, recursion where it is not allowed, an untyped value, `not`,
//! `if`/`then`/`else`, …) is a [`PassError`]: never a silent downgrade.
//!
//! Annotations a target does not take (`default`, `examples`, schemars' numeric `format`s such as
//! `uint32` or `double`, `$schema` everywhere but MCP) are dropped without a warning: they constrain nothing the
//! runtime does not already enforce (numeric ranges come as `minimum`/`maximum`).
//!
//! Per target:
//! - **OpenAI chat / responses, non-strict**: `$schema` dropped; the root must be `type: object`.
//! - **OpenAI strict**: `additionalProperties: false` on every object (a map is an error);
//!   every property required, the optional ones made nullable (`type: [T, "null"]`, or
//!   `anyOf` + `{type: null}`, never twice); `format` kept only for `date-time`, `time`, `date`,
//!   `duration`, `email`, `hostname`, `ipv4`, `ipv6`, `uuid`; `oneOf` → `anyOf`; a `$ref` with
//!   sibling keywords (a documented struct field) is inlined, as the official SDK does, since
//!   OpenAI refuses siblings next to `$ref`; `allOf` flattened when its parts are objects with
//!   distinct properties, else refused; `minLength`, `maxLength`, `uniqueItems`,
//!   `minProperties`, `maxProperties`, `propertyNames`, `contains`, `unevaluatedItems`, lookaround
//!   `pattern`s and other string `format`s removed with a warning (not in OpenAI's supported
//!   list); `not`, `if`/`then`/`else`, `dependentRequired`, `dependentSchemas`,
//!   `patternProperties`, `unevaluatedProperties`, `prefixItems` (tuples; OpenAI refuses them),
//!   untyped values (`serde_json::Value`) and objects that also carry `anyOf`/`oneOf` (a
//!   `#[serde(flatten)]`ed enum) refused; limits checked (5000 properties, 10 levels of nested
//!   objects with the root as level 1, 1000 enum values, 120,000 characters of property names,
//!   definition names and enum/const values, 15,000 characters in one enum of more than 250
//!   values). `$defs`/`$ref` and recursion are kept.
//! - **Anthropic**: the root must be an object: a root `allOf` of objects is flattened, a root
//!   `anyOf`/`oneOf` (a tagged enum as the whole input, or a flattened one) refused. Non-strict
//!   keeps the rest. Strict: `additionalProperties: false` on every object (a map is an error),
//!   recursion refused, `oneOf` → `anyOf`, `allOf` flattened or refused, numeric bounds,
//!   `minLength`/`maxLength`, `maxItems`, `minItems` above 1 and `uniqueItems` removed with a
//!   warning, `format` kept for Anthropic's list (OpenAI's plus `uri`), tuples and the
//!   keywords OpenAI strict refuses refused too.
//! - **Gemini OpenAPI** (`parameters`): every `$ref` inlined (recursion is an error), `$defs`
//!   dropped, `type: [T, "null"]` → `type: T, nullable: true`, a `{type: null}` branch of
//!   `anyOf`/`oneOf` → `nullable: true` (a single remaining branch inlined), `oneOf` → `anyOf`,
//!   `const` → `enum: [v]`, `allOf` flattened or refused; `additionalProperties` dropped (a map's
//!   value schema with a warning); tuples become `items: {anyOf: [..]}` plus their
//!   `minItems`/`maxItems`, with a warning when the element types differ (positions are lost;
//!   `parametersJsonSchema` keeps them); integer formats mapped to `int32`/`int64`, `float`/`double`
//!   kept, string formats other than `date-time`/`enum` removed with a warning;
//!   `exclusiveMinimum`/`exclusiveMaximum` (2020-12 numbers, booleans in OpenAPI 3.0),
//!   `multipleOf`, `uniqueItems` removed with a warning; `title`, `default` kept; `examples` →
//!   `example`. No root rule (it also serves `response` schemas).
//! - **Gemini JSON Schema** (`parametersJsonSchema`): only `$schema` dropped; no root rule.
//! - **MCP**: the schema as it is, `$schema` included (MCP schemas are JSON Schema 2020-12 and
//!   keep the dialect they name, SEP-1613); the root must be an object.
//!
//! `strict` only matters for the OpenAI and Anthropic targets.

use serde_json::{json, Map, Value};
use std::borrow::Cow;

/// The targets a catalog is exported to.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Target {
    /// OpenAI Chat Completions `tools[].function.parameters`.
    // kebab-case alone would say `open-ai-chat`; the names are those of `as_str`.
    #[serde(rename = "openai-chat")]
    OpenAiChat,
    /// OpenAI Responses `tools[].parameters`.
    #[serde(rename = "openai-responses")]
    OpenAiResponses,
    /// Anthropic Messages `tools[].input_schema`.
    Anthropic,
    /// Gemini `functionDeclarations[].parameters` (OpenAPI 3.0 subset).
    #[serde(rename = "gemini-openapi")]
    GeminiOpenApi,
    /// Gemini `functionDeclarations[].parametersJsonSchema` (JSON Schema).
    GeminiJsonSchema,
    /// MCP `tools/list` `inputSchema` / `outputSchema`.
    Mcp,
}

impl Target {
    /// Every target, in declaration order.
    pub const ALL: [Target; 6] = [
        Target::OpenAiChat,
        Target::OpenAiResponses,
        Target::Anthropic,
        Target::GeminiOpenApi,
        Target::GeminiJsonSchema,
        Target::Mcp,
    ];

    /// The kebab-case name (as serialized).
    pub fn as_str(self) -> &'static str {
        match self {
            Target::OpenAiChat => "openai-chat",
            Target::OpenAiResponses => "openai-responses",
            Target::Anthropic => "anthropic",
            Target::GeminiOpenApi => "gemini-openapi",
            Target::GeminiJsonSchema => "gemini-json-schema",
            Target::Mcp => "mcp",
        }
    }
}

/// A schema that cannot be made valid for a target: never a silent downgrade.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("tool `{tool}`: {target} schema at `{path}`: {rule}")]
pub struct PassError {
    /// The tool id.
    pub tool: String,
    /// The target's name ([`Target::as_str`]).
    pub target: &'static str,
    /// JSON pointer into the input schema; `""` is the root.
    pub path: String,
    /// What rule is broken and how to fix it.
    pub rule: String,
}

/// A schema rewritten for a target, with what was removed or loosened on the way.
#[derive(Debug, Clone, PartialEq)]
pub struct PassOutput {
    /// The schema to send.
    pub schema: Value,
    /// Constraints removed or loosened, one line each (the runtime still validates the
    /// original schema, so these only mean the model is told less).
    pub warnings: Vec<String>,
}

/// Runs the pass for `target` over a tool's canonical input (or output) schema.
///
/// `strict` = the tool asked for strict mode; only the OpenAI and Anthropic targets use it.
///
/// ```
/// use tool_core::catalog::pass::{apply, Target};
/// let schema = serde_json::json!({"type": "object", "properties": {"q": {"type": ["string", "null"]}}});
/// let out = apply(Target::OpenAiResponses, true, "search", &schema).unwrap();
/// assert_eq!(out.schema["required"], serde_json::json!(["q"]));
/// assert_eq!(out.schema["additionalProperties"], false);
/// let out = apply(Target::GeminiOpenApi, false, "search", &schema).unwrap();
/// assert_eq!(out.schema["properties"]["q"], serde_json::json!({"type": "string", "nullable": true}));
/// ```
pub fn apply(target: Target, strict: bool, tool: &str, schema: &Value) -> Result<PassOutput, PassError> {
    let (rewritten, warnings) = rewrite(target, strict, tool, schema)?;
    let schema = match rewritten {
        Rewritten::Unchanged => match schema {
            Value::Object(m) if target != Target::Mcp => Value::Object(without(m, &["$schema"])),
            other => other.clone(),
        },
        Rewritten::New(v) => v,
    };
    Ok(PassOutput { schema, warnings })
}

/// What a pass made of a schema: nothing to rewrite (send it as it is, minus `$schema`), or a
/// new schema.
#[derive(Debug, Clone, PartialEq)]
pub enum Rewritten {
    /// The input schema, minus its `$schema` keyword, is what the target takes.
    Unchanged,
    /// The rewritten schema.
    New(Value),
}

/// Like [`apply`], without copying a schema the target takes as it is: the catalog serialises
/// the original directly in that case.
pub fn rewrite(target: Target, strict: bool, tool: &str, schema: &Value) -> Result<(Rewritten, Vec<String>), PassError> {
    let mut pass = Pass {
        tool,
        target,
        root: schema,
        warnings: Vec::new(),
        mute: 0,
    };
    let rewritten = match target {
        Target::OpenAiChat | Target::OpenAiResponses if strict => Rewritten::New(pass.openai_strict_root()?),
        Target::OpenAiChat | Target::OpenAiResponses | Target::Mcp => {
            pass.check_object_root(pass.root_map()?)?;
            Rewritten::Unchanged
        }
        Target::Anthropic if !strict && schema.get("allOf").is_none() => {
            let root = pass.root_map()?;
            if let Some(k) = ["anyOf", "oneOf"].into_iter().find(|k| root.contains_key(*k)) {
                return Err(pass.err("", format!("Anthropic rejects `{k}` at the root of `input_schema` (an enum as the whole input, or a `#[serde(flatten)]`ed enum); put the enum in a named field of a struct")));
            }
            pass.check_object_root(root)?;
            Rewritten::Unchanged
        }
        Target::Anthropic => Rewritten::New(pass.anthropic_root(strict)?),
        Target::GeminiOpenApi => Rewritten::New(pass.gemini(schema, "", &mut Vec::new())?),
        Target::GeminiJsonSchema => Rewritten::Unchanged,
    };
    let mut warnings = Vec::with_capacity(pass.warnings.len());
    for w in pass.warnings {
        if !warnings.contains(&w) {
            warnings.push(w);
        }
    }
    Ok((rewritten, warnings))
}

/// Anthropic per-request limits: at most 20 strict tools, 24 optional parameters and 16
/// union-typed parameters across the strict tools of one request; returns a warning per limit
/// exceeded.
///
/// Each tool is `(strict, input schema after its pass)`. Parameters are counted in every object
/// of a strict tool's schema (nested ones and each `$defs` entry once): optional = not in its
/// object's `required`; union-typed = `anyOf`/`oneOf` with several branches or a `type` list
/// (`["string", "null"]` counts, as Anthropic counts type arrays).
///
/// ```
/// let schema = serde_json::json!({"type": "object", "properties": {"a": {"type": "string"}}});
/// let tools: Vec<(bool, &serde_json::Value)> = (0..21).map(|_| (true, &schema)).collect();
/// let warnings = tool_core::catalog::pass::anthropic_request_warnings(&tools);
/// assert_eq!(warnings.len(), 1); // 21 strict tools (21 optional parameters are within 24)
/// assert!(warnings[0].contains("at most 20"));
/// ```
pub fn anthropic_request_warnings(tools: &[(bool, &Value)]) -> Vec<String> {
    let strict: Vec<&Value> = tools.iter().filter(|(s, _)| *s).map(|(_, v)| *v).collect();
    let mut warnings = Vec::new();
    if strict.len() > 20 {
        warnings.push(format!(
            "anthropic: {} strict tools in one request; Anthropic accepts at most 20: turn strict off for some tools or send fewer",
            strict.len()
        ));
    }
    let (mut optional, mut unions) = (0usize, 0usize);
    for schema in strict {
        each_subschema(schema, "", &mut |node, _| {
            let Some(props) = node.get("properties").and_then(Value::as_object) else {
                return;
            };
            let required = node.get("required").and_then(Value::as_array);
            for (name, prop) in props {
                if !required.is_some_and(|r| r.iter().any(|x| x.as_str() == Some(name))) {
                    optional += 1;
                }
                if is_union(prop) {
                    unions += 1;
                }
            }
        });
    }
    if optional > 24 {
        warnings.push(format!(
            "anthropic: the strict tools of this request have {optional} optional parameters; Anthropic accepts at most 24: \
             make some required, turn strict off for some tools or send fewer"
        ));
    }
    if unions > 16 {
        warnings.push(format!(
            "anthropic: the strict tools of this request have {unions} union-typed parameters (anyOf or type lists, Option fields \
             included); Anthropic accepts at most 16: turn strict off for some tools or send fewer"
        ));
    }
    warnings
}

fn is_union(schema: &Value) -> bool {
    let many = |k: &str| schema.get(k).and_then(Value::as_array).is_some_and(|a| a.len() > 1);
    many("anyOf") || many("oneOf") || many("type")
}

// ---------------------------------------------------------------------------------------------
// Keyword tables.

/// Keywords that change which shapes are valid and that no strict / OpenAPI target expresses.
const STRUCTURAL: [&str; 8] = [
    "not",
    "if",
    "then",
    "else",
    "dependentRequired",
    "dependentSchemas",
    "patternProperties",
    "unevaluatedProperties",
];

/// Annotations dropped without a word where a target does not take them.
const ANNOTATIONS: [&str; 11] = [
    "$schema",
    "$id",
    "$anchor",
    "$comment",
    "default",
    "examples",
    "deprecated",
    "readOnly",
    "writeOnly",
    "contentEncoding",
    "contentMediaType",
];

/// schemars' numeric formats: type hints whose ranges are already `minimum`/`maximum`.
const NUMERIC_FORMATS: [&str; 14] = [
    "int8", "int16", "int32", "int64", "int128", "uint8", "uint16", "uint32", "uint64", "uint128", "int", "uint", "float", "double",
];

const OPENAI_FORMATS: [&str; 9] = ["date-time", "time", "date", "duration", "email", "hostname", "ipv4", "ipv6", "uuid"];
const ANTHROPIC_FORMATS: [&str; 10] = [
    "date-time",
    "time",
    "date",
    "duration",
    "email",
    "hostname",
    "uri",
    "ipv4",
    "ipv6",
    "uuid",
];

/// What OpenAI strict mode keeps as is (other than what gets rewritten).
const OPENAI_KEEP: [&str; 12] = [
    "type",
    "enum",
    "const",
    "description",
    "title",
    "pattern",
    "minimum",
    "maximum",
    "exclusiveMinimum",
    "exclusiveMaximum",
    "multipleOf",
    "$ref",
];

/// What Anthropic strict mode keeps as is (other than what gets rewritten).
const ANTHROPIC_KEEP: [&str; 7] = ["type", "enum", "const", "description", "title", "default", "pattern"];

/// The Gemini `Schema` fields (OpenAPI 3.0 subset) kept as they are.
const GEMINI_KEEP: [&str; 16] = [
    "title",
    "description",
    "nullable",
    "maxItems",
    "minItems",
    "required",
    "minProperties",
    "maxProperties",
    "minLength",
    "maxLength",
    "pattern",
    "example",
    "propertyOrdering",
    "default",
    "minimum",
    "maximum",
];

const OPENAI_MAX_DEPTH: usize = 10;
const OPENAI_MAX_PROPERTIES: usize = 5000;
const OPENAI_MAX_ENUM_VALUES: usize = 1000;
const OPENAI_MAX_CHARS: usize = 120_000;

// ---------------------------------------------------------------------------------------------
// The pass.

struct Pass<'a> {
    tool: &'a str,
    target: Target,
    root: &'a Value,
    warnings: Vec<String>,
    /// Above zero while re-walking an inlined definition that was already walked (and warned
    /// about) at its own path.
    mute: usize,
}

/// Appends one JSON-pointer segment.
fn ptr(path: &str, segment: &str) -> String {
    format!("{path}/{}", segment.replace('~', "~0").replace('/', "~1"))
}

fn without(map: &Map<String, Value>, keys: &[&str]) -> Map<String, Value> {
    map.iter()
        .filter(|(k, _)| !keys.contains(&k.as_str()))
        .map(|(k, v)| (k.clone(), v.clone()))
        .collect()
}

fn type_names(node: &Map<String, Value>) -> Vec<&str> {
    match node.get("type") {
        Some(Value::String(t)) => vec![t.as_str()],
        Some(Value::Array(ts)) => ts.iter().filter_map(Value::as_str).collect(),
        _ => Vec::new(),
    }
}

fn is_object_schema(node: &Map<String, Value>) -> bool {
    type_names(node).contains(&"object") || node.contains_key("properties")
}

fn quoted(keys: &[String]) -> String {
    keys.iter().map(|k| format!("`{k}`")).collect::<Vec<_>>().join(", ")
}

fn has_lookaround(pattern: &str) -> bool {
    ["(?=", "(?!", "(?<=", "(?<!"].iter().any(|t| pattern.contains(t))
}

impl<'a> Pass<'a> {
    fn err(&self, path: &str, rule: impl Into<String>) -> PassError {
        PassError {
            tool: self.tool.to_owned(),
            target: self.target.as_str(),
            path: path.to_owned(),
            rule: rule.into(),
        }
    }

    fn warn(&mut self, path: &str, message: String) {
        if self.mute == 0 {
            let path = if path.is_empty() { "(root)" } else { path };
            self.warnings.push(format!(
                "tool `{}`: {} schema at `{path}`: {message}",
                self.tool,
                self.target.as_str()
            ));
        }
    }

    fn warn_removed(&mut self, path: &str, removed: &[String], why: &str) {
        if !removed.is_empty() {
            let what = quoted(removed);
            self.warn(
                path,
                format!("removed {what}: {why}; calls are still validated against the original schema"),
            );
        }
    }

    fn root_map(&self) -> Result<&'a Map<String, Value>, PassError> {
        self.root
            .as_object()
            .ok_or_else(|| self.err("", "the input schema must be a JSON object with `type: \"object\"`"))
    }

    /// Resolves a local `$ref` (`#/$defs/Name`) against the root: the definition and its path.
    fn resolve(&self, path: &str, reference: &Value) -> Result<(String, &'a Value), PassError> {
        let r = reference.as_str().ok_or_else(|| self.err(path, "`$ref` must be a string"))?;
        let pointer = r.strip_prefix('#').ok_or_else(|| {
            self.err(
                path,
                format!("`$ref` `{r}` is not local to this schema; only `#/...` references can be resolved"),
            )
        })?;
        let target = self
            .root
            .pointer(pointer)
            .ok_or_else(|| self.err(path, format!("`$ref` `{r}` points to nothing in this schema")))?;
        Ok((pointer.to_owned(), target))
    }

    fn check_object_root(&self, root: &Map<String, Value>) -> Result<(), PassError> {
        if let Some(k) = ["anyOf", "oneOf"].into_iter().find(|k| root.contains_key(*k)) {
            if !is_object_schema(root) {
                return Err(self.err(
                    "",
                    format!(
                        "the root is a union (`{k}`, e.g. an enum as the whole input) but {} needs an object root; \
                         put the enum in a named field of a struct",
                        self.target.as_str()
                    ),
                ));
            }
        }
        if root.get("type") != Some(&json!("object")) {
            let found = match root.get("type") {
                Some(t) => format!("`type: {t}`"),
                None => ["allOf", "$ref", "enum", "const"]
                    .into_iter()
                    .find(|k| root.contains_key(*k))
                    .map_or("no `type`".to_owned(), |k| format!("a root `{k}`")),
            };
            return Err(self.err(
                "",
                format!(
                    "the root has {found} but {} needs `type: \"object\"` at the root; use a struct (or plain fn parameters) as the input",
                    self.target.as_str()
                ),
            ));
        }
        Ok(())
    }

    // -----------------------------------------------------------------------------------------
    // allOf flattening (shared).

    /// Merges `allOf` parts into their node when they are objects with distinct properties (or
    /// a single part); otherwise an error naming the conflicting keyword.
    /// Shapes neither strict mode (OpenAI, Anthropic) can express: a flattened union, the
    /// structural keywords, tuples, and `anyOf` beside `oneOf`.
    fn refuse_strict_shapes(&self, node: &Map<String, Value>, path: &str) -> Result<(), PassError> {
        let mode = if self.target == Target::Anthropic { "Anthropic" } else { "OpenAI" };
        self.refuse_flattened_union(node, path)?;
        self.refuse_structural(node, path)?;
        if node.contains_key("prefixItems") {
            return Err(self.err(
                path,
                format!(
                    "a tuple (`prefixItems`) is not supported by {mode} strict mode; use a struct with named fields or a Vec, \
                     or export this tool with strict off"
                ),
            ));
        }
        if node.contains_key("anyOf") && node.contains_key("oneOf") {
            return Err(self.err(
                path,
                format!("both `anyOf` and `oneOf` on one schema cannot be expressed in {mode} strict mode"),
            ));
        }
        Ok(())
    }

    /// The node with its `allOf` merged in; borrowed (no copy) when it has none.
    fn flatten_all_of<'n>(&self, node: &'n Map<String, Value>, path: &str, depth: usize) -> Result<Cow<'n, Map<String, Value>>, PassError> {
        let Some(parts) = node.get("allOf") else {
            return Ok(Cow::Borrowed(node));
        };
        let parts = parts.as_array().ok_or_else(|| self.err(path, "`allOf` must be an array"))?;
        let mut acc = without(node, &["allOf"]);
        for (i, part) in parts.iter().enumerate() {
            let part_path = ptr(&ptr(path, "allOf"), &i.to_string());
            let part = self.expand_part(part, &part_path, depth + 1)?;
            merge_into(&mut acc, part).map_err(|key| {
                self.err(
                    &part_path,
                    format!(
                        "{} does not support `allOf`, and this `allOf` cannot be merged into one schema (`{key}` differs between its parts); \
                         use one struct (or `#[serde(flatten)]` of structs with distinct fields)",
                        self.target.as_str()
                    ),
                )
            })?;
        }
        Ok(Cow::Owned(acc))
    }

    fn expand_part(&self, part: &Value, path: &str, depth: usize) -> Result<Map<String, Value>, PassError> {
        if depth > 32 {
            return Err(self.err(path, "`allOf`/`$ref` chain too deep (recursive?); it cannot be flattened"));
        }
        let mut m = match part {
            Value::Bool(true) => return Ok(Map::new()),
            Value::Object(m) => m.clone(),
            _ => return Err(self.err(path, "this `allOf` part accepts nothing; the schema can never be satisfied")),
        };
        if let Some(r) = m.remove("$ref") {
            let (def_path, def) = self.resolve(path, &r)?;
            let def = self.expand_part(def, &def_path, depth + 1)?;
            merge_into(&mut m, def).map_err(|key| {
                self.err(
                    path,
                    format!("`$ref` and its sibling keywords disagree on `{key}`; they cannot be merged into one schema"),
                )
            })?;
        }
        self.flatten_all_of(&m, path, depth).map(Cow::into_owned)
    }

    // -----------------------------------------------------------------------------------------
    // OpenAI strict.

    fn openai_strict_root(&mut self) -> Result<Value, PassError> {
        let root = self.root_map()?;
        let root = self.flatten_all_of(root, "", 0)?;
        self.check_object_root(&root)?;
        self.openai_limits()?;
        let mut out = self.openai_strict(&Value::Object(root.into_owned()), "", &mut Vec::new())?;
        prune_defs(&mut out);
        Ok(out)
    }

    fn openai_strict(&mut self, schema: &Value, path: &str, inlining: &mut Vec<String>) -> Result<Value, PassError> {
        let node =
            match schema {
                Value::Object(m) => m,
                Value::Bool(true) => return Err(self.err(
                    path,
                    "this value accepts any JSON (no `type`, as for `serde_json::Value`), and OpenAI strict mode needs every value typed; \
                     give it a concrete type, or export this tool with strict off",
                )),
                _ => return Err(self.err(path, "this schema accepts no value at all; remove the field")),
            };
        let mut node = self.flatten_all_of(node, path, 0)?;

        // OpenAI refuses keywords next to `$ref` (as the official SDK notes): inline the
        // definition, the sibling keywords winning, as the SDK does.
        if let Some(r) = node.get("$ref").cloned() {
            if node.keys().any(|k| k != "$ref" && k != "$defs") {
                let name = r.as_str().unwrap_or_default().to_owned();
                node.to_mut().remove("$ref");
                if inlining.contains(&name) {
                    // A recursive definition refers to itself with siblings: keep the reference
                    // alone in a one-branch anyOf, which OpenAI accepts.
                    node.to_mut().insert("anyOf".into(), json!([{ "$ref": r }]));
                } else {
                    let (_, def) = self.resolve(path, &r)?;
                    let mut merged = def.as_object().cloned().unwrap_or_default();
                    if def.as_bool() == Some(false) {
                        return Err(self.err(path, "this `$ref` accepts no value at all"));
                    }
                    // The definition was walked (and warned about) at its own path; what the
                    // reference adds next to it is warned about here.
                    let dropped: Vec<String> = node
                        .keys()
                        .filter(|k| !OPENAI_KEEP.contains(&k.as_str()) && !ANNOTATIONS.contains(&k.as_str()))
                        .filter(|k| {
                            ![
                                "format",
                                "minItems",
                                "maxItems",
                                "anyOf",
                                "oneOf",
                                "items",
                                "properties",
                                "required",
                            ]
                            .contains(&k.as_str())
                        })
                        .cloned()
                        .collect();
                    self.warn_removed(path, &dropped, "OpenAI strict mode does not support them");
                    for (k, v) in node.into_owned() {
                        merged.insert(k, v);
                    }
                    inlining.push(name);
                    self.mute += 1;
                    let out = self.openai_strict(&Value::Object(merged), path, inlining);
                    self.mute -= 1;
                    inlining.pop();
                    return out;
                }
            }
        }

        self.refuse_strict_shapes(&node, path)?;

        let mut out = Map::new();
        let mut removed = Vec::new();
        if let Some(defs) = node.get("$defs").and_then(Value::as_object) {
            let mut outs = Map::new();
            for (name, def) in defs {
                outs.insert(name.clone(), self.openai_strict(def, &ptr(&ptr(path, "$defs"), name), inlining)?);
            }
            out.insert("$defs".into(), Value::Object(outs));
        }
        for (k, v) in node.iter() {
            match k.as_str() {
                "$defs" | "properties" | "required" | "additionalProperties" | "unevaluatedProperties" => {}
                "items" => {
                    out.insert(k.clone(), self.openai_strict(v, &ptr(path, k), inlining)?);
                }
                "anyOf" | "oneOf" => {
                    let branches = v.as_array().ok_or_else(|| self.err(path, format!("`{k}` must be an array")))?;
                    let mut outs = Vec::with_capacity(branches.len());
                    for (i, b) in branches.iter().enumerate() {
                        outs.push(self.openai_strict(b, &ptr(&ptr(path, k), &i.to_string()), inlining)?);
                    }
                    out.insert("anyOf".into(), Value::Array(outs));
                }
                "format" => match v.as_str() {
                    Some(f) if OPENAI_FORMATS.contains(&f) => {
                        out.insert(k.clone(), v.clone());
                    }
                    Some(f) if NUMERIC_FORMATS.contains(&f) => {}
                    _ => removed.push(format!("format: {v}")),
                },
                "pattern" if v.as_str().is_some_and(has_lookaround) => removed.push("pattern (lookaround)".into()),
                "minItems" | "maxItems" => {
                    out.insert(k.clone(), v.clone());
                }
                _ if OPENAI_KEEP.contains(&k.as_str()) => {
                    out.insert(k.clone(), v.clone());
                }
                _ if ANNOTATIONS.contains(&k.as_str()) => {}
                _ => removed.push(k.clone()),
            }
        }
        self.warn_removed(path, &removed, "OpenAI strict mode does not support them");

        if is_object_schema(&node) {
            match node.get("additionalProperties") {
                None | Some(Value::Bool(false)) => {}
                Some(_) => {
                    return Err(self.err(
                        path,
                        "a map (`additionalProperties`, e.g. HashMap/BTreeMap or a flattened map) cannot be strict: OpenAI strict mode \
                         needs `additionalProperties: false` and every key listed; use a Vec of key/value structs, or export this \
                         tool with strict off",
                    ))
                }
            }
            let props = node.get("properties").and_then(Value::as_object).cloned().unwrap_or_default();
            let required: Vec<String> = node
                .get("required")
                .and_then(Value::as_array)
                .map(|r| r.iter().filter_map(Value::as_str).map(str::to_owned).collect())
                .unwrap_or_default();
            let mut out_props = Map::new();
            let mut all_required: Vec<String> = required.iter().filter(|r| props.contains_key(*r)).cloned().collect();
            for (name, prop) in &props {
                let p = self.openai_strict(prop, &ptr(&ptr(path, "properties"), name), inlining)?;
                let p = if required.contains(name) { p } else { nullable(p) };
                out_props.insert(name.clone(), p);
                if !all_required.contains(name) {
                    all_required.push(name.clone());
                }
            }
            out.insert("properties".into(), Value::Object(out_props));
            out.insert("required".into(), json!(all_required));
            out.insert("additionalProperties".into(), Value::Bool(false));
            if !out.contains_key("type") {
                out.insert("type".into(), json!("object"));
            }
        }
        if type_names(&node).contains(&"array") && !node.contains_key("items") {
            return Err(self.err(path, "an array without `items` cannot be strict; give its elements a type"));
        }
        if !["type", "anyOf", "$ref", "enum", "const"].iter().any(|k| out.contains_key(*k)) {
            return Err(self.err(
                path,
                "this value has no `type` (it accepts any JSON), and OpenAI strict mode needs every value typed; give it a concrete \
                 type, or export this tool with strict off",
            ));
        }
        Ok(Value::Object(out))
    }

    /// An object that also carries `anyOf`/`oneOf` (a `#[serde(flatten)]`ed enum): under strict
    /// mode every object is closed (`additionalProperties: false`), so neither the object nor its
    /// branches could accept the other's properties.
    fn refuse_flattened_union(&self, node: &Map<String, Value>, path: &str) -> Result<(), PassError> {
        match ["anyOf", "oneOf"].into_iter().find(|k| node.contains_key(*k)) {
            Some(k) if is_object_schema(node) => Err(self.err(
                path,
                format!(
                    "an object with both `properties` and `{k}` (a `#[serde(flatten)]`ed enum) cannot be strict: every object must be \
                     closed with `additionalProperties: false` and list all its properties; put the enum in a named field, or \
                     export this tool with strict off"
                ),
            )),
            _ => Ok(()),
        }
    }

    fn refuse_structural(&self, node: &Map<String, Value>, path: &str) -> Result<(), PassError> {
        for k in STRUCTURAL {
            let Some(v) = node.get(k) else { continue };
            // `unevaluatedProperties: false` on a plain object is `additionalProperties: false`.
            let applicators = ["anyOf", "oneOf", "allOf", "$ref"].iter().any(|a| node.contains_key(*a));
            if k == "unevaluatedProperties" && v == &Value::Bool(false) && !applicators {
                continue;
            }
            return Err(self.err(
                path,
                format!(
                    "`{k}` is not supported by {}{}; it cannot be expressed there without changing which inputs are valid: \
                     simplify the type{}",
                    self.target.as_str(),
                    if matches!(self.target, Target::GeminiOpenApi) {
                        ""
                    } else {
                        " strict mode"
                    },
                    if matches!(self.target, Target::GeminiOpenApi) {
                        " or use the gemini-json-schema target"
                    } else {
                        ", or export this tool with strict off"
                    }
                ),
            ));
        }
        Ok(())
    }

    /// OpenAI's size limits, counted on the canonical schema (each definition once).
    fn openai_limits(&self) -> Result<(), PassError> {
        let (mut props, mut enums, mut chars) = (0usize, 0usize, 0usize);
        let mut failure: Option<PassError> = None;
        if let Some(defs) = self.root.get("$defs").and_then(Value::as_object) {
            chars += defs.keys().map(|k| k.chars().count()).sum::<usize>();
        }
        let value_chars = |v: &Value| match v {
            Value::String(s) => s.chars().count(),
            other => other.to_string().chars().count(),
        };
        each_subschema(self.root, "", &mut |node, path| {
            if failure.is_some() {
                return;
            }
            if let Some(p) = node.get("properties").and_then(Value::as_object) {
                props += p.len();
                chars += p.keys().map(|k| k.chars().count()).sum::<usize>();
                if props > OPENAI_MAX_PROPERTIES {
                    failure = Some(self.err(
                        path,
                        format!("the schema has more than {OPENAI_MAX_PROPERTIES} properties in total (OpenAI strict mode limit); split the tool"),
                    ));
                    return;
                }
            }
            if let Some(e) = node.get("enum").and_then(Value::as_array) {
                enums += e.len();
                let len: usize = e.iter().map(value_chars).sum();
                chars += len;
                if e.len() > 250 && len > 15_000 {
                    failure = Some(self.err(
                        path,
                        format!(
                            "this enum has {} values totalling {len} characters; OpenAI strict mode allows at most 15,000 characters \
                             in an enum of more than 250 values",
                            e.len()
                        ),
                    ));
                    return;
                }
            }
            if let Some(c) = node.get("const") {
                enums += 1;
                chars += value_chars(c);
            }
            if enums > OPENAI_MAX_ENUM_VALUES {
                failure = Some(self.err(
                    path,
                    format!(
                        "the schema has {enums} enum values up to here, over OpenAI strict mode's limit of {OPENAI_MAX_ENUM_VALUES} \
                         in one schema; take the value as a string and check it in the tool, or export this tool with strict off"
                    ),
                ));
            } else if chars > OPENAI_MAX_CHARS {
                failure = Some(self.err(
                    path,
                    format!(
                        "property names, definition names and enum values total {chars} characters up to here, over OpenAI strict \
                         mode's limit of {OPENAI_MAX_CHARS}; shorten them or split the tool"
                    ),
                ));
            }
        });
        if let Some(e) = failure {
            return Err(e);
        }
        let mut budget = 200_000usize;
        self.depth(self.root, "", 0, &mut Vec::new(), &mut budget)
    }

    /// Object nesting, the root object being level 1, following `$ref`s (a recursive reference
    /// is not followed again: OpenAI allows recursion).
    fn depth(&self, schema: &'a Value, path: &str, level: usize, refs: &mut Vec<String>, budget: &mut usize) -> Result<(), PassError> {
        let Some(node) = schema.as_object() else { return Ok(()) };
        if *budget == 0 {
            return Ok(());
        }
        *budget -= 1;
        let level = if is_object_schema(node) { level + 1 } else { level };
        if level > OPENAI_MAX_DEPTH {
            return Err(self.err(
                path,
                format!(
                    "objects are nested {level} levels deep here (the root object is level 1); OpenAI strict mode allows at most \
                     {OPENAI_MAX_DEPTH}: flatten some structs"
                ),
            ));
        }
        if let Some(r) = node.get("$ref").and_then(Value::as_str) {
            if !refs.iter().any(|x| x == r) {
                if let Ok((def_path, def)) = self.resolve(path, &json!(r)) {
                    refs.push(r.to_owned());
                    self.depth(def, &def_path, level, refs, budget)?;
                    refs.pop();
                }
            }
        }
        for (child_path, child) in children(node, path, false) {
            self.depth(child, &child_path, level, refs, budget)?;
        }
        Ok(())
    }

    // -----------------------------------------------------------------------------------------
    // Anthropic.

    fn anthropic_root(&mut self, strict: bool) -> Result<Value, PassError> {
        let root = self.root_map()?;
        let root = if root.contains_key("allOf") {
            let mut merged = self.flatten_all_of(root, "", 0)?.into_owned();
            if !merged.contains_key("type") && merged.contains_key("properties") {
                merged.insert("type".into(), json!("object"));
            }
            merged
        } else {
            root.clone()
        };
        if let Some(k) = ["anyOf", "oneOf"].into_iter().find(|k| root.contains_key(*k)) {
            return Err(self.err(
                "",
                format!(
                    "Anthropic rejects `{k}` at the root of `input_schema` (an enum as the whole input, or a `#[serde(flatten)]`ed \
                     enum); put the enum in a named field of a struct"
                ),
            ));
        }
        self.check_object_root(&root)?;
        if !strict {
            return Ok(Value::Object(without(&root, &["$schema"])));
        }
        if let Some((path, r)) = find_ref_cycle(self.root) {
            return Err(self.err(
                &path,
                format!(
                    "`$ref` `{r}` makes the schema recursive, which Anthropic strict mode does not support; bound the depth with \
                     distinct types, or export this tool with strict off"
                ),
            ));
        }
        self.anthropic_strict(&Value::Object(root), "")
    }

    fn anthropic_strict(&mut self, schema: &Value, path: &str) -> Result<Value, PassError> {
        let node = match schema {
            Value::Object(m) => m,
            Value::Bool(true) => {
                return Err(self.err(
                    path,
                    "this value accepts any JSON (no `type`, as for `serde_json::Value`), and Anthropic strict mode needs every value \
                     typed; give it a concrete type, or export this tool with strict off",
                ))
            }
            _ => return Err(self.err(path, "this schema accepts no value at all; remove the field")),
        };
        let node = self.flatten_all_of(node, path, 0)?;
        self.refuse_strict_shapes(&node, path)?;
        let mut out = Map::new();
        let mut removed = Vec::new();
        for (k, v) in node.iter() {
            match k.as_str() {
                "properties" | "required" | "additionalProperties" | "unevaluatedProperties" => {}
                "$defs" => {
                    let defs = v.as_object().ok_or_else(|| self.err(path, "`$defs` must be an object"))?;
                    let mut outs = Map::new();
                    for (name, def) in defs {
                        outs.insert(name.clone(), self.anthropic_strict(def, &ptr(&ptr(path, "$defs"), name))?);
                    }
                    out.insert(k.clone(), Value::Object(outs));
                }
                "$ref" => {
                    out.insert(k.clone(), v.clone());
                }
                "items" => {
                    out.insert(k.clone(), self.anthropic_strict(v, &ptr(path, k))?);
                }
                "anyOf" | "oneOf" => {
                    let branches = v.as_array().ok_or_else(|| self.err(path, format!("`{k}` must be an array")))?;
                    let mut outs = Vec::with_capacity(branches.len());
                    for (i, b) in branches.iter().enumerate() {
                        outs.push(self.anthropic_strict(b, &ptr(&ptr(path, k), &i.to_string()))?);
                    }
                    out.insert("anyOf".into(), Value::Array(outs));
                }
                "enum" => {
                    if v.as_array().is_some_and(|e| e.iter().any(|x| x.is_object() || x.is_array())) {
                        return Err(self.err(
                            path,
                            "an enum of objects or arrays is not supported by Anthropic strict mode (only strings, numbers, booleans \
                             and null); use an enum of plain values",
                        ));
                    }
                    out.insert(k.clone(), v.clone());
                }
                "format" => match v.as_str() {
                    Some(f) if ANTHROPIC_FORMATS.contains(&f) => {
                        out.insert(k.clone(), v.clone());
                    }
                    Some(f) if NUMERIC_FORMATS.contains(&f) => {}
                    _ => removed.push(format!("format: {v}")),
                },
                "minItems" => {
                    if v.as_u64().is_some_and(|n| n <= 1) {
                        out.insert(k.clone(), v.clone());
                    } else {
                        removed.push(format!("minItems: {v}"));
                    }
                }
                _ if ANTHROPIC_KEEP.contains(&k.as_str()) => {
                    out.insert(k.clone(), v.clone());
                }
                _ if ANNOTATIONS.contains(&k.as_str()) => {}
                _ => removed.push(k.clone()),
            }
        }
        self.warn_removed(path, &removed, "Anthropic strict mode does not support them");
        if is_object_schema(&node) {
            match node.get("additionalProperties") {
                None | Some(Value::Bool(false)) => {}
                Some(_) => {
                    return Err(self.err(
                        path,
                        "a map (`additionalProperties`, e.g. HashMap/BTreeMap or a flattened map) cannot be strict: Anthropic strict \
                         mode needs `additionalProperties: false` on every object; use a Vec of key/value structs, or export this \
                         tool with strict off",
                    ))
                }
            }
            let props = node.get("properties").and_then(Value::as_object).cloned().unwrap_or_default();
            let mut out_props = Map::new();
            for (name, prop) in &props {
                out_props.insert(name.clone(), self.anthropic_strict(prop, &ptr(&ptr(path, "properties"), name))?);
            }
            out.insert("properties".into(), Value::Object(out_props));
            if let Some(r) = node.get("required") {
                out.insert("required".into(), r.clone());
            }
            out.insert("additionalProperties".into(), Value::Bool(false));
        }
        if !["type", "anyOf", "$ref", "enum", "const"].iter().any(|k| out.contains_key(*k)) {
            return Err(self.err(
                path,
                "this value has no `type` (it accepts any JSON), and Anthropic strict mode needs every value typed; give it a \
                 concrete type, or export this tool with strict off",
            ));
        }
        Ok(Value::Object(out))
    }

    // -----------------------------------------------------------------------------------------
    // Gemini OpenAPI.

    fn gemini(&mut self, schema: &Value, path: &str, refs: &mut Vec<String>) -> Result<Value, PassError> {
        let node = match schema {
            Value::Object(m) => m,
            // Any value: an OpenAPI schema without `type`.
            Value::Bool(true) => return Ok(json!({})),
            _ => return Err(self.err(path, "this schema accepts no value at all; remove the field")),
        };
        let node = self.flatten_all_of(node, path, 0)?;
        if let Some(r) = node.get("$ref") {
            let name = r.as_str().unwrap_or_default().to_owned();
            if refs.contains(&name) {
                return Err(self.err(
                    path,
                    format!(
                        "`$ref` `{name}` makes the schema recursive, and Gemini's OpenAPI `parameters` cannot reference definitions \
                         (everything is inlined); use the gemini-json-schema target (`parametersJsonSchema`), or bound the depth"
                    ),
                ));
            }
            let (def_path, def) = self.resolve(path, r)?;
            let mut merged = match def {
                Value::Object(m) => m.clone(),
                Value::Bool(true) => Map::new(),
                _ => return Err(self.err(path, "this `$ref` accepts no value at all")),
            };
            for (k, v) in node.iter().filter(|(k, _)| k.as_str() != "$ref") {
                merged.insert(k.clone(), v.clone());
            }
            refs.push(name);
            let out = self.gemini(&Value::Object(merged), &def_path, refs);
            refs.pop();
            return out;
        }
        self.refuse_structural(&node, path)?;
        if node.contains_key("anyOf") && node.contains_key("oneOf") {
            return Err(self.err(
                path,
                "both `anyOf` and `oneOf` on one schema cannot be expressed in Gemini's OpenAPI schema",
            ));
        }

        let mut out = Map::new();
        let mut nullable = false;
        let mut removed = Vec::new();
        let mut single_branch: Option<Map<String, Value>> = None;
        for (k, v) in node.iter() {
            match k.as_str() {
                "$defs" | "unevaluatedProperties" | "$schema" => {}
                "type" => match v {
                    Value::String(t) if t == "null" => {
                        return Err(self.err(
                            path,
                            "a value that can only be `null` cannot be expressed in Gemini's OpenAPI schema",
                        ))
                    }
                    Value::String(_) => {
                        out.insert(k.clone(), v.clone());
                    }
                    Value::Array(types) => {
                        let names: Vec<&Value> = types.iter().filter(|t| t.as_str() != Some("null")).collect();
                        nullable |= names.len() < types.len();
                        match names.as_slice() {
                            [] => {
                                return Err(self.err(
                                    path,
                                    "a value that can only be `null` cannot be expressed in Gemini's OpenAPI schema",
                                ))
                            }
                            [one] => {
                                out.insert(k.clone(), (*one).clone());
                            }
                            many => {
                                out.insert("anyOf".into(), Value::Array(many.iter().map(|t| json!({ "type": t })).collect()));
                            }
                        }
                    }
                    _ => return Err(self.err(path, "`type` must be a string or an array of strings")),
                },
                "const" => match v {
                    Value::Null => nullable = true,
                    _ => {
                        out.insert("enum".into(), json!([v]));
                    }
                },
                "enum" => {
                    let values = v.as_array().ok_or_else(|| self.err(path, "`enum` must be an array"))?;
                    nullable |= values.iter().any(Value::is_null);
                    out.insert(k.clone(), Value::Array(values.iter().filter(|x| !x.is_null()).cloned().collect()));
                }
                "anyOf" | "oneOf" => {
                    let branches = v.as_array().ok_or_else(|| self.err(path, format!("`{k}` must be an array")))?;
                    let mut outs = Vec::new();
                    for (i, b) in branches.iter().enumerate() {
                        if is_null_schema(b) {
                            nullable = true;
                            continue;
                        }
                        outs.push(self.gemini(b, &ptr(&ptr(path, k), &i.to_string()), refs)?);
                    }
                    match outs.len() {
                        0 => {
                            return Err(self.err(
                                path,
                                "a value that can only be `null` cannot be expressed in Gemini's OpenAPI schema",
                            ))
                        }
                        1 => single_branch = outs.pop().and_then(|b| b.as_object().cloned()),
                        _ => {
                            out.insert("anyOf".into(), Value::Array(outs));
                        }
                    }
                }
                "properties" => {
                    let props = v.as_object().ok_or_else(|| self.err(path, "`properties` must be an object"))?;
                    let mut outs = Map::new();
                    for (name, p) in props {
                        outs.insert(name.clone(), self.gemini(p, &ptr(&ptr(path, "properties"), name), refs)?);
                    }
                    out.insert(k.clone(), Value::Object(outs));
                }
                "items" => {
                    if !node.contains_key("prefixItems") {
                        out.insert(k.clone(), self.gemini(v, &ptr(path, k), refs)?);
                    }
                }
                "prefixItems" => {
                    let items = v.as_array().ok_or_else(|| self.err(path, "`prefixItems` must be an array"))?;
                    let mut distinct: Vec<Value> = Vec::new();
                    for (i, item) in items.iter().enumerate() {
                        let item = self.gemini(item, &ptr(&ptr(path, k), &i.to_string()), refs)?;
                        if !distinct.contains(&item) {
                            distinct.push(item);
                        }
                    }
                    if let Some(rest) = node.get("items").filter(|i| i.as_bool() != Some(false)) {
                        let rest = self.gemini(rest, &ptr(path, "items"), refs)?;
                        if !distinct.contains(&rest) {
                            distinct.push(rest);
                        }
                    }
                    match distinct.len() {
                        0 => {}
                        1 => {
                            out.insert("items".into(), distinct.remove(0));
                        }
                        _ => {
                            self.warn(
                                path,
                                "a tuple's element types are given as `items: {anyOf: [..]}` (Gemini's OpenAPI schema has no \
                                 positional items), so the model is not told which position takes which type; calls are still \
                                 validated against the original schema (the gemini-json-schema target keeps the positions)"
                                    .to_owned(),
                            );
                            out.insert("items".into(), json!({ "anyOf": distinct }));
                        }
                    }
                }
                "additionalProperties" => {
                    if v.as_bool() != Some(false) {
                        self.warn(
                            path,
                            "removed `additionalProperties` (a map's value schema): Gemini's OpenAPI schema has no maps, so the model \
                             is not told the value type; calls are still validated against the original schema (the \
                             gemini-json-schema target keeps it)"
                                .to_owned(),
                        );
                    }
                }
                "format" => match v.as_str() {
                    Some("float" | "double" | "int32" | "int64" | "date-time" | "enum") => {
                        out.insert(k.clone(), v.clone());
                    }
                    Some("int8" | "int16" | "uint8" | "uint16") => {
                        out.insert(k.clone(), json!("int32"));
                    }
                    Some("uint32" | "uint64" | "int" | "uint") => {
                        out.insert(k.clone(), json!("int64"));
                    }
                    Some(f) if NUMERIC_FORMATS.contains(&f) => {}
                    _ => removed.push(format!("format: {v}")),
                },
                "examples" => {
                    if let Some(first) = v.as_array().and_then(|e| e.first()) {
                        out.entry("example").or_insert_with(|| first.clone());
                    }
                }
                _ if GEMINI_KEEP.contains(&k.as_str()) => {
                    out.insert(k.clone(), v.clone());
                }
                _ if ANNOTATIONS.contains(&k.as_str()) => {}
                _ => removed.push(k.clone()),
            }
        }
        self.warn_removed(path, &removed, "Gemini's OpenAPI schema does not support them");
        if let Some(branch) = single_branch {
            // `Option<Struct>`: the one non-null branch becomes the schema; the outer keywords
            // (the field's description) win.
            let mut merged = branch;
            for (k, v) in out {
                merged.insert(k, v);
            }
            out = merged;
        }
        if nullable {
            out.insert("nullable".into(), Value::Bool(true));
        }
        Ok(Value::Object(out))
    }
}

fn is_null_schema(schema: &Value) -> bool {
    schema.get("type").is_some_and(|t| t == "null" || t == &json!(["null"])) || schema.get("const") == Some(&Value::Null)
}

/// Merges `other` into `acc` as `allOf` would (the keywords of both hold): properties and
/// required are united, `acc`'s annotations win, anything else must agree. `Err(keyword)`
/// when it cannot be done without changing the meaning.
fn merge_into(acc: &mut Map<String, Value>, other: Map<String, Value>) -> Result<(), String> {
    for (k, v) in other {
        let Some(existing) = acc.get_mut(&k) else {
            acc.insert(k, v);
            continue;
        };
        if *existing == v {
            continue;
        }
        match k.as_str() {
            "properties" => {
                let (Some(mine), Value::Object(theirs)) = (existing.as_object_mut(), v) else {
                    return Err(k);
                };
                for (name, schema) in theirs {
                    match mine.get(&name) {
                        Some(s) if *s != schema => return Err(format!("properties/{name}")),
                        Some(_) => {}
                        None => {
                            mine.insert(name, schema);
                        }
                    }
                }
            }
            "required" => {
                let (Some(mine), Value::Array(theirs)) = (existing.as_array_mut(), v) else {
                    return Err(k);
                };
                for r in theirs {
                    if !mine.contains(&r) {
                        mine.push(r);
                    }
                }
            }
            "description" | "title" | "examples" | "default" | "$comment" | "$defs" => {}
            _ => return Err(k),
        }
    }
    Ok(())
}

/// Makes an (already strict) property schema accept `null`, unless it already does.
fn nullable(schema: Value) -> Value {
    let Value::Object(mut s) = schema else { return schema };
    if accepts_null(&s) {
        return Value::Object(s);
    }
    if let Some(Value::Array(branches)) = s.get_mut("anyOf") {
        branches.push(json!({"type": "null"}));
        return Value::Object(s);
    }
    if s.contains_key("$ref") || s.contains_key("const") {
        let mut outer = Map::new();
        for k in ["description", "title"] {
            if let Some(v) = s.remove(k) {
                outer.insert(k.into(), v);
            }
        }
        outer.insert("anyOf".into(), json!([s, {"type": "null"}]));
        return Value::Object(outer);
    }
    match s.get_mut("type") {
        Some(Value::String(t)) => {
            let t = std::mem::take(t);
            s.insert("type".into(), json!([t, "null"]));
        }
        Some(Value::Array(ts)) => ts.push(json!("null")),
        _ => {}
    }
    if let Some(Value::Array(values)) = s.get_mut("enum") {
        values.push(Value::Null);
    }
    Value::Object(s)
}

fn accepts_null(s: &Map<String, Value>) -> bool {
    type_names(s).contains(&"null")
        || s.get("const") == Some(&Value::Null)
        || s.get("enum").and_then(Value::as_array).is_some_and(|e| e.contains(&Value::Null))
        || s.get("anyOf")
            .and_then(Value::as_array)
            .is_some_and(|bs| bs.iter().any(|b| b.as_object().is_some_and(accepts_null)))
}

/// Removes `$defs` entries no longer referenced (after inlining).
fn prune_defs(schema: &mut Value) {
    let Some(defs) = schema.get("$defs").and_then(Value::as_object).cloned() else {
        return;
    };
    let mut body = schema.clone();
    if let Some(m) = body.as_object_mut() {
        m.remove("$defs");
    }
    let mut live: Vec<String> = Vec::new();
    let mut queue = vec![body];
    while let Some(v) = queue.pop() {
        collect_refs(&v, &mut |r| {
            if let Some(name) = r.strip_prefix("#/$defs/") {
                let name = name.replace("~1", "/").replace("~0", "~");
                if !live.contains(&name) {
                    if let Some(def) = defs.get(&name) {
                        queue.push(def.clone());
                    }
                    live.push(name);
                }
            }
        });
    }
    let Some(m) = schema.as_object_mut() else { return };
    if live.is_empty() {
        m.remove("$defs");
    } else if let Some(Value::Object(d)) = m.get_mut("$defs") {
        d.retain(|k, _| live.contains(k));
    }
}

fn collect_refs(v: &Value, f: &mut impl FnMut(&str)) {
    match v {
        Value::Object(m) => {
            for (k, x) in m {
                match (k.as_str(), x) {
                    ("$ref", Value::String(r)) => f(r),
                    ("enum" | "const" | "default" | "examples", _) => {}
                    _ => collect_refs(x, f),
                }
            }
        }
        Value::Array(xs) => xs.iter().for_each(|x| collect_refs(x, f)),
        _ => {}
    }
}

/// The subschemas directly under `node`, with their paths (`$defs` only when asked).
fn children<'v>(node: &'v Map<String, Value>, path: &str, with_defs: bool) -> Vec<(String, &'v Value)> {
    let mut out = Vec::new();
    for (k, v) in node {
        match k.as_str() {
            "$defs" if !with_defs => {}
            "properties" | "patternProperties" | "$defs" | "dependentSchemas" => {
                if let Some(m) = v.as_object() {
                    out.extend(m.iter().map(|(name, s)| (ptr(&ptr(path, k), name), s)));
                }
            }
            "items"
            | "additionalProperties"
            | "contains"
            | "propertyNames"
            | "unevaluatedItems"
            | "unevaluatedProperties"
            | "not"
            | "if"
            | "then"
            | "else" => out.push((ptr(path, k), v)),
            "anyOf" | "oneOf" | "allOf" | "prefixItems" => {
                if let Some(a) = v.as_array() {
                    out.extend(a.iter().enumerate().map(|(i, s)| (ptr(&ptr(path, k), &i.to_string()), s)));
                }
            }
            _ => {}
        }
    }
    out
}

/// Calls `f` on every schema object in the tree (each `$defs` entry once, references not
/// followed).
fn each_subschema(schema: &Value, path: &str, f: &mut impl FnMut(&Map<String, Value>, &str)) {
    let Some(node) = schema.as_object() else { return };
    f(node, path);
    for (p, child) in children(node, path, true) {
        each_subschema(child, &p, f);
    }
}

/// The first `$ref` that closes a cycle reachable from the root: its path and the reference.
fn find_ref_cycle(root: &Value) -> Option<(String, String)> {
    fn visit(root: &Value, schema: &Value, path: &str, stack: &mut Vec<String>, done: &mut Vec<String>) -> Option<(String, String)> {
        let node = schema.as_object()?;
        if let Some(r) = node.get("$ref").and_then(Value::as_str) {
            if stack.iter().any(|s| s == r) {
                return Some((path.to_owned(), r.to_owned()));
            }
            if !done.iter().any(|d| d == r) {
                if let Some(def) = r.strip_prefix('#').and_then(|p| root.pointer(p)) {
                    stack.push(r.to_owned());
                    let found = visit(root, def, &r[1..], stack, done);
                    stack.pop();
                    if found.is_some() {
                        return found;
                    }
                }
                done.push(r.to_owned());
            }
        }
        for (p, child) in children(node, path, false) {
            if let Some(found) = visit(root, child, &p, stack, done) {
                return Some(found);
            }
        }
        None
    }
    visit(root, root, "", &mut Vec::new(), &mut Vec::new())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn run(target: Target, strict: bool, schema: Value) -> PassOutput {
        apply(target, strict, "t", &schema).unwrap_or_else(|e| panic!("{e}"))
    }

    fn fail(target: Target, strict: bool, schema: Value) -> PassError {
        let e = apply(target, strict, "tool_x", &schema).expect_err("the pass should refuse this schema");
        let msg = e.to_string();
        assert!(msg.contains("tool `tool_x`"), "{msg}");
        assert!(msg.contains(target.as_str()), "{msg}");
        assert!(msg.contains(&format!("at `{}`", e.path)), "{msg}");
        assert!(msg.contains(&e.rule), "{msg}");
        e
    }

    fn obj(props: Value) -> Value {
        json!({"$schema": "https://json-schema.org/draft/2020-12/schema", "type": "object", "properties": props})
    }

    #[test]
    fn targets_have_kebab_names_matching_serde() {
        for t in Target::ALL {
            assert_eq!(serde_json::to_value(t).unwrap(), json!(t.as_str()));
            assert_eq!(serde_json::from_value::<Target>(json!(t.as_str())).unwrap(), t);
        }
        assert_eq!(Target::GeminiJsonSchema.as_str(), "gemini-json-schema");
    }

    #[test]
    fn every_target_but_mcp_drops_dollar_schema() {
        let s = obj(json!({"a": {"type": "string"}}));
        for t in Target::ALL {
            for strict in [false, true] {
                let out = run(t, strict, s.clone());
                // MCP schemas are JSON Schema 2020-12 and keep the dialect they name (SEP-1613).
                assert_eq!(out.schema.get("$schema").is_some(), t == Target::Mcp, "{t:?} {strict}");
            }
        }
    }

    #[test]
    fn object_roots_are_required_where_providers_require_them() {
        for t in [Target::OpenAiChat, Target::OpenAiResponses, Target::Anthropic, Target::Mcp] {
            for strict in [false, true] {
                let e = fail(t, strict, json!({"type": "number"}));
                assert_eq!(e.path, "");
                assert!(e.rule.contains("`type: \"number\"`"), "{e}");
                let e = fail(t, strict, json!({"oneOf": [{"type": "object"}, {"type": "string"}]}));
                assert!(e.rule.contains("oneOf"), "{e}");
                fail(t, strict, json!(true));
            }
        }
        // Gemini also serves `response` schemas: any root goes.
        assert_eq!(
            run(Target::GeminiOpenApi, false, json!({"type": "number", "format": "double"})).schema["format"],
            "double"
        );
        assert_eq!(
            run(Target::GeminiJsonSchema, false, json!({"type": "number"})).schema,
            json!({"type": "number"})
        );
    }

    #[test]
    fn non_strict_openai_and_mcp_keep_the_schema() {
        let s = json!({
            "$schema": "x", "type": "object", "$defs": {"P": {"type": "object"}},
            "properties": {"p": {"$ref": "#/$defs/P"}, "m": {"type": "object", "additionalProperties": {"type": "integer", "format": "uint8"}}}
        });
        let mut expected = s.clone();
        expected.as_object_mut().unwrap().remove("$schema");
        for t in [Target::OpenAiChat, Target::OpenAiResponses, Target::Mcp, Target::GeminiJsonSchema] {
            let out = run(t, false, s.clone());
            assert_eq!(&out.schema, if t == Target::Mcp { &s } else { &expected }, "{t:?}");
            assert!(out.warnings.is_empty());
        }
        assert_eq!(run(Target::Anthropic, false, s).schema, expected);
    }

    #[test]
    fn openai_strict_requires_everything_and_makes_optional_nullable() {
        let s = json!({
            "type": "object",
            "properties": {
                "a": {"type": "string", "description": "A"},
                "b": {"type": ["integer", "null"], "format": "uint32", "minimum": 0},
                "c": {"type": "string", "enum": ["x", "y"]},
                "d": {"$ref": "#/$defs/P"},
                "e": {"anyOf": [{"$ref": "#/$defs/P"}, {"type": "null"}]},
                "f": {"const": "k", "type": "string", "description": "F"},
                "g": {"type": "integer", "default": 3}
            },
            "required": ["a"],
            "$defs": {"P": {"type": "object", "properties": {"x": {"type": "number", "format": "double"}}, "required": ["x"]}}
        });
        let out = run(Target::OpenAiChat, true, s);
        assert_eq!(
            out.schema,
            json!({
                "type": "object",
                "properties": {
                    "a": {"type": "string", "description": "A"},
                    "b": {"type": ["integer", "null"], "minimum": 0},
                    "c": {"type": ["string", "null"], "enum": ["x", "y", null]},
                    "d": {"anyOf": [{"$ref": "#/$defs/P"}, {"type": "null"}]},
                    "e": {"anyOf": [{"$ref": "#/$defs/P"}, {"type": "null"}]},
                    "f": {"anyOf": [{"const": "k", "type": "string"}, {"type": "null"}], "description": "F"},
                    "g": {"type": ["integer", "null"]}
                },
                "required": ["a", "b", "c", "d", "e", "f", "g"],
                "additionalProperties": false,
                "$defs": {"P": {"type": "object", "properties": {"x": {"type": "number"}}, "required": ["x"], "additionalProperties": false}}
            })
        );
        assert!(out.warnings.is_empty(), "{:?}", out.warnings);
    }

    #[test]
    fn openai_strict_inlines_refs_with_siblings_and_prunes_defs() {
        let s = json!({
            "type": "object",
            "properties": {"p": {"$ref": "#/$defs/P", "description": "The point"}},
            "required": ["p"],
            "$defs": {"P": {"type": "object", "properties": {"x": {"type": "number"}}, "required": ["x"]}}
        });
        let out = run(Target::OpenAiResponses, true, s);
        assert_eq!(
            out.schema,
            json!({
                "type": "object",
                "properties": {"p": {"type": "object", "description": "The point", "properties": {"x": {"type": "number"}}, "required": ["x"], "additionalProperties": false}},
                "required": ["p"],
                "additionalProperties": false
            })
        );
    }

    #[test]
    fn openai_strict_warns_about_constraints_next_to_an_inlined_ref() {
        let s = json!({
            "type": "object",
            "properties": {"s": {"$ref": "#/$defs/S", "minLength": 2, "description": "d"}},
            "required": ["s"],
            "$defs": {"S": {"type": "string", "maxLength": 9}}
        });
        let out = run(Target::OpenAiChat, true, s);
        assert_eq!(out.schema["properties"]["s"], json!({"type": "string", "description": "d"}));
        assert!(out.schema.get("$defs").is_none());
        assert_eq!(out.warnings.len(), 2, "{:?}", out.warnings);
        assert!(out.warnings[0].contains("`/$defs/S`: removed `maxLength`"), "{:?}", out.warnings);
        assert!(
            out.warnings[1].contains("`/properties/s`: removed `minLength`"),
            "{:?}",
            out.warnings
        );
    }

    #[test]
    fn openai_strict_keeps_recursion_and_wraps_a_self_reference_with_siblings() {
        let s = json!({
            "type": "object",
            "properties": {"root": {"$ref": "#/$defs/N", "description": "Root"}},
            "required": ["root"],
            "$defs": {"N": {"type": "object", "properties": {"next": {"$ref": "#/$defs/N", "description": "Next"}}, "required": ["next"]}}
        });
        let out = run(Target::OpenAiChat, true, s);
        let root = &out.schema["properties"]["root"];
        assert_eq!(root["description"], "Root");
        assert_eq!(
            root["properties"]["next"],
            json!({"anyOf": [{"$ref": "#/$defs/N"}], "description": "Next"})
        );
        assert!(out.schema["$defs"]["N"].is_object());
    }

    #[test]
    fn openai_strict_converts_one_of_and_flattens_all_of() {
        let s = json!({
            "type": "object",
            "properties": {
                "u": {"oneOf": [{"type": "string"}, {"type": "integer", "format": "int64"}]},
                "single": {"allOf": [{"$ref": "#/$defs/E"}], "description": "one"},
                "both": {"allOf": [
                    {"type": "object", "properties": {"a": {"type": "string"}}, "required": ["a"]},
                    {"type": "object", "properties": {"b": {"type": "string"}}, "required": ["b"]}
                ]}
            },
            "required": ["u", "single", "both"],
            "$defs": {"E": {"type": "string", "enum": ["x"]}}
        });
        let out = run(Target::OpenAiChat, true, s);
        assert_eq!(
            out.schema["properties"]["u"],
            json!({"anyOf": [{"type": "string"}, {"type": "integer"}]})
        );
        assert_eq!(
            out.schema["properties"]["single"],
            json!({"type": "string", "enum": ["x"], "description": "one"})
        );
        assert_eq!(
            out.schema["properties"]["both"],
            json!({"type": "object", "properties": {"a": {"type": "string"}, "b": {"type": "string"}}, "required": ["a", "b"], "additionalProperties": false})
        );
        assert!(out.schema.get("$defs").is_none());
    }

    #[test]
    fn openai_strict_removes_unsupported_constraints_with_warnings() {
        let s = obj(json!({
            "s": {"type": "string", "minLength": 1, "maxLength": 5, "format": "uri"},
            "tags": {"type": "array", "items": {"type": "string"}, "uniqueItems": true, "minItems": 1},
            "p": {"type": "string", "pattern": "^(?!x)"},
            "ok": {"type": "string", "pattern": "^a+$", "format": "date"}
        }));
        let out = run(Target::OpenAiChat, true, s);
        let props = &out.schema["properties"];
        assert_eq!(props["s"], json!({"type": ["string", "null"]}));
        assert_eq!(
            props["tags"],
            json!({"type": ["array", "null"], "items": {"type": "string"}, "minItems": 1})
        );
        assert_eq!(props["p"], json!({"type": ["string", "null"]}));
        assert_eq!(
            props["ok"],
            json!({"type": ["string", "null"], "pattern": "^a+$", "format": "date"})
        );
        let all = out.warnings.join("\n");
        assert_eq!(out.warnings.len(), 3, "{all}");
        assert!(
            all.contains("`/properties/s`: removed `format: \"uri\"`, `maxLength`, `minLength`"),
            "{all}"
        );
        assert!(all.contains("`/properties/tags`: removed `uniqueItems`"), "{all}");
        assert!(all.contains("pattern (lookaround)"), "{all}");
        assert!(all.contains("still validated against the original schema"), "{all}");
    }

    #[test]
    fn openai_strict_refusals_name_path_and_rule() {
        let cases = [
            (
                obj(json!({"m": {"type": "object", "additionalProperties": {"type": "string"}}})),
                "/properties/m",
                "a map",
            ),
            (
                obj(json!({"m": {"type": "object", "additionalProperties": true}})),
                "/properties/m",
                "a map",
            ),
            (obj(json!({"v": true})), "/properties/v", "accepts any JSON"),
            (obj(json!({"v": {"description": "anything"}})), "/properties/v", "no `type`"),
            (
                obj(json!({"t": {"type": "array", "prefixItems": [{"type": "string"}]}})),
                "/properties/t",
                "tuple",
            ),
            (obj(json!({"a": {"type": "array"}})), "/properties/a", "without `items`"),
            (obj(json!({"n": {"not": {"type": "string"}}})), "/properties/n", "`not`"),
            (
                obj(json!({"n": {"type": "string", "if": {"minLength": 1}, "then": {}}})),
                "/properties/n",
                "`if`",
            ),
            (
                obj(json!({"n": {"type": "object", "dependentRequired": {"a": ["b"]}}})),
                "/properties/n",
                "`dependentRequired`",
            ),
            (
                obj(json!({"n": {"type": "object", "dependentSchemas": {"a": {}}}})),
                "/properties/n",
                "`dependentSchemas`",
            ),
            (
                obj(json!({"n": {"type": "object", "patternProperties": {"^x": {}}}})),
                "/properties/n",
                "`patternProperties`",
            ),
            (
                obj(json!({"n": {"type": "object", "unevaluatedProperties": {"type": "string"}}})),
                "/properties/n",
                "`unevaluatedProperties`",
            ),
            (
                obj(json!({"n": {"type": "object", "anyOf": [{"type": "object"}], "unevaluatedProperties": false}})),
                "/properties/n",
                "#[serde(flatten)]",
            ),
            (
                obj(json!({"n": {"allOf": [{"type": "string"}, {"type": "integer"}]}})),
                "/properties/n/allOf/1",
                "`type` differs",
            ),
            (
                json!({"type": "object", "properties": {"x": {"type": "string"}}, "oneOf": [{"properties": {"a": {"type": "string"}}}]}),
                "",
                "#[serde(flatten)]",
            ),
            (json!({"anyOf": [{"type": "object"}]}), "", "union"),
            (
                json!({"type": "object", "properties": {"d": {"$ref": "#/$defs/D"}}, "$defs": {"D": {"type": "object", "additionalProperties": {"type": "integer"}}}}),
                "/$defs/D",
                "a map",
            ),
            (
                obj(json!({"r": {"$ref": "#/$defs/Missing", "description": "x"}})),
                "/properties/r",
                "points to nothing",
            ),
        ];
        for (schema, path, rule) in cases {
            let e = fail(Target::OpenAiResponses, true, schema.clone());
            assert_eq!(e.path, path, "{e}");
            assert!(e.rule.contains(rule), "{e}");
            // Non-strict OpenAI keeps what is not about the root.
            if !path.is_empty() {
                apply(Target::OpenAiResponses, false, "t", &schema).unwrap();
            }
        }
    }

    #[test]
    fn openai_strict_drops_unevaluated_properties_false_on_plain_objects() {
        let s = json!({"type": "object", "properties": {"a": {"type": "string"}}, "required": ["a"], "unevaluatedProperties": false});
        let out = run(Target::OpenAiChat, true, s);
        assert_eq!(
            out.schema,
            json!({"type": "object", "properties": {"a": {"type": "string"}}, "required": ["a"], "additionalProperties": false})
        );
    }

    fn nested(levels: usize) -> Value {
        let mut s = json!({"type": "object", "properties": {"leaf": {"type": "string"}}, "required": ["leaf"]});
        for _ in 1..levels {
            s = json!({"type": "object", "properties": {"n": s}, "required": ["n"]});
        }
        s
    }

    #[test]
    fn openai_strict_limits() {
        run(Target::OpenAiChat, true, nested(10));
        let e = fail(Target::OpenAiChat, true, nested(11));
        assert_eq!(e.path, format!("{}", "/properties/n".repeat(10)));
        assert!(e.rule.contains("11 levels") && e.rule.contains("at most 10"), "{e}");
        // Non-strict has no such limit here.
        run(Target::OpenAiChat, false, nested(11));

        let values: Vec<Value> = (0..1001).map(|i| json!(format!("v{i}"))).collect();
        let e = fail(Target::OpenAiChat, true, obj(json!({"e": {"type": "string", "enum": values}})));
        assert_eq!(e.path, "/properties/e");
        assert!(e.rule.contains("1001 enum values"), "{e}");
        let values: Vec<Value> = (0..1000).map(|i| json!(format!("v{i}"))).collect();
        run(Target::OpenAiChat, true, obj(json!({"e": {"type": "string", "enum": values}})));

        let props: Map<String, Value> = (0..5001).map(|i| (format!("p{i}"), json!({"type": "string"}))).collect();
        let e = fail(Target::OpenAiChat, true, obj(Value::Object(props)));
        assert!(e.rule.contains("5000 properties"), "{e}");

        let long: Vec<Value> = (0..300).map(|i| json!(format!("{i:0>60}"))).collect();
        let e = fail(Target::OpenAiChat, true, obj(json!({"e": {"type": "string", "enum": long}})));
        assert!(e.rule.contains("15,000 characters"), "{e}");

        let props: Map<String, Value> = (0..200).map(|i| (format!("{i:0>700}"), json!({"type": "string"}))).collect();
        let e = fail(Target::OpenAiChat, true, obj(Value::Object(props)));
        assert!(e.rule.contains("120000"), "{e}");
    }

    #[test]
    fn openai_strict_depth_follows_refs_but_not_recursion() {
        let s = json!({
            "type": "object",
            "properties": {"t": {"$ref": "#/$defs/T"}},
            "required": ["t"],
            "$defs": {"T": {"type": "object", "properties": {"kids": {"type": "array", "items": {"$ref": "#/$defs/T"}}}, "required": ["kids"]}}
        });
        run(Target::OpenAiChat, true, s);
        let mut defs = Map::new();
        for i in 0..11 {
            let next = if i == 10 {
                json!({"type": "string"})
            } else {
                json!({"$ref": format!("#/$defs/L{}", i + 1)})
            };
            defs.insert(
                format!("L{i}"),
                json!({"type": "object", "properties": {"n": next}, "required": ["n"]}),
            );
        }
        let s = json!({"type": "object", "properties": {"n": {"$ref": "#/$defs/L0"}}, "required": ["n"], "$defs": defs});
        let e = fail(Target::OpenAiChat, true, s);
        assert_eq!(e.path, "/$defs/L9");
    }

    #[test]
    fn anthropic_flattens_a_root_all_of_and_refuses_root_unions() {
        let s = json!({
            "$schema": "x",
            "allOf": [
                {"type": "object", "properties": {"a": {"type": "string"}}, "required": ["a"]},
                {"$ref": "#/$defs/B"}
            ],
            "$defs": {"B": {"type": "object", "properties": {"b": {"type": "integer"}}}}
        });
        let out = run(Target::Anthropic, false, s);
        assert_eq!(
            out.schema,
            json!({
                "type": "object",
                "properties": {"a": {"type": "string"}, "b": {"type": "integer"}},
                "required": ["a"],
                "$defs": {"B": {"type": "object", "properties": {"b": {"type": "integer"}}}}
            })
        );
        for strict in [false, true] {
            let e = fail(
                Target::Anthropic,
                strict,
                json!({"oneOf": [{"type": "object"}, {"type": "object"}]}),
            );
            assert_eq!(e.path, "");
            assert!(e.rule.contains("Anthropic rejects `oneOf` at the root"), "{e}");
            let e = fail(
                Target::Anthropic,
                strict,
                json!({"type": "object", "properties": {}, "anyOf": [{"type": "object"}]}),
            );
            assert!(e.rule.contains("`anyOf` at the root"), "{e}");
            let e = fail(
                Target::Anthropic,
                strict,
                json!({"allOf": [{"type": "object", "properties": {"a": {"type": "string"}}}, {"type": "object", "properties": {"a": {"type": "integer"}}}]}),
            );
            assert_eq!(e.path, "/allOf/1");
            assert!(e.rule.contains("properties/a"), "{e}");
        }
    }

    #[test]
    fn anthropic_strict_closes_objects_and_removes_bounds_with_warnings() {
        let s = json!({
            "type": "object",
            "properties": {
                "n": {"type": "integer", "format": "uint8", "minimum": 0, "maximum": 255},
                "s": {"type": "string", "minLength": 2, "maxLength": 9, "format": "uri", "pattern": "^h"},
                "v": {"type": "array", "items": {"type": "number", "exclusiveMinimum": 0, "multipleOf": 0.5}, "minItems": 3, "maxItems": 3},
                "one": {"type": "array", "items": {"type": "string"}, "minItems": 1, "uniqueItems": true},
                "e": {"oneOf": [{"const": "a", "type": "string"}, {"type": "object", "properties": {"k": {"type": "string"}}, "required": ["k"]}]},
                "o": {"type": ["string", "null"], "default": null}
            },
            "required": ["n"]
        });
        let out = run(Target::Anthropic, true, s);
        assert_eq!(
            out.schema,
            json!({
                "type": "object",
                "properties": {
                    "n": {"type": "integer"},
                    "s": {"type": "string", "format": "uri", "pattern": "^h"},
                    "v": {"type": "array", "items": {"type": "number"}},
                    "one": {"type": "array", "items": {"type": "string"}, "minItems": 1},
                    "e": {"anyOf": [{"const": "a", "type": "string"}, {"type": "object", "properties": {"k": {"type": "string"}}, "required": ["k"], "additionalProperties": false}]},
                    "o": {"type": ["string", "null"], "default": null}
                },
                "required": ["n"],
                "additionalProperties": false
            })
        );
        let all = out.warnings.join("\n");
        assert_eq!(out.warnings.len(), 5, "{all}");
        assert!(all.contains("`/properties/n`: removed `maximum`, `minimum`"), "{all}");
        assert!(all.contains("`/properties/s`: removed `maxLength`, `minLength`"), "{all}");
        assert!(all.contains("`/properties/v`: removed `maxItems`, `minItems: 3`"), "{all}");
        assert!(
            all.contains("`/properties/v/items`: removed `exclusiveMinimum`, `multipleOf`"),
            "{all}"
        );
        assert!(all.contains("`/properties/one`: removed `uniqueItems`"), "{all}");
        // Non-strict keeps all of it.
        let s = obj(json!({"n": {"type": "integer", "minimum": 0}}));
        assert_eq!(run(Target::Anthropic, false, s).schema["properties"]["n"]["minimum"], 0);
    }

    #[test]
    fn anthropic_strict_refusals() {
        let rec = json!({
            "type": "object",
            "properties": {"root": {"$ref": "#/$defs/N"}},
            "$defs": {"N": {"type": "object", "properties": {"kids": {"type": "array", "items": {"$ref": "#/$defs/N"}}}}}
        });
        let e = fail(Target::Anthropic, true, rec.clone());
        assert_eq!(e.path, "/$defs/N/properties/kids/items");
        assert!(e.rule.contains("recursive"), "{e}");
        run(Target::Anthropic, false, rec);
        let cases = [
            (
                obj(json!({"m": {"type": "object", "additionalProperties": {"type": "string"}}})),
                "/properties/m",
                "a map",
            ),
            (obj(json!({"v": true})), "/properties/v", "accepts any JSON"),
            (obj(json!({"v": {}})), "/properties/v", "no `type`"),
            (
                obj(json!({"t": {"type": "array", "prefixItems": [{"type": "string"}]}})),
                "/properties/t",
                "tuple",
            ),
            (obj(json!({"e": {"enum": [{"a": 1}]}})), "/properties/e", "enum of objects"),
            (
                obj(json!({"n": {"not": {}}})),
                "/properties/n",
                "`not` is not supported by anthropic strict mode",
            ),
            (
                obj(json!({"f": {"type": "object", "properties": {"x": {"type": "string"}}, "oneOf": [{"type": "object"}]}})),
                "/properties/f",
                "#[serde(flatten)]",
            ),
        ];
        for (schema, path, rule) in cases {
            let e = fail(Target::Anthropic, true, schema);
            assert_eq!(e.path, path, "{e}");
            assert!(e.rule.contains(rule), "{e}");
        }
    }

    #[test]
    fn anthropic_request_limits() {
        let small = json!({"type": "object", "properties": {"a": {"type": "string"}}, "required": ["a"]});
        let tools: Vec<(bool, &Value)> = (0..20).map(|_| (true, &small)).chain((0..30).map(|_| (false, &small))).collect();
        assert!(anthropic_request_warnings(&tools).is_empty());
        let tools: Vec<(bool, &Value)> = (0..21).map(|_| (true, &small)).collect();
        let w = anthropic_request_warnings(&tools);
        assert_eq!(w.len(), 1);
        assert!(w[0].contains("21 strict tools") && w[0].contains("at most 20"), "{w:?}");

        let props: Map<String, Value> = (0..25).map(|i| (format!("p{i}"), json!({"type": "string"}))).collect();
        let optional = json!({"type": "object", "properties": props});
        let w = anthropic_request_warnings(&[(true, &optional), (false, &optional)]);
        assert_eq!(w.len(), 1);
        assert!(w[0].contains("25 optional parameters") && w[0].contains("at most 24"), "{w:?}");

        let props: Map<String, Value> = (0..9).map(|i| (format!("p{i}"), json!({"type": ["string", "null"]}))).collect();
        let nested = json!({
            "type": "object",
            "properties": {"inner": {"$ref": "#/$defs/I"}},
            "required": ["inner"],
            "$defs": {"I": {"type": "object", "properties": props, "required": (0..9).map(|i| format!("p{i}")).collect::<Vec<_>>()}}
        });
        assert!(anthropic_request_warnings(&[(true, &nested)]).is_empty());
        let w = anthropic_request_warnings(&[(true, &nested), (true, &nested)]);
        assert_eq!(w.len(), 1);
        assert!(w[0].contains("18 union-typed parameters") && w[0].contains("at most 16"), "{w:?}");
    }

    #[test]
    fn gemini_openapi_inlines_and_rewrites_nullability() {
        let s = json!({
            "$schema": "x",
            "type": "object",
            "properties": {
                "name": {"type": ["string", "null"], "description": "N"},
                "p": {"anyOf": [{"$ref": "#/$defs/P"}, {"type": "null"}], "description": "maybe"},
                "q": {"$ref": "#/$defs/P", "description": "Q"},
                "kind": {"const": "A", "type": "string"},
                "u": {"oneOf": [{"type": "string"}, {"type": "integer", "format": "uint8", "minimum": 0, "maximum": 255}]},
                "c": {"$ref": "#/$defs/C"},
                "m": {"type": "object", "additionalProperties": {"type": "integer"}},
                "d": {"type": "string", "format": "date-time", "title": "D", "default": "x", "examples": ["e1", "e2"]},
                "one": {"allOf": [{"$ref": "#/$defs/C"}]}
            },
            "required": ["kind"],
            "additionalProperties": false,
            "$defs": {
                "P": {"type": "object", "properties": {"x": {"type": "number", "format": "double"}}, "required": ["x"]},
                "C": {"type": "string", "enum": ["r", "g"]}
            }
        });
        let out = run(Target::GeminiOpenApi, false, s);
        let p = json!({"type": "object", "properties": {"x": {"type": "number", "format": "double"}}, "required": ["x"]});
        let mut p_nullable = p.clone();
        p_nullable["description"] = json!("maybe");
        p_nullable["nullable"] = json!(true);
        let mut q = p.clone();
        q["description"] = json!("Q");
        assert_eq!(
            out.schema,
            json!({
                "type": "object",
                "properties": {
                    "name": {"type": "string", "nullable": true, "description": "N"},
                    "p": p_nullable,
                    "q": q,
                    "kind": {"enum": ["A"], "type": "string"},
                    "u": {"anyOf": [{"type": "string"}, {"type": "integer", "format": "int32", "minimum": 0, "maximum": 255}]},
                    "c": {"type": "string", "enum": ["r", "g"]},
                    "m": {"type": "object"},
                    "d": {"type": "string", "format": "date-time", "title": "D", "default": "x", "example": "e1"},
                    "one": {"type": "string", "enum": ["r", "g"]}
                },
                "required": ["kind"]
            })
        );
        assert_eq!(out.warnings.len(), 1, "{:?}", out.warnings);
        assert!(
            out.warnings[0].contains("`/properties/m`: removed `additionalProperties`"),
            "{:?}",
            out.warnings
        );
    }

    #[test]
    fn gemini_openapi_formats_bounds_and_tuples() {
        let s = obj(json!({
            "a": {"type": "integer", "format": "uint32", "minimum": 0},
            "b": {"type": "integer", "format": "int64"},
            "c": {"type": "integer", "format": "uint128", "minimum": 0},
            "d": {"type": "number", "format": "float", "exclusiveMinimum": 0, "multipleOf": 2},
            "e": {"type": "string", "format": "email"},
            "t": {"type": "array", "prefixItems": [{"type": "integer", "format": "uint8"}, {"type": "string"}], "minItems": 2, "maxItems": 2},
            "same": {"type": "array", "prefixItems": [{"type": "number"}, {"type": "number"}], "minItems": 2, "maxItems": 2},
            "set": {"type": "array", "items": {"type": "string"}, "uniqueItems": true},
            "multi": {"type": ["string", "integer", "null"]}
        }));
        let out = run(Target::GeminiOpenApi, false, s);
        assert_eq!(
            out.schema["properties"],
            json!({
                "a": {"type": "integer", "format": "int64", "minimum": 0},
                "b": {"type": "integer", "format": "int64"},
                "c": {"type": "integer", "minimum": 0},
                "d": {"type": "number", "format": "float"},
                "e": {"type": "string"},
                "t": {"type": "array", "items": {"anyOf": [{"type": "integer", "format": "int32"}, {"type": "string"}]}, "minItems": 2, "maxItems": 2},
                "same": {"type": "array", "items": {"type": "number"}, "minItems": 2, "maxItems": 2},
                "set": {"type": "array", "items": {"type": "string"}},
                "multi": {"anyOf": [{"type": "string"}, {"type": "integer"}], "nullable": true}
            })
        );
        let all = out.warnings.join("\n");
        assert_eq!(out.warnings.len(), 4, "{all}");
        assert!(all.contains("`/properties/d`: removed `exclusiveMinimum`, `multipleOf`"), "{all}");
        assert!(all.contains("`/properties/e`: removed `format: \"email\"`"), "{all}");
        assert!(all.contains("`/properties/t`: a tuple"), "{all}");
        assert!(all.contains("`/properties/set`: removed `uniqueItems`"), "{all}");
    }

    #[test]
    fn gemini_openapi_refusals() {
        let rec = json!({
            "type": "object",
            "properties": {"root": {"$ref": "#/$defs/N"}},
            "$defs": {"N": {"type": "object", "properties": {"kids": {"type": "array", "items": {"$ref": "#/$defs/N"}}}}}
        });
        let e = fail(Target::GeminiOpenApi, false, rec.clone());
        assert_eq!(e.path, "/$defs/N/properties/kids/items");
        assert!(e.rule.contains("recursive") && e.rule.contains("gemini-json-schema"), "{e}");
        // The JSON Schema flavour keeps references, recursion included.
        assert_eq!(run(Target::GeminiJsonSchema, false, rec.clone()).schema, rec);
        let cases = [
            (obj(json!({"n": {"type": "null"}})), "/properties/n", "only be `null`"),
            (
                obj(json!({"n": {"not": {"type": "string"}}})),
                "/properties/n",
                "`not` is not supported by gemini-openapi",
            ),
            (
                obj(json!({"n": {"type": "object", "patternProperties": {"^x": {}}}})),
                "/properties/n",
                "`patternProperties`",
            ),
            (
                obj(json!({"n": {"allOf": [{"type": "string"}, {"type": "integer"}]}})),
                "/properties/n/allOf/1",
                "allOf",
            ),
            (obj(json!({"n": false})), "/properties/n", "accepts no value"),
        ];
        for (schema, path, rule) in cases {
            let e = fail(Target::GeminiOpenApi, false, schema);
            assert_eq!(e.path, path, "{e}");
            assert!(e.rule.contains(rule), "{e}");
        }
        // `serde_json::Value` is an untyped OpenAPI schema.
        assert_eq!(
            run(Target::GeminiOpenApi, false, obj(json!({"v": true}))).schema["properties"]["v"],
            json!({})
        );
    }

    #[test]
    fn strict_flag_is_ignored_where_it_means_nothing() {
        let s = obj(json!({"m": {"type": "object", "additionalProperties": {"type": "string"}}}));
        for t in [Target::GeminiJsonSchema, Target::Mcp, Target::GeminiOpenApi] {
            assert_eq!(run(t, true, s.clone()), run(t, false, s.clone()), "{t:?}");
        }
    }
}
