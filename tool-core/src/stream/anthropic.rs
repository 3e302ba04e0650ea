//! Anthropic Messages streaming (`message_start`, `content_block_*`, `message_delta`, …).
//!
//! Owns the mapping of `tool_use` content blocks onto tool-call events:
//! - `content_block_start` with `content_block: {type: "tool_use", id, name, input: {}}` →
//!   `InputStart` (the `input` there is a placeholder and is ignored; should a server put a
//!   non-empty object there and stream no deltas, that object is the input);
//! - `content_block_delta` with `delta: {type: "input_json_delta", partial_json}` → `InputDelta`;
//! - `content_block_stop` → `InputAvailable` (an empty input is `{}`).
//!
//! Blocks are keyed by their `index`, so interleaved blocks work too. Other blocks (`text`,
//! `thinking`, and `server_tool_use`/`mcp_tool_use`, which the provider runs itself) and their
//! deltas are ignored, as are `ping`, `message_start`, `message_delta`, `message_stop` and
//! unknown event kinds. An `error` event fails the stream. The event kind is the data's `type`
//! member (the SSE `event:` name when it has none); an SSE event named `error` fails the stream
//! even when its data is not JSON.

use std::collections::HashMap;

use serde::Deserialize;

use super::sse::SseEvent;
use super::{Calls, Flow, StreamError, ToolCallEvent};

#[derive(Debug, Default)]
pub(crate) struct AnthropicDriver {
    /// Content block index → what the block is.
    blocks: HashMap<u64, Block>,
}

#[derive(Debug)]
enum Block {
    /// A `tool_use` block: the call's position and a non-empty start `input`, if any.
    Tool { position: usize, start_input: Option<String> },
    /// Any other block (its deltas are ignored).
    Other,
}

#[derive(Deserialize)]
struct Head<'a> {
    #[serde(rename = "type", borrow, default)]
    kind: Option<std::borrow::Cow<'a, str>>,
}

#[derive(Deserialize)]
struct BlockStart {
    index: u64,
    content_block: ContentBlock,
}

#[derive(Deserialize)]
struct ContentBlock {
    #[serde(rename = "type")]
    kind: String,
    #[serde(default)]
    id: Option<String>,
    #[serde(default)]
    name: Option<String>,
    /// Kept as the text the server sent (a parsed value would lose a repeated key).
    #[serde(default)]
    input: Option<Box<serde_json::value::RawValue>>,
}

#[derive(Deserialize)]
struct BlockDelta {
    index: u64,
    delta: DeltaBody,
}

#[derive(Deserialize)]
struct DeltaBody {
    #[serde(rename = "type")]
    kind: String,
    #[serde(default)]
    partial_json: Option<String>,
}

#[derive(Deserialize)]
struct BlockStop {
    index: u64,
}

#[derive(Deserialize)]
struct ErrorBody {
    #[serde(default)]
    error: Option<serde_json::Value>,
}

impl AnthropicDriver {
    pub(crate) fn event(&mut self, event: &SseEvent, calls: &mut Calls, out: &mut Vec<ToolCallEvent>) -> Result<Flow, StreamError> {
        let head: Head = match serde_json::from_str(&event.data) {
            Ok(head) => head,
            Err(_) if event.event == "error" => {
                return Err(StreamError::at(
                    event,
                    format!("the provider sent an error: {}", super::excerpt(&event.data)),
                ));
            }
            Err(err) => return Err(StreamError::bad_json(event, &err)),
        };
        let kind = super::event_kind(event, head.kind.as_deref());
        let parse_err =
            |err: serde_json::Error| StreamError::at(event, format!("a `{kind}` event does not have the documented shape: {err}"));
        match kind {
            "content_block_start" => self.block_start(event, serde_json::from_str(&event.data).map_err(parse_err)?, calls, out)?,
            "content_block_delta" => self.block_delta(event, serde_json::from_str(&event.data).map_err(parse_err)?, calls, out)?,
            "content_block_stop" => self.block_stop(event, serde_json::from_str(&event.data).map_err(parse_err)?, calls, out)?,
            "error" => {
                let body: ErrorBody = serde_json::from_str(&event.data).map_err(parse_err)?;
                let detail = match body.error.as_ref() {
                    Some(error) => super::provider_error_message(error),
                    None => super::excerpt(&event.data),
                };
                return Err(StreamError::at(event, format!("the provider sent an error: {detail}")));
            }
            // ping, message_start, message_delta, message_stop and kinds added later.
            _ => {}
        }
        Ok(Flow::Continue)
    }

