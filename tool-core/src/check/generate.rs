//! Inputs made from a JSON Schema: values that should pass it, and deliberate mistakes.
//!
//! Owns [`Gen`]: valid values (types, required fields, enums, constants, bounds, lengths, item
//! counts, a few formats, `$ref`s into `$defs`/`definitions`, `anyOf`/`oneOf` branches) biased
//! towards edges (empty and long strings, bounds, zero), and [`Gen::mistakes`] of a valid value
//! (wrong types, missing required fields, out-of-range values, unknown fields, huge and deeply
//! nested values). Nothing here knows whether a value really passes: the caller checks each with
//! the schema's validator, so a generator that falls short (a `pattern`, say) costs a case, never
//! a false report.

use serde_json::{Map, Number, Value, json};

/// How deep a generated value nests at most (a recursive schema stops there).
const MAX_DEPTH: usize = 8;
/// How many items a generated array holds at most, beyond its `minItems`.
const MAX_EXTRA_ITEMS: u64 = 4;
/// A string longer than a model would usually send, but not a stress value.
const LONG_STRING: usize = 1_000;
/// The size of a "huge" string mistake (2 MiB).
pub(super) const HUGE_STRING: usize = 2 << 20;
/// The nesting of a "deep" mistake: far past any limit a call accepts, and still shallow
/// enough that building, checking and dropping it stays within a test thread's stack.
pub(super) const DEEP_NESTING: usize = 1_000;

/// A seeded generator over one input schema (the root, for `$ref`s).
pub(super) struct Gen<'s> {
    rng: fastrand::Rng,
    root: &'s Value,
}

/// One deliberate mistake: what was done, and the value it made.
pub(super) struct Mistake {
    /// What the mistake is, for the report (`wrong type at /city`).
    pub(super) what: String,
    /// The value.
    pub(super) value: Value,
}

impl<'s> Gen<'s> {
    /// A generator for values of `root`, seeded.
    pub(super) fn new(root: &'s Value, seed: u64) -> Self {
        Gen {
            rng: fastrand::Rng::with_seed(seed),
            root,
        }
    }

    /// A value meant to pass the root schema.
    pub(super) fn valid(&mut self) -> Value {
        self.value(self.root, 0)
    }

    fn value(&mut self, schema: &Value, depth: usize) -> Value {
        let Some(obj) = schema.as_object() else {
            // `true` (anything) or a schema this generator does not read.
            return json!({});
        };
        if let Some(target) = obj.get("$ref").and_then(Value::as_str) {
            return match (self.resolve(target), depth < MAX_DEPTH) {
                (Some(resolved), true) => self.value(resolved, depth + 1),
                _ => Value::Null,
            };
        }
        if let Some(c) = obj.get("const") {
            return c.clone();
        }
        if let Some(options) = obj.get("enum").and_then(Value::as_array).filter(|o| !o.is_empty()) {
            return options[self.rng.usize(..options.len())].clone();
        }
        for key in ["anyOf", "oneOf"] {
            if let Some(branches) = obj.get(key).and_then(Value::as_array).filter(|b| !b.is_empty()) {
                let branch = &branches[self.rng.usize(..branches.len())];
                return self.value(branch, depth + 1);
            }
        }
        if let Some(first) = obj.get("allOf").and_then(Value::as_array).and_then(|a| a.first()) {
            return self.value(first, depth + 1);
        }
        match self.pick_type(obj) {
            "object" => self.object(obj, depth),
            "array" => self.array(obj, depth),
            "string" => self.string(obj),
            "integer" => self.integer(obj),
            "number" => self.number(obj),
            "boolean" => Value::Bool(self.rng.bool()),
            "null" => Value::Null,
            _ => json!({}),
        }
    }

