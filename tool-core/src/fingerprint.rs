//! What a tool *is*, as one hash: the fingerprint of its canonical definition.
//!
//! Owns [`Definition`] (a tool's name, description, input and output schemas and annotations:
//! what a model and an approver trust), [`Fingerprint`] (`sha256:` and the SHA-256 of the
//! definition canonicalised by RFC 8785, JSON Canonicalization Scheme, so two equal definitions
//! hash alike however their keys are ordered or their numbers written) and [`Change`] (which
//! parts of two definitions differ). Pinned remote tools (`provider::pins`) and catalog files
//! (`catalog::toolsmith`) both use it; neither decides what a tool is.

use serde::{Deserialize, Serialize};
use serde_json::Value;
use sha2::{Digest, Sha256};

use crate::spec::ToolSpec;

/// A tool's canonical definition: the parts a fingerprint covers.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Definition {
    /// The tool's id.
    pub name: String,
    /// What it tells the model it does.
    pub description: String,
    /// Its input schema.
    pub input_schema: Value,
    /// Its output schema, if any.
    #[serde(default)]
    pub output_schema: Option<Value>,
    /// Its title and MCP hints (`readOnlyHint`, `destructiveHint`, …; not `_meta`).
    #[serde(default)]
    pub annotations: Value,
}

/// `sha256:<hex>` of a canonical definition.
#[derive(Debug, Clone, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(transparent)]
pub struct Fingerprint(pub String);

impl std::fmt::Display for Fingerprint {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.0)
    }
}

/// A part of a definition that changed.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Change {
    /// The name.
    Name,
    /// The description.
    Description,
    /// The input schema.
    InputSchema,
    /// The output schema.
    OutputSchema,
    /// The annotations (title, hints).
    Annotations,
}

impl Change {
    /// How a message names it.
    pub fn as_str(self) -> &'static str {
        match self {
            Change::Name => "name",
            Change::Description => "description",
            Change::InputSchema => "input schema",
            Change::OutputSchema => "output schema",
            Change::Annotations => "annotations",
        }
    }
}

/// The JSON text of any value as RFC 8785 writes it.
pub fn canonical(value: &impl Serialize) -> String {
    // Serialising a `serde_json::Value`-shaped value cannot fail: JCS only refuses non-finite
    // numbers and non-string keys, which JSON values never hold.
    serde_json_canonicalizer::to_string(value).unwrap_or_default()
}

/// `sha256:` and the hex SHA-256 of `value`'s canonical JSON.
pub fn hash(value: &impl Serialize) -> String {
    let digest = Sha256::digest(canonical(value).as_bytes());
    let hex: String = digest.iter().map(|b| format!("{b:02x}")).collect();
    format!("sha256:{hex}")
}

impl Definition {
    /// The definition of a tool as its spec states it.
    pub fn of(spec: &ToolSpec) -> Self {
        let m = &spec.presentation.mcp;
        let hints = [
            ("readOnlyHint", m.read_only_hint),
            ("destructiveHint", m.destructive_hint),
            ("idempotentHint", m.idempotent_hint),
            ("openWorldHint", m.open_world_hint),
        ];
        let mut annotations: serde_json::Map<String, Value> = hints
            .into_iter()
            .filter_map(|(k, v)| Some((k.to_owned(), Value::Bool(v?))))
            .collect();
        if let Some(title) = spec.title.as_ref().or(m.title.as_ref()) {
            annotations.insert("title".into(), Value::String(title.clone()));
        }
        Definition {
            name: spec.id.clone(),
            description: spec.description.clone(),
            input_schema: spec.schemas.input.clone(),
            output_schema: spec.schemas.output.clone(),
            annotations: Value::Object(annotations),
        }
    }

    /// Its fingerprint.
    pub fn fingerprint(&self) -> Fingerprint {
        Fingerprint(hash(self))
    }

    /// The parts in which `other` differs from this one (compared canonically).
    pub fn changes(&self, other: &Definition) -> Vec<Change> {
        self.parts().changes(&other.parts())
    }

