//! The runtime: calls as runs of events, with approval, suspension, background tasks and
//! streamed input.
//!
//! Owns [`Runtime`] (one per process or per agent: a registry, a [`PendingStore`], an optional
//! [`TransformPolicy`] and the background-task limit), [`EventStream`] (the events of one run,
//! each in its raw, `display` and `transcript` views) and [`RuntimeError`] (what approving or
//! resuming a call can fail with). The registry validates and executes; the runtime decides
//! *when*: after `on_input_available`, after approval, again after resume, in the background.
//!
//! ```
//! use tool_core::prelude::*;
//! use tool_core::runtime::{Runtime, RunEvent};
//!
//! /// Delete a record (asks a person first)
//! #[tool(require_approval)]
//! async fn delete_record(id: u32) -> String {
//!     format!("deleted {id}")
//! }
//!
//! # tokio::runtime::Runtime::new().unwrap().block_on(async {
//! let runtime = Runtime::new(Registry::from_iter([delete_record::tool()]));
//! let events = runtime.call("delete-record", json!({"id": 7}), CallOptions::default()).collect().await;
//! let RunEvent::ToolCallApproval { tool_call_id, .. } = &events.last().unwrap().raw else { panic!() };
//!
//! let events = runtime.approve(tool_call_id).await.unwrap().collect().await;
//! assert_eq!(events.last().unwrap().raw, RunEvent::ToolResult {
//!     tool_call_id: tool_call_id.clone(),
//!     tool_name: "delete-record".into(),
//!     result: json!("deleted 7"),
//!     model_output: None,
//! });
//! assert!(runtime.approve(tool_call_id).await.is_err(), "an approval is used once");
//! # });
//! ```

mod background;
mod events;
mod pending;
mod sqlite;
mod stream;

use std::sync::Arc;
use std::time::{SystemTime, UNIX_EPOCH};

use serde_json::{json, Value};
use tokio::sync::{mpsc, Semaphore};

pub use background::BackgroundOverride;
pub use events::{placeholder, Event, RedactSecrets, RunEvent, TransformPolicy};
pub use pending::{MemoryStore, PendingCall, PendingKind, PendingStore, StoreError};
pub use sqlite::SqliteStore;
pub use stream::StreamRun;

use crate::call::{CallArgs, CallOptions};
use crate::context::Writer;
use crate::error::{ErrorKind, ToolError};
use crate::model_output::ModelOutput;
use crate::registry::{Prepared, Registry};
use crate::tool::{InputHook, Tool, ToolOutput};
use events::Viewer;

/// A registry the runtime can keep: the process-wide one or a shared one.
#[derive(Clone)]
pub enum RegistryRef {
    /// [`Registry::global`] (or any registry that lives forever).
    Static(&'static Registry),
    /// A registry shared with others.
    Shared(Arc<Registry>),
}

impl std::ops::Deref for RegistryRef {
    type Target = Registry;
    fn deref(&self) -> &Registry {
        match self {
            RegistryRef::Static(r) => r,
            RegistryRef::Shared(r) => r,
        }
    }
}

impl From<&'static Registry> for RegistryRef {
    fn from(r: &'static Registry) -> Self {
        RegistryRef::Static(r)
    }
}

impl From<Arc<Registry>> for RegistryRef {
    fn from(r: Arc<Registry>) -> Self {
        RegistryRef::Shared(r)
    }
}

impl From<Registry> for RegistryRef {
    fn from(r: Registry) -> Self {
        RegistryRef::Shared(Arc::new(r))
    }
}

/// What approving, declining or resuming a call can fail with. Nothing ran when it fails.
#[derive(Debug, thiserror::Error)]
pub enum RuntimeError {
    /// No call with this id waits (unknown, or already resolved).
    #[error("no pending call has the id `{0}`: it is unknown or was already resolved")]
    UnknownCall(String),
    /// The call waits for something else.
    #[error("call `{id}` is waiting for {waits}, not for {asked}")]
    WrongKind {
        /// The call.
        id: String,
        /// What it waits for.
        waits: &'static str,
        /// What was attempted.
        asked: &'static str,
    },
    /// The resume data (or decision) does not match the schema.
    #[error("{0}")]
    InvalidResume(ToolError),
    /// The tool of the pending call is not in this runtime's registry.
    #[error("call `{id}` is for tool `{tool}`, which this process does not have")]
    ToolGone {
        /// The call.
        id: String,
        /// The tool.
        tool: String,
    },
    /// The store failed (or another process holds the call).
    #[error(transparent)]
    Store(#[from] StoreError),
}

/// The events of one run, in order. Ends when the call (and any background task it started)
/// is done.
pub struct EventStream {
    rx: mpsc::UnboundedReceiver<Event>,
}

impl EventStream {
    /// The next event; `None` when the run is over.
    pub async fn next(&mut self) -> Option<Event> {
        self.rx.recv().await
    }

