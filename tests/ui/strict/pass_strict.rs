// `strict` sets the spec flag; an explicit id and title are kept as written.
use tool_core::prelude::*;

#[derive(Deserialize, JsonSchema)]
pub struct WeatherInput {
    /// City name
    pub location: String,
}

/// Get the current weather for a location
#[tool(id = "weather_strict", title = "Strict weather", strict)]
pub async fn weather(input: WeatherInput) -> String {
    format!("{}: sunny", input.location)
}

/// Same tool, not strict
#[tool(id = "weather_lenient")]
pub async fn weather_lenient(input: WeatherInput) -> String {
    input.location
}

pub fn main() {
    tokio::runtime::Runtime::new().unwrap().block_on(async {
        let registry = &Registry::from_module(module_path!()).unwrap();
        let spec = registry.get("weather_strict").unwrap().spec().clone();
        assert!(spec.policy.strict);
        assert_eq!(spec.title.as_deref(), Some("Strict weather"));
        assert!(!registry.get("weather_lenient").unwrap().spec().policy.strict);

        let out = registry
            .call("weather_strict", json!({"location": "Oslo"}), CallOptions::default())
            .await
            .unwrap();
        assert_eq!(out.value(), json!("Oslo: sunny"));
    });
}
