//! The events of a run and their three views.
//!
//! Owns [`RunEvent`] (one type for every event a call produces, serde-serialisable), [`Event`]
//! (an event in its raw, `display` and `transcript` views), the [`TransformPolicy`] a runtime
//! may apply to every tool, and the one function that decides what a view shows
//! ([`Viewer`]). Views fail closed: a configured transform that yields nothing, fails or
//! panics shows a placeholder (input deltas are dropped), never the raw payload.

use serde::{Deserialize, Serialize};
use serde_json::{json, Value};

use crate::call::catch_panic;
use crate::model_output::ModelOutput;
use crate::spec::{ToolSpec, TransformPhase, TransformTarget};
use crate::tool::{Tool, ToolOutput};

/// One thing that happened to a call, in order.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "type", rename_all = "kebab-case")]
pub enum RunEvent {
    /// The model started streaming a call's input.
    InputStreamingStart {
        /// The call id.
        tool_call_id: String,
        /// The tool.
        tool_name: String,
    },
    /// A piece of a call's input (the text delta in the raw view).
    InputDelta {
        /// The call id.
        tool_call_id: String,
        /// The tool.
        tool_name: String,
        /// The delta.
        delta: Value,
    },
    /// The input is complete (validated arguments, or the model's own when they were refused).
    ToolCall {
        /// The call id.
        tool_call_id: String,
        /// The tool.
        tool_name: String,
        /// The arguments.
        args: Value,
    },
    /// The call waits for a person's approval; it has not run.
    ToolCallApproval {
        /// The call id: approve or decline exactly this call.
        tool_call_id: String,
        /// The tool.
        tool_name: String,
        /// The arguments to approve.
        args: Value,
        /// What a resume must send: `{approved: bool, reason?: string}`.
        resume_schema: Value,
    },
    /// The tool suspended itself and waits for resume data.
    ToolCallSuspended {
        /// The call id: resume exactly this call.
        tool_call_id: String,
        /// The tool.
        tool_name: String,
        /// What the tool passed to `suspend`.
        suspend_payload: Value,
        /// The call's arguments.
        args: Value,
        /// What resume data must match, when the tool declares a `resume` type.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        resume_schema: Option<Value>,
    },
    /// A waiting call continues (approved, declined or resumed with data).
    ToolCallResumed {
        /// The call id.
        tool_call_id: String,
        /// The tool.
        tool_name: String,
        /// The decision or the resume data.
        resume_data: Value,
    },
    /// The call succeeded.
    ToolResult {
        /// The call id.
        tool_call_id: String,
        /// The tool.
        tool_name: String,
        /// The raw output.
        result: Value,
        /// What the model receives, when it differs from the raw output.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        model_output: Option<ModelOutput>,
    },
    /// The call failed, was refused or was aborted: the model receives `error`.
    ToolError {
        /// The call id.
        tool_call_id: String,
        /// The tool.
        tool_name: String,
        /// The error's JSON shape.
        error: Value,
    },
    /// A background task started; the call's result is a placeholder naming it.
    BackgroundTaskStarted {
        /// The call id.
        tool_call_id: String,
        /// The tool.
        tool_name: String,
        /// The task.
        task_id: String,
    },
    /// A background task finished: its result replaces the placeholder.
    BackgroundTaskCompleted {
        /// The call id.
        tool_call_id: String,
        /// The tool.
        tool_name: String,
        /// The task.
        task_id: String,
        /// The raw output.
        result: Value,
        /// What the model receives, when it differs from the raw output.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        model_output: Option<ModelOutput>,
    },
    /// A background task failed after its retries.
    BackgroundTaskFailed {
        /// The call id.
        tool_call_id: String,
        /// The tool.
        tool_name: String,
        /// The task.
        task_id: String,
        /// The last error's JSON shape.
        error: Value,
    },
    /// A chunk the tool wrote through its writer.
    Custom {
        /// The call id.
        tool_call_id: String,
        /// The tool.
        tool_name: String,
        /// The chunk.
        data: Value,
    },
}

