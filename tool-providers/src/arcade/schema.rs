//! Arcade's parameter types as JSON Schema: a tool's `input.parameters` become one object
//! schema, and each `value_schema` (scalars, `json` objects, arrays, enums, the nested forms)
//! its JSON Schema counterpart.
//!
//! Owns the mapping only, from the wire's typed definitions to the JSON Schema our tools
//! carry (free-form `Value`s by nature). Must not fetch or run anything.

use serde_json::{Map, Value, json};

use super::api::{ToolDefinition, ValueSchema};

/// The input JSON Schema of a tool definition.
pub(super) fn input_schema(def: &ToolDefinition) -> Value {
    let mut properties = Map::new();
    let mut required = Vec::new();
    for p in def.input.iter().flat_map(|i| &i.parameters) {
        let schema = match &p.value_schema {
            Some(vs) => value_schema(vs, p.description.as_deref()),
            None => json!({}),
        };
        if p.required == Some(true) {
            required.push(json!(p.name));
        }
        properties.insert(p.name.clone(), schema);
    }
    let mut schema = json!({"type": "object", "properties": properties});
    if !required.is_empty() {
        schema["required"] = Value::Array(required);
    }
    schema
}

/// The output JSON Schema of a tool definition (what `output.value` holds), when it has one.
pub(super) fn output_schema(def: &ToolDefinition) -> Option<Value> {
    let vs = def.output.as_ref()?.value_schema.as_ref()?;
    Some(value_schema(vs, None))
}

/// The JSON Schema of an Arcade type name.
fn base(val_type: &str) -> Value {
    match val_type {
        "string" => json!({"type": "string"}),
        "integer" => json!({"type": "integer"}),
        "number" => json!({"type": "number"}),
        "boolean" => json!({"type": "boolean"}),
        "json" => json!({"type": "object"}),
        "array" => json!({"type": "array"}),
        _ => json!({}),
    }
}

/// `properties` (and `required`, when any) of an object schema.
fn object(schema: &mut Value, properties: Option<&Vec<(String, ValueSchema)>>, required: Option<&Vec<String>>) {
    let Some(properties) = properties else { return };
    let props: Map<String, Value> = properties.iter().map(|(k, v)| (k.clone(), value_schema(v, None))).collect();
    schema["properties"] = Value::Object(props);
    if let Some(keys) = required.filter(|k| !k.is_empty()) {
        schema["required"] = json!(keys);
    }
}

/// One `value_schema` as JSON Schema; `description` (the parameter's) wins over its own.
pub(super) fn value_schema(vs: &ValueSchema, description: Option<&str>) -> Value {
    let val_type = vs.val_type.as_deref().unwrap_or("");
    let mut schema = base(val_type);
    let values = vs.values.as_ref().filter(|e| !e.is_empty());
    if val_type == "array" {
        let mut items = match &vs.items {
            Some(items) => value_schema(items, None),
            None => {
                let mut items = base(vs.inner_val_type.as_deref().unwrap_or(""));
                object(&mut items, vs.inner_properties.as_ref(), vs.inner_required_keys.as_ref());
                items
            }
        };
        if let Some(values) = values {
            items["enum"] = json!(values);
        }
        schema["items"] = items;
    } else {
        if val_type == "json" {
            object(&mut schema, vs.properties.as_ref(), vs.required_keys.as_ref());
        }
        if let Some(values) = values {
            schema["enum"] = json!(values);
        }
    }
    if let Some(d) = description.or(vs.description.as_deref()) {
        schema["description"] = json!(d);
    }
    schema
}

#[cfg(test)]
mod tests {
    use super::*;

    fn vs(v: Value) -> ValueSchema {
        serde_json::from_value(v).unwrap()
    }

    #[test]
    fn value_schemas_become_json_schema() {
        let list = vs(json!({"val_type": "array", "inner_val_type": "string", "enum": ["a", "b"]}));
        assert_eq!(
            value_schema(&list, Some("d")),
            json!({"type": "array", "items": {"type": "string", "enum": ["a", "b"]}, "description": "d"})
        );
        assert_eq!(value_schema(&vs(json!({"val_type": "json"})), None), json!({"type": "object"}));
        let nested = vs(json!({"val_type": "json", "required_keys": ["id"], "properties": {
            "id": {"val_type": "integer", "description": "The id"},
            "tags": {"val_type": "array", "items": {"val_type": "string"}}}}));
        assert_eq!(
            value_schema(&nested, None),
            json!({"type": "object", "required": ["id"], "properties": {
                "id": {"type": "integer", "description": "The id"},
                "tags": {"type": "array", "items": {"type": "string"}}}})
        );
        let rows = vs(json!({"val_type": "array", "inner_val_type": "json", "inner_properties": {"n": {"val_type": "number"}}}));
        assert_eq!(
            value_schema(&rows, None),
            json!({"type": "array", "items": {"type": "object", "properties": {"n": {"type": "number"}}}})
        );
    }

    #[test]
    fn parameters_make_one_object_schema() {
        let def: ToolDefinition = serde_json::from_value(json!({"name": "Add", "input": {"parameters": [
            {"name": "a", "required": true, "description": "First", "value_schema": {"val_type": "integer"}},
            {"name": "b", "value_schema": null}]}}))
        .unwrap();
        assert_eq!(
            input_schema(&def),
            json!({"type": "object", "properties": {"a": {"type": "integer", "description": "First"}, "b": {}}, "required": ["a"]})
        );
        assert_eq!(output_schema(&def), None);
    }
}
