//! JSON Schemas derived from Rust types.
//!
//! Owns the schemars settings (JSON Schema 2020-12; the deserialize contract for what a tool
//! receives, the serialize contract for what it returns; integer widths as `minimum`/`maximum`,
//! and what drops the `format`s outside the JSON Schema vocabulary from what is sent:
//! [`without_foreign_formats`]) and the input-root rule: a tool's
//! input schema is always an object. Provider-specific rewrites (strict, Gemini, …) are
//! catalog passes and do not belong here.

use schemars::JsonSchema;
use schemars::generate::SchemaSettings;
use serde_json::{Map, Value, json};

/// A schema that cannot be used where it was asked for.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{0}")]
pub struct SchemaError(pub String);

/// The schema of a value a tool *receives* (input, resume data, request context).
///
/// ```
/// #[derive(serde::Deserialize, schemars::JsonSchema)]
/// struct In {
///     /// City name
///     city: String,
///     days: Option<u8>,
/// }
/// let s = tool_core::schema::receive_schema::<In>();
/// assert_eq!(s["type"], "object");
/// assert_eq!(s["required"], serde_json::json!(["city"]));
/// assert_eq!(s["properties"]["city"]["description"], "City name");
/// ```
pub fn receive_schema<T: JsonSchema + ?Sized>() -> Value {
    let schema = SchemaSettings::draft2020_12()
        .for_deserialize()
        .into_generator()
        .into_root_schema_for::<T>();
    untitled(schema.to_value())
}

/// schemars titles a root schema with the Rust type's name; providers get no use from it.
/// Descriptions come from doc comments: they are reflowed like Markdown reads them.
fn untitled(mut schema: Value) -> Value {
    if let Some(obj) = schema.as_object_mut() {
        obj.remove("title");
    }
    reflow_descriptions(&mut schema);
    bound_integer_formats(&mut schema);
    schema
}

/// The `format`s of the JSON Schema 2020-12 format vocabulary (§7.3); validators know them.
const STANDARD_FORMATS: [&str; 19] = [
    "date-time",
    "date",
    "time",
    "duration",
    "email",
    "idn-email",
    "hostname",
    "idn-hostname",
    "ipv4",
    "ipv6",
    "uri",
    "uri-reference",
    "iri",
    "iri-reference",
    "uuid",
    "uri-template",
    "json-pointer",
    "relative-json-pointer",
    "regex",
];

/// `schema` without the `format`s outside the JSON Schema vocabulary, or `None` when it has
/// none. schemars names Rust's numeric types (`uint`, `uint32`, `int64`, `double`, …) and a few
/// others (`partial-date-time`, `ip`) that no JSON Schema validator knows (Ajv warns `unknown
/// format "uint" ignored`, strict mode refuses the schema); the canonical schema keeps them
/// (they tell the runtime which integer type decodes a value), and what is sent to MCP clients
/// and model providers drops them (the catalog passes call this). What they say about a number
/// is in `minimum`/`maximum`, which stay. A `format` that is a property's name stays.
///
/// ```
/// let s = serde_json::json!({"type": "object", "properties": {"n": {"type": "integer", "format": "uint32", "minimum": 0}}});
/// let sent = tool_core::schema::without_foreign_formats(&s).unwrap();
/// assert_eq!(sent["properties"]["n"], serde_json::json!({"type": "integer", "minimum": 0}));
/// ```
pub fn without_foreign_formats(schema: &Value) -> Option<Value> {
    // Read first, copy only a schema that has one: most have none, and every catalog and
    // listing asks of every tool.
    if !has_foreign_format(schema) {
        return None;
    }
    let mut out = schema.clone();
    drop_foreign_formats(&mut out).then_some(out)
}

/// What the member `key` of a schema object holds, for the walks over subschemas.
enum Member {
    /// A map from names to schemas (a member named `format` is a name there).
    Schemas,
    /// Values, not schemas.
    Values,
    /// A schema, or an array of them.
    Schema,
}

fn member(key: &str) -> Member {
    match key {
        "properties" | "$defs" | "definitions" | "patternProperties" | "dependentSchemas" => Member::Schemas,
        "enum" | "const" | "default" | "examples" => Member::Values,
        _ => Member::Schema,
    }
}

/// Whether `format` is one a schema sent out must not carry.
fn is_foreign(format: Option<&Value>) -> bool {
    format.and_then(Value::as_str).is_some_and(|f| !STANDARD_FORMATS.contains(&f))
}

/// Whether `schema` has a `format` outside the JSON Schema vocabulary anywhere.
fn has_foreign_format(schema: &Value) -> bool {
    match schema {
        Value::Object(obj) => {
            is_foreign(obj.get("format"))
                || obj.iter().any(|(key, value)| match (member(key), value) {
                    (Member::Schemas, Value::Object(members)) => members.values().any(has_foreign_format),
                    (Member::Schema, value) => has_foreign_format(value),
                    _ => false,
                })
        }
        Value::Array(items) => items.iter().any(has_foreign_format),
        _ => false,
    }
}

