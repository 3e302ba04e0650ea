//! A model's streamed response, replayed through the runtime in a test.
//!
//! Owns [`replay`], [`Replay`] (the bytes, the tools, how to chunk the bytes, the call options)
//! and [`Replayed`] (the events of every call, the live previews seen on the way, the hooks,
//! logs and spans). The bytes go through [`Runtime::stream`] exactly as an application feeds
//! a provider's response: the kit only records.

use std::collections::BTreeMap;
use std::future::{Future, IntoFuture};
use std::pin::Pin;

use serde_json::Value;

use super::call::Observers;
use super::capture::{Log, SpanRecord};
use super::hooks::HookCall;
use super::scripted::ScriptedStream;
use crate::call::CallOptions;
use crate::dialect::Dialect;
use crate::registry::{IntoTool, Registry};
use crate::runtime::{Event, RunEventKind, Runtime, RuntimeBuilder, ShownEvent};
use crate::stream::StreamError;

type Configure = Box<dyn FnOnce(RuntimeBuilder) -> RuntimeBuilder>;

/// Replays `bytes`, a response streamed in `dialect` (recorded, or made by a
/// [`ScriptedStream`]), against the process's registry unless [`Replay::tools`] or
/// [`Replay::registry`] says otherwise. `.await` it.
pub fn replay(dialect: Dialect, bytes: impl AsRef<[u8]>) -> Replay {
    Replay {
        dialect,
        bytes: bytes.as_ref().to_vec(),
        registry: None,
        byte_chunk: 1,
        options: CallOptions::default(),
        configure: None,
    }
}

impl ScriptedStream {
    /// Replays this stream (see [`replay`]).
    pub fn replay(&self) -> Replay {
        replay(self.dialect(), self.sse_bytes())
    }
}

/// A replay being set up.
#[must_use = "a replay does nothing until it is awaited"]
pub struct Replay {
    dialect: Dialect,
    bytes: Vec<u8>,
    registry: Option<Registry>,
    byte_chunk: usize,
    options: CallOptions,
    configure: Option<Configure>,
}

impl Replay {
    /// The tools the model may call (default: every tool of the process).
    pub fn tools<I>(mut self, tools: I) -> Self
    where
        I: IntoIterator,
        I::Item: IntoTool,
    {
        self.registry = Some(Registry::try_from_tools(tools).unwrap_or_else(|e| panic!("testing::replay: {e}")));
        self
    }

    /// The tools of `registry` (with its limits and execution policy).
    pub fn registry(mut self, registry: &Registry) -> Self {
        self.registry = Some(super::hooks::copy_registry(registry, |tool| tool));
        self
    }

    /// Feeds the bytes `n` at a time, as a network would split them (default: one at a time,
    /// so every preview the input passes through is seen).
    pub fn byte_chunks(mut self, n: usize) -> Self {
        self.byte_chunk = n.max(1);
        self
    }

    /// The options every call gets (request context, thread, timeout…).
    pub fn options(mut self, options: CallOptions) -> Self {
        self.options = options;
        self
    }

    /// Configures the runtime (approval for all, transform policy, store…).
    pub fn runtime(mut self, configure: impl FnOnce(RuntimeBuilder) -> RuntimeBuilder + 'static) -> Self {
        self.configure = Some(Box::new(configure));
        self
    }

    async fn run(self) -> Replayed {
        let observers = Observers::default();
        let registry = observers
            .hooks
            .wrap_registry(self.registry.as_ref().unwrap_or_else(|| Registry::global()));
        let builder = Runtime::builder(registry);
        let runtime = match self.configure {
            Some(configure) => configure(builder),
            None => builder,
        }
        .build();
        let (dialect, bytes, byte_chunk, options) = (self.dialect, self.bytes, self.byte_chunk, self.options);
        let feed = async {
            let (mut run, stream) = runtime.stream(dialect, options);
            let mut previews: BTreeMap<String, Vec<Value>> = BTreeMap::new();
            let mut error = None;
            for chunk in bytes.chunks(byte_chunk) {
                if let Err(e) = run.push(chunk) {
                    error = Some(e);
                    break;
                }
                for (id, preview) in run.previews() {
                    let seen = previews.entry(id.to_owned()).or_default();
                    if seen.last() != Some(preview) {
                        seen.push(preview.clone());
                    }
                }
            }
            let finished = match error {
                Some(e) => Err(e),
                None => run.finish(),
            };
            (stream.collect().await, previews, finished.err())
        };
        let (events, previews, error) = observers.watch(feed).await;
        Replayed {
            events,
            previews,
            error,
            runtime,
            observers,
        }
    }
}

