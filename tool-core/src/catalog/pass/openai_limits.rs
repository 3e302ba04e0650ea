//! OpenAI strict mode's size limits, counted on the canonical schema before the strict walk.
//!
//! 5000 properties, 10 levels of nested objects with the root as level 1, 1000 enum values,
//! 120,000 characters of property names, definition names and enum/const values, 15,000
//! characters in one enum of more than 250 values: past one, the tool is refused with the limit
//! and where it was passed. Owns only counting; rewriting is [`openai`](super::openai)'s.

use serde_json::{Map, Value, json};

use super::walk::{children, each_subschema, is_object_schema};
use super::{Pass, PassError};

const OPENAI_MAX_DEPTH: usize = 10;
const OPENAI_MAX_PROPERTIES: usize = 5000;
const OPENAI_MAX_ENUM_VALUES: usize = 1000;
const OPENAI_MAX_CHARS: usize = 120_000;

/// Running totals over the schema's nodes, each definition once.
#[derive(Default)]
struct Totals {
    props: usize,
    enums: usize,
    chars: usize,
}

fn value_chars(v: &Value) -> usize {
    match v {
        Value::String(s) => s.chars().count(),
        other => other.to_string().chars().count(),
    }
}

impl Totals {
    /// Counts one node; `Err(rule)` once a limit is passed.
    fn add(&mut self, node: &Map<String, Value>) -> Result<(), String> {
        if let Some(p) = node.get("properties").and_then(Value::as_object) {
            self.props += p.len();
            self.chars += p.keys().map(|k| k.chars().count()).sum::<usize>();
            if self.props > OPENAI_MAX_PROPERTIES {
                return Err(format!(
                    "the schema has more than {OPENAI_MAX_PROPERTIES} properties in total (OpenAI strict mode limit); split the tool"
                ));
            }
        }
        if let Some(e) = node.get("enum").and_then(Value::as_array) {
            self.enums += e.len();
            let len: usize = e.iter().map(value_chars).sum();
            self.chars += len;
            if e.len() > 250 && len > 15_000 {
                return Err(format!(
                    "this enum has {} values totalling {len} characters; OpenAI strict mode allows at most 15,000 characters \
                     in an enum of more than 250 values",
                    e.len()
                ));
            }
        }
        if let Some(c) = node.get("const") {
            self.enums += 1;
            self.chars += value_chars(c);
        }
        let (enums, chars) = (self.enums, self.chars);
        if enums > OPENAI_MAX_ENUM_VALUES {
            Err(format!(
                "the schema has {enums} enum values up to here, over OpenAI strict mode's limit of {OPENAI_MAX_ENUM_VALUES} \
                 in one schema; take the value as a string and check it in the tool, or export this tool with strict off"
            ))
        } else if chars > OPENAI_MAX_CHARS {
            Err(format!(
                "property names, definition names and enum values total {chars} characters up to here, over OpenAI strict \
                 mode's limit of {OPENAI_MAX_CHARS}; shorten them or split the tool"
            ))
        } else {
            Ok(())
        }
    }
}

impl<'a> Pass<'a> {
    /// OpenAI's size limits, counted on the canonical schema (each definition once).
    pub(super) fn openai_limits(&self) -> Result<(), PassError> {
        let mut totals = Totals::default();
        if let Some(defs) = self.root.get("$defs").and_then(Value::as_object) {
            totals.chars += defs.keys().map(|k| k.chars().count()).sum::<usize>();
        }
        let mut failure: Option<PassError> = None;
        each_subschema(self.root, "", &mut |node, path| {
            if failure.is_none() {
                failure = totals.add(node).err().map(|rule| self.err(path, rule));
            }
        });
        if let Some(e) = failure {
            return Err(e);
        }
        let mut budget = 200_000usize;
        self.depth(self.root, "", 0, &mut Vec::new(), &mut budget)
    }