impl RunEvent {
    /// The call this event belongs to.
    pub fn tool_call_id(&self) -> &str {
        match self {
            RunEvent::InputStreamingStart { tool_call_id, .. }
            | RunEvent::InputDelta { tool_call_id, .. }
            | RunEvent::ToolCall { tool_call_id, .. }
            | RunEvent::ToolCallApproval { tool_call_id, .. }
            | RunEvent::ToolCallSuspended { tool_call_id, .. }
            | RunEvent::ToolCallResumed { tool_call_id, .. }
            | RunEvent::ToolResult { tool_call_id, .. }
            | RunEvent::ToolError { tool_call_id, .. }
            | RunEvent::BackgroundTaskStarted { tool_call_id, .. }
            | RunEvent::BackgroundTaskCompleted { tool_call_id, .. }
            | RunEvent::BackgroundTaskFailed { tool_call_id, .. }
            | RunEvent::Custom { tool_call_id, .. } => tool_call_id,
        }
    }

    /// The event's type name (`tool-result`, …).
    pub fn kind(&self) -> &'static str {
        match self {
            RunEvent::InputStreamingStart { .. } => "input-streaming-start",
            RunEvent::InputDelta { .. } => "input-delta",
            RunEvent::ToolCall { .. } => "tool-call",
            RunEvent::ToolCallApproval { .. } => "tool-call-approval",
            RunEvent::ToolCallSuspended { .. } => "tool-call-suspended",
            RunEvent::ToolCallResumed { .. } => "tool-call-resumed",
            RunEvent::ToolResult { .. } => "tool-result",
            RunEvent::ToolError { .. } => "tool-error",
            RunEvent::BackgroundTaskStarted { .. } => "background-task-started",
            RunEvent::BackgroundTaskCompleted { .. } => "background-task-completed",
            RunEvent::BackgroundTaskFailed { .. } => "background-task-failed",
            RunEvent::Custom { .. } => "custom",
        }
    }
}

/// An event in its three views. `display` and `transcript` are `None` where the view drops
/// the event (input deltas of a tool whose input that view transforms).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Event {
    /// What happened, untransformed: for the runtime and the application.
    pub raw: RunEvent,
    /// What a user interface may show.
    pub display: Option<RunEvent>,
    /// What a stored transcript may keep.
    pub transcript: Option<RunEvent>,
}

impl Event {
    /// An event the runtime itself wrote (a placeholder, a decline), the same in every view.
    pub(crate) fn unchanged(raw: RunEvent) -> Event {
        Event {
            display: Some(raw.clone()),
            transcript: Some(raw.clone()),
            raw,
        }
    }

    /// The event in one view.
    pub fn view(&self, target: TransformTarget) -> Option<&RunEvent> {
        match target {
            TransformTarget::Display => self.display.as_ref(),
            TransformTarget::Transcript => self.transcript.as_ref(),
        }
    }
}

/// Transforms a runtime applies to every tool, before the tool's own (the first value wins).
///
/// When [`configures`](TransformPolicy::configures) says yes for a target and phase, that view
/// never shows the raw payload: if neither the policy nor the tool yields a value, the view
/// shows a placeholder.
pub trait TransformPolicy: Send + Sync + 'static {
    /// Whether this policy rewrites `phase` payloads of `tool` for `target`.
    fn configures(&self, tool: &ToolSpec, target: TransformTarget, phase: TransformPhase) -> bool;
    /// Rewrites a payload; `None` leaves it to the tool's own transform.
    fn transform(&self, tool: &ToolSpec, target: TransformTarget, phase: TransformPhase, payload: &Value) -> Option<Result<Value, String>>;
}

/// A policy that removes secret-named keys (password, secret, token, apiKey, api_key, auth,
/// credential) from every payload of every tool (known to the runtime or not) in both views,
/// and drops input deltas (which cannot be redacted before they are complete). Arguments that
/// are not JSON (shown as their text) have no keys to redact: the views show the placeholder.
#[derive(Debug, Clone, Copy, Default)]
pub struct RedactSecrets;

impl TransformPolicy for RedactSecrets {
    fn configures(&self, _: &ToolSpec, _: TransformTarget, _: TransformPhase) -> bool {
        true
    }

