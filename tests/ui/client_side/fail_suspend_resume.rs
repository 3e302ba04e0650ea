// Only a body suspends: a tool without one has no suspend or resume type (its call already
// waits for the application's result).
use tool_core::prelude::*;

#[derive(Serialize, Deserialize, JsonSchema)]
pub struct Ask {
    pub question: String,
}

/// Asks the user to pick a file in the browser
#[tool(suspend = Ask, resume = Ask)]
pub fn pick_file(prompt: String) -> String;

fn main() {}
