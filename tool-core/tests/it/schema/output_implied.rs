//! The output check is skipped for what a body returned only where that is sound: an output
//! type sealed as encoding nothing its derived schema refuses (std types without floats), its
//! schema the derived one with no keyword beyond what the type implies. Property tests generate
//! values of every such type shape and check that what serde writes validates against what
//! schemars derives; floats (`NaN` is written as `null`), user types and custom schemas keep
//! being checked, and an output that breaks its schema is still caught.

use std::collections::{BTreeMap, HashMap, VecDeque};

use proptest::prelude::*;
use tool_core::__private_v0_1::{Probe, ProbeFallback as _};
use tool_core::ErrorKind;
use tool_core::prelude::*;
use tool_core::schema::produce_schema;

/// Every value `T` can hold serialises to JSON its derived schema accepts.
fn encodes_only_valid<T: Serialize + JsonSchema + std::fmt::Debug>(strategy: impl Strategy<Value = T>) {
    let schema = produce_schema::<T>().expect("a schema");
    let validator = jsonschema::validator_for(&schema).unwrap();
    proptest!(ProptestConfig::with_cases(256), |(value in strategy)| {
        let json = serde_json::to_value(&value).unwrap();
        prop_assert!(validator.is_valid(&json), "{value:?} was written as {json}, which {schema} refuses");
    });
}

#[test]
fn every_sealed_output_shape_writes_only_what_its_schema_accepts() {
    const { assert!(Probe::<String>::ENCODES_PLAIN && Probe::<Vec<Option<u64>>>::ENCODES_PLAIN) };
    encodes_only_valid(any::<String>());
    encodes_only_valid(any::<bool>());
    encodes_only_valid(any::<u8>());
    encodes_only_valid(any::<i8>());
    encodes_only_valid(any::<u16>());
    encodes_only_valid(any::<i16>());
    encodes_only_valid(any::<u32>());
    encodes_only_valid(any::<i32>());
    encodes_only_valid(any::<u64>());
    encodes_only_valid(any::<i64>());
    encodes_only_valid(any::<usize>());
    encodes_only_valid(any::<isize>());
    encodes_only_valid(any::<Option<u32>>());
    encodes_only_valid(any::<Option<Option<i16>>>());
    encodes_only_valid(any::<Box<u16>>());
    encodes_only_valid(any::<Vec<String>>());
    encodes_only_valid(any::<Vec<Option<i64>>>());
    encodes_only_valid(any::<Vec<Vec<i32>>>());
    encodes_only_valid(any::<VecDeque<bool>>());
    encodes_only_valid(any::<BTreeMap<String, u8>>());
    encodes_only_valid(any::<HashMap<String, Vec<u8>>>());
}

#[derive(Debug, Serialize, JsonSchema)]
pub struct Reading {
    pub value: f64,
}

#[test]
fn floats_and_user_types_are_not_vouched_for() {
    // `NaN` and the infinities are written as `null`, which `{"type": "number"}` refuses.
    const { assert!(!Probe::<f64>::ENCODES_PLAIN && !Probe::<f32>::ENCODES_PLAIN) };
    const { assert!(!Probe::<Vec<f64>>::ENCODES_PLAIN && !Probe::<Option<f32>>::ENCODES_PLAIN) };
    const { assert!(!Probe::<Reading>::ENCODES_PLAIN && !Probe::<Vec<Reading>>::ENCODES_PLAIN) };
    let schema = produce_schema::<f64>().unwrap();
    let written = serde_json::to_value(f64::NAN).unwrap();
    assert!(
        !jsonschema::is_valid(&schema, &written),
        "the hole is real: {written} against {schema}"
    );
}

/// Echoes a word
#[tool(id = "out-text")]
pub async fn out_text(word: String) -> String {
    word
}

/// Lists words
#[tool(id = "out-list")]
pub async fn out_list(n: u8) -> Result<Vec<Option<String>>, ToolError> {
    Ok((0..n.min(4)).map(|i| (i % 2 == 0).then(|| i.to_string())).collect())
}

/// A number that is not one
#[tool(id = "out-nan")]
pub async fn out_nan(n: u8) -> f64 {
    if n == 0 { f64::NAN } else { f64::from(n) }
}

/// A reading
#[tool(id = "out-struct")]
pub async fn out_struct() -> Reading {
    Reading { value: f64::INFINITY }
}

/// Counts by name (a map: its schema's `additionalProperties` is the value type's schema)
#[tool(id = "out-map")]
pub async fn out_map(name: String) -> BTreeMap<String, u32> {
    BTreeMap::from([(name, 1)])
}

fn registry() -> Registry {
    Registry::try_from_tools(
        [
            out_text::tool(),
            out_list::tool(),
            out_nan::tool(),
            out_struct::tool(),
            out_map::tool(),
        ]
        .map(Result::unwrap),
    )
    .unwrap()
}

#[test]
fn the_registry_skips_the_check_only_for_vouched_output_types() {
    let registry = registry();
    assert_eq!(registry.skips_output_validation("out-text"), Some(true));
    assert_eq!(registry.skips_output_validation("out-list"), Some(true));
    assert_eq!(registry.skips_output_validation("out-nan"), Some(false));
    assert_eq!(registry.skips_output_validation("out-struct"), Some(false));
    assert_eq!(registry.skips_output_validation("out-map"), Some(true));
    assert_eq!(registry.skips_output_validation("nope"), None);
}

#[tokio::test]
async fn outputs_that_break_their_schema_are_still_caught() {
    let registry = registry();
    let ok = registry
        .call("out-text", r#"{"word": "hi"}"#, CallOptions::default())
        .await
        .unwrap();
    assert_eq!(ok.json.get(), r#""hi""#);
    let list = registry.call("out-list", r#"{"n": 3}"#, CallOptions::default()).await.unwrap();
    assert_eq!(list.json.get(), r#"["0",null,"2"]"#);
    for (id, args) in [("out-nan", r#"{"n": 0}"#), ("out-struct", "{}")] {
        let err = registry.call(id, args, CallOptions::default()).await.unwrap_err();
        assert_eq!(err.kind(), ErrorKind::InvalidOutput, "{id}: {err}");
    }
    let fine = registry.call("out-nan", r#"{"n": 2}"#, CallOptions::default()).await.unwrap();
    assert_eq!(fine.json.get(), "2.0");
}
