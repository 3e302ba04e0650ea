//! Durable background tasks: the queue every instance on one store shares.
//!
//! Owns [`TaskStore`] (async, object-safe, beside [`PendingStore`](super::PendingStore) and
//! implemented by the same backends over the same file or pool), what a task is ([`NewTask`]:
//! everything another instance needs to run it), where it is ([`TaskState`], [`TaskRecord`]),
//! the lease of a running attempt ([`TaskLease`]) and the counts by state ([`TaskCounts`]).
//! Running a task is the runtime's (`runtime::tasks`); nothing here runs tools.
//!
//! ```text
//! enqueue ──► queued ──claim──► running ──complete──► completed
//!               ▲                  │ │
//!               └── fail (retry) ──┘ └──fail (no retry, or no retries left)──► failed
//!                                  │
//!     its lease expires ──► taken over by the next claim (a new attempt), or failed when
//!                           it has no retries left; cancel: queued or running ──► cancelled
//! ```
//!
//! Every claim is an attempt and carries its number: the *fencing token*. Renewing, completing
//! and failing name the lease (owner and attempt); once another instance took the task over, the
//! old owner's writes match nothing and are refused, so a task's result is written once.

use std::time::Duration;

use serde::{Deserialize, Serialize};
use serde_json::Value;

use super::StoreError;
use crate::context::CallData;
use crate::error::ToolError;
use crate::tool::ToolOutput;

/// Where a task is in its life.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum TaskState {
    /// Waiting for an instance to claim it (new, or retried after a failed attempt).
    Queued,
    /// An instance holds its lease and runs it.
    Running,
    /// It ran and produced its output.
    Completed,
    /// Its last attempt failed (or its instances died) and no retries are left.
    Failed,
    /// Someone cancelled it before it ended.
    Cancelled,
}

impl TaskState {
    /// Every state, in the order of a task's life.
    pub const ALL: [TaskState; 5] = [
        TaskState::Queued,
        TaskState::Running,
        TaskState::Completed,
        TaskState::Failed,
        TaskState::Cancelled,
    ];

    /// The state's name (`queued`, `running`, `completed`, `failed`, `cancelled`).
    pub fn as_str(self) -> &'static str {
        match self {
            TaskState::Queued => "queued",
            TaskState::Running => "running",
            TaskState::Completed => "completed",
            TaskState::Failed => "failed",
            TaskState::Cancelled => "cancelled",
        }
    }

    /// Reads a state's name.
    ///
    /// ```
    /// use tool_core::runtime::backend::TaskState;
    ///
    /// assert_eq!(TaskState::parse("running"), Some(TaskState::Running));
    /// assert_eq!(TaskState::parse("done"), None);
    /// ```
    pub fn parse(text: &str) -> Option<TaskState> {
        TaskState::ALL.into_iter().find(|s| s.as_str() == text)
    }

    /// Whether the task has ended (completed, failed or cancelled).
    pub fn is_final(self) -> bool {
        matches!(self, TaskState::Completed | TaskState::Failed | TaskState::Cancelled)
    }
}

impl std::fmt::Display for TaskState {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.as_str())
    }
}

/// A task as enqueued: what any instance needs to run it (the validated arguments, the call's
/// data with its request context, the retry and timeout settings).
///
/// The request context is stored as validated (it may hold credentials the tool needs): the
/// stores keep it private and tag the task so an edited row is never run.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct NewTask {
    /// The task id (`task_…`, in the placeholder the model received).
    pub task_id: String,
    /// The tool.
    pub tool_name: String,
    /// The validated arguments.
    pub args: Value,
    /// What the call is: its id, thread, resource, messages, request context.
    #[serde(flatten)]
    pub data: std::sync::Arc<CallData>,
    /// Further attempts after the first (a failed attempt of the tool, or an instance that
    /// died running it).
    pub max_retries: u32,
    /// Each attempt's timeout, when the tool set one.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub timeout_ms: Option<u64>,
    /// When it was enqueued (milliseconds since the Unix epoch).
    pub created_at_ms: u64,
    /// The resume data the call continues with: a task whose tool suspended itself is queued
    /// again with the data it waited for (the tool runs with it as `resume_data`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub resume_data: Option<Value>,
}

