//! Calling a tool: one validated call, from raw arguments to its end.
//!
//! Owns [`CallArgs`], [`CallOptions`] (a call's [`CallData`] and [`CallEnv`] together), the
//! [`Finished`] end of a call that ran (output or suspension) and running a tool's future:
//! panics caught, cancellation and timeout honoured. Its parts: `limits` (before parsing),
//! `validate` (schemas, with forgiveness), `closed` (what a strict tool accepts), `redact`
//! (what messages may quote), `trace` (the call's spans). It never decides
//! which tool runs (that is `registry`), never asks for approval (the registry's gate) and
//! never formats for a provider.

mod closed;
mod compiled;
mod implied;
mod limits;
mod redact;
pub mod trace;
mod validate;

use std::any::Any;
use std::borrow::Cow;
use std::future::Future;
use std::panic::AssertUnwindSafe;
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::Duration;

use futures::FutureExt;
use futures::future::{CatchUnwind, Either};
use serde_json::{Map, Value};
use tokio_util::sync::CancellationToken;

pub use limits::Limits;
pub(crate) use limits::check_limits;
// Quoting for the edges (the MCP server's approval question, the CLI's pending list).
pub(crate) use compiled::Compiled;
#[cfg(feature = "mcp")]
pub(crate) use compiled::warm_up_compiler;
#[cfg(feature = "mcp")]
pub(crate) use redact::quote;
pub use redact::{is_secret_key, redact};
pub(crate) use trace::{call_span, record_error};
#[cfg(feature = "check")]
pub(crate) use validate::accepted_input;
pub(crate) use validate::validate_resume;
pub(crate) use validate::{Validated, validate_args, validate_context, validate_output, validate_suspension};

use crate::context::{BoxFuture, CallCancellation, CallData, CallEnv, McpHandle, ToolCallInfo, Workflow, Writer};
use crate::error::{ErrorKind, ToolError};
use crate::isolate::{ExecutionPolicy, Placement};
use crate::panic::panic_message;
use crate::spec::BackgroundOverride;
use crate::tool::{Tool, ToolInput, ToolOutput};

/// Arguments of a call: JSON text as a model sent it, or an already-parsed value.
#[derive(Debug, Clone)]
pub enum CallArgs<'a> {
    /// JSON text (checked against the size and depth limits before it is parsed).
    Text(Cow<'a, str>),
    /// A parsed value.
    Value(Value),
}

impl<'a> From<&'a str> for CallArgs<'a> {
    fn from(s: &'a str) -> Self {
        CallArgs::Text(Cow::Borrowed(s))
    }
}

impl<'a> From<&'a String> for CallArgs<'a> {
    fn from(s: &'a String) -> Self {
        CallArgs::Text(Cow::Borrowed(s))
    }
}

impl From<String> for CallArgs<'_> {
    fn from(s: String) -> Self {
        CallArgs::Text(Cow::Owned(s))
    }
}

impl From<Value> for CallArgs<'_> {
    fn from(v: Value) -> Self {
        CallArgs::Value(v)
    }
}

/// Per-call options: what the call is ([`CallData`]) and what it runs with ([`CallEnv`]).
///
/// ```
/// use std::time::Duration;
/// use tool_core::CallOptions;
/// let options = CallOptions::with_context(serde_json::json!({"tenant": "acme"}))
///     .thread("t-1")
///     .timeout(Duration::from_secs(5));
/// assert_eq!(options.data.thread_id.as_deref(), Some("t-1"));
/// assert_eq!(options.env.timeout, Some(Duration::from_secs(5)));
/// ```
#[derive(Debug, Clone, Default)]
pub struct CallOptions {
    /// What the call is: id, thread, resource, messages, request context, background settings.
    pub data: CallData,
    /// What it runs with: cancellation, timeout, writer, workflow, MCP client.
    pub env: CallEnv,
}

impl CallOptions {
    /// Options with a request context.
    pub fn with_context(context: Value) -> Self {
        CallOptions::default().context(context)
    }

    /// The request context (a JSON object).
    pub fn context(mut self, context: Value) -> Self {
        self.data.context = Some(context);
        self
    }

    /// The provider's id for this call (generated when absent).
    pub fn id(mut self, tool_call_id: impl Into<String>) -> Self {
        self.data.tool_call_id = Some(tool_call_id.into());
        self
    }

    /// The conversation thread.
    pub fn thread(mut self, thread_id: impl Into<String>) -> Self {
        self.data.thread_id = Some(thread_id.into());
        self
    }

    /// The resource (user) the call acts for.
    pub fn resource(mut self, resource_id: impl Into<String>) -> Self {
        self.data.resource_id = Some(resource_id.into());
        self
    }

