// The same key twice is reported at the second one.
use tool_core::prelude::*;

/// Get the weather
#[tool(id = "weather", title = "Weather", id = "get_weather")]
pub async fn weather(city: String) -> String {
    city
}

fn main() {}
