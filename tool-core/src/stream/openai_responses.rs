//! OpenAI Responses API streaming (typed `response.*` events).
//!
//! Owns the mapping of function-call output items onto tool-call events:
//! - `response.output_item.added` with `item.type == "function_call"` → `InputStart`
//!   (`tool_call_id` is the item's `call_id`, which a `function_call_output` answers);
//! - `response.function_call_arguments.delta` `{item_id, output_index, delta}` → `InputDelta`;
//! - `response.function_call_arguments.done` `{item_id, arguments}` → `InputAvailable` with the
//!   `arguments` given there (they win over the concatenated deltas); a
//!   `response.output_item.done` for a call still open completes it the same way from
//!   `item.arguments`.
//!
//! The event kind is the data's `type` member (the SSE `event:` name when it has none). Every
//! other kind (text and reasoning deltas, content parts, `response.created`,
//! `response.completed`, `response.incomplete`, hosted tools…) is ignored. An `error` event or
//! `response.failed` fails the stream. `data: [DONE]`, which some compatible servers send,
//! ends it.

use std::collections::HashMap;

use serde::Deserialize;

use super::sse::SseEvent;
use super::{Calls, Flow, StreamError, ToolCallEvent};

#[derive(Debug, Default)]
pub(crate) struct ResponsesDriver {
    /// Item id → call position.
    by_item: HashMap<String, usize>,
    /// Output index → call position (for servers that leave `item_id` out).
    by_output: HashMap<u64, usize>,
}

/// Just enough of any event to know what it is.
#[derive(Deserialize)]
struct Head<'a> {
    #[serde(rename = "type", borrow, default)]
    kind: Option<std::borrow::Cow<'a, str>>,
}

#[derive(Deserialize)]
struct ItemEvent {
    #[serde(default)]
    output_index: Option<u64>,
    item: Item,
}

#[derive(Deserialize)]
struct Item {
    #[serde(rename = "type")]
    kind: String,
    #[serde(default)]
    id: Option<String>,
    #[serde(default)]
    call_id: Option<String>,
    #[serde(default)]
    name: Option<String>,
    #[serde(default)]
    arguments: Option<String>,
}

#[derive(Deserialize)]
struct ArgumentsEvent {
    #[serde(default)]
    item_id: Option<String>,
    #[serde(default)]
    output_index: Option<u64>,
    #[serde(default)]
    delta: Option<String>,
    #[serde(default)]
    arguments: Option<String>,
}

#[derive(Deserialize)]
struct ErrorEvent {
    #[serde(default)]
    code: Option<serde_json::Value>,
    #[serde(default)]
    message: Option<String>,
    #[serde(default)]
    response: Option<serde_json::Value>,
}

impl ResponsesDriver {
    pub(crate) fn event(&mut self, event: &SseEvent, calls: &mut Calls, out: &mut Vec<ToolCallEvent>) -> Result<Flow, StreamError> {
        if event.data.starts_with("[DONE]") {
            return Ok(Flow::Done);
        }
        let head: Head = serde_json::from_str(&event.data).map_err(|err| StreamError::bad_json(event, &err))?;
        let kind = super::event_kind(event, head.kind.as_deref());
        let parse_err =
            |err: serde_json::Error| StreamError::at(event, format!("a `{kind}` event does not have the documented shape: {err}"));
        match kind {
            "response.output_item.added" => {
                let added: ItemEvent = serde_json::from_str(&event.data).map_err(parse_err)?;
                if added.item.kind != "function_call" {
                    return Ok(Flow::Continue);
                }
                let item = added.item;
                let Some(call_id) = item.call_id.filter(|c| !c.is_empty()) else {
                    return Err(StreamError::at(event, "a `function_call` output item has no `call_id`"));
                };
                let Some(name) = item.name.filter(|n| !n.is_empty()) else {
                    return Err(StreamError::at(event, format!("function call `{call_id}` has no `name`")));
                };
                let position = calls.start(call_id, name, out);
                if let Some(id) = item.id {
                    self.by_item.insert(id, position);
                }
                if let Some(output_index) = added.output_index {
                    self.by_output.insert(output_index, position);
                }
                calls.delta(position, item.arguments.as_deref().unwrap_or_default(), out);
            }
            "response.function_call_arguments.delta" | "response.function_call_arguments.done" => {
                let args: ArgumentsEvent = serde_json::from_str(&event.data).map_err(parse_err)?;
                let position = self.find(event, kind, args.item_id.as_deref(), args.output_index)?;
                let call = calls.get(position);
                if kind.ends_with(".delta") {
                    if !call.open {
                        return Err(StreamError::at(
                            event,
                            format!("an arguments delta for function call `{}` arrived after its end", call.id),
                        ));
                    }
                    calls.delta(position, args.delta.as_deref().unwrap_or_default(), out);
                } else if call.open {
                    calls.available(position, args.arguments, out);
                }
            }
            "response.output_item.done" => {
                let done: ItemEvent = serde_json::from_str(&event.data).map_err(parse_err)?;
                if done.item.kind == "function_call" {
                    let position = self.find(event, kind, done.item.id.as_deref(), done.output_index)?;
                    if calls.get(position).open {
                        calls.available(position, done.item.arguments, out);
                    }
                }
            }
            "error" | "response.failed" => {
                let error: ErrorEvent = serde_json::from_str(&event.data).map_err(parse_err)?;
                let detail = match (
                    error.response.as_ref().and_then(|r| r.get("error")).filter(|e| !e.is_null()),
                    error.message,
                ) {
                    (Some(nested), _) => super::provider_error_message(nested),
                    (None, Some(message)) => match error.code.as_ref().and_then(|c| c.as_str()) {
                        Some(code) => format!("{code}: {message}"),
                        None => message,
                    },
                    (None, None) => super::excerpt(&event.data),
                };
                return Err(StreamError::at(event, format!("the provider sent `{kind}`: {detail}")));
            }
            _ => {}
        }
        Ok(Flow::Continue)
    }

    fn find(&self, event: &SseEvent, kind: &str, item_id: Option<&str>, output_index: Option<u64>) -> Result<usize, StreamError> {
        let found = match item_id {
            Some(id) => self.by_item.get(id),
            None => output_index.and_then(|i| self.by_output.get(&i)),
        };
        found.copied().ok_or_else(|| {
            let which = match (item_id, output_index) {
                (Some(id), _) => format!("item `{id}`"),
                (None, Some(i)) => format!("output index {i}"),
                (None, None) => "no item".to_owned(),
            };
            StreamError::at(
                event,
                format!("a `{kind}` event refers to {which}, which no `response.output_item.added` function call started"),
            )
        })
    }
}