    /// Every event until the run is over.
    pub async fn collect(mut self) -> Vec<Event> {
        let mut all = Vec::new();
        while let Some(e) = self.rx.recv().await {
            all.push(e);
        }
        all
    }
}

/// Where one run's events go.
#[derive(Clone)]
pub(crate) struct Sink {
    tx: mpsc::UnboundedSender<Event>,
}

impl Sink {
    pub(crate) fn channel() -> (Sink, EventStream) {
        let (tx, rx) = mpsc::unbounded_channel();
        (Sink { tx }, EventStream { rx })
    }

    pub(crate) fn send(&self, event: Event) {
        // A dropped stream means nobody listens any more; the call still completes.
        let _ = self.tx.send(event);
    }
}

pub(crate) struct Inner {
    pub(crate) registry: RegistryRef,
    store: Arc<dyn PendingStore>,
    policy: Option<Arc<dyn TransformPolicy>>,
    approve_all: bool,
    pub(crate) background: Arc<Semaphore>,
}

/// Runs calls as event streams: hooks, approval, suspension, background tasks, views.
///
/// Cheap to clone; clones share the store and the background-task limit.
#[derive(Clone)]
pub struct Runtime {
    inner: Arc<Inner>,
}

impl std::fmt::Debug for Runtime {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Runtime")
            .field("tools", &self.inner.registry.ids())
            .field("approve_all", &self.inner.approve_all)
            .finish_non_exhaustive()
    }
}

/// Builds a [`Runtime`].
pub struct RuntimeBuilder {
    registry: RegistryRef,
    store: Arc<dyn PendingStore>,
    policy: Option<Arc<dyn TransformPolicy>>,
    approve_all: bool,
    max_background: usize,
}

impl RuntimeBuilder {
    /// Where pending approvals and suspended calls are kept (default: in memory).
    pub fn store(mut self, store: impl PendingStore) -> Self {
        self.store = Arc::new(store);
        self
    }

    /// A shared store.
    pub fn shared_store(mut self, store: Arc<dyn PendingStore>) -> Self {
        self.store = store;
        self
    }

    /// Transforms applied to every tool's payloads before the tool's own.
    pub fn transform_policy(mut self, policy: impl TransformPolicy) -> Self {
        self.policy = Some(Arc::new(policy));
        self
    }

    /// Every call needs approval, whatever the tool says.
    pub fn require_approval_for_all(mut self, yes: bool) -> Self {
        self.approve_all = yes;
        self
    }

    /// How many background tasks may run at once (default 16); past it, opted-in tools run in
    /// the foreground.
    pub fn max_background_tasks(mut self, n: usize) -> Self {
        self.max_background = n.min(Semaphore::MAX_PERMITS);
        self
    }

    /// The runtime.
    pub fn build(self) -> Runtime {
        Runtime {
            inner: Arc::new(Inner {
                registry: self.registry,
                store: self.store,
                policy: self.policy,
                approve_all: self.approve_all,
                background: Arc::new(Semaphore::new(self.max_background)),
            }),
        }
    }
}

fn now_ms() -> u64 {
    SystemTime::now().duration_since(UNIX_EPOCH).map_or(0, |d| d.as_millis() as u64)
}

/// The schema of an approval decision.
pub fn approval_resume_schema() -> Value {
    json!({
        "type": "object",
        "properties": {
            "approved": {"type": "boolean", "description": "Whether the call may run."},
            "reason": {"type": "string", "description": "Why (shown to the model when declined)."}
        },
        "required": ["approved"],
        "additionalProperties": false
    })
}

/// What a call that ran produced, before it becomes events.
pub(crate) enum Outcome {
    Done(ToolOutput),
    Failed(ToolError),
}

