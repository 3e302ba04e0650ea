//! The runtime: calls as runs of events, with approval, suspension, background tasks and
//! streamed input.
//!
//! Owns [`Runtime`] (one per process or per agent: a registry, a [`PendingStore`], an optional
//! [`TransformPolicy`] and the background-task limit) and [`RuntimeError`] (what approving or
//! resuming a call can fail with). Its parts: `events` (typed events and their views'
//! shape), `views` (what each view shows), `outcome` (how a run ends, and its stream), `run`
//! (a new call), `decide` (approving, declining, resuming, submitting a client-side call's
//! result), `pending` (what a waiting call is), `store` (where it is kept: memory, SQLite,
//! PostgreSQL), `state` (a stored call's states: waiting, running, interrupted),
//! `background` and `stream`. The registry validates and executes; the runtime decides *when*:
//! after `on_input_available`, after approval, again after resume, in the background.
//!
//! ```
//! use tool_core::prelude::*;
//! use tool_core::runtime::{ResumeOptions, Outcome, Runtime};
//!
//! /// Delete a record (asks a person first)
//! #[tool(require_approval)]
//! async fn delete_record(id: u32) -> String {
//!     format!("deleted {id}")
//! }
//!
//! # tokio::runtime::Runtime::new().unwrap().block_on(async {
//! let runtime = Runtime::new(Registry::from_iter([delete_record::tool()]));
//! let run = runtime.call("delete-record", json!({"id": 7}), CallOptions::default()).finish().await;
//! let Outcome::AwaitingApproval(waiting) = run.outcome else { panic!() };
//! assert_eq!(waiting.call.args, json!({"id": 7}));
//!
//! let run = runtime.approve(waiting.id(), ResumeOptions::default()).await.unwrap().finish().await;
//! let Outcome::Done(output) = run.outcome else { panic!() };
//! assert_eq!(output.value(), json!("deleted 7"));
//! assert!(runtime.approve(waiting.id(), ResumeOptions::default()).await.is_err(), "an approval is used once");
//! # });
//! ```

mod audit;
mod background;
mod binding;
mod bus;
mod decide;
mod events;
mod once;
mod outcome;
mod partial;
mod pending;
mod reconcile;
mod retention;
mod run;
pub(crate) mod settle;
#[cfg(feature = "mcp")]
pub(crate) use settle::kept_writes;
#[cfg(feature = "cli")]
pub(crate) use settle::{name_store, store_name};
mod state;
pub(crate) mod store;
mod stream;
mod tasks;
mod token;
mod views;

use std::sync::Arc;

use serde_json::{Value, json};
use tokio::sync::Semaphore;

pub use audit::{Actor, AuditAction, AuditEntry, AuditFilter, AuditRecord, UnknownActor};
#[cfg(feature = "cli")]
pub(crate) use audit::{now_ms as audit_now_ms, record as audit_record, task_cancelled};
pub use binding::{Answer, Binding, Decision};
pub use decide::ResumeOptions;
pub use events::{CallRef, ErrorPayload, Event, RunEvent, RunEventKind, ShownEvent, ShownOutput};
pub use outcome::{BackgroundTask, EventStream, Outcome, Run, Waiting};
pub use partial::Parted;
pub use pending::{PendingCall, PendingKind};
pub use reconcile::Reconciling;
#[cfg(feature = "cli")]
pub(crate) use retention::expire_stores;
pub use retention::{Expired, Expiry, RetentionError, parse_retention};
#[cfg(feature = "sqlite")]
#[cfg_attr(docsrs, doc(cfg(feature = "sqlite")))]
pub use store::SqliteStore;
#[cfg(feature = "sqlite")]
pub(crate) use store::create_private_file;
pub use store::{MemoryStore, OpenedStore, StoreError, StoreLocation, StorePart};
#[cfg(feature = "postgres")]
#[cfg_attr(docsrs, doc(cfg(feature = "postgres")))]
pub use store::{PostgresOptions, PostgresStore};
#[cfg(any(feature = "sqlite", feature = "postgres"))]
#[cfg_attr(docsrs, doc(cfg(any(feature = "sqlite", feature = "postgres"))))]
pub use store::{STORE_KEY_ENV, open_store, open_stores};
pub use stream::StreamRun;
pub use tasks::TaskOptions;
pub use token::{DECISION_KEY_ENV, DecisionKey, TokenError};
pub use views::{RedactSecrets, TransformPolicy, placeholder};

