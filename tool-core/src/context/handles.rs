//! The live handles a call runs with, beside the context that hands them to the tool:
//! [`Writer`] (custom chunks), [`Workflow`] (a workflow step's state and suspension), the
//! [`McpHandle`] interface with its [`Elicitation`] answers, and [`Observe`] with its
//! [`LogLevel`]s (spans and logs through `tracing`).

use std::fmt;
use std::future::Future;
use std::sync::{Arc, Mutex};

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};
use tracing::Instrument;

use super::BoxFuture;
use crate::error::ToolError;

/// A sink for a tool's own chunks (progress, partial results): each becomes a custom event
/// of the run. Without a listener, writes go nowhere.
#[derive(Clone, Default)]
pub struct Writer {
    sink: Option<Arc<dyn Fn(Value) + Send + Sync>>,
}

impl fmt::Debug for Writer {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Writer").field("connected", &self.sink.is_some()).finish()
    }
}

impl Writer {
    /// A writer handing every chunk to `sink`.
    pub fn new(sink: impl Fn(Value) + Send + Sync + 'static) -> Self {
        Writer {
            sink: Some(Arc::new(sink)),
        }
    }

    /// Writes one chunk; returns whether anybody listens. A chunk that does not serialise is
    /// dropped (and `false` returned).
    pub fn write(&self, chunk: impl Serialize) -> bool {
        match (&self.sink, serde_json::to_value(chunk)) {
            (Some(sink), Ok(v)) => {
                sink(v);
                true
            }
            _ => false,
        }
    }

    /// Whether anybody listens.
    pub fn is_connected(&self) -> bool {
        self.sink.is_some()
    }
}

/// The workflow a call runs in (the seed's `WorkflowToolExecutionContext`): shared state the
/// tool may read and replace, and `suspend`, which suspends the workflow step around the call.
///
/// Toolsmith runs tools, not workflows: the application's workflow engine makes a `Workflow`,
/// hands it to the call (`CallOptions::workflow`) and reads it afterwards. A tool that calls
/// [`Workflow::suspend`] ends its call suspended, like [`ToolContext::suspend`](super::ToolContext::suspend), and leaves the
/// payload in the workflow ([`Workflow::suspended`]), so the engine can tell "the step waits"
/// from "the tool waits" and park the whole step; resuming the call (the runtime's `resume`,
/// with data matching the tool's resume schema) continues it, and the engine clears the mark
/// with [`Workflow::take_suspended`].
///
/// ```
/// use tool_core::context::Workflow;
/// let wf = Workflow::new(serde_json::json!({"step": 1}));
/// let seen_by_tool = wf.clone();
/// seen_by_tool.set_state(serde_json::json!({"step": 2}));
/// assert_eq!(wf.state()["step"], 2);
/// let _end_of_the_body = seen_by_tool.suspend("lookup", serde_json::json!({"need": "approval from finance"}));
/// assert_eq!(wf.suspended(), Some(serde_json::json!({"need": "approval from finance"})));
/// assert!(wf.take_suspended().is_some() && wf.suspended().is_none());
/// ```
#[derive(Debug, Clone, Default)]
pub struct Workflow {
    state: Arc<Mutex<Value>>,
    suspended: Arc<Mutex<Option<Value>>>,
}

impl Workflow {
    /// A workflow with an initial state.
    pub fn new(state: Value) -> Self {
        Workflow {
            state: Arc::new(Mutex::new(state)),
            suspended: Arc::default(),
        }
    }

    /// The current state.
    pub fn state(&self) -> Value {
        self.state.lock().unwrap_or_else(|p| p.into_inner()).clone()
    }

    /// Replaces the state.
    pub fn set_state(&self, state: Value) {
        *self.state.lock().unwrap_or_else(|p| p.into_inner()) = state;
    }

    /// Suspends the workflow step this call runs in: marks the workflow with `payload` and
    /// returns the suspension the tool's body ends with (`return Err(wf.suspend(tool, p))`;
    /// `tool` names the tool in the message). The call ends suspended with the same payload.
    pub fn suspend(&self, tool: &str, payload: impl Serialize) -> ToolError {
        // Serialised once, for the suspension; a payload that does not serialise makes an error
        // instead, and marks nothing.
        let error = super::suspension(tool, payload);
        if let Some(value) = error.suspension_payload() {
            *self.suspended.lock().unwrap_or_else(|p| p.into_inner()) = Some(value.clone());
        }
        error
    }

    /// The payload of the suspension a tool asked for, while it is marked.
    pub fn suspended(&self) -> Option<Value> {
        self.suspended.lock().unwrap_or_else(|p| p.into_inner()).clone()
    }

    /// Takes the mark off (the engine resumed the step) and returns its payload.
    pub fn take_suspended(&self) -> Option<Value> {
        self.suspended.lock().unwrap_or_else(|p| p.into_inner()).take()
    }
}