/// The lease of one attempt: who runs it, and which attempt it is (the fencing token).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TaskLease {
    /// The task.
    pub task_id: String,
    /// The instance running it.
    pub owner: String,
    /// The attempt (1 for the first): a write naming an older attempt is refused.
    pub attempt: u32,
}

/// A task claimed for running, with its lease.
#[derive(Debug, Clone, PartialEq)]
pub struct ClaimedTask {
    /// What to run.
    pub task: NewTask,
    /// The lease to renew while running, and to name when writing the result.
    pub lease: TaskLease,
}

/// A stored task: what it is, where it is in its life, and how it ended.
#[derive(Debug, Clone, PartialEq)]
pub struct TaskRecord {
    /// What it runs.
    pub task: NewTask,
    /// Its state.
    pub state: TaskState,
    /// Attempts started so far.
    pub attempts: u32,
    /// The instance holding (or that last held) its lease.
    pub lease_owner: Option<String>,
    /// When that lease ends (milliseconds since the Unix epoch).
    pub lease_expires_at_ms: Option<u64>,
    /// The output of a completed task.
    pub output: Option<ToolOutput>,
    /// The error of a failed (or cancelled) task.
    pub error: Option<ToolError>,
    /// When the row last changed (milliseconds since the Unix epoch).
    pub updated_at_ms: u64,
}

/// How many tasks are in each state (`toolsmith store status`).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize)]
pub struct TaskCounts {
    /// Waiting to be claimed.
    pub queued: u64,
    /// Held by an instance (or whose instance died; taken over when its lease expires).
    pub running: u64,
    /// Done.
    pub completed: u64,
    /// Failed after their retries.
    pub failed: u64,
    /// Cancelled.
    pub cancelled: u64,
}

impl TaskCounts {
    /// Adds `n` tasks of `state`.
    pub fn add(&mut self, state: TaskState, n: u64) {
        let slot = match state {
            TaskState::Queued => &mut self.queued,
            TaskState::Running => &mut self.running,
            TaskState::Completed => &mut self.completed,
            TaskState::Failed => &mut self.failed,
            TaskState::Cancelled => &mut self.cancelled,
        };
        *slot += n;
    }
}

