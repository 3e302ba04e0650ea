// A key that resembles no valid key lists every valid key, without a guess.
use tool_core::prelude::*;

/// Get the weather
#[tool(cache_for_seconds = 60)]
pub async fn weather(city: String) -> String {
    city
}

fn main() {}
