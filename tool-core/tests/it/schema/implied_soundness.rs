//! The input validator is skipped on the happy path only where that is sound: for the struct
//! `#[tool]` generates from parameters whose types all decode exactly what their derived
//! schemas accept. Each tool here has an input whose type decodes arguments its schema
//! refuses (`alias`, `deserialize_with`, `default` under a stricter schema, a custom
//! `Deserialize` with a plain-looking schema, a newtype with a `pattern`, `#[serde(other)]`,
//! `flatten`); each test shows that the type does decode such arguments (the hole is real) and
//! that the registry still refuses them with the full listing (the hole is closed). A plain
//! tool still skips.

use std::borrow::Cow;
use std::collections::BTreeMap;

use schemars::{Schema, SchemaGenerator, json_schema};
use tool_core::prelude::*;
use tool_core::{ErrorKind, InputOf};

#[derive(Debug, Deserialize, JsonSchema)]
pub struct AliasInput {
    /// City name
    #[serde(alias = "town")]
    pub city: String,
}

/// `town` decodes as `city`; the schema knows only `city`
#[tool(id = "hole-alias")]
pub async fn hole_alias(input: AliasInput) -> String {
    input.city
}

fn number_or_text<'de, D: serde::Deserializer<'de>>(d: D) -> Result<u32, D::Error> {
    #[derive(Deserialize)]
    #[serde(untagged)]
    enum Either {
        Number(u32),
        Text(String),
    }
    match Either::deserialize(d)? {
        Either::Number(n) => Ok(n),
        Either::Text(t) => t.trim().parse().map_err(serde::de::Error::custom),
    }
}

#[derive(Debug, Deserialize, JsonSchema)]
pub struct WithInput {
    /// Days ahead
    #[serde(deserialize_with = "number_or_text")]
    pub days: u32,
}

/// `"3"` decodes through `deserialize_with`; the schema says integer
#[tool(id = "hole-with")]
pub async fn hole_with(input: WithInput) -> u32 {
    input.days
}

#[derive(Debug, Deserialize)]
pub struct DefaultInput {
    #[serde(default)]
    pub days: u32,
}

impl JsonSchema for DefaultInput {
    fn schema_name() -> Cow<'static, str> {
        "DefaultInput".into()
    }
    fn json_schema(_: &mut SchemaGenerator) -> Schema {
        json_schema!({
            "type": "object",
            "properties": {"days": {"type": "integer", "format": "uint32", "minimum": 0}},
            "required": ["days"]
        })
    }
}

/// A missing `days` decodes as 0 (`default`); the schema requires it
#[tool(id = "hole-default")]
pub async fn hole_default(input: DefaultInput) -> u32 {
    input.days
}

/// A `u32` that also decodes from text, behind a schema that looks like a plain `u32`'s.
#[derive(Debug, Serialize)]
pub struct Lenient(pub u32);

impl<'de> Deserialize<'de> for Lenient {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        number_or_text(d).map(Lenient)
    }
}

impl JsonSchema for Lenient {
    fn schema_name() -> Cow<'static, str> {
        "Lenient".into()
    }
    fn json_schema(_: &mut SchemaGenerator) -> Schema {
        json_schema!({"type": "integer", "format": "uint32", "minimum": 0})
    }
}

/// Parameters, one of a type with its own `Deserialize`
#[tool(id = "hole-custom-deserialize")]
pub async fn hole_custom_deserialize(
    /// Days ahead
    days: Lenient,
    /// A note
    note: String,
) -> String {
    format!("{note} {}", days.0)
}

/// Three capital letters, by its schema; any string, by its `Deserialize`.
#[derive(Debug, Deserialize, Serialize)]
#[serde(transparent)]
pub struct Code(pub String);

impl JsonSchema for Code {
    fn schema_name() -> Cow<'static, str> {
        "Code".into()
    }
    fn json_schema(_: &mut SchemaGenerator) -> Schema {
        json_schema!({"type": "string", "pattern": "^[A-Z]{3}$"})
    }
}

/// Parameters, one a newtype around `String` with a pattern
#[tool(id = "hole-pattern")]
pub async fn hole_pattern(
    /// Airport code
    code: Code,
    /// Passengers
    passengers: u32,
) -> String {
    format!("{} x{passengers}", code.0)
}

#[derive(Debug, Deserialize, Serialize, JsonSchema)]
pub enum Unit {
    Celsius,
    Fahrenheit,
    #[serde(other)]
    Unknown,
}

