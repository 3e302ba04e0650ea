// Examples are values of the input type, not raw JSON.
use tool_core::prelude::*;

#[derive(Deserialize, Serialize, JsonSchema)]
pub struct WeatherInput {
    pub city: String,
}

/// Get the weather
#[tool(input_examples = [WeatherInput { city: "Paris".into() }, json!({ "city": "Oslo" })])]
pub async fn weather(input: WeatherInput) -> String {
    input.city
}

fn main() {}
