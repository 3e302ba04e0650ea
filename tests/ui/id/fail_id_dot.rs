// Providers reject dots in tool names.
use tool_core::prelude::*;

/// Get the weather
#[tool(id = "weather.current")]
pub async fn weather(city: String) -> String {
    city
}

fn main() {}