    /// Object nesting, the root object being level 1, following `$ref`s (a recursive reference
    /// is not followed again: OpenAI allows recursion).
    fn depth(&self, schema: &'a Value, path: &str, level: usize, refs: &mut Vec<String>, budget: &mut usize) -> Result<(), PassError> {
        let Some(node) = schema.as_object() else { return Ok(()) };
        if *budget == 0 {
            return Ok(());
        }
        *budget -= 1;
        let level = if is_object_schema(node) { level + 1 } else { level };
        if level > OPENAI_MAX_DEPTH {
            return Err(self.err(
                path,
                format!(
                    "objects are nested {level} levels deep here (the root object is level 1); OpenAI strict mode allows at most \
                     {OPENAI_MAX_DEPTH}: flatten some structs"
                ),
            ));
        }
        if let Some(r) = node.get("$ref").and_then(Value::as_str)
            && !refs.iter().any(|x| x == r)
            && let Ok((def_path, def)) = self.resolve(path, &json!(r))
        {
            refs.push(r.to_owned());
            self.depth(def, &def_path, level, refs, budget)?;
            refs.pop();
        }
        for (child_path, child) in children(node, path, false) {
            self.depth(child, &child_path, level, refs, budget)?;
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use serde_json::{Map, Value, json};

    use super::super::tests::{fail, obj, run};
    use crate::dialect::Dialect;

    fn nested(levels: usize) -> Value {
        let mut s = json!({"type": "object", "properties": {"leaf": {"type": "string"}}, "required": ["leaf"]});
        for _ in 1..levels {
            s = json!({"type": "object", "properties": {"n": s}, "required": ["n"]});
        }
        s
    }

    #[test]
    fn openai_strict_limits() {
        run(Dialect::OpenAiChat, true, nested(10));
        let e = fail(Dialect::OpenAiChat, true, nested(11));
        assert_eq!(e.path, format!("{}", "/properties/n".repeat(10)));
        assert!(e.rule.contains("11 levels") && e.rule.contains("at most 10"), "{e}");
        // Non-strict has no such limit here.
        run(Dialect::OpenAiChat, false, nested(11));

        let values: Vec<Value> = (0..1001).map(|i| json!(format!("v{i}"))).collect();
        let e = fail(Dialect::OpenAiChat, true, obj(json!({"e": {"type": "string", "enum": values}})));
        assert_eq!(e.path, "/properties/e");
        assert!(e.rule.contains("1001 enum values"), "{e}");
        let values: Vec<Value> = (0..1000).map(|i| json!(format!("v{i}"))).collect();
        run(Dialect::OpenAiChat, true, obj(json!({"e": {"type": "string", "enum": values}})));

        let props: Map<String, Value> = (0..5001).map(|i| (format!("p{i}"), json!({"type": "string"}))).collect();
        let e = fail(Dialect::OpenAiChat, true, obj(Value::Object(props)));
        assert!(e.rule.contains("5000 properties"), "{e}");

        let long: Vec<Value> = (0..300).map(|i| json!(format!("{i:0>60}"))).collect();
        let e = fail(Dialect::OpenAiChat, true, obj(json!({"e": {"type": "string", "enum": long}})));
        assert!(e.rule.contains("15,000 characters"), "{e}");

        let props: Map<String, Value> = (0..200).map(|i| (format!("{i:0>700}"), json!({"type": "string"}))).collect();
        let e = fail(Dialect::OpenAiChat, true, obj(Value::Object(props)));
        assert!(e.rule.contains("120000"), "{e}");
    }

    #[test]
    fn openai_strict_depth_follows_refs_but_not_recursion() {
        let s = json!({
            "type": "object",
            "properties": {"t": {"$ref": "#/$defs/T"}},
            "required": ["t"],
            "$defs": {"T": {"type": "object", "properties": {"kids": {"type": "array", "items": {"$ref": "#/$defs/T"}}}, "required": ["kids"]}}
        });
        run(Dialect::OpenAiChat, true, s);
        let mut defs = Map::new();
        for i in 0..11 {
            let next = if i == 10 {
                json!({"type": "string"})
            } else {
                json!({"$ref": format!("#/$defs/L{}", i + 1)})
            };
            defs.insert(
                format!("L{i}"),
                json!({"type": "object", "properties": {"n": next}, "required": ["n"]}),
            );
        }
        let s = json!({"type": "object", "properties": {"n": {"$ref": "#/$defs/L0"}}, "required": ["n"], "$defs": defs});
        let e = fail(Dialect::OpenAiChat, true, s);
        assert_eq!(e.path, "/$defs/L9");
    }
}
