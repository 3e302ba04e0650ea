//! The execution context a tool can take as its `#[ctx]` parameter.
//!
//! Owns [`ToolContext`] (typed request context, raw context map, call identity, cancellation,
//! `agent`, `workflow`, `mcp`, `observe`), [`RequestContext`] (the untyped map used when a tool
//! declares no `context` type), [`ToolCallInfo`] (what lifecycle hooks receive), [`Writer`]
//! (custom chunks), [`Workflow`] (workflow state), the [`McpHandle`] interface and [`Observe`]
//! (spans and logs through `tracing`). It does not validate anything: `call` validates before
//! a context is built, and the runtime validates suspend payloads and resume data.

use std::fmt;
use std::marker::PhantomData;
use std::sync::Arc;
use std::time::Duration;

use schemars::JsonSchema;
use serde::de::DeserializeOwned;
use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};
use tokio_util::sync::CancellationToken;

use crate::caller::Caller;
use crate::error::ToolError;
use crate::idempotency::IdempotencyKey;
pub(crate) use boxed::BoxFuture;

/// The future type of the object-safe async methods, named publicly as `tool::BoxFuture` (its
/// one path); defined here, below `tool`, because the context's handles return it too.
pub(crate) mod boxed {
    /// A boxed, sendable future: what [`Tool::execute`](crate::Tool::execute) and the other
    /// object-safe async methods return.
    pub type BoxFuture<'a, T> = std::pin::Pin<Box<dyn std::future::Future<Output = T> + Send + 'a>>;
}
use crate::spec::BackgroundOverride;

mod handles;
mod loaded;
pub use handles::{Elicitation, LogLevel, McpHandle, Observe, Workflow, Writer};
pub(crate) use loaded::SEARCH_TOOL;
pub use loaded::{Deferral, LoadedTools};

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

/// The key of Mastra's request-context entry naming the caller's resource id; `resourceId`
/// and `resource_id` are read too (by the providers' caller-supplied scope, for one).
pub const RESOURCE_ID_KEYS: [&str; 3] = ["mastra__resourceId", "resourceId", "resource_id"];

/// What a call *is*: its identity and what the caller sent with it. Plain data, kept with a
/// call that waits (for approval or resume data) and given back to it when it continues.
///
/// ```
/// use tool_core::context::CallData;
/// let call = CallData { thread_id: Some("t-1".into()), ..CallData::default() };
/// let stored = serde_json::to_value(&call).unwrap();
/// assert_eq!(stored, serde_json::json!({"thread_id": "t-1"}));
/// assert_eq!(serde_json::from_value::<CallData>(stored).unwrap(), call);
/// ```
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct CallData {
    /// The provider's id for this call; generated when absent.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tool_call_id: Option<String>,
    /// The conversation thread.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub thread_id: Option<String>,
    /// The resource (user) the call acts for.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub resource_id: Option<String>,
    /// Who made the call, as the transport authenticated them (`None`: nobody was asked, as on
    /// stdio). Kept with a waiting call: whoever continues it is checked against it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub caller: Option<Arc<Caller>>,
    /// Conversation messages, passed to the context and hooks: shared, so a call's copies of
    /// its data (a waiting call continued, each call of a streamed response) never copy the
    /// conversation.
    #[serde(default, skip_serializing_if = "no_messages")]
    pub messages: Arc<[Value]>,
    /// The request context (a JSON object); validated when the tool declares `context = T`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub context: Option<Value>,
    /// Tunes the background settings of a tool that opted in (runtime calls only; ignored for
    /// tools that did not opt in).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub background: Option<BackgroundOverride>,
    /// The call's idempotency key when the caller gives one (or the runtime recorded it when
    /// it first prepared the call); otherwise it is derived from the call's identity (see
    /// [`crate::idempotency`]).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub idempotency_key: Option<String>,
    /// The tools the conversation has loaded through tool search ([`LoadedTools`]), when the application uses it: the runtime then refuses
    /// a call of a deferred tool (`#[tool(defer_loading)]`) that is not in it, as an unknown tool
    /// the model must search for first. `None` (the default): no tool is refused for being
    /// deferred, as before tool search, since only the application knows whether its
    /// conversation searches. Kept with a waiting call, so its continuation (on any instance
    /// sharing the store) sees the same set: [`EventStream::loaded_tools`](crate::runtime::EventStream::loaded_tools)
    /// hands it back.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub loaded_tools: Option<LoadedTools>,
    /// Which tools the loaded-set check treats as deferred ([`Deferral`]: a catalog's
    /// [`Catalog::deferral`](crate::catalog::Catalog::deferral), the MCP server's
    /// [`McpConfig::deferral`](crate::mcp::McpConfig)); `None`: each tool's own
    /// `defer_loading`. Only read with `loaded_tools`; kept with a waiting call.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub deferral: Option<Deferral>,
}