    /// The conversation so far.
    pub fn messages(mut self, messages: Vec<Value>) -> Self {
        self.data.messages = messages.into();
        self
    }

    /// The tools the conversation has loaded through tool search: a deferred tool not in it is
    /// refused (see [`CallData::loaded_tools`]); kept with the call if it waits.
    pub fn loaded_tools(mut self, loaded: crate::context::LoadedTools) -> Self {
        self.data.loaded_tools = Some(loaded);
        self
    }

    /// Which tools the loaded-set check treats as deferred (a catalog's
    /// [`Catalog::deferral`](crate::catalog::Catalog::deferral)); without it, each tool's own
    /// `defer_loading` (see [`CallData::deferral`]).
    pub fn deferral(mut self, deferral: crate::context::Deferral) -> Self {
        self.data.deferral = Some(deferral);
        self
    }

    /// Tunes the background settings of a tool that opted in.
    pub fn background(mut self, over: BackgroundOverride) -> Self {
        self.data.background = Some(over);
        self
    }

    /// Cancels the call when `token` is cancelled.
    pub fn cancellation(mut self, token: CancellationToken) -> Self {
        self.env.cancellation = Some(token);
        self
    }

    /// Ends the call as aborted after `timeout`.
    pub fn timeout(mut self, timeout: Duration) -> Self {
        self.env.timeout = Some(timeout);
        self
    }

    /// Where the tool's custom chunks go.
    pub fn writer(mut self, writer: Writer) -> Self {
        self.env.writer = writer;
        self
    }

    /// The workflow running the call.
    pub fn workflow(mut self, workflow: Workflow) -> Self {
        self.env.workflow = Some(workflow);
        self
    }

    /// The MCP client that asked for the call.
    pub fn mcp(mut self, mcp: Arc<dyn McpHandle>) -> Self {
        self.env.mcp = Some(mcp);
        self
    }

    /// The call's idempotency key, when the caller has one of its own (an HTTP
    /// `Idempotency-Key` header); otherwise it is derived from the call's identity (see
    /// [`crate::idempotency`]).
    pub fn idempotency_key(mut self, key: impl Into<String>) -> Self {
        self.data.idempotency_key = Some(key.into());
        self
    }
}

/// A tool that suspended itself: it waits for resume data. Not an error: a call that ran ends
/// [`Finished::Output`] or [`Finished::Suspended`], and only a failure is a [`ToolError`].
#[derive(Debug, Clone, PartialEq)]
pub struct Suspension {
    /// What the tool passed to `suspend` (checked against its `suspend` schema).
    pub payload: Value,
}

/// How a call that ran ended, when it did not fail.
#[derive(Debug, Clone)]
pub enum Finished {
    /// It produced an output (checked against its output schema).
    Output(ToolOutput),
    /// It suspended itself and waits for resume data.
    Suspended(Suspension),
}

/// A validated request context as every run of a call shares it (the empty one is allocated
/// once per process: most calls have none).
pub(crate) fn shared_context(context: Map<String, Value>) -> Arc<Map<String, Value>> {
    if context.is_empty() { empty_context() } else { Arc::new(context) }
}

/// The shared empty request context.
fn empty_context() -> Arc<Map<String, Value>> {
    static EMPTY: std::sync::OnceLock<Arc<Map<String, Value>>> = std::sync::OnceLock::new();
    EMPTY.get_or_init(|| Arc::new(Map::new())).clone()
}

static CALL_COUNTER: AtomicU64 = AtomicU64::new(0);

/// A fresh call id: a per-process random prefix and a counter (`call_<16 hex>`).
pub(crate) fn new_call_id() -> String {
    use std::hash::{BuildHasher, Hasher};
    static PREFIX: std::sync::OnceLock<u64> = std::sync::OnceLock::new();
    let prefix = *PREFIX.get_or_init(|| std::collections::hash_map::RandomState::new().build_hasher().finish());
    let n = prefix.wrapping_add(CALL_COUNTER.fetch_add(1, Ordering::Relaxed).wrapping_mul(0x9E37_79B9_7F4A_7C15));
    const HEX: &[u8; 16] = b"0123456789abcdef";
    // Written into a fixed buffer, then copied once: pushing char by char cost about 300
    // instructions a call (a no-op call's whole fixed cost is a few thousand).
    let mut id = *b"call_0000000000000000";
    for (i, digit) in id[5..].iter_mut().enumerate() {
        *digit = HEX[((n >> ((15 - i) * 4)) & 0xf) as usize];
    }
    // ASCII by construction, so this never falls back.
    std::str::from_utf8(&id).map(str::to_owned).unwrap_or_default()
}

