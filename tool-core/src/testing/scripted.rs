//! Model responses written by hand: tool calls in, a provider's server-sent event stream out.
//!
//! Owns [`ScriptedStream`]: a list of tool calls (and optional assistant text) and how to
//! chunk them, written in the wire format of OpenAI Chat Completions, the OpenAI Responses API
//! or the Anthropic Messages API — the event names, fields and ordering of real streams (the
//! recorded ones in `tests/fixtures/sse`): role chunk, `tool_calls` fragments, `finish_reason`
//! and `[DONE]` for Chat; `response.*` events with sequence numbers for Responses;
//! `message_start`, `content_block_*`, `message_delta` and `message_stop` for Anthropic. Reading
//! a stream is `stream`; running one is [`replay`](super::replay).

use serde_json::{Value, json};

use crate::dialect::Dialect;

/// One scripted call: its id, tool name and input text as the model writes it.
#[derive(Debug, Clone)]
struct ScriptedCall {
    id: String,
    name: String,
    input: String,
    /// The pieces to stream, when chosen by hand (else cut by `chunk_size`).
    pieces: Option<Vec<String>>,
}

/// A model response with tool calls, as a provider streams it.
///
/// ```
/// use serde_json::json;
/// use tool_core::stream::{StreamDecoder, ToolCallEvent};
/// use tool_core::testing::ScriptedStream;
///
/// let script = ScriptedStream::openai_chat().tool_call("call_1", "weather", json!({"city": "Paris"})).chunk_size(4);
/// let mut decoder = StreamDecoder::new(script.dialect());
/// let mut events = decoder.push(&script.sse_bytes()).unwrap();
/// events.extend(decoder.finish().unwrap());
/// let deltas: Vec<&str> = events.iter().filter_map(|e| match e {
///     ToolCallEvent::InputDelta { delta, .. } => Some(delta.as_str()),
///     _ => None,
/// }).collect();
/// assert_eq!(deltas, [r#"{"ci"#, r#"ty":"#, r#""Par"#, r#"is"}"#]);
/// ```
#[derive(Debug, Clone)]
pub struct ScriptedStream {
    dialect: Dialect,
    text: Option<String>,
    calls: Vec<ScriptedCall>,
    chunk_size: usize,
    interleaved: bool,
}

impl ScriptedStream {
    /// A response streamed in `dialect` (OpenAI Chat, OpenAI Responses or Anthropic).
    ///
    /// # Panics
    /// For a dialect that has no streamed format ([`Dialect::supports_streaming`]).
    pub fn new(dialect: Dialect) -> Self {
        assert!(
            matches!(dialect, Dialect::OpenAiChat | Dialect::OpenAiResponses | Dialect::Anthropic),
            "ScriptedStream: {dialect} has no streamed format here (OpenAI Chat, OpenAI Responses and Anthropic have)"
        );
        ScriptedStream {
            dialect,
            text: None,
            calls: Vec::new(),
            chunk_size: usize::MAX,
            interleaved: false,
        }
    }

    /// An OpenAI Chat Completions stream.
    pub fn openai_chat() -> Self {
        ScriptedStream::new(Dialect::OpenAiChat)
    }

    /// An OpenAI Responses API stream.
    pub fn openai_responses() -> Self {
        ScriptedStream::new(Dialect::OpenAiResponses)
    }

    /// An Anthropic Messages stream.
    pub fn anthropic() -> Self {
        ScriptedStream::new(Dialect::Anthropic)
    }

    /// The dialect the stream is written in.
    pub fn dialect(&self) -> Dialect {
        self.dialect
    }

    /// Assistant text streamed before the calls.
    pub fn text(mut self, text: &str) -> Self {
        self.text = Some(text.to_owned());
        self
    }

    /// A call of tool `name` with id `id` and `args` (written as compact JSON).
    pub fn tool_call(self, id: &str, name: &str, args: Value) -> Self {
        self.tool_call_text(id, name, &args.to_string())
    }

    /// A call whose input is `input` exactly as the model wrote it (it may be invalid JSON).
    pub fn tool_call_text(mut self, id: &str, name: &str, input: &str) -> Self {
        self.calls.push(ScriptedCall {
            id: id.to_owned(),
            name: name.to_owned(),
            input: input.to_owned(),
            pieces: None,
        });
        self
    }

    /// A call whose input is streamed in exactly these pieces (their concatenation is the
    /// input; `chunk_size` does not cut them).
    pub fn tool_call_pieces(mut self, id: &str, name: &str, pieces: &[&str]) -> Self {
        self.calls.push(ScriptedCall {
            id: id.to_owned(),
            name: name.to_owned(),
            input: pieces.concat(),
            pieces: Some(pieces.iter().map(|p| (*p).to_owned()).collect()),
        });
        self
    }

