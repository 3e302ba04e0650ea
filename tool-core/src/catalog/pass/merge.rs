//! `allOf` flattening, for every pass that cannot send `allOf` (all but the ones that keep the
//! schema as it is).
//!
//! Owns merging `allOf` parts (and the definitions their `$ref`s name) into one schema when the
//! meaning allows it: objects with distinct properties, or parts that agree. Anything else is an
//! error naming the keyword that differs. Must not apply a dialect's keyword rules: the merged
//! node goes back to its pass.

use std::borrow::Cow;

use serde_json::{Map, Value};

use super::walk::{ptr2, without};
use super::{Pass, PassError};

impl Pass<'_> {
    /// The node with its `allOf` merged in; borrowed (no copy) when it has none. The parts merge
    /// when they are objects with distinct properties (or a single part); otherwise an error
    /// names the conflicting keyword.
    pub(super) fn flatten_all_of<'n>(
        &self,
        node: &'n Map<String, Value>,
        path: &str,
        depth: usize,
    ) -> Result<Cow<'n, Map<String, Value>>, PassError> {
        let Some(parts) = node.get("allOf") else {
            return Ok(Cow::Borrowed(node));
        };
        let parts = parts.as_array().ok_or_else(|| self.err(path, "`allOf` must be an array"))?;
        let mut acc = without(node, &["allOf"]);
        for (i, part) in parts.iter().enumerate() {
            let part_path = ptr2(path, "allOf", &i.to_string());
            let part = self.expand_part(part, &part_path, depth + 1)?;
            merge_into(&mut acc, part).map_err(|key| {
                self.err(
                    &part_path,
                    format!(
                        "{} does not support `allOf`, and this `allOf` cannot be merged into one schema (`{key}` differs between its parts); \
                         use one struct (or `#[serde(flatten)]` of structs with distinct fields)",
                        self.dialect.as_str()
                    ),
                )
            })?;
        }
        Ok(Cow::Owned(acc))
    }

    fn expand_part(&self, part: &Value, path: &str, depth: usize) -> Result<Map<String, Value>, PassError> {
        if depth > 32 {
            return Err(self.err(path, "`allOf`/`$ref` chain too deep (recursive?); it cannot be flattened"));
        }
        let mut m = match part {
            Value::Bool(true) => return Ok(Map::new()),
            Value::Object(m) => m.clone(),
            _ => return Err(self.err(path, "this `allOf` part accepts nothing; the schema can never be satisfied")),
        };
        if let Some(r) = m.remove("$ref") {
            let (def_path, def) = self.resolve(path, &r)?;
            let def = self.expand_part(def, &def_path, depth + 1)?;
            merge_into(&mut m, def).map_err(|key| {
                self.err(
                    path,
                    format!("`$ref` and its sibling keywords disagree on `{key}`; they cannot be merged into one schema"),
                )
            })?;
        }
        self.flatten_all_of(&m, path, depth).map(Cow::into_owned)
    }
}

/// Merges `other` into `acc` as `allOf` would (the keywords of both hold): properties and
/// required are united, `acc`'s annotations win, anything else must agree. `Err(keyword)`
/// when it cannot be done without changing the meaning.
fn merge_into(acc: &mut Map<String, Value>, other: Map<String, Value>) -> Result<(), String> {
    for (k, v) in other {
        let Some(existing) = acc.get_mut(&k) else {
            acc.insert(k, v);
            continue;
        };
        if *existing == v {
            continue;
        }
        match k.as_str() {
            "properties" => {
                let (Some(mine), Value::Object(theirs)) = (existing.as_object_mut(), v) else {
                    return Err(k);
                };
                for (name, schema) in theirs {
                    match mine.get(&name) {
                        Some(s) if *s != schema => return Err(format!("properties/{name}")),
                        Some(_) => {}
                        None => {
                            mine.insert(name, schema);
                        }
                    }
                }
            }
            "required" => {
                let (Some(mine), Value::Array(theirs)) = (existing.as_array_mut(), v) else {
                    return Err(k);
                };
                for r in theirs {
                    if !mine.contains(&r) {
                        mine.push(r);
                    }
                }
            }
            "description" | "title" | "examples" | "default" | "$comment" | "$defs" => {}
            _ => return Err(k),
        }
    }
    Ok(())
}
