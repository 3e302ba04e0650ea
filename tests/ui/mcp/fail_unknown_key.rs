// `mcp(...)` keys are the MCP annotation hints, `title` and `meta`.
use tool_core::prelude::*;

/// Get the weather
#[tool(mcp(read_only = true))]
pub async fn weather(city: String) -> String {
    city
}

fn main() {}
