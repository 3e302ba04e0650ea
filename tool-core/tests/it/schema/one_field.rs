//! The input of a tool with one plain parameter, or none, reads, writes and describes exactly
//! what `#[derive(Deserialize, Serialize, JsonSchema)]` on the generated struct did (tool-core
//! writes those impls once, `__private_v0_1::one_field`): each tool here is compared with the
//! derived struct `#[tool]` used to generate, on schemas (both contracts), decoding (from text
//! and from a `Value`, errors included) and encoding.

use std::collections::BTreeMap;

use schemars::generate::SchemaSettings;
use schemars::{JsonSchema, SchemaGenerator};
use serde::Serialize;
use serde::de::DeserializeOwned;
use serde_json::{Value, json};
use tool_core::prelude::*;

/// The struct `#[tool]` derived for a single plain parameter.
macro_rules! derived {
    ($module:ident: $(#[$attr:meta])* $name:ident) => {
        mod $module {
            use tool_core::__private_v0_1::PlainValue;
            #[derive(serde::Deserialize, serde::Serialize, schemars::JsonSchema)]
            pub struct __ToolInput<__T> {
                $(#[$attr])*
                #[serde(skip_serializing_if = "PlainValue::is_absent", bound(serialize = "__T: serde::Serialize + PlainValue"))]
                pub $name: __T,
            }
        }
    };
}

derived!(celsius_derived:
    /// Degrees Celsius
    celsius);
derived!(limit_derived: limit);
derived!(names_derived:
    /// # The names
    ///
    /// Each one a city,
    /// in any order.
    #[schemars(extend("x-mcp-header" = "X-Names"))]
    names);
derived!(tags_derived:
    ///   Indented text
    #[schemars(extend("x-mcp-header" = "X-Tags"))]
    tags);
derived!(scores_derived:
    /// Scores
    ///
    /// by name
    scores);

mod empty_derived {
    #[derive(serde::Deserialize, serde::Serialize, schemars::JsonSchema)]
    #[serde(deny_unknown_fields)]
    pub struct __ToolInput {}
}

/// Convert to Fahrenheit
#[tool]
pub async fn fahrenheit(
    /// Degrees Celsius
    celsius: f64,
) -> f64 {
    celsius * 1.8 + 32.0
}

/// At most
#[tool]
pub async fn at_most(limit: Option<u32>) -> u32 {
    limit.unwrap_or_default()
}

/// Count names
#[tool]
pub async fn count_names(
    /// # The names
    ///
    /// Each one a city,
    /// in any order.
    #[tool(header = "X-Names")]
    names: Vec<String>,
) -> usize {
    names.len()
}

/// Tags
#[tool]
pub async fn tagged(
    ///   Indented text
    #[tool(header = "X-Tags")]
    tags: Option<Vec<String>>,
) -> usize {
    tags.map_or(0, |t| t.len())
}

/// Best score
#[tool]
pub async fn best(
    /// Scores
    ///
    /// by name
    scores: BTreeMap<String, u32>,
) -> u32 {
    scores.into_values().max().unwrap_or_default()
}

/// Nothing
#[tool]
pub async fn nothing() -> u32 {
    0
}

/// Both schemas of `T` (what it decodes, what it encodes), as schemars gives them.
fn schemas<T: JsonSchema>() -> (Value, Value) {
    let receive = SchemaGenerator::default().root_schema_for::<T>();
    let produce = SchemaSettings::default().for_serialize().into_generator().root_schema_for::<T>();
    (receive.to_value(), produce.to_value())
}

/// What decoding `text` gives: the value written back, or the error's message.
fn decoded<T: DeserializeOwned + Serialize>(text: &str) -> (Result<Value, String>, Result<Value, String>) {
    let from_text = serde_json::from_str::<T>(text).map(|v| json!(v)).map_err(|e| e.to_string());
    let from_value = serde_json::from_str::<Value>(text)
        .map_err(|e| e.to_string())
        .and_then(|v| serde_json::from_value::<T>(v).map(|v| json!(v)).map_err(|e| e.to_string()));
    (from_text, from_value)
}

/// Texts to decode: the field present, absent, repeated, `null`, with other keys, as an array,
/// not an object.
fn texts(key: &str, value: &str) -> Vec<String> {
    vec![
        format!(r#"{{"{key}": {value}}}"#),
        "{}".to_owned(),
        format!(r#"{{"{key}": {value}, "{key}": {value}}}"#),
        format!(r#"{{"{key}": null}}"#),
        format!(r#"{{"other": 1, "{key}": {value}, "more": [1, {{"a": 2}}]}}"#),
        format!("[{value}]"),
        "[]".to_owned(),
        format!("[{value}, {value}]"),
        "3".to_owned(),
        "null".to_owned(),
        r#""text""#.to_owned(),
        format!(r#"{{"{key}": "#),
        r#"{"x": 1}"#.to_owned(),
    ]
}

fn same<Ours, Derived>(key: &str, value: &str)
where
    Ours: JsonSchema + DeserializeOwned + Serialize,
    Derived: JsonSchema + DeserializeOwned + Serialize,
{
    assert_eq!(schemas::<Ours>(), schemas::<Derived>(), "schemas of `{key}`");
    assert_eq!(
        serde_json::to_string(&schemas::<Ours>()).unwrap(),
        serde_json::to_string(&schemas::<Derived>()).unwrap(),
        "key order of `{key}`'s schemas"
    );
    for text in texts(key, value) {
        assert_eq!(decoded::<Ours>(&text), decoded::<Derived>(&text), "`{key}` decoding {text}");
    }
}

#[test]
fn a_plain_parameter_is_what_the_derive_was() {
    same::<InputOf<fahrenheit>, celsius_derived::__ToolInput<f64>>("celsius", "21.5");
    same::<InputOf<at_most>, limit_derived::__ToolInput<Option<u32>>>("limit", "3");
    same::<InputOf<count_names>, names_derived::__ToolInput<Vec<String>>>("names", r#"["Paris", "Oslo"]"#);
    same::<InputOf<tagged>, tags_derived::__ToolInput<Option<Vec<String>>>>("tags", r#"["a"]"#);
    same::<InputOf<best>, scores_derived::__ToolInput<BTreeMap<String, u32>>>("scores", r#"{"a": 2}"#);

    let (receive, produce) = schemas::<InputOf<count_names>>();
    let names = &receive["properties"]["names"];
    assert_eq!(
        (&names["title"], &names["description"], &names["x-mcp-header"]),
        (&json!("The names"), &json!("Each one a city,\nin any order."), &json!("X-Names"))
    );
    assert_eq!((&receive["required"], produce.get("required")), (&json!(["names"]), None));
    assert!(schemas::<InputOf<at_most>>().0.get("required").is_none());
}

#[test]
fn an_absent_optional_parameter_is_left_out_as_the_derive_did() {
    let ours = serde_json::to_string(&InputOf::<at_most> { limit: None }).unwrap();
    let derived = serde_json::to_string(&limit_derived::__ToolInput::<Option<u32>> { limit: None }).unwrap();
    assert_eq!((ours.as_str(), derived.as_str()), ("{}", "{}"));
    let ours = serde_json::to_string(&InputOf::<at_most> { limit: Some(3) }).unwrap();
    assert_eq!(ours, r#"{"limit":3}"#);
}

#[test]
fn no_parameters_is_what_the_derive_was() {
    same::<InputOf<nothing>, empty_derived::__ToolInput>("x", "1");
    let _: InputOf<nothing> = InputOf::<nothing> {};
}