    /// Streams each call's input in pieces of `chars` characters (default: one piece).
    pub fn chunk_size(mut self, chars: usize) -> Self {
        self.chunk_size = chars.max(1);
        self
    }

    /// Interleaves the input pieces of the calls, one piece of each in turn, as OpenAI streams
    /// parallel calls. Anthropic streams content blocks one after another, so it ignores this.
    pub fn interleaved(mut self) -> Self {
        self.interleaved = true;
        self
    }

    /// The pieces of one call's input.
    fn pieces(&self, call: &ScriptedCall) -> Vec<String> {
        if let Some(pieces) = &call.pieces {
            return pieces.clone();
        }
        let chars: Vec<char> = call.input.chars().collect();
        if chars.is_empty() {
            return vec![String::new()];
        }
        chars.chunks(self.chunk_size.min(chars.len())).map(|c| c.iter().collect()).collect()
    }

    /// The input pieces of every call, in the order they are streamed: `(call index, piece)`.
    fn schedule(&self) -> Vec<(usize, String)> {
        let pieces: Vec<Vec<String>> = self.calls.iter().map(|c| self.pieces(c)).collect();
        if !self.interleaved || self.dialect == Dialect::Anthropic {
            return pieces
                .into_iter()
                .enumerate()
                .flat_map(|(i, p)| p.into_iter().map(move |p| (i, p)))
                .collect();
        }
        let rounds = pieces.iter().map(Vec::len).max().unwrap_or(0);
        (0..rounds)
            .flat_map(|round| {
                pieces
                    .iter()
                    .enumerate()
                    .filter_map(move |(i, p)| p.get(round).map(|p| (i, p.clone())))
            })
            .collect()
    }

    /// The stream's text.
    pub fn sse(&self) -> String {
        match self.dialect {
            Dialect::OpenAiResponses => self.responses(),
            Dialect::Anthropic => self.anthropic_sse(),
            _ => self.chat(),
        }
    }

    /// The stream's bytes.
    pub fn sse_bytes(&self) -> Vec<u8> {
        self.sse().into_bytes()
    }

    fn chat(&self) -> String {
        let chunk = |delta: Value, finish: Value| {
            let data = json!({
                "id": "chatcmpl-scripted", "object": "chat.completion.chunk", "created": 1735689600,
                "model": "gpt-4o-2024-08-06", "service_tier": "default", "system_fingerprint": "fp_scripted",
                "choices": [{"index": 0, "delta": delta, "logprobs": null, "finish_reason": finish}],
                "usage": null,
            });
            format!("data: {data}\n\n")
        };
        let mut out = chunk(json!({"role": "assistant", "content": "", "refusal": null}), Value::Null);
        if let Some(text) = &self.text {
            out += &chunk(json!({"content": text}), Value::Null);
        }
        let mut started = vec![false; self.calls.len()];
        for (i, piece) in self.schedule() {
            if !std::mem::replace(&mut started[i], true) {
                let c = &self.calls[i];
                let head = json!({"index": i, "id": c.id, "type": "function", "function": {"name": c.name, "arguments": ""}});
                out += &chunk(json!({"tool_calls": [head]}), Value::Null);
            }
            let piece = json!({"index": i, "function": {"arguments": piece}});
            out += &chunk(json!({"tool_calls": [piece]}), Value::Null);
        }
        let finish = if self.calls.is_empty() { "stop" } else { "tool_calls" };
        out += &chunk(json!({}), json!(finish));
        out + "data: [DONE]\n\n"
    }

