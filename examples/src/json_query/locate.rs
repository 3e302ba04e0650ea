//! The locations of selected nodes, found by one walk of the document.
//!
//! `serde_json_path`'s located query keeps a full path for every selected node, however many
//! there are; only the returned matches need one. The walk keeps the current path on an
//! explicit stack and records the path of each wanted node (recognised by address).

use std::collections::HashMap;
use std::fmt::Write as _;

use serde_json::Value;

/// One step of a path.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Step<'a> {
    Name(&'a str),
    Index(usize),
}

/// The normalized JSONPath (RFC 9535 §2.7) and the JSON Pointer of one node.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(super) struct Location {
    pub(super) path: String,
    pub(super) pointer: String,
}

fn location(steps: &[Step<'_>]) -> Location {
    let (mut path, mut pointer) = (String::from("$"), String::new());
    for step in steps {
        match step {
            Step::Name(name) => {
                path.push_str("['");
                for c in name.chars() {
                    match c {
                        '\'' => path.push_str("\\'"),
                        '\\' => path.push_str("\\\\"),
                        '\u{8}' => path.push_str("\\b"),
                        '\u{c}' => path.push_str("\\f"),
                        '\n' => path.push_str("\\n"),
                        '\r' => path.push_str("\\r"),
                        '\t' => path.push_str("\\t"),
                        c if u32::from(c) < 0x20 => {
                            let _ = write!(path, "\\u{:04x}", u32::from(c));
                        }
                        c => path.push(c),
                    }
                }
                path.push_str("']");
                pointer.push('/');
                pointer.push_str(&name.replace('~', "~0").replace('/', "~1"));
            }
            Step::Index(i) => {
                let _ = write!(path, "[{i}]");
                let _ = write!(pointer, "/{i}");
            }
        }
    }
    Location { path, pointer }
}

/// The locations of `wanted` (nodes of `document`), in the same order.
pub(super) fn locate(document: &Value, wanted: &[&Value]) -> Vec<Location> {
    let mut found: HashMap<*const Value, Option<Location>> = wanted.iter().map(|v| (*v as *const Value, None)).collect();
    let mut remaining = found.len();
    let mut path: Vec<Step<'_>> = Vec::new();
    // (node, its depth, the step that reached it)
    let mut stack: Vec<(&Value, usize, Option<Step<'_>>)> = vec![(document, 0, None)];
    while let Some((node, depth, step)) = stack.pop() {
        if remaining == 0 {
            break;
        }
        path.truncate(depth.saturating_sub(1));
        path.extend(step);
        if let Some(slot @ None) = found.get_mut(&(node as *const Value)) {
            *slot = Some(location(&path));
            remaining -= 1;
        }
        match node {
            Value::Array(items) => stack.extend(items.iter().enumerate().rev().map(|(i, v)| (v, depth + 1, Some(Step::Index(i))))),
            Value::Object(map) => stack.extend(map.iter().rev().map(|(k, v)| (v, depth + 1, Some(Step::Name(k.as_str()))))),
            _ => {}
        }
    }
    wanted
        .iter()
        .map(|v| found.get(&(*v as *const Value)).cloned().flatten().unwrap_or_else(|| location(&[])))
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn paths_and_pointers_of_nested_nodes() {
        let doc = json!({"a": [1, {"b/c": "x", "it's": true}], "z": null});
        let wanted = [&doc["a"][1]["b/c"], &doc["z"], &doc, &doc["a"][1]["it's"], &doc["z"]];
        let got = locate(&doc, &wanted);
        let pairs: Vec<(&str, &str)> = got.iter().map(|l| (l.path.as_str(), l.pointer.as_str())).collect();
        assert_eq!(
            pairs,
            vec![
                ("$['a'][1]['b/c']", "/a/1/b~1c"),
                ("$['z']", "/z"),
                ("$", ""),
                ("$['a'][1]['it\\'s']", "/a/1/it's"),
                ("$['z']", "/z"),
            ]
        );
    }
}
