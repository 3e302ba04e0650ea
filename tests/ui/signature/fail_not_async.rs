// A tool must be an `async fn`.
use tool_core::prelude::*;

/// Get the weather
#[tool]
pub fn weather(city: String) -> String {
    city
}

fn main() {}
