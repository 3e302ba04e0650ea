// Hooks name a function; a closure is refused with what to write instead.
use tool_core::prelude::*;

/// Get the weather
#[tool(on_output = |_call, output| println!("{output}"))]
pub async fn weather(city: String) -> String {
    city
}

fn main() {}
