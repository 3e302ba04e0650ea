// The output of a tool without a body comes from the application: it must be readable back.
use tool_core::prelude::*;

/// What the user picked.
#[derive(Serialize, JsonSchema)]
pub struct Picked {
    pub path: String,
}

/// Asks the user to pick a file in the browser
#[tool]
pub fn pick_file(prompt: String) -> Picked;

fn main() {}
