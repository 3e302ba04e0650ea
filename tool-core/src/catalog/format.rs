//! One tool entry per target, in that target's exact shape, written straight to JSON text.
//!
//! Owns the field layout of each provider's tool object (OpenAI Chat and Responses, Anthropic,
//! Gemini, MCP). Schemas arrive rewritten by [`pass`](super::pass) (or untouched, when the
//! target takes them as they are: then they are serialised from the tool's own schema, never
//! copied); names arrive mapped by [`names`](super::names).

use serde::ser::{Serialize, SerializeMap, Serializer};
use serde_json::value::RawValue;
use serde_json::{json, Value};

use super::pass::{self, PassError, Rewritten, Target};
use crate::spec::ToolSpec;

/// A tool's entry for one target, plus what the passes warned about.
pub(crate) struct Entry {
    pub json: Box<RawValue>,
    pub warnings: Vec<String>,
    /// The input schema sent, kept for the per-request limits of Anthropic strict tools.
    pub strict_input: Option<Value>,
}

/// A schema as sent: the tool's own (minus `$schema`), the tool's own verbatim (MCP, whose
/// schemas are JSON Schema 2020-12 and keep their `$schema`), or a rewritten one.
enum Schema<'a> {
    Original(&'a Value),
    Verbatim(&'a Value),
    New(Value),
}

impl Schema<'_> {
    fn is_object_root(&self) -> bool {
        let v = match self {
            Schema::Original(v) | Schema::Verbatim(v) => v,
            Schema::New(v) => v,
        };
        v.get("type") == Some(&json!("object"))
    }
}

impl Serialize for Schema<'_> {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        match self {
            Schema::Original(Value::Object(m)) => {
                let mut map = serializer.serialize_map(None)?;
                for (k, v) in m.iter().filter(|(k, _)| k.as_str() != "$schema") {
                    map.serialize_entry(k, v)?;
                }
                map.end()
            }
            Schema::Original(other) | Schema::Verbatim(other) => other.serialize(serializer),
            Schema::New(v) => v.serialize(serializer),
        }
    }
}

/// One field of an entry.
enum Field<'a> {
    Str(&'a str),
    Bool(bool),
    Json(&'a Value),
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
        if on {
            self.with(key, field())
        } else {
            self
        }
    }

    /// Adds a provider's options (`provider_options(<provider> = {...})`) as fields.
    fn with_options(mut self, spec: &'a ToolSpec, providers: &[&str]) -> Self {
        for provider in providers {
            if let Some(Value::Object(opts)) = spec.provider_options.get(*provider) {
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
                Field::Schema(s) => map.serialize_entry(k, s)?,
                Field::Object(o) => map.serialize_entry(k, o)?,
            }
        }
        map.end()
    }
}

fn run_pass<'a>(
    target: Target,
    strict: bool,
    spec: &ToolSpec,
    schema: &'a Value,
    warnings: &mut Vec<String>,
) -> Result<Schema<'a>, PassError> {
    let (rewritten, w) = pass::rewrite(target, strict, &spec.id, schema)?;
    warnings.extend(w);
    Ok(match rewritten {
        Rewritten::Unchanged if target == Target::Mcp => Schema::Verbatim(schema),
        Rewritten::Unchanged => Schema::Original(schema),
        Rewritten::New(v) => Schema::New(v),
    })
}

/// Builds the entry of `spec` for `target` under `name`, strict or not.
pub(crate) fn entry(target: Target, spec: &ToolSpec, name: &str, strict: bool) -> Result<Entry, PassError> {
    let mut warnings = Vec::new();
    let input = run_pass(target, strict, spec, &spec.input_schema, &mut warnings)?;
    let description = Field::Str(&spec.description);
    let output = match target {
        Target::GeminiOpenApi | Target::GeminiJsonSchema => spec.output_schema.as_ref(),
        // MCP requires an object output schema (structuredContent is an object).
        Target::Mcp => spec.output_schema.as_ref().filter(|s| s.get("type") == Some(&json!("object"))),
        _ => None,
    };
    let output = output.map(|o| run_pass(target, false, spec, o, &mut warnings)).transpose()?;
    let annotations = if target == Target::Mcp { spec.mcp.annotations() } else { None };
    let examples = Value::Array(spec.input_examples.clone());

    let fields = match target {
        Target::OpenAiChat => {
            let function = Fields::default()
                .with("name", Field::Str(name))
                .with("description", description)
                .with("parameters", Field::Schema(&input))
                .with_if(strict, "strict", || Field::Bool(true));
            Fields::default()
                .with("type", Field::Str("function"))
                .with("function", Field::Object(function))
                .with_options(spec, &["openai"])
        }
        // The Responses API defaults to strict: always say which.
        Target::OpenAiResponses => Fields::default()
            .with("type", Field::Str("function"))
            .with("name", Field::Str(name))
            .with("description", description)
            .with("parameters", Field::Schema(&input))
            .with("strict", Field::Bool(strict))
            .with_options(spec, &["openai"]),
        Target::Anthropic => Fields::default()
            .with("name", Field::Str(name))
            .with("description", description)
            .with("input_schema", Field::Schema(&input))
            .with_if(strict, "strict", || Field::Bool(true))
            .with_if(!spec.input_examples.is_empty(), "input_examples", || Field::Json(&examples))
            .with_options(spec, &["anthropic"]),
        Target::GeminiOpenApi | Target::GeminiJsonSchema => {
            let (params, response) = match target {
                Target::GeminiOpenApi => ("parameters", "response"),
                _ => ("parametersJsonSchema", "responseJsonSchema"),
            };
            Fields::default()
                .with("name", Field::Str(name))
                .with("description", description)
                .with(params, Field::Schema(&input))
                .with_if(output.is_some(), response, || Field::Schema(output.as_ref().unwrap_or(&input)))
                .with_options(spec, &["google", "gemini"])
        }
        Target::Mcp => Fields::default()
            .with("name", Field::Str(name))
            .with_if(spec.title.is_some() || spec.mcp.title.is_some(), "title", || {
                Field::Str(spec.title.as_deref().or(spec.mcp.title.as_deref()).unwrap_or_default())
            })
            .with("description", description)
            .with("inputSchema", Field::Schema(&input))
            .with_if(output.as_ref().is_some_and(Schema::is_object_root), "outputSchema", || {
                Field::Schema(output.as_ref().unwrap_or(&input))
            })
            .with_if(annotations.is_some(), "annotations", || {
                Field::Json(annotations.as_ref().unwrap_or(&Value::Null))
            })
            .with_if(spec.mcp.meta.is_some(), "_meta", || {
                Field::Json(spec.mcp.meta.as_ref().unwrap_or(&Value::Null))
            }),
    };
    let json = serde_json::value::to_raw_value(&fields).map_err(|e| PassError {
        tool: spec.id.clone(),
        target: target.as_str(),
        path: String::new(),
        rule: format!("the entry could not be serialised: {e}"),
    })?;
    let strict_input = (target == Target::Anthropic && strict).then(|| match input {
        Schema::Original(v) | Schema::Verbatim(v) => v.clone(),
        Schema::New(v) => v,
    });
    Ok(Entry {
        json,
        warnings,
        strict_input,
    })
}

/// Wraps a target's entries into the document that target takes.
pub(crate) fn document(target: Target, entries: Vec<Value>) -> Value {
    match target {
        Target::OpenAiChat | Target::OpenAiResponses | Target::Anthropic => Value::Array(entries),
        Target::GeminiOpenApi | Target::GeminiJsonSchema => json!({ "functionDeclarations": entries }),
        Target::Mcp => json!({ "tools": entries }),
    }
}