/// What a user answered to an elicitation.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "action", rename_all = "lowercase")]
pub enum Elicitation {
    /// They submitted the form.
    Accept {
        /// The submitted values (matching the requested schema).
        content: Value,
    },
    /// They said no.
    Decline,
    /// They dismissed it.
    Cancel,
}

/// What a tool can do with the MCP client that called it: ask its user for structured input,
/// send log messages and progress. The MCP server implements it per request.
pub trait McpHandle: Send + Sync + 'static {
    /// Asks the client's user for input matching `schema` (a flat object schema).
    fn elicit(&self, message: String, schema: Value) -> BoxFuture<'_, Result<Elicitation, ToolError>>;
    /// Sends a log message (`notifications/message`).
    fn log(&self, level: LogLevel, data: Value);
    /// Reports progress (`notifications/progress`) for the request's progress token.
    fn progress(&self, progress: f64, total: Option<f64>, message: Option<String>);
    /// Asks the client's model for a completion (`sampling/createMessage`; `request` holds its
    /// params: `messages`, `maxTokens`, …) and returns its result.
    fn sample(&self, request: Value) -> BoxFuture<'_, Result<Value, ToolError>> {
        let _ = request;
        Box::pin(std::future::ready(Err(ToolError::new("This MCP client cannot sample a model."))))
    }
    /// Asks the client several things at once, each under a key the tool chooses: `requests`
    /// maps a key to an MCP request, `{"method": "elicitation/create" | "sampling/createMessage"
    /// | "roots/list", "params": {…}}`. On MCP 2026-07-28 they travel together in one
    /// input-required result (a client that leaves one out is asked again for it); on earlier
    /// revisions each is a request of the server's own. Returns each answer (the client's
    /// result, as JSON) under its key.
    fn ask(&self, requests: serde_json::Map<String, Value>) -> BoxFuture<'_, Result<serde_json::Map<String, Value>, ToolError>> {
        let _ = requests;
        Box::pin(std::future::ready(Err(ToolError::new(
            "This MCP client cannot be asked for input.",
        ))))
    }
    /// Whether the client declared the capability that a request `method` of [`Self::ask`]
    /// needs (`elicitation/create`: elicitation, `sampling/createMessage`: sampling,
    /// `roots/list`: roots). A tool asks only what its client can answer.
    fn supports(&self, method: &str) -> bool {
        let _ = method;
        false
    }
}

impl fmt::Debug for dyn McpHandle {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("McpHandle")
    }
}

/// Log levels of [`Observe::log`].
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "lowercase")]
pub enum LogLevel {
    /// Debug
    Debug,
    /// Info
    Info,
    /// Warn
    Warn,
    /// Error
    Error,
    /// Fatal (reported at `tracing`'s error level)
    Fatal,
}

/// Spans and structured logs, built on `tracing`: without a subscriber a span just runs the
/// future and a log does nothing. A call made by an MCP client also sends its logs there.
#[derive(Debug, Clone, Copy)]
pub struct Observe<'a> {
    pub(super) tool: &'a str,
    pub(super) tool_call_id: &'a str,
    pub(super) mcp: Option<&'a dyn McpHandle>,
}

impl Observe<'_> {
    /// Runs `fut` inside a child span named `name` with the given attributes.
    pub async fn span<F: Future>(&self, name: &str, fut: F, attrs: &[(&str, Value)]) -> F::Output {
        let attributes = attrs_json(attrs);
        let span = tracing::info_span!(
            "tool.span",
            otel.name = name,
            tool = self.tool,
            tool_call_id = self.tool_call_id,
            attributes = %attributes,
        );
        fut.instrument(span).await
    }

    /// Emits a structured log event.
    pub fn log(&self, level: LogLevel, message: &str, data: Option<&Value>) {
        if let Some(mcp) = self.mcp {
            let mut entry = Map::new();
            entry.insert("message".into(), Value::String(message.to_owned()));
            if let Some(d) = data {
                entry.insert("data".into(), d.clone());
            }
            mcp.log(level, Value::Object(entry));
        }
        let data = data.map(Value::to_string).unwrap_or_default();
        let (tool, id) = (self.tool, self.tool_call_id);
        match level {
            LogLevel::Debug => tracing::debug!(tool, tool_call_id = id, data, "{message}"),
            LogLevel::Info => tracing::info!(tool, tool_call_id = id, data, "{message}"),
            LogLevel::Warn => tracing::warn!(tool, tool_call_id = id, data, "{message}"),
            LogLevel::Error | LogLevel::Fatal => {
                tracing::error!(tool, tool_call_id = id, data, fatal = level == LogLevel::Fatal, "{message}")
            }
        }
    }
}

fn attrs_json(attrs: &[(&str, Value)]) -> Value {
    Value::Object(attrs.iter().map(|(k, v)| ((*k).to_string(), v.clone())).collect())
}
