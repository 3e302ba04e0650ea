//! Durable background tasks: a runtime with a [`TaskStore`] queues its background calls there,
//! and a worker in each instance runs what it claims.
//!
//! Owns [`TaskOptions`] and the queue of a runtime: enqueueing a call (the placeholder answers
//! the caller; the run's stream gets the task's end when any instance finishes it), the worker
//! loop (at most `max_background_tasks` tasks at once per instance), and one task's run under
//! its lease (renewed every third of it; a run whose lease is lost is stopped and writes
//! nothing). What a task is and how the store keeps it is `store::tasks`'s; the in-memory
//! background tasks of a runtime without a task store are `background`'s.

use std::collections::HashMap;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex, Weak};
use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

use serde_json::Value;
use tokio::sync::Notify;
use tokio_util::sync::CancellationToken;

use super::background::{self, Settings};
use super::events::{CallRef, RunEventKind};
use super::outcome::{Outcome, Sink, Waiting};
use super::pending::{PendingCall, PendingKind};
use super::run::Origin;
use super::run::fail;
use super::state::CallState;
use super::store::{ClaimedTask, NewTask, StoreError, TaskLease, TaskRecord, TaskState, TaskStore};
use super::{Inner, Runtime};
use crate::call::{CallArgs, Finished};
use crate::context::{CallData, CallEnv};
use crate::error::{ErrorKind, ToolError};
use crate::registry::OwnedPrepared;

/// How a runtime runs durable background tasks.
///
/// ```
/// use std::time::Duration;
/// use tool_core::runtime::TaskOptions;
///
/// let options = TaskOptions::default().lease(Duration::from_secs(5)).poll_interval(Duration::from_millis(200));
/// assert_eq!(options.lease_duration(), Duration::from_secs(5));
/// ```
#[derive(Debug, Clone)]
pub struct TaskOptions {
    lease: Duration,
    poll: Duration,
    start_on_build: bool,
}

impl Default for TaskOptions {
    fn default() -> Self {
        TaskOptions {
            lease: Duration::from_secs(30),
            poll: Duration::from_millis(500),
            start_on_build: true,
        }
    }
}

impl TaskOptions {
    /// How long a claimed task stays this instance's without a renewal (default 30 s, at least
    /// 300 ms; renewed every third of it). A task whose instance died is taken over this long
    /// after its last renewal.
    pub fn lease(mut self, lease: Duration) -> Self {
        self.lease = lease.max(Duration::from_millis(300));
        self
    }

    /// The lease set by [`lease`](Self::lease).
    pub fn lease_duration(&self) -> Duration {
        self.lease
    }

    /// How often an idle worker looks for work queued by other instances (default 500 ms; a
    /// task queued by this instance is claimed at once).
    pub fn poll_interval(mut self, every: Duration) -> Self {
        self.poll = every.max(Duration::from_millis(10));
        self
    }

    /// Whether building the runtime inside a Tokio runtime starts its worker (default), or the
    /// worker starts with the first task this instance queues or with
    /// [`Runtime::start_task_worker`].
    pub fn start_on_build(mut self, yes: bool) -> Self {
        self.start_on_build = yes;
        self
    }
}

/// A runtime's task queue: the store, this instance's name as a lease owner, and the signals
/// of its worker.
pub(crate) struct Queue {
    pub(crate) store: Arc<dyn TaskStore>,
    options: TaskOptions,
    owner: String,
    /// Work was queued here: the worker claims at once.
    wake: Notify,
    /// A task this instance ran ended: watchers look at once.
    ended: Notify,
    started: AtomicBool,
    /// The cancellation tokens of the attempts this instance runs, by task id: cancelling a
    /// task here stops its attempt at once (another instance's learns it at its next renewal).
    running: Mutex<HashMap<String, CancellationToken>>,
}

