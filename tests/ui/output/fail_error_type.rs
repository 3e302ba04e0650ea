// A `Result` error type must convert into `ToolError`.
use tool_core::prelude::*;

pub struct NotAnError;

/// Get the weather
#[tool]
pub async fn weather(city: String) -> Result<String, NotAnError> {
    Ok(city)
}

fn main() {}
