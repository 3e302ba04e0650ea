// `strict` is a flag, not a key with a value.
use tool_core::prelude::*;

/// Get the weather
#[tool(strict = true)]
pub async fn weather(city: String) -> String {
    city
}

fn main() {}
