// A tool without a body runs nothing: `isolate` (a child process for the body) makes no sense.
use tool_core::prelude::*;

/// Asks the user to pick a file in the browser
#[tool(isolate = "process")]
pub fn pick_file(prompt: String) -> String;

fn main() {}
