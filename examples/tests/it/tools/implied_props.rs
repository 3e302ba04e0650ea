//! Property tests of the happy path that skips input validation: for every example tool whose
//! input schema the registry judged implied by its Rust type, values generated from the schema
//! (valid ones, and ones with a wrong type, a missing or extra field, a boundary number, a
//! stray `null`) that *decode* into the tool's type must also *validate* against its schema.
//! A tool for which that fails would accept, on the happy path, arguments its schema refuses;
//! tools whose types decode more than their schemas say (`#[serde(other)]`, `default` under a
//! stricter schema) show that the property finds such values, and that they keep validating.

use proptest::prelude::*;
use proptest::test_runner::{Config, TestRunner};
use serde_json::{Map, Value, json};
use tool_core::InputOf;
use tool_core::prelude::*;

/// How deep generated values nest (schemas that recurse stop here).
const DEPTH: u32 = 4;

/// Any JSON value, small: what a model may send where it should not.
fn stray() -> BoxedStrategy<Value> {
    prop_oneof![
        Just(Value::Null),
        Just(json!("x")),
        Just(json!("")),
        Just(json!(-1)),
        Just(json!(0)),
        Just(json!(1.5)),
        Just(json!(3.0)),
        Just(json!(true)),
        Just(json!([])),
        Just(json!({})),
        Just(json!({"unexpected": 1})),
    ]
    .boxed()
}

fn integer() -> BoxedStrategy<Value> {
    prop_oneof![
        prop::sample::select(vec![
            json!(0),
            json!(1),
            json!(-1),
            json!(127),
            json!(128),
            json!(255),
            json!(256),
            json!(-129),
            json!(65_536),
            json!(4_294_967_295u64),
            json!(4_294_967_296u64),
            json!(i64::MIN),
            json!(i64::MAX),
            json!(u64::MAX),
            json!(2.0),
        ]),
        any::<i64>().prop_map(Value::from),
    ]
    .boxed()
}

fn string(schema: &Map<String, Value>) -> BoxedStrategy<Value> {
    let mut choices: Vec<Value> = schema.get("enum").and_then(Value::as_array).cloned().unwrap_or_default();
    choices.extend([json!("other"), json!(""), json!("2024-01-01T00:00:00Z"), json!("Europe/Lisbon")]);
    prop_oneof![prop::sample::select(choices), "[a-zA-Z0-9 ]{0,12}".prop_map(Value::from)].boxed()
}

/// Values for one subschema of `root`, mostly valid, sometimes not.
fn values(root: &Value, schema: &Value, depth: u32) -> BoxedStrategy<Value> {
    let Some(obj) = schema.as_object() else {
        return stray();
    };
    if depth == 0 {
        return stray();
    }
    if let Some(target) = obj.get("$ref").and_then(Value::as_str).and_then(|r| r.strip_prefix('#')) {
        return match root.pointer(target) {
            Some(s) => values(root, s, depth - 1),
            None => stray(),
        };
    }
    if let Some(branches) = obj.get("anyOf").or_else(|| obj.get("oneOf")).and_then(Value::as_array) {
        let options: Vec<BoxedStrategy<Value>> = branches.iter().map(|b| values(root, b, depth - 1)).collect();
        return prop::strategy::Union::new(options).boxed();
    }
    let types: Vec<&str> = match obj.get("type") {
        Some(Value::String(t)) => vec![t.as_str()],
        Some(Value::Array(ts)) => ts.iter().filter_map(Value::as_str).collect(),
        _ => vec![],
    };
    if types.is_empty() {
        return stray();
    }
    let options: Vec<BoxedStrategy<Value>> = types
        .into_iter()
        .map(|t| match t {
            "object" => object(root, obj, depth),
            "array" => {
                let items = obj.get("items").map_or_else(stray, |s| values(root, s, depth - 1));
                prop::collection::vec(items, 0..3).prop_map(Value::Array).boxed()
            }
            "string" => string(obj),
            "integer" => integer(),
            "number" => prop_oneof![
                integer(),
                any::<f64>().prop_filter("finite", |f| f.is_finite()).prop_map(Value::from)
            ]
            .boxed(),
            "boolean" => any::<bool>().prop_map(Value::Bool).boxed(),
            _ => Just(Value::Null).boxed(),
        })
        .collect();
    prop_oneof![9 => prop::strategy::Union::new(options), 1 => stray()].boxed()
}

/// An object: each listed field present or not (required ones mostly present), sometimes an
/// unknown field more, and a map's members.
fn object(root: &Value, schema: &Map<String, Value>, depth: u32) -> BoxedStrategy<Value> {
    let required: Vec<&str> = schema
        .get("required")
        .and_then(Value::as_array)
        .map(|r| r.iter().filter_map(Value::as_str).collect())
        .unwrap_or_default();
    let mut fields: Vec<BoxedStrategy<Option<(String, Value)>>> = Vec::new();
    for (name, sub) in schema.get("properties").and_then(Value::as_object).into_iter().flatten() {
        let keep = if required.contains(&name.as_str()) { 0.9 } else { 0.5 };
        let name = name.clone();
        fields.push(
            prop::option::weighted(keep, values(root, sub, depth - 1))
                .prop_map(move |v| v.map(|v| (name.clone(), v)))
                .boxed(),
        );
    }
    let extra = prop::option::weighted(0.1, stray()).prop_map(|v| v.map(|v| ("unexpected".to_owned(), v)));
    // A map's members (`additionalProperties` with a schema): a few keys, each value generated
    // from that schema (a stray one among them now and then).
    let members = match schema.get("additionalProperties") {
        Some(member) if member.is_object() => prop::collection::vec(("[a-z]{1,3}", values(root, member, depth - 1)), 0..4).boxed(),
        _ => Just(Vec::new()).boxed(),
    };
    (fields, extra, members)
        .prop_map(|(fields, extra, members)| {
            let mut object: Map<String, Value> = members.into_iter().collect();
            object.extend(fields.into_iter().chain([extra]).flatten());
            Value::Object(object)
        })
        .boxed()
}