fn no_messages(messages: &Arc<[Value]>) -> bool {
    messages.is_empty()
}

impl CallData {
    /// Shared, as a call's views hold it ([`ToolCallInfo::data`]). A call that brings nothing
    /// (the common direct call) shares one empty value rather than allocating its own.
    pub fn shared(self) -> Arc<CallData> {
        if self.is_empty() { Self::empty() } else { Arc::new(self) }
    }

    /// [`CallData::shared`] out of a call's options: an empty one is left in place (neither
    /// moved nor dropped twice), another is taken.
    pub(crate) fn take_shared(&mut self) -> Arc<CallData> {
        if self.is_empty() {
            Self::empty()
        } else {
            Arc::new(std::mem::take(self))
        }
    }

    fn empty() -> Arc<CallData> {
        static EMPTY: std::sync::OnceLock<Arc<CallData>> = std::sync::OnceLock::new();
        EMPTY.get_or_init(Default::default).clone()
    }

    /// Whether the call brings nothing: field by field, without building a default to compare with.
    fn is_empty(&self) -> bool {
        let CallData {
            tool_call_id,
            thread_id,
            resource_id,
            caller,
            messages,
            context,
            background,
            idempotency_key,
            loaded_tools,
            deferral,
        } = self;
        tool_call_id.is_none()
            && thread_id.is_none()
            && resource_id.is_none()
            && caller.is_none()
            && messages.is_empty()
            && context.is_none()
            && background.is_none()
            && idempotency_key.is_none()
            && loaded_tools.is_none()
            && deferral.is_none()
    }
}

/// What a call *runs with*: live handles that belong to whoever runs it now. Never stored: a
/// call that continues after a wait runs with the continuing request's own.
#[derive(Debug, Clone, Default)]
pub struct CallEnv {
    /// Cancels the call; a cancelled call ends as [`ErrorKind::Aborted`](crate::ErrorKind::Aborted).
    pub cancellation: Option<CancellationToken>,
    /// Ends the call as aborted after this long.
    pub timeout: Option<Duration>,
    /// Where the tool's custom chunks go.
    pub writer: Writer,
    /// The workflow running the call.
    pub workflow: Option<Workflow>,
    /// The MCP client that asked for the call.
    pub mcp: Option<Arc<dyn McpHandle>>,
    /// The idempotency key as the runtime resolved it for this run (marked when an earlier run
    /// holding it was interrupted); `None`: the call's own (see [`IdempotencyKey::for_call`]).
    pub idempotency: Option<IdempotencyKey>,
}

