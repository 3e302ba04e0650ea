//! Anthropic's `input_schema`: an object root, and strict mode's own rules and request limits;
//! the rules under **Anthropic** in [`pass`](super).
//!
//! Owns the Anthropic pass (root, then the strict walk and its keyword rules) and
//! [`anthropic_request_warnings`], the per-request counts across strict tools. What both strict
//! modes share is [`strict`](super::strict)'s; OpenAI's rules, however close, are not here.

use serde_json::{Map, Value, json};

use super::strict::keep_format;
use super::walk::{each_subschema, find_ref_cycle, is_object_schema, ptr, ptr2, without};
use super::{ANNOTATIONS, Pass, PassError, Rewritten};

const ANTHROPIC_FORMATS: [&str; 10] = [
    "date-time",
    "time",
    "date",
    "duration",
    "email",
    "hostname",
    "uri",
    "ipv4",
    "ipv6",
    "uuid",
];

/// What Anthropic strict mode keeps as is (other than what gets rewritten).
const ANTHROPIC_KEEP: [&str; 7] = ["type", "enum", "const", "description", "title", "default", "pattern"];

impl Pass<'_> {
    /// The root rules, then (strict, or with a root `allOf` to flatten) the rewrite.
    pub(super) fn anthropic(&mut self, strict: bool) -> Result<Rewritten, PassError> {
        let root = self.root_map()?;
        if !strict && !root.contains_key("allOf") {
            self.refuse_root_union(root)?;
            self.check_object_root(root)?;
            return Ok(Rewritten::Unchanged);
        }
        self.anthropic_root(strict).map(Rewritten::New)
    }

    fn anthropic_root(&mut self, strict: bool) -> Result<Value, PassError> {
        let root = self.root_map()?;
        let root = if root.contains_key("allOf") {
            let mut merged = self.flatten_all_of(root, "", 0)?.into_owned();
            if !merged.contains_key("type") && merged.contains_key("properties") {
                merged.insert("type".into(), json!("object"));
            }
            merged
        } else {
            root.clone()
        };
        self.refuse_root_union(&root)?;
        self.check_object_root(&root)?;
        if !strict {
            return Ok(Value::Object(without(&root, &["$schema"])));
        }
        if let Some((path, r)) = find_ref_cycle(self.root) {
            return Err(self.err(
                &path,
                format!(
                    "`$ref` `{r}` makes the schema recursive, which Anthropic strict mode does not support; bound the depth with \
                     distinct types, or export this tool with strict off"
                ),
            ));
        }
        self.anthropic_strict(&Value::Object(root), "")
    }

    /// Anthropic refuses `anyOf`/`oneOf` at the root of `input_schema`, even beside `properties`.
    fn refuse_root_union(&self, root: &Map<String, Value>) -> Result<(), PassError> {
        match ["anyOf", "oneOf"].into_iter().find(|k| root.contains_key(*k)) {
            Some(k) => Err(self.err(
                "",
                format!(
                    "Anthropic rejects `{k}` at the root of `input_schema` (an enum as the whole input, or a `#[serde(flatten)]`ed \
                     enum); put the enum in a named field of a struct"
                ),
            )),
            None => Ok(()),
        }
    }

    fn anthropic_strict(&mut self, schema: &Value, path: &str) -> Result<Value, PassError> {
        let node = self.strict_node(schema, path)?;
        let node = self.flatten_all_of(node, path, 0)?;
        self.refuse_strict_shapes(&node, path)?;
        let mut out = Map::new();
        let mut removed = Vec::new();
        for (k, v) in node.iter() {
            self.anthropic_keyword(k, v, path, &mut out, &mut removed)?;
        }
        self.warn_removed(path, &removed, "Anthropic strict mode does not support them");
        if is_object_schema(&node) {
            self.anthropic_close_object(&node, path, &mut out)?;
        }
        self.require_typed(&out, path)?;
        Ok(Value::Object(out))
    }

    /// One keyword of a node: walked, kept, dropped silently or removed (into `removed`).
    /// Objects are closed afterwards, by [`Self::anthropic_close_object`].
    fn anthropic_keyword(
        &mut self,
        k: &str,
        v: &Value,
        path: &str,
        out: &mut Map<String, Value>,
        removed: &mut Vec<String>,
    ) -> Result<(), PassError> {
        match k {
            "properties" | "required" | "additionalProperties" | "unevaluatedProperties" => {}
            "$defs" => {
                let defs = v.as_object().ok_or_else(|| self.err(path, "`$defs` must be an object"))?;
                let mut outs = Map::new();
                for (name, def) in defs {
                    outs.insert(name.clone(), self.anthropic_strict(def, &ptr2(path, "$defs", name))?);
                }
                out.insert(k.into(), Value::Object(outs));
            }
            "$ref" => {
                out.insert(k.into(), v.clone());
            }
            "items" => {
                out.insert(k.into(), self.anthropic_strict(v, &ptr(path, k))?);
            }
            "anyOf" | "oneOf" => self.strict_branches(k, v, path, out, |pass, b, p| pass.anthropic_strict(b, p))?,
            "enum" => {
                self.anthropic_plain_enum(v, path)?;
                out.insert(k.into(), v.clone());
            }
            "format" => keep_format(v, &ANTHROPIC_FORMATS, out, removed),
            "minItems" => min_items_up_to_one(v, out, removed),
            _ if ANTHROPIC_KEEP.contains(&k) => {
                out.insert(k.into(), v.clone());
            }
            _ if ANNOTATIONS.contains(&k) => {}
            _ => removed.push(k.to_owned()),
        }
        Ok(())
    }

    /// Anthropic strict mode takes enums of plain values only.
    fn anthropic_plain_enum(&self, values: &Value, path: &str) -> Result<(), PassError> {
        if values.as_array().is_some_and(|e| e.iter().any(|x| x.is_object() || x.is_array())) {
            return Err(self.err(
                path,
                "an enum of objects or arrays is not supported by Anthropic strict mode (only strings, numbers, booleans \
                 and null); use an enum of plain values",
            ));
        }
        Ok(())
    }

    /// Closes an object: no map, every property walked, `required` as it was.
    fn anthropic_close_object(&mut self, node: &Map<String, Value>, path: &str, out: &mut Map<String, Value>) -> Result<(), PassError> {
        match node.get("additionalProperties") {
            None | Some(Value::Bool(false)) => {}
            Some(_) => {
                return Err(self.err(
                    path,
                    "a map (`additionalProperties`, e.g. HashMap/BTreeMap or a flattened map) cannot be strict: Anthropic strict \
                     mode needs `additionalProperties: false` on every object; use a Vec of key/value structs, or export this \
                     tool with strict off",
                ));
            }
        }
        let props = node.get("properties").and_then(Value::as_object).cloned().unwrap_or_default();
        let mut out_props = Map::new();
        for (name, prop) in &props {
            out_props.insert(name.clone(), self.anthropic_strict(prop, &ptr2(path, "properties", name))?);
        }
        out.insert("properties".into(), Value::Object(out_props));
        if let Some(r) = node.get("required") {
            out.insert("required".into(), r.clone());
        }
        out.insert("additionalProperties".into(), Value::Bool(false));
        Ok(())
    }
}