impl Runtime {
    /// A runtime over `registry` with an in-memory store and no policies.
    pub fn new(registry: impl Into<RegistryRef>) -> Runtime {
        Runtime::builder(registry).build()
    }

    /// A runtime to configure.
    pub fn builder(registry: impl Into<RegistryRef>) -> RuntimeBuilder {
        RuntimeBuilder {
            registry: registry.into(),
            store: Arc::new(MemoryStore::new()),
            policy: None,
            approve_all: false,
            max_background: 16,
        }
    }

    /// The registry.
    pub fn registry(&self) -> &Registry {
        &self.inner.registry
    }

    /// The calls waiting for approval or resume data, oldest first.
    pub fn pending(&self) -> Result<Vec<PendingCall>, StoreError> {
        self.inner.store.list()
    }

    /// One waiting call, by id.
    pub fn pending_call(&self, tool_call_id: &str) -> Result<Option<PendingCall>, StoreError> {
        self.inner.store.get(tool_call_id)
    }

    /// Puts a claimed call back to waiting (nothing ran).
    fn release(&self, id: &str) {
        if let Err(e) = self.inner.store.release(id) {
            tracing::warn!(tool_call_id = id, error = %e, "a pending call could not be released");
        }
    }

    pub(crate) fn viewer<'a>(&'a self, tool: Option<&'a dyn Tool>) -> Viewer<'a> {
        Viewer {
            tool,
            policy: self.inner.policy.as_deref(),
        }
    }

    /// Starts a call and returns its events: `tool-call`, then `tool-result`, `tool-error`,
    /// `tool-call-approval` (it waits; see [`Runtime::approve`]), `tool-call-suspended` (see
    /// [`Runtime::resume`]) or a background task's placeholder and events. Writer chunks arrive
    /// as `custom` events. Must be called inside a Tokio runtime.
    pub fn call(&self, tool: &str, args: impl Into<CallArgs<'static>>, options: CallOptions) -> EventStream {
        let (sink, stream) = Sink::channel();
        let this = self.clone();
        let (tool, args) = (tool.to_owned(), args.into());
        tokio::spawn(async move { this.run_new(&sink, &tool, args, options).await });
        stream
    }

    /// Validates, shows the call, fires `on_input_available`, asks for approval or runs it.
    pub(crate) async fn run_new(&self, sink: &Sink, tool_name: &str, args: CallArgs<'static>, mut options: CallOptions) {
        let id = options.tool_call_id.get_or_insert_with(crate::call::new_call_id).clone();
        let prepared = self.inner.registry.prepare(tool_name, args.clone(), options.context.clone());
        let tool = self.inner.registry.get(tool_name);
        let viewer = self.viewer(tool.as_deref());
        let prepared = match prepared {
            Ok(p) => p,
            Err(error) => {
                let args = match args {
                    CallArgs::Value(v) => v,
                    CallArgs::Text(t) => serde_json::from_str(&t).unwrap_or(Value::String(t.into_owned())),
                };
                let call = RunEvent::ToolCall {
                    tool_call_id: id.clone(),
                    tool_name: tool_name.to_owned(),
                    args,
                };
                sink.send(viewer.event(call, None));
                sink.send(viewer.event(error_event(&id, tool_name, &error), None));
                return;
            }
        };
        let call = RunEvent::ToolCall {
            tool_call_id: id.clone(),
            tool_name: tool_name.to_owned(),
            args: prepared.input.clone(),
        };
        sink.send(viewer.event(call, None));
        let spec = prepared.tool().spec();
        if spec.hooks.on_input_available {
            let info = crate::context::ToolCallInfo {
                tool_call_id: id.clone(),
                tool_name: tool_name.to_owned(),
                messages: options.messages.clone(),
                thread_id: options.thread_id.clone(),
                resource_id: options.resource_id.clone(),
                ..Default::default()
            };
            log_hook(
                tool_name,
                "on_input_available",
                prepared.tool().input_hook(InputHook::Available(&prepared.input), &info),
            );
        }
        if self.inner.approve_all || prepared.needs_approval() {
            let pending = pending_call(
                &id,
                tool_name,
                PendingKind::Approval,
                &prepared,
                &options,
                None,
                Some(approval_resume_schema()),
            );
            // The event is only sent once the call is on record: what a user sees, survives.
            match self.inner.store.save(&pending) {
                Ok(()) => sink.send(viewer.event(
                    RunEvent::ToolCallApproval {
                        tool_call_id: id,
                        tool_name: tool_name.to_owned(),
                        args: prepared.input.clone(),
                        resume_schema: approval_resume_schema(),
                    },
                    None,
                )),
                Err(e) => {
                    let error = ToolError::with_kind(
                        ErrorKind::ApprovalRequired,
                        format!("Tool `{tool_name}` requires approval, and the request could not be recorded ({e}); it was not run."),
                    )
                    .for_tool(tool_name);
                    sink.send(viewer.event(error_event(&id, tool_name, &error), None));
                }
            }
            return;
        }
        self.execute(sink, &prepared, &id, options, true).await;
    }

