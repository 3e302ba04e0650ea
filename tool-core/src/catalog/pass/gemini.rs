//! Gemini's OpenAPI schema (`functionDeclarations[].parameters`): JSON Schema rewritten into the
//! OpenAPI 3.0 subset Gemini reads; the rules under **Gemini OpenAPI** in [`pass`](super).
//!
//! Owns the Gemini OpenAPI walk and its keyword rules (references inlined, nullability,
//! tuples, maps, formats). Gemini's JSON Schema flavour (`parametersJsonSchema`) takes the
//! schema as it is and needs no pass; the strict modes' rules are not here.

use serde_json::{Map, Value, json};

use super::walk::{ptr, ptr2};
use super::{ANNOTATIONS, NUMERIC_FORMATS, Pass, PassError};

/// The Gemini `Schema` fields (OpenAPI 3.0 subset) kept as they are.
const GEMINI_KEEP: [&str; 16] = [
    "title",
    "description",
    "nullable",
    "maxItems",
    "minItems",
    "required",
    "minProperties",
    "maxProperties",
    "minLength",
    "maxLength",
    "pattern",
    "example",
    "propertyOrdering",
    "default",
    "minimum",
    "maximum",
];

/// One node's rewrite as its keywords are read.
#[derive(Default)]
struct Rewrite {
    out: Map<String, Value>,
    /// A `null` type, value or branch was seen: the result gets `nullable: true`.
    nullable: bool,
    removed: Vec<String>,
    /// The one branch of an `anyOf`/`oneOf` left once its `null` branch is gone.
    single_branch: Option<Map<String, Value>>,
}

impl Rewrite {
    fn keep(&mut self, k: &str, v: &Value) {
        self.out.insert(k.into(), v.clone());
    }

    fn finish(self) -> Value {
        let mut out = self.out;
        if let Some(branch) = self.single_branch {
            // `Option<Struct>`: the one non-null branch becomes the schema; the outer keywords
            // (the field's description) win.
            let mut merged = branch;
            for (k, v) in out {
                merged.insert(k, v);
            }
            out = merged;
        }
        if self.nullable {
            out.insert("nullable".into(), Value::Bool(true));
        }
        Value::Object(out)
    }
}

