//! The events of a run: what happened to a call, in order, typed.
//!
//! Owns [`RunEvent`] (the call it is about, [`CallRef`], and what happened, [`RunEventKind`]),
//! [`Event`] (an event in its raw, `display` and `transcript` views) and the serialised shape
//! of both. Raw events carry typed payloads ([`ToolOutput`], [`ToolError`]); the views carry
//! what a transform made of them ([`ShownOutput`], a JSON value), which is why a view is a
//! [`ShownEvent`]. Both serialise to the one documented wire shape
//! (`{"type": "tool-result", "tool_call_id", "tool_name", "result", "model_output"?}`, …).
//! Deciding what a view shows is `views`; nothing here runs a tool.

use serde::de::DeserializeOwned;
use serde::{Deserialize, Serialize};
use serde_json::Value;

use crate::error::ToolError;
use crate::model_output::ModelOutput;
use crate::spec::{TransformPhase, TransformTarget};
use crate::tool::ToolOutput;

/// The call an event is about.
#[derive(Debug, Clone, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub struct CallRef {
    /// The call id.
    pub tool_call_id: String,
    /// The tool.
    pub tool_name: String,
}

impl CallRef {
    /// The call `tool_call_id` of tool `tool_name`.
    pub fn new(tool_call_id: impl Into<String>, tool_name: impl Into<String>) -> Self {
        CallRef {
            tool_call_id: tool_call_id.into(),
            tool_name: tool_name.into(),
        }
    }

    /// An event about this call.
    pub fn event<O, E>(&self, kind: RunEventKind<O, E>) -> RunEvent<O, E> {
        RunEvent { call: self.clone(), kind }
    }
}

/// A successful output as a view shows it: the (possibly rewritten) result, and what the model
/// receives when it differs from the raw output (a view that rewrites the output drops it).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ShownOutput {
    /// The output.
    pub result: Value,
    /// What the model receives, when it differs from the raw output.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub model_output: Option<ModelOutput>,
}

impl From<&ToolOutput> for ShownOutput {
    fn from(out: &ToolOutput) -> Self {
        ShownOutput {
            result: out.value(),
            model_output: out.model_output().cloned(),
        }
    }
}

/// How an error payload is written in an event (`error`): a [`ToolError`] as its JSON shape,
/// a view's rewritten error as the value it is.
pub trait ErrorPayload: Sized {
    /// The value written.
    fn to_wire(&self) -> Value;
    /// Read back from the value written.
    fn from_wire(value: Value) -> Self;
}

impl ErrorPayload for ToolError {
    fn to_wire(&self) -> Value {
        self.to_json()
    }

    fn from_wire(value: Value) -> Self {
        match serde_json::from_value(value.clone()) {
            Ok(e) => e,
            Err(_) => ToolError::new(value.get("message").and_then(Value::as_str).unwrap_or("The tool failed.")),
        }
    }
}

impl ErrorPayload for Value {
    fn to_wire(&self) -> Value {
        self.clone()
    }

    fn from_wire(value: Value) -> Self {
        value
    }
}

mod wire {
    use super::ErrorPayload;
    use serde::{Deserialize, Deserializer, Serialize, Serializer};

    pub fn serialize<E: ErrorPayload, S: Serializer>(error: &E, s: S) -> Result<S::Ok, S::Error> {
        error.to_wire().serialize(s)
    }

    pub fn deserialize<'de, E: ErrorPayload, D: Deserializer<'de>>(d: D) -> Result<E, D::Error> {
        serde_json::Value::deserialize(d).map(E::from_wire)
    }
}