/// `minItems` of 0 or 1 is kept; a larger one is removed (Anthropic strict mode takes no more).
fn min_items_up_to_one(v: &Value, out: &mut Map<String, Value>, removed: &mut Vec<String>) {
    if v.as_u64().is_some_and(|n| n <= 1) {
        out.insert("minItems".into(), v.clone());
    } else {
        removed.push(format!("minItems: {v}"));
    }
}

/// Anthropic per-request limits: at most 20 strict tools, 24 optional parameters and 16
/// union-typed parameters across the strict tools of one request; returns a warning per limit
/// exceeded.
///
/// Each tool is `(strict, input schema after its pass)`. Parameters are counted in every object
/// of a strict tool's schema (nested ones and each `$defs` entry once): optional = not in its
/// object's `required`; union-typed = `anyOf`/`oneOf` with several branches or a `type` list
/// (`["string", "null"]` counts, as Anthropic counts type arrays).
///
/// ```
/// let schema = serde_json::json!({"type": "object", "properties": {"a": {"type": "string"}}});
/// let tools: Vec<(bool, &serde_json::Value)> = (0..21).map(|_| (true, &schema)).collect();
/// let warnings = tool_core::catalog::pass::anthropic_request_warnings(&tools);
/// assert_eq!(warnings.len(), 1); // 21 strict tools (21 optional parameters are within 24)
/// assert!(warnings[0].contains("at most 20"));
/// ```
pub fn anthropic_request_warnings(tools: &[(bool, &Value)]) -> Vec<String> {
    let strict: Vec<&Value> = tools.iter().filter(|(s, _)| *s).map(|(_, v)| *v).collect();
    let mut warnings = Vec::new();
    if strict.len() > 20 {
        warnings.push(format!(
            "anthropic: {} strict tools in one request; Anthropic accepts at most 20: turn strict off for some tools or send fewer",
            strict.len()
        ));
    }
    let (mut optional, mut unions) = (0usize, 0usize);
    for schema in strict {
        each_subschema(schema, "", &mut |node, _| {
            let Some(props) = node.get("properties").and_then(Value::as_object) else {
                return;
            };
            let required = node.get("required").and_then(Value::as_array);
            for (name, prop) in props {
                if !required.is_some_and(|r| r.iter().any(|x| x.as_str() == Some(name))) {
                    optional += 1;
                }
                if is_union(prop) {
                    unions += 1;
                }
            }
        });
    }
    if optional > 24 {
        warnings.push(format!(
            "anthropic: the strict tools of this request have {optional} optional parameters; Anthropic accepts at most 24: \
             make some required, turn strict off for some tools or send fewer"
        ));
    }
    if unions > 16 {
        warnings.push(format!(
            "anthropic: the strict tools of this request have {unions} union-typed parameters (anyOf or type lists, Option fields \
             included); Anthropic accepts at most 16: turn strict off for some tools or send fewer"
        ));
    }
    warnings
}