impl Pass<'_> {
    pub(super) fn gemini(&mut self, schema: &Value, path: &str, refs: &mut Vec<String>) -> Result<Value, PassError> {
        let node = match schema {
            Value::Object(m) => m,
            // Any value: an OpenAPI schema without `type`.
            Value::Bool(true) => return Ok(json!({})),
            _ => return Err(self.err(path, "this schema accepts no value at all; remove the field")),
        };
        let node = self.flatten_all_of(node, path, 0)?;
        if let Some(r) = node.get("$ref") {
            return self.gemini_inline_ref(&node, r, path, refs);
        }
        self.refuse_structural(&node, path)?;
        if node.contains_key("anyOf") && node.contains_key("oneOf") {
            return Err(self.err(
                path,
                "both `anyOf` and `oneOf` on one schema cannot be expressed in Gemini's OpenAPI schema",
            ));
        }
        let mut rewrite = Rewrite::default();
        for (k, v) in node.iter() {
            self.gemini_keyword(&node, k, v, path, refs, &mut rewrite)?;
        }
        self.warn_removed(path, &rewrite.removed, "Gemini's OpenAPI schema does not support them");
        Ok(rewrite.finish())
    }

    /// Gemini's `parameters` cannot reference definitions: the definition is walked in place of
    /// the reference, the sibling keywords winning.
    fn gemini_inline_ref(&mut self, node: &Map<String, Value>, r: &Value, path: &str, refs: &mut Vec<String>) -> Result<Value, PassError> {
        let name = r.as_str().unwrap_or_default().to_owned();
        if refs.contains(&name) {
            return Err(self.err(
                path,
                format!(
                    "`$ref` `{name}` makes the schema recursive, and Gemini's OpenAPI `parameters` cannot reference definitions \
                     (everything is inlined); use the gemini-json-schema target (`parametersJsonSchema`), or bound the depth"
                ),
            ));
        }
        let (def_path, def) = self.resolve(path, r)?;
        let merged = match def {
            // A bare reference: the definition is walked as it is, without a copy.
            Value::Object(_) if node.len() == 1 => None,
            Value::Object(m) => Some(m.clone()),
            Value::Bool(true) => Some(Map::new()),
            _ => return Err(self.err(path, "this `$ref` accepts no value at all")),
        };
        let merged = merged.map(|mut merged| {
            for (k, v) in node.iter().filter(|(k, _)| k.as_str() != "$ref") {
                merged.insert(k.clone(), v.clone());
            }
            Value::Object(merged)
        });
        refs.push(name);
        let out = self.gemini(merged.as_ref().unwrap_or(def), &def_path, refs);
        refs.pop();
        out
    }

    /// One keyword of `node`: walked, rewritten, kept, dropped silently or removed.
    fn gemini_keyword(
        &mut self,
        node: &Map<String, Value>,
        k: &str,
        v: &Value,
        path: &str,
        refs: &mut Vec<String>,
        rewrite: &mut Rewrite,
    ) -> Result<(), PassError> {
        match k {
            "$defs" | "unevaluatedProperties" | "$schema" => {}
            "type" => self.gemini_type(v, path, rewrite)?,
            "const" => match v {
                Value::Null => rewrite.nullable = true,
                _ => {
                    rewrite.out.insert("enum".into(), json!([v]));
                }
            },
            "enum" => {
                let values = v.as_array().ok_or_else(|| self.err(path, "`enum` must be an array"))?;
                rewrite.nullable |= values.iter().any(Value::is_null);
                rewrite
                    .out
                    .insert(k.into(), Value::Array(values.iter().filter(|x| !x.is_null()).cloned().collect()));
            }
            "anyOf" | "oneOf" => self.gemini_branches(k, v, path, refs, rewrite)?,
            "properties" => {
                let props = v.as_object().ok_or_else(|| self.err(path, "`properties` must be an object"))?;
                let mut outs = Map::new();
                for (name, p) in props {
                    outs.insert(name.clone(), self.gemini(p, &ptr2(path, "properties", name), refs)?);
                }
                rewrite.out.insert(k.into(), Value::Object(outs));
            }
            "items" => {
                if !node.contains_key("prefixItems") {
                    rewrite.out.insert(k.into(), self.gemini(v, &ptr(path, k), refs)?);
                }
            }
            "prefixItems" => self.gemini_tuple(node, v, path, refs, rewrite)?,
            "additionalProperties" => self.gemini_map(v, path),
            "format" => gemini_format(v, rewrite),
            "examples" => {
                if let Some(first) = v.as_array().and_then(|e| e.first()) {
                    rewrite.out.entry("example").or_insert_with(|| first.clone());
                }
            }
            _ if GEMINI_KEEP.contains(&k) => rewrite.keep(k, v),
            _ if ANNOTATIONS.contains(&k) => {}
            _ => rewrite.removed.push(k.to_owned()),
        }
        Ok(())
    }

    fn only_null(&self, path: &str) -> PassError {
        self.err(
            path,
            "a value that can only be `null` cannot be expressed in Gemini's OpenAPI schema",
        )
    }

    /// `type`: `null` in a list becomes `nullable`; several other types become an `anyOf`.
    fn gemini_type(&self, v: &Value, path: &str, rewrite: &mut Rewrite) -> Result<(), PassError> {
        match v {
            Value::String(t) if t == "null" => Err(self.only_null(path)),
            Value::String(_) => {
                rewrite.keep("type", v);
                Ok(())
            }
            Value::Array(types) => {
                let names: Vec<&Value> = types.iter().filter(|t| t.as_str() != Some("null")).collect();
                rewrite.nullable |= names.len() < types.len();
                match names.as_slice() {
                    [] => return Err(self.only_null(path)),
                    [one] => rewrite.keep("type", one),
                    many => {
                        rewrite
                            .out
                            .insert("anyOf".into(), Value::Array(many.iter().map(|t| json!({ "type": t })).collect()));
                    }
                }
                Ok(())
            }
            _ => Err(self.err(path, "`type` must be a string or an array of strings")),
        }
    }

    /// `anyOf`/`oneOf` (`k`) as `anyOf`: a `null` branch becomes `nullable`, and a single
    /// remaining branch is inlined.
    fn gemini_branches(&mut self, k: &str, v: &Value, path: &str, refs: &mut Vec<String>, rewrite: &mut Rewrite) -> Result<(), PassError> {
        let branches = v.as_array().ok_or_else(|| self.err(path, format!("`{k}` must be an array")))?;
        let mut outs = Vec::new();
        for (i, b) in branches.iter().enumerate() {
            if is_null_schema(b) {
                rewrite.nullable = true;
                continue;
            }
            outs.push(self.gemini(b, &ptr2(path, k, &i.to_string()), refs)?);
        }
        match outs.len() {
            0 => return Err(self.only_null(path)),
            1 => rewrite.single_branch = outs.pop().and_then(|b| b.as_object().cloned()),
            _ => {
                rewrite.out.insert("anyOf".into(), Value::Array(outs));
            }
        }
        Ok(())
    }

    /// A tuple (`prefixItems`, and `items` for the rest) as `items` of its distinct element
    /// types; positions are lost, with a warning when the types differ.
    fn gemini_tuple(
        &mut self,
        node: &Map<String, Value>,
        v: &Value,
        path: &str,
        refs: &mut Vec<String>,
        rewrite: &mut Rewrite,
    ) -> Result<(), PassError> {
        let items = v.as_array().ok_or_else(|| self.err(path, "`prefixItems` must be an array"))?;
        let mut distinct: Vec<Value> = Vec::new();
        for (i, item) in items.iter().enumerate() {
            let item = self.gemini(item, &ptr2(path, "prefixItems", &i.to_string()), refs)?;
            if !distinct.contains(&item) {
                distinct.push(item);
            }
        }
        if let Some(rest) = node.get("items").filter(|i| i.as_bool() != Some(false)) {
            let rest = self.gemini(rest, &ptr(path, "items"), refs)?;
            if !distinct.contains(&rest) {
                distinct.push(rest);
            }
        }
        match distinct.len() {
            0 => {}
            1 => {
                rewrite.out.insert("items".into(), distinct.remove(0));
            }
            _ => {
                self.warn(
                    path,
                    "a tuple's element types are given as `items: {anyOf: [..]}` (Gemini's OpenAPI schema has no positional \
                     items), so the model is not told which position takes which type; calls are still validated against the \
                     original schema (the gemini-json-schema target keeps the positions)"
                        .to_owned(),
                );
                rewrite.out.insert("items".into(), json!({ "anyOf": distinct }));
            }
        }
        Ok(())
    }

    /// `additionalProperties` is dropped: a map's value schema with a warning.
    fn gemini_map(&mut self, v: &Value, path: &str) {
        if v.as_bool() != Some(false) {
            self.warn(
                path,
                "removed `additionalProperties` (a map's value schema): Gemini's OpenAPI schema has no maps, so the model is not \
                 told the value type; calls are still validated against the original schema (the gemini-json-schema target \
                 keeps it)"
                    .to_owned(),
            );
        }
    }
}