/// Runs a tool's body where `policy` places it (on this task, the blocking pool or a child
/// process), with panic catching, cancellation and the timeout. `id` is the call's id
/// (resolved by the caller), `resume` the validated resume data of a continued call.
#[cfg(feature = "isolate")]
pub(crate) async fn run(
    tool: &Arc<dyn Tool>,
    input: ToolInput<'_>,
    context: Arc<Map<String, Value>>,
    (id, data): (String, &Arc<CallData>),
    env: CallEnv,
    resume: Option<Value>,
    policy: &ExecutionPolicy,
) -> Result<Finished, ToolError> {
    let name = Arc::from(tool.spec().id.as_str());
    let running = start((tool, &name), input, context, (id, data), env, resume, policy)?;
    finish(&tool.spec().id, running.await)
}

/// A started body, as [`start`] leaves it: the common one (inline, nothing watching it) is the
/// tool's own boxed future with its panics caught, so the futures of every caller stay small;
/// the others (watched, on the blocking pool, in a child process) are boxed once more.
pub(crate) type Running<'a> =
    Either<CatchUnwind<AssertUnwindSafe<BoxFuture<'static, BodyResult>>>, BoxFuture<'a, std::thread::Result<BodyResult>>>;

/// The synchronous start of [`run`]: the cancellation check, the call's identity, and the
/// tool's future created (a panic there is caught). Await the returned body and hand what it
/// gives to [`finish`].
pub(crate) fn start<'a>(
    (tool, name): (&'a Arc<dyn Tool>, &Arc<str>),
    input: ToolInput<'a>,
    context: Arc<Map<String, Value>>,
    (id, data): (String, &Arc<CallData>),
    mut env: CallEnv,
    resume: Option<Value>,
    policy: &'a ExecutionPolicy,
) -> Result<Running<'a>, ToolError> {
    let tool_id = tool.spec().id.as_str();
    let (given, timeout) = (env.cancellation.take(), env.timeout);
    if given.as_ref().is_some_and(CancellationToken::is_cancelled) {
        return Err(ToolError::aborted(format!("Tool `{tool_id}` was cancelled before it started")).for_tool(tool_id));
    }
    let watched = given.is_some() || timeout.is_some();
    let placement = policy.placement(tool.spec());
    // A call something outside can cancel (its caller, its timeout, the end of a body run
    // elsewhere) has a token from the start; an inline call nothing watches gets one only if
    // its body asks for it.
    let cancellation = match (watched, placement) {
        (false, Placement::Inline) => None,
        _ => Some(given.unwrap_or_default()),
    };
    // A body off this task gets a token of its own, cancelled with the call's or when this
    // call is dropped (the caller went away), never cancelling the caller's token itself.
    let child = match (&cancellation, placement) {
        (Some(c), Placement::Blocking | Placement::Process) => Some(c.child_token()),
        _ => None,
    };
    let token = CallCancellation::from(child.clone().or_else(|| cancellation.clone()));
    // The derived idempotency key is made only when read, where nothing else can see the
    // call: not for a tool that runs once per key, nor for a child process (it is sent).
    let lazy = placement != Placement::Process
        && tool.spec().policy.idempotent.is_none()
        && crate::tool::hints(&**tool).is_some_and(|h| h.call_seen_through_context());
    let mut call = ToolCallInfo::with_key(name.clone(), id, data, env, token, lazy);
    call.resume_data = resume;
    if placement == Placement::Process {
        let cancellation = cancellation.unwrap_or_default();
        return Ok(Either::Right(Box::pin(async move {
            Ok(in_child(policy, tool, input, &context, &call, (&cancellation, timeout)).await)
        })));
    }
    // Decoding the input and creating the future run synchronously: catch a panic there too.
    let fut = match std::panic::catch_unwind(AssertUnwindSafe(|| tool.execute(input, context, call))) {
        Ok(fut) => fut,
        Err(payload) => return Err(panicked(tool_id, &*payload).for_tool(tool_id)),
    };
    let body = body(placement, policy, fut, child);
    Ok(match cancellation.filter(|_| watched) {
        Some(cancellation) => Either::Right(Box::pin(async move { Ok(watch(tool_id, body, &cancellation, timeout).await) })),
        None => body,
    })
}

/// Awaits a started body inside `span` (the execution span); a span nobody records is not
/// entered at every poll (the body is awaited as it is, no `Instrumented` moved around it).
pub(crate) async fn executed(span: tracing::Span, running: Running<'_>) -> std::thread::Result<BodyResult> {
    if span.is_disabled() {
        running.await
    } else {
        tracing::Instrument::instrument(running, span).await
    }
}

