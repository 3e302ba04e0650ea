//! Streamed model responses: server-sent event bytes in, tool-call lifecycle events out.
//!
//! Owns [`StreamDecoder`] (one per streamed response), the [`ToolCallEvent`]s it emits and the
//! per-provider drivers that read each dialect's events: [`Dialect::OpenAiChat`] (Chat
//! Completions chunks), [`Dialect::OpenAiResponses`] (Responses API events) and
//! [`Dialect::Anthropic`] (Messages API events); the other dialects have no decoder
//! ([`Dialect::supports_streaming`]). The byte-level SSE parsing is in [`sse`]. It must not know
//! about tools, hooks or execution: a later layer maps `InputStart → InputDelta* →
//! InputAvailable` onto each tool's hooks and runs the call.
//!
//! Guarantees, for every dialect and any chunking of the bytes:
//! - each call emits exactly one `InputStart`, then its `InputDelta`s, then one `InputAvailable`
//!   (unless the stream fails first); calls of one response may interleave;
//! - `index` is the call's 0-based position among the tool calls of the response, in the order
//!   they started (for OpenAI Chat with one choice, the provider's own `index`);
//! - no `InputDelta` carries an empty `delta`, and the concatenated deltas of a call equal its
//!   `InputAvailable` input: an empty input becomes `"{}"` (sent as a last delta), and an OpenAI
//!   Responses `.done` text that extends the streamed deltas has the rest sent as a last delta.
//!   The one exception: a `.done` text that contradicts the deltas wins without a delta, so
//!   treat `InputAvailable.input` as the authority;
//! - the input is passed on as the model wrote it: it may be invalid JSON (validation belongs
//!   to the call layer, which can answer the model with an error).
//!
//! ```
//! use tool_core::stream::{StreamDecoder, ToolCallEvent};
//! use tool_core::Dialect;
//!
//! let body = concat!(
//!     "event: content_block_start\n",
//!     r#"data: {"type":"content_block_start","index":0,"content_block":{"type":"tool_use","id":"toolu_1","name":"add","input":{}}}"#, "\n\n",
//!     "event: content_block_delta\n",
//!     r#"data: {"type":"content_block_delta","index":0,"delta":{"type":"input_json_delta","partial_json":"{\"a\": 2, "}}"#, "\n\n",
//!     "event: content_block_delta\n",
//!     r#"data: {"type":"content_block_delta","index":0,"delta":{"type":"input_json_delta","partial_json":"\"b\": 3}"}}"#, "\n\n",
//!     "event: content_block_stop\n",
//!     r#"data: {"type":"content_block_stop","index":0}"#, "\n\n",
//! );
//! let mut decoder = StreamDecoder::new(Dialect::Anthropic);
//! let mut events = Vec::new();
//! for chunk in body.as_bytes().chunks(7) {
//!     events.extend(decoder.push(chunk).unwrap());
//! }
//! events.extend(decoder.finish().unwrap());
//! assert_eq!(events.len(), 4);
//! assert_eq!(
//!     events[3],
//!     ToolCallEvent::InputAvailable {
//!         tool_call_id: "toolu_1".into(),
//!         tool_name: "add".into(),
//!         index: 0,
//!         input: r#"{"a": 2, "b": 3}"#.into(),
//!     }
//! );
//! ```

mod anthropic;
mod openai_chat;
mod openai_responses;
// reason: the stream tests and the kit's tests drive the SSE layer alone; not part of the API.
#[doc(hidden)]
pub mod sse;

use serde::Serialize;

use self::sse::{SseEvent, SseParser};
use crate::dialect::Dialect;

/// One lifecycle event of one tool call in a streamed response.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(tag = "type", rename_all = "kebab-case")]
pub enum ToolCallEvent {
    /// The model started a call: its id and tool name are known, its input is not.
    InputStart {
        /// The provider's id for the call (the id a tool result must answer).
        tool_call_id: String,
        /// The tool's name as the model wrote it.
        tool_name: String,
        /// Position of the call among the response's tool calls (0-based, in start order).
        index: usize,
    },
    /// The next piece of the call's input JSON text (never empty).
    InputDelta {
        /// The call's id.
        tool_call_id: String,
        /// The call's position.
        index: usize,
        /// Text to append to the input seen so far.
        delta: String,
    },
    /// The call's input is complete.
    InputAvailable {
        /// The call's id.
        tool_call_id: String,
        /// The tool's name.
        tool_name: String,
        /// The call's position.
        index: usize,
        /// The complete input JSON text (`"{}"` when the model sent none); not validated here.
        input: String,
    },
}

