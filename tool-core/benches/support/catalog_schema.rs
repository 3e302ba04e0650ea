//! The input schema the `catalog_export` bench exports 1,000 times, shared with the test that
//! pins the catalog bytes (`tests/it/catalog/bytes.rs`), so the bytes pinned are the bench's.

use serde_json::{Value, json};

/// A realistic input schema: nested object, optional and nullable fields, an enum, an array
/// of objects through `$defs`.
pub fn schema(i: usize) -> Value {
    json!({
        "$schema": "https://json-schema.org/draft/2020-12/schema",
        "type": "object",
        "properties": {
            "query": {"type": "string", "description": format!("What to look for in collection {i}")},
            "limit": {"type": ["integer", "null"], "format": "uint32", "minimum": 0, "description": "Page size"},
            "order": {"type": "string", "enum": ["asc", "desc"]},
            "filter": {
                "type": "object",
                "properties": {
                    "field": {"type": "string"},
                    "values": {"type": "array", "items": {"type": "string"}}
                },
                "required": ["field", "values"]
            },
            "items": {"type": "array", "items": {"$ref": "#/$defs/Item"}}
        },
        "required": ["query", "order"],
        "$defs": {
            "Item": {
                "type": "object",
                "properties": {"id": {"type": "integer", "format": "int64"}, "note": {"type": ["string", "null"]}},
                "required": ["id"]
            }
        }
    })
}
