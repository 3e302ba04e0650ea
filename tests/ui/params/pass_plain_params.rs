// Plain parameters become the input's fields: doc comments describe them, `Option` makes one
// optional, `InputOf<fn>` names the generated input type.
use tool_core::prelude::*;

/// Get a forecast
#[tool]
pub async fn forecast(
    /// City name, e.g. "Paris"
    city: String,
    /// Number of days, 1 to 7 (default 3)
    days: Option<u8>,
) -> String {
    format!("{city}: {} days", days.unwrap_or(3))
}

/// Square a number
#[tool]
pub async fn square(
    /// The number to square
    x: f64,
) -> f64 {
    x * x
}

/// Say hello (no parameters)
#[tool]
pub async fn hello() -> String {
    "hello".into()
}

fn describe(input: &InputOf<forecast>) -> String {
    format!("{} for {:?} days", input.city, input.days)
}

pub fn main() {
    tokio::runtime::Runtime::new().unwrap().block_on(async {
        let registry = &Registry::from_module(module_path!()).unwrap();
        let schema = registry.get("forecast").unwrap().spec().schemas.input.clone();
        assert_eq!(schema["type"], "object");
        assert_eq!(schema["required"], json!(["city"]));
        assert_eq!(schema["properties"]["city"]["description"], "City name, e.g. \"Paris\"");
        assert_eq!(schema["properties"]["days"]["description"], "Number of days, 1 to 7 (default 3)");

        let out = registry
            .call("forecast", json!({"city": "Paris"}), CallOptions::default())
            .await
            .unwrap();
        assert_eq!(out.value(), json!("Paris: 3 days"));
        let out = registry
            .call("forecast", json!({"city": "Paris", "days": 5}), CallOptions::default())
            .await
            .unwrap();
        assert_eq!(out.value(), json!("Paris: 5 days"));

        // A single plain-typed parameter is still a field, not the whole input.
        let schema = registry.get("square").unwrap().spec().schemas.input.clone();
        assert_eq!(schema["properties"]["x"]["description"], "The number to square");
        let out = registry.call("square", json!({"x": 3}), CallOptions::default()).await.unwrap();
        assert_eq!(out.value(), json!(9.0));

        // No parameters: an empty object that refuses extra keys.
        let schema = registry.get("hello").unwrap().spec().schemas.input.clone();
        assert_eq!(schema["additionalProperties"], json!(false));
        let out = registry.call("hello", "", CallOptions::default()).await.unwrap();
        assert_eq!(out.value(), json!("hello"));

        let input: InputOf<forecast> = serde_json::from_value(json!({"city": "Oslo", "days": 2})).unwrap();
        assert_eq!(describe(&input), "Oslo for Some(2) days");
    });
}