    fn responses(&self) -> String {
        let mut seq = 0u64;
        let mut event = |mut data: Value| {
            data["sequence_number"] = json!(seq);
            seq += 1;
            format!("event: {}\ndata: {data}\n\n", data["type"].as_str().unwrap_or_default())
        };
        let response = |status: &str, output: Value| {
            json!({"id": "resp_scripted", "object": "response", "created_at": 1741476542, "status": status,
                   "model": "gpt-4.1-2025-04-14", "output": output, "parallel_tool_calls": true})
        };
        let mut out = event(json!({"type": "response.created", "response": response("in_progress", json!([]))}));
        out += &event(json!({"type": "response.in_progress", "response": response("in_progress", json!([]))}));
        let offset = usize::from(self.text.is_some());
        if let Some(text) = &self.text {
            out += &responses_message(text).into_iter().map(&mut event).collect::<String>();
        }
        let item = |i: usize, status: &str, arguments: &str| {
            let c = &self.calls[i];
            json!({"type": "function_call", "id": format!("fc_{}", c.id), "call_id": c.id, "name": c.name,
                   "arguments": arguments, "status": status})
        };
        let mut started = vec![false; self.calls.len()];
        let schedule = self.schedule();
        for (n, (i, piece)) in schedule.iter().enumerate() {
            if !std::mem::replace(&mut started[*i], true) {
                out +=
                    &event(json!({"type": "response.output_item.added", "output_index": i + offset, "item": item(*i, "in_progress", "")}));
            }
            let item_id = format!("fc_{}", self.calls[*i].id);
            out += &event(
                json!({"type": "response.function_call_arguments.delta", "item_id": item_id, "output_index": i + offset, "delta": piece}),
            );
            // A call is done after its last piece.
            if !schedule[n + 1..].iter().any(|(j, _)| j == i) {
                let args = &self.calls[*i].input;
                out += &event(
                    json!({"type": "response.function_call_arguments.done", "item_id": item_id, "output_index": i + offset, "arguments": args}),
                );
                out +=
                    &event(json!({"type": "response.output_item.done", "output_index": i + offset, "item": item(*i, "completed", args)}));
            }
        }
        let output: Vec<Value> = (0..self.calls.len()).map(|i| item(i, "completed", &self.calls[i].input)).collect();
        out + &event(json!({"type": "response.completed", "response": response("completed", json!(output))}))
    }

    fn anthropic_sse(&self) -> String {
        let event = |data: Value| format!("event: {}\ndata: {data}\n\n", data["type"].as_str().unwrap_or_default());
        let message = json!({"id": "msg_scripted", "type": "message", "role": "assistant", "content": [],
                             "model": "claude-sonnet-4-5-20250929", "stop_reason": null, "stop_sequence": null,
                             "usage": {"input_tokens": 1, "output_tokens": 1}});
        let mut out = event(json!({"type": "message_start", "message": message}));
        let offset = usize::from(self.text.is_some());
        if let Some(text) = &self.text {
            out += &event(json!({"type": "content_block_start", "index": 0, "content_block": {"type": "text", "text": ""}}));
            out += &event(json!({"type": "content_block_delta", "index": 0, "delta": {"type": "text_delta", "text": text}}));
            out += &event(json!({"type": "content_block_stop", "index": 0}));
        }
        for (i, c) in self.calls.iter().enumerate() {
            let index = i + offset;
            let block = json!({"type": "tool_use", "id": c.id, "name": c.name, "input": {}});
            out += &event(json!({"type": "content_block_start", "index": index, "content_block": block}));
            // Anthropic streams an empty input as one empty piece.
            let pieces = if c.input == "{}" && c.pieces.is_none() {
                vec![String::new()]
            } else {
                self.pieces(c)
            };
            for piece in pieces {
                let delta = json!({"type": "input_json_delta", "partial_json": piece});
                out += &event(json!({"type": "content_block_delta", "index": index, "delta": delta}));
            }
            out += &event(json!({"type": "content_block_stop", "index": index}));
        }
        let stop = if self.calls.is_empty() { "end_turn" } else { "tool_use" };
        out +=
            &event(json!({"type": "message_delta", "delta": {"stop_reason": stop, "stop_sequence": null}, "usage": {"output_tokens": 1}}));
        out + &event(json!({"type": "message_stop"}))
    }
}

/// The events of a Responses message item with `text`, at output index 0 (without sequence
/// numbers).
fn responses_message(text: &str) -> Vec<Value> {
    let message = |status: &str, content: Value| json!({"id": "msg_scripted", "type": "message", "status": status, "role": "assistant", "content": content});
    let part = |text: &str| json!({"type": "output_text", "annotations": [], "text": text});
    let at = |kind: &str, key: &str, value: Value| {
        let mut e = json!({"type": kind, "item_id": "msg_scripted", "output_index": 0, "content_index": 0});
        e[key] = value;
        e
    };
    let with_logprobs = |mut e: Value| {
        e["logprobs"] = json!([]);
        e
    };
    vec![
        json!({"type": "response.output_item.added", "output_index": 0, "item": message("in_progress", json!([]))}),
        at("response.content_part.added", "part", part("")),
        with_logprobs(at("response.output_text.delta", "delta", json!(text))),
        with_logprobs(at("response.output_text.done", "text", json!(text))),
        at("response.content_part.done", "part", part(text)),
        json!({"type": "response.output_item.done", "output_index": 0, "item": message("completed", json!([part(text)]))}),
    ]
}