// What the rest of the crate names beside a store (the public path is `backend`).
pub(crate) use backend::*;

/// What a storage backend implements and keeps: the store traits the [`RuntimeBuilder`] takes
/// ([`PendingStore`], [`TaskStore`], [`ReceiptStore`], [`ResultStore`], [`AuditStore`], the
/// cross-instance [`Bus`]), the rows they hold and their in-memory versions. An application that only opens a
/// store ([`MemoryStore`], `SqliteStore`, `PostgresStore`, `open_stores`) needs none of it.
pub mod backend {
    pub use super::bus::{Bus, BusMessage, MemoryBus};
    pub use super::state::{CallState, Claim, Interruption, StoredCall};
    #[cfg(feature = "postgres")]
    #[cfg_attr(docsrs, doc(cfg(feature = "postgres")))]
    pub use super::store::Migrated;
    pub use super::store::{AuditStore, MemoryAudit};
    pub use super::store::{Began, MemoryReceipts, ReceiptClaim, ReceiptCounts, ReceiptEntry, ReceiptState, ReceiptStore};
    pub use super::store::{ClaimedTask, NewTask, TaskCounts, TaskLease, TaskRecord, TaskState, TaskStore};
    pub use super::store::{KeptResult, MemoryResults, ResultError, ResultLimits, ResultStore};
    pub use super::store::{PendingStore, StoreStatus};
}

use crate::error::ToolError;
use crate::registry::Registry;
use crate::tool::Tool;
pub(crate) use outcome::Sink;
use views::Viewer;

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

