//! The execution context a tool can take as its `#[ctx]` parameter.
//!
//! Owns [`ToolContext`] (typed request context, raw context map, call identity, cancellation,
//! `observe`), [`RequestContext`] (the untyped map used when a tool declares no `context` type),
//! [`ToolCallInfo`] (what lifecycle hooks receive) and [`Observe`] (spans and logs through
//! `tracing`). It does not validate anything: `call` validates before a context is built.

use std::future::Future;
use std::sync::Arc;

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};
use tokio_util::sync::CancellationToken;
use tracing::Instrument;

/// The untyped request context: a JSON object of shared state and dependencies.
///
/// A tool without `context = T` receives this as its typed context.
///
/// ```
/// use tool_core::RequestContext;
/// let cx: RequestContext = serde_json::from_str(r#"{"tenant": "acme", "limit": 3}"#).unwrap();
/// assert_eq!(cx.get::<String>("tenant").as_deref(), Some("acme"));
/// assert_eq!(cx.get::<u32>("limit"), Some(3));
/// assert_eq!(cx.get::<u32>("missing"), None);
/// ```
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(transparent)]
pub struct RequestContext(pub Map<String, Value>);

impl RequestContext {
    /// Reads one key as `T`; `None` if absent or of another shape.
    pub fn get<T: serde::de::DeserializeOwned>(&self, key: &str) -> Option<T> {
        self.0.get(key).and_then(|v| T::deserialize(v).ok())
    }
}

/// Identity of one tool call, shared by the context and the lifecycle hooks.
#[derive(Debug, Clone, Default)]
pub struct ToolCallInfo {
    /// The provider's id for this call (generated when the caller gave none).
    pub tool_call_id: String,
    /// The tool's id.
    pub tool_name: String,
    /// The conversation messages so far, when the caller supplies them.
    pub messages: Vec<Value>,
    /// Cancellation of the call.
    pub cancellation: CancellationToken,
}

/// What a tool receives through its `#[ctx]` parameter.
///
/// `C` is the tool's request-context type (`context = C` in the attribute), already validated
/// against its schema; without one it is [`RequestContext`].
#[derive(Debug, Clone)]
pub struct ToolContext<C = RequestContext> {
    request_context: C,
    raw: Arc<Map<String, Value>>,
    call: ToolCallInfo,
}

impl<C> ToolContext<C> {
    /// Builds a context (the registry does this for every call).
    pub fn new(request_context: C, raw: Arc<Map<String, Value>>, call: ToolCallInfo) -> Self {
        ToolContext {
            request_context,
            raw,
            call,
        }
    }

    /// The typed, validated request context.
    pub fn request_context(&self) -> &C {
        &self.request_context
    }

    /// The raw request-context map as the caller sent it.
    pub fn raw_request_context(&self) -> &Map<String, Value> {
        &self.raw
    }

    /// The call's identity.
    pub fn call(&self) -> &ToolCallInfo {
        &self.call
    }

    /// The provider's id for this call.
    pub fn tool_call_id(&self) -> &str {
        &self.call.tool_call_id
    }

    /// The call's cancellation token: cancelled when the caller aborts or a timeout fires.
    pub fn cancellation(&self) -> &CancellationToken {
        &self.call.cancellation
    }

    /// Whether the call has been cancelled.
    pub fn is_cancelled(&self) -> bool {
        self.call.cancellation.is_cancelled()
    }

    /// Spans and structured logs for this call.
    pub fn observe(&self) -> Observe<'_> {
        Observe {
            tool: &self.call.tool_name,
            tool_call_id: &self.call.tool_call_id,
        }
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
/// future and a log does nothing.
#[derive(Debug, Clone, Copy)]
pub struct Observe<'a> {
    tool: &'a str,
    tool_call_id: &'a str,
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
