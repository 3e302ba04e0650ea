//! Driving tool calls from a model's streamed response.
//!
//! Owns [`StreamRun`]: it feeds provider SSE bytes through a [`StreamDecoder`], keeps a live
//! [`PartialJson`] preview per call, fires each tool's lifecycle hooks in order
//! (`on_input_start → on_input_delta* → on_input_available → execute → on_output`) and runs the
//! call through the registry (validation, approval, panics, cancellation), yielding
//! [`RunEvent`]s. A hook that fails or panics is logged and never fails the call.
//!
//! Display/transcript views of the events, approval and suspension flows and background tasks
//! build on this (issue 3, in progress).

use std::collections::HashMap;
use std::sync::Arc;

use serde::Serialize;
use serde_json::Value;

use crate::call::CallOptions;
use crate::context::ToolCallInfo;
use crate::error::ToolError;
use crate::model_output::ModelOutput;
use crate::partial_json::PartialJson;
use crate::registry::Registry;
use crate::stream::{StreamDecoder, StreamError, StreamFormat, ToolCallEvent};
use crate::tool::{InputHook, Tool};

/// What happened to the tool calls of one streamed response, in order.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(tag = "type", rename_all = "kebab-case")]
pub enum RunEvent {
    /// The model started a call's input.
    InputStreamingStart {
        /// The call id.
        tool_call_id: String,
        /// The tool the model named.
        tool_name: String,
    },
    /// A piece of a call's input text.
    InputDelta {
        /// The call id.
        tool_call_id: String,
        /// The text delta.
        delta: String,
    },
    /// The input is complete and the call is made.
    ToolCall {
        /// The call id.
        tool_call_id: String,
        /// The tool.
        tool_name: String,
        /// The arguments as the model sent them (parsed when they are JSON).
        args: Value,
    },
    /// The call succeeded.
    ToolResult {
        /// The call id.
        tool_call_id: String,
        /// The tool.
        tool_name: String,
        /// The raw output.
        result: Value,
        /// What the model receives.
        model_output: ModelOutput,
    },
    /// The call failed (or was refused, or aborted): the model receives the error value.
    ToolError {
        /// The call id.
        tool_call_id: String,
        /// The tool.
        tool_name: String,
        /// The error.
        error: ToolError,
    },
}

struct Open {
    tool: Option<Arc<dyn Tool>>,
    info: ToolCallInfo,
    preview: PartialJson,
}

/// One streamed response's tool calls, driven through a registry.
pub struct StreamRun<'r> {
    registry: &'r Registry,
    decoder: StreamDecoder,
    options: CallOptions,
    open: HashMap<String, Open>,
}

fn log_hook(tool: &str, hook: &str, result: Result<(), String>) {
    if let Err(e) = result {
        tracing::warn!(tool, hook, error = %e, "a lifecycle hook failed; the call goes on");
    }
}

impl<'r> StreamRun<'r> {
    /// A run over `registry` for a stream in `format`; `options` (request context, messages,
    /// cancellation, timeout) apply to every call.
    pub fn new(registry: &'r Registry, format: StreamFormat, options: CallOptions) -> Self {
        StreamRun {
            registry,
            decoder: StreamDecoder::new(format),
            options,
            open: HashMap::new(),
        }
    }

    /// The live preview of a call's input so far (`null` before anything can be shown).
    pub fn preview(&self, tool_call_id: &str) -> Option<&Value> {
        self.open.get(tool_call_id).map(|o| o.preview.value())
    }

    /// Feeds bytes of the response; runs every call whose input completed.
    pub async fn push(&mut self, bytes: &[u8]) -> Result<Vec<RunEvent>, StreamError> {
        let events = self.decoder.push(bytes)?;
        self.handle(events).await
    }

    /// Ends the response; runs the calls still open.
    pub async fn finish(mut self) -> Result<Vec<RunEvent>, StreamError> {
        let decoder = std::mem::replace(&mut self.decoder, StreamDecoder::new(StreamFormat::OpenAiChat));
        let events = decoder.finish()?;
        self.handle(events).await
    }

    async fn handle(&mut self, events: Vec<ToolCallEvent>) -> Result<Vec<RunEvent>, StreamError> {
        let mut out = Vec::new();
        for event in events {
            match event {
                ToolCallEvent::InputStart {
                    tool_call_id, tool_name, ..
                } => {
                    let tool = self.registry.get(&tool_name);
                    let info = ToolCallInfo {
                        tool_call_id: tool_call_id.clone(),
                        tool_name: tool_name.clone(),
                        messages: self.options.messages.clone(),
                        cancellation: self.options.cancellation.clone().unwrap_or_default(),
                    };
                    if let Some(t) = &tool {
                        log_hook(&tool_name, "on_input_start", t.input_hook(InputHook::Start, &info));
                    }
                    self.open.insert(
                        tool_call_id.clone(),
                        Open {
                            tool,
                            info,
                            preview: PartialJson::new(),
                        },
                    );
                    out.push(RunEvent::InputStreamingStart { tool_call_id, tool_name });
                }
                ToolCallEvent::InputDelta { tool_call_id, delta, .. } => {
                    if let Some(open) = self.open.get_mut(&tool_call_id) {
                        // The preview is best effort: invalid JSON is reported when the call is made.
                        let _ = open.preview.push(&delta);
                        if let Some(t) = &open.tool {
                            log_hook(
                                &open.info.tool_name,
                                "on_input_delta",
                                t.input_hook(InputHook::Delta(&delta), &open.info),
                            );
                        }
                    }
                    out.push(RunEvent::InputDelta { tool_call_id, delta });
                }
                ToolCallEvent::InputAvailable {
                    tool_call_id,
                    tool_name,
                    input,
                    ..
                } => {
                    let open = self.open.remove(&tool_call_id);
                    out.extend(self.run_call(tool_call_id, tool_name, input, open).await);
                }
            }
        }
        Ok(out)
    }

    async fn run_call(&self, tool_call_id: String, tool_name: String, input: String, open: Option<Open>) -> Vec<RunEvent> {
        let args = serde_json::from_str(&input).unwrap_or_else(|_| Value::String(input.clone()));
        let mut events = vec![RunEvent::ToolCall {
            tool_call_id: tool_call_id.clone(),
            tool_name: tool_name.clone(),
            args: args.clone(),
        }];
        // on_input_available runs before the approval check (inside the registry's call).
        if let Some(Open { tool: Some(t), info, .. }) = &open {
            if t.spec().hooks.on_input_available && args.is_object() {
                log_hook(&tool_name, "on_input_available", t.input_hook(InputHook::Available(&args), info));
            }
        }
        let options = CallOptions {
            tool_call_id: Some(tool_call_id.clone()),
            ..self.options.clone()
        };
        events.push(match self.registry.call(&tool_name, input, options).await {
            Ok(out) => RunEvent::ToolResult {
                tool_call_id,
                tool_name,
                result: out.value(),
                model_output: out.for_model(),
            },
            Err(error) => RunEvent::ToolError {
                tool_call_id,
                tool_name,
                error,
            },
        });
        events
    }
}