/// What approving, declining, resuming a call or submitting its result can fail with.
/// Nothing ran when it fails.
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
    /// The result submitted for a client-side call does not match the tool's output schema
    /// (or cannot be read as its output type); the call keeps waiting.
    #[error("{0}")]
    InvalidResult(ToolError),
    /// The tool of the pending call is not in this runtime's registry.
    #[error("call `{id}` is for tool `{tool}`, which this process does not have")]
    ToolGone {
        /// The call.
        id: String,
        /// The tool.
        tool: String,
    },
    /// The decision was made for something else than the waiting call is now (another call,
    /// other arguments, another version of its tool); nothing ran and the call keeps waiting.
    #[error("call `{id}`: {reason}; nothing ran and the call still waits for a decision")]
    Unbound {
        /// The call.
        id: String,
        /// What does not match.
        reason: String,
    },
    /// A decision token cannot be used (unreadable, altered, expired, or no key to check it).
    #[error(transparent)]
    Token(#[from] TokenError),
    /// The store failed (or another process holds the call).
    #[error(transparent)]
    Store(#[from] StoreError),
}

pub(crate) struct Inner {
    pub(crate) registry: RegistryRef,
    store: Arc<dyn PendingStore>,
    receipts: Arc<dyn ReceiptStore>,
    /// Where every decision is recorded (`audit`).
    audit: Arc<dyn AuditStore>,
    policy: Option<Arc<dyn TransformPolicy>>,
    approve_all: bool,
    pub(crate) background: Arc<Semaphore>,
    decision_key: Option<Result<DecisionKey, TokenError>>,
    /// The durable task queue, when the runtime has a task store (`tasks`).
    tasks: Option<Arc<tasks::Queue>>,
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
    receipts: Option<Arc<dyn ReceiptStore>>,
    audit: Option<Arc<dyn AuditStore>>,
    policy: Option<Arc<dyn TransformPolicy>>,
    approve_all: bool,
    max_background: usize,
    decision_key: Option<Result<DecisionKey, TokenError>>,
    tasks: Option<(Arc<dyn TaskStore>, TaskOptions)>,
    retention: Option<std::time::Duration>,
}

impl RuntimeBuilder {
    /// Where pending approvals and suspended calls are kept (default: in memory): a
    /// [`MemoryStore`], a `SqliteStore` (one host), a `PostgresStore` (several instances on one
    /// database), or whatever `open_store` opened from a `--store` value.
    pub fn store(mut self, store: impl PendingStore) -> Self {
        self.store = Arc::new(store);
        self
    }

    /// A shared store.
    pub fn shared_store(mut self, store: Arc<dyn PendingStore>) -> Self {
        self.store = store;
        self
    }

    /// Where the receipts of tools declared `idempotent` are kept (default: the store's own,
    /// beside its calls, when it keeps them; else this process's memory).
    pub fn receipt_store(mut self, receipts: Arc<dyn ReceiptStore>) -> Self {
        self.receipts = Some(receipts);
        self
    }

    /// Where the audit trail of decisions is kept (default: the store's own, beside its calls;
    /// else this process's memory). See [`Runtime::audit`].
    pub fn audit_store(mut self, audit: Arc<dyn AuditStore>) -> Self {
        self.audit = Some(audit);
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

    /// The key that signs and checks decision tokens (default: from [`DECISION_KEY_ENV`], else
    /// derived from `TOOLSMITH_STORE_KEY`; see [`DecisionKey`]).
    pub fn decision_key(mut self, key: DecisionKey) -> Self {
        self.decision_key = Some(Ok(key));
        self
    }

    /// Runs background tasks durably (see `runtime::tasks`): queued in `store` (the same
    /// SQLite file or PostgreSQL database as the waiting calls, typically), run by a worker in
    /// every instance sharing it (at most [`max_background_tasks`](Self::max_background_tasks)
    /// at once each), taken over when their instance dies, readable from every instance
    /// ([`Runtime::task`]). Without it, background tasks live in this process's memory.
    pub fn task_store(mut self, store: Arc<dyn TaskStore>, options: TaskOptions) -> Self {
        self.tasks = Some((store, options));
        self
    }

    /// Expires what the stores hold past `retention` (see [`Runtime::expire`]) now and
    /// periodically, for as long as the runtime lives; starts when the runtime is built inside a
    /// Tokio runtime (else use [`Runtime::keep_expiring`]).
    pub fn retention(mut self, retention: std::time::Duration) -> Self {
        self.retention = Some(retention);
        self
    }

    /// The runtime. With a task store, its worker starts now when inside a Tokio runtime (see
    /// [`TaskOptions::start_on_build`]); so does the sweep of a [`retention`](Self::retention).
    pub fn build(self) -> Runtime {
        let queue = self.tasks.map(|(store, options)| Arc::new(tasks::Queue::new(store, options)));
        let runtime = Runtime {
            inner: Arc::new(Inner {
                registry: self.registry,
                receipts: self
                    .receipts
                    .or_else(|| self.store.receipts())
                    .unwrap_or_else(|| Arc::new(MemoryReceipts::default())),
                audit: self
                    .audit
                    .or_else(|| self.store.audit())
                    .unwrap_or_else(|| Arc::new(MemoryAudit::default())),
                store: self.store,
                policy: self.policy,
                approve_all: self.approve_all,
                background: Arc::new(Semaphore::new(self.max_background)),
                decision_key: self.decision_key.or_else(DecisionKey::from_env),
                tasks: queue,
            }),
        };
        if let Some(queue) = &runtime.inner.tasks
            && queue.start_on_build()
            && tokio::runtime::Handle::try_current().is_ok()
        {
            queue.start(&runtime.inner);
        }
        if let Some(retention) = self.retention
            && tokio::runtime::Handle::try_current().is_ok()
        {
            retention::sweep_while_alive(&runtime, retention);
        }
        runtime
    }
}

/// The schema of an approval decision.
pub(crate) fn approval_resume_schema() -> Value {
    json!({
        "type": "object",
        "properties": {
            "approved": {"type": "boolean", "description": "Whether the call may run."},
            "reason": {"type": "string", "description": "Why (shown to the model when declined)."},
            "args": {"type": "object", "description": "Edited arguments to run the call with instead (with `approved: true`); validated like the model's."}
        },
        "required": ["approved"],
        "additionalProperties": false
    })
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
            receipts: None,
            audit: None,
            policy: None,
            approve_all: false,
            max_background: 16,
            decision_key: None,
            tasks: None,
            retention: None,
        }
    }

    /// The registry.
    pub fn registry(&self) -> &Registry {
        &self.inner.registry
    }

    /// The intact calls of the store (waiting, running or interrupted), oldest first; damaged
    /// rows are skipped (see [`pending_entries`](Self::pending_entries)).
    pub async fn pending(&self) -> Result<Vec<PendingCall>, StoreError> {
        self.inner.store.list().await
    }

    /// Every stored call with its state (waiting, running, interrupted: with its owner and
    /// start), and every damaged row with its id and why, oldest first. A call of a tool this
    /// process does not have is listed as damaged. Never fails on a bad row.
    pub async fn pending_entries(&self) -> Result<Vec<StoredCall>, StoreError> {
        let entries = self.inner.store.entries().await?.into_iter();
        Ok(entries
            .map(|entry| match entry {
                StoredCall::Call { call, .. } if self.inner.registry.get(&call.tool_name).is_none() => StoredCall::Damaged {
                    reason: format!("its tool `{}` is unknown to this process", call.tool_name),
                    tool_call_id: call.tool_call_id,
                    tool_name: Some(call.tool_name),
                },
                other => other,
            })
            .collect())
    }

    /// The receipts of tools declared `idempotent` (to clear one after checking an
    /// interrupted run's effect: [`ReceiptStore::remove`] with the call's idempotency key).
    pub fn receipts(&self) -> &Arc<dyn ReceiptStore> {
        &self.inner.receipts
    }

    /// The audit trail: every decision made through this runtime (approve, reject, edit,
    /// resume, a client-side result, a cancelled task, an expired call), with who made it
    /// ([`Actor`], from [`ResumeOptions::by`]) and never argument values. List it with
    /// [`AuditStore::list`]; its rows cannot be edited through it.
    pub fn audit(&self) -> &Arc<dyn AuditStore> {
        &self.inner.audit
    }

    /// A background task of the task store, from any instance (`None`: unknown, or this
    /// runtime has no task store).
    pub async fn task(&self, task_id: &str) -> Result<Option<TaskRecord>, StoreError> {
        match &self.inner.tasks {
            Some(queue) => queue.store.get_task(task_id).await,
            None => Ok(None),
        }
    }

    /// Cancels a queued or running background task of the task store (from any instance): its
    /// row ends cancelled, and a running attempt stops at once when this instance runs it, else
    /// at its instance's next lease renewal. `false`: unknown, already ended, or no task store.
    /// Recorded as decided by [`Actor::Application`]; [`cancel_task_with`](Self::cancel_task_with)
    /// names who cancels.
    pub async fn cancel_task(&self, task_id: &str) -> Result<bool, StoreError> {
        self.cancel_task_with(task_id, ResumeOptions::default()).await
    }

    /// [`cancel_task`](Self::cancel_task), by whom `options` names ([`ResumeOptions::by`]; the
    /// rest of the options does not matter here). A cancellation is recorded in the audit
    /// trail once the store has cancelled the task.
    pub async fn cancel_task_with(&self, task_id: &str, options: ResumeOptions) -> Result<bool, StoreError> {
        let Some(queue) = &self.inner.tasks else {
            return Ok(false);
        };
        let cancelled = queue.cancel(task_id).await?;
        if cancelled {
            audit::task_cancelled(&*self.inner.audit, &*queue.store, task_id, options.actor().clone()).await;
        }
        Ok(cancelled)
    }

    /// Records the durable task the waiting call `call` was to become (its
    /// [`BackgroundOverride::task_id`](crate::spec::BackgroundOverride::task_id)) as ended without running, in `state` with `error`: for
    /// an edge that handed out the task's id before the call ran and must answer for it once the
    /// call is declined or cancelled while it waits. Call it before resolving the waiting call,
    /// so the task is never unknown in between. `false`: the call names no task, or no task store.
    pub async fn end_waiting_task(
        &self,
        call: &PendingCall,
        state: TaskState,
        error: &crate::error::ToolError,
    ) -> Result<bool, StoreError> {
        let (Some(queue), Some(task_id)) = (&self.inner.tasks, call.data.background.as_ref().and_then(|b| b.task_id.clone())) else {
            return Ok(false);
        };
        let task = NewTask {
            task_id,
            tool_name: call.tool_name.clone(),
            args: call.args.clone(),
            data: std::sync::Arc::new(crate::context::CallData {
                tool_call_id: Some(call.tool_call_id.clone()),
                ..call.data.clone()
            }),
            max_retries: 0,
            timeout_ms: None,
            created_at_ms: call.created_at_ms,
            resume_data: None,
        };
        queue.store.enqueue_ended_task(&task, state, error).await?;
        Ok(true)
    }

    /// Whether this runtime keeps durable background tasks (it was given a task store).
    pub fn has_task_store(&self) -> bool {
        self.inner.tasks.is_some()
    }

    /// Starts this instance's task worker (once; inside a Tokio runtime), for a runtime built
    /// outside one or with [`TaskOptions::start_on_build`] off. Without a task store, nothing.
    pub fn start_task_worker(&self) {
        if let Some(queue) = &self.inner.tasks {
            queue.start(&self.inner);
        }
    }

    /// The name this instance's task worker holds leases under (`None` without a task store).
    pub fn task_worker_id(&self) -> Option<&str> {
        self.inner.tasks.as_deref().map(tasks::Queue::owner)
    }

    /// One waiting call, by id.
    pub async fn pending_call(&self, tool_call_id: &str) -> Result<Option<PendingCall>, StoreError> {
        self.inner.store.get(tool_call_id).await
    }

    pub(crate) fn viewer<'a>(&'a self, tool: Option<&'a dyn Tool>) -> Viewer<'a> {
        Viewer {
            tool,
            policy: self.inner.policy.as_deref(),
        }
    }

    /// Starts a call and returns its events and outcome: `tool-call`, then `tool-result`,
    /// `tool-error`, `tool-call-approval` (it waits; see [`Runtime::approve`]),
    /// `tool-call-suspended` (see [`Runtime::resume`]), `tool-call-awaiting-result` (a
    /// client-side tool; see [`Runtime::submit_result`]) or a background task's placeholder and
    /// events. Writer chunks arrive as `custom` events. The run ends with one [`Outcome`]. Must
    /// be called inside a Tokio runtime.
    pub fn call(&self, tool: &str, args: impl Into<crate::call::CallArgs<'static>>, options: crate::call::CallOptions) -> EventStream {
        let mut options = options;
        let span = self.call_span(tool, &mut options);
        self.call_in(span, tool, args.into(), (options, false))
    }

    /// The span of a new call of `tool` (its id, given or generated now, is kept in `options`).
    pub(crate) fn call_span(&self, tool: &str, options: &mut crate::call::CallOptions) -> tracing::Span {
        let id = options.data.tool_call_id.get_or_insert_with(crate::call::new_call_id);
        let span = crate::call::call_span(tool, id, None);
        if let Some(known) = (!span.is_disabled()).then(|| self.inner.registry.get(tool)).flatten() {
            crate::call::trace::describe(&span, known.spec());
        }
        span
    }

    /// [`Runtime::call`] inside a span made by [`Runtime::call_span`] (an edge that sets the
    /// span's parent first: the MCP server, from a request's trace context). A `driven` run
    /// is run by the stream's reader, in its task, until the stream is dropped or detached (see
    /// [`EventStream`]): for a reader that reads it to its end at once, no task and no wake-up
    /// across tasks per call. Its stream carries the outcome only (no events: its reader, an
    /// MCP request, answers with the outcome).
    pub(crate) fn call_in(
        &self,
        span: tracing::Span,
        tool: &str,
        args: crate::call::CallArgs<'static>,
        (options, driven): (crate::call::CallOptions, bool),
    ) -> EventStream {
        let loaded = options.data.loaded_tools.clone();
        if driven {
            // Its reader (an MCP request) answers with the outcome alone.
            return Sink::driven(false, |sink| self.new_run(span, sink, tool.to_owned(), args, options)).with_loaded(loaded);
        }
        let (sink, stream) = Sink::channel();
        self.spawn_new(span, sink, tool.to_owned(), args, options);
        stream.with_loaded(loaded)
    }

    /// Starts a new call on a task of its own, inside its span.
    pub(crate) fn spawn_new(
        &self,
        span: tracing::Span,
        sink: Sink,
        tool: String,
        args: crate::call::CallArgs<'static>,
        options: crate::call::CallOptions,
    ) {
        // Boxed: a task's future is moved several times as it is spawned; a run's is kilobytes.
        tokio::spawn(Box::pin(self.new_run(span, sink, tool, args, options)));
    }

    /// A new call's run inside its span: what a task runs, or its stream drives.
    fn new_run(
        &self,
        span: tracing::Span,
        sink: Sink,
        tool: String,
        args: crate::call::CallArgs<'static>,
        options: crate::call::CallOptions,
    ) -> impl std::future::Future<Output = ()> + Send + 'static + use<> {
        use tracing::Instrument;
        let this = self.clone();
        async move {
            this.run_new(&sink, &tool, args, options).instrument(span).await;
            // The call's span closes before its stream does: a reader that saw the stream end
            // (a command about to exit and flush its exporter) finds the span ended.
            drop(sink);
        }
    }
}

pub(crate) fn log_hook(tool: &str, hook: &str, result: Result<(), crate::ToolError>) {
    if let Err(e) = result {
        tracing::warn!(tool, hook, error = %e, "a lifecycle hook failed; the call goes on");
    }
}
