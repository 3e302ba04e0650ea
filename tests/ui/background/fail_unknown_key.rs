// `background(...)` keys are a fixed set.
use tool_core::prelude::*;

/// Render a report
#[tool(background(retries = 3))]
pub async fn render_report(name: String) -> String {
    name
}

fn main() {}
