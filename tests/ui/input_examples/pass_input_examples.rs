// `input_examples = [...]` takes values of the input type (a struct, or `InputOf<fn>` for
// plain parameters) and stores them serialised.
use tool_core::prelude::*;

#[derive(Deserialize, Serialize, JsonSchema)]
pub struct WeatherInput {
    /// City name
    pub location: String,
    /// Temperature unit
    #[serde(skip_serializing_if = "Option::is_none")]
    pub unit: Option<String>,
}

/// Get the current weather
#[tool(input_examples = [
    WeatherInput { location: "Paris".into(), unit: None },
    WeatherInput { location: "Tokyo".into(), unit: Some("fahrenheit".into()) },
])]
pub async fn weather(input: WeatherInput) -> String {
    input.location
}

/// Add two numbers
#[tool(input_examples = [InputOf::<add> { a: 1.0, b: 2.5 }])]
pub async fn add(
    /// The first addend
    a: f64,
    /// The second addend
    b: f64,
) -> f64 {
    a + b
}

pub fn main() {
    tokio::runtime::Runtime::new().unwrap().block_on(async {
        let registry = &Registry::from_module(module_path!()).unwrap();
        let spec = registry.get("weather").unwrap().spec().clone();
        assert_eq!(
            spec.presentation.input_examples,
            vec![json!({"location": "Paris"}), json!({"location": "Tokyo", "unit": "fahrenheit"})]
        );
        let spec = registry.get("add").unwrap().spec().clone();
        assert_eq!(spec.presentation.input_examples, vec![json!({"a": 1.0, "b": 2.5})]);

        // Every example is a valid call.
        for example in spec.presentation.input_examples {
            let out = registry.call("add", example, CallOptions::default()).await.unwrap();
            assert_eq!(out.value(), json!(3.5));
        }
    });
}