    /// Runs a prepared call (in the background when the tool opted in) and reports the outcome.
    pub(crate) async fn execute(&self, sink: &Sink, prepared: &Prepared, id: &str, mut options: CallOptions, may_background: bool) {
        let tool = prepared.tool().clone();
        let viewer = self.viewer(Some(&*tool));
        let name = tool.spec().id.clone();
        options.tool_call_id = Some(id.to_owned());
        options.writer = {
            let (sink, viewer_tool, runtime, id, name) = (sink.clone(), tool.clone(), self.clone(), id.to_owned(), name.clone());
            Writer::new(move |data| {
                let chunk = RunEvent::Custom {
                    tool_call_id: id.clone(),
                    tool_name: name.clone(),
                    data,
                };
                sink.send(runtime.viewer(Some(&*viewer_tool)).event(chunk, None));
            })
        };
        if may_background {
            if let Some(plan) = background::plan(&self.inner, tool.spec(), options.background.as_ref()) {
                return background::run(self, sink, prepared, id, options, plan).await;
            }
        }
        let outcome = match prepared.run(options.clone()).await {
            Ok(out) => Outcome::Done(out),
            Err(e) => Outcome::Failed(e),
        };
        self.report(sink, &viewer, prepared, id, &options, outcome);
    }

    /// Turns an outcome into events; a suspension is recorded before it is announced, and a
    /// resolved call leaves the store.
    pub(crate) fn report(&self, sink: &Sink, viewer: &Viewer<'_>, prepared: &Prepared, id: &str, options: &CallOptions, outcome: Outcome) {
        let spec = prepared.tool().spec();
        let name = spec.id.as_str();
        match outcome {
            Outcome::Done(out) => {
                self.forget(id);
                let event = RunEvent::ToolResult {
                    tool_call_id: id.to_owned(),
                    tool_name: name.to_owned(),
                    result: out.value(),
                    model_output: out.model_output.clone(),
                };
                sink.send(viewer.event(event, Some(&out)));
            }
            Outcome::Failed(error) if error.is_suspended() => {
                let payload = error.details().cloned().unwrap_or(Value::Null);
                let pending = pending_call(
                    id,
                    name,
                    PendingKind::Suspended,
                    prepared,
                    options,
                    Some(payload.clone()),
                    spec.resume_schema.clone(),
                );
                match self.inner.store.save(&pending) {
                    Ok(()) => sink.send(viewer.event(
                        RunEvent::ToolCallSuspended {
                            tool_call_id: id.to_owned(),
                            tool_name: name.to_owned(),
                            suspend_payload: payload,
                            args: prepared.input.clone(),
                            resume_schema: spec.resume_schema.clone(),
                        },
                        None,
                    )),
                    Err(e) => {
                        let error = ToolError::new(format!(
                            "Tool `{name}` suspended, but the suspension could not be recorded ({e}); call it again."
                        ))
                        .for_tool(name);
                        sink.send(viewer.event(error_event(id, name, &error), None));
                    }
                }
            }
            Outcome::Failed(error) => {
                self.forget(id);
                sink.send(viewer.event(error_event(id, name, &error), None));
            }
        }
    }

    fn forget(&self, id: &str) {
        if let Err(e) = self.inner.store.remove(id) {
            tracing::warn!(tool_call_id = id, error = %e, "a resolved call could not be removed from the pending store");
        }
    }

