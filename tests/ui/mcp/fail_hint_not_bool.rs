// MCP hints are boolean literals.
use tool_core::prelude::*;

/// Get the weather
#[tool(mcp(read_only_hint = "yes"))]
pub async fn weather(city: String) -> String {
    city
}

fn main() {}