/// Runs the property over `schema`: a generated value that `decodes` accepts must validate.
/// `Err` names the first value that decodes and is refused; `Ok` counts the values decoded.
fn decoded_only_valid(schema: &Value, decodes: impl Fn(&str) -> bool) -> Result<usize, String> {
    let validator = jsonschema::validator_for(schema).unwrap();
    let mut runner = TestRunner::new(Config {
        cases: 300,
        failure_persistence: None,
        ..Config::default()
    });
    let decoded = std::cell::Cell::new(0usize);
    let result = runner.run(&values(schema, schema, DEPTH), |value| {
        let text = value.to_string();
        if decodes(&text) {
            decoded.set(decoded.get() + 1);
            prop_assert!(validator.is_valid(&value), "decodes {text} but its schema refuses it");
        }
        Ok(())
    });
    result.map(|()| decoded.get()).map_err(|e| e.to_string())
}

#[test]
fn every_example_tool_that_skips_validation_decodes_only_what_validates() {
    // Links the example tools into this binary (their registrations come with the crate).
    let _ = examples::calculate::MAX_NESTING;
    let registry = Registry::global();
    let skipping: Vec<_> = registry
        .tools()
        .into_iter()
        .filter(|t| registry.skips_input_validation(&t.spec().id) == Some(true))
        .collect();
    // Only tools whose input is the struct `#[tool]` generates from plain parameters skip (a
    // struct of the user's may decode other than its schema says, and validates); if fewer
    // than these skipped, the optimisation is off.
    let ids: Vec<&str> = skipping.iter().map(|t| t.spec().id.as_str()).collect();
    assert!(skipping.len() >= 3, "only {ids:?} skip validation");
    // A tool with a map parameter (`calculate`'s `variables`) is among them: the property
    // covers map members too.
    assert!(ids.contains(&"calculate"), "{ids:?}");
    for tool in skipping {
        let spec = tool.spec();
        let decoded = decoded_only_valid(&spec.schemas.input, |text| tool_core::tool::decodes(&*tool, text) == Some(true))
            .unwrap_or_else(|e| panic!("`{}`: {e}", spec.id));
        // The generator must reach the happy path, or the property says nothing.
        assert!(decoded > 0, "`{}`: no generated value decoded", spec.id);
    }
}

/// Decodes any unit name: `#[serde(other)]` takes what the schema's `enum` does not list.
#[derive(Debug, Deserialize, Serialize, JsonSchema)]
pub enum Unit {
    Celsius,
    Fahrenheit,
    #[serde(other)]
    Unknown,
}

/// Parameters, one of them an enum that decodes any string
#[tool(id = "props-serde-other")]
pub async fn props_serde_other(
    /// Unit
    unit: Unit,
    /// Days ahead
    days: u32,
) -> String {
    format!("{unit:?} {days}")
}

#[derive(Debug, Deserialize, Serialize)]
pub struct Defaulted {
    #[serde(default)]
    pub days: u32,
}

impl JsonSchema for Defaulted {
    fn schema_name() -> std::borrow::Cow<'static, str> {
        "Defaulted".into()
    }
    fn json_schema(_: &mut schemars::SchemaGenerator) -> schemars::Schema {
        schemars::json_schema!({
            "type": "object",
            "properties": {"days": {"type": "integer", "format": "uint32", "minimum": 0}},
            "required": ["days"]
        })
    }
}

/// Its input decodes without `days` (`default`); its plain-looking schema requires it
#[tool(id = "props-serde-default")]
pub async fn props_serde_default(input: Defaulted) -> u32 {
    input.days
}

#[test]
fn the_property_catches_types_that_decode_more_than_their_schemas_and_those_validate() {
    // Each input type decodes values its schema refuses (the keyword reading cannot see why:
    // both schemas look derived and plain). The property finds such a value, so a tool like
    // these that skipped would fail the test above; and the registry does not skip them.
    let registry = Registry::global();
    let decode_other = |t: &str| serde_json::from_str::<InputOf<props_serde_other>>(t).is_ok();
    let decode_default = |t: &str| serde_json::from_str::<InputOf<props_serde_default>>(t).is_ok();
    type Decodes<'a> = &'a dyn Fn(&str) -> bool;
    let cases: [(&str, Decodes); 2] = [("props-serde-other", &decode_other), ("props-serde-default", &decode_default)];
    for (id, decodes) in cases {
        let spec = registry.get(id).unwrap().spec().clone();
        assert!(
            decoded_only_valid(&spec.schemas.input, decodes).is_err(),
            "`{id}`: no counterexample found"
        );
        assert_eq!(registry.skips_input_validation(id), Some(false), "`{id}` skips its validator");
    }
}

#[test]
fn tools_whose_schemas_say_more_than_their_types_keep_validating() {
    let _ = examples::calculate::MAX_NESTING;
    let registry = Registry::global();
    assert!(registry.len() >= 10, "the example tools are not linked: {:?}", registry.ids());
    let validating: Vec<String> = registry
        .tools()
        .into_iter()
        .filter(|t| registry.skips_input_validation(&t.spec().id) == Some(false))
        .map(|t| t.spec().id.clone())
        .collect();
    // Strict tools refuse unknown fields a type ignores; they always validate.
    for tool in registry.tools() {
        if tool.spec().policy.strict {
            assert!(validating.contains(&tool.spec().id), "strict `{}` skips validation", tool.spec().id);
        }
    }
}
