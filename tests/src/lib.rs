//! Tools defined in a second crate, to prove link-time collection across crates, plus shared
//! helpers for the integration tests.

use tool_core::prelude::*;

#[derive(Debug, Deserialize, Serialize, JsonSchema)]
pub struct WeatherInput {
    /// City name or coordinates
    pub location: String,
}

#[derive(Debug, Serialize, JsonSchema)]
pub struct Weather {
    pub location: String,
    pub temperature_celsius: f64,
    pub conditions: String,
}

/// Get the current weather for a location (test crate copy)
#[tool(id = "test-weather", strict)]
pub async fn weather(input: WeatherInput) -> Result<Weather, ToolError> {
    Ok(Weather {
        location: input.location,
        temperature_celsius: 21.0,
        conditions: "sunny".into(),
    })
}

/// Add two numbers
#[tool(id = "test-add")]
pub async fn add(
    /// The first addend
    a: f64,
    /// The second addend
    b: f64,
) -> f64 {
    a + b
}
