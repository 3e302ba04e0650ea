//! Driving tool calls from a model's streamed response.
//!
//! Owns [`StreamRun`]: it feeds provider SSE bytes through a [`StreamDecoder`], keeps a live
//! [`PartialJson`] preview per call, fires `on_input_start` and `on_input_delta` as the input
//! arrives and hands each completed call to the [`Runtime`] (validation, `on_input_available`,
//! approval, execution, `on_output`). Calls run concurrently; their events (input events
//! included) go to the run's [`EventStream`]. A hook that fails or panics is logged and never
//! fails the call.

use std::collections::HashMap;
use std::sync::Arc;

use serde_json::Value;

use super::events::{CallRef, RunEventKind};
use super::outcome::{EventStream, Sink};
use super::{Runtime, log_hook};
use crate::call::{CallArgs, CallOptions};
use crate::context::ToolCallInfo;
use crate::dialect::Dialect;
use crate::partial_json::PartialJson;
use crate::stream::{StreamDecoder, StreamError, ToolCallEvent};
use crate::tool::{InputHook, Tool};

struct Open {
    tool: Option<Arc<dyn Tool>>,
    info: ToolCallInfo,
    preview: PartialJson,
}

/// One streamed response's tool calls, driven through a runtime.
pub struct StreamRun {
    runtime: Runtime,
    decoder: StreamDecoder,
    options: CallOptions,
    /// What every call of the response is, shared by their hooks' views.
    data: std::sync::Arc<crate::context::CallData>,
    open: HashMap<String, Open>,
    sink: Sink,
}

impl Runtime {
    /// A run for a model response streamed in `dialect`; `options` (request context, messages,
    /// thread, cancellation, timeout) apply to every call. Feed it with [`StreamRun::push`];
    /// the events arrive on the returned stream, which ends once the response is finished and
    /// every call is done. Must be used inside a Tokio runtime.
    pub fn stream(&self, dialect: Dialect, options: CallOptions) -> (StreamRun, EventStream) {
        let (sink, events) = Sink::channel();
        let run = StreamRun {
            runtime: self.clone(),
            decoder: StreamDecoder::new(dialect),
            data: options.data.clone().shared(),
            options,
            open: HashMap::new(),
            sink,
        };
        (run, events)
    }
}

impl StreamRun {
    /// The live preview of a call's input so far (`null` before anything can be shown).
    pub fn preview(&self, tool_call_id: &str) -> Option<&Value> {
        self.open.get(tool_call_id).map(|o| o.preview.value())
    }

    /// The live previews of the calls whose input is still streaming, by call id.
    pub fn previews(&self) -> impl Iterator<Item = (&str, &Value)> {
        self.open.iter().map(|(id, o)| (id.as_str(), o.preview.value()))
    }

    /// Feeds bytes of the response; starts every call whose input completed.
    pub fn push(&mut self, bytes: &[u8]) -> Result<(), StreamError> {
        let events = self.decoder.push(bytes)?;
        self.handle(events);
        Ok(())
    }

    /// Ends the response; starts the calls still open.
    pub fn finish(mut self) -> Result<(), StreamError> {
        let decoder = std::mem::replace(&mut self.decoder, StreamDecoder::new(Dialect::OpenAiChat));
        let events = decoder.finish()?;
        self.handle(events);
        Ok(())
    }

    fn handle(&mut self, events: Vec<ToolCallEvent>) {
        for event in events {
            match event {
                ToolCallEvent::InputStart {
                    tool_call_id, tool_name, ..
                } => {
                    let tool = self.runtime.registry().get(&tool_name);
                    let call = CallRef::new(tool_call_id.clone(), tool_name.clone());
                    let env = crate::context::CallEnv {
                        writer: match &tool {
                            Some(t) => self.runtime.writer(&self.sink, &call, t),
                            None => Default::default(),
                        },
                        ..self.options.env.clone()
                    };
                    // The call's one token: its hooks and (once its input is complete) the call share it.
                    let cancellation = self.options.env.cancellation.clone().unwrap_or_default();
                    let info = ToolCallInfo::new(&tool_name, tool_call_id.clone(), self.data.clone(), env, cancellation);
                    if let Some(t) = &tool {
                        log_hook(&tool_name, "on_input_start", t.input_hook(InputHook::Start, &info));
                    }
                    let event = call.event(RunEventKind::InputStreamingStart);
                    self.sink.send(self.runtime.viewer(tool.as_deref()).event(event));
                    self.open.insert(
                        tool_call_id,
                        Open {
                            tool,
                            info,
                            preview: PartialJson::new(),
                        },
                    );
                }
                ToolCallEvent::InputDelta { tool_call_id, delta, .. } => {
                    let (tool, tool_name) = match self.open.get_mut(&tool_call_id) {
                        Some(open) => {
                            // The preview is best effort: invalid JSON is reported when the call is made.
                            let _ = open.preview.push(&delta);
                            if let Some(t) = &open.tool {
                                log_hook(
                                    &open.info.tool_name,
                                    "on_input_delta",
                                    t.input_hook(InputHook::Delta(&delta), &open.info),
                                );
                            }
                            (open.tool.clone(), open.info.tool_name.to_string())
                        }
                        None => (None, String::new()),
                    };
                    let event = CallRef::new(tool_call_id, tool_name).event(RunEventKind::InputDelta {
                        delta: Value::String(delta),
                    });
                    self.sink.send(self.runtime.viewer(tool.as_deref()).event(event));
                }
                ToolCallEvent::InputAvailable {
                    tool_call_id,
                    tool_name,
                    input,
                    ..
                } => {
                    let mut options = self.options.clone().id(tool_call_id.clone());
                    if let Some(open) = self.open.remove(&tool_call_id) {
                        options.env.cancellation = Some(open.info.cancellation.token().clone());
                    }
                    let span = self.runtime.call_span(&tool_name, &mut options);
                    self.runtime
                        .spawn_new(span, self.sink.clone(), tool_name, CallArgs::from(input), options);
                }
            }
        }
    }
}
