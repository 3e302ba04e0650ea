//! OpenAI Chat Completions streaming (`chat.completion.chunk`).
//!
//! Owns the mapping of `choices[].delta.tool_calls[]` fragments onto tool-call events:
//! - the first fragment of an `index` carries `id` and `function.name` → `InputStart` (and an
//!   `InputDelta` when it already carries `function.arguments`);
//! - later fragments of that `index` carry `function.arguments` pieces → `InputDelta`;
//! - a choice's `finish_reason` (`"tool_calls"`, or any other) closes that choice's calls, and
//!   `data: [DONE]` (or the end of the stream) closes all → `InputAvailable` in position order.
//!
//! Tolerated variations: several choices (`n > 1`, calls tracked per choice), a fragment with a
//! new `id` at an index already in use (some compatible servers number every call 0) starts a
//! new call, a fragment without `index` continues the choice's latest call. Text deltas,
//! `refusal`, `usage` chunks (`choices: []`) and keep-alive comments are ignored. A chunk with
//! an `error` member, or an SSE event named `error`, fails the stream (as openai-python does).

use std::collections::BTreeMap;

use serde::Deserialize;

use super::sse::SseEvent;
use super::{Calls, Flow, StreamError, ToolCallEvent};

#[derive(Debug, Default)]
pub(crate) struct ChatDriver {
    /// Per choice index.
    choices: BTreeMap<u64, ChoiceState>,
}

#[derive(Debug, Default)]
struct ChoiceState {
    /// Provider tool-call index → call position (the latest call at that index).
    by_index: BTreeMap<u64, usize>,
    /// The choice's most recently started call.
    latest: Option<usize>,
    /// Every call of the choice, in start order.
    positions: Vec<usize>,
    finished: bool,
}

#[derive(Deserialize)]
struct Chunk {
    #[serde(default)]
    choices: Option<Vec<Choice>>,
    #[serde(default)]
    error: Option<serde_json::Value>,
}

#[derive(Deserialize)]
struct Choice {
    #[serde(default)]
    index: Option<u64>,
    #[serde(default)]
    delta: Option<Delta>,
    #[serde(default)]
    finish_reason: Option<String>,
}

#[derive(Deserialize)]
struct Delta {
    #[serde(default)]
    tool_calls: Option<Vec<ToolCallFragment>>,
}

#[derive(Deserialize)]
struct ToolCallFragment {
    #[serde(default)]
    index: Option<u64>,
    #[serde(default)]
    id: Option<String>,
    #[serde(default)]
    function: Option<FunctionFragment>,
}

#[derive(Deserialize)]
struct FunctionFragment {
    #[serde(default)]
    name: Option<String>,
    #[serde(default)]
    arguments: Option<String>,
}

/// Whether a value is "set" in the Python sense openai-python tests (`if not error`).
fn truthy(value: &serde_json::Value) -> bool {
    use serde_json::Value;
    match value {
        Value::Null => false,
        Value::Bool(b) => *b,
        Value::Number(n) => n.as_f64() != Some(0.0),
        Value::String(s) => !s.is_empty(),
        Value::Array(a) => !a.is_empty(),
        Value::Object(o) => !o.is_empty(),
    }
}

impl ChatDriver {
    pub(crate) fn event(&mut self, event: &SseEvent, calls: &mut Calls, out: &mut Vec<ToolCallEvent>) -> Result<Flow, StreamError> {
        if event.data.starts_with("[DONE]") {
            return Ok(Flow::Done); // the decoder closes the open calls
        }
        if event.event == "error" {
            let message = match serde_json::from_str::<serde_json::Value>(&event.data) {
                Ok(body) => super::provider_error_message(body.get("error").unwrap_or(&body)),
                Err(_) => super::excerpt(&event.data),
            };
            return Err(StreamError::at(event, format!("the provider sent an error: {message}")));
        }
        let chunk: Chunk = serde_json::from_str(&event.data).map_err(|err| StreamError::bad_json(event, &err))?;
        if let Some(error) = chunk.error.filter(truthy) {
            return Err(StreamError::at(
                event,
                format!("the provider sent an error: {}", super::provider_error_message(&error)),
            ));
        }
        for choice in chunk.choices.into_iter().flatten() {
            let choice_index = choice.index.unwrap_or(0);
            let state = self.choices.entry(choice_index).or_default();
            for fragment in choice.delta.and_then(|d| d.tool_calls).into_iter().flatten() {
                state.fragment(event, choice_index, fragment, calls, out)?;
            }
            if choice.finish_reason.is_some() && !state.finished {
                state.finished = true;
                for &position in &state.positions {
                    if calls.get(position).open {
                        calls.available(position, None, out);
                    }
                }
            }
        }
        Ok(Flow::Continue)
    }
}

impl ChoiceState {
    fn fragment(
        &mut self,
        event: &SseEvent,
        choice: u64,
        fragment: ToolCallFragment,
        calls: &mut Calls,
        out: &mut Vec<ToolCallEvent>,
    ) -> Result<(), StreamError> {
        let (name, arguments) = match fragment.function {
            Some(f) => (f.name, f.arguments.unwrap_or_default()),
            None => (None, String::new()),
        };
        let id = fragment.id.filter(|id| !id.is_empty());
        let existing = match fragment.index {
            Some(index) => self.by_index.get(&index).copied(),
            None => self.latest,
        };
        // Same call unless the fragment names a different id (a new call at a reused index).
        let continuing = existing.filter(|&p| id.as_deref().is_none_or(|id| id == calls.get(p).id));
        let position = match continuing {
            Some(position) => {
                if !calls.get(position).open {
                    return Err(StreamError::at(
                        event,
                        format!(
                            "a fragment of tool call `{}` arrived after its choice finished",
                            calls.get(position).id
                        ),
                    ));
                }
                position
            }
            None => {
                let which = fragment
                    .index
                    .map_or_else(|| "without an index".to_owned(), |i| format!("at index {i}"));
                let Some(id) = id else {
                    return Err(StreamError::at(
                        event,
                        format!("choice {choice}: the first fragment of the tool call {which} has no id"),
                    ));
                };
                let Some(name) = name.filter(|n| !n.is_empty()) else {
                    return Err(StreamError::at(
                        event,
                        format!("choice {choice}: tool call `{id}` {which} starts without a function name"),
                    ));
                };
                if self.finished {
                    return Err(StreamError::at(
                        event,
                        format!("choice {choice}: tool call `{id}` starts after the choice finished"),
                    ));
                }
                let position = calls.start(id, name, out);
                if let Some(index) = fragment.index {
                    self.by_index.insert(index, position);
                }
                self.latest = Some(position);
                self.positions.push(position);
                position
            }
        };
        calls.delta(position, &arguments, out);
        Ok(())
    }
}