impl ToolCallEvent {
    /// The id of the call this event belongs to.
    pub fn tool_call_id(&self) -> &str {
        match self {
            ToolCallEvent::InputStart { tool_call_id, .. }
            | ToolCallEvent::InputDelta { tool_call_id, .. }
            | ToolCallEvent::InputAvailable { tool_call_id, .. } => tool_call_id,
        }
    }

    /// The position of the call this event belongs to.
    pub fn index(&self) -> usize {
        match self {
            ToolCallEvent::InputStart { index, .. }
            | ToolCallEvent::InputDelta { index, .. }
            | ToolCallEvent::InputAvailable { index, .. } => *index,
        }
    }
}

/// A streamed response could not be read: malformed data, an error event from the provider, or
/// a stream that ended in the middle of something. The message names the stream line when one is
/// to blame.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{message}")]
pub struct StreamError {
    /// What went wrong, for a person reading logs.
    pub message: String,
}

impl StreamError {
    pub(crate) fn new(message: impl Into<String>) -> Self {
        StreamError { message: message.into() }
    }

    /// An error blamed on the event whose first `data:` line is `line`.
    pub(crate) fn at(event: &SseEvent, message: impl std::fmt::Display) -> Self {
        StreamError {
            message: format!("line {}: {message}", event.line),
        }
    }

    /// The event's data is not the JSON the format requires.
    pub(crate) fn bad_json(event: &SseEvent, err: &serde_json::Error) -> Self {
        StreamError::at(
            event,
            format!(
                "malformed JSON in the data of a `{}` event ({err}): {}",
                event.event,
                excerpt(&event.data)
            ),
        )
    }
}

/// `type: message` of a provider's error object (`type` or `code`, then `message`).
pub(crate) fn provider_error_message(error: &serde_json::Value) -> String {
    let message = error.get("message").and_then(|m| m.as_str()).filter(|m| !m.is_empty());
    let kind = error.get("type").or_else(|| error.get("code")).and_then(|t| t.as_str());
    match (kind, message) {
        (Some(kind), Some(message)) => format!("{kind}: {message}"),
        (None, Some(message)) => message.to_owned(),
        (_, None) => format!("an error occurred during streaming: {error}"),
    }
}

/// At most 120 characters of `text`, for error messages.
/// An event's kind: an SSE `error` event is an error whatever its data says; otherwise the
/// data's `type`, falling back to the SSE event name.
fn event_kind<'a>(event: &'a sse::SseEvent, data_type: Option<&'a str>) -> &'a str {
    if event.event == "error" {
        "error"
    } else {
        data_type.unwrap_or(&event.event)
    }
}

fn excerpt(text: &str) -> String {
    const MAX: usize = 120;
    match text.char_indices().nth(MAX) {
        Some((cut, _)) => format!("{:?}…", &text[..cut]),
        None => format!("{text:?}"),
    }
}

/// Incremental decoder: push raw bytes as they arrive (any chunking, even splitting a UTF-8
/// character or an SSE line), get events in order.
///
/// After the dialect's end sentinel (`data: [DONE]` for the OpenAI dialects) the rest of the
/// stream is ignored.
///
/// Errors: when a chunk yields events and then fails, [`StreamDecoder::push`] returns those
/// events and the error comes from the next `push` or [`StreamDecoder::finish`]; so the events
/// before a failure never depend on how the bytes were chunked. After an error the decoder is
/// failed for good and returns the same error from every call. A decoder for a dialect without
/// one ([`Dialect::supports_streaming`]) is failed from the start.
#[derive(Debug)]
pub struct StreamDecoder {
    dialect: Dialect,
    sse: SseParser,
    driver: Driver,
    calls: Calls,
    /// The dialect's end sentinel (`[DONE]`) was read: the rest of the stream is ignored.
    done: bool,
    error: Option<StreamError>,
}

#[derive(Debug)]
enum Driver {
    OpenAiChat(openai_chat::ChatDriver),
    OpenAiResponses(openai_responses::ResponsesDriver),
    Anthropic(anthropic::AnthropicDriver),
    /// A dialect without a driver: the decoder is failed from the start and reads nothing.
    Unsupported,
}