/// The end of [`run`]: what the body gave, as the call's end (a panic reported, a
/// suspension told from a failure, the error marked with the tool).
pub(crate) fn finish(tool_id: &str, ran: std::thread::Result<BodyResult>) -> Result<Finished, ToolError> {
    match ran.unwrap_or_else(|payload| Err(panicked(tool_id, &*payload))) {
        Ok(output) => Ok(Finished::Output(output)),
        Err(e) => match e.into_suspension() {
            Ok(payload) => Ok(Finished::Suspended(Suspension { payload })),
            Err(e) if e.tool().is_none() => Err(e.for_tool(tool_id)),
            Err(e) => Err(e),
        },
    }
}

/// The error of a body that panicked.
fn panicked(tool_id: &str, payload: &(dyn Any + Send)) -> ToolError {
    ToolError::with_kind(
        ErrorKind::Panic,
        format!("Tool `{tool_id}` failed: it panicked ({})", panic_message(payload)),
    )
}

type BodyResult = Result<ToolOutput, ToolError>;

/// The body's future where it runs: polled by this task, or on the blocking pool; a panic
/// comes out as its payload either way.
fn body<'a>(
    placement: Placement,
    policy: &'a ExecutionPolicy,
    fut: BoxFuture<'static, BodyResult>,
    token: Option<CancellationToken>,
) -> Running<'a> {
    #[cfg(feature = "runtime")]
    if placement == Placement::Blocking {
        return Either::Right(Box::pin(crate::isolate::run_on_pool(policy, fut, token.unwrap_or_default())));
    }
    let _ = (placement, policy, token);
    Either::Left(AssertUnwindSafe(fut).catch_unwind())
}

/// A call placed in a child process; without the `isolate` feature it fails (closed: the tool
/// asked not to run in this process).
async fn in_child(
    policy: &ExecutionPolicy,
    tool: &Arc<dyn Tool>,
    input: ToolInput<'_>,
    context: &Map<String, Value>,
    call: &ToolCallInfo,
    watch: (&CancellationToken, Option<Duration>),
) -> BodyResult {
    #[cfg(feature = "isolate")]
    return crate::isolate::run_in_child(policy, tool, input, context, call, watch).await;
    #[cfg(not(feature = "isolate"))]
    {
        let _ = (policy, input, context, call, watch);
        let id = &tool.spec().id;
        Err(ToolError::new(format!(
            "Tool `{id}` must run in its own process, and this build of tool-core has no process isolation (feature `isolate`); it was not run."
        )))
    }
}

/// Races a running tool against its cancellation and timeout. Only calls that have either pay
/// for it (boxed, so the common path's future stays small).
async fn watch(
    id: &str,
    fut: impl Future<Output = std::thread::Result<Result<ToolOutput, ToolError>>>,
    cancellation: &CancellationToken,
    timeout: Option<Duration>,
) -> Result<ToolOutput, ToolError> {
    let expiry = async {
        match timeout {
            Some(d) => tokio::time::sleep(d).await,
            None => std::future::pending().await,
        }
    };
    // The tool is polled first, so a tool that finishes at once never registers a waiter on the
    // cancellation token.
    tokio::select! {
        biased;
        r = fut => match r {
            Err(payload) => Err(panicked(id, &*payload)),
            // A tool that gave up because it saw the cancellation was aborted, not failed.
            Ok(Err(e)) if cancellation.is_cancelled() && !e.is_aborted() => Err(ToolError::aborted(format!("Tool `{id}` was cancelled ({})", e.message()))),
            Ok(r) => r,
        },
        _ = cancellation.cancelled() => Err(ToolError::aborted(format!("Tool `{id}` was cancelled"))),
        _ = expiry => {
            cancellation.cancel();
            Err(ToolError::aborted(format!("Tool `{id}` timed out after {} ms", timeout.map_or(0, |d| d.as_millis()))))
        }
    }
}

#[cfg(test)]
mod tests {
    #[test]
    fn call_ids_are_call_and_sixteen_hex_digits_and_never_repeat() {
        let ids: Vec<String> = (0..1000).map(|_| super::new_call_id()).collect();
        for id in &ids {
            let hex = id.strip_prefix("call_").unwrap_or_else(|| panic!("{id}"));
            assert_eq!(hex.len(), 16, "{id}");
            assert!(hex.bytes().all(|b| b.is_ascii_digit() || (b'a'..=b'f').contains(&b)), "{id}");
        }
        let distinct: std::collections::HashSet<&String> = ids.iter().collect();
        assert_eq!(distinct.len(), ids.len());
    }
}