/// Drops the foreign `format`s of `schema` in place; whether there was one.
pub(crate) fn drop_foreign_formats(schema: &mut Value) -> bool {
    match schema {
        Value::Object(obj) => {
            let foreign = is_foreign(obj.get("format"));
            if foreign {
                obj.remove("format");
            }
            let mut dropped = foreign;
            for (key, value) in obj.iter_mut() {
                dropped |= match (member(key), value) {
                    (Member::Schemas, Value::Object(members)) => members.values_mut().fold(false, |d, m| drop_foreign_formats(m) | d),
                    (Member::Schema, value) => drop_foreign_formats(value),
                    _ => false,
                };
            }
            dropped
        }
        Value::Array(items) => items.iter_mut().fold(false, |d, item| drop_foreign_formats(item) | d),
        _ => false,
    }
}

/// Gives every integer schema with a format narrower than 64 bits (`uint32`, `int8`, …) the
/// bounds of its Rust type where schemars leaves them out (it writes `minimum: 0` for `u32` but
/// no maximum), so the schema refuses what the type cannot hold instead of passing it on to
/// fail later as "could not be read". 64-bit types keep their schemas as they are: their
/// bounds are as wide as JSON numbers a model writes, and would only cost tokens.
fn bound_integer_formats(schema: &mut Value) {
    match schema {
        Value::Object(obj) => {
            let range = obj.get("format").and_then(Value::as_str).and_then(integer_range);
            let integer = match obj.get("type") {
                Some(Value::String(t)) => t == "integer",
                Some(Value::Array(types)) => types.iter().any(|t| t == "integer"),
                _ => false,
            };
            if let Some((min, max)) = range.filter(|_| integer) {
                obj.entry("minimum").or_insert(min);
                obj.entry("maximum").or_insert(max);
            }
            obj.values_mut().for_each(bound_integer_formats);
        }
        Value::Array(items) => items.iter_mut().for_each(bound_integer_formats),
        _ => {}
    }
}

/// The range of the Rust integer type narrower than 64 bits that a schemars `format` names.
fn integer_range(format: &str) -> Option<(Value, Value)> {
    Some(match format {
        "int8" => (json!(i8::MIN), json!(i8::MAX)),
        "int16" => (json!(i16::MIN), json!(i16::MAX)),
        "int32" => (json!(i32::MIN), json!(i32::MAX)),
        "uint8" => (json!(0), json!(u8::MAX)),
        "uint16" => (json!(0), json!(u16::MAX)),
        "uint32" => (json!(0), json!(u32::MAX)),
        _ => return None,
    })
}

fn reflow_descriptions(schema: &mut Value) {
    match schema {
        Value::Object(obj) => {
            for (k, v) in obj.iter_mut() {
                match v {
                    Value::String(text) if k == "description" => *text = reflow_doc(text),
                    other => reflow_descriptions(other),
                }
            }
        }
        Value::Array(items) => items.iter_mut().for_each(reflow_descriptions),
        _ => {}
    }
}

/// Joins doc-comment lines the way Markdown reads them: the lines of a paragraph become one
/// line, blank lines separate paragraphs, list items and fenced code keep their line breaks.
///
/// ```
/// let doc = "Convert an amount\nbetween units.\n\nSupported:\n- length\n- mass";
/// assert_eq!(tool_core::schema::reflow_doc(doc), "Convert an amount between units.\n\nSupported:\n- length\n- mass");
/// ```
pub fn reflow_doc(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    let (mut in_code, mut prev_blank) = (false, true);
    for line in text.split('\n') {
        let trimmed = line.trim();
        let fence = trimmed.starts_with("```");
        if trimmed.is_empty() && !in_code {
            prev_blank = true;
            continue;
        }
        let list_item = ["- ", "* ", "+ "].iter().any(|m| trimmed.starts_with(m))
            || trimmed
                .split_once(". ")
                .is_some_and(|(n, _)| !n.is_empty() && n.chars().all(|c| c.is_ascii_digit()));
        if !out.is_empty() {
            out.push_str(if prev_blank {
                "\n\n"
            } else if in_code || fence || list_item {
                "\n"
            } else {
                " "
            });
        }
        out.push_str(if in_code { line.trim_end() } else { trimmed });
        in_code ^= fence;
        prev_blank = false;
    }
    out
}

/// The schema of a value a tool *produces* (output, suspend payload); `None` for `()`.
///
/// ```
/// assert!(tool_core::schema::produce_schema::<()>().is_none());
/// assert_eq!(tool_core::schema::produce_schema::<f64>().unwrap()["type"], "number");
/// ```
pub fn produce_schema<T: JsonSchema + ?Sized>() -> Option<Value> {
    let schema = SchemaSettings::draft2020_12()
        .for_serialize()
        .into_generator()
        .into_root_schema_for::<T>()
        .to_value();
    let schema = untitled(schema);
    (!is_null_schema(&schema)).then_some(schema)
}

