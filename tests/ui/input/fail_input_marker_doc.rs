// The whole input's description is its type's: `#[input]` takes no doc comment.
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
    #[input]
    input: WeatherInput,
) -> String {
    input.city
}

fn main() {}
