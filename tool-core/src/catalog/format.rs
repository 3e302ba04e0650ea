//! One tool entry per dialect, in that dialect's exact shape, written straight to JSON text.
//!
//! Owns the field layout of each provider's tool object (OpenAI Chat and Responses, Anthropic,
//! Gemini, MCP) and of the document around them. Schemas arrive rewritten by [`pass`] (or
//! untouched, when the dialect takes them as they are: then the tool's own schema is serialised
//! once per catalog, as [`SchemaText`], and that text is shared by every such format, never the
//! value copied); names arrive mapped by [`names`](super::names). Must not rewrite schemas or
//! choose names.

use serde::ser::{Serialize, SerializeMap, Serializer};
use serde_json::value::RawValue;
use std::sync::OnceLock;

use serde_json::{Map, Value};

use super::pass::{self, PassError, Rewritten};
use crate::dialect::Dialect;
use crate::spec::ToolSpec;

/// A tool's entry for one target, plus what the passes warned about.
pub(crate) struct Entry {
    pub json: Box<RawValue>,
    pub warnings: Vec<String>,
    /// The input schema sent, kept for the per-request limits of Anthropic strict tools.
    pub strict_input: Option<Value>,
}

/// A schema's top-level values, each serialised once per catalog and copied into the entry of
/// every format that sends the schema as it is (OpenAI and Anthropic when not rewritten, Gemini
/// JSON Schema, MCP): with or without `$schema`, the members are the same text.
#[derive(Debug)]
pub(crate) enum SchemaText {
    /// An object schema: one text per member, in the map's order.
    Members(Vec<Box<RawValue>>),
    /// Any other schema (`true`, …), whole.
    Whole(Box<RawValue>),
    /// Could not be serialised ahead: serialised in place, as a value.
    Unavailable,
}

impl SchemaText {
    /// Serialises the values of `schema` (its members, for an object).
    pub(crate) fn new(schema: &Value) -> SchemaText {
        match schema {
            Value::Object(m) => m
                .values()
                .map(serde_json::value::to_raw_value)
                .collect::<Result<Vec<_>, _>>()
                .map_or(SchemaText::Unavailable, SchemaText::Members),
            other => serde_json::value::to_raw_value(other).map_or(SchemaText::Unavailable, SchemaText::Whole),
        }
    }
}

/// A schema as sent: the tool's own, minus `$schema` or verbatim (MCP, whose schemas are JSON
/// Schema 2020-12 and keep their `$schema`), or a rewritten one.
enum Schema<'a> {
    Original {
        value: &'a Value,
        text: &'a SchemaText,
        verbatim: bool,
    },
    New(Value),
}

impl Schema<'_> {
    fn value(&self) -> &Value {
        match self {
            Schema::Original { value, .. } => value,
            Schema::New(v) => v,
        }
    }

    fn is_object_root(&self) -> bool {
        self.value().get("type").and_then(Value::as_str) == Some("object")
    }
}

impl Serialize for Schema<'_> {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        match self {
            Schema::Original {
                value: Value::Object(m),
                text: SchemaText::Members(texts),
                verbatim,
            } if texts.len() == m.len() => {
                let mut map = serializer.serialize_map(None)?;
                for (k, text) in m.keys().zip(texts) {
                    if *verbatim || k.as_str() != "$schema" {
                        map.serialize_entry(k, &**text)?;
                    }
                }
                map.end()
            }
            Schema::Original {
                text: SchemaText::Whole(text),
                ..
            } => text.serialize(serializer),
            Schema::Original {
                value: Value::Object(m),
                verbatim: false,
                ..
            } => {
                let mut map = serializer.serialize_map(None)?;
                for (k, v) in m.iter().filter(|(k, _)| k.as_str() != "$schema") {
                    map.serialize_entry(k, v)?;
                }
                map.end()
            }
            Schema::Original { value, .. } => value.serialize(serializer),
            Schema::New(v) => v.serialize(serializer),
        }
    }
}