    fn transform(&self, _: &ToolSpec, _: TransformTarget, phase: TransformPhase, payload: &Value) -> Option<Result<Value, String>> {
        match phase {
            TransformPhase::InputDelta => None,
            // An input root is an object: a string is the text of arguments that were not JSON.
            TransformPhase::Input if payload.is_string() => Some(Err("arguments that are not JSON cannot be redacted".into())),
            _ => Some(Ok(crate::call::redact(payload))),
        }
    }
}

/// The name of a phase in placeholders (`inputDelta`, as the reference spells it).
fn phase_name(phase: TransformPhase) -> &'static str {
    match phase {
        TransformPhase::Input => "input",
        TransformPhase::InputDelta => "inputDelta",
        TransformPhase::Output => "output",
        TransformPhase::Error => "error",
        TransformPhase::Approval => "approval",
        TransformPhase::Suspend => "suspend",
        TransformPhase::Resume => "resume",
    }
}

/// The payload shown in place of one that could not be transformed.
pub fn placeholder(phase: TransformPhase) -> Value {
    json!({ "message": format!("Tool {} payload unavailable", phase_name(phase)) })
}

/// Decides what each view shows for one tool.
#[derive(Clone, Copy)]
pub(crate) struct Viewer<'a> {
    pub(crate) tool: Option<&'a dyn Tool>,
    pub(crate) policy: Option<&'a dyn TransformPolicy>,
}

/// A viewer at work on one event. `spec` is what the policy is asked about: the tool's, or for
/// a call to a tool the runtime does not have, a stand-in naming it (the policy still applies
/// to what the model sent).
struct Scope<'a> {
    tool: Option<&'a dyn Tool>,
    spec: Option<&'a ToolSpec>,
    policy: Option<&'a dyn TransformPolicy>,
}

/// The tool an event is about.
fn tool_name(e: &RunEvent) -> &str {
    match e {
        RunEvent::InputStreamingStart { tool_name, .. }
        | RunEvent::InputDelta { tool_name, .. }
        | RunEvent::ToolCall { tool_name, .. }
        | RunEvent::ToolCallApproval { tool_name, .. }
        | RunEvent::ToolCallSuspended { tool_name, .. }
        | RunEvent::ToolCallResumed { tool_name, .. }
        | RunEvent::ToolResult { tool_name, .. }
        | RunEvent::ToolError { tool_name, .. }
        | RunEvent::BackgroundTaskStarted { tool_name, .. }
        | RunEvent::BackgroundTaskCompleted { tool_name, .. }
        | RunEvent::BackgroundTaskFailed { tool_name, .. }
        | RunEvent::Custom { tool_name, .. } => tool_name,
    }
}

/// What a view shows for one payload.
enum Shown {
    Raw,
    Value(Value),
    Dropped,
}

