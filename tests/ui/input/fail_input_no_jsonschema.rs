// The input type needs a JSON Schema.
use tool_core::prelude::*;

#[derive(Deserialize)]
pub struct WeatherInput {
    pub city: String,
}

/// Get the weather
#[tool]
pub async fn weather(input: WeatherInput) -> String {
    input.city
}

fn main() {}
