//! Background tasks: an opted-in tool answers at once with a placeholder and finishes later.
//!
//! Owns [`BackgroundOverride`] (per-call tuning of a tool that opted in), the plan for one call
//! (settings merged, a slot taken from the runtime's limit, or none: then the call runs in the
//! foreground) and the task itself: attempts under the per-attempt timeout, retries, and the
//! completion or failure event that replaces the placeholder.

use std::time::Duration;

use serde::{Deserialize, Serialize};
use tokio::sync::OwnedSemaphorePermit;

use super::{Inner, Outcome, RunEvent, Runtime, Sink};
use crate::call::CallOptions;
use crate::error::{ErrorKind, ToolError};
use crate::model_output::ModelOutput;
use crate::registry::Prepared;
use crate::spec::ToolSpec;

/// Per-call tuning of a background tool. Only a tool whose `background(enabled = true)` opted
/// in is affected; for others the override is ignored (it can never move a tool to the
/// background).
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct BackgroundOverride {
    /// `false` runs this call in the foreground.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub enabled: Option<bool>,
    /// Per-attempt timeout.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub timeout_ms: Option<u64>,
    /// Retries after a failed attempt.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub max_retries: Option<u32>,
    /// How long to wait for the result before answering with the placeholder.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub wait_timeout_ms: Option<u64>,
}

/// The settings of one background call, with its slot.
pub(crate) struct Plan {
    timeout: Option<Duration>,
    max_retries: u32,
    wait: Option<Duration>,
    permit: OwnedSemaphorePermit,
}

/// Whether this call goes to the background, and how. `None`: foreground (not opted in,
/// disabled for this call, or every slot taken).
pub(crate) fn plan(inner: &Inner, spec: &ToolSpec, over: Option<&BackgroundOverride>) -> Option<Plan> {
    let base = spec.background.as_ref().filter(|b| b.enabled);
    let Some(base) = base else {
        if over.is_some() {
            tracing::debug!(tool = %spec.id, "a background override was given for a tool that did not opt in; ignored");
        }
        return None;
    };
    let over = over.cloned().unwrap_or_default();
    if over.enabled == Some(false) {
        return None;
    }
    let Ok(permit) = inner.background.clone().try_acquire_owned() else {
        tracing::info!(tool = %spec.id, "every background slot is taken; running in the foreground");
        return None;
    };
    Some(Plan {
        timeout: over.timeout_ms.or(base.timeout_ms).map(Duration::from_millis),
        max_retries: over.max_retries.or(base.max_retries).unwrap_or(0),
        wait: over.wait_timeout_ms.or(base.wait_timeout_ms).map(Duration::from_millis),
        permit,
    })
}

/// Whether another attempt may help: failures of the tool itself and timeouts, not invalid
/// data, suspensions or a caller's cancellation.
fn retryable(e: &ToolError, options: &CallOptions) -> bool {
    match e.kind() {
        ErrorKind::Execution | ErrorKind::Panic => true,
        ErrorKind::Aborted => !options.cancellation.as_ref().is_some_and(|c| c.is_cancelled()),
        _ => false,
    }
}

async fn attempts(prepared: &Prepared, options: &CallOptions, plan_timeout: Option<Duration>, max_retries: u32) -> Outcome {
    let mut attempt = 0;
    loop {
        let mut opts = options.clone();
        // Each attempt gets its own token, so a timed-out attempt does not cancel the next.
        let parent = options.cancellation.clone().unwrap_or_default();
        opts.cancellation = Some(parent.child_token());
        // The tool's per-attempt timeout caps the caller's, never extends it.
        opts.timeout = match (plan_timeout, options.timeout) {
            (Some(a), Some(b)) => Some(a.min(b)),
            (a, b) => a.or(b),
        };
        match prepared.run(opts).await {
            Ok(out) => return Outcome::Done(out),
            Err(e) if attempt < max_retries && retryable(&e, options) => {
                attempt += 1;
                // The error itself is not logged: its message may quote what the views hide.
                tracing::info!(tool = %prepared.tool().spec().id, attempt, kind = e.kind().as_str(), "background attempt failed; retrying");
            }
            Err(e) => return Outcome::Failed(e),
        }
    }
}

