//! What an export is: a dialect's tool list for one request, written straight from the
//! catalog's cached entries.
//!
//! Owns [`Export`], its items (a tool's entry, the same entry deferred, a tool search tool, a
//! namespace of entries) and their serialisation. Must not choose what goes in (the catalog's
//! `export_with` and `deferred` do).

use std::sync::{Arc, OnceLock};

use serde::ser::{Serialize, SerializeMap, Serializer};
use serde_json::Value;
use serde_json::value::RawValue;

use super::format;
use crate::dialect::Dialect;

/// One tool's entry for one dialect and strictness, computed once per catalog: as a value and
/// already serialised, so exports after the first only copy bytes.
#[derive(Debug)]
pub(crate) struct CachedEntry {
    pub json: Box<RawValue>,
    pub warnings: Vec<String>,
    pub strict_input: Option<Value>,
    /// The same entry with `"defer_loading": true`, written at the first deferred export.
    pub deferred: OnceLock<Box<RawValue>>,
}

impl CachedEntry {
    pub fn new(json: Box<RawValue>, warnings: Vec<String>, strict_input: Option<Value>) -> CachedEntry {
        CachedEntry {
            json,
            warnings,
            strict_input,
            deferred: OnceLock::new(),
        }
    }

    /// The entry with `"defer_loading": true` as its last field (OpenAI Responses, Anthropic).
    pub fn deferred(&self) -> &RawValue {
        self.deferred.get_or_init(|| appended(&self.json, "\"defer_loading\":true"))
    }
}

/// An object's JSON text with one more member (`"key":value`, valid JSON text) as its last.
fn appended(object: &RawValue, member: &str) -> Box<RawValue> {
    let text = object.get().trim_end();
    let body = text.strip_suffix('}').unwrap_or(text).trim_end();
    let comma = if body.ends_with('{') { "" } else { "," };
    RawValue::from_string(format!("{body}{comma}{member}}}")).unwrap_or_else(|_| object.to_owned())
}

impl Item {
    /// The item with `"cache_control": {"type": "ephemeral"}` (Anthropic's cache breakpoint) as
    /// its last field; a namespace (no Anthropic item) as it is.
    pub fn cache_breakpoint(self) -> Item {
        const MEMBER: &str = r#""cache_control":{"type":"ephemeral"}"#;
        match self {
            Item::Entry(e) => Item::Value(Arc::from(appended(&e.json, MEMBER))),
            Item::Deferred(e) => Item::Value(Arc::from(appended(e.deferred(), MEMBER))),
            Item::Value(v) => Item::Value(Arc::from(appended(&v, MEMBER))),
            namespace @ Item::Namespace(_) => namespace,
        }
    }
}

/// One item of an export's list.
#[derive(Debug, Clone)]
pub(crate) enum Item {
    /// A tool's entry, as the catalog caches it.
    Entry(Arc<CachedEntry>),
    /// A tool's entry, left out of the model's context until tool search finds it.
    Deferred(Arc<CachedEntry>),
    /// An item written for this export (a tool search tool).
    Value(Arc<RawValue>),
    /// An OpenAI Responses namespace: `{type: "namespace", name, description, tools}`.
    Namespace(Box<Group>),
}

/// A namespace's items, with its name and description.
#[derive(Debug, Clone)]
pub(crate) struct Group {
    pub name: String,
    pub description: String,
    pub items: Vec<Item>,
}

impl Serialize for Item {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        match self {
            Item::Entry(e) => e.json.serialize(serializer),
            Item::Deferred(e) => e.deferred().serialize(serializer),
            Item::Value(v) => v.serialize(serializer),
            Item::Namespace(group) => {
                let mut map = serializer.serialize_map(Some(4))?;
                map.serialize_entry("type", "namespace")?;
                map.serialize_entry("name", &group.name)?;
                map.serialize_entry("description", &group.description)?;
                map.serialize_entry("tools", &group.items)?;
                map.end()
            }
        }
    }
}

/// A dialect's tool list for one request, and what the passes warned about.
///
/// It serialises as the document in the dialect's exact shape, straight from the catalog's
/// cached entries; [`Export::document`] builds it as a value.
#[derive(Debug, Clone)]
pub struct Export {
    pub(crate) dialect: Dialect,
    pub(crate) items: Vec<Item>,
    /// Warnings (constraints removed for a target, per-request limits passed, fields a format
    /// cannot carry).
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
        let parse = |i: &Item| serde_json::to_value(i).unwrap_or(Value::Null);
        format::document(self.dialect, self.items.iter().map(parse).collect())
    }
}

impl Serialize for Export {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        match format::wrapper(self.dialect) {
            None => self.items.serialize(serializer),
            Some(key) => {
                let mut map = serializer.serialize_map(Some(1))?;
                map.serialize_entry(key, &self.items)?;
                map.end()
            }
        }
    }
}
