//! OpenAI strict mode (Chat and Responses): every object closed, every property required, the
//! optional ones nullable; the rules under **OpenAI strict** in [`pass`](super).
//!
//! Owns the OpenAI strict walk and its keyword rules (what is kept, rewritten, removed with a
//! warning); the size limits are counted first, by [`openai_limits`](super::openai_limits).
//! Non-strict OpenAI keeps the schema ([`rewrite`](super::rewrite)). Must not hold Anthropic's
//! rules, however close: they are [`anthropic`](super::anthropic)'s, and what both strict modes
//! share is [`strict`](super::strict)'s.

use std::borrow::Cow;

use serde_json::{Map, Value, json};

use super::strict::keep_format;
use super::walk::{is_object_schema, prune_defs, ptr, ptr2, type_names};
use super::{ANNOTATIONS, Pass, PassError};

const OPENAI_FORMATS: [&str; 9] = ["date-time", "time", "date", "duration", "email", "hostname", "ipv4", "ipv6", "uuid"];

/// What OpenAI strict mode keeps as is (other than what gets rewritten).
const OPENAI_KEEP: [&str; 12] = [
    "type",
    "enum",
    "const",
    "description",
    "title",
    "pattern",
    "minimum",
    "maximum",
    "exclusiveMinimum",
    "exclusiveMaximum",
    "multipleOf",
    "$ref",
];

/// What a `$ref` with siblings adds that is warned about at the reference: everything OpenAI
/// strict mode drops, except what the inlined walk handles (and warns about) itself.
const INLINED_HANDLED: [&str; 8] = [
    "format",
    "minItems",
    "maxItems",
    "anyOf",
    "oneOf",
    "items",
    "properties",
    "required",
];

fn has_lookaround(pattern: &str) -> bool {
    ["(?=", "(?!", "(?<=", "(?<!"].iter().any(|t| pattern.contains(t))
}