    /// `#/$defs/Name` or `#/definitions/Name` in the root.
    fn resolve(&self, target: &str) -> Option<&'s Value> {
        let pointer = target.strip_prefix('#')?;
        self.root.pointer(pointer)
    }

    fn pick_type(&mut self, obj: &Map<String, Value>) -> &'static str {
        let named = |t: &str| -> &'static str {
            ["object", "array", "string", "integer", "number", "boolean", "null"]
                .into_iter()
                .find(|n| *n == t)
                .unwrap_or("object")
        };
        match obj.get("type") {
            Some(Value::String(t)) => named(t),
            Some(Value::Array(types)) if !types.is_empty() => named(types[self.rng.usize(..types.len())].as_str().unwrap_or("object")),
            _ if obj.contains_key("properties") => "object",
            _ if obj.contains_key("items") => "array",
            _ => "object",
        }
    }

    fn object(&mut self, obj: &Map<String, Value>, depth: usize) -> Value {
        let required: Vec<&str> = obj
            .get("required")
            .and_then(Value::as_array)
            .map(|r| r.iter().filter_map(Value::as_str).collect())
            .unwrap_or_default();
        let mut out = Map::new();
        if let Some(props) = obj.get("properties").and_then(Value::as_object) {
            for (key, schema) in props {
                if required.contains(&key.as_str()) || (depth < MAX_DEPTH && self.rng.bool()) {
                    out.insert(key.clone(), self.value(schema, depth + 1));
                }
            }
        }
        Value::Object(out)
    }

    fn array(&mut self, obj: &Map<String, Value>, depth: usize) -> Value {
        let min = obj.get("minItems").and_then(Value::as_u64).unwrap_or(0).min(64);
        let max = obj.get("maxItems").and_then(Value::as_u64).unwrap_or(min + MAX_EXTRA_ITEMS);
        let count = if depth >= MAX_DEPTH {
            min
        } else {
            self.rng.u64(min..=max.max(min).min(min + MAX_EXTRA_ITEMS))
        };
        let prefix = obj.get("prefixItems").and_then(Value::as_array);
        let items = obj.get("items").filter(|i| i.is_object());
        let mut out = Vec::new();
        for n in 0..count as usize {
            let schema = prefix.and_then(|p| p.get(n)).or(items);
            out.push(match schema {
                Some(schema) => self.value(schema, depth + 1),
                None => json!(n),
            });
        }
        Value::Array(out)
    }

    fn string(&mut self, obj: &Map<String, Value>) -> Value {
        let min = obj.get("minLength").and_then(Value::as_u64).unwrap_or(0) as usize;
        let max = obj.get("maxLength").and_then(Value::as_u64).map(|m| m as usize);
        if let Some(text) = obj.get("format").and_then(Value::as_str).and_then(format_example) {
            return json!(text);
        }
        let len = match self.rng.u8(..6) {
            0 => min,
            1 => max.unwrap_or(LONG_STRING).min(LONG_STRING),
            _ => self.rng.usize(min..=max.unwrap_or(min + 12).max(min).min(min + 12)),
        };
        let alphabet: &[char] = match self.rng.u8(..3) {
            0 => &['a', 'Z', '0', ' ', '-', '_', '.'],
            1 => &['é', '😀', '中', 'ß', '\u{200b}'],
            _ => &['a', 'b', 'c', 'x', 'y', 'z', 'S', 'e', 'a', 't', 'l'],
        };
        json!((0..len).map(|_| alphabet[self.rng.usize(..alphabet.len())]).collect::<String>())
    }

    fn integer(&mut self, obj: &Map<String, Value>) -> Value {
        let (lo, hi) = bounds(obj);
        let lo = lo.map_or(i64::MIN, |l| l.ceil().clamp(i64::MIN as f64, i64::MAX as f64) as i64);
        let hi = hi.map_or(i64::MAX, |h| h.floor().clamp(i64::MIN as f64, i64::MAX as f64) as i64);
        if lo > hi {
            return json!(lo);
        }
        let pick = match self.rng.u8(..6) {
            0 => lo,
            1 => hi,
            2 => 0.clamp(lo, hi),
            3 => 1.clamp(lo, hi),
            _ => self.rng.i64(lo.max(-1_000_000)..=hi.min(1_000_000).max(lo.max(-1_000_000))),
        };
        match obj.get("multipleOf").and_then(Value::as_i64).filter(|m| *m > 0) {
            Some(m) => json!(pick - pick.rem_euclid(m)),
            None => json!(pick),
        }
    }

    fn number(&mut self, obj: &Map<String, Value>) -> Value {
        let (lo, hi) = bounds(obj);
        let (lo, hi) = (lo.unwrap_or(-1e6), hi.unwrap_or(1e6));
        let pick = match self.rng.u8(..5) {
            0 => lo,
            1 => hi,
            2 => 0.0f64.clamp(lo.min(hi), hi.max(lo)),
            _ => lo + (hi - lo) * self.rng.f64(),
        };
        Number::from_f64(pick).map_or(json!(0), Value::Number)
    }

    /// Deliberate mistakes made from a valid `base` value of the root schema.
    pub(super) fn mistakes(&mut self, base: &Value) -> Vec<Mistake> {
        let mut out = vec![
            Mistake {
                what: "the arguments are an array, not an object".into(),
                value: json!([]),
            },
            Mistake {
                what: "the arguments are a number".into(),
                value: json!(42),
            },
            Mistake {
                what: "an unknown field".into(),
                value: with(base, Some(json!("surprise")), "__toolsmith_check_unknown"),
            },
        ];
        let root = self.root_object();
        let Some(props) = root.and_then(|r| r.get("properties")).and_then(Value::as_object) else {
            return out;
        };
        let required: Vec<&str> = root
            .and_then(|r| r.get("required"))
            .and_then(Value::as_array)
            .map(|r| r.iter().filter_map(Value::as_str).collect())
            .unwrap_or_default();
        for (key, schema) in props {
            let schema = self.deref(schema);
            let pointer = format!("/{}", key.replace('~', "~0").replace('/', "~1"));
            if required.contains(&key.as_str()) {
                out.push(Mistake {
                    what: format!("missing required field {pointer}"),
                    value: with(base, None, key),
                });
            }
            out.push(Mistake {
                what: format!("wrong type at {pointer}"),
                value: with(base, Some(wrong_type(schema)), key),
            });
            for (what, value) in out_of_range(schema) {
                out.push(Mistake {
                    what: format!("{what} at {pointer}"),
                    value: with(base, Some(value), key),
                });
            }
            out.push(Mistake {
                what: format!("a huge string ({HUGE_STRING} bytes) at {pointer}"),
                value: with(base, Some(json!("x".repeat(HUGE_STRING))), key),
            });
            out.push(Mistake {
                what: format!("arrays nested {DEEP_NESTING} deep at {pointer}"),
                value: with(base, Some(deep(DEEP_NESTING)), key),
            });
        }
        out
    }

    fn root_object(&self) -> Option<&'s Map<String, Value>> {
        self.deref(self.root).as_object()
    }

    fn deref(&self, schema: &'s Value) -> &'s Value {
        match schema.get("$ref").and_then(Value::as_str).and_then(|t| self.resolve(t)) {
            Some(target) => target,
            None => schema,
        }
    }
}

