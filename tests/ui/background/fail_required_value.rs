// `required` is a flag, and a task-required tool cannot be kept out of the background.
use tool_core::prelude::*;

/// Render a report
#[tool(background(required = true))]
pub async fn render_report(name: String) -> String {
    name
}

/// Render another
#[tool(background(required, enabled = false))]
pub async fn render_other(name: String) -> String {
    name
}

fn main() {}