    /// A content block starts: a `tool_use` block opens a call.
    fn block_start(
        &mut self,
        event: &SseEvent,
        start: BlockStart,
        calls: &mut Calls,
        out: &mut Vec<ToolCallEvent>,
    ) -> Result<(), StreamError> {
        if self
            .blocks
            .get(&start.index)
            .is_some_and(|b| matches!(b, Block::Tool { position, .. } if calls.get(*position).open))
        {
            return Err(StreamError::at(
                event,
                format!("content block {} starts again before its stop", start.index),
            ));
        }
        let block = start.content_block;
        if block.kind != "tool_use" {
            self.blocks.insert(start.index, Block::Other);
            return Ok(());
        }
        let Some(id) = block.id.filter(|i| !i.is_empty()) else {
            return Err(StreamError::at(
                event,
                format!("the tool_use block at index {} has no id", start.index),
            ));
        };
        let Some(name) = block.name.filter(|n| !n.is_empty()) else {
            return Err(StreamError::at(event, format!("tool_use block `{id}` has no name")));
        };
        let start_input = block
            .input
            .filter(|raw| is_filled_object(raw.get()))
            .map(|raw| raw.get().to_owned());
        let position = calls.start(id, name, out);
        self.blocks.insert(start.index, Block::Tool { position, start_input });
        Ok(())
    }

    /// A piece of a block: for a tool's block, a piece of its input.
    fn block_delta(
        &mut self,
        event: &SseEvent,
        delta: BlockDelta,
        calls: &mut Calls,
        out: &mut Vec<ToolCallEvent>,
    ) -> Result<(), StreamError> {
        match self.blocks.get(&delta.index) {
            Some(Block::Tool { position, .. }) => {
                let position = *position;
                if !calls.get(position).open {
                    return Err(StreamError::at(
                        event,
                        format!("a delta for content block {} arrived after its stop", delta.index),
                    ));
                }
                if delta.delta.kind == "input_json_delta" {
                    calls.delta(position, delta.delta.partial_json.as_deref().unwrap_or_default(), out);
                }
                Ok(())
            }
            Some(Block::Other) => Ok(()),
            None => Err(StreamError::at(
                event,
                format!("a delta for content block {} arrived before its start", delta.index),
            )),
        }
    }

    /// A block stops: a tool's input is complete.
    fn block_stop(
        &mut self,
        event: &SseEvent,
        stop: BlockStop,
        calls: &mut Calls,
        out: &mut Vec<ToolCallEvent>,
    ) -> Result<(), StreamError> {
        match self.blocks.get_mut(&stop.index) {
            Some(Block::Tool { position, start_input }) => {
                let position = *position;
                if calls.get(position).open {
                    // The start `input` stands only when no delta said anything.
                    let fallback = start_input.take().filter(|_| calls.get(position).input.is_empty());
                    calls.available(position, fallback, out);
                }
                Ok(())
            }
            Some(Block::Other) => Ok(()),
            None => Err(StreamError::at(
                event,
                format!("content block {} stops without a start", stop.index),
            )),
        }
    }
}

/// Whether JSON text (already known to be JSON) is an object with at least one member.
fn is_filled_object(text: &str) -> bool {
    text.trim()
        .strip_prefix('{')
        .and_then(|t| t.strip_suffix('}'))
        .is_some_and(|inner| !inner.trim().is_empty())
}
