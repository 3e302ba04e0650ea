// The `#[ctx]` parameter is handed to a body: a tool without one has no use for it.
use tool_core::prelude::*;

/// Asks the user to pick a file in the browser
#[tool]
pub fn pick_file(prompt: String, #[ctx] cx: ToolContext) -> String;

fn main() {}
