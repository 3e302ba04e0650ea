//! The documented wire shape of run events, read back from what `RunEvent` serialises to.
//!
//! Tests that assert on event payloads go through this flat mirror, so they also hold the
//! serialised shape (`{"type", "tool_call_id", "tool_name", …payload}`) to what the guide and
//! the CLI's `--events` promise: a field renamed or moved in `RunEvent` fails here.

#![allow(dead_code)]

use serde::Deserialize;
use serde_json::Value;
use tool_core::ModelOutput;

/// One event as it is written.
#[derive(Debug, Clone, PartialEq, Deserialize)]
#[serde(tag = "type", rename_all = "kebab-case", deny_unknown_fields)]
pub enum Wire {
    InputStreamingStart {
        tool_call_id: String,
        tool_name: String,
    },
    InputDelta {
        tool_call_id: String,
        tool_name: String,
        delta: Value,
    },
    ToolCall {
        tool_call_id: String,
        tool_name: String,
        args: Value,
    },
    ToolCallApproval {
        tool_call_id: String,
        tool_name: String,
        args: Value,
        resume_schema: Value,
    },
    ToolCallSuspended {
        tool_call_id: String,
        tool_name: String,
        suspend_payload: Value,
        args: Value,
        #[serde(default)]
        resume_schema: Option<Value>,
    },
    ToolCallResumed {
        tool_call_id: String,
        tool_name: String,
        resume_data: Value,
    },
    ToolResult {
        tool_call_id: String,
        tool_name: String,
        result: Value,
        #[serde(default)]
        model_output: Option<ModelOutput>,
    },
    ToolError {
        tool_call_id: String,
        tool_name: String,
        error: Value,
    },
    BackgroundTaskStarted {
        tool_call_id: String,
        tool_name: String,
        task_id: String,
    },
    BackgroundTaskCompleted {
        tool_call_id: String,
        tool_name: String,
        task_id: String,
        result: Value,
        #[serde(default)]
        model_output: Option<ModelOutput>,
    },
    BackgroundTaskFailed {
        tool_call_id: String,
        tool_name: String,
        task_id: String,
        error: Value,
    },
    Custom {
        tool_call_id: String,
        tool_name: String,
        data: Value,
    },
}

/// An event (raw or a view) as it is written.
pub fn wire(event: &impl serde::Serialize) -> Wire {
    let value = serde_json::to_value(event).expect("an event serialises");
    serde_json::from_value(value.clone()).unwrap_or_else(|e| panic!("not the documented shape ({e}): {value}"))
}

impl Wire {
    pub fn tool_call_id(&self) -> &str {
        match self {
            Wire::InputStreamingStart { tool_call_id, .. }
            | Wire::InputDelta { tool_call_id, .. }
            | Wire::ToolCall { tool_call_id, .. }
            | Wire::ToolCallApproval { tool_call_id, .. }
            | Wire::ToolCallSuspended { tool_call_id, .. }
            | Wire::ToolCallResumed { tool_call_id, .. }
            | Wire::ToolResult { tool_call_id, .. }
            | Wire::ToolError { tool_call_id, .. }
            | Wire::BackgroundTaskStarted { tool_call_id, .. }
            | Wire::BackgroundTaskCompleted { tool_call_id, .. }
            | Wire::BackgroundTaskFailed { tool_call_id, .. }
            | Wire::Custom { tool_call_id, .. } => tool_call_id,
        }
    }

    /// The `type` field.
    pub fn kind(&self) -> &'static str {
        match self {
            Wire::InputStreamingStart { .. } => "input-streaming-start",
            Wire::InputDelta { .. } => "input-delta",
            Wire::ToolCall { .. } => "tool-call",
            Wire::ToolCallApproval { .. } => "tool-call-approval",
            Wire::ToolCallSuspended { .. } => "tool-call-suspended",
            Wire::ToolCallResumed { .. } => "tool-call-resumed",
            Wire::ToolResult { .. } => "tool-result",
            Wire::ToolError { .. } => "tool-error",
            Wire::BackgroundTaskStarted { .. } => "background-task-started",
            Wire::BackgroundTaskCompleted { .. } => "background-task-completed",
            Wire::BackgroundTaskFailed { .. } => "background-task-failed",
            Wire::Custom { .. } => "custom",
        }
    }
}