/// Identity of one tool call and what travels with it, shared by the context and the
/// lifecycle hooks. Built from a call's [`CallData`] (shared, never copied: `data`) and
/// [`CallEnv`] (its handles moved in) by [`ToolCallInfo::new`].
#[derive(Debug, Clone, Default)]
pub struct ToolCallInfo {
    /// The provider's id for this call (generated when the caller gave none).
    pub tool_call_id: String,
    /// The tool's id (shared with the registry's entry: a call does not copy it).
    pub tool_name: Arc<str>,
    /// What the call is: its thread, resource, caller, conversation messages and request
    /// context as the caller sent them (shared with whoever runs the call, never copied).
    pub data: Arc<CallData>,
    /// Cancellation of the call.
    pub cancellation: CallCancellation,
    /// The resume data of a resumed call (validated against the tool's `resume` schema).
    pub resume_data: Option<Value>,
    /// Where custom chunks go.
    pub writer: Writer,
    /// The workflow running this call, if any.
    pub workflow: Option<Workflow>,
    /// The MCP client that asked for this call, if any.
    pub mcp: Option<Arc<dyn McpHandle>>,
    /// The call's idempotency key: the same for every run of this call (retries, background
    /// attempts, approval, resume), different for different calls (see [`crate::idempotency`]).
    pub idempotency_key: IdempotencyKey,
}

impl ToolCallInfo {
    /// What tool `tool_name` sees of a call with id `tool_call_id` (its data's id, if any, is
    /// ignored: the caller resolved it), running with `env`'s handles and the given cancellation.
    pub fn new(tool_name: &str, tool_call_id: String, data: Arc<CallData>, env: CallEnv, cancellation: CancellationToken) -> Self {
        Self::with_key(tool_name.into(), tool_call_id, &data, env, cancellation.into(), false)
    }

    /// [`Self::new`], its derived idempotency key left pending when `lazy` (made when first
    /// read through a [`ToolContext`], see [`crate::idempotency`]). A given key is kept as is.
    pub(crate) fn with_key(
        tool_name: Arc<str>,
        tool_call_id: String,
        data: &Arc<CallData>,
        env: CallEnv,
        cancellation: CallCancellation,
        lazy: bool,
    ) -> Self {
        let given = data.idempotency_key.as_ref().is_some_and(|k| !k.is_empty());
        let idempotency_key = env.idempotency.unwrap_or_else(|| match lazy && !given {
            true => IdempotencyKey::pending(),
            false => IdempotencyKey::for_call(&tool_name, &tool_call_id, data),
        });
        ToolCallInfo {
            idempotency_key,
            tool_call_id,
            tool_name,
            data: Arc::clone(data),
            cancellation,
            resume_data: None,
            writer: env.writer,
            workflow: env.workflow,
            mcp: env.mcp,
        }
    }

    /// The call's idempotency key, made now if it was left pending.
    fn settled_key(&self) -> &IdempotencyKey {
        self.idempotency_key.settle(
            &self.tool_name,
            &self.tool_call_id,
            self.data.thread_id.as_deref(),
            self.data.resource_id.as_deref(),
        )
    }
}

/// A call's cancellation token, as [`ToolCallInfo`] carries it.
///
/// A call that can be cancelled from outside (its caller gave a token, it has a timeout, its
/// body runs off the calling task) holds that token from the start. A call nothing outside can
/// cancel gets its token the first time someone asks for one ([`CallCancellation::token`], or
/// through `Deref`): the common call does not pay for a token nobody reads. Such a token is
/// cancelled only by whoever holds it, so until it exists the call reads as not cancelled.
///
/// ```
/// use tool_core::context::CallCancellation;
/// use tokio_util::sync::CancellationToken;
/// let caller = CancellationToken::new();
/// let given = CallCancellation::from(caller.clone());
/// caller.cancel();
/// assert!(given.is_cancelled());
/// let own = CallCancellation::default();
/// assert!(!own.is_cancelled());
/// own.token().cancel();
/// assert!(own.is_cancelled() && own.token().is_cancelled());
/// ```
#[derive(Debug, Clone, Default)]
pub struct CallCancellation(std::sync::OnceLock<CancellationToken>);

impl CallCancellation {
    /// The token (made now, when the call had none yet).
    pub fn token(&self) -> &CancellationToken {
        self.0.get_or_init(CancellationToken::new)
    }

    /// Whether the call was cancelled (a token not yet made was not: nobody else holds it).
    pub fn is_cancelled(&self) -> bool {
        self.0.get().is_some_and(CancellationToken::is_cancelled)
    }
}