/// Parameters, one an enum that decodes any string (`#[serde(other)]`)
#[tool(id = "hole-other")]
pub async fn hole_other(
    /// Unit
    unit: Unit,
    /// Days ahead
    days: u32,
) -> String {
    format!("{unit:?} {days}")
}

#[derive(Debug, Deserialize, JsonSchema)]
pub struct FlatInput {
    /// City name
    pub city: String,
    #[serde(flatten)]
    pub rest: BTreeMap<String, Value>,
}

/// Extra fields decode into the flattened map
#[tool(id = "hole-flatten")]
pub async fn hole_flatten(input: FlatInput) -> usize {
    input.rest.len() + input.city.len()
}

/// Plain parameters only: the happy path skips the validator
#[tool(id = "plain-params")]
pub async fn plain_params(
    /// City name
    city: String,
    /// Days ahead
    days: u32,
    /// Tags
    tags: Vec<String>,
    /// A note
    note: Option<String>,
) -> String {
    format!("{city} {days} {} {note:?}", tags.len())
}

/// One plain parameter: one field, and plain
#[tool(id = "plain-single")]
pub async fn plain_single(x: f64) -> f64 {
    x * 2.0
}

/// Maps of plain values: each member decodes as the value type its schema names
#[tool(id = "plain-maps")]
pub async fn plain_maps(
    /// Prices by item
    prices: BTreeMap<String, f64>,
    /// Tags by key, if any
    tags: Option<std::collections::HashMap<String, Vec<u32>>>,
) -> String {
    format!("{} {}", prices.len(), tags.map_or(0, |t| t.len()))
}

fn registry() -> Registry {
    Registry::from_iter([
        plain_maps::tool().unwrap(),
        hole_alias::tool().unwrap(),
        hole_with::tool().unwrap(),
        hole_default::tool().unwrap(),
        hole_custom_deserialize::tool().unwrap(),
        hole_pattern::tool().unwrap(),
        hole_other::tool().unwrap(),
        hole_flatten::tool().unwrap(),
        plain_params::tool().unwrap(),
        plain_single::tool().unwrap(),
    ])
}

/// The type decodes `args` (so skipping the validator would let them through), and the
/// registry refuses them, listing the path its schema names.
fn refused<T: serde::de::DeserializeOwned>(id: &str, args: &str, path: &str) {
    assert!(
        serde_json::from_str::<T>(args).is_ok(),
        "`{id}`: its type does not decode {args}: no hole to close"
    );
    let registry = registry();
    assert_eq!(registry.skips_input_validation(id), Some(false), "`{id}` skips its validator");
    let rt = tokio::runtime::Builder::new_current_thread().build().unwrap();
    let err = rt.block_on(registry.call(id, args, CallOptions::default())).unwrap_err();
    assert_eq!(err.kind(), ErrorKind::InvalidInput, "`{id}`: {err}");
    let issues = err.issues();
    assert!(!issues.is_empty(), "`{id}`: no issue listed: {err}");
    assert!(issues.iter().any(|i| i.path == path), "`{id}`: no issue at `{path}`: {issues:?}");
    assert!(err.message().contains("invalid arguments"), "`{id}`: {err}");
}