impl Queue {
    pub(crate) fn new(store: Arc<dyn TaskStore>, options: TaskOptions) -> Queue {
        let random = crate::call::new_call_id();
        let random = random.trim_start_matches("call_");
        // `PREFIX/random`: the store tells from the prefix whether an expired lease's owner lives.
        let owner = match store.owner_prefix() {
            Some(prefix) => format!("{prefix}/{random}"),
            None => format!("pid{}-{random}", std::process::id()),
        };
        Queue {
            store,
            options,
            owner,
            wake: Notify::new(),
            ended: Notify::new(),
            started: AtomicBool::new(false),
            running: Mutex::default(),
        }
    }

    /// Cancels a queued or running task in the store, and stops its attempt at once when this
    /// instance runs it. `false`: unknown or already ended.
    pub(crate) async fn cancel(&self, task_id: &str) -> Result<bool, StoreError> {
        let cancelled = self.store.cancel_task(task_id).await?;
        if cancelled {
            let running = self.running.lock().unwrap_or_else(|p| p.into_inner());
            if let Some(token) = running.get(task_id) {
                token.cancel();
            }
        }
        Ok(cancelled)
    }

    /// Starts the worker of the runtime `inner` once (inside a Tokio runtime).
    pub(crate) fn start(self: &Arc<Self>, inner: &Arc<Inner>) {
        if !self.started.swap(true, Ordering::SeqCst) {
            tokio::spawn(work(Arc::downgrade(inner), self.clone()));
        }
    }

    /// Whether building the runtime starts the worker.
    pub(crate) fn start_on_build(&self) -> bool {
        self.options.start_on_build
    }

    /// The lease owner this instance writes.
    pub(crate) fn owner(&self) -> &str {
        &self.owner
    }
}

fn now_ms() -> u64 {
    let since_epoch = SystemTime::now().duration_since(UNIX_EPOCH).unwrap_or_default();
    u64::try_from(since_epoch.as_millis()).unwrap_or(u64::MAX)
}

/// The error of a background call of `name` that was not queued (and not run) because of `e`.
fn not_queued(name: &str, e: &StoreError) -> ToolError {
    ToolError::new(format!(
        "Tool `{name}` runs in the background, and its task could not be queued ({e}); it was not run."
    ))
    .for_tool(name)
}

