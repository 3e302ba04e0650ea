// `#[input]` says a parameter is the whole input, whatever its type: here a map, which alone
// would be one field, becomes a free-form object input; on a struct it says what the type
// already implies.
use std::collections::HashMap;

use tool_core::prelude::*;

#[derive(Debug, Deserialize, Serialize, JsonSchema)]
pub struct WeatherInput {
    /// City name
    pub city: String,
}

/// Set labels (any names, string values)
#[tool]
pub async fn set_labels(#[input] labels: HashMap<String, String>) -> usize {
    labels.len()
}

/// Get the weather
#[tool(input_examples = [WeatherInput { city: "Paris".into() }])]
pub async fn city_weather(#[input] input: WeatherInput, #[ctx] cx: ToolContext) -> String {
    let _ = cx;
    input.city
}

pub fn main() {
    tokio::runtime::Runtime::new().unwrap().block_on(async {
        let registry = &Registry::from_module(module_path!()).unwrap();

        let schema = registry.get("set-labels").unwrap().spec().schemas.input.clone();
        assert_eq!(schema["type"], "object");
        assert_eq!(schema["additionalProperties"]["type"], "string");
        let out = registry
            .call("set-labels", json!({"env": "prod", "team": "ml"}), CallOptions::default())
            .await
            .unwrap();
        assert_eq!(out.value(), json!(2));
        let labels: InputOf<set_labels> = HashMap::from([("a".to_owned(), "b".to_owned())]);
        assert_eq!(labels.len(), 1);

        let spec = registry.get("city-weather").unwrap().spec().clone();
        assert_eq!(spec.schemas.input["required"], json!(["city"]));
        assert_eq!(spec.presentation.input_examples, vec![json!({"city": "Paris"})]);
        let input: InputOf<city_weather> = WeatherInput { city: "Oslo".into() };
        let out = registry.call("city-weather", json!(input), CallOptions::default()).await.unwrap();
        assert_eq!(out.value(), json!("Oslo"));
    });
}
