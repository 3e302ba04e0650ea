// Each provider appears once in `provider_options(...)`.
use tool_core::prelude::*;

/// Get the weather
#[tool(provider_options(anthropic = json!({ "a": 1 }), anthropic = json!({ "b": 2 })))]
pub async fn weather(city: String) -> String {
    city
}

fn main() {}
