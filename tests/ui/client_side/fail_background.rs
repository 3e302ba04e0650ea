// A tool without a body runs nothing: it cannot run in the background.
use tool_core::prelude::*;

/// Asks the user to pick a file in the browser
#[tool(background(timeout_ms = 1000))]
pub fn pick_file(prompt: String) -> String;

fn main() {}