#[test]
fn an_alias_the_schema_does_not_name_is_refused() {
    refused::<InputOf<hole_alias>>("hole-alias", r#"{"town": "Porto"}"#, "");
}

#[test]
fn a_value_only_deserialize_with_accepts_is_refused() {
    refused::<InputOf<hole_with>>("hole-with", r#"{"days": "3"}"#, "/days");
}

#[test]
fn a_field_the_schema_requires_is_required_despite_a_serde_default() {
    refused::<InputOf<hole_default>>("hole-default", r#"{}"#, "");
}

#[test]
fn a_custom_deserialize_behind_a_plain_looking_schema_is_validated() {
    refused::<InputOf<hole_custom_deserialize>>("hole-custom-deserialize", r#"{"days": "3", "note": "x"}"#, "/days");
}

#[test]
fn a_newtype_with_a_pattern_is_validated() {
    refused::<InputOf<hole_pattern>>("hole-pattern", r#"{"code": "lisbon", "passengers": 2}"#, "/code");
}

#[test]
fn a_variant_only_serde_other_accepts_is_refused() {
    refused::<InputOf<hole_other>>("hole-other", r#"{"unit": "Kelvin", "days": 2}"#, "/unit");
}

#[test]
fn a_flattened_struct_keeps_validating() {
    // Its schema lets any extra field through as well, so there is nothing to refuse; the
    // decision alone is what matters (flatten changes what decoding reads).
    assert_eq!(registry().skips_input_validation("hole-flatten"), Some(false));
}

#[test]
fn plain_parameters_skip_the_validator_and_still_refuse_what_does_not_decode() {
    let registry = registry();
    assert_eq!(registry.skips_input_validation("plain-params"), Some(true));
    assert_eq!(registry.skips_input_validation("plain-single"), Some(true));
    let rt = tokio::runtime::Builder::new_current_thread().build().unwrap();
    let out = rt
        .block_on(registry.call(
            "plain-params",
            r#"{"city": "Porto", "days": 2, "tags": ["a"]}"#,
            CallOptions::default(),
        ))
        .unwrap();
    assert_eq!(out.value(), json!("Porto 2 1 None"));
    // What does not decode takes the validator's path: every failing field is listed.
    let paths = refused_paths(&rt, &registry, "plain-params", r#"{"city": 1, "days": -1, "tags": "a"}"#);
    assert_eq!(paths, ["/city", "/days", "/tags"]);
}

/// Calls `id` with `args`, which must be refused as invalid input; the paths its issues name,
/// sorted.
fn refused_paths(rt: &tokio::runtime::Runtime, registry: &Registry, id: &str, args: &str) -> Vec<String> {
    let err = rt.block_on(registry.call(id, args, CallOptions::default())).unwrap_err();
    assert_eq!(err.kind(), ErrorKind::InvalidInput, "{err}");
    let mut paths: Vec<String> = err.issues().iter().map(|i| i.path.clone()).collect();
    paths.sort_unstable();
    paths
}

#[test]
fn map_parameters_skip_the_validator_and_still_refuse_a_member_of_another_type() {
    let registry = registry();
    assert_eq!(registry.skips_input_validation("plain-maps"), Some(true));
    let rt = tokio::runtime::Builder::new_current_thread().build().unwrap();
    let out = rt
        .block_on(registry.call(
            "plain-maps",
            r#"{"prices": {"a": 1.5, "b": 2}, "tags": {"x": [1, 2]}}"#,
            CallOptions::default(),
        ))
        .unwrap();
    assert_eq!(out.value(), json!("2 1"));
    // A member the value type does not decode takes the validator's path, named by its key.
    let paths = refused_paths(&rt, &registry, "plain-maps", r#"{"prices": {"a": "cheap"}, "tags": {"x": [-1]}}"#);
    assert_eq!(paths, ["/prices/a", "/tags/x/0"]);
    // A key repeated inside a map is refused as anywhere else.
    let err = rt
        .block_on(registry.call("plain-maps", r#"{"prices": {"a": 1, "a": 2}}"#, CallOptions::default()))
        .unwrap_err();
    assert_eq!(err.kind(), ErrorKind::InvalidInput, "{err}");
}

#[test]
fn arguments_given_as_a_value_skip_the_validator_as_their_text_does() {
    // What an MCP request carries: a value, decoded once (from its text) while the call is
    // checked, and that decoded input is what the body receives.
    let registry = registry();
    let rt = tokio::runtime::Builder::new_current_thread().build().unwrap();
    let args = json!({"city": "Porto", "days": 2, "tags": ["a", "b"], "note": "n"});
    let by_value = rt
        .block_on(registry.call("plain-params", args.clone(), CallOptions::default()))
        .unwrap();
    let by_text = rt
        .block_on(registry.call("plain-params", args.to_string(), CallOptions::default()))
        .unwrap();
    assert_eq!(by_value.value(), json!("Porto 2 2 Some(\"n\")"));
    assert_eq!(by_value.value(), by_text.value());
    let maps = json!({"prices": {"a": 1.5}, "tags": {"x": [1]}});
    let out = rt.block_on(registry.call("plain-maps", maps, CallOptions::default())).unwrap();
    assert_eq!(out.value(), json!("1 1"));
    // A value that does not decode takes the validator's path and is refused with every path.
    let err = rt
        .block_on(registry.call("plain-params", json!({"city": 1, "days": -1, "tags": "a"}), CallOptions::default()))
        .unwrap_err();
    assert_eq!(err.kind(), ErrorKind::InvalidInput, "{err}");
    let mut paths: Vec<String> = err.issues().iter().map(|i| i.path.clone()).collect();
    paths.sort_unstable();
    assert_eq!(paths, ["/city", "/days", "/tags"]);
}