impl Scope<'_> {
    fn configured(&self, target: TransformTarget, phase: TransformPhase) -> bool {
        let Some(spec) = self.spec else {
            return false;
        };
        spec.has_transform(target, phase)
            || self
                .policy
                .is_some_and(|p| catch_panic(|| p.configures(spec, target, phase)).unwrap_or(true))
    }

    /// The policy's value, else the tool's, else the placeholder (or nothing, for deltas).
    fn transformed(&self, target: TransformTarget, phase: TransformPhase, payload: &Value, own: Option<Result<Value, String>>) -> Shown {
        let policy = match (self.policy, self.spec) {
            (Some(p), Some(spec)) if catch_panic(|| p.configures(spec, target, phase)).unwrap_or(true) => {
                catch_panic(|| p.transform(spec, target, phase, payload)).unwrap_or_else(|e| Some(Err(e)))
            }
            _ => None,
        };
        // `#[tool]` transforms catch their own panics; a hand-written `Tool`'s may not.
        let own = || match own {
            Some(v) => Some(v),
            None => self
                .tool
                .and_then(|t| catch_panic(|| t.transform(target, phase, payload)).unwrap_or_else(|e| Some(Err(e)))),
        };
        match policy {
            Some(Ok(v)) => Shown::Value(v),
            _ => match own() {
                Some(Ok(v)) => Shown::Value(v),
                _ if phase == TransformPhase::InputDelta => Shown::Dropped,
                _ => Shown::Value(placeholder(phase)),
            },
        }
    }

    /// What `target` shows for a payload of `phase`. Phases derived from the input fall back
    /// on the input's transform: a view that hides the input never shows it in deltas,
    /// approvals or suspended calls, and a view that hides input or output never shows errors
    /// raw (they quote both).
    fn show(&self, target: TransformTarget, phase: TransformPhase, payload: &Value, own: Option<Result<Value, String>>) -> Shown {
        if self.configured(target, phase) {
            return self.transformed(target, phase, payload, own);
        }
        let input_hidden = self.configured(target, TransformPhase::Input);
        match phase {
            TransformPhase::InputDelta if input_hidden => Shown::Dropped,
            TransformPhase::Approval if input_hidden => self.transformed(target, TransformPhase::Input, payload, None),
            TransformPhase::Error if input_hidden || self.configured(target, TransformPhase::Output) => {
                Shown::Value(placeholder(TransformPhase::Error))
            }
            _ => Shown::Raw,
        }
    }

    fn field(&self, target: TransformTarget, phase: TransformPhase, payload: &Value, own: Option<Result<Value, String>>) -> Option<Value> {
        match self.show(target, phase, payload, own) {
            Shown::Raw => Some(payload.clone()),
            Shown::Value(v) => Some(v),
            Shown::Dropped => None,
        }
    }

    /// The event in one view.
    fn view_of(&self, raw: &RunEvent, target: TransformTarget, output: Option<&ToolOutput>) -> Option<RunEvent> {
        use TransformPhase as P;
        let mut e = raw.clone();
        let own_output = || {
            output.and_then(|o| {
                if target == TransformTarget::Display {
                    o.display.clone()
                } else {
                    o.transcript.clone()
                }
            })
        };
        match &mut e {
            RunEvent::InputStreamingStart { .. } | RunEvent::BackgroundTaskStarted { .. } | RunEvent::Custom { .. } => {}
            RunEvent::InputDelta { delta, .. } => *delta = self.field(target, P::InputDelta, delta, None)?,
            RunEvent::ToolCall { args, .. } => *args = self.field(target, P::Input, args, None)?,
            RunEvent::ToolCallApproval { args, .. } => *args = self.field(target, P::Approval, args, None)?,
            RunEvent::ToolCallSuspended { suspend_payload, args, .. } => {
                *suspend_payload = self.field(target, P::Suspend, suspend_payload, None)?;
                *args = self.field(target, P::Input, args, None)?;
            }
            RunEvent::ToolCallResumed { resume_data, .. } => *resume_data = self.field(target, P::Resume, resume_data, None)?,
            RunEvent::ToolResult { result, model_output, .. } | RunEvent::BackgroundTaskCompleted { result, model_output, .. } => {
                if let Shown::Value(v) = self.show(target, P::Output, result, own_output()) {
                    // The model output is derived from the raw output: a view that rewrites
                    // the output does not carry it.
                    *result = v;
                    *model_output = None;
                }
            }
            RunEvent::ToolError { error, .. } | RunEvent::BackgroundTaskFailed { error, .. } => {
                *error = self.field(target, P::Error, error, None)?
            }
        }
        Some(e)
    }
}

impl Viewer<'_> {
    /// The event in all three views. `output` carries the tool's typed output transforms for
    /// result events.
    pub(crate) fn event(&self, raw: RunEvent, output: Option<&ToolOutput>) -> Event {
        let stand_in = match (self.tool, self.policy) {
            (None, Some(_)) => Some(ToolSpec::new(tool_name(&raw), "", json!({"type": "object"}))),
            _ => None,
        };
        let scope = Scope {
            tool: self.tool,
            spec: self.tool.map(|t| t.spec()).or(stand_in.as_ref()),
            policy: self.policy,
        };
        Event {
            display: scope.view_of(&raw, TransformTarget::Display, output),
            transcript: scope.view_of(&raw, TransformTarget::Transcript, output),
            raw,
        }
    }
}