/// What a driver says after an event.
#[derive(Debug, PartialEq, Eq)]
pub(crate) enum Flow {
    Continue,
    /// The stream's end sentinel: ignore whatever follows.
    Done,
}

/// Whether a dialect's streamed responses are decoded here (see [`Dialect::supports_streaming`]).
pub(crate) fn decodes(dialect: Dialect) -> bool {
    Driver::of(dialect).is_some()
}

impl StreamDecoder {
    /// A decoder at the start of a response in `dialect`; for a dialect without a decoder, one
    /// whose every call fails with an error that says so.
    pub fn new(dialect: Dialect) -> Self {
        let (driver, error) = match Driver::of(dialect) {
            Some(driver) => (driver, None),
            None => {
                let known: Vec<&str> = Dialect::ALL.into_iter().filter(|d| decodes(*d)).map(Dialect::as_str).collect();
                let message = format!("there is no stream decoder for {dialect} (there is one for {})", known.join(", "));
                (Driver::Unsupported, Some(StreamError::new(message)))
            }
        };
        StreamDecoder {
            dialect,
            sse: SseParser::new(),
            driver,
            calls: Calls::default(),
            done: false,
            error,
        }
    }

    /// Bounds one SSE event (its unfinished line plus its data) in bytes; a larger one fails the
    /// stream instead of growing memory. Default 64 MiB.
    pub fn with_max_event_bytes(mut self, max: usize) -> Self {
        self.sse = self.sse.with_max_event_bytes(max);
        self
    }

    /// The dialect this decoder reads.
    pub fn dialect(&self) -> Dialect {
        self.dialect
    }

    /// Bytes held between pushes: the SSE parser's unfinished line and event, plus the input
    /// text of the calls still open (a finished call's input is handed out and dropped).
    pub fn buffered_bytes(&self) -> usize {
        self.sse.buffered_bytes() + self.calls.open_input_bytes()
    }

    /// Feeds the next bytes of the response body; returns the events they complete, in order.
    pub fn push(&mut self, bytes: &[u8]) -> Result<Vec<ToolCallEvent>, StreamError> {
        if let Some(err) = &self.error {
            return Err(err.clone());
        }
        let mut out = Vec::new();
        if self.done {
            return Ok(out);
        }
        let mut failure = None;
        let (driver, calls, done) = (&mut self.driver, &mut self.calls, &mut self.done);
        let parsed = self.sse.push(bytes, |event| {
            let result = match driver.event(&event, calls, &mut out) {
                Ok(Flow::Continue) => return true,
                // The end sentinel ends the stream here: what `finish` would do happens now.
                Ok(Flow::Done) => driver.finish(calls, &mut out),
                Err(err) => Err(err),
            };
            *done = true;
            if let Err(err) = result {
                failure = Some(err);
            }
            false
        });
        if let Err(err) = parsed {
            failure.get_or_insert(StreamError::new(format!("line {}: {}", err.line, err.message)));
        }
        match failure {
            None => Ok(out),
            Some(err) => {
                self.error = Some(err.clone());
                if out.is_empty() { Err(err) } else { Ok(out) }
            }
        }
    }

    /// End of stream: emits InputAvailable for calls still open (e.g. OpenAI chat stream that
    /// ended without finish_reason), or an error for truncated data (an event cut off before its
    /// closing blank line, or an Anthropic/Responses call whose explicit end never came).
    pub fn finish(mut self) -> Result<Vec<ToolCallEvent>, StreamError> {
        if let Some(err) = self.error {
            return Err(err);
        }
        let mut out = Vec::new();
        if self.done {
            return Ok(out);
        }
        if let Some(incomplete) = self.sse.finish() {
            return Err(StreamError::new(format!(
                "line {}: the stream ended in the middle of an event (no closing blank line)",
                incomplete.line
            )));
        }
        self.driver.finish(&mut self.calls, &mut out)?;
        Ok(out)
    }
}

impl Driver {
    /// The driver that reads a dialect's events, if there is one.
    fn of(dialect: Dialect) -> Option<Driver> {
        match dialect {
            Dialect::OpenAiChat => Some(Driver::OpenAiChat(Default::default())),
            Dialect::OpenAiResponses => Some(Driver::OpenAiResponses(Default::default())),
            Dialect::Anthropic => Some(Driver::Anthropic(Default::default())),
            Dialect::GeminiOpenApi | Dialect::GeminiJsonSchema | Dialect::Mcp => None,
        }
    }

