// The plain shape: a documented struct input, a `Result` with a struct output, the id derived
// from the function name.
use tool_core::prelude::*;

#[derive(Debug, Deserialize, Serialize, JsonSchema)]
pub struct WeatherInput {
    /// City name, e.g. "Paris"
    pub location: String,
}

#[derive(Debug, Serialize, JsonSchema)]
pub struct Weather {
    pub location: String,
    pub temperature_celsius: f64,
}

/// Get the current weather for a location
#[tool]
pub async fn get_weather(input: WeatherInput) -> Result<Weather, ToolError> {
    if input.location.is_empty() {
        return Err(ToolError::new("the location is empty"));
    }
    Ok(Weather {
        location: input.location,
        temperature_celsius: 21.5,
    })
}

/// Parse a number (any `std::error::Error` converts into `ToolError`)
#[tool]
pub async fn parse_number(text: String) -> Result<u32, std::num::ParseIntError> {
    text.trim().parse()
}

pub fn main() {
    tokio::runtime::Runtime::new().unwrap().block_on(async {
        let registry = &Registry::from_module(module_path!()).unwrap();
        let spec = registry
            .get("get-weather")
            .expect("id derived from the fn name, kebab-cased")
            .spec()
            .clone();
        assert_eq!(spec.description, "Get the current weather for a location");
        assert!(!spec.policy.strict);
        assert_eq!(spec.schemas.input["type"], "object");
        assert_eq!(spec.schemas.input["required"], json!(["location"]));
        assert_eq!(
            spec.schemas.input["properties"]["location"]["description"],
            "City name, e.g. \"Paris\""
        );
        let output_schema = spec.schemas.output.expect("a struct output has a schema");
        assert_eq!(output_schema["properties"]["temperature_celsius"]["type"], "number");

        let out = registry
            .call("get-weather", r#"{"location": "Paris"}"#, CallOptions::default())
            .await
            .unwrap();
        assert_eq!(out.value(), json!({"location": "Paris", "temperature_celsius": 21.5}));
        assert_eq!(out.model_output(), None);

        let err = registry
            .call("get-weather", json!({"location": ""}), CallOptions::default())
            .await
            .unwrap_err();
        assert_eq!(err.message(), "the location is empty");

        let err = registry.call("get-weather", json!({}), CallOptions::default()).await.unwrap_err();
        assert!(err.message().contains("location"), "{err}");

        let out = registry
            .call("parse-number", json!({"text": " 42 "}), CallOptions::default())
            .await
            .unwrap();
        assert_eq!(out.value(), json!(42));
        let err = registry
            .call("parse-number", json!({"text": "x"}), CallOptions::default())
            .await
            .unwrap_err();
        assert_eq!(err.message(), "invalid digit found in string");

        // `get_weather::tool()` is the same registered tool.
        assert_eq!(get_weather::tool().unwrap().spec().id, "get-weather");
    });
}