/// Queues a background call (with the resume data it continues with, if any) and answers it:
/// the task's result when it ends within the wait timeout, else the placeholder, then (while
/// the caller listens) the task's end.
pub(crate) async fn enqueue(
    runtime: &Runtime,
    queue: &Arc<Queue>,
    sink: &Sink,
    (prepared, call, origin): (&OwnedPrepared, &CallRef, Origin),
    data: Arc<CallData>,
    settings: Settings,
    resume_data: Option<Value>,
) {
    let tool = prepared.tool().clone();
    let viewer = runtime.viewer(Some(&*tool));
    let chosen = data.background.as_ref().and_then(|b| b.task_id.clone());
    let task = NewTask {
        task_id: chosen.unwrap_or_else(background::new_task_id),
        tool_name: call.tool_name.clone(),
        args: prepared.args().into_owned(),
        data: Arc::new(CallData {
            tool_call_id: Some(call.tool_call_id.clone()),
            context: Some(Value::Object((*prepared.context).clone())),
            // Kept for the edge that started it (its task id and owner); the worker runs the
            // call as it is and never moves it again. Nothing else holds it by now.
            ..Arc::unwrap_or_clone(data)
        }),
        max_retries: settings.max_retries,
        timeout_ms: settings.timeout.map(|t| u64::try_from(t.as_millis()).unwrap_or(u64::MAX)),
        created_at_ms: now_ms(),
        resume_data,
    };
    // The claim this runtime took on a continued call, read while nothing else can have
    // touched the call (its task does not exist yet): the removal below removes the call only
    // while it is still under that claim. `None` from a store that shows no claims: the call
    // is removed as it is.
    let claim = match origin {
        Origin::Stored => match runtime.inner.store.state(&call.tool_call_id).await {
            Ok(Some(CallState::Running(claim))) => Some(claim),
            Ok(_) => None,
            Err(e) => {
                // Nothing was queued: the call waits again for a later decision.
                runtime.release(&call.tool_call_id).await;
                return fail(sink, &viewer, call, not_queued(&call.tool_name, &e));
            }
        },
        Origin::Fresh => None,
    };
    if let Err(e) = queue.store.enqueue_task(&task).await {
        return fail(sink, &viewer, call, not_queued(&call.tool_name, &e));
    }
    // The task is the call's record from now on: an approved or resumed call leaves the
    // pending store. A worker on another thread may have run the task already and seen its tool
    // suspend itself again (or wait for approval again): the waiting call it saved under the
    // same id is not this runtime's claim any more, and stays. A fresh call was never there,
    // and removing its id now could only remove what its own task stored meanwhile.
    if origin == Origin::Stored {
        runtime.forget_claimed(&call.tool_call_id, claim).await;
    }
    queue.start(&runtime.inner);
    queue.wake.notify_one();
    let (task_id, data) = (task.task_id, task.data);
    // A wait of zero answers with the placeholder at once, however fast the task: whether a
    // worker on another thread ended it before this line ran is not the caller's to see (an
    // MCP client that asked for a task gets its handle every time).
    if let Some(wait) = settings.wait.filter(|w| !w.is_zero())
        && let Ok(Some(record)) = tokio::time::timeout(wait, watch(queue, &task_id, None)).await
    {
        if became_waiting(runtime, sink, call, &*tool, &record).await {
            return;
        }
        let ended = match record.state {
            TaskState::Completed => record
                .output
                .map(Finished::Output)
                .ok_or_else(|| ToolError::new("The task completed without an output.")),
            _ => Err(record.error.unwrap_or_else(|| ToolError::new("The task failed."))),
        };
        // The pending store was dealt with when the task was queued: its end removes nothing
        // from it (a waiting call stored under this id since is not this run's).
        return runtime
            .report_from(Origin::Fresh, sink, &viewer, prepared, call, &data, ended)
            .await;
    }
    background::placeholder(runtime, sink, call, &*tool, &task_id);
    let (runtime, queue, sink, call) = (runtime.clone(), queue.clone(), sink.clone(), call.clone());
    tokio::spawn(tracing::Instrument::in_current_span(async move {
        if let Some(record) = watch(&queue, &task_id, Some(&sink)).await
            && !became_waiting(&runtime, &sink, &call, &*tool, &record).await
        {
            report_end(&runtime, &sink, &call, &*tool, record);
        }
    }));
}

/// Waits for a task to end (from any instance): its record, or `None` once nobody listens to
/// `sink` any more.
async fn watch(queue: &Queue, task_id: &str, sink: Option<&Sink>) -> Option<TaskRecord> {
    let mut pause = Duration::from_millis(10);
    loop {
        let ended = queue.ended.notified();
        match queue.store.get_task(task_id).await {
            Ok(Some(record)) if record.state.is_final() => return Some(record),
            Ok(Some(_)) => {}
            Ok(None) => {
                let error = ToolError::new(format!("The background task `{task_id}` is no longer in the store."));
                return Some(gone(task_id, error));
            }
            Err(e) => tracing::warn!(task_id, error = %e, "cannot read a background task's state; trying again"),
        }
        if sink.is_some_and(Sink::is_closed) {
            return None;
        }
        tokio::select! {
            () = ended => {}
            () = tokio::time::sleep(pause) => {}
        }
        pause = (pause * 2).min(queue.options.poll.max(Duration::from_millis(50)));
    }
}

