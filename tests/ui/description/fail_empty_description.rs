// An explicit but blank description is as useless as none.
use tool_core::prelude::*;

#[tool(description = "   ")]
pub async fn weather(city: String) -> String {
    city
}

fn main() {}