/// `format`: OpenAPI's own kept, integer ones mapped to `int32`/`int64`, the other numeric hints
/// dropped silently, string ones other than `date-time`/`enum` removed.
fn gemini_format(v: &Value, rewrite: &mut Rewrite) {
    match v.as_str() {
        Some("float" | "double" | "int32" | "int64" | "date-time" | "enum") => rewrite.keep("format", v),
        Some("int8" | "int16" | "uint8" | "uint16") => {
            rewrite.out.insert("format".into(), json!("int32"));
        }
        Some("uint32" | "uint64" | "int" | "uint") => {
            rewrite.out.insert("format".into(), json!("int64"));
        }
        Some(f) if NUMERIC_FORMATS.contains(&f) => {}
        _ => rewrite.removed.push(format!("format: {v}")),
    }
}

fn is_null_schema(schema: &Value) -> bool {
    let only_null = |t: &Value| t == "null" || t.as_array().is_some_and(|ts| ts.len() == 1 && ts[0] == "null");
    schema.get("type").is_some_and(only_null) || schema.get("const") == Some(&Value::Null)
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::super::tests::{fail, obj, run};
    use crate::dialect::Dialect;

    #[test]
    fn gemini_openapi_inlines_and_rewrites_nullability() {
        let s = json!({
            "$schema": "x",
            "type": "object",
            "properties": {
                "name": {"type": ["string", "null"], "description": "N"},
                "p": {"anyOf": [{"$ref": "#/$defs/P"}, {"type": "null"}], "description": "maybe"},
                "q": {"$ref": "#/$defs/P", "description": "Q"},
                "kind": {"const": "A", "type": "string"},
                "u": {"oneOf": [{"type": "string"}, {"type": "integer", "format": "uint8", "minimum": 0, "maximum": 255}]},
                "c": {"$ref": "#/$defs/C"},
                "m": {"type": "object", "additionalProperties": {"type": "integer"}},
                "d": {"type": "string", "format": "date-time", "title": "D", "default": "x", "examples": ["e1", "e2"]},
                "one": {"allOf": [{"$ref": "#/$defs/C"}]}
            },
            "required": ["kind"],
            "additionalProperties": false,
            "$defs": {
                "P": {"type": "object", "properties": {"x": {"type": "number", "format": "double"}}, "required": ["x"]},
                "C": {"type": "string", "enum": ["r", "g"]}
            }
        });
        let out = run(Dialect::GeminiOpenApi, false, s);
        let p = json!({"type": "object", "properties": {"x": {"type": "number", "format": "double"}}, "required": ["x"]});
        let mut p_nullable = p.clone();
        p_nullable["description"] = json!("maybe");
        p_nullable["nullable"] = json!(true);
        let mut q = p.clone();
        q["description"] = json!("Q");
        assert_eq!(
            out.schema,
            json!({
                "type": "object",
                "properties": {
                    "name": {"type": "string", "nullable": true, "description": "N"},
                    "p": p_nullable,
                    "q": q,
                    "kind": {"enum": ["A"], "type": "string"},
                    "u": {"anyOf": [{"type": "string"}, {"type": "integer", "format": "int32", "minimum": 0, "maximum": 255}]},
                    "c": {"type": "string", "enum": ["r", "g"]},
                    "m": {"type": "object"},
                    "d": {"type": "string", "format": "date-time", "title": "D", "default": "x", "example": "e1"},
                    "one": {"type": "string", "enum": ["r", "g"]}
                },
                "required": ["kind"]
            })
        );
        assert_eq!(out.warnings.len(), 1, "{:?}", out.warnings);
        assert!(
            out.warnings[0].contains("`/properties/m`: removed `additionalProperties`"),
            "{:?}",
            out.warnings
        );
    }

    #[test]
    fn gemini_openapi_formats_bounds_and_tuples() {
        let s = obj(json!({
            "a": {"type": "integer", "format": "uint32", "minimum": 0},
            "b": {"type": "integer", "format": "int64"},
            "c": {"type": "integer", "format": "uint128", "minimum": 0},
            "d": {"type": "number", "format": "float", "exclusiveMinimum": 0, "multipleOf": 2},
            "e": {"type": "string", "format": "email"},
            "t": {"type": "array", "prefixItems": [{"type": "integer", "format": "uint8"}, {"type": "string"}], "minItems": 2, "maxItems": 2},
            "same": {"type": "array", "prefixItems": [{"type": "number"}, {"type": "number"}], "minItems": 2, "maxItems": 2},
            "set": {"type": "array", "items": {"type": "string"}, "uniqueItems": true},
            "multi": {"type": ["string", "integer", "null"]}
        }));
        let out = run(Dialect::GeminiOpenApi, false, s);
        assert_eq!(
            out.schema["properties"],
            json!({
                "a": {"type": "integer", "format": "int64", "minimum": 0},
                "b": {"type": "integer", "format": "int64"},
                "c": {"type": "integer", "minimum": 0},
                "d": {"type": "number", "format": "float"},
                "e": {"type": "string"},
                "t": {"type": "array", "items": {"anyOf": [{"type": "integer", "format": "int32"}, {"type": "string"}]}, "minItems": 2, "maxItems": 2},
                "same": {"type": "array", "items": {"type": "number"}, "minItems": 2, "maxItems": 2},
                "set": {"type": "array", "items": {"type": "string"}},
                "multi": {"anyOf": [{"type": "string"}, {"type": "integer"}], "nullable": true}
            })
        );
        let all = out.warnings.join("\n");
        assert_eq!(out.warnings.len(), 4, "{all}");
        assert!(all.contains("`/properties/d`: removed `exclusiveMinimum`, `multipleOf`"), "{all}");
        assert!(all.contains("`/properties/e`: removed `format: \"email\"`"), "{all}");
        assert!(all.contains("`/properties/t`: a tuple"), "{all}");
        assert!(all.contains("`/properties/set`: removed `uniqueItems`"), "{all}");
    }

    #[test]
    fn gemini_openapi_refusals() {
        let rec = json!({
            "type": "object",
            "properties": {"root": {"$ref": "#/$defs/N"}},
            "$defs": {"N": {"type": "object", "properties": {"kids": {"type": "array", "items": {"$ref": "#/$defs/N"}}}}}
        });
        let e = fail(Dialect::GeminiOpenApi, false, rec.clone());
        assert_eq!(e.path, "/$defs/N/properties/kids/items");
        assert!(e.rule.contains("recursive") && e.rule.contains("gemini-json-schema"), "{e}");
        // The JSON Schema flavour keeps references, recursion included.
        assert_eq!(run(Dialect::GeminiJsonSchema, false, rec.clone()).schema, rec);
        let cases = [
            (obj(json!({"n": {"type": "null"}})), "/properties/n", "only be `null`"),
            (
                obj(json!({"n": {"not": {"type": "string"}}})),
                "/properties/n",
                "`not` is not supported by gemini-openapi",
            ),
            (
                obj(json!({"n": {"type": "object", "patternProperties": {"^x": {}}}})),
                "/properties/n",
                "`patternProperties`",
            ),
            (
                obj(json!({"n": {"allOf": [{"type": "string"}, {"type": "integer"}]}})),
                "/properties/n/allOf/1",
                "allOf",
            ),
            (obj(json!({"n": false})), "/properties/n", "accepts no value"),
        ];
        for (schema, path, rule) in cases {
            let e = fail(Dialect::GeminiOpenApi, false, schema);
            assert_eq!(e.path, path, "{e}");
            assert!(e.rule.contains(rule), "{e}");
        }
        // `serde_json::Value` is an untyped OpenAPI schema.
        assert_eq!(
            run(Dialect::GeminiOpenApi, false, obj(json!({"v": true}))).schema["properties"]["v"],
            json!({})
        );
    }
}
