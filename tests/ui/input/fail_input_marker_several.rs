// `#[input]` marks the only input parameter; with several, each is one field.
use tool_core::prelude::*;

/// Get the weather
#[tool]
pub async fn weather(#[input] city: String, days: u8) -> String {
    format!("{city}: {days}")
}

fn main() {}