impl Pass<'_> {
    pub(super) fn openai_strict_root(&mut self) -> Result<Value, PassError> {
        let root = self.root_map()?;
        let root = self.flatten_all_of(root, "", 0)?;
        self.check_object_root(&root)?;
        self.openai_limits()?;
        let mut out = self.openai_strict(&Value::Object(root.into_owned()), "", &mut Vec::new())?;
        prune_defs(&mut out);
        Ok(out)
    }

    /// One schema under OpenAI strict mode; `inlining` holds the references being inlined
    /// around it (a recursive one is kept as a reference).
    fn openai_strict(&mut self, schema: &Value, path: &str, inlining: &mut Vec<String>) -> Result<Value, PassError> {
        let node = self.strict_node(schema, path)?;
        let mut node = self.flatten_all_of(node, path, 0)?;
        if let Some(inlined) = self.openai_ref_siblings(&mut node, path, inlining)? {
            return Ok(inlined);
        }
        self.refuse_strict_shapes(&node, path)?;

        let mut out = Map::new();
        let mut removed = Vec::new();
        if let Some(defs) = node.get("$defs").and_then(Value::as_object) {
            let mut outs = Map::new();
            for (name, def) in defs {
                outs.insert(name.clone(), self.openai_strict(def, &ptr2(path, "$defs", name), inlining)?);
            }
            out.insert("$defs".into(), Value::Object(outs));
        }
        for (k, v) in node.iter() {
            self.openai_keyword(k, v, path, inlining, &mut out, &mut removed)?;
        }
        self.warn_removed(path, &removed, "OpenAI strict mode does not support them");
        if is_object_schema(&node) {
            self.openai_close_object(&node, path, inlining, &mut out)?;
        }
        if type_names(&node).contains(&"array") && !node.contains_key("items") {
            return Err(self.err(path, "an array without `items` cannot be strict; give its elements a type"));
        }
        self.require_typed(&out, path)?;
        Ok(Value::Object(out))
    }

    /// OpenAI refuses keywords next to `$ref` (as the official SDK notes): the definition is
    /// inlined, the sibling keywords winning, as the SDK does; `Some` is the inlined schema. A
    /// recursive reference is kept alone in a one-branch `anyOf` (which OpenAI accepts) and the
    /// node walked on (`None`).
    fn openai_ref_siblings(
        &mut self,
        node: &mut Cow<'_, Map<String, Value>>,
        path: &str,
        inlining: &mut Vec<String>,
    ) -> Result<Option<Value>, PassError> {
        let Some(r) = node.get("$ref").cloned() else { return Ok(None) };
        if !node.keys().any(|k| k != "$ref" && k != "$defs") {
            return Ok(None);
        }
        let name = r.as_str().unwrap_or_default().to_owned();
        node.to_mut().remove("$ref");
        if inlining.contains(&name) {
            node.to_mut().insert("anyOf".into(), json!([{ "$ref": r }]));
            return Ok(None);
        }
        let (_, def) = self.resolve(path, &r)?;
        let mut merged = def.as_object().cloned().unwrap_or_default();
        if def.as_bool() == Some(false) {
            return Err(self.err(path, "this `$ref` accepts no value at all"));
        }
        // The definition was walked (and warned about) at its own path; what the reference adds
        // next to it is warned about here.
        let dropped: Vec<String> = node
            .keys()
            .filter(|k| !OPENAI_KEEP.contains(&k.as_str()) && !ANNOTATIONS.contains(&k.as_str()))
            .filter(|k| !INLINED_HANDLED.contains(&k.as_str()))
            .cloned()
            .collect();
        self.warn_removed(path, &dropped, "OpenAI strict mode does not support them");
        for (k, v) in std::mem::take(node).into_owned() {
            merged.insert(k, v);
        }
        inlining.push(name);
        self.mute += 1;
        let out = self.openai_strict(&Value::Object(merged), path, inlining);
        self.mute -= 1;
        inlining.pop();
        out.map(Some)
    }

    /// One keyword of a node: walked, kept, dropped silently or removed (into `removed`).
    /// Objects are closed afterwards, by [`Self::openai_close_object`].
    fn openai_keyword(
        &mut self,
        k: &str,
        v: &Value,
        path: &str,
        inlining: &mut Vec<String>,
        out: &mut Map<String, Value>,
        removed: &mut Vec<String>,
    ) -> Result<(), PassError> {
        match k {
            "$defs" | "properties" | "required" | "additionalProperties" | "unevaluatedProperties" => {}
            "items" => {
                out.insert(k.into(), self.openai_strict(v, &ptr(path, k), inlining)?);
            }
            "anyOf" | "oneOf" => self.strict_branches(k, v, path, out, |pass, b, p| pass.openai_strict(b, p, inlining))?,
            "format" => keep_format(v, &OPENAI_FORMATS, out, removed),
            "pattern" if v.as_str().is_some_and(has_lookaround) => removed.push("pattern (lookaround)".into()),
            "minItems" | "maxItems" => {
                out.insert(k.into(), v.clone());
            }
            _ if OPENAI_KEEP.contains(&k) => {
                out.insert(k.into(), v.clone());
            }
            _ if ANNOTATIONS.contains(&k) => {}
            _ => removed.push(k.to_owned()),
        }
        Ok(())
    }

    /// Closes an object: no map, every property walked and required, the optional ones made
    /// nullable.
    fn openai_close_object(
        &mut self,
        node: &Map<String, Value>,
        path: &str,
        inlining: &mut Vec<String>,
        out: &mut Map<String, Value>,
    ) -> Result<(), PassError> {
        match node.get("additionalProperties") {
            None | Some(Value::Bool(false)) => {}
            Some(_) => {
                return Err(self.err(
                    path,
                    "a map (`additionalProperties`, e.g. HashMap/BTreeMap or a flattened map) cannot be strict: OpenAI strict mode \
                     needs `additionalProperties: false` and every key listed; use a Vec of key/value structs, or export this \
                     tool with strict off",
                ));
            }
        }
        let props = node.get("properties").and_then(Value::as_object).cloned().unwrap_or_default();
        let required: Vec<String> = node
            .get("required")
            .and_then(Value::as_array)
            .map(|r| r.iter().filter_map(Value::as_str).map(str::to_owned).collect())
            .unwrap_or_default();
        let mut out_props = Map::new();
        let mut all_required: Vec<String> = required.iter().filter(|r| props.contains_key(*r)).cloned().collect();
        for (name, prop) in &props {
            let p = self.openai_strict(prop, &ptr2(path, "properties", name), inlining)?;
            let p = if required.contains(name) { p } else { nullable(p) };
            out_props.insert(name.clone(), p);
            if !all_required.contains(name) {
                all_required.push(name.clone());
            }
        }
        out.insert("properties".into(), Value::Object(out_props));
        out.insert("required".into(), json!(all_required));
        out.insert("additionalProperties".into(), Value::Bool(false));
        if !out.contains_key("type") {
            out.insert("type".into(), json!("object"));
        }
        Ok(())
    }
}