/// `(minimum, maximum)`, exclusive bounds moved inwards by one.
fn bounds(obj: &Map<String, Value>) -> (Option<f64>, Option<f64>) {
    let f = |k: &str| obj.get(k).and_then(Value::as_f64);
    let lo = f("minimum").or(f("exclusiveMinimum").map(|m| m + 1.0));
    let hi = f("maximum").or(f("exclusiveMaximum").map(|m| m - 1.0));
    (lo, hi)
}

/// A value of a type the schema does not take (never `null` or a JSON-looking string, which
/// validation forgives on purpose).
fn wrong_type(schema: &Value) -> Value {
    let types: Vec<&str> = match schema.get("type") {
        Some(Value::String(t)) => vec![t.as_str()],
        Some(Value::Array(t)) => t.iter().filter_map(Value::as_str).collect(),
        _ => Vec::new(),
    };
    if types.contains(&"string") {
        json!(12345)
    } else if types.contains(&"boolean") {
        json!("yes")
    } else {
        json!("not the right type")
    }
}

/// Values just outside the schema's bounds.
fn out_of_range(schema: &Value) -> Vec<(String, Value)> {
    let mut out = Vec::new();
    let f = |k: &str| schema.get(k).and_then(Value::as_f64);
    if let Some(min) = f("minimum") {
        out.push(("below the minimum".to_owned(), json!(min - 1.0)));
    }
    if let Some(max) = f("maximum") {
        out.push(("above the maximum".to_owned(), json!(max + 1.0)));
    }
    if let Some(max) = schema.get("maxLength").and_then(Value::as_u64).filter(|m| *m < 1 << 20) {
        out.push(("longer than maxLength".to_owned(), json!("y".repeat(max as usize + 1))));
    }
    if schema.get("minLength").and_then(Value::as_u64).is_some_and(|m| m > 0) {
        out.push(("shorter than minLength".to_owned(), json!("")));
    }
    if schema.get("enum").is_some() {
        out.push(("a value outside the enum".to_owned(), json!("__not_one_of_them__")));
    }
    if let Some(max) = schema.get("maxItems").and_then(Value::as_u64).filter(|m| *m < 10_000) {
        out.push(("more items than maxItems".to_owned(), json!(vec![0; max as usize + 1])));
    }
    out
}

