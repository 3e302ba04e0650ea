//! Paths and traversal of schema trees, for every pass.
//!
//! Owns the JSON-pointer spelling of paths, the list of a node's subschemas and the walks over
//! them (every subschema, live `$defs`, reference cycles). It knows keywords only as places where
//! subschemas sit: no dialect's rules, no messages.

use serde_json::{Map, Value};

/// Appends one JSON-pointer segment.
pub(super) fn ptr(path: &str, segment: &str) -> String {
    let mut out = String::with_capacity(path.len() + segment.len() + 1);
    out.push_str(path);
    push_segment(&mut out, segment);
    out
}

/// Appends two JSON-pointer segments (`properties` and a name, `anyOf` and an index, …) in one
/// allocation.
pub(super) fn ptr2(path: &str, first: &str, second: &str) -> String {
    let mut out = String::with_capacity(path.len() + first.len() + second.len() + 2);
    out.push_str(path);
    push_segment(&mut out, first);
    push_segment(&mut out, second);
    out
}

/// `/` and the segment, `~` written `~0` and `/` written `~1` (RFC 6901).
fn push_segment(out: &mut String, segment: &str) {
    out.push('/');
    for c in segment.chars() {
        match c {
            '~' => out.push_str("~0"),
            '/' => out.push_str("~1"),
            c => out.push(c),
        }
    }
}

pub(super) fn without(map: &Map<String, Value>, keys: &[&str]) -> Map<String, Value> {
    map.iter()
        .filter(|(k, _)| !keys.contains(&k.as_str()))
        .map(|(k, v)| (k.clone(), v.clone()))
        .collect()
}

pub(super) fn type_names(node: &Map<String, Value>) -> Vec<&str> {
    match node.get("type") {
        Some(Value::String(t)) => vec![t.as_str()],
        Some(Value::Array(ts)) => ts.iter().filter_map(Value::as_str).collect(),
        _ => Vec::new(),
    }
}

pub(super) fn is_object_schema(node: &Map<String, Value>) -> bool {
    type_names(node).contains(&"object") || node.contains_key("properties")
}

/// Removes `$defs` entries no longer referenced (after inlining).
pub(super) fn prune_defs(schema: &mut Value) {
    let Some(defs) = schema.get("$defs").and_then(Value::as_object).cloned() else {
        return;
    };
    let mut body = schema.clone();
    if let Some(m) = body.as_object_mut() {
        m.remove("$defs");
    }
    let mut live: Vec<String> = Vec::new();
    let mut queue = vec![body];
    while let Some(v) = queue.pop() {
        collect_refs(&v, &mut |r| {
            if let Some(name) = r.strip_prefix("#/$defs/") {
                let name = name.replace("~1", "/").replace("~0", "~");
                if !live.contains(&name) {
                    if let Some(def) = defs.get(&name) {
                        queue.push(def.clone());
                    }
                    live.push(name);
                }
            }
        });
    }
    let Some(m) = schema.as_object_mut() else { return };
    if live.is_empty() {
        m.remove("$defs");
    } else if let Some(Value::Object(d)) = m.get_mut("$defs") {
        d.retain(|k, _| live.contains(k));
    }
}

fn collect_refs(v: &Value, f: &mut impl FnMut(&str)) {
    match v {
        Value::Object(m) => {
            for (k, x) in m {
                match (k.as_str(), x) {
                    ("$ref", Value::String(r)) => f(r),
                    ("enum" | "const" | "default" | "examples", _) => {}
                    _ => collect_refs(x, f),
                }
            }
        }
        Value::Array(xs) => xs.iter().for_each(|x| collect_refs(x, f)),
        _ => {}
    }
}

/// The subschemas directly under `node`, with their paths (`$defs` only when asked).
pub(super) fn children<'v>(node: &'v Map<String, Value>, path: &str, with_defs: bool) -> Vec<(String, &'v Value)> {
    let mut out = Vec::new();
    for (k, v) in node {
        match k.as_str() {
            "$defs" if !with_defs => {}
            "properties" | "patternProperties" | "$defs" | "dependentSchemas" => {
                if let Some(m) = v.as_object() {
                    out.extend(m.iter().map(|(name, s)| (ptr2(path, k, name), s)));
                }
            }
            "items"
            | "additionalProperties"
            | "contains"
            | "propertyNames"
            | "unevaluatedItems"
            | "unevaluatedProperties"
            | "not"
            | "if"
            | "then"
            | "else" => out.push((ptr(path, k), v)),
            "anyOf" | "oneOf" | "allOf" | "prefixItems" => {
                if let Some(a) = v.as_array() {
                    out.extend(a.iter().enumerate().map(|(i, s)| (ptr2(path, k, &i.to_string()), s)));
                }
            }
            _ => {}
        }
    }
    out
}

/// Calls `f` on every schema object in the tree (each `$defs` entry once, references not
/// followed).
pub(super) fn each_subschema(schema: &Value, path: &str, f: &mut impl FnMut(&Map<String, Value>, &str)) {
    let Some(node) = schema.as_object() else { return };
    f(node, path);
    for (p, child) in children(node, path, true) {
        each_subschema(child, &p, f);
    }
}

/// The first `$ref` that closes a cycle reachable from the root: its path and the reference.
pub(super) fn find_ref_cycle(root: &Value) -> Option<(String, String)> {
    fn visit(root: &Value, schema: &Value, path: &str, stack: &mut Vec<String>, done: &mut Vec<String>) -> Option<(String, String)> {
        let node = schema.as_object()?;
        if let Some(r) = node.get("$ref").and_then(Value::as_str) {
            if stack.iter().any(|s| s == r) {
                return Some((path.to_owned(), r.to_owned()));
            }
            if !done.iter().any(|d| d == r) {
                if let Some(def) = r.strip_prefix('#').and_then(|p| root.pointer(p)) {
                    stack.push(r.to_owned());
                    let found = visit(root, def, &r[1..], stack, done);
                    stack.pop();
                    if found.is_some() {
                        return found;
                    }
                }
                done.push(r.to_owned());
            }
        }
        for (p, child) in children(node, path, false) {
            if let Some(found) = visit(root, child, &p, stack, done) {
                return Some(found);
            }
        }
        None
    }
    visit(root, root, "", &mut Vec::new(), &mut Vec::new())
}
