//! The tasks extension's tools (SEP-2663) that answer in one round: `greet` (never a task),
//! `slow_compute` (cancellable), `failing_job` (task-required, a tool error),
//! `protocol_error_job` (a panic) and `confirm_delete` (waits for an approval). Those that
//! gather their input in rounds are in `mrtr`.

use std::time::Duration;

use tool_core::prelude::*;

use super::bounded;

/// Answers `Hello, {name}!` at once (the tasks scenarios' tool that never runs as a task)
#[tool(id = "greet", icon = "https://modelcontextprotocol.io/favicon.png")]
pub async fn greet(
    /// Who to greet (the first 200 characters are echoed)
    name: String,
) -> String {
    format!("Hello, {}!", bounded(&name))
}

/// Sleeps `seconds` (at most 120), then answers; a durable task, to a client that declared the
/// tasks extension, that ends cancelled when the task is cancelled
#[tool(id = "slow_compute", background(enabled = true))]
pub async fn slow_compute(
    /// How long to compute, in seconds (0 answers at once; at most 120)
    seconds: f64,
    /// A label echoed in the answer (its first 200 characters)
    label: Option<String>,
    #[ctx] cx: ToolContext,
) -> Result<String, ToolError> {
    let seconds = seconds.clamp(0.0, 120.0);
    tokio::select! {
        _ = tokio::time::sleep(Duration::from_secs_f64(seconds)) => {}
        _ = cx.cancellation().cancelled() => return Err(ToolError::new("The computation was cancelled.")),
    }
    Ok(format!("computed {} in {seconds} s", bounded(label.as_deref().unwrap_or("result"))))
}

/// Fails with a tool error after a second (a task that completes with `isError`); task-required,
/// so a client that cannot take a task is refused before it runs (`-32021` on 2026-07-28)
#[tool(id = "failing_job", background(required))]
pub async fn failing_job() -> Result<String, ToolError> {
    tokio::time::sleep(Duration::from_secs(1)).await;
    Err(ToolError::new("The job failed, as it always does."))
}

/// Panics: a protocol-level failure, not a tool error (a task that ends `failed`)
#[tool(id = "protocol_error_job", background(enabled = true))]
pub async fn protocol_error_job() -> String {
    panic!("protocol_error_job always panics")
}

/// Deletes nothing, once the user approved: as a task, it waits for the approval
/// (`input_required`, the form in `inputRequests`) and answers `tasks/update`
#[tool(id = "confirm_delete", require_approval, background(enabled = true))]
pub async fn confirm_delete(
    /// The file to delete (nothing is deleted; the first 200 characters are echoed)
    filename: Option<String>,
) -> String {
    format!("deleted {} (not really)", filename.as_deref().map_or("the file", bounded))
}