/// Makes an (already strict) property schema accept `null`, unless it already does.
fn nullable(schema: Value) -> Value {
    let Value::Object(mut s) = schema else { return schema };
    if accepts_null(&s) {
        return Value::Object(s);
    }
    if let Some(Value::Array(branches)) = s.get_mut("anyOf") {
        branches.push(json!({"type": "null"}));
        return Value::Object(s);
    }
    if s.contains_key("$ref") || s.contains_key("const") {
        let mut outer = Map::new();
        for k in ["description", "title"] {
            if let Some(v) = s.remove(k) {
                outer.insert(k.into(), v);
            }
        }
        outer.insert("anyOf".into(), json!([s, {"type": "null"}]));
        return Value::Object(outer);
    }
    match s.get_mut("type") {
        Some(Value::String(t)) => {
            let t = std::mem::take(t);
            s.insert("type".into(), json!([t, "null"]));
        }
        Some(Value::Array(ts)) => ts.push(json!("null")),
        _ => {}
    }
    if let Some(Value::Array(values)) = s.get_mut("enum") {
        values.push(Value::Null);
    }
    Value::Object(s)
}

fn accepts_null(s: &Map<String, Value>) -> bool {
    type_names(s).contains(&"null")
        || s.get("const") == Some(&Value::Null)
        || s.get("enum").and_then(Value::as_array).is_some_and(|e| e.contains(&Value::Null))
        || s.get("anyOf")
            .and_then(Value::as_array)
            .is_some_and(|bs| bs.iter().any(|b| b.as_object().is_some_and(accepts_null)))
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::super::apply;
    use super::super::tests::{fail, obj, run};
    use crate::dialect::Dialect;

    #[test]
    fn openai_strict_requires_everything_and_makes_optional_nullable() {
        let s = json!({
            "type": "object",
            "properties": {
                "a": {"type": "string", "description": "A"},
                "b": {"type": ["integer", "null"], "format": "uint32", "minimum": 0},
                "c": {"type": "string", "enum": ["x", "y"]},
                "d": {"$ref": "#/$defs/P"},
                "e": {"anyOf": [{"$ref": "#/$defs/P"}, {"type": "null"}]},
                "f": {"const": "k", "type": "string", "description": "F"},
                "g": {"type": "integer", "default": 3}
            },
            "required": ["a"],
            "$defs": {"P": {"type": "object", "properties": {"x": {"type": "number", "format": "double"}}, "required": ["x"]}}
        });
        let out = run(Dialect::OpenAiChat, true, s);
        assert_eq!(
            out.schema,
            json!({
                "type": "object",
                "properties": {
                    "a": {"type": "string", "description": "A"},
                    "b": {"type": ["integer", "null"], "minimum": 0},
                    "c": {"type": ["string", "null"], "enum": ["x", "y", null]},
                    "d": {"anyOf": [{"$ref": "#/$defs/P"}, {"type": "null"}]},
                    "e": {"anyOf": [{"$ref": "#/$defs/P"}, {"type": "null"}]},
                    "f": {"anyOf": [{"const": "k", "type": "string"}, {"type": "null"}], "description": "F"},
                    "g": {"type": ["integer", "null"]}
                },
                "required": ["a", "b", "c", "d", "e", "f", "g"],
                "additionalProperties": false,
                "$defs": {"P": {"type": "object", "properties": {"x": {"type": "number"}}, "required": ["x"], "additionalProperties": false}}
            })
        );
        assert!(out.warnings.is_empty(), "{:?}", out.warnings);
    }

    #[test]
    fn openai_strict_inlines_refs_with_siblings_and_prunes_defs() {
        let s = json!({
            "type": "object",
            "properties": {"p": {"$ref": "#/$defs/P", "description": "The point"}},
            "required": ["p"],
            "$defs": {"P": {"type": "object", "properties": {"x": {"type": "number"}}, "required": ["x"]}}
        });
        let out = run(Dialect::OpenAiResponses, true, s);
        assert_eq!(
            out.schema,
            json!({
                "type": "object",
                "properties": {"p": {"type": "object", "description": "The point", "properties": {"x": {"type": "number"}}, "required": ["x"], "additionalProperties": false}},
                "required": ["p"],
                "additionalProperties": false
            })
        );
    }

    #[test]
    fn openai_strict_warns_about_constraints_next_to_an_inlined_ref() {
        let s = json!({
            "type": "object",
            "properties": {"s": {"$ref": "#/$defs/S", "minLength": 2, "description": "d"}},
            "required": ["s"],
            "$defs": {"S": {"type": "string", "maxLength": 9}}
        });
        let out = run(Dialect::OpenAiChat, true, s);
        assert_eq!(out.schema["properties"]["s"], json!({"type": "string", "description": "d"}));
        assert!(out.schema.get("$defs").is_none());
        assert_eq!(out.warnings.len(), 2, "{:?}", out.warnings);
        assert!(out.warnings[0].contains("`/$defs/S`: removed `maxLength`"), "{:?}", out.warnings);
        assert!(
            out.warnings[1].contains("`/properties/s`: removed `minLength`"),
            "{:?}",
            out.warnings
        );
    }

    #[test]
    fn openai_strict_keeps_recursion_and_wraps_a_self_reference_with_siblings() {
        let s = json!({
            "type": "object",
            "properties": {"root": {"$ref": "#/$defs/N", "description": "Root"}},
            "required": ["root"],
            "$defs": {"N": {"type": "object", "properties": {"next": {"$ref": "#/$defs/N", "description": "Next"}}, "required": ["next"]}}
        });
        let out = run(Dialect::OpenAiChat, true, s);
        let root = &out.schema["properties"]["root"];
        assert_eq!(root["description"], "Root");
        assert_eq!(
            root["properties"]["next"],
            json!({"anyOf": [{"$ref": "#/$defs/N"}], "description": "Next"})
        );
        assert!(out.schema["$defs"]["N"].is_object());
    }

    #[test]
    fn openai_strict_converts_one_of_and_flattens_all_of() {
        let s = json!({
            "type": "object",
            "properties": {
                "u": {"oneOf": [{"type": "string"}, {"type": "integer", "format": "int64"}]},
                "single": {"allOf": [{"$ref": "#/$defs/E"}], "description": "one"},
                "both": {"allOf": [
                    {"type": "object", "properties": {"a": {"type": "string"}}, "required": ["a"]},
                    {"type": "object", "properties": {"b": {"type": "string"}}, "required": ["b"]}
                ]}
            },
            "required": ["u", "single", "both"],
            "$defs": {"E": {"type": "string", "enum": ["x"]}}
        });
        let out = run(Dialect::OpenAiChat, true, s);
        assert_eq!(
            out.schema["properties"]["u"],
            json!({"anyOf": [{"type": "string"}, {"type": "integer"}]})
        );
        assert_eq!(
            out.schema["properties"]["single"],
            json!({"type": "string", "enum": ["x"], "description": "one"})
        );
        assert_eq!(
            out.schema["properties"]["both"],
            json!({"type": "object", "properties": {"a": {"type": "string"}, "b": {"type": "string"}}, "required": ["a", "b"], "additionalProperties": false})
        );
        assert!(out.schema.get("$defs").is_none());
    }

    #[test]
    fn openai_strict_removes_unsupported_constraints_with_warnings() {
        let s = obj(json!({
            "s": {"type": "string", "minLength": 1, "maxLength": 5, "format": "uri"},
            "tags": {"type": "array", "items": {"type": "string"}, "uniqueItems": true, "minItems": 1},
            "p": {"type": "string", "pattern": "^(?!x)"},
            "ok": {"type": "string", "pattern": "^a+$", "format": "date"}
        }));
        let out = run(Dialect::OpenAiChat, true, s);
        let props = &out.schema["properties"];
        assert_eq!(props["s"], json!({"type": ["string", "null"]}));
        assert_eq!(
            props["tags"],
            json!({"type": ["array", "null"], "items": {"type": "string"}, "minItems": 1})
        );
        assert_eq!(props["p"], json!({"type": ["string", "null"]}));
        assert_eq!(
            props["ok"],
            json!({"type": ["string", "null"], "pattern": "^a+$", "format": "date"})
        );
        let all = out.warnings.join("\n");
        assert_eq!(out.warnings.len(), 3, "{all}");
        assert!(
            all.contains("`/properties/s`: removed `format: \"uri\"`, `maxLength`, `minLength`"),
            "{all}"
        );
        assert!(all.contains("`/properties/tags`: removed `uniqueItems`"), "{all}");
        assert!(all.contains("pattern (lookaround)"), "{all}");
        assert!(all.contains("still validated against the original schema"), "{all}");
    }

    #[test]
    fn openai_strict_refusals_name_path_and_rule() {
        let cases = [
            (
                obj(json!({"m": {"type": "object", "additionalProperties": {"type": "string"}}})),
                "/properties/m",
                "a map",
            ),
            (
                obj(json!({"m": {"type": "object", "additionalProperties": true}})),
                "/properties/m",
                "a map",
            ),
            (obj(json!({"v": true})), "/properties/v", "accepts any JSON"),
            (obj(json!({"v": {"description": "anything"}})), "/properties/v", "no `type`"),
            (
                obj(json!({"t": {"type": "array", "prefixItems": [{"type": "string"}]}})),
                "/properties/t",
                "tuple",
            ),
            (obj(json!({"a": {"type": "array"}})), "/properties/a", "without `items`"),
            (obj(json!({"n": {"not": {"type": "string"}}})), "/properties/n", "`not`"),
            (
                obj(json!({"n": {"type": "string", "if": {"minLength": 1}, "then": {}}})),
                "/properties/n",
                "`if`",
            ),
            (
                obj(json!({"n": {"type": "object", "dependentRequired": {"a": ["b"]}}})),
                "/properties/n",
                "`dependentRequired`",
            ),
            (
                obj(json!({"n": {"type": "object", "dependentSchemas": {"a": {}}}})),
                "/properties/n",
                "`dependentSchemas`",
            ),
            (
                obj(json!({"n": {"type": "object", "patternProperties": {"^x": {}}}})),
                "/properties/n",
                "`patternProperties`",
            ),
            (
                obj(json!({"n": {"type": "object", "unevaluatedProperties": {"type": "string"}}})),
                "/properties/n",
                "`unevaluatedProperties`",
            ),
            (
                obj(json!({"n": {"type": "object", "anyOf": [{"type": "object"}], "unevaluatedProperties": false}})),
                "/properties/n",
                "#[serde(flatten)]",
            ),
            (
                obj(json!({"n": {"allOf": [{"type": "string"}, {"type": "integer"}]}})),
                "/properties/n/allOf/1",
                "`type` differs",
            ),
            (
                json!({"type": "object", "properties": {"x": {"type": "string"}}, "oneOf": [{"properties": {"a": {"type": "string"}}}]}),
                "",
                "#[serde(flatten)]",
            ),
            (json!({"anyOf": [{"type": "object"}]}), "", "union"),
            (
                json!({"type": "object", "properties": {"d": {"$ref": "#/$defs/D"}}, "$defs": {"D": {"type": "object", "additionalProperties": {"type": "integer"}}}}),
                "/$defs/D",
                "a map",
            ),
            (
                obj(json!({"r": {"$ref": "#/$defs/Missing", "description": "x"}})),
                "/properties/r",
                "points to nothing",
            ),
        ];
        for (schema, path, rule) in cases {
            let e = fail(Dialect::OpenAiResponses, true, schema.clone());
            assert_eq!(e.path, path, "{e}");
            assert!(e.rule.contains(rule), "{e}");
            // Non-strict OpenAI keeps what is not about the root.
            if !path.is_empty() {
                apply(Dialect::OpenAiResponses, false, "t", &schema).unwrap();
            }
        }
    }

    #[test]
    fn openai_strict_drops_unevaluated_properties_false_on_plain_objects() {
        let s = json!({"type": "object", "properties": {"a": {"type": "string"}}, "required": ["a"], "unevaluatedProperties": false});
        let out = run(Dialect::OpenAiChat, true, s);
        assert_eq!(
            out.schema,
            json!({"type": "object", "properties": {"a": {"type": "string"}}, "required": ["a"], "additionalProperties": false})
        );
    }
}
