//! What a `strict` tool accepts: the fields its schema lists, and no others.
//!
//! Owns [`closed`], the input schema a strict tool's arguments are validated against: every
//! object schema that lists `properties` is closed, even where the schema left it open
//! (`additionalProperties` absent or `true`). An object whose fields are spread over
//! `allOf`/`anyOf`/`oneOf`/`$ref`/`if` beside its own `properties` (a `#[serde(flatten)]`) is
//! closed with `unevaluatedProperties: false`, which sees the fields of every branch; the
//! branches themselves stay open (each describes only part of the object). Objects that list
//! no `properties` (a map, free-form JSON) and ones whose extra fields have a schema of their
//! own (`additionalProperties: {...}`, `patternProperties`) are left as they are. Providers'
//! strict modes close objects in their catalogs the same way; this is the check on our side.

use serde_json::{Map, Value};

/// Keywords applied to the same instance as the schema holding them.
const IN_PLACE: [&str; 7] = ["allOf", "anyOf", "oneOf", "if", "then", "else", "dependentSchemas"];
/// Keywords whose value is a map of names to schemas for other instances.
const SCHEMA_MAPS: [&str; 4] = ["properties", "patternProperties", "$defs", "definitions"];
/// Keywords whose value is a schema (or a list of schemas) for other instances.
const SCHEMA_SLOTS: [&str; 6] = [
    "items",
    "prefixItems",
    "additionalProperties",
    "unevaluatedProperties",
    "additionalItems",
    "contains",
];

/// A copy of `schema` in which every object schema that lists `properties` accepts no others.
pub(super) fn closed(schema: &Value) -> Value {
    let mut schema = schema.clone();
    close(&mut schema, false);
    schema
}

/// Closes `schema` (unless it is `part` of an object another schema describes) and walks on.
fn close(schema: &mut Value, part: bool) {
    let Value::Object(node) = schema else {
        return;
    };
    let own_fields = node.contains_key("properties");
    if own_fields && !part {
        close_node(node);
    }
    for (key, value) in node.iter_mut() {
        let key = key.as_str();
        if IN_PLACE.contains(&key) {
            // Branches of an object with fields of its own describe only part of it.
            each_schema(value, key == "dependentSchemas", &mut |s| close(s, part || own_fields));
        } else if SCHEMA_MAPS.contains(&key) {
            each_schema(value, true, &mut |s| close(s, false));
        } else if SCHEMA_SLOTS.contains(&key) {
            each_schema(value, false, &mut |s| close(s, false));
        }
    }
}

/// Closes one object schema that lists `properties`.
fn close_node(node: &mut Map<String, Value>) {
    let open = |v: Option<&Value>| matches!(v, None | Some(Value::Bool(true)));
    if node.contains_key("patternProperties") || !open(node.get("additionalProperties")) {
        return;
    }
    let composed = IN_PLACE.iter().any(|k| node.contains_key(*k)) || node.contains_key("$ref");
    if !composed {
        node.insert("additionalProperties".into(), Value::Bool(false));
    } else if open(node.get("unevaluatedProperties")) {
        // `additionalProperties: true` would count every field as evaluated.
        node.remove("additionalProperties");
        node.insert("unevaluatedProperties".into(), Value::Bool(false));
    }
}

/// Calls `f` on each schema in a keyword's value: a schema, a list of them, or (for `map`) a
/// map of names to them.
fn each_schema(value: &mut Value, map: bool, f: &mut dyn FnMut(&mut Value)) {
    match value {
        Value::Object(m) if map => m.values_mut().for_each(f),
        Value::Array(items) => items.iter_mut().for_each(f),
        other => f(other),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn structs_are_closed_at_every_depth() {
        let s = closed(&json!({
            "type": "object",
            "properties": {"a": {"$ref": "#/$defs/A"}, "list": {"type": "array", "items": {"type": "object", "properties": {"x": {}}}}},
            "additionalProperties": true,
            "$defs": {"A": {"type": "object", "properties": {"properties": {"type": "string"}}}}
        }));
        assert_eq!(s["additionalProperties"], false);
        assert_eq!(s["properties"]["list"]["items"]["additionalProperties"], false);
        assert_eq!(s["$defs"]["A"]["additionalProperties"], false);
        // A field named `properties` is a field, not a keyword.
        assert_eq!(s["$defs"]["A"]["properties"]["properties"], json!({"type": "string"}));
    }

    #[test]
    fn maps_free_objects_and_declared_extras_stay_open() {
        let map = json!({"type": "object", "additionalProperties": {"type": "number"}});
        assert_eq!(closed(&map), map);
        let free = json!({"type": "object"});
        assert_eq!(closed(&free), free);
        let extras = json!({"type": "object", "properties": {"a": {}}, "additionalProperties": {"type": "string"}});
        assert_eq!(closed(&extras), extras);
        let patterned = json!({"type": "object", "properties": {"a": {}}, "patternProperties": {"^x-": {}}});
        assert_eq!(closed(&patterned), patterned);
    }

    #[test]
    fn flattened_unions_close_with_unevaluated_properties_and_keep_branches_open() {
        let s = closed(&json!({
            "type": "object",
            "properties": {"id": {"type": "string"}},
            "oneOf": [
                {"properties": {"kind": {"const": "a"}, "a": {"type": "object", "properties": {"deep": {}}}}},
                {"properties": {"kind": {"const": "b"}}}
            ]
        }));
        assert_eq!(s["unevaluatedProperties"], false);
        assert!(s.get("additionalProperties").is_none());
        assert!(s["oneOf"][0].get("additionalProperties").is_none());
        // A field inside a branch is an object of its own: closed.
        assert_eq!(s["oneOf"][0]["properties"]["a"]["additionalProperties"], false);
        // Whole-object branches (an enum's variants) are closed each.
        let e = closed(&json!({"oneOf": [{"type": "object", "properties": {"A": {}}}, {"type": "object", "properties": {"B": {}}}]}));
        assert_eq!(e["oneOf"][1]["additionalProperties"], false);
    }
}