/// The durable queue of background tasks, shared by every instance on one store.
///
/// Every method is durable before it returns and must not block a Tokio worker. Of any number
/// of instances claiming at once, each task goes to exactly one; a running task whose lease
/// expired (its instance died or lost the store) is taken over by the next claim as a new
/// attempt, or ends failed when it has none left. Only the current lease (owner and attempt)
/// can renew, complete or fail a task.
///
/// ```
/// use std::time::Duration;
/// use tool_core::runtime::MemoryStore;
/// use tool_core::runtime::backend::{NewTask, TaskState, TaskStore};
///
/// # tokio::runtime::Runtime::new().unwrap().block_on(async {
/// let store = MemoryStore::new();
/// let task: NewTask = serde_json::from_value(serde_json::json!({
///     "task_id": "task_1", "tool_name": "report", "args": {}, "max_retries": 0, "created_at_ms": 1
/// })).unwrap();
/// store.enqueue_task(&task).await.unwrap();
/// let claimed = store.claim_task("instance-a", Duration::from_secs(30)).await.unwrap().unwrap();
/// assert_eq!(claimed.lease.attempt, 1);
/// assert!(store.claim_task("instance-b", Duration::from_secs(30)).await.unwrap().is_none(), "claimed once");
/// let done = tool_core::ToolOutput::new(serde_json::json!("ok"));
/// assert!(store.complete_task(&claimed.lease, &done).await.unwrap());
/// assert_eq!(store.get_task("task_1").await.unwrap().unwrap().state, TaskState::Completed);
/// # });
/// ```
#[async_trait::async_trait]
pub trait TaskStore: Send + Sync + 'static {
    /// Adds a queued task. An id already stored is refused.
    async fn enqueue_task(&self, task: &NewTask) -> Result<(), StoreError>;
    /// Adds a task that ended without running, in `state` (failed or cancelled) with `error`:
    /// the task a waiting call was to become, declined or cancelled while it waited (an edge
    /// that handed out its id before the call ran keeps answering for it). Never claimed. An id
    /// already stored is refused.
    async fn enqueue_ended_task(&self, task: &NewTask, state: TaskState, error: &ToolError) -> Result<(), StoreError>;
    /// What identifies this process (SQLite: its pid and start time) or instance (PostgreSQL:
    /// its id) to other holders of the store, put before a task queue's owner name
    /// (`PREFIX/random`), so [`claim_task`](Self::claim_task) can tell a lease whose owner is
    /// alive but cut off from the store (its attempt may well have ended, its outcome kept in
    /// memory until the store takes it) from one whose owner is gone. `None` (the default): the
    /// owner of an expired lease is taken for gone.
    fn owner_prefix(&self) -> Option<String> {
        None
    }
    /// Claims the oldest claimable task for `owner` with a lease of `lease`: a queued one, or a
    /// running one whose lease expired and whose owner is gone (taken over: a new attempt). A
    /// running task whose lease expired with no retries left, its owner gone, ends failed
    /// instead. A lease that expired while its owner is alive (see
    /// [`owner_prefix`](Self::owner_prefix)) is left to it: it records the attempt's end once it
    /// reaches the store again, or its own liveness runs out. `None`: nothing to do.
    async fn claim_task(&self, owner: &str, lease: Duration) -> Result<Option<ClaimedTask>, StoreError>;
    /// Extends a lease by `lease` from now. `false`: the lease is no longer this attempt's
    /// (taken over, cancelled or ended): stop running it.
    async fn renew_task(&self, lease: &TaskLease, lease_for: Duration) -> Result<bool, StoreError>;
    /// Records the output of the leased attempt. `false`: refused (the lease is not current).
    async fn complete_task(&self, lease: &TaskLease, output: &ToolOutput) -> Result<bool, StoreError>;
    /// Records a failed attempt: queued again when `retry` and retries are left, else failed
    /// with `error`. `None`: refused (the lease is not current); else the state now.
    async fn fail_task(&self, lease: &TaskLease, error: &ToolError, retry: bool) -> Result<Option<TaskState>, StoreError>;
    /// Takes the leased attempt's task out of the queue because its tool suspended itself: the
    /// call now waits in the pending store (for resume data, under the same task id) and is
    /// queued again, with its resume data, once it has it. `false`: refused (the lease is not
    /// current). The default refuses every time: a store that cannot take a task out fails a
    /// suspended task instead.
    async fn suspend_task(&self, lease: &TaskLease) -> Result<bool, StoreError> {
        let _ = lease;
        Ok(false)
    }
    /// Cancels a queued or running task (a running one's instance learns it at its next
    /// renewal and stops). `false`: unknown or already ended.
    async fn cancel_task(&self, task_id: &str) -> Result<bool, StoreError>;
    /// One task, from any instance. `Err(Damaged)`: its row fails its checks.
    async fn get_task(&self, task_id: &str) -> Result<Option<TaskRecord>, StoreError>;
    /// Up to `limit` tasks (of `state`, or all), newest first; damaged rows are skipped (and
    /// logged).
    async fn list_tasks(&self, state: Option<TaskState>, limit: usize) -> Result<Vec<TaskRecord>, StoreError>;
    /// How many tasks are in each state.
    async fn count_tasks(&self) -> Result<TaskCounts, StoreError>;
    /// Removes the tasks that ended (completed, failed or cancelled) before `before_ms` (Unix
    /// time, ms), with their results: the store's retention. Queued and running tasks are kept.
    /// Returns how many were removed.
    async fn expire_tasks(&self, before_ms: u64) -> Result<u64, StoreError>;
}

/// The error of a task whose instances kept dying (its lease expired) with no retries left.
pub(crate) fn abandoned_error(tool_name: &str, attempts: u32, max_retries: u32) -> ToolError {
    ToolError::new(format!(
        "Background task of tool `{tool_name}` failed: the instance running attempt {attempts} stopped renewing its \
         lease (it died or lost the store) and no retries are left (max_retries = {max_retries})."
    ))
}