fn is_null_schema(schema: &Value) -> bool {
    schema.get("type") == Some(&Value::String("null".into()))
}

/// The input schema of a tool with no parameters.
pub fn empty_object_schema() -> Value {
    json!({"$schema": "https://json-schema.org/draft/2020-12/schema", "type": "object", "additionalProperties": false})
}

/// Checks that a tool's input schema has an object root; names the tool and what it found.
pub fn check_input_root(tool_id: &str, type_name: &str, schema: &Value) -> Result<(), SchemaError> {
    if root_type(schema).as_deref() == Some("object") {
        return Ok(());
    }
    let found = root_type(schema)
        .map(|t| format!("type `{t}`"))
        .or_else(|| {
            ["oneOf", "anyOf", "allOf", "enum", "const", "$ref"]
                .into_iter()
                .find(|k| schema.get(*k).is_some())
                .map(|k| format!("a root `{k}`"))
        })
        .unwrap_or_else(|| "no root type".to_string());
    Err(SchemaError(format!(
        "tool `{tool_id}`: the input type `{type_name}` has {found} at its schema root, but every \
         provider needs an object; use a struct (or plain fn parameters) as the input"
    )))
}

fn root_type(schema: &Value) -> Option<String> {
    match schema.get("type")? {
        Value::String(s) => Some(s.clone()),
        Value::Array(types) => Some(types.iter().filter_map(Value::as_str).collect::<Vec<_>>().join("|")),
        _ => None,
    }
}

/// Removes the `$schema` keyword and returns the rest (for embedding in catalogs).
pub fn without_meta(schema: &Value) -> Value {
    match schema {
        Value::Object(obj) => {
            let mut out = Map::with_capacity(obj.len());
            for (k, v) in obj {
                if k != "$schema" {
                    out.insert(k.clone(), v.clone());
                }
            }
            Value::Object(out)
        }
        other => other.clone(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[derive(serde::Deserialize, schemars::JsonSchema)]
    #[allow(dead_code)]
    struct Numbers {
        count: u32,
        big: u64,
        signed: i64,
        ratio: f64,
        small: Option<u8>,
        format: String,
        addresses: Vec<std::net::IpAddr>,
    }

    #[test]
    fn sent_schemas_name_no_format_outside_the_json_schema_vocabulary() {
        let canonical = receive_schema::<Numbers>();
        // The canonical schema keeps schemars' formats (the runtime reads integer types there).
        assert_eq!(canonical["properties"]["count"]["format"], "uint32");
        let s = without_foreign_formats(&canonical).unwrap();
        let text = s.to_string();
        for foreign in ["uint", "uint32", "uint64", "uint8", "int64", "double", "ip"] {
            assert!(!text.contains(&format!("\"format\":\"{foreign}\"")), "{foreign} in {text}");
        }
        // What the formats said about the numbers stays in their bounds.
        assert_eq!(s["properties"]["count"]["minimum"], 0);
        assert_eq!(s["properties"]["count"]["maximum"], u32::MAX);
        assert_eq!(s["properties"]["big"]["minimum"], 0);
        assert_eq!(s["properties"]["small"]["maximum"], 255);
        // A property named `format` is a name, not the keyword.
        assert_eq!(s["properties"]["format"]["type"], "string");
        assert!(without_foreign_formats(&s).is_none(), "nothing left to drop");
    }

    #[test]
    fn standard_formats_stay() {
        let mut s = json!({"type": "object", "properties": {"at": {"type": "string", "format": "date-time"}, "n": {"type": "integer", "format": "int64"}}});
        assert!(drop_foreign_formats(&mut s));
        assert_eq!(s["properties"]["at"]["format"], "date-time");
        assert!(s["properties"]["n"].get("format").is_none());
    }

    #[derive(serde::Deserialize, schemars::JsonSchema)]
    #[allow(dead_code)]
    enum Shape {
        Circle { r: f64 },
        Square { side: f64 },
    }

    #[test]
    fn non_object_roots_are_refused_with_what_was_found() {
        let err = check_input_root("t", "f64", &receive_schema::<f64>()).unwrap_err();
        assert!(err.0.contains("type `number`"), "{err}");
        let err = check_input_root("t", "Shape", &receive_schema::<Shape>()).unwrap_err();
        assert!(err.0.contains("root `oneOf`"), "{err}");
        assert!(err.0.contains("tool `t`"));
        let err = check_input_root("t", "Option<X>", &json!({"type": ["object", "null"]})).unwrap_err();
        assert!(err.0.contains("object|null"), "{err}");
    }

    #[test]
    fn object_roots_pass() {
        check_input_root("t", "map", &receive_schema::<std::collections::HashMap<String, i32>>()).unwrap();
        check_input_root("t", "()", &empty_object_schema()).unwrap();
    }

    #[test]
    fn unit_has_no_output_schema_but_option_does() {
        assert!(produce_schema::<()>().is_none());
        assert!(produce_schema::<Option<String>>().is_some());
    }
}