fn is_union(schema: &Value) -> bool {
    let many = |k: &str| schema.get(k).and_then(Value::as_array).is_some_and(|a| a.len() > 1);
    many("anyOf") || many("oneOf") || many("type")
}

#[cfg(test)]
mod tests {
    use serde_json::{Map, Value, json};

    use super::super::tests::{fail, obj, run};
    use super::anthropic_request_warnings;
    use crate::dialect::Dialect;

    #[test]
    fn anthropic_flattens_a_root_all_of_and_refuses_root_unions() {
        let s = json!({
            "$schema": "x",
            "allOf": [
                {"type": "object", "properties": {"a": {"type": "string"}}, "required": ["a"]},
                {"$ref": "#/$defs/B"}
            ],
            "$defs": {"B": {"type": "object", "properties": {"b": {"type": "integer"}}}}
        });
        let out = run(Dialect::Anthropic, false, s);
        assert_eq!(
            out.schema,
            json!({
                "type": "object",
                "properties": {"a": {"type": "string"}, "b": {"type": "integer"}},
                "required": ["a"],
                "$defs": {"B": {"type": "object", "properties": {"b": {"type": "integer"}}}}
            })
        );
        for strict in [false, true] {
            let e = fail(
                Dialect::Anthropic,
                strict,
                json!({"oneOf": [{"type": "object"}, {"type": "object"}]}),
            );
            assert_eq!(e.path, "");
            assert!(e.rule.contains("Anthropic rejects `oneOf` at the root"), "{e}");
            let e = fail(
                Dialect::Anthropic,
                strict,
                json!({"type": "object", "properties": {}, "anyOf": [{"type": "object"}]}),
            );
            assert!(e.rule.contains("`anyOf` at the root"), "{e}");
            let e = fail(
                Dialect::Anthropic,
                strict,
                json!({"allOf": [{"type": "object", "properties": {"a": {"type": "string"}}}, {"type": "object", "properties": {"a": {"type": "integer"}}}]}),
            );
            assert_eq!(e.path, "/allOf/1");
            assert!(e.rule.contains("properties/a"), "{e}");
        }
    }

    #[test]
    fn anthropic_strict_closes_objects_and_removes_bounds_with_warnings() {
        let s = json!({
            "type": "object",
            "properties": {
                "n": {"type": "integer", "format": "uint8", "minimum": 0, "maximum": 255},
                "s": {"type": "string", "minLength": 2, "maxLength": 9, "format": "uri", "pattern": "^h"},
                "v": {"type": "array", "items": {"type": "number", "exclusiveMinimum": 0, "multipleOf": 0.5}, "minItems": 3, "maxItems": 3},
                "one": {"type": "array", "items": {"type": "string"}, "minItems": 1, "uniqueItems": true},
                "e": {"oneOf": [{"const": "a", "type": "string"}, {"type": "object", "properties": {"k": {"type": "string"}}, "required": ["k"]}]},
                "o": {"type": ["string", "null"], "default": null}
            },
            "required": ["n"]
        });
        let out = run(Dialect::Anthropic, true, s);
        assert_eq!(
            out.schema,
            json!({
                "type": "object",
                "properties": {
                    "n": {"type": "integer"},
                    "s": {"type": "string", "format": "uri", "pattern": "^h"},
                    "v": {"type": "array", "items": {"type": "number"}},
                    "one": {"type": "array", "items": {"type": "string"}, "minItems": 1},
                    "e": {"anyOf": [{"const": "a", "type": "string"}, {"type": "object", "properties": {"k": {"type": "string"}}, "required": ["k"], "additionalProperties": false}]},
                    "o": {"type": ["string", "null"], "default": null}
                },
                "required": ["n"],
                "additionalProperties": false
            })
        );
        let all = out.warnings.join("\n");
        assert_eq!(out.warnings.len(), 5, "{all}");
        assert!(all.contains("`/properties/n`: removed `maximum`, `minimum`"), "{all}");
        assert!(all.contains("`/properties/s`: removed `maxLength`, `minLength`"), "{all}");
        assert!(all.contains("`/properties/v`: removed `maxItems`, `minItems: 3`"), "{all}");
        assert!(
            all.contains("`/properties/v/items`: removed `exclusiveMinimum`, `multipleOf`"),
            "{all}"
        );
        assert!(all.contains("`/properties/one`: removed `uniqueItems`"), "{all}");
        // Non-strict keeps all of it.
        let s = obj(json!({"n": {"type": "integer", "minimum": 0}}));
        assert_eq!(run(Dialect::Anthropic, false, s).schema["properties"]["n"]["minimum"], 0);
    }

