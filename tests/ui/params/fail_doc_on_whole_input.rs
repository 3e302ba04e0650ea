// A single struct parameter is the whole input: its doc comment would be lost.
use tool_core::prelude::*;

#[derive(Deserialize, JsonSchema)]
pub struct WeatherInput {
    /// City name
    pub city: String,
}

/// Get the weather
#[tool]
pub async fn weather(
    /// The request
    input: WeatherInput,
) -> String {
    input.city
}

fn main() {}
