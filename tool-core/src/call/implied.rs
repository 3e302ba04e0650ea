//! Whether a tool's input schema says no more than its Rust type enforces when it decodes.
//!
//! Owns [`implied_by_type`]: a keyword-by-keyword reading of a schema, made once when a tool
//! enters a registry. A schema built only from the keywords `schemars` derives from plain
//! serde types (objects with `properties` and `required`, maps with `additionalProperties`,
//! arrays with `items`, the JSON types,
//! `anyOf` for options and untagged enums, string `enum`s of unit variants, the numeric
//! `format`s and the bounds of their integer types, `$ref` into its own `$defs`, annotations)
//! accepts every value the type decodes: for such a tool a call whose arguments decode needs
//! no validator on the happy path. Any other keyword (`minimum` beyond the type's range,
//! `pattern`, `minLength`, `additionalProperties`, `oneOf`, `const`, string `format`s…) says
//! more than decoding checks, and the tool keeps validating. It decides nothing else: it is
//! the second condition, asked only of a tool whose input type decodes exactly what its
//! derived schema accepts (what `#[tool]` vouches for; serde attributes and custom impls are
//! invisible in a schema's keywords, so this reading alone could not tell).

use serde_json::{Map, Value};

/// How deep a schema is read before the answer is "validate" (schemas nest far less).
const DEPTH: usize = 64;

/// Whether every value that the tool's own type decodes is valid against `schema` (judged
/// from its keywords alone; `false` when in doubt). Only meaningful for a schema derived from
/// the type that decodes the input: the caller decides that.
pub(crate) fn implied_by_type(schema: &Value) -> bool {
    let Some(root) = schema.as_object() else {
        return false;
    };
    // The root must be an object of named fields: a map or any-value root says nothing a
    // struct's decoding checks.
    root.get("type").and_then(Value::as_str) == Some("object") && root.contains_key("properties") && plain(schema, schema, DEPTH)
}

/// Whether every value the tool's own output type encodes is valid against its output
/// `schema` (judged from its keywords alone, any root; `false` when in doubt). Only
/// meaningful for a schema derived from a type that encodes no value outside it (what
/// `#[tool]` vouches for): the caller decides that.
pub(crate) fn output_implied_by_type(schema: &Value) -> bool {
    plain(schema, schema, DEPTH)
}

/// One subschema of `root` and everything under it. Every keyword it accepts is well-formed and
/// every `$ref` names a member of `root`'s `$defs` (or `definitions`), so a plain schema
/// compiles: a tool whose every schema is plain needs no compiled validator before a call strays
/// from the happy path (`call::Compiled`).
fn plain(root: &Value, schema: &Value, depth: usize) -> bool {
    let Some(obj) = schema.as_object() else {
        // `true` accepts anything (a `serde_json::Value` field), `false` nothing.
        return schema.as_bool() == Some(true);
    };
    if depth == 0 {
        return false;
    }
    obj.iter().all(|(keyword, value)| keyword_ok(root, obj, keyword, value, depth - 1))
}

fn keyword_ok(root: &Value, obj: &Map<String, Value>, keyword: &str, value: &Value, depth: usize) -> bool {
    match keyword {
        "$schema" | "title" | "description" | "default" | "examples" | "deprecated" | "readOnly" | "writeOnly" | "$comment" => true,
        "$defs" | "definitions" | "properties" => value.as_object().is_some_and(|m| m.values().all(|s| plain(root, s, depth))),
        "$ref" => value.as_str().is_some_and(|r| {
            let named = |defs: &str, prefix: &str| {
                r.strip_prefix(prefix)
                    .is_some_and(|name| root.get(defs).and_then(|d| d.get(name)).is_some())
            };
            named("$defs", "#/$defs/") || named("definitions", "#/definitions/")
        }),
        "type" => types(value).is_some(),
        "required" => value.as_array().is_some_and(|names| names.iter().all(Value::is_string)),
        "items" => value.is_object() && plain(root, value, depth),
        // A map with string keys (`BTreeMap<String, V>`, `HashMap<String, V>`): every member
        // decodes as `V`, whose schema this is. Only a schema (or `true`) on an object of no named
        // members: `false` (a struct refusing unknown keys, or a strict export) says more than
        // decoding a struct checks, and beside `properties` it would be a flattened map
        // (`plain` accepts a schema or `true`, never `false`).
        "additionalProperties" => {
            let map = types(obj.get("type").unwrap_or(&Value::Null)).is_some_and(|t| t.contains(&"object"))
                && !obj.contains_key("properties")
                && !obj.contains_key("patternProperties");
            map && plain(root, value, depth)
        }
        "anyOf" => value
            .as_array()
            .is_some_and(|branches| !branches.is_empty() && branches.iter().all(|s| plain(root, s, depth))),
        // A unit-variant enum: strings only, on a string schema.
        "enum" => {
            types(obj.get("type").unwrap_or(&Value::Null)).is_some_and(|t| t == ["string"])
                && value.as_array().is_some_and(|vs| !vs.is_empty() && vs.iter().all(Value::is_string))
        }
        "format" => value
            .as_str()
            .is_some_and(|f| f == "float" || f == "double" || int_range(f).is_some()),
        "minimum" | "maximum" => bound_implied(obj, keyword, value),
        _ => false,
    }
}