/// One field of an entry.
enum Field<'a> {
    Str(&'a str),
    Bool(bool),
    Json(&'a Value),
    Owned(Value),
    Schema(&'a Schema<'a>),
    Object(Fields<'a>),
}

/// An entry's fields, in order.
#[derive(Default)]
struct Fields<'a>(Vec<(&'a str, Field<'a>)>);

impl<'a> Fields<'a> {
    fn with(mut self, key: &'a str, field: Field<'a>) -> Self {
        self.0.push((key, field));
        self
    }

    fn with_if(self, on: bool, key: &'a str, field: impl FnOnce() -> Field<'a>) -> Self {
        if on { self.with(key, field()) } else { self }
    }

    fn with_optional(self, key: &'a str, field: Option<Field<'a>>) -> Self {
        match field {
            Some(f) => self.with(key, f),
            None => self,
        }
    }

    /// Adds fields the entry does not have yet (a provider's option of the same key wins).
    fn with_extra(mut self, extra: &'a [(&'static str, Value)]) -> Self {
        for (k, v) in extra {
            if !self.0.iter().any(|(key, _)| key == k) {
                self.0.push((k, Field::Json(v)));
            }
        }
        self
    }

    /// Adds a provider's options (`provider_options(<provider> = {...})`) as fields.
    fn with_options(mut self, spec: &'a ToolSpec, providers: &[&str]) -> Self {
        for provider in providers {
            if let Some(Value::Object(opts)) = spec.presentation.provider_options.get(*provider) {
                for (k, v) in opts {
                    self.0.retain(|(key, _)| *key != k.as_str());
                    self.0.push((k, Field::Json(v)));
                }
            }
        }
        self
    }
}

impl Serialize for Fields<'_> {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        let mut map = serializer.serialize_map(Some(self.0.len()))?;
        for (k, f) in &self.0 {
            match f {
                Field::Str(s) => map.serialize_entry(k, s)?,
                Field::Bool(b) => map.serialize_entry(k, b)?,
                Field::Json(v) => map.serialize_entry(k, v)?,
                Field::Owned(v) => map.serialize_entry(k, v)?,
                Field::Schema(s) => map.serialize_entry(k, s)?,
                Field::Object(o) => map.serialize_entry(k, o)?,
            }
        }
        map.end()
    }
}

fn run_pass<'a>(
    dialect: Dialect,
    strict: bool,
    spec: &ToolSpec,
    schema: &'a Value,
    text: &'a OnceLock<SchemaText>,
    warnings: &mut Vec<String>,
) -> Result<Schema<'a>, PassError> {
    let (rewritten, w) = pass::rewrite(dialect, strict, &spec.id, schema)?;
    warnings.extend(w);
    Ok(match rewritten {
        Rewritten::Unchanged => Schema::Original {
            value: schema,
            text: text.get_or_init(|| SchemaText::new(schema)),
            verbatim: dialect == Dialect::Mcp,
        },
        Rewritten::New(v) => Schema::New(v),
    })
}

/// Builds the entry of `spec` for `dialect` under `name`, strict or not. `texts` are the
/// catalog's serialised input and output schemas of this tool, shared by its formats (filled
/// by the first that needs them).
pub(crate) fn entry(
    dialect: Dialect,
    spec: &ToolSpec,
    name: &str,
    strict: bool,
    texts: &[OnceLock<SchemaText>; 2],
) -> Result<Entry, PassError> {
    let mut warnings = Vec::new();
    let input = run_pass(dialect, strict, spec, &spec.schemas.input, &texts[0], &mut warnings)?;
    let output = match dialect {
        Dialect::GeminiOpenApi | Dialect::GeminiJsonSchema => spec.schemas.output.as_ref(),
        // MCP requires an object output schema (structuredContent is an object).
        Dialect::Mcp => spec
            .schemas
            .output
            .as_ref()
            .filter(|s| s.get("type").and_then(Value::as_str) == Some("object")),
        Dialect::OpenAiChat | Dialect::OpenAiResponses | Dialect::Anthropic => None,
    };
    let output = output
        .map(|o| run_pass(dialect, false, spec, o, &texts[1], &mut warnings))
        .transpose()?;
    let examples = Value::Array(spec.presentation.input_examples.clone());
    let annotations = (dialect == Dialect::Mcp).then(|| spec.presentation.mcp.annotations()).flatten();
    let extra = super::fields::extra(dialect, spec, &mut warnings);
    let fields = match dialect {
        Dialect::OpenAiChat => openai_chat(spec, name, &input, strict),
        Dialect::OpenAiResponses => openai_responses(spec, name, &input, strict),
        Dialect::Anthropic => anthropic(spec, name, &input, strict, &examples),
        Dialect::GeminiOpenApi => gemini(spec, name, ("parameters", "response"), &input, output.as_ref()),
        Dialect::GeminiJsonSchema => gemini(spec, name, ("parametersJsonSchema", "responseJsonSchema"), &input, output.as_ref()),
        Dialect::Mcp => mcp(spec, name, &input, output.as_ref(), annotations.as_ref()),
    }
    .with_extra(&extra);
    let json = serde_json::value::to_raw_value(&fields).map_err(|e| PassError {
        tool: spec.id.clone(),
        dialect,
        path: String::new(),
        rule: format!("the entry could not be serialised: {e}"),
    })?;
    let strict_input = (dialect == Dialect::Anthropic && strict).then(|| match input {
        Schema::Original { value, .. } => value.clone(),
        Schema::New(v) => v,
    });
    Ok(Entry {
        json,
        warnings,
        strict_input,
    })
}

