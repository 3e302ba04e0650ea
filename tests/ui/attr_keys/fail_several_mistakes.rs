// Every mistake in one attribute is reported, each at its own token.
use tool_core::prelude::*;

/// Get the weather
#[tool(strict = true, mcp(read_only_hint = "yes"), titel = "Weather", background(timeout_ms = 1.5))]
pub async fn weather(city: String) -> String {
    city
}

fn main() {}