/// Whether a task that left the queue did so because its tool suspended itself (its call now
/// waits for resume data in the pending store, [`suspend`]): then the run's listeners are told
/// the call is suspended, as a call in the foreground would be.
async fn became_waiting(runtime: &Runtime, sink: &Sink, call: &CallRef, tool: &dyn crate::tool::Tool, record: &TaskRecord) -> bool {
    // `gone` leaves the tool's name empty: any other record is the task's own.
    if !record.task.tool_name.is_empty() {
        return false;
    }
    let waiting = match runtime.inner.store.get(&call.tool_call_id).await {
        Ok(Some(waiting)) if waiting.kind == PendingKind::Suspended => waiting,
        _ => return false,
    };
    let event = runtime.viewer(Some(tool)).event(call.event(RunEventKind::ToolCallSuspended {
        suspend_payload: waiting.suspend_payload.clone().unwrap_or(Value::Null),
        args: waiting.args.clone(),
        resume_schema: waiting.resume_schema.clone(),
    }));
    sink.send(event.clone());
    sink.end(Outcome::Suspended(Box::new(Waiting { call: waiting, event })));
    true
}

/// A record standing for a task that vanished from the store (its tool's name left empty).
fn gone(task_id: &str, error: ToolError) -> TaskRecord {
    TaskRecord {
        task: NewTask {
            task_id: task_id.to_owned(),
            tool_name: String::new(),
            args: Value::Null,
            data: Default::default(),
            max_retries: 0,
            timeout_ms: None,
            created_at_ms: 0,
            resume_data: None,
        },
        state: TaskState::Failed,
        attempts: 0,
        lease_owner: None,
        lease_expires_at_ms: None,
        output: None,
        error: Some(error),
        updated_at_ms: 0,
    }
}

/// The run's last events: the task completed or failed.
fn report_end(runtime: &Runtime, sink: &Sink, call: &CallRef, tool: &dyn crate::tool::Tool, record: TaskRecord) {
    let viewer = runtime.viewer(Some(tool));
    let task_id = record.task.task_id;
    match (record.state, record.output) {
        (TaskState::Completed, Some(output)) => {
            let event = call.event(RunEventKind::BackgroundTaskCompleted {
                task_id,
                output: output.clone(),
            });
            sink.send(viewer.event(event));
            sink.end(Outcome::Done(output));
        }
        _ => {
            let error = record.error.unwrap_or_else(|| ToolError::new("The background task failed."));
            crate::call::record_error(&tracing::Span::current(), &error);
            let event = call.event(RunEventKind::BackgroundTaskFailed {
                task_id,
                error: error.clone(),
            });
            sink.send(viewer.event(event));
            sink.end(Outcome::Failed(error));
        }
    }
}

/// The worker: claims tasks while a slot is free, runs each on a task of its own; idle, it
/// waits for work queued here or looks again after the poll interval. Ends with the runtime.
async fn work(runtime: Weak<Inner>, queue: Arc<Queue>) {
    // Whether claiming fails now (the store is away): logged once, then with backoff.
    let mut failing = false;
    loop {
        let Some(slots) = runtime.upgrade().map(|inner| inner.background.clone()) else {
            return;
        };
        let Ok(slot) = slots.acquire_owned().await else { return };
        let Some(inner) = runtime.upgrade() else { return };
        let claimed = queue.store.claim_task(&queue.owner, queue.options.lease).await;
        if claimed.is_ok() {
            super::settle::recovered("claim background tasks", &mut failing);
        }
        match claimed {
            Ok(Some(claimed)) => {
                let (runtime, queue) = (Runtime { inner }, queue.clone());
                tokio::spawn(async move {
                    let _slot = slot;
                    execute(&runtime, &queue, claimed).await;
                });
                continue;
            }
            Ok(None) => {}
            Err(e) => super::settle::outage("claim background tasks", &e, &mut failing),
        }
        drop((inner, slot));
        tokio::select! {
            () = queue.wake.notified() => {}
            () = tokio::time::sleep(queue.options.poll) => {}
        }
    }
}

/// Whether another attempt may help: failures of the tool itself and timeouts.
fn retryable(e: &ToolError) -> bool {
    matches!(e.kind(), ErrorKind::Execution | ErrorKind::Panic | ErrorKind::Aborted)
}

