// A parameter is the whole input or one field of it, not both.
use tool_core::prelude::*;

#[derive(Deserialize, JsonSchema)]
pub struct WeatherInput {
    pub city: String,
}

/// Get the weather
#[tool]
pub async fn weather(#[input] #[field] input: WeatherInput) -> String {
    input.city
}

fn main() {}