impl IntoFuture for Replay {
    type Output = Replayed;
    type IntoFuture = Pin<Box<dyn Future<Output = Replayed>>>;

    fn into_future(self) -> Self::IntoFuture {
        Box::pin(self.run())
    }
}

/// Everything a replayed response did. Calls run concurrently: their events interleave, each
/// call's own in order.
pub struct Replayed {
    /// Every event of every call.
    pub events: Vec<Event>,
    previews: BTreeMap<String, Vec<Value>>,
    error: Option<StreamError>,
    runtime: Runtime,
    observers: Observers,
}

impl Replayed {
    /// One call's events, as the raw view shows them (payloads as JSON).
    pub fn events_of(&self, tool_call_id: &str) -> Vec<ShownEvent> {
        self.events
            .iter()
            .filter(|e| e.raw.tool_call_id() == tool_call_id)
            .map(|e| e.raw.shown())
            .collect()
    }

    /// One call's event types in order (`input-streaming-start`, `input-delta`, `tool-call`, …).
    pub fn types_of(&self, tool_call_id: &str) -> Vec<&'static str> {
        self.events
            .iter()
            .filter(|e| e.raw.tool_call_id() == tool_call_id)
            .map(|e| e.raw.type_name())
            .collect()
    }

    /// One call's last event: how it ended (`tool-result`, `tool-error`, `tool-call-approval`…).
    pub fn last_of(&self, tool_call_id: &str) -> ShownEvent {
        self.events_of(tool_call_id)
            .pop()
            .unwrap_or_else(|| panic!("no event for call `{tool_call_id}`; calls seen: {:?}", self.call_ids()))
    }

    /// One call's result; fails the test unless it ended with a `tool-result`.
    pub fn result_of(&self, tool_call_id: &str) -> Value {
        match self.last_of(tool_call_id) {
            ShownEvent {
                kind: RunEventKind::ToolResult { output },
                ..
            } => output.result,
            other => panic!(
                "expected call `{tool_call_id}` to succeed, but it ended {}: {other:?}",
                other.type_name()
            ),
        }
    }

    /// One call's error (as JSON); fails the test unless it ended with a `tool-error`.
    pub fn error_of(&self, tool_call_id: &str) -> Value {
        match self.last_of(tool_call_id) {
            ShownEvent {
                kind: RunEventKind::ToolError { error },
                ..
            } => error,
            other => panic!(
                "expected call `{tool_call_id}` to fail, but it ended {}: {other:?}",
                other.type_name()
            ),
        }
    }

    /// The arguments of one call's `tool-call` event (validated, when they were valid).
    pub fn args_of(&self, tool_call_id: &str) -> Option<Value> {
        self.events_of(tool_call_id).into_iter().find_map(|e| match e.kind {
            RunEventKind::ToolCall { args } => Some(args),
            _ => None,
        })
    }

    /// The ids of the calls, in the order their first event arrived.
    pub fn call_ids(&self) -> Vec<String> {
        let mut ids: Vec<String> = Vec::new();
        for e in &self.events {
            if !ids.iter().any(|id| id == e.raw.tool_call_id()) {
                ids.push(e.raw.tool_call_id().to_owned());
            }
        }
        ids
    }

    /// The distinct live previews of one call's input, in the order they were seen (after each
    /// chunk of bytes; a call whose input completes within one chunk shows none).
    pub fn previews(&self, tool_call_id: &str) -> &[Value] {
        self.previews.get(tool_call_id).map_or(&[], Vec::as_slice)
    }

    /// The error the stream ended with, if it could not be read to its end.
    pub fn stream_error(&self) -> Option<&StreamError> {
        self.error.as_ref()
    }

    /// The hooks that ran, with each body's start among them, in order.
    pub fn hooks(&self) -> Vec<HookCall> {
        self.observers.hooks.all()
    }

    /// One call's hooks, in order, as [`HookCall::line`]s.
    pub fn hook_lines(&self, tool_call_id: &str) -> Vec<String> {
        self.observers.hooks.of(tool_call_id).iter().map(HookCall::line).collect()
    }

    /// The `tracing` events made during the replay.
    pub fn logs(&self) -> Vec<Log> {
        self.observers.capture.captured().logs
    }

    /// The spans opened during the replay.
    pub fn spans(&self) -> Vec<SpanRecord> {
        self.observers.capture.captured().spans
    }

    /// The chunks the calls wrote through their writers, in order.
    pub fn chunks(&self) -> Vec<Value> {
        super::call::custom_chunks(&self.events)
    }

    /// The runtime the calls ran in (its store holds the calls that wait).
    pub fn runtime(&self) -> &Runtime {
        &self.runtime
    }
}