/// Runs one claimed attempt and records how it ended, if its lease is still current.
async fn execute(runtime: &Runtime, queue: &Queue, claimed: ClaimedTask) {
    let ClaimedTask { task, lease } = claimed;
    let span = tracing::info_span!("background_task", task_id = %task.task_id, tool = %task.tool_name, attempt = lease.attempt);
    let run = async {
        let ended = match prepare(runtime, &task) {
            Ok(prepared) => match run_leased(runtime, queue, &lease, &prepared, &task).await {
                Some(Ok(Finished::Suspended(s))) if suspend(runtime, queue, (&task, &lease), &prepared, &s.payload).await => {
                    queue.ended.notify_waiters();
                    return;
                }
                Some(ended) => ended,
                None => return,
            },
            Err(e) => Err(e),
        };
        let end = Arc::new(match ended {
            Ok(Finished::Output(output)) => TaskEnd::Completed(output),
            Ok(Finished::Suspended(_)) => TaskEnd::Failed(
                ToolError::new(format!(
                    "Tool `{}` suspended itself in a background task, and the task could not wait for resume data (the tool declares no `resume` type, or the store could not keep the waiting call).",
                    task.tool_name
                )),
                false,
            ),
            Err(error) => {
                let retry = retryable(&error);
                TaskEnd::Failed(error, retry)
            }
        });
        match end.write(&*queue.store, &lease).await {
            Ok(Some(TaskState::Queued)) => {
                tracing::info!(attempt = lease.attempt, "background attempt failed; queued again");
                queue.wake.notify_one();
            }
            Ok(Some(_)) => {}
            Ok(None) => tracing::warn!("the task's lease was taken over before its end was recorded; this attempt's end is dropped"),
            // The attempt ended: its end is recorded when the store returns (unless another
            // attempt took the task meanwhile), never recomputed by running it again.
            Err(e) => {
                let (store, lease) = (queue.store.clone(), lease.clone());
                super::settle::keep("record a background task's end", &task.task_id, &e, move || {
                    let (store, lease, end) = (store.clone(), lease.clone(), end.clone());
                    async move { end.write(&*store, &lease).await.map(drop) }
                });
            }
        }
        queue.ended.notify_waiters();
    };
    tracing::Instrument::instrument(run, span).await;
}

/// A task whose tool suspended itself waits for its resume data as a call in the pending store,
/// under the same call id and task id (saved first, so the task is never unknown in between),
/// and leaves the queue under its lease; resumed, it is queued again with the data
/// ([`Runtime::resume`]). `false`: it cannot wait (the tool declares no resume schema, the call
/// has no id, the store refused or the lease was lost), and the attempt ends as it did before.
async fn suspend(
    runtime: &Runtime,
    queue: &Queue,
    (task, lease): (&NewTask, &TaskLease),
    prepared: &OwnedPrepared,
    payload: &Value,
) -> bool {
    let spec = prepared.tool().spec();
    let (Some(call_id), Some(resume_schema)) = (task.data.tool_call_id.clone(), spec.schemas.resume.clone()) else {
        return false;
    };
    // The call keeps its task id: resumed, it is queued again as the same task.
    let mut background = task.data.background.clone().unwrap_or_default();
    background.task_id = Some(task.task_id.clone());
    let waiting = PendingCall {
        tool_call_id: call_id.clone(),
        tool_name: task.tool_name.clone(),
        kind: PendingKind::Suspended,
        args: task.args.clone(),
        data: CallData {
            tool_call_id: None,
            background: Some(background),
            ..(*task.data).clone()
        },
        suspend_payload: Some(payload.clone()),
        resume_schema: Some(resume_schema),
        created_at_ms: now_ms(),
        binding: None,
        answers: Default::default(),
    };
    if let Err(e) = runtime.inner.store.save(&waiting).await {
        tracing::warn!(error = %e, "a suspended task's waiting call could not be saved; the task fails");
        return false;
    }
    match queue.store.suspend_task(lease).await {
        Ok(true) => {
            tracing::info!("the task's tool suspended itself: the task waits for its resume data");
            true
        }
        taken => {
            if let Err(e) = taken {
                tracing::warn!(error = %e, "a suspended task could not leave the queue; it fails");
            }
            runtime.forget(&call_id).await;
            false
        }
    }
}

