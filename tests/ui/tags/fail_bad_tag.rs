// Tags are non-empty string literals of a-z, A-Z, 0-9, `-`, `_`, `.`, `/`, each once.
use tool_core::prelude::*;

/// Get the weather
#[tool(tags = ["weather", "has space", "weather", 7])]
pub async fn weather(city: String) -> String {
    city
}

fn main() {}