/// Runs a call as a background task: the result is a placeholder unless the task finishes
/// within the wait timeout.
pub(crate) async fn run(runtime: &Runtime, sink: &Sink, prepared: &Prepared, id: &str, options: CallOptions, plan: Plan) {
    let task_id = format!("task_{}", crate::call::new_call_id().trim_start_matches("call_"));
    let (tx, mut rx) = tokio::sync::oneshot::channel::<Outcome>();
    let tool = prepared.tool().clone();
    let name = tool.spec().id.clone();
    let Plan {
        timeout,
        max_retries,
        wait,
        permit,
    } = plan;
    let task_prepared = prepared.clone();
    let (task_runtime, task_sink, task_options, task_id2, task_name, task_call) = (
        runtime.clone(),
        sink.clone(),
        options.clone(),
        task_id.clone(),
        name.clone(),
        id.to_owned(),
    );
    tokio::spawn(async move {
        let _slot = permit;
        let outcome = attempts(&task_prepared, &task_options, timeout, max_retries).await;
        // If the caller is still waiting, it reports the result as an ordinary one.
        let Err(outcome) = tx.send(outcome) else { return };
        let tool = task_prepared.tool().clone();
        let viewer = task_runtime.viewer(Some(&*tool));
        finish(
            &task_runtime,
            &task_sink,
            &viewer,
            &task_prepared,
            &task_call,
            &task_name,
            &task_id2,
            &task_options,
            outcome,
        );
    });
    if let Some(wait) = wait {
        if let Ok(Ok(outcome)) = tokio::time::timeout(wait, &mut rx).await {
            let viewer = runtime.viewer(Some(&*tool));
            return runtime.report(sink, &viewer, prepared, id, &options, outcome);
        }
    }
    let viewer = runtime.viewer(Some(&*tool));
    let text = format!("Background task started. Task ID: {task_id}");
    // The placeholder is the runtime's text, not the tool's output: an output transform (which
    // runs on the typed output) cannot apply to it, and every view shows it as it is (it holds
    // nothing but the task id).
    let placeholder = RunEvent::ToolResult {
        tool_call_id: id.to_owned(),
        tool_name: name.clone(),
        result: serde_json::Value::String(text.clone()),
        model_output: Some(ModelOutput::Text(text)),
    };
    sink.send(super::Event::unchanged(placeholder));
    sink.send(viewer.event(
        RunEvent::BackgroundTaskStarted {
            tool_call_id: id.to_owned(),
            tool_name: name.clone(),
            task_id: task_id.clone(),
        },
        None,
    ));
    // From here the task reports; an outcome that arrived meanwhile is reported now.
    rx.close();
    if let Ok(outcome) = rx.try_recv() {
        finish(runtime, sink, &viewer, prepared, id, &name, &task_id, &options, outcome);
    }
}

#[allow(clippy::too_many_arguments)]
fn finish(
    runtime: &Runtime,
    sink: &Sink,
    viewer: &super::Viewer<'_>,
    prepared: &Prepared,
    id: &str,
    name: &str,
    task_id: &str,
    options: &CallOptions,
    outcome: Outcome,
) {
    match outcome {
        Outcome::Done(out) => {
            // The task resolved the call: an approved call leaves the pending store now.
            runtime.forget(id);
            let event = RunEvent::BackgroundTaskCompleted {
                tool_call_id: id.to_owned(),
                tool_name: name.to_owned(),
                task_id: task_id.to_owned(),
                result: out.value(),
                model_output: out.model_output.clone(),
            };
            sink.send(viewer.event(event, Some(&out)));
        }
        Outcome::Failed(e) if e.is_suspended() => runtime.report(sink, viewer, prepared, id, options, Outcome::Failed(e)),
        Outcome::Failed(e) => {
            runtime.forget(id);
            let event = RunEvent::BackgroundTaskFailed {
                tool_call_id: id.to_owned(),
                tool_name: name.to_owned(),
                task_id: task_id.to_owned(),
                error: e.to_json(),
            };
            sink.send(viewer.event(event, None));
        }
    }
}