/// What happened to a call. `O` is the output payload and `E` the error payload: typed in a
/// raw event ([`RunEvent`]), as shown in a view ([`ShownEvent`]).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "type", rename_all = "kebab-case")]
#[serde(bound(serialize = "O: Serialize, E: ErrorPayload", deserialize = "O: DeserializeOwned, E: ErrorPayload"))]
pub enum RunEventKind<O = ToolOutput, E = ToolError> {
    /// The model started streaming a call's input.
    InputStreamingStart,
    /// A piece of a call's input (the text delta in the raw view).
    InputDelta {
        /// The delta.
        delta: Value,
    },
    /// The input is complete (validated arguments, or the model's own when they were refused).
    ToolCall {
        /// The arguments.
        args: Value,
    },
    /// The call waits for a person's approval; it has not run.
    ToolCallApproval {
        /// The arguments to approve.
        args: Value,
        /// What a resume must send: `{approved: bool, reason?: string}`.
        resume_schema: Value,
    },
    /// The tool suspended itself and waits for resume data.
    ToolCallSuspended {
        /// What the tool passed to `suspend`.
        suspend_payload: Value,
        /// The call's arguments.
        args: Value,
        /// What resume data must match, when the tool declares a `resume` type.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        resume_schema: Option<Value>,
    },
    /// A client-side tool's call waits for its result from the application (nothing in this
    /// process runs it).
    ToolCallAwaitingResult {
        /// The call's arguments.
        args: Value,
        /// What the result must match, when the tool declares an output schema.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        output_schema: Option<Value>,
    },
    /// A waiting call continues (approved, declined or resumed with data).
    ToolCallResumed {
        /// The decision or the resume data.
        resume_data: Value,
    },
    /// The call succeeded (or was declined: the model receives the decline as its result).
    ToolResult {
        /// The output.
        #[serde(flatten)]
        output: O,
    },
    /// The call failed, was refused or was aborted: the model receives `error`.
    ToolError {
        /// The error.
        #[serde(with = "wire")]
        error: E,
    },
    /// A background task started; the call's result is a placeholder naming it.
    BackgroundTaskStarted {
        /// The task.
        task_id: String,
    },
    /// A background task finished: its result replaces the placeholder.
    BackgroundTaskCompleted {
        /// The task.
        task_id: String,
        /// The output.
        #[serde(flatten)]
        output: O,
    },
    /// A background task failed after its retries.
    BackgroundTaskFailed {
        /// The task.
        task_id: String,
        /// The last error.
        #[serde(with = "wire")]
        error: E,
    },
    /// A chunk the tool wrote through its writer.
    Custom {
        /// The chunk.
        data: Value,
    },
}

/// One thing that happened to a call, in order: which call, and what.
///
/// ```
/// use tool_core::runtime::{CallRef, RunEvent, RunEventKind};
/// use tool_core::ToolOutput;
/// let event: RunEvent = CallRef::new("call_1", "add").event(RunEventKind::ToolResult { output: ToolOutput::new(5.into()) });
/// assert_eq!(
///     serde_json::to_value(&event).unwrap(),
///     serde_json::json!({"type": "tool-result", "tool_call_id": "call_1", "tool_name": "add", "result": 5})
/// );
/// ```
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(bound(serialize = "O: Serialize, E: ErrorPayload", deserialize = "O: DeserializeOwned, E: ErrorPayload"))]
pub struct RunEvent<O = ToolOutput, E = ToolError> {
    /// The call.
    #[serde(flatten)]
    pub call: CallRef,
    /// What happened.
    #[serde(flatten)]
    pub kind: RunEventKind<O, E>,
}

/// An event as a view shows it: payloads are what the transforms made of them.
pub type ShownEvent = RunEvent<ShownOutput, Value>;

impl<O, E> RunEvent<O, E> {
    /// The call this event belongs to.
    pub fn tool_call_id(&self) -> &str {
        &self.call.tool_call_id
    }

    /// The tool this event is about.
    pub fn tool_name(&self) -> &str {
        &self.call.tool_name
    }

    /// The event's type name (`tool-result`, …), as serialised.
    pub fn type_name(&self) -> &'static str {
        match self.kind {
            RunEventKind::InputStreamingStart => "input-streaming-start",
            RunEventKind::InputDelta { .. } => "input-delta",
            RunEventKind::ToolCall { .. } => "tool-call",
            RunEventKind::ToolCallApproval { .. } => "tool-call-approval",
            RunEventKind::ToolCallSuspended { .. } => "tool-call-suspended",
            RunEventKind::ToolCallAwaitingResult { .. } => "tool-call-awaiting-result",
            RunEventKind::ToolCallResumed { .. } => "tool-call-resumed",
            RunEventKind::ToolResult { .. } => "tool-result",
            RunEventKind::ToolError { .. } => "tool-error",
            RunEventKind::BackgroundTaskStarted { .. } => "background-task-started",
            RunEventKind::BackgroundTaskCompleted { .. } => "background-task-completed",
            RunEventKind::BackgroundTaskFailed { .. } => "background-task-failed",
            RunEventKind::Custom { .. } => "custom",
        }
    }
}

