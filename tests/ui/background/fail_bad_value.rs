// Background timings are integer literals in milliseconds.
use tool_core::prelude::*;

/// Render a report
#[tool(background(enabled = true, timeout_ms = "30s"))]
pub async fn render_report(name: String) -> String {
    name
}

fn main() {}