/// The error of a cancelled task.
pub(crate) fn cancelled_error() -> ToolError {
    ToolError::with_kind(crate::error::ErrorKind::Aborted, "The background task was cancelled.")
}

/// The error of a task whose row failed its checks: it is never run.
#[cfg(any(feature = "sqlite", feature = "postgres"))]
pub(crate) fn damaged_error(reason: &str) -> ToolError {
    ToolError::new(format!("The stored background task cannot be used ({reason}); it was not run."))
}

/// What both SQL backends store and check of a task row: the JSON of its definition, its
/// tags, the JSON of how it ended.
#[cfg(any(feature = "sqlite", feature = "postgres"))]
pub(crate) mod row {
    use super::{NewTask, TaskRecord, TaskState};
    use crate::error::ToolError;
    use crate::runtime::store::checks::TAG_MISMATCH;
    use crate::runtime::store::integrity::Key;
    use crate::tool::ToolOutput;

    /// A task row as read (columns that cannot be read are `None`, and fail the checks).
    #[derive(Debug, Clone, Default)]
    pub(crate) struct TaskRow {
        pub(crate) task_id: String,
        pub(crate) tool_name: Option<String>,
        pub(crate) task_json: Option<String>,
        pub(crate) created_at_ms: Option<i64>,
        pub(crate) task_tag: Option<Vec<u8>>,
        pub(crate) max_retries: Option<i64>,
        pub(crate) state: Option<String>,
        pub(crate) attempts: Option<i64>,
        pub(crate) lease_owner: Option<String>,
        pub(crate) lease_expires_at_ms: Option<i64>,
        pub(crate) output_json: Option<String>,
        pub(crate) error_json: Option<String>,
        pub(crate) outcome_tag: Option<Vec<u8>>,
        pub(crate) updated_at_ms: Option<i64>,
    }

    /// The columns a task row is read with, in [`TaskRow`]'s order.
    pub(crate) const TASK_COLUMNS: &str = "task_id, tool_name, task_json, created_at_ms, task_tag, max_retries, state, attempts, \
         lease_owner, lease_expires_at_ms, output_json, error_json, outcome_tag, updated_at_ms";

    fn refs(fields: &[Option<Vec<u8>>]) -> Vec<Option<&[u8]>> {
        fields.iter().map(|f| f.as_deref()).collect()
    }

    /// What the task tag covers: what runs (written once, by `enqueue`).
    fn task_fields(
        id: &str,
        tool: Option<&str>,
        json: Option<&str>,
        created: Option<i64>,
        max_retries: Option<i64>,
    ) -> Vec<Option<Vec<u8>>> {
        let n = |v: Option<i64>| v.map(|v| v.to_string().into_bytes());
        vec![
            Some(b"task v1".to_vec()),
            Some(id.as_bytes().to_vec()),
            tool.map(|t| t.as_bytes().to_vec()),
            json.map(|t| t.as_bytes().to_vec()),
            n(created),
            n(max_retries),
        ]
    }

    /// What the outcome tag covers: how it ended (written by the one final transition).
    fn outcome_fields(id: &str, state: &str, output: Option<&str>, error: Option<&str>) -> Vec<Option<Vec<u8>>> {
        vec![
            Some(b"task outcome v1".to_vec()),
            Some(id.as_bytes().to_vec()),
            Some(state.as_bytes().to_vec()),
            output.map(|t| t.as_bytes().to_vec()),
            error.map(|t| t.as_bytes().to_vec()),
        ]
    }

    /// The columns of a task to enqueue: its JSON and its tag.
    pub(crate) fn encode(task: &NewTask, key: &Key) -> Result<(String, Vec<u8>), String> {
        let json = serde_json::to_string(task).map_err(|e| format!("cannot encode task `{}` ({:?})", task.task_id, e.classify()))?;
        let fields = task_fields(
            &task.task_id,
            Some(&task.tool_name),
            Some(&json),
            Some(i64::try_from(task.created_at_ms).unwrap_or(i64::MAX)),
            Some(i64::from(task.max_retries)),
        );
        let tag = key.tag(&refs(&fields));
        Ok((json, tag))
    }

