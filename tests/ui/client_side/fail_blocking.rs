// A tool without a body runs nothing: `blocking` (where a body runs) makes no sense.
use tool_core::prelude::*;

/// Asks the user to pick a file in the browser
#[tool(blocking)]
pub fn pick_file(prompt: String) -> String;

fn main() {}
