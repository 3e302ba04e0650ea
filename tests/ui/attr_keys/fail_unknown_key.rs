// A misspelt key is reported at the key, with the closest valid key suggested.
use tool_core::prelude::*;

/// Get the weather
#[tool(descripton = "Get the weather")]
pub async fn weather(city: String) -> String {
    city
}

fn main() {}