/// The JSON types a `type` keyword names (`None` when it is malformed).
fn types(value: &Value) -> Option<Vec<&str>> {
    const KNOWN: [&str; 7] = ["object", "array", "string", "integer", "number", "boolean", "null"];
    let names: Vec<&str> = match value {
        Value::String(s) => vec![s.as_str()],
        Value::Array(items) => items.iter().map(Value::as_str).collect::<Option<_>>()?,
        _ => return None,
    };
    (!names.is_empty() && names.iter().all(|n| KNOWN.contains(n))).then_some(names)
}

/// The range of the integer type a `format` names (`uint`/`int` are 64-bit).
fn int_range(format: &str) -> Option<(i128, i128)> {
    Some(match format {
        "uint8" => (0, u8::MAX.into()),
        "uint16" => (0, u16::MAX.into()),
        "uint32" => (0, u32::MAX.into()),
        "uint64" | "uint" => (0, u64::MAX.into()),
        "int8" => (i8::MIN.into(), i8::MAX.into()),
        "int16" => (i16::MIN.into(), i16::MAX.into()),
        "int32" => (i32::MIN.into(), i32::MAX.into()),
        "int64" | "int" => (i64::MIN.into(), i64::MAX.into()),
        _ => return None,
    })
}

/// A `minimum`/`maximum` is implied when the integer type's own range lies inside it (what
/// `schemars` writes for `u32`: `minimum: 0`).
fn bound_implied(obj: &Map<String, Value>, keyword: &str, bound: &Value) -> bool {
    let integer_only = types(obj.get("type").unwrap_or(&Value::Null)).is_some_and(|t| t.iter().all(|n| *n == "integer" || *n == "null"));
    let range = obj.get("format").and_then(Value::as_str).and_then(int_range);
    let (Some((low, high)), true) = (range, integer_only) else {
        return false;
    };
    let as_i128 = |n: &Value| n.as_i64().map(i128::from).or_else(|| n.as_u64().map(i128::from));
    match (keyword, as_i128(bound)) {
        ("minimum", Some(b)) => b <= low,
        ("maximum", Some(b)) => b >= high,
        _ => false,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn derived_shapes_are_implied() {
        let schema = json!({
            "$schema": "https://json-schema.org/draft/2020-12/schema",
            "title": "In", "type": "object",
            "properties": {
                "city": {"type": "string", "description": "City"},
                "days": {"type": "integer", "format": "uint32", "minimum": 0},
                "small": {"type": ["integer", "null"], "format": "uint8", "minimum": 0, "maximum": 255},
                "unit": {"type": "string", "enum": ["c", "f"]},
                "tags": {"type": "array", "items": {"type": "string"}},
                "to": {"anyOf": [{"$ref": "#/$defs/Place"}, {"type": "null"}]},
                "prices": {"type": "object", "additionalProperties": {"type": "number", "format": "double"}},
                "maybe": {"type": ["object", "null"], "additionalProperties": {"type": "array", "items": {"type": "string"}}},
                "extra": {"type": "object", "additionalProperties": true},
                "any": true
            },
            "required": ["city", "days"],
            "$defs": {"Place": {"type": "object", "properties": {"x": {"type": "number", "format": "double"}}, "required": ["x"]}}
        });
        assert!(implied_by_type(&schema));
    }

    #[test]
    fn constraints_beyond_the_type_keep_validating() {
        let with = |field: Value| json!({"type": "object", "properties": {"f": field}});
        for field in [
            json!({"type": "integer", "format": "uint32", "minimum": 1}),
            json!({"type": "integer", "format": "uint8", "maximum": 100}),
            json!({"type": "integer", "minimum": 0}),
            json!({"type": "number", "format": "double", "minimum": 0}),
            json!({"type": "string", "pattern": "^a"}),
            json!({"type": "string", "minLength": 1}),
            json!({"type": "string", "format": "date-time"}),
            json!({"type": "object", "properties": {}, "additionalProperties": false}),
            json!({"type": "object", "additionalProperties": false}),
            // Beside named members (a flattened map), or with constraints of its own.
            json!({"type": "object", "properties": {"a": {"type": "string"}}, "additionalProperties": {"type": "string"}}),
            json!({"type": "object", "patternProperties": {"^a": {"type": "string"}}, "additionalProperties": {"type": "string"}}),
            json!({"type": "object", "additionalProperties": {"type": "string", "minLength": 1}}),
            json!({"type": "string", "additionalProperties": {"type": "string"}}),
            json!({"type": "object", "additionalProperties": {"type": "string"}, "maxProperties": 3}),
            json!({"oneOf": [{"type": "string"}, {"type": "integer"}]}),
            json!({"const": "a"}),
            json!({"type": "integer", "enum": [1, 2]}),
            json!({"type": "array", "items": {"type": "string"}, "uniqueItems": true}),
            json!({"$ref": "https://example.com/schema"}),
            // A reference into `$defs` that names nothing does not compile.
            json!({"$ref": "#/$defs/Missing"}),
            json!({"type": "array", "items": {"$ref": "#/definitions/Gone"}}),
            json!(false),
        ] {
            assert!(!implied_by_type(&with(field.clone())), "{field}");
        }
        assert!(!implied_by_type(&json!({"type": "object", "additionalProperties": true})));
        assert!(!implied_by_type(&json!(true)));
        let resolved = json!({"type": "object", "properties": {"f": {"$ref": "#/$defs/F"}}, "$defs": {"F": {"type": "string"}}});
        assert!(implied_by_type(&resolved));
        assert!(!output_implied_by_type(
            &json!({"anyOf": [{"$ref": "#/$defs/F"}, {"type": "null"}]})
        ));
    }
}
