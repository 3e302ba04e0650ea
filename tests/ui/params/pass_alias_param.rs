// A single parameter is one field or the whole input by its type, not by how the type is
// spelt: an alias of a scalar or a collection is one field, like the type it names.
use std::collections::BTreeMap;

use tool_core::prelude::*;

/// A temperature in degrees Celsius.
pub type Celsius = f64;
/// City names.
pub type Cities = Vec<String>;
/// An optional limit.
pub type Limit = Option<u32>;
/// Scores by name.
pub type Scores = BTreeMap<String, u32>;

/// Convert to Fahrenheit
#[tool]
pub async fn to_fahrenheit(
    /// Degrees Celsius
    celsius: Celsius,
) -> f64 {
    celsius * 9.0 / 5.0 + 32.0
}

/// Count cities
#[tool]
pub async fn count_cities(cities: Cities) -> usize {
    cities.len()
}

/// Say how many at most
#[tool(input_examples = [InputOf::<at_most> { limit: None }, InputOf::<at_most> { limit: Some(3) }])]
pub async fn at_most(limit: Limit) -> String {
    limit.map_or_else(|| "no limit".to_owned(), |n| format!("at most {n}"))
}

/// Best score
#[tool]
pub async fn best(scores: Scores) -> u32 {
    scores.values().copied().max().unwrap_or_default()
}

pub fn main() {
    tokio::runtime::Runtime::new().unwrap().block_on(async {
        let registry = &Registry::from_module(module_path!()).unwrap();

        let schema = registry.get("to-fahrenheit").unwrap().spec().schemas.input.clone();
        assert_eq!(schema["type"], "object");
        assert_eq!(schema["required"], json!(["celsius"]));
        assert_eq!(schema["properties"]["celsius"]["description"], "Degrees Celsius");
        let out = registry.call("to-fahrenheit", json!({"celsius": 100}), CallOptions::default()).await.unwrap();
        assert_eq!(out.value(), json!(212.0));
        let input: InputOf<to_fahrenheit> = serde_json::from_value(json!({"celsius": 0.0})).unwrap();
        assert_eq!(input.celsius, 0.0);

        let out = registry
            .call("count-cities", json!({"cities": ["Paris", "Oslo"]}), CallOptions::default())
            .await
            .unwrap();
        assert_eq!(out.value(), json!(2));

        // An absent optional parameter is left out of an example, as when spelt `Option<u32>`.
        let spec = registry.get("at-most").unwrap().spec().clone();
        assert!(spec.schemas.input.get("required").is_none(), "{}", spec.schemas.input);
        assert_eq!(spec.presentation.input_examples, vec![json!({}), json!({"limit": 3})]);
        let out = registry.call("at-most", json!({}), CallOptions::default()).await.unwrap();
        assert_eq!(out.value(), json!("no limit"));

        let out = registry
            .call("best", json!({"scores": {"a": 2, "b": 7}}), CallOptions::default())
            .await
            .unwrap();
        assert_eq!(out.value(), json!(7));
    });
}