impl<O, E> RunEventKind<O, E> {
    /// The same event with its payloads mapped: each JSON payload by `value` (given the
    /// transform phase it belongs to), the output by `output`, the error by `error`. `None`
    /// from a mapper drops the event. Ids, the task id, resume schemas and custom chunks are
    /// kept as they are.
    pub(crate) fn try_map<O2, E2>(
        &self,
        mut value: impl FnMut(TransformPhase, &Value) -> Option<Value>,
        output: impl FnOnce(&O) -> O2,
        error: impl FnOnce(&E) -> Option<E2>,
    ) -> Option<RunEventKind<O2, E2>> {
        use RunEventKind as K;
        use TransformPhase as P;
        Some(match self {
            K::InputStreamingStart => K::InputStreamingStart,
            K::InputDelta { delta } => K::InputDelta {
                delta: value(P::InputDelta, delta)?,
            },
            K::ToolCall { args } => K::ToolCall {
                args: value(P::Input, args)?,
            },
            K::ToolCallApproval { args, resume_schema } => K::ToolCallApproval {
                args: value(P::Approval, args)?,
                resume_schema: resume_schema.clone(),
            },
            K::ToolCallSuspended {
                suspend_payload,
                args,
                resume_schema,
            } => K::ToolCallSuspended {
                suspend_payload: value(P::Suspend, suspend_payload)?,
                args: value(P::Input, args)?,
                resume_schema: resume_schema.clone(),
            },
            K::ToolCallAwaitingResult { args, output_schema } => K::ToolCallAwaitingResult {
                args: value(P::Input, args)?,
                output_schema: output_schema.clone(),
            },
            K::ToolCallResumed { resume_data } => K::ToolCallResumed {
                resume_data: value(P::Resume, resume_data)?,
            },
            K::ToolResult { output: o } => K::ToolResult { output: output(o) },
            K::ToolError { error: e } => K::ToolError { error: error(e)? },
            K::BackgroundTaskStarted { task_id } => K::BackgroundTaskStarted { task_id: task_id.clone() },
            K::BackgroundTaskCompleted { task_id, output: o } => K::BackgroundTaskCompleted {
                task_id: task_id.clone(),
                output: output(o),
            },
            K::BackgroundTaskFailed { task_id, error: e } => K::BackgroundTaskFailed {
                task_id: task_id.clone(),
                error: error(e)?,
            },
            K::Custom { data } => K::Custom { data: data.clone() },
        })
    }
}

impl RunEvent {
    /// The event as a view shows it when nothing is rewritten.
    pub fn shown(&self) -> ShownEvent {
        let kind = self
            .kind
            .try_map(|_, v| Some(v.clone()), |o: &ToolOutput| o.into(), |e| Some(e.to_json()));
        match kind {
            Some(kind) => self.call.event(kind),
            None => unreachable!("no mapper above drops an event"),
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
    pub display: Option<ShownEvent>,
    /// What a stored transcript may keep.
    pub transcript: Option<ShownEvent>,
}

impl Event {
    /// An event the runtime itself wrote (a placeholder, a decline), the same in every view.
    pub(crate) fn unchanged(raw: RunEvent) -> Event {
        let shown = raw.shown();
        Event {
            display: Some(shown.clone()),
            transcript: Some(shown),
            raw,
        }
    }

    /// The event in one view.
    pub fn view(&self, target: TransformTarget) -> Option<&ShownEvent> {
        match target {
            TransformTarget::Display => self.display.as_ref(),
            TransformTarget::Transcript => self.transcript.as_ref(),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn the_wire_shape_is_flat_and_reads_back() {
        let call = CallRef::new("c1", "t");
        let error: RunEvent = call.event(RunEventKind::ToolError {
            error: ToolError::new("boom").for_tool("t"),
        });
        let wire = serde_json::to_value(&error).unwrap();
        assert_eq!(
            wire,
            json!({"type": "tool-error", "tool_call_id": "c1", "tool_name": "t",
                   "error": {"error": true, "kind": "execution", "message": "boom", "tool": "t"}})
        );
        assert_eq!(serde_json::from_value::<RunEvent>(wire).unwrap(), error);
        let result: RunEvent = call.event(RunEventKind::ToolResult {
            output: ToolOutput::new(json!(5)).with_model_output(ModelOutput::Text("five".into())),
        });
        let wire = serde_json::to_value(&result).unwrap();
        assert_eq!(
            wire,
            json!({"type": "tool-result", "tool_call_id": "c1", "tool_name": "t", "result": 5,
                   "model_output": {"type": "text", "value": "five"}})
        );
        assert_eq!(serde_json::to_value(result.shown()).unwrap(), wire);
        let start: RunEvent = call.event(RunEventKind::InputStreamingStart);
        assert_eq!(
            serde_json::to_value(&start).unwrap(),
            json!({"type": "input-streaming-start", "tool_call_id": "c1", "tool_name": "t"})
        );
        assert_eq!(start.type_name(), "input-streaming-start");
    }
}
