// `on_input_available` receives `(&ToolCallInfo, &Input)`: here the hook takes only the call.
use tool_core::prelude::*;

fn log_input(call: &ToolCallInfo) {
    let _ = call;
}

/// Get the weather
#[tool(on_input_available = log_input)]
pub async fn weather(city: String) -> String {
    city
}

fn main() {}
