// Input is deserialised into the parameters, so they must be owned.
use tool_core::prelude::*;

/// Get the weather
#[tool]
pub async fn weather(city: &str, days: u8) -> String {
    format!("{city}: {days}")
}

fn main() {}
