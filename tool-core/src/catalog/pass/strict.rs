//! What the two strict modes (OpenAI, Anthropic) share: the shapes neither can express and the
//! keyword rules both apply the same way.
//!
//! Owns the refusals of strict mode (a flattened union, a tuple, `anyOf` beside `oneOf`, an
//! untyped value) and the small rules both strict passes call: branches as `anyOf`, `format`
//! kept from a list, a value that must end up typed. Which keywords each keeps, and how it
//! closes objects, is [`openai`](super::openai)'s or [`anthropic`](super::anthropic)'s.

use serde_json::{Map, Value};

use super::walk::{is_object_schema, ptr2};
use super::{NUMERIC_FORMATS, Pass, PassError};
use crate::dialect::Dialect;

impl Pass<'_> {
    /// The strict mode's name in messages.
    pub(super) fn strict_mode(&self) -> &'static str {
        match self.dialect {
            Dialect::OpenAiChat | Dialect::OpenAiResponses => "OpenAI",
            Dialect::Anthropic => "Anthropic",
            other => other.as_str(),
        }
    }

    /// The schema as an object: `true` (any JSON) and `false` (nothing) cannot be strict.
    pub(super) fn strict_node<'v>(&self, schema: &'v Value, path: &str) -> Result<&'v Map<String, Value>, PassError> {
        match schema {
            Value::Object(m) => Ok(m),
            Value::Bool(true) => Err(self.err(
                path,
                format!(
                    "this value accepts any JSON (no `type`, as for `serde_json::Value`), and {} strict mode needs every value \
                     typed; give it a concrete type, or export this tool with strict off",
                    self.strict_mode()
                ),
            )),
            _ => Err(self.err(path, "this schema accepts no value at all; remove the field")),
        }
    }

    /// Shapes neither strict mode (OpenAI, Anthropic) can express: a flattened union, the
    /// structural keywords, tuples, and `anyOf` beside `oneOf`.
    pub(super) fn refuse_strict_shapes(&self, node: &Map<String, Value>, path: &str) -> Result<(), PassError> {
        let mode = self.strict_mode();
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

    /// `anyOf` or `oneOf` (`k`), each branch through `walk`, always written as `anyOf`.
    pub(super) fn strict_branches(
        &mut self,
        k: &str,
        v: &Value,
        path: &str,
        out: &mut Map<String, Value>,
        mut walk: impl FnMut(&mut Self, &Value, &str) -> Result<Value, PassError>,
    ) -> Result<(), PassError> {
        let branches = v.as_array().ok_or_else(|| self.err(path, format!("`{k}` must be an array")))?;
        let mut outs = Vec::with_capacity(branches.len());
        for (i, b) in branches.iter().enumerate() {
            outs.push(walk(self, b, &ptr2(path, k, &i.to_string()))?);
        }
        out.insert("anyOf".into(), Value::Array(outs));
        Ok(())
    }

    /// The rewritten value must say what it is (`type`, `anyOf`, `$ref`, `enum` or `const`).
    pub(super) fn require_typed(&self, out: &Map<String, Value>, path: &str) -> Result<(), PassError> {
        if ["type", "anyOf", "$ref", "enum", "const"].iter().any(|k| out.contains_key(*k)) {
            return Ok(());
        }
        Err(self.err(
            path,
            format!(
                "this value has no `type` (it accepts any JSON), and {} strict mode needs every value typed; give it a concrete \
                 type, or export this tool with strict off",
                self.strict_mode()
            ),
        ))
    }
}

/// `format: v` kept when the dialect lists it, dropped silently when it is schemars' numeric
/// hint, else removed (and reported).
pub(super) fn keep_format(v: &Value, listed: &[&str], out: &mut Map<String, Value>, removed: &mut Vec<String>) {
    match v.as_str() {
        Some(f) if listed.contains(&f) => {
            out.insert("format".into(), v.clone());
        }
        Some(f) if NUMERIC_FORMATS.contains(&f) => {}
        _ => removed.push(format!("format: {v}")),
    }
}
