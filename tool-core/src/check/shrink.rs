//! Shrinking a failing input: the smallest value found that still shows the same failure.
//!
//! Owns [`shrink`]: greedy passes that drop object members, cut arrays and strings, and move
//! numbers towards zero, keeping a candidate only when the schema still judges it the same way
//! (valid stays valid, a mistake stays a mistake) and the failure repeats. Bounded by
//! [`MAX_TRIES`] calls.

use std::future::Future;

use serde_json::{Value, json};

/// Calls spent on shrinking one failure at most.
const MAX_TRIES: usize = 200;

/// The smallest variant of `input` for which `still_fails` holds and whose validity under
/// `validator` is `valid`.
pub(super) async fn shrink<F, Fut>(mut input: Value, validator: &jsonschema::Validator, valid: bool, mut still_fails: F) -> Value
where
    F: FnMut(&Value) -> Fut,
    Fut: Future<Output = bool>,
{
    let mut tries = 0;
    'passes: loop {
        for candidate in candidates(&input) {
            if tries >= MAX_TRIES {
                break 'passes;
            }
            if validator.is_valid(&candidate) != valid {
                continue;
            }
            tries += 1;
            if still_fails(&candidate).await {
                input = candidate;
                continue 'passes;
            }
        }
        break;
    }
    input
}

/// Smaller variants of `value`, the boldest first, one change each.
fn candidates(value: &Value) -> Vec<Value> {
    let mut out = Vec::new();
    match value {
        Value::Object(obj) => {
            for key in obj.keys() {
                let mut smaller = obj.clone();
                smaller.remove(key);
                out.push(Value::Object(smaller));
            }
            for (key, member) in obj {
                for variant in candidates(member) {
                    let mut smaller = obj.clone();
                    smaller.insert(key.clone(), variant);
                    out.push(Value::Object(smaller));
                }
            }
        }
        Value::Array(items) if !items.is_empty() => {
            out.push(json!([]));
            out.push(Value::Array(items[..items.len() / 2].to_vec()));
            out.push(Value::Array(items[1..].to_vec()));
            for (n, item) in items.iter().enumerate().take(8) {
                for variant in candidates(item) {
                    let mut smaller = items.clone();
                    smaller[n] = variant;
                    out.push(Value::Array(smaller));
                }
            }
        }
        Value::String(s) if !s.is_empty() => {
            let chars: Vec<char> = s.chars().collect();
            out.push(json!(""));
            out.push(json!(chars[..chars.len() / 2].iter().collect::<String>()));
            out.push(json!(chars[..chars.len() - 1].iter().collect::<String>()));
        }
        Value::Number(n) => {
            if let Some(i) = n.as_i64().filter(|i| *i != 0) {
                out.extend([json!(0), json!(i / 2), json!(i - i.signum())]);
            } else if let Some(f) = n.as_f64().filter(|f| *f != 0.0 && f.is_finite()) {
                out.extend([json!(0), json!(f.trunc()), json!(f / 2.0)]);
            }
        }
        Value::Bool(true) => out.push(json!(false)),
        _ => {}
    }
    out.retain(|c| c != value);
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_failure_shrinks_to_what_shows_it() {
        let schema = json!({"type": "object", "properties": {"n": {"type": "integer"}, "s": {"type": "string"}}});
        let validator = jsonschema::validator_for(&schema).unwrap();
        let input = json!({"n": 1000, "s": "a long string that does not matter"});
        // Fails whenever n is at least 17.
        let shrunk = futures::executor::block_on(shrink(input, &validator, true, |v| {
            let fails = v["n"].as_i64().is_some_and(|n| n >= 17);
            async move { fails }
        }));
        assert_eq!(shrunk["s"], Value::Null, "the member that does not matter is gone: {shrunk}");
        let n = shrunk["n"].as_i64().unwrap();
        assert!((17..=20).contains(&n), "n shrank towards the edge: {n}");
    }
}