    fn event(&mut self, event: &SseEvent, calls: &mut Calls, out: &mut Vec<ToolCallEvent>) -> Result<Flow, StreamError> {
        match self {
            Driver::OpenAiChat(d) => d.event(event, calls, out),
            Driver::OpenAiResponses(d) => d.event(event, calls, out),
            Driver::Anthropic(d) => d.event(event, calls, out),
            Driver::Unsupported => Ok(Flow::Done),
        }
    }

    fn finish(&mut self, calls: &mut Calls, out: &mut Vec<ToolCallEvent>) -> Result<(), StreamError> {
        match self {
            Driver::OpenAiChat(_) => {
                calls.close_all(out);
                Ok(())
            }
            Driver::OpenAiResponses(_) | Driver::Anthropic(_) => match calls.first_open() {
                Some(call) => Err(StreamError::new(format!(
                    "the stream ended before the input of tool call `{}` ({}) was complete",
                    call.id, call.name
                ))),
                None => Ok(()),
            },
            Driver::Unsupported => Ok(()),
        }
    }
}

/// One tool call of the response.
#[derive(Debug)]
pub(crate) struct Call {
    pub(crate) id: String,
    pub(crate) name: String,
    /// Input text received so far (emptied once handed out).
    input: String,
    pub(crate) open: bool,
}

/// The calls of one response, by position.
#[derive(Debug, Default)]
pub(crate) struct Calls {
    calls: Vec<Call>,
}

impl Calls {
    /// Starts a call; returns its position.
    pub(crate) fn start(&mut self, id: String, name: String, out: &mut Vec<ToolCallEvent>) -> usize {
        let index = self.calls.len();
        out.push(ToolCallEvent::InputStart {
            tool_call_id: id.clone(),
            tool_name: name.clone(),
            index,
        });
        self.calls.push(Call {
            id,
            name,
            input: String::new(),
            open: true,
        });
        index
    }

    pub(crate) fn get(&self, index: usize) -> &Call {
        &self.calls[index]
    }

    /// Appends input text to an open call (nothing for an empty piece).
    pub(crate) fn delta(&mut self, index: usize, delta: &str, out: &mut Vec<ToolCallEvent>) {
        if delta.is_empty() {
            return;
        }
        let call = &mut self.calls[index];
        debug_assert!(call.open);
        call.input.push_str(delta);
        out.push(ToolCallEvent::InputDelta {
            tool_call_id: call.id.clone(),
            index,
            delta: delta.to_owned(),
        });
    }

    /// Completes an open call with the streamed input, or with `final_input` when the format
    /// restates it at the end (then it wins).
    pub(crate) fn available(&mut self, index: usize, final_input: Option<String>, out: &mut Vec<ToolCallEvent>) {
        let call = &mut self.calls[index];
        debug_assert!(call.open);
        call.open = false;
        let streamed = std::mem::take(&mut call.input);
        // How much of `input` the deltas already carried (None: the final text contradicts them).
        let carried;
        let mut input = match final_input {
            Some(text) => {
                carried = text.starts_with(&streamed).then_some(streamed.len());
                text
            }
            None => {
                carried = Some(streamed.len());
                streamed
            }
        };
        if input.trim().is_empty() {
            // No input: `{}` (after any whitespace the model sent, so the deltas still add up).
            input.push_str("{}");
        }
        if let Some(carried) = carried.filter(|&n| n < input.len()) {
            out.push(ToolCallEvent::InputDelta {
                tool_call_id: call.id.clone(),
                index,
                delta: input[carried..].to_owned(),
            });
        }
        out.push(ToolCallEvent::InputAvailable {
            tool_call_id: call.id.clone(),
            tool_name: call.name.clone(),
            index,
            input,
        });
    }

    /// Completes every open call, in position order.
    pub(crate) fn close_all(&mut self, out: &mut Vec<ToolCallEvent>) {
        for index in 0..self.calls.len() {
            if self.calls[index].open {
                self.available(index, None, out);
            }
        }
    }

    fn first_open(&self) -> Option<&Call> {
        self.calls.iter().find(|c| c.open)
    }

    fn open_input_bytes(&self) -> usize {
        self.calls.iter().map(|c| c.input.len()).sum()
    }
}
