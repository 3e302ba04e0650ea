//! Refusals several passes share, each with the rule that fixes the schema.
//!
//! Owns the object-root rule (OpenAI, Anthropic, MCP) and the keywords that change which values
//! are valid and that no strict or OpenAPI schema expresses (`not`, `if`/`then`/`else`, …). It
//! only refuses: rewriting is each dialect's pass, and what only strict mode refuses is
//! `strict`'s.

use serde_json::{Map, Value};

use super::walk::is_object_schema;
use super::{Pass, PassError, STRUCTURAL};
use crate::dialect::Dialect;

impl Pass<'_> {
    /// The root must be `type: "object"` (and not a union), as the dialect's tool input is.
    pub(super) fn check_object_root(&self, root: &Map<String, Value>) -> Result<(), PassError> {
        // `type: "object"` is an object schema, so a union beside it is no union root.
        if root.get("type").and_then(Value::as_str) == Some("object") {
            return Ok(());
        }
        if let Some(k) = ["anyOf", "oneOf"].into_iter().find(|k| root.contains_key(*k))
            && !is_object_schema(root)
        {
            return Err(self.err(
                "",
                format!(
                    "the root is a union (`{k}`, e.g. an enum as the whole input) but {} needs an object root; \
                         put the enum in a named field of a struct",
                    self.dialect.as_str()
                ),
            ));
        }
        if root.get("type").and_then(Value::as_str) != Some("object") {
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
                    self.dialect.as_str()
                ),
            ));
        }
        Ok(())
    }

    pub(super) fn refuse_structural(&self, node: &Map<String, Value>, path: &str) -> Result<(), PassError> {
        // Most nodes have a few keywords and none of these: one look at each keyword is cheaper
        // than a lookup per structural keyword.
        if !node.keys().any(|k| STRUCTURAL.contains(&k.as_str())) {
            return Ok(());
        }
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
                    self.dialect.as_str(),
                    if self.dialect == Dialect::GeminiOpenApi {
                        ""
                    } else {
                        " strict mode"
                    },
                    if self.dialect == Dialect::GeminiOpenApi {
                        " or use the gemini-json-schema target"
                    } else {
                        ", or export this tool with strict off"
                    }
                ),
            ));
        }
        Ok(())
    }
}