/// `[[[…]]]`, `depth` deep.
pub(super) fn deep(depth: usize) -> Value {
    let mut v = json!([]);
    for _ in 1..depth {
        v = Value::Array(vec![v]);
    }
    v
}

/// `base` (an object) with `key` set to `value`, or removed when `value` is `None`.
fn with(base: &Value, value: Option<Value>, key: &str) -> Value {
    let mut out = base.clone();
    if let Value::Object(obj) = &mut out {
        match value {
            Some(v) => {
                obj.insert(key.to_owned(), v);
            }
            None => {
                obj.remove(key);
            }
        }
    }
    out
}

/// A valid example for a string format, where one is known.
fn format_example(format: &str) -> Option<&'static str> {
    Some(match format {
        "date-time" => "2026-12-01T12:00:00Z",
        "date" => "2026-12-01",
        "time" => "12:00:00Z",
        "email" => "ann@example.com",
        "uri" | "url" => "https://example.com/a",
        "uuid" => "1b4e28ba-2fa1-11d2-883f-0016d3cca427",
        "ipv4" => "192.0.2.1",
        "ipv6" => "2001:db8::1",
        "hostname" => "example.com",
        _ => return None,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn valid_under(schema: &Value, seed: u64) -> Vec<Value> {
        let mut g = Gen::new(schema, seed);
        (0..50).map(|_| g.valid()).collect()
    }

    #[test]
    fn generated_values_mostly_pass_their_schema() {
        let schema = json!({
            "type": "object",
            "properties": {
                "city": {"type": "string", "minLength": 1, "maxLength": 40},
                "days": {"type": "integer", "minimum": 1, "maximum": 14},
                "units": {"enum": ["c", "f"]},
                "when": {"type": "string", "format": "date"},
                "tags": {"type": "array", "items": {"type": "string"}, "maxItems": 3},
                "at": {"$ref": "#/$defs/Point"},
                "note": {"type": ["string", "null"]}
            },
            "required": ["city", "days"],
            "$defs": {"Point": {"type": "object", "properties": {"x": {"type": "number"}}, "required": ["x"]}}
        });
        let validator = jsonschema::validator_for(&schema).unwrap();
        let values = valid_under(&schema, 7);
        let passing = values.iter().filter(|v| validator.is_valid(v)).count();
        assert!(
            passing >= 45,
            "{passing} of 50 passed: {:?}",
            values.iter().find(|v| !validator.is_valid(v))
        );
        assert!(
            values.iter().any(|v| v["days"] == 1) && values.iter().any(|v| v["days"] == 14),
            "bounds are visited"
        );
        assert_eq!(valid_under(&schema, 7), values, "a seed repeats its values");
    }

    #[test]
    fn mistakes_fail_their_schema() {
        let schema = json!({
            "type": "object",
            "properties": {"city": {"type": "string", "maxLength": 10}, "days": {"type": "integer", "minimum": 1}},
            "required": ["city"],
            "additionalProperties": false
        });
        let validator = jsonschema::validator_for(&schema).unwrap();
        let mut g = Gen::new(&schema, 1);
        let base = json!({"city": "Oslo", "days": 3});
        let mistakes = g.mistakes(&base);
        for m in &mistakes {
            let huge = m.what.starts_with("a huge string") && m.what.ends_with("/days");
            assert!(!validator.is_valid(&m.value) || huge, "{} passed", m.what);
        }
        let whats: Vec<&str> = mistakes.iter().map(|m| m.what.as_str()).collect();
        for expected in [
            "missing required field /city",
            "wrong type at /days",
            "below the minimum at /days",
            "longer than maxLength at /city",
            "an unknown field",
        ] {
            assert!(whats.contains(&expected), "{expected} in {whats:?}");
        }
    }
}