    #[test]
    fn anthropic_strict_refusals() {
        let rec = json!({
            "type": "object",
            "properties": {"root": {"$ref": "#/$defs/N"}},
            "$defs": {"N": {"type": "object", "properties": {"kids": {"type": "array", "items": {"$ref": "#/$defs/N"}}}}}
        });
        let e = fail(Dialect::Anthropic, true, rec.clone());
        assert_eq!(e.path, "/$defs/N/properties/kids/items");
        assert!(e.rule.contains("recursive"), "{e}");
        run(Dialect::Anthropic, false, rec);
        let cases = [
            (
                obj(json!({"m": {"type": "object", "additionalProperties": {"type": "string"}}})),
                "/properties/m",
                "a map",
            ),
            (obj(json!({"v": true})), "/properties/v", "accepts any JSON"),
            (obj(json!({"v": {}})), "/properties/v", "no `type`"),
            (
                obj(json!({"t": {"type": "array", "prefixItems": [{"type": "string"}]}})),
                "/properties/t",
                "tuple",
            ),
            (obj(json!({"e": {"enum": [{"a": 1}]}})), "/properties/e", "enum of objects"),
            (
                obj(json!({"n": {"not": {}}})),
                "/properties/n",
                "`not` is not supported by anthropic strict mode",
            ),
            (
                obj(json!({"f": {"type": "object", "properties": {"x": {"type": "string"}}, "oneOf": [{"type": "object"}]}})),
                "/properties/f",
                "#[serde(flatten)]",
            ),
        ];
        for (schema, path, rule) in cases {
            let e = fail(Dialect::Anthropic, true, schema);
            assert_eq!(e.path, path, "{e}");
            assert!(e.rule.contains(rule), "{e}");
        }
    }

    #[test]
    fn anthropic_request_limits() {
        let small = json!({"type": "object", "properties": {"a": {"type": "string"}}, "required": ["a"]});
        let tools: Vec<(bool, &Value)> = (0..20).map(|_| (true, &small)).chain((0..30).map(|_| (false, &small))).collect();
        assert!(anthropic_request_warnings(&tools).is_empty());
        let tools: Vec<(bool, &Value)> = (0..21).map(|_| (true, &small)).collect();
        let w = anthropic_request_warnings(&tools);
        assert_eq!(w.len(), 1);
        assert!(w[0].contains("21 strict tools") && w[0].contains("at most 20"), "{w:?}");

        let props: Map<String, Value> = (0..25).map(|i| (format!("p{i}"), json!({"type": "string"}))).collect();
        let optional = json!({"type": "object", "properties": props});
        let w = anthropic_request_warnings(&[(true, &optional), (false, &optional)]);
        assert_eq!(w.len(), 1);
        assert!(w[0].contains("25 optional parameters") && w[0].contains("at most 24"), "{w:?}");

        let props: Map<String, Value> = (0..9).map(|i| (format!("p{i}"), json!({"type": ["string", "null"]}))).collect();
        let nested = json!({
            "type": "object",
            "properties": {"inner": {"$ref": "#/$defs/I"}},
            "required": ["inner"],
            "$defs": {"I": {"type": "object", "properties": props, "required": (0..9).map(|i| format!("p{i}")).collect::<Vec<_>>()}}
        });
        assert!(anthropic_request_warnings(&[(true, &nested)]).is_empty());
        let w = anthropic_request_warnings(&[(true, &nested), (true, &nested)]);
        assert_eq!(w.len(), 1);
        assert!(w[0].contains("18 union-typed parameters") && w[0].contains("at most 16"), "{w:?}");
    }
}
