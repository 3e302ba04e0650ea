//! Schema passes: one per dialect, turning a tool's canonical JSON Schema (2020-12, from
//! schemars) into what that dialect accepts, or an error naming the tool, the path and the rule.
//!
//! The canonical schema stays the contract: the runtime validates every call against it (with
//! its forgiveness: a `null` for an optional field reads as absent). A pass may therefore drop
//! what a dialect cannot express when it is only a *constraint* on values the dialect's schema
//! still describes (a length bound, `uniqueItems`, a numeric bound for Anthropic strict): the
//! model may be told a little less, the tool still gets only valid input, and each removal is
//! reported in [`PassOutput::warnings`]. What changes the *shape* of the accepted values (a map
//! under strict mode, a tuple, recursion where it is not allowed, an untyped value, `not`,
//! `if`/`then`/`else`, …) is a [`PassError`]: never a silent downgrade.
//!
//! Annotations a dialect does not take (`default`, `examples`, schemars' numeric `format`s such
//! as `uint32` or `double`, `$schema` everywhere but MCP) are dropped without a warning: they
//! constrain nothing the runtime does not already enforce (numeric ranges come as
//! `minimum`/`maximum`).
//!
//! Per dialect:
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
//! - **MCP**: the schema as it is, `$schema` and every 2020-12 keyword included (MCP schemas are
//!   JSON Schema 2020-12 and keep the JSON Schema dialect they name, SEP-1613, SEP-2106); the
//!   root must be an object.
//!
//! Every dialect but Gemini OpenAPI drops the `format`s outside the JSON Schema vocabulary
//! (schemars' `uint32`, `double`, …; validators reject or warn about them), keeping the
//! `minimum`/`maximum` that say the same.
//!
//! `strict` only matters for the OpenAI and Anthropic dialects.
//!
//! This module owns the passes' interface ([`apply`], [`rewrite`], [`PassOutput`],
//! [`PassError`]), the walk's context (`Pass`: the tool, the root, the warnings) and the choice
//! of pass per dialect. The rules above are carried out one module per dialect (`openai` and
//! `openai_limits`, `anthropic`, `gemini`), each keyword rule a small function; what several
//! share is in `walk` (paths and traversal), `merge` (`allOf` flattening), `refuse` (object
//! roots, structural keywords) and `strict` (what both strict modes refuse or rewrite alike).
//! The passes see schemas only: entry layouts and tool names are the catalog's.

mod anthropic;
mod gemini;
mod merge;
mod openai;
mod openai_limits;
mod refuse;
mod strict;
mod walk;

use serde_json::{Map, Value};

pub use anthropic::anthropic_request_warnings;

use crate::dialect::Dialect;
use walk::without;

/// A schema that cannot be made valid for a dialect: never a silent downgrade.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("tool `{tool}`: {dialect} schema at `{path}`: {rule}")]
pub struct PassError {
    /// The tool id.
    pub tool: String,
    /// The dialect (named in the message by [`Dialect::as_str`]).
    pub dialect: Dialect,
    /// JSON pointer into the input schema; `""` is the root.
    pub path: String,
    /// What rule is broken and how to fix it.
    pub rule: String,
}

/// A schema rewritten for a dialect, with what was removed or loosened on the way.
#[derive(Debug, Clone, PartialEq)]
pub struct PassOutput {
    /// The schema to send.
    pub schema: Value,
    /// Constraints removed or loosened, one line each (the runtime still validates the
    /// original schema, so these only mean the model is told less).
    pub warnings: Vec<String>,
}

