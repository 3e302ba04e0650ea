//! Background tasks: an opted-in tool answers at once with a placeholder and finishes later.
//!
//! Owns [`BackgroundOverride`] (per-call tuning of a tool that opted in), the plan for one call
//! (settings merged, a slot taken from the runtime's limit, or none: then the call runs in the
//! foreground) and the task itself: attempts under the per-attempt timeout, retries, and the
//! completion or failure event that replaces the placeholder.

use std::time::Duration;

use tokio::sync::OwnedSemaphorePermit;

use super::events::{CallRef, Event, RunEventKind};
use super::outcome::{BackgroundTask, Outcome, Sink};
use super::views::Viewer;
use super::{Inner, Runtime};
use crate::call::Finished;
use crate::context::{CallData, CallEnv};
use crate::error::{ErrorKind, ToolError};
use crate::model_output::ModelOutput;
use crate::registry::OwnedPrepared;
use crate::spec::{BackgroundOverride, ToolSpec};
use crate::tool::ToolOutput;

/// The settings of one background call.
pub(crate) struct Settings {
    pub(crate) timeout: Option<Duration>,
    pub(crate) max_retries: u32,
    pub(crate) wait: Option<Duration>,
}

/// The settings of one background call, with its slot.
pub(crate) struct Plan {
    settings: Settings,
    permit: OwnedSemaphorePermit,
}

/// Whether the tool gathers its input in the foreground before it goes to the background
/// (`background(asks_first)`): its first run may suspend to ask; its resumed run is queued.
pub(crate) fn asks_first(spec: &ToolSpec) -> bool {
    spec.policy.background.as_ref().is_some_and(|b| b.asks_first)
}

/// The settings of a call of a tool that opted in, merged with the call's override. `None`:
/// foreground (not opted in, or disabled for this call).
pub(crate) fn settings(spec: &ToolSpec, over: Option<&BackgroundOverride>) -> Option<Settings> {
    let base = spec.policy.background.as_ref().filter(|b| b.enabled || b.required);
    let Some(base) = base else {
        if over.is_some() {
            tracing::debug!(tool = %spec.id, "a background override was given for a tool that did not opt in; ignored");
        }
        return None;
    };
    let over = over.cloned().unwrap_or_default();
    if over.enabled == Some(false) {
        // A task-required tool never runs in the foreground (its author said it must not block).
        if !base.required {
            return None;
        }
        tracing::debug!(tool = %spec.id, "a foreground override was given for a task-required tool; ignored");
    }
    Some(Settings {
        timeout: over.timeout_ms.or(base.timeout_ms).map(Duration::from_millis),
        max_retries: over.max_retries.or(base.max_retries).unwrap_or(0),
        wait: over.wait_timeout_ms.or(base.wait_timeout_ms).map(Duration::from_millis),
    })
}

/// Whether this call goes to the background, and how. `None`: foreground (not opted in,
/// disabled for this call, or every slot taken).
pub(crate) fn plan(inner: &Inner, spec: &ToolSpec, over: Option<&BackgroundOverride>) -> Option<Plan> {
    let settings = settings(spec, over)?;
    let Ok(permit) = inner.background.clone().try_acquire_owned() else {
        tracing::info!(tool = %spec.id, "every background slot is taken; running in the foreground");
        return None;
    };
    Some(Plan { settings, permit })
}

/// A new task id.
pub(crate) fn new_task_id() -> String {
    format!("task_{}", crate::call::new_call_id().trim_start_matches("call_"))
}

/// Answers a backgrounded call: the placeholder result, the `background-task-started` event
/// and the [`Outcome::Backgrounded`] end of the run's first part.
pub(crate) fn placeholder(runtime: &Runtime, sink: &Sink, call: &CallRef, tool: &dyn crate::tool::Tool, task_id: &str) {
    let text = format!("Background task started. Task ID: {task_id}");
    // The placeholder is the runtime's text, not the tool's output: an output transform (which
    // runs on the typed output) cannot apply to it, and every view shows it as it is (it holds
    // nothing but the task id).
    let output = ToolOutput::new(serde_json::Value::String(text.clone())).with_model_output(ModelOutput::Text(text));
    sink.send(Event::unchanged(call.event(RunEventKind::ToolResult { output })));
    let started = call.event(RunEventKind::BackgroundTaskStarted {
        task_id: task_id.to_owned(),
    });
    sink.send(runtime.viewer(Some(tool)).event(started));
    sink.end(Outcome::Backgrounded(BackgroundTask {
        task_id: task_id.to_owned(),
    }));
}

/// Whether another attempt may help: failures of the tool itself and timeouts, not invalid
/// data or a caller's cancellation.
fn retryable(e: &ToolError, env: &CallEnv) -> bool {
    match e.kind() {
        ErrorKind::Execution | ErrorKind::Panic => true,
        ErrorKind::Aborted => !env.cancellation.as_ref().is_some_and(|c| c.is_cancelled()),
        _ => false,
    }
}