/// How an attempt ended, as its task records it.
enum TaskEnd {
    /// With this output.
    Completed(crate::tool::ToolOutput),
    /// With this error (`true`: another attempt may help).
    Failed(ToolError, bool),
}

impl TaskEnd {
    /// Records it under `lease`: the task's state after, `None` when the lease was lost.
    async fn write(&self, store: &dyn TaskStore, lease: &TaskLease) -> Result<Option<TaskState>, StoreError> {
        match self {
            TaskEnd::Completed(output) => store
                .complete_task(lease, output)
                .await
                .map(|ok| ok.then_some(TaskState::Completed)),
            TaskEnd::Failed(error, retry) => store.fail_task(lease, error, *retry).await,
        }
    }
}

/// The task's call, validated again by this instance's registry.
fn prepare(runtime: &Runtime, task: &NewTask) -> Result<OwnedPrepared, ToolError> {
    let registry = &runtime.inner.registry;
    if registry.get(&task.tool_name).is_none() {
        return Err(ToolError::new(format!(
            "Tool `{}` is unknown to the instance that claimed this task.",
            task.tool_name
        )));
    }
    let args = CallArgs::Value(task.args.clone());
    registry
        .prepare(&task.tool_name, &args, task.data.context.clone())
        .and_then(|p| p.into_owned())
}

/// Runs the attempt while keeping its lease: how it ended, or `None` when the lease was lost
/// (taken over, cancelled, or not renewed in time): the run is stopped and writes nothing.
///
/// The attempt runs over the runtime's receipts like any other run (`once::run`): a tool
/// declared `idempotent` has its effect once per task, however many attempts its task takes
/// (an attempt whose instance died after the effect leaves a receipt the next attempt finds).
async fn run_leased(
    runtime: &Runtime,
    queue: &Queue,
    lease: &TaskLease,
    prepared: &OwnedPrepared,
    task: &NewTask,
) -> Option<Result<Finished, ToolError>> {
    let token = CancellationToken::new();
    let running = || queue.running.lock().unwrap_or_else(|p| p.into_inner());
    running().insert(task.task_id.clone(), token.clone());
    let _unregister = Unregister(&queue.running, &task.task_id);
    let env = CallEnv {
        cancellation: Some(token.clone()),
        timeout: task.timeout_ms.map(Duration::from_millis),
        ..CallEnv::default()
    };
    let run = super::once::run(&runtime.inner.receipts, prepared, &task.data, env, task.resume_data.clone());
    tokio::select! {
        ended = run => Some(ended),
        () = keep_lease(queue, lease) => {
            token.cancel();
            None
        }
    }
}

/// Takes an attempt's token out of [`Queue::running`] when the attempt ends.
struct Unregister<'a>(&'a Mutex<HashMap<String, CancellationToken>>, &'a str);

impl Drop for Unregister<'_> {
    fn drop(&mut self) {
        self.0.lock().unwrap_or_else(|p| p.into_inner()).remove(self.1);
    }
}

/// Renews a lease every third of it; returns when it is lost.
async fn keep_lease(queue: &Queue, lease: &TaskLease) {
    const RENEW: &str = "renew a background task's lease";
    let mut failing = false;
    let length = queue.options.lease;
    let mut held_until = Instant::now() + length;
    loop {
        tokio::time::sleep(length / 3).await;
        let asked = Instant::now();
        match queue.store.renew_task(lease, length).await {
            Ok(true) => {
                super::settle::recovered(RENEW, &mut failing);
                held_until = asked + length;
            }
            Ok(false) => {
                tracing::warn!("the task was cancelled or taken over by another instance; stopping this attempt");
                return;
            }
            Err(e) if Instant::now() >= held_until => {
                tracing::warn!(error = %e, "cannot renew the task's lease and it has lapsed; stopping this attempt");
                return;
            }
            Err(e) => super::settle::outage(RENEW, &e, &mut failing),
        }
    }
}