/// Chat Completions reads a function tool's settings inside `function` (`strict`, …), so the
/// OpenAI options go there, not beside `type`.
fn openai_chat<'a>(spec: &'a ToolSpec, name: &'a str, input: &'a Schema<'a>, strict: bool) -> Fields<'a> {
    let function = Fields::default()
        .with("name", Field::Str(name))
        .with("description", Field::Str(&spec.description))
        .with("parameters", Field::Schema(input))
        .with_if(strict, "strict", || Field::Bool(true))
        .with_options(spec, &["openai"]);
    Fields::default()
        .with("type", Field::Str("function"))
        .with("function", Field::Object(function))
}

/// The Responses API defaults to strict: always say which.
fn openai_responses<'a>(spec: &'a ToolSpec, name: &'a str, input: &'a Schema<'a>, strict: bool) -> Fields<'a> {
    Fields::default()
        .with("type", Field::Str("function"))
        .with("name", Field::Str(name))
        .with("description", Field::Str(&spec.description))
        .with("parameters", Field::Schema(input))
        .with("strict", Field::Bool(strict))
        .with_options(spec, &["openai"])
}

fn anthropic<'a>(spec: &'a ToolSpec, name: &'a str, input: &'a Schema<'a>, strict: bool, examples: &'a Value) -> Fields<'a> {
    Fields::default()
        .with("name", Field::Str(name))
        .with("description", Field::Str(&spec.description))
        .with("input_schema", Field::Schema(input))
        .with_if(strict, "strict", || Field::Bool(true))
        .with_if(!spec.presentation.input_examples.is_empty(), "input_examples", || {
            Field::Json(examples)
        })
        .with_options(spec, &["anthropic"])
}

/// Gemini's declaration; `params` and `response` name the schema fields of the flavour.
fn gemini<'a>(
    spec: &'a ToolSpec,
    name: &'a str,
    (params, response): (&'a str, &'a str),
    input: &'a Schema<'a>,
    output: Option<&'a Schema<'a>>,
) -> Fields<'a> {
    Fields::default()
        .with("name", Field::Str(name))
        .with("description", Field::Str(&spec.description))
        .with(params, Field::Schema(input))
        .with_if(output.is_some(), response, || Field::Schema(output.unwrap_or(input)))
        .with_options(spec, &["google", "gemini"])
}

fn mcp<'a>(
    spec: &'a ToolSpec,
    name: &'a str,
    input: &'a Schema<'a>,
    output: Option<&'a Schema<'a>>,
    annotations: Option<&'a Value>,
) -> Fields<'a> {
    Fields::default()
        .with("name", Field::Str(name))
        .with_if(spec.title.is_some() || spec.presentation.mcp.title.is_some(), "title", || {
            Field::Str(spec.title.as_deref().or(spec.presentation.mcp.title.as_deref()).unwrap_or_default())
        })
        .with("description", Field::Str(&spec.description))
        .with("inputSchema", Field::Schema(input))
        .with_if(output.is_some_and(Schema::is_object_root), "outputSchema", || {
            Field::Schema(output.unwrap_or(input))
        })
        .with_if(annotations.is_some(), "annotations", || {
            Field::Json(annotations.unwrap_or(&Value::Null))
        })
        .with_optional("icons", spec.presentation.mcp.icons_json().map(Field::Owned))
        .with_optional("_meta", spec.mcp_meta().map(Field::Owned))
}

/// The key a dialect's document wraps its entries in; `None`: the document is the array.
pub(crate) fn wrapper(dialect: Dialect) -> Option<&'static str> {
    match dialect {
        Dialect::OpenAiChat | Dialect::OpenAiResponses | Dialect::Anthropic => None,
        Dialect::GeminiOpenApi | Dialect::GeminiJsonSchema => Some("functionDeclarations"),
        Dialect::Mcp => Some("tools"),
    }
}

/// Wraps a dialect's entries into the document that dialect takes.
pub(crate) fn document(dialect: Dialect, entries: Vec<Value>) -> Value {
    match wrapper(dialect) {
        None => Value::Array(entries),
        Some(key) => Value::Object(Map::from_iter([(key.to_owned(), Value::Array(entries))])),
    }
}