impl From<CancellationToken> for CallCancellation {
    fn from(token: CancellationToken) -> Self {
        CallCancellation(std::sync::OnceLock::from(token))
    }
}

impl From<Option<CancellationToken>> for CallCancellation {
    fn from(token: Option<CancellationToken>) -> Self {
        token.map(Self::from).unwrap_or_default()
    }
}

impl std::ops::Deref for CallCancellation {
    type Target = CancellationToken;

    fn deref(&self) -> &CancellationToken {
        self.token()
    }
}

/// Builds the suspension a tool returns from its body (see [`ToolContext::suspend`]).
fn suspension(tool: &str, payload: impl Serialize) -> ToolError {
    match serde_json::to_value(payload) {
        Ok(payload) => ToolError::suspended(
            format!("Tool `{tool}` is waiting for input and will continue when it is resumed."),
            payload,
        ),
        Err(e) => ToolError::with_kind(
            crate::error::ErrorKind::InvalidOutput,
            format!("Tool `{tool}` tried to suspend with a payload that does not serialise: {e}"),
        ),
    }
}

/// The resume data of `call` as `R`: the model-readable error of a tool that cannot read it.
fn read_resume<R: DeserializeOwned>(call: &ToolCallInfo) -> Result<Option<R>, ToolError> {
    match &call.resume_data {
        None => Ok(None),
        Some(v) => R::deserialize(v).map(Some).map_err(|e| {
            ToolError::with_kind(
                crate::error::ErrorKind::InvalidInput,
                format!(
                    "Tool `{}`: the resume data could not be read: {}",
                    call.tool_name,
                    crate::json::bound_quotes(&e.to_string())
                ),
            )
        }),
    }
}

/// The agent-facing part of a call's context: ids, messages, suspension, resume data and the
/// writer for custom chunks. `S` and `R` are the tool's suspend and resume types, as in its
/// [`ToolContext`].
pub struct Agent<'a, S = Value, R = Value> {
    call: &'a ToolCallInfo,
    payloads: PhantomData<fn(S) -> R>,
}

impl<S, R> Clone for Agent<'_, S, R> {
    fn clone(&self) -> Self {
        *self
    }
}

impl<S, R> Copy for Agent<'_, S, R> {}

impl<S, R> fmt::Debug for Agent<'_, S, R> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Agent").field("call", self.call).finish()
    }
}

impl<'a, S, R> Agent<'a, S, R> {
    /// The provider's id for this call.
    pub fn tool_call_id(&self) -> &'a str {
        &self.call.tool_call_id
    }

    /// The conversation thread, when known.
    pub fn thread_id(&self) -> Option<&'a str> {
        self.call.data.thread_id.as_deref()
    }

    /// The resource (user) the call acts for, when known.
    pub fn resource_id(&self) -> Option<&'a str> {
        self.call.data.resource_id.as_deref()
    }

    /// The conversation so far.
    pub fn messages(&self) -> &'a [Value] {
        &self.call.data.messages
    }

    /// The resume data as the tool's `resume` type, when this run continues a suspended call
    /// (see [`ToolContext::resume_data`]).
    pub fn resume_data(&self) -> Result<Option<R>, ToolError>
    where
        R: DeserializeOwned,
    {
        read_resume(self.call)
    }

    /// Suspends the call with a payload of the tool's `suspend` type: return the result from
    /// the tool body (`return Err(cx.agent().suspend(p))`, see [`ToolContext::suspend`]).
    pub fn suspend(&self, payload: S) -> ToolError
    where
        S: Serialize,
    {
        suspension(&self.call.tool_name, payload)
    }

    /// The writer for custom chunks.
    pub fn writer(&self) -> &'a Writer {
        &self.call.writer
    }
}