/// Runs the pass for `dialect` over a tool's canonical input (or output) schema.
///
/// `strict` = the tool asked for strict mode; only the OpenAI and Anthropic dialects use it.
///
/// ```
/// use tool_core::catalog::pass::apply;
/// use tool_core::Dialect;
/// let schema = serde_json::json!({"type": "object", "properties": {"q": {"type": ["string", "null"]}}});
/// let out = apply(Dialect::OpenAiResponses, true, "search", &schema).unwrap();
/// assert_eq!(out.schema["required"], serde_json::json!(["q"]));
/// assert_eq!(out.schema["additionalProperties"], false);
/// let out = apply(Dialect::GeminiOpenApi, false, "search", &schema).unwrap();
/// assert_eq!(out.schema["properties"]["q"], serde_json::json!({"type": "string", "nullable": true}));
/// ```
pub fn apply(dialect: Dialect, strict: bool, tool: &str, schema: &Value) -> Result<PassOutput, PassError> {
    let (rewritten, warnings) = rewrite(dialect, strict, tool, schema)?;
    let schema = match rewritten {
        Rewritten::Unchanged => match schema {
            Value::Object(m) if dialect != Dialect::Mcp => Value::Object(without(m, &["$schema"])),
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
    /// The input schema, minus its `$schema` keyword, is what the dialect takes.
    Unchanged,
    /// The rewritten schema.
    New(Value),
}

/// Like [`apply`], without copying a schema the dialect takes as it is: the catalog serialises
/// the original directly in that case.
pub fn rewrite(dialect: Dialect, strict: bool, tool: &str, schema: &Value) -> Result<(Rewritten, Vec<String>), PassError> {
    let mut pass = Pass {
        tool,
        dialect,
        root: schema,
        warnings: Vec::new(),
        mute: 0,
    };
    let rewritten = match dialect {
        Dialect::OpenAiChat | Dialect::OpenAiResponses if strict => Rewritten::New(pass.openai_strict_root()?),
        Dialect::OpenAiChat | Dialect::OpenAiResponses | Dialect::Mcp => {
            pass.check_object_root(pass.root_map()?)?;
            Rewritten::Unchanged
        }
        Dialect::Anthropic => pass.anthropic(strict)?,
        Dialect::GeminiOpenApi => Rewritten::New(pass.gemini(schema, "", &mut Vec::new())?),
        Dialect::GeminiJsonSchema => Rewritten::Unchanged,
    };
    let rewritten = without_foreign_formats(dialect, schema, rewritten);
    Ok((rewritten, deduplicated(pass.warnings)))
}

/// [`rewrite`] for [`Dialect::Mcp`] alone (what the MCP server lists): the object-root check
/// and the foreign `format`s dropped, nothing else. The same as `rewrite(Dialect::Mcp, false,
/// ..)`, without linking the other dialects' passes into a binary that serves MCP only.
#[cfg(feature = "mcp")]
pub(crate) fn rewrite_mcp(tool: &str, schema: &Value) -> Result<Rewritten, PassError> {
    let pass = Pass {
        tool,
        dialect: Dialect::Mcp,
        root: schema,
        warnings: Vec::new(),
        mute: 0,
    };
    pass.check_object_root(pass.root_map()?)?;
    Ok(without_foreign_formats(Dialect::Mcp, schema, Rewritten::Unchanged))
}

/// `warnings` in their order, each once.
fn deduplicated(warnings: Vec<String>) -> Vec<String> {
    let mut unique = Vec::with_capacity(warnings.len());
    for w in warnings {
        if !unique.contains(&w) {
            unique.push(w);
        }
    }
    unique
}

/// What a pass made of a schema, without the `format`s outside the JSON Schema vocabulary
/// (schemars' `uint32`, `double`, …: [`crate::schema::without_foreign_formats`]), for every
/// JSON Schema dialect; Gemini's OpenAPI `parameters` has a format vocabulary of its own, which
/// its pass writes. A schema without one stays [`Rewritten::Unchanged`] (no copy).
fn without_foreign_formats(dialect: Dialect, schema: &Value, rewritten: Rewritten) -> Rewritten {
    if dialect == Dialect::GeminiOpenApi {
        return rewritten;
    }
    match rewritten {
        Rewritten::Unchanged => match crate::schema::without_foreign_formats(schema) {
            Some(Value::Object(m)) if dialect != Dialect::Mcp => Rewritten::New(Value::Object(without(&m, &["$schema"]))),
            Some(v) => Rewritten::New(v),
            None => Rewritten::Unchanged,
        },
        Rewritten::New(mut v) => {
            crate::schema::drop_foreign_formats(&mut v);
            Rewritten::New(v)
        }
    }
}

// ---------------------------------------------------------------------------------------------
// Keyword tables every pass reads.

/// Keywords that change which shapes are valid and that no strict / OpenAPI dialect expresses.
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

/// Annotations dropped without a word where a dialect does not take them.
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

// ---------------------------------------------------------------------------------------------
// The walk's context.

/// One pass over one schema: what every rule needs to name its tool, resolve references and
/// report.
struct Pass<'a> {
    tool: &'a str,
    dialect: Dialect,
    root: &'a Value,
    warnings: Vec<String>,
    /// Above zero while re-walking an inlined definition that was already walked (and warned
    /// about) at its own path.
    mute: usize,
}

fn quoted(keys: &[String]) -> String {
    keys.iter().map(|k| format!("`{k}`")).collect::<Vec<_>>().join(", ")
}

impl<'a> Pass<'a> {
    fn err(&self, path: &str, rule: impl Into<String>) -> PassError {
        PassError {
            tool: self.tool.to_owned(),
            dialect: self.dialect,
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
                self.dialect.as_str()
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
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    pub(super) fn run(dialect: Dialect, strict: bool, schema: Value) -> PassOutput {
        apply(dialect, strict, "t", &schema).unwrap_or_else(|e| panic!("{e}"))
    }

    pub(super) fn fail(dialect: Dialect, strict: bool, schema: Value) -> PassError {
        let e = apply(dialect, strict, "tool_x", &schema).expect_err("the pass should refuse this schema");
        let msg = e.to_string();
        assert!(msg.contains("tool `tool_x`"), "{msg}");
        assert!(msg.contains(dialect.as_str()), "{msg}");
        assert!(msg.contains(&format!("at `{}`", e.path)), "{msg}");
        assert!(msg.contains(&e.rule), "{msg}");
        e
    }

    pub(super) fn obj(props: Value) -> Value {
        json!({"$schema": "https://json-schema.org/draft/2020-12/schema", "type": "object", "properties": props})
    }

    #[test]
    fn every_target_but_mcp_drops_dollar_schema() {
        let s = obj(json!({"a": {"type": "string"}}));
        for t in Dialect::ALL {
            for strict in [false, true] {
                let out = run(t, strict, s.clone());
                // MCP schemas are JSON Schema 2020-12 and keep the dialect they name (SEP-1613).
                assert_eq!(out.schema.get("$schema").is_some(), t == Dialect::Mcp, "{t:?} {strict}");
            }
        }
    }

    #[test]
    fn object_roots_are_required_where_providers_require_them() {
        for t in [Dialect::OpenAiChat, Dialect::OpenAiResponses, Dialect::Anthropic, Dialect::Mcp] {
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
            run(Dialect::GeminiOpenApi, false, json!({"type": "number", "format": "double"})).schema["format"],
            "double"
        );
        assert_eq!(
            run(Dialect::GeminiJsonSchema, false, json!({"type": "number"})).schema,
            json!({"type": "number"})
        );
    }

    #[test]
    fn non_strict_openai_and_mcp_keep_the_schema_but_foreign_formats() {
        let s = json!({
            "$schema": "x", "type": "object", "$defs": {"P": {"type": "object"}},
            "properties": {
                "p": {"$ref": "#/$defs/P"},
                "m": {"type": "object", "additionalProperties": {"type": "integer", "format": "uint8", "minimum": 0, "maximum": 255}},
                "at": {"type": "string", "format": "date-time"}
            }
        });
        // schemars' `uint8` is no JSON Schema format: dropped everywhere, its bounds kept.
        let mut mcp = s.clone();
        mcp["properties"]["m"]["additionalProperties"]
            .as_object_mut()
            .unwrap()
            .remove("format");
        let mut expected = mcp.clone();
        expected.as_object_mut().unwrap().remove("$schema");
        for t in [
            Dialect::OpenAiChat,
            Dialect::OpenAiResponses,
            Dialect::Mcp,
            Dialect::GeminiJsonSchema,
        ] {
            let out = run(t, false, s.clone());
            assert_eq!(&out.schema, if t == Dialect::Mcp { &mcp } else { &expected }, "{t:?}");
            assert!(out.warnings.is_empty());
        }
        assert_eq!(run(Dialect::Anthropic, false, s.clone()).schema, expected);
        // A schema without a foreign format is taken as it is (no copy).
        assert!(matches!(rewrite(Dialect::Mcp, false, "t", &mcp), Ok((Rewritten::Unchanged, _))));
    }

    /// The MCP server's own entry makes of every schema what the MCP dialect's pass makes:
    /// the same schema, the same refusal.
    #[cfg(feature = "mcp")]
    #[test]
    fn the_mcp_entry_is_the_mcp_pass() {
        let schemas = [
            json!({"type": "object", "properties": {"n": {"type": "integer", "format": "uint8", "minimum": 0}}}),
            json!({"$schema": "x", "type": "object", "properties": {"at": {"type": "string", "format": "date-time"}}}),
            json!({"anyOf": [{"type": "string"}, {"type": "integer"}]}),
            json!({"type": "string"}),
            json!(true),
        ];
        for s in schemas {
            let general = rewrite(Dialect::Mcp, false, "t", &s).map(|(r, _)| r);
            assert_eq!(rewrite_mcp("t", &s), general, "{s}");
        }
        assert!(rewrite_mcp("t", &json!({"type": "string"})).is_err());
        assert!(matches!(
            rewrite_mcp(
                "t",
                &json!({"type": "object", "properties": {"n": {"type": "integer", "format": "uint8"}}})
            ),
            Ok(Rewritten::New(_))
        ));
    }

    #[test]
    fn strict_flag_is_ignored_where_it_means_nothing() {
        let s = obj(json!({"m": {"type": "object", "additionalProperties": {"type": "string"}}}));
        for t in [Dialect::GeminiJsonSchema, Dialect::Mcp, Dialect::GeminiOpenApi] {
            assert_eq!(run(t, true, s.clone()), run(t, false, s.clone()), "{t:?}");
        }
    }
}
