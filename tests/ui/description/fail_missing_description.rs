// No doc comment and no `description = "..."`: the model would not know what the tool does.
use tool_core::prelude::*;

#[tool]
pub async fn weather(city: String) -> String {
    city
}

fn main() {}