/// What a tool receives through its `#[ctx]` parameter.
///
/// `C` is the tool's request-context type (`context = C` in the attribute), already validated
/// against its schema; without one it is [`RequestContext`]. `S` and `R` are the tool's
/// `suspend` and `resume` types: [`ToolContext::suspend`] takes an `S`,
/// [`ToolContext::resume_data`] gives an `R`. Without `suspend = …` / `resume = …` they are
/// [`Value`] (untyped, no schema), and `#[tool]` checks at compile time that the parameter
/// says the same as the attribute.
///
/// ```
/// use tool_core::prelude::*;
/// use tool_core::runtime::{ResumeOptions, Outcome, Runtime};
///
/// /// What the tool asks.
/// #[derive(Serialize, Deserialize, JsonSchema)]
/// pub struct Ask {
///     /// The question for the user
///     pub question: String,
/// }
///
/// /// What the user answers.
/// #[derive(Deserialize, JsonSchema)]
/// pub struct Reply {
///     /// Whether to go on
///     pub go: bool,
/// }
///
/// /// Deletes a file once the user agrees
/// #[tool(suspend = Ask, resume = Reply)]
/// pub async fn delete_file(path: String, #[ctx] cx: ToolContext<RequestContext, Ask, Reply>) -> Result<String, ToolError> {
///     match cx.resume_data()? {
///         None => Err(cx.suspend(Ask { question: format!("Delete {path}?") })),
///         Some(Reply { go: true }) => Ok(format!("deleted {path}")),
///         Some(Reply { go: false }) => Ok("kept".into()),
///     }
/// }
///
/// # tokio::runtime::Runtime::new().unwrap().block_on(async {
/// let runtime = Runtime::new(Registry::try_from_tools([delete_file::tool()]).unwrap());
/// let run = runtime.call("delete-file", json!({"path": "a.txt"}), CallOptions::default()).finish().await;
/// let Outcome::Suspended(waiting) = run.outcome else { panic!("{:?}", run.outcome) };
/// assert_eq!(waiting.call.suspend_payload, Some(json!({"question": "Delete a.txt?"})));
/// let run = runtime.resume(waiting.id(), json!({"go": true}), ResumeOptions::default()).await.unwrap().finish().await;
/// let Outcome::Done(out) = run.outcome else { panic!("{:?}", run.outcome) };
/// assert_eq!(out.value(), json!("deleted a.txt"));
/// # });
/// ```
pub struct ToolContext<C = RequestContext, S = Value, R = Value> {
    request_context: C,
    raw: Arc<Map<String, Value>>,
    call: ToolCallInfo,
    payloads: PhantomData<fn(S) -> R>,
}

impl<C: Clone, S, R> Clone for ToolContext<C, S, R> {
    fn clone(&self) -> Self {
        ToolContext {
            request_context: self.request_context.clone(),
            raw: self.raw.clone(),
            call: self.call.clone(),
            payloads: PhantomData,
        }
    }
}

impl<C: fmt::Debug, S, R> fmt::Debug for ToolContext<C, S, R> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("ToolContext")
            .field("request_context", &self.request_context)
            .field("raw", &self.raw)
            .field("call", &self.call)
            .finish()
    }
}

impl<C, S, R> ToolContext<C, S, R> {
    /// Builds a context (the registry does this for every call); the payload types follow
    /// from where it goes (a tool's `execute`).
    pub fn new(request_context: C, raw: Arc<Map<String, Value>>, call: ToolCallInfo) -> Self {
        ToolContext {
            request_context,
            raw,
            call,
            payloads: PhantomData,
        }
    }