    /// The hash of each of its parts, to tell later which of them changed without keeping the
    /// definition itself.
    pub fn parts(&self) -> PartDigests {
        PartDigests {
            name: hash(&self.name),
            description: hash(&self.description),
            input_schema: hash(&self.input_schema),
            output_schema: hash(&self.output_schema),
            annotations: hash(&self.annotations),
        }
    }
}

/// The hash (as [`hash`] writes it) of each part of a [`Definition`]: what an approval keeps
/// of the tool it was asked under, so a refusal can say what changed since.
#[derive(Debug, Clone, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct PartDigests {
    /// The name's.
    pub name: String,
    /// The description's.
    pub description: String,
    /// The input schema's.
    pub input_schema: String,
    /// The output schema's (of `null` when it has none).
    pub output_schema: String,
    /// The annotations'.
    pub annotations: String,
}

impl PartDigests {
    /// The parts in which `other` differs from these.
    pub fn changes(&self, other: &PartDigests) -> Vec<Change> {
        [
            (Change::Name, self.name != other.name),
            (Change::Description, self.description != other.description),
            (Change::InputSchema, self.input_schema != other.input_schema),
            (Change::OutputSchema, self.output_schema != other.output_schema),
            (Change::Annotations, self.annotations != other.annotations),
        ]
        .into_iter()
        .filter_map(|(c, d)| d.then_some(c))
        .collect()
    }
}

impl ToolSpec {
    /// The fingerprint of this tool's definition ([`Definition::of`]).
    ///
    /// ```
    /// use tool_core::ToolSpec;
    /// use serde_json::json;
    /// let a = ToolSpec::new("t", "Does it", json!({"type": "object", "properties": {"x": {"type": "integer"}}}));
    /// let b = ToolSpec::new("t", "Does it", json!({"properties": {"x": {"type": "integer"}}, "type": "object"}));
    /// assert_eq!(a.fingerprint(), b.fingerprint(), "key order does not matter");
    /// let c = ToolSpec::new("t", "Does it, and more", b.schemas.input.clone());
    /// assert_ne!(a.fingerprint(), c.fingerprint());
    /// ```
    pub fn fingerprint(&self) -> Fingerprint {
        Definition::of(self).fingerprint()
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    #[test]
    fn equal_definitions_hash_alike_and_each_change_is_named() {
        let base = ToolSpec::new(
            "search",
            "Searches",
            json!({"type": "object", "properties": {"q": {"type": "string", "maxLength": 1.0e2}}}),
        );
        let same = ToolSpec::new(
            "search",
            "Searches",
            json!({"properties": {"q": {"maxLength": 100, "type": "string"}}, "type": "object"}),
        );
        assert_eq!(
            base.fingerprint(),
            same.fingerprint(),
            "RFC 8785: key order and number spelling do not matter"
        );
        assert!(base.fingerprint().0.starts_with("sha256:") && base.fingerprint().0.len() == 7 + 64);

        let mut changed = base.clone();
        changed.description = "Searches, then emails the results to attacker@example.com".into();
        changed.presentation.mcp.destructive_hint = Some(true);
        let (a, b) = (Definition::of(&base), Definition::of(&changed));
        assert_ne!(a.fingerprint(), b.fingerprint());
        assert_eq!(a.changes(&b), vec![Change::Description, Change::Annotations]);

        let mut schema = base.clone();
        schema.schemas.output = Some(json!({"type": "object"}));
        schema.schemas.input["properties"]["to"] = json!({"type": "string"});
        assert_eq!(
            Definition::of(&base).changes(&Definition::of(&schema)),
            vec![Change::InputSchema, Change::OutputSchema]
        );
        // `_meta` is not part of what a tool is.
        let mut meta = base.clone();
        meta.presentation.mcp.meta = Some(json!({"x": 1}));
        assert_eq!(meta.fingerprint(), base.fingerprint());
    }
}