    /// The columns of a final transition: the output's or error's JSON and the outcome tag.
    pub(crate) fn outcome(
        id: &str,
        state: TaskState,
        output: Option<&ToolOutput>,
        error: Option<&ToolError>,
        key: &Key,
    ) -> (Option<String>, Option<String>, Vec<u8>) {
        let output = output.and_then(|o| serde_json::to_string(o).ok());
        let error = error.and_then(|e| serde_json::to_string(e).ok());
        let tag = key.tag(&refs(&outcome_fields(id, state.as_str(), output.as_deref(), error.as_deref())));
        (output, error, tag)
    }

    impl TaskRow {
        /// The lease `owner` holds on this row just claimed: its attempt is the row's count.
        pub(crate) fn lease(&self, owner: &str) -> super::TaskLease {
            super::TaskLease {
                task_id: self.task_id.clone(),
                owner: owner.to_owned(),
                attempt: self.attempts.and_then(|a| u32::try_from(a).ok()).unwrap_or(0),
            }
        }

        /// What the task runs, checked against its tag and its own columns.
        pub(crate) fn task(&self, key: &Key) -> Result<NewTask, String> {
            let fields = task_fields(
                &self.task_id,
                self.tool_name.as_deref(),
                self.task_json.as_deref(),
                self.created_at_ms,
                self.max_retries,
            );
            match &self.task_tag {
                None => return Err("it has no integrity tag (it was written outside toolsmith)".into()),
                Some(tag) if !key.verify(&refs(&fields), tag) => return Err(TAG_MISMATCH.into()),
                Some(_) => {}
            }
            let json = self.task_json.as_deref().ok_or("its task is not text")?;
            let task: NewTask =
                serde_json::from_str(json).map_err(|e| format!("its task has unreadable JSON ({:?} error)", e.classify()))?;
            let agrees = task.task_id == self.task_id
                && Some(task.tool_name.as_str()) == self.tool_name.as_deref()
                && Some(i64::from(task.max_retries)) == self.max_retries;
            if !agrees {
                return Err("its columns disagree with the task they store".into());
            }
            Ok(task)
        }

        /// A listed row's record, or `None` (logged) when it fails its checks.
        pub(crate) fn listed(&self, key: &Key) -> Option<TaskRecord> {
            match self.record(key) {
                Ok(record) => Some(record),
                Err(reason) => {
                    tracing::warn!(task_id = %self.task_id, %reason, "skipping a damaged background task");
                    None
                }
            }
        }

        /// The whole record, checked (an ended task's outcome against its tag).
        pub(crate) fn record(&self, key: &Key) -> Result<TaskRecord, String> {
            let task = self.task(key)?;
            let state = self
                .state
                .as_deref()
                .and_then(TaskState::parse)
                .ok_or("its state is not one toolsmith writes")?;
            if state.is_final() {
                let fields = outcome_fields(
                    &self.task_id,
                    state.as_str(),
                    self.output_json.as_deref(),
                    self.error_json.as_deref(),
                );
                if !self.outcome_tag.as_deref().is_some_and(|tag| key.verify(&refs(&fields), tag)) {
                    return Err(TAG_MISMATCH.into());
                }
            }
            let output = match &self.output_json {
                Some(json) => Some(serde_json::from_str(json).map_err(|_| "its output is unreadable JSON")?),
                None => None,
            };
            let error = match &self.error_json {
                Some(json) => Some(serde_json::from_str(json).map_err(|_| "its error is unreadable JSON")?),
                None => None,
            };
            let unsigned = |v: Option<i64>| v.and_then(|v| u64::try_from(v).ok());
            Ok(TaskRecord {
                task,
                state,
                attempts: self.attempts.and_then(|a| u32::try_from(a).ok()).unwrap_or(0),
                lease_owner: self.lease_owner.clone(),
                lease_expires_at_ms: unsigned(self.lease_expires_at_ms),
                output,
                error,
                updated_at_ms: unsigned(self.updated_at_ms).unwrap_or(0),
            })
        }
    }
}