    /// The same context with other payload types: for `#[tool]`'s generated code, which
    /// checks on its own that they agree with the tool's (see `__private_v0_1::ContextParam`).
    pub(crate) fn with_payloads<S2, R2>(self) -> ToolContext<C, S2, R2> {
        ToolContext {
            request_context: self.request_context,
            raw: self.raw,
            call: self.call,
            payloads: PhantomData,
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

    /// The call's identity (its idempotency key made, if it was left pending).
    pub fn call(&self) -> &ToolCallInfo {
        self.call.settled_key();
        &self.call
    }

    /// The provider's id for this call.
    pub fn tool_call_id(&self) -> &str {
        &self.call.tool_call_id
    }

    /// Who made the call, as the transport authenticated them: an OAuth token's subject,
    /// scopes, client and chosen claims, or the holder of the server's static token; `None`
    /// when nobody was asked (stdio, an open endpoint, a direct call).
    pub fn caller(&self) -> Option<&Caller> {
        self.call.data.caller.as_deref()
    }

    /// The call's cancellation token: cancelled when the caller aborts or a timeout fires.
    pub fn cancellation(&self) -> &CancellationToken {
        self.call.cancellation.token()
    }

    /// The call's idempotency key: the same every time this call runs (a retry with the same
    /// call id, a background attempt, after approval, after resume), different for another
    /// call. Pass it to services that take one (a payment API's `Idempotency-Key`), or record
    /// it with the effect. For a tool declared `idempotent`, the runtime runs the body once per
    /// key; [`IdempotencyKey::after_interruption`] tells a body declared
    /// `idempotent = "recover"` that an earlier run was cut short before its result was stored.
    pub fn idempotency_key(&self) -> &IdempotencyKey {
        self.call.settled_key()
    }

    /// Whether the call has been cancelled.
    pub fn is_cancelled(&self) -> bool {
        self.call.cancellation.is_cancelled()
    }

    /// The cooperative cancellation check for a body that does not await (a CPU loop, blocking
    /// I/O): an aborted error once the call was cancelled or timed out, so `cx.check_cancelled()?`
    /// in the loop ends the work, not just the response. One atomic load.
    ///
    /// An async body needs no check: its future is dropped at the cancellation or timeout.
    /// Rust cannot stop a thread from outside, so blocking work in-process ends only where it
    /// checks; `#[tool(isolate = "process")]` is the hard guarantee (the process is killed).
    pub fn check_cancelled(&self) -> Result<(), ToolError> {
        if self.call.cancellation.is_cancelled() {
            Err(ToolError::aborted(format!("Tool `{}` was cancelled", self.call.tool_name)))
        } else {
            Ok(())
        }
    }

    /// The agent-facing context: thread and resource ids, messages, suspension, resume data,
    /// the writer.
    pub fn agent(&self) -> Agent<'_, S, R> {
        Agent {
            call: &self.call,
            payloads: PhantomData,
        }
    }

    /// Suspends the call with a payload of the tool's `suspend` type (checked against its
    /// schema too, for a type whose serialisation says more than its schema); the call waits
    /// until it is resumed with data matching the `resume` type. Return it from the body:
    /// `return Err(cx.suspend(Conflict { path }))` (see the example on [`ToolContext`]).
    pub fn suspend(&self, payload: S) -> ToolError
    where
        S: Serialize,
    {
        suspension(&self.call.tool_name, payload)
    }

    /// The resume data as the tool's `resume` type, when this run continues a suspended call
    /// (`None` on the first run). Data that does not decode into `R` (it was checked against
    /// the schema, but a type may ask more) is a model-readable error.
    pub fn resume_data(&self) -> Result<Option<R>, ToolError>
    where
        R: DeserializeOwned,
    {
        read_resume(&self.call)
    }

    /// The writer for custom chunks (each becomes an event of the run).
    pub fn writer(&self) -> &Writer {
        &self.call.writer
    }

    /// The workflow running this call, if any.
    pub fn workflow(&self) -> Option<&Workflow> {
        self.call.workflow.as_ref()
    }

    /// The MCP client that asked for this call, if any.
    pub fn mcp(&self) -> Option<&dyn McpHandle> {
        self.call.mcp.as_deref()
    }

    /// Spans and structured logs for this call.
    pub fn observe(&self) -> Observe<'_> {
        Observe {
            tool: &self.call.tool_name,
            tool_call_id: &self.call.tool_call_id,
            mcp: self.call.mcp.as_deref(),
        }
    }
}
