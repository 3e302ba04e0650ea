// A hook returns `()` or `Result<(), E>`.
use tool_core::prelude::*;

fn started(call: &ToolCallInfo) -> bool {
    !call.tool_call_id.is_empty()
}

/// Get the weather
#[tool(on_input_start = started)]
pub async fn weather(city: String) -> String {
    city
}

fn main() {}
