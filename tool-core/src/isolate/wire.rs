//! What parent and worker say to each other: one [`Request`] as JSON on the worker's standard
//! input, then [`Message`]s as JSON lines on its standard output, the last one the answer.

use serde::{Deserialize, Serialize};
use serde_json::value::RawValue;
use serde_json::{Map, Value};

use super::ProcessLimits;
use crate::context::LogLevel;
use crate::error::ToolError;
use crate::model_output::ModelOutput;

/// One call for the worker to run.
#[derive(Debug, Serialize, Deserialize)]
pub(super) struct Request {
    /// The tool's id.
    pub tool: String,
    /// Where the parent's tool is defined (`file:line`): the worker runs only the same one.
    pub source: String,
    /// The validated input.
    pub input: Box<RawValue>,
    /// The validated request context.
    pub context: Map<String, Value>,
    /// The call's id.
    pub tool_call_id: String,
    /// What the call is (thread, resource, caller, messages), as the parent shares it.
    #[serde(default)]
    pub data: std::sync::Arc<crate::context::CallData>,
    /// The resume data of a continued call.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub resume_data: Option<Value>,
    /// The call's idempotency key.
    #[serde(default)]
    pub idempotency_key: String,
    /// Whether an earlier run holding the key was interrupted.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub after_interruption: bool,
    /// Whether anybody listens to the writer's chunks.
    pub writer: bool,
    /// Whether an MCP client asked for the call (log and progress are forwarded).
    pub mcp: bool,
    /// The limits the worker sets on itself.
    pub limits: ProcessLimits,
}

/// A successful output, every part of it.
#[derive(Debug, Serialize, Deserialize)]
pub(super) struct Output {
    /// The raw output.
    pub json: Box<RawValue>,
    /// What the model sees, when the tool has `to_model_output`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub model_output: Option<ModelOutput>,
    /// The display view of the output.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub display: Option<Result<Value, ToolError>>,
    /// The transcript view of the output.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub transcript: Option<Result<Value, ToolError>>,
}

/// One line from the worker.
#[derive(Debug, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub(super) enum Message {
    /// A chunk the body wrote.
    Chunk(Value),
    /// An MCP log message.
    Log {
        /// Its level.
        level: LogLevel,
        /// Its data.
        data: Value,
    },
    /// MCP progress.
    Progress {
        /// Progress so far.
        progress: f64,
        /// The total, when known.
        total: Option<f64>,
        /// A message.
        message: Option<String>,
    },
    /// The answer: it produced an output.
    Output(Output),
    /// The answer: it suspended itself with this payload.
    Suspended(Value),
    /// The answer: it failed.
    Failed(ToolError),
}