type Ended = Result<Finished, ToolError>;

async fn attempts(
    receipts: &std::sync::Arc<dyn super::ReceiptStore>,
    prepared: &OwnedPrepared,
    (data, env): (&std::sync::Arc<CallData>, &CallEnv),
    plan_timeout: Option<Duration>,
    max_retries: u32,
) -> Ended {
    let mut attempt = 0;
    loop {
        let mut this = env.clone();
        // Each attempt gets its own token, so a timed-out attempt does not cancel the next.
        let parent = env.cancellation.clone().unwrap_or_default();
        this.cancellation = Some(parent.child_token());
        // The tool's per-attempt timeout caps the caller's, never extends it.
        this.timeout = match (plan_timeout, env.timeout) {
            (Some(a), Some(b)) => Some(a.min(b)),
            (a, b) => a.or(b),
        };
        // Each attempt runs the same call: one idempotency key, exactly once when declared.
        match super::once::run(receipts, prepared, data, this, None).await {
            Err(e) if attempt < max_retries && retryable(&e, env) => {
                attempt += 1;
                // The error itself is not logged: its message may quote what the views hide.
                tracing::info!(tool = %prepared.tool().spec().id, attempt, kind = e.kind().as_str(), "background attempt failed; retrying");
            }
            ended => return ended,
        }
    }
}

/// Runs a call as a background task: the result is a placeholder unless the task finishes
/// within the wait timeout.
pub(crate) async fn run(
    runtime: &Runtime,
    sink: &Sink,
    prepared: &OwnedPrepared,
    call: &CallRef,
    (data, env): (std::sync::Arc<CallData>, CallEnv),
    plan: Plan,
) {
    let task_id = new_task_id();
    let (tx, mut rx) = tokio::sync::oneshot::channel::<Ended>();
    let tool = prepared.tool().clone();
    let Plan {
        settings: Settings {
            timeout,
            max_retries,
            wait,
        },
        permit,
    } = plan;
    let task = Task {
        runtime: runtime.clone(),
        sink: sink.clone(),
        prepared: prepared.clone(),
        call: call.clone(),
        data: data.clone(),
        task_id: task_id.clone(),
    };
    // The task stays in the call's span: its attempts are the call's execution.
    tokio::spawn(tracing::Instrument::in_current_span(async move {
        let _slot = permit;
        let receipts = task.runtime.inner.receipts.clone();
        let ended = attempts(&receipts, &task.prepared, (&task.data, &env), timeout, max_retries).await;
        // If the caller is still waiting, it reports the result as an ordinary one.
        if let Err(ended) = tx.send(ended) {
            task.finish(ended).await;
        }
    }));
    if let Some(wait) = wait
        && let Ok(Ok(ended)) = tokio::time::timeout(wait, &mut rx).await
    {
        let viewer = runtime.viewer(Some(&*tool));
        return runtime.report(sink, &viewer, prepared, call, &data, ended).await;
    }
    placeholder(runtime, sink, call, &*tool, &task_id);
    // From here the task reports; an outcome that arrived meanwhile is reported now.
    rx.close();
    if let Ok(ended) = rx.try_recv() {
        let task = Task {
            runtime: runtime.clone(),
            sink: sink.clone(),
            prepared: prepared.clone(),
            call: call.clone(),
            data,
            task_id,
        };
        task.finish(ended).await;
    }
}

/// A background task that reports its own end.
struct Task {
    runtime: Runtime,
    sink: Sink,
    prepared: OwnedPrepared,
    call: CallRef,
    data: std::sync::Arc<CallData>,
    task_id: String,
}

impl Task {
    async fn finish(self, ended: Ended) {
        let tool = self.prepared.tool().clone();
        let viewer: Viewer<'_> = self.runtime.viewer(Some(&*tool));
        let task_id = self.task_id.clone();
        match ended {
            Ok(Finished::Output(output)) => {
                // The task resolved the call: an approved call leaves the pending store now.
                self.runtime.forget(&self.call.tool_call_id).await;
                let event = self.call.event(RunEventKind::BackgroundTaskCompleted {
                    task_id,
                    output: output.clone(),
                });
                self.sink.send(viewer.event(event));
                self.sink.end(Outcome::Done(output));
            }
            suspended @ Ok(Finished::Suspended(_)) => {
                self.runtime
                    .report(&self.sink, &viewer, &self.prepared, &self.call, &self.data, suspended)
                    .await
            }
            Err(error) => {
                crate::call::record_error(&tracing::Span::current(), &error);
                self.runtime.forget(&self.call.tool_call_id).await;
                let event = self.call.event(RunEventKind::BackgroundTaskFailed {
                    task_id,
                    error: error.clone(),
                });
                self.sink.send(viewer.event(event));
                self.sink.end(Outcome::Failed(error));
            }
        }
    }
}