    /// Takes a waiting call of the expected kind and re-validates it against this process's
    /// registry; anything wrong puts it back.
    fn claim(&self, id: &str, asked: &'static str, kind: Option<PendingKind>) -> Result<(PendingCall, Prepared), RuntimeError> {
        let call = self
            .inner
            .store
            .claim(id)?
            .ok_or_else(|| RuntimeError::UnknownCall(id.to_owned()))?;
        let release = |e: RuntimeError| {
            self.release(id);
            Err(e)
        };
        if let Some(kind) = kind {
            if call.kind != kind {
                return release(RuntimeError::WrongKind {
                    id: id.to_owned(),
                    waits: if call.kind == PendingKind::Approval {
                        "approval"
                    } else {
                        "resume data"
                    },
                    asked,
                });
            }
        }
        if self.inner.registry.get(&call.tool_name).is_none() {
            return release(RuntimeError::ToolGone {
                id: id.to_owned(),
                tool: call.tool_name.clone(),
            });
        }
        let context = Some(Value::Object(call.context.clone()));
        match self
            .inner
            .registry
            .prepare(&call.tool_name, CallArgs::Value(call.args.clone()), context)
        {
            Ok(p) => Ok((call, p)),
            Err(e) => release(RuntimeError::InvalidResume(e)),
        }
    }

    /// Approves a call waiting for approval and runs it. Bound to that call id: an unknown or
    /// already resolved id is an error.
    pub async fn approve(&self, tool_call_id: &str) -> Result<EventStream, RuntimeError> {
        self.approve_with(tool_call_id, Continuation::default()).await
    }

    /// [`approve`](Self::approve), the tool running with what the current request brings
    /// (its cancellation, its MCP client) instead of nothing.
    pub async fn approve_with(&self, tool_call_id: &str, continuation: Continuation) -> Result<EventStream, RuntimeError> {
        let (call, prepared) = self.claim(tool_call_id, "approval", Some(PendingKind::Approval))?;
        Ok(self.continue_approval(call, prepared, json!({"approved": true}), continuation))
    }

    /// Declines a call waiting for approval: it never runs; the model receives a "not
    /// approved" result with the reason.
    pub async fn decline(&self, tool_call_id: &str, reason: &str) -> Result<EventStream, RuntimeError> {
        let (call, prepared) = self.claim(tool_call_id, "a decline", Some(PendingKind::Approval))?;
        let decision = json!({"approved": false, "reason": reason});
        // A declined tool never runs: nothing of the request needs to reach it.
        Ok(self.continue_approval(call, prepared, decision, Continuation::default()))
    }

    fn continue_approval(&self, call: PendingCall, prepared: Prepared, decision: Value, continuation: Continuation) -> EventStream {
        let (sink, stream) = Sink::channel();
        let this = self.clone();
        tokio::spawn(async move {
            let tool = prepared.tool().clone();
            let viewer = this.viewer(Some(&*tool));
            let (id, name) = (call.tool_call_id.clone(), call.tool_name.clone());
            sink.send(viewer.event(
                RunEvent::ToolCallResumed {
                    tool_call_id: id.clone(),
                    tool_name: name.clone(),
                    resume_data: decision.clone(),
                },
                None,
            ));
            if decision["approved"] == Value::Bool(true) {
                this.execute(&sink, &prepared, &id, options_of(&call, None, continuation), true)
                    .await;
            } else {
                let reason = decision["reason"]
                    .as_str()
                    .filter(|r| !r.trim().is_empty())
                    .unwrap_or("no reason given");
                let text = format!("Tool call was not approved by the user. Reason: {reason}");
                this.forget(&id);
                let event = RunEvent::ToolResult {
                    tool_call_id: id,
                    tool_name: name,
                    result: json!({"approved": false, "reason": reason, "message": text}),
                    model_output: Some(ModelOutput::Text(text)),
                };
                // The runtime's own result (the person's reason): no output transform applies.
                sink.send(Event::unchanged(event));
            }
        });
        stream
    }

    /// Resumes a waiting call with data: for a suspended call, data matching the tool's
    /// `resume` schema (the tool runs again with it as `resume_data`); for a call waiting for
    /// approval, a decision `{approved, reason?}`. Data that does not match is refused and the
    /// call keeps waiting.
    pub async fn resume(&self, tool_call_id: &str, data: Value) -> Result<EventStream, RuntimeError> {
        self.resume_with(tool_call_id, data, Continuation::default()).await
    }

