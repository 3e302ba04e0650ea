// `mcp(requires = [...])` names client capabilities; `icon` is an icon's address.
use tool_core::prelude::*;

/// Needs things
#[tool(icon = "route.png", mcp(requires = ["sampling", "telepathy"]))]
pub async fn needs() -> String {
    String::new()
}

fn main() {}
