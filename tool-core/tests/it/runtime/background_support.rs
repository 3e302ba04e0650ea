//! What the background-task tests share: runs collected under a timeout, the placeholder's
//! checks, and the gates that hold a tool until a test lets it finish.

use std::time::Duration;

use tokio::sync::Semaphore;
use tool_core::prelude::*;
use tool_core::runtime::{EventStream, Runtime};

use crate::support::wire::{Wire as RunEvent, wire};

pub const PREFIX: &str = "Background task started. Task ID: ";
/// How long anything may take before a test gives up (never reached when the feature works).
pub const PATIENCE: Duration = Duration::from_secs(10);

// ---------------------------------------------------------------------------------------------
// Helpers
// ---------------------------------------------------------------------------------------------

/// The raw events of a whole run.
pub async fn run(runtime: &Runtime, tool: &str, args: Value, options: CallOptions) -> Vec<RunEvent> {
    let events = tokio::time::timeout(PATIENCE, runtime.call(tool, args, options).collect())
        .await
        .unwrap_or_else(|_| panic!("the run of `{tool}` did not end"));
    events.into_iter().map(|e| wire(&e.raw)).collect()
}

/// The next raw event of a run (`None` when it is over).
pub async fn next(stream: &mut EventStream) -> Option<RunEvent> {
    tokio::time::timeout(PATIENCE, stream.next())
        .await
        .expect("no event arrived")
        .map(|e| wire(&e.raw))
}

pub fn kinds(events: &[RunEvent]) -> Vec<&'static str> {
    events.iter().map(RunEvent::kind).collect()
}

pub fn is_background(event: &RunEvent) -> bool {
    matches!(
        event,
        RunEvent::BackgroundTaskStarted { .. } | RunEvent::BackgroundTaskCompleted { .. } | RunEvent::BackgroundTaskFailed { .. }
    )
}

/// The id every event of a run shares.
pub fn single_call_id(events: &[RunEvent]) -> String {
    let id = events.first().expect("no events").tool_call_id().to_owned();
    assert!(
        events.iter().all(|e| e.tool_call_id() == id),
        "events of several calls: {events:#?}"
    );
    id
}

/// Checks a placeholder result (and its model output) and returns the task id it names.
pub fn placeholder_task(event: &RunEvent) -> String {
    let RunEvent::ToolResult { result, model_output, .. } = event else {
        panic!("expected the placeholder tool-result, got {event:#?}");
    };
    let Value::String(text) = result else {
        panic!("the placeholder is not a string: {result}");
    };
    let task = text.strip_prefix(PREFIX).unwrap_or_else(|| panic!("not a placeholder: {text:?}"));
    assert!(!task.trim().is_empty(), "the placeholder names no task: {text:?}");
    assert_eq!(
        model_output.as_ref(),
        Some(&ModelOutput::Text(text.clone())),
        "the model sees the placeholder"
    );
    task.to_owned()
}

/// A whole background run: tool-call, placeholder, started, then completed (`Ok` with the
/// result) or failed (`Err` with the error JSON), every event of one call and one task.
pub fn background_outcome(events: &[RunEvent]) -> Result<Value, Value> {
    let ends = ["background-task-completed", "background-task-failed"];
    assert!(
        events.len() == 4
            && kinds(&events[..3]) == ["tool-call", "tool-result", "background-task-started"]
            && ends.contains(&events[3].kind()),
        "{events:#?}"
    );
    single_call_id(events);
    let task = placeholder_task(&events[1]);
    let RunEvent::BackgroundTaskStarted { task_id, .. } = &events[2] else {
        unreachable!()
    };
    assert_eq!(task_id, &task);
    match &events[3] {
        RunEvent::BackgroundTaskCompleted { task_id, result, .. } => {
            assert_eq!(task_id, &task);
            Ok(result.clone())
        }
        RunEvent::BackgroundTaskFailed { task_id, error, .. } => {
            assert_eq!(task_id, &task);
            Err(error.clone())
        }
        _ => unreachable!(),
    }
}

/// A whole background run that completed; returns the completed result.
pub fn completed_in_background(events: &[RunEvent]) -> Value {
    background_outcome(events).unwrap_or_else(|error| panic!("the task failed: {error}\n{events:#?}"))
}

/// A whole background run that failed; returns the error JSON.
pub fn failed_in_background(events: &[RunEvent]) -> Value {
    match background_outcome(events) {
        Ok(result) => panic!("the task completed with {result}\n{events:#?}"),
        Err(error) => error,
    }
}

/// A whole foreground run that succeeded: tool-call, then the real result. Returns it.
pub fn foreground_result(events: &[RunEvent]) -> Value {
    assert_eq!(kinds(events), ["tool-call", "tool-result"], "{events:#?}");
    assert!(!events.iter().any(is_background));
    single_call_id(events);
    let RunEvent::ToolResult { result, .. } = &events[1] else {
        unreachable!()
    };
    assert!(
        !result.as_str().is_some_and(|s| s.starts_with(PREFIX)),
        "a foreground run must not answer with the placeholder: {result}"
    );
    result.clone()
}

/// Waits until the test opens `gate` (or gives up after [`PATIENCE`]; the tool then returns
/// a value the test rejects).
pub async fn pass(gate: &Semaphore) -> bool {
    matches!(tokio::time::timeout(PATIENCE, gate.acquire()).await, Ok(Ok(_)))
}

// Called by the tests of several modules.
/// Opted in, returns at once
#[tool(id = "bg-quick-bg", background(enabled = true))]
pub async fn quick_bg() -> String {
    "quick bg".into()
}