    /// [`resume`](Self::resume), the tool running with what the current request brings.
    pub async fn resume_with(&self, tool_call_id: &str, data: Value, continuation: Continuation) -> Result<EventStream, RuntimeError> {
        let (call, prepared) = self.claim(tool_call_id, "resume data", None)?;
        let refuse = |e: ToolError| {
            self.release(tool_call_id);
            Err(RuntimeError::InvalidResume(e))
        };
        if call.kind == PendingKind::Approval {
            let ok = data.get("approved").is_some_and(Value::is_boolean)
                && data.get("reason").is_none_or(Value::is_string)
                && data.as_object().is_some_and(|o| o.keys().all(|k| k == "approved" || k == "reason"));
            if !ok {
                return refuse(ToolError::with_kind(
                    ErrorKind::InvalidInput,
                    format!("call `{tool_call_id}` waits for approval: send {{\"approved\": true}} or {{\"approved\": false, \"reason\": \"…\"}}"),
                ));
            }
            return Ok(self.continue_approval(call, prepared, data, continuation));
        }
        if let Err(e) = prepared.check_resume(&data) {
            return refuse(e);
        }
        let (sink, stream) = Sink::channel();
        let this = self.clone();
        tokio::spawn(async move {
            let tool = prepared.tool().clone();
            let viewer = this.viewer(Some(&*tool));
            sink.send(viewer.event(
                RunEvent::ToolCallResumed {
                    tool_call_id: call.tool_call_id.clone(),
                    tool_name: call.tool_name.clone(),
                    resume_data: data.clone(),
                },
                None,
            ));
            this.execute(
                &sink,
                &prepared,
                &call.tool_call_id,
                options_of(&call, Some(data), continuation),
                false,
            )
            .await;
        });
        Ok(stream)
    }
}

/// What the request that continues a waiting call brings to it: the stored call keeps ids,
/// context and messages, but cancellation and the MCP client belong to whoever continues it (a call approved over MCP reports progress to, and is cancelled by, the
/// request that approved it).
#[derive(Clone, Default)]
pub struct Continuation {
    /// Cancels the continued call.
    pub cancellation: Option<tokio_util::sync::CancellationToken>,
    /// Ends the continued call as aborted after this long.
    pub timeout: Option<std::time::Duration>,
    /// The MCP client of the continuing request.
    pub mcp: Option<Arc<dyn crate::context::McpHandle>>,
}

impl std::fmt::Debug for Continuation {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Continuation")
            .field("cancellation", &self.cancellation.is_some())
            .field("timeout", &self.timeout)
            .field("mcp", &self.mcp.is_some())
            .finish()
    }
}

/// The options a waiting call continues with.
fn options_of(call: &PendingCall, resume_data: Option<Value>, continuation: Continuation) -> CallOptions {
    CallOptions {
        cancellation: continuation.cancellation,
        timeout: continuation.timeout,
        mcp: continuation.mcp,
        context: Some(Value::Object(call.context.clone())),
        tool_call_id: Some(call.tool_call_id.clone()),
        messages: call.messages.clone(),
        thread_id: call.thread_id.clone(),
        resource_id: call.resource_id.clone(),
        resume_data,
        background: call.background.clone(),
        ..CallOptions::default()
    }
}

fn pending_call(
    id: &str,
    name: &str,
    kind: PendingKind,
    prepared: &Prepared,
    options: &CallOptions,
    suspend_payload: Option<Value>,
    resume_schema: Option<Value>,
) -> PendingCall {
    PendingCall {
        tool_call_id: id.to_owned(),
        tool_name: name.to_owned(),
        kind,
        args: prepared.input.clone(),
        context: prepared.context.clone(),
        thread_id: options.thread_id.clone(),
        resource_id: options.resource_id.clone(),
        messages: options.messages.clone(),
        suspend_payload,
        resume_schema,
        background: options.background.clone(),
        created_at_ms: now_ms(),
    }
}

pub(crate) fn error_event(id: &str, name: &str, error: &ToolError) -> RunEvent {
    RunEvent::ToolError {
        tool_call_id: id.to_owned(),
        tool_name: name.to_owned(),
        error: error.to_json(),
    }
}

pub(crate) fn log_hook(tool: &str, hook: &str, result: Result<(), String>) {
    if let Err(e) = result {
        tracing::warn!(tool, hook, error = %e, "a lifecycle hook failed; the call goes on");
    }
}
