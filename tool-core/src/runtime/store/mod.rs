//! Where what a call leaves behind is kept: the store trait and its backends.
//!
//! Owns [`PendingStore`] (async, object-safe: the runtime holds an `Arc<dyn PendingStore>`),
//! [`StoreError`], and the backends: [`MemoryStore`] (`memory`), the SQLite file (`sqlite`,
//! feature `sqlite`) and PostgreSQL (`postgres`, feature `postgres`), which share the integrity
//! tags of `integrity`; [`open_store`] picks one from a `--store` value. What a waiting call *is*
//! is `pending`'s; its states are `state`'s. Nothing here runs tools: the runtime claims a call,
//! runs it and removes it.
//!
//! # The shape of the trait, and how it grows
//!
//! [`PendingStore`] covers the calls that wait for a person (approvals and suspensions) and
//! their lifecycle: `save` → waiting, `claim` → running (exactly one claimer wins, across
//! processes and hosts), `release` → waiting again (nothing ran), `remove` → gone;
//! `claim_again` takes an interrupted call on an explicit decision. Every method is async and
//! must not block a Tokio worker: a backend with a blocking driver (SQLite) runs its work on the
//! blocking pool. Further kinds of record (receipts, background tasks and their attempts,
//! results kept for later retrieval, the audit trail: [`ReceiptStore`], [`TaskStore`],
//! [`ResultStore`], [`AuditStore`]) are
//! their own traits beside this one, implemented by the same backends over the same
//! connection or pool (so a deployment configures one store) rather than by widening this one.

mod audit;
#[cfg(any(feature = "sqlite", feature = "postgres"))]
mod checks;
#[cfg(any(feature = "sqlite", feature = "postgres"))]
mod integrity;
mod memory;
mod memory_tasks;
#[cfg(feature = "postgres")]
mod postgres;
mod receipts;
mod results;
#[cfg(feature = "sqlite")]
mod sqlite;
mod tasks;

#[cfg(feature = "sqlite")]
pub(crate) use integrity::Key;
#[cfg(feature = "sqlite")]
pub(crate) use sqlite::key_file::load as sqlite_key;

use std::sync::Arc;

use super::bus::Bus;
use super::pending::PendingCall;
use super::state::{CallState, Claim, Interruption, StoredCall};

#[cfg(any(feature = "sqlite", feature = "postgres"))]
pub(crate) use audit::DbRow as AuditRow;
pub use audit::{AuditStore, MemoryAudit};
pub use memory::MemoryStore;
#[cfg(feature = "postgres")]
#[cfg_attr(docsrs, doc(cfg(feature = "postgres")))]
pub use postgres::{Migrated, PostgresCredentials, PostgresOptions, PostgresPins, PostgresStore};
pub use receipts::{Began, MemoryReceipts, ReceiptClaim, ReceiptCounts, ReceiptEntry, ReceiptState, ReceiptStore};
pub use results::{KeptResult, MemoryResults, ResultError, ResultLimits, ResultStore};
#[cfg(feature = "sqlite")]
#[cfg_attr(docsrs, doc(cfg(feature = "sqlite")))]
pub use sqlite::SqliteStore;
#[cfg(feature = "sqlite")]
pub(crate) use sqlite::create_private_file;
pub use tasks::{ClaimedTask, NewTask, TaskCounts, TaskLease, TaskRecord, TaskState, TaskStore};

/// The environment variable that gives the integrity key of stored rows (its bytes; use 32 or
/// more random characters). Every instance sharing one PostgreSQL database must be given the
/// same key; the SQLite store falls back to a key file next to its database.
#[cfg(any(feature = "sqlite", feature = "postgres"))]
#[cfg_attr(docsrs, doc(cfg(any(feature = "sqlite", feature = "postgres"))))]
pub const STORE_KEY_ENV: &str = integrity::KEY_ENV;

/// Why a store could not do what was asked.
#[derive(Debug, thiserror::Error)]
pub enum StoreError {
    /// Another live process (or task) is already continuing this call.
    #[error("call `{0}` is already being continued by another process; wait for its result")]
    Busy(String),
    /// The process that was running the call died before it finished: it may have had its
    /// effect, so it is not run again without an explicit decision.
    #[error("{0}")]
    Interrupted(Box<Interruption>),
    /// The stored row cannot be used (unreadable, edited outside toolsmith, unknown state);
    /// nothing ran.
    #[error("call `{id}` cannot be used: {reason}; it was not run")]
    Damaged {
        /// The row's id.
        id: String,
        /// What is wrong with it (never the stored text).
        reason: String,
    },
    /// The storage itself failed (unreachable, refused, a schema newer than this build).
    /// `message` says what was being done and why it failed, in words a person reads (the
    /// driver's own message included); `source` is the driver's error itself (SQLite's,
    /// PostgreSQL's, the file system's), when one caused it, for code that matches on it.
    #[error("the {part} failed: {message}")]
    Storage {
        /// Which of the store's records failed (the pending calls, the tasks, the receipts…).
        part: StorePart,
        /// What failed, and why.
        message: String,
        /// The error that caused it.
        #[source]
        source: Option<Box<dyn std::error::Error + Send + Sync>>,
    },
}

impl StoreError {
    /// A failure of the store as a whole ([`StorePart::Store`]), with no underlying error of its own.
    pub fn storage(message: impl Into<String>) -> Self {
        Self::storage_of(StorePart::Store, message)
    }

    /// A failure of the store's `part`, with no underlying error of its own.
    pub fn storage_of(part: StorePart, message: impl Into<String>) -> Self {
        StoreError::Storage {
            part,
            message: message.into(),
            source: None,
        }
    }

    /// A failure of the store's `part` caused by `source` (the driver's error, kept for
    /// [`std::error::Error::source`]).
    pub fn storage_caused_by(part: StorePart, message: impl Into<String>, source: impl std::error::Error + Send + Sync + 'static) -> Self {
        StoreError::Storage {
            part,
            message: message.into(),
            source: Some(Box::new(source)),
        }
    }

    /// Which part of the store failed, for a storage failure.
    pub fn part(&self) -> Option<StorePart> {
        match self {
            StoreError::Storage { part, .. } => Some(*part),
            _ => None,
        }
    }
}

/// The part of a store a [`StoreError::Storage`] concerns: the error names it ("the task store
/// failed: …"), so an operator reading it knows which records were affected, not only that the
/// database was.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum StorePart {
    /// The store as a whole: opening it, its schema and migrations, its integrity key.
    Store,
    /// The calls waiting for a person (approvals, suspensions) and their claims.
    Calls,
    /// Background tasks, their attempts and leases.
    Tasks,
    /// The receipts of idempotent tools.
    Receipts,
    /// Results kept for later retrieval (cut MCP results).
    Results,
    /// The audit trail.
    Audit,
    /// The bus between the instances sharing the store, and their leases.
    Bus,
    /// The pins of remote tools.
    Pins,
}

impl std::fmt::Display for StorePart {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(match self {
            StorePart::Store => "store",
            StorePart::Calls => "pending-call store",
            StorePart::Tasks => "task store",
            StorePart::Receipts => "receipt store",
            StorePart::Results => "kept-result store",
            StorePart::Audit => "audit trail",
            StorePart::Bus => "bus between instances",
            StorePart::Pins => "pin store",
        })
    }
}

/// Where pending calls are kept. Every method is durable before it returns: a call that
/// [`save`](PendingStore::save) accepted survives the process being killed right after.
///
/// A call is *waiting* after `save`; [`claim`](PendingStore::claim) moves it to *running* for
/// the caller (exactly one claimer wins, however many processes share the store);
/// [`release`](PendingStore::release) puts it back to waiting (the resume data was refused,
/// nothing ran); [`remove`](PendingStore::remove) ends it. A call whose claimer died is
/// *interrupted* (the SQLite store checks whether the claiming process is alive, PostgreSQL
/// whether the claiming instance still renews its lease): it is never lost, and never claimed
/// again by `claim`, only by [`claim_again`](PendingStore::claim_again), an explicit decision
/// to run it once more (see `CallState`). A row that fails its checks is *damaged*: refused by
/// `claim` and `get`, skipped by `list`, shown by `entries`.
///
/// The methods are async and must not block the calling Tokio worker.
///
/// ```
/// use tool_core::runtime::MemoryStore;
/// use tool_core::runtime::backend::PendingStore;
///
/// # tokio::runtime::Runtime::new().unwrap().block_on(async {
/// let store = MemoryStore::new();
/// assert!(store.claim("call_unknown").await.unwrap().is_none(), "an unknown id is refused");
/// assert!(store.list().await.unwrap().is_empty());
/// # });
/// ```
#[async_trait::async_trait]
pub trait PendingStore: Send + Sync + 'static {
    /// Inserts or replaces a waiting call.
    async fn save(&self, call: &PendingCall) -> Result<(), StoreError>;
    /// Takes a waiting call for running it. `Ok(None)`: no such call (unknown, or already
    /// resolved). `Err(Busy)`: another live process holds it. `Err(Interrupted)`: the process
    /// that ran it died (see [`claim_again`](PendingStore::claim_again)). `Err(Damaged)`: the
    /// row cannot be used.
    async fn claim(&self, tool_call_id: &str) -> Result<Option<PendingCall>, StoreError>;
    /// [`claim`](PendingStore::claim), also taking an interrupted call: the caller decided to
    /// run it again (or to decline it). A store that cannot tell interrupted calls apart
    /// claims as `claim` does.
    async fn claim_again(&self, tool_call_id: &str) -> Result<Option<PendingCall>, StoreError> {
        self.claim(tool_call_id).await
    }
    /// Puts a claimed call back to waiting.
    async fn release(&self, tool_call_id: &str) -> Result<(), StoreError>;
    /// Forgets a call (it was resolved).
    async fn remove(&self, tool_call_id: &str) -> Result<(), StoreError>;
    /// Forgets a call only while it is still running under exactly `claim` of this process's
    /// (the claim this process took when it continued the call): a record saved since (a new
    /// waiting call under the same id, as a tool that suspends itself again leaves), a call put
    /// back to waiting, given up or claimed again is left as it is. `Ok(false)`: nothing was
    /// removed (also for an unknown id).
    ///
    /// The runtime removes a continued call this way once it has handed the call to something
    /// that may store it again on another thread (a durable background task). The default
    /// keeps what a store without claims can do: it calls [`remove`](PendingStore::remove) and
    /// answers `Ok(true)`; a store whose calls can be claimed should check the claim and remove
    /// in one step (the built-in stores do).
    async fn remove_claimed(&self, tool_call_id: &str, claim: &Claim) -> Result<bool, StoreError> {
        let _ = claim;
        self.remove(tool_call_id).await?;
        Ok(true)
    }
    /// Where one call is in its life (`Ok(None)`: unknown; `Err(Damaged)`: the row cannot be
    /// used). The default looks it up in [`entries`](PendingStore::entries); the built-in stores
    /// read the one row.
    async fn state(&self, tool_call_id: &str) -> Result<Option<CallState>, StoreError> {
        for entry in self.entries().await? {
            match entry {
                StoredCall::Call { call, state } if call.tool_call_id == tool_call_id => return Ok(Some(state)),
                StoredCall::Damaged {
                    tool_call_id: id, reason, ..
                } if id == tool_call_id => return Err(StoreError::Damaged { id, reason }),
                _ => {}
            }
        }
        Ok(None)
    }
    /// One call, waiting, running or interrupted.
    async fn get(&self, tool_call_id: &str) -> Result<Option<PendingCall>, StoreError>;
    /// Every intact call, waiting, running or interrupted, oldest first (damaged rows are
    /// skipped; [`entries`](PendingStore::entries) shows them).
    async fn list(&self) -> Result<Vec<PendingCall>, StoreError> {
        let entries = self.entries().await?.into_iter();
        Ok(entries
            .filter_map(|e| match e {
                StoredCall::Call { call, .. } => Some(*call),
                StoredCall::Damaged { .. } => None,
            })
            .collect())
    }
    /// Every row with its state, oldest first, damaged rows included.
    async fn entries(&self) -> Result<Vec<StoredCall>, StoreError>;
    /// The receipts kept beside the calls (same file or database), for tools declared
    /// `idempotent`; `None`: the store keeps none (the runtime keeps them in memory).
    fn receipts(&self) -> Option<Arc<dyn ReceiptStore>> {
        None
    }
    /// The full results of cut calls kept beside the calls (same file or database), within
    /// `limits`: every instance sharing the store reads every instance's results. `None`: the
    /// store keeps none (the MCP server keeps them in its memory, [`MemoryResults`]).
    fn results(&self, limits: ResultLimits) -> Option<Arc<dyn ResultStore>> {
        let _ = limits;
        None
    }
    /// The bus between the instances sharing this store (`None`: the store is one process's,
    /// see [`Bus`]). Started on first use.
    fn bus(&self) -> Option<Arc<dyn Bus>> {
        None
    }
    /// The audit trail kept beside the calls (same file, database or memory): every decision,
    /// appended (see `runtime::audit`). `None`: the store keeps none (the runtime keeps the
    /// rows in its memory).
    fn audit(&self) -> Option<Arc<dyn AuditStore>> {
        None
    }
    /// Gives up this process's claim `claim` on a call that nothing in this process works on
    /// any more (the runtime's reconciler found it: a claim whose follow-up writes were refused
    /// for good): the call then reads *interrupted*, as if its process had died, so it runs
    /// again only on an explicit decision (or on its own for a tool declared idempotent) instead
    /// of being refused as "being continued by another process" for as long as this process
    /// lives. `Ok(false)`: the call is not running under exactly that claim of this process's
    /// (another process's or instance's, taken or given back since, or a store whose calls end
    /// with their process, as in memory).
    async fn abandon(&self, tool_call_id: &str, claim: &Claim) -> Result<bool, StoreError> {
        let _ = (tool_call_id, claim);
        Ok(false)
    }
    /// Which backend this is, as `/healthz` shows it: `"memory"`, `"sqlite"`, `"postgres"`, or
    /// another implementation's own name (never where it is).
    fn backend(&self) -> &'static str {
        "custom"
    }
    /// Removes what is older than `retention`: waiting and interrupted calls created before
    /// then (never run: they are listed as expired in the answer), and the store's other
    /// leftovers. A call a live process is running is kept.
    async fn expire(&self, retention: std::time::Duration) -> Result<Vec<PendingCall>, StoreError> {
        let cutoff = now_ms().saturating_sub(u64::try_from(retention.as_millis()).unwrap_or(u64::MAX));
        let mut expired = Vec::new();
        for entry in self.entries().await? {
            let StoredCall::Call { call, state } = entry else { continue };
            if call.created_at_ms < cutoff && !matches!(state, CallState::Running(_)) {
                self.remove(&call.tool_call_id).await?;
                expired.push(*call);
            }
        }
        Ok(expired)
    }
}

fn now_ms() -> u64 {
    let since_epoch = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap_or_default();
    u64::try_from(since_epoch.as_millis()).unwrap_or(u64::MAX)
}

/// A store shared by reference counting is a store.
#[async_trait::async_trait]
impl<S: PendingStore + ?Sized> PendingStore for Arc<S> {
    async fn save(&self, call: &PendingCall) -> Result<(), StoreError> {
        (**self).save(call).await
    }
    async fn claim(&self, id: &str) -> Result<Option<PendingCall>, StoreError> {
        (**self).claim(id).await
    }
    async fn claim_again(&self, id: &str) -> Result<Option<PendingCall>, StoreError> {
        (**self).claim_again(id).await
    }
    async fn release(&self, id: &str) -> Result<(), StoreError> {
        (**self).release(id).await
    }
    async fn remove(&self, id: &str) -> Result<(), StoreError> {
        (**self).remove(id).await
    }
    async fn get(&self, id: &str) -> Result<Option<PendingCall>, StoreError> {
        (**self).get(id).await
    }
    async fn list(&self) -> Result<Vec<PendingCall>, StoreError> {
        (**self).list().await
    }
    async fn entries(&self) -> Result<Vec<StoredCall>, StoreError> {
        (**self).entries().await
    }
    fn receipts(&self) -> Option<Arc<dyn ReceiptStore>> {
        (**self).receipts()
    }
    fn results(&self, limits: ResultLimits) -> Option<Arc<dyn ResultStore>> {
        (**self).results(limits)
    }
    fn bus(&self) -> Option<Arc<dyn Bus>> {
        (**self).bus()
    }
    fn audit(&self) -> Option<Arc<dyn AuditStore>> {
        (**self).audit()
    }
    fn backend(&self) -> &'static str {
        (**self).backend()
    }
    async fn abandon(&self, tool_call_id: &str, claim: &Claim) -> Result<bool, StoreError> {
        (**self).abandon(tool_call_id, claim).await
    }
    async fn remove_claimed(&self, tool_call_id: &str, claim: &Claim) -> Result<bool, StoreError> {
        (**self).remove_claimed(tool_call_id, claim).await
    }
    async fn state(&self, tool_call_id: &str) -> Result<Option<CallState>, StoreError> {
        (**self).state(tool_call_id).await
    }
    async fn expire(&self, retention: std::time::Duration) -> Result<Vec<PendingCall>, StoreError> {
        (**self).expire(retention).await
    }
}

/// A task store shared by reference counting is a task store.
#[async_trait::async_trait]
impl<S: TaskStore + ?Sized> TaskStore for Arc<S> {
    async fn enqueue_task(&self, task: &NewTask) -> Result<(), StoreError> {
        (**self).enqueue_task(task).await
    }
    fn owner_prefix(&self) -> Option<String> {
        (**self).owner_prefix()
    }
    async fn enqueue_ended_task(&self, task: &NewTask, state: TaskState, error: &crate::error::ToolError) -> Result<(), StoreError> {
        (**self).enqueue_ended_task(task, state, error).await
    }
    async fn claim_task(&self, owner: &str, lease: std::time::Duration) -> Result<Option<ClaimedTask>, StoreError> {
        (**self).claim_task(owner, lease).await
    }
    async fn renew_task(&self, lease: &TaskLease, lease_for: std::time::Duration) -> Result<bool, StoreError> {
        (**self).renew_task(lease, lease_for).await
    }
    async fn complete_task(&self, lease: &TaskLease, output: &crate::tool::ToolOutput) -> Result<bool, StoreError> {
        (**self).complete_task(lease, output).await
    }
    async fn fail_task(&self, lease: &TaskLease, error: &crate::error::ToolError, retry: bool) -> Result<Option<TaskState>, StoreError> {
        (**self).fail_task(lease, error, retry).await
    }
    async fn suspend_task(&self, lease: &TaskLease) -> Result<bool, StoreError> {
        (**self).suspend_task(lease).await
    }
    async fn cancel_task(&self, task_id: &str) -> Result<bool, StoreError> {
        (**self).cancel_task(task_id).await
    }
    async fn get_task(&self, task_id: &str) -> Result<Option<TaskRecord>, StoreError> {
        (**self).get_task(task_id).await
    }
    async fn list_tasks(&self, state: Option<TaskState>, limit: usize) -> Result<Vec<TaskRecord>, StoreError> {
        (**self).list_tasks(state, limit).await
    }
    async fn count_tasks(&self) -> Result<TaskCounts, StoreError> {
        (**self).count_tasks().await
    }
    async fn expire_tasks(&self, before_ms: u64) -> Result<u64, StoreError> {
        (**self).expire_tasks(before_ms).await
    }
}

/// One store opened from a `--store` value, as both of its faces: the waiting calls and the
/// background-task queue (the same file or pool).
#[derive(Clone)]
pub struct OpenedStore {
    /// The waiting calls.
    pub pending: Arc<dyn PendingStore>,
    /// The background tasks.
    pub tasks: Arc<dyn TaskStore>,
}

impl std::fmt::Debug for OpenedStore {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("OpenedStore").finish_non_exhaustive()
    }
}

/// What a store holds, by state (`toolsmith store status`).
#[derive(Debug, Clone, Default, PartialEq)]
pub struct StoreStatus {
    /// Calls waiting for approval or resume data.
    pub waiting: usize,
    /// Calls a live process is running.
    pub running: usize,
    /// Calls whose process died mid-run.
    pub interrupted: usize,
    /// Rows that cannot be used.
    pub damaged: usize,
    /// The call that has waited longest.
    pub oldest_waiting: Option<PendingCall>,
}

impl StoreStatus {
    /// Counts the rows of a listing (see [`PendingStore::entries`]).
    pub fn of(entries: &[StoredCall]) -> StoreStatus {
        let mut status = StoreStatus::default();
        for entry in entries {
            match entry {
                StoredCall::Damaged { .. } => status.damaged += 1,
                StoredCall::Call {
                    state: CallState::Running(_),
                    ..
                } => status.running += 1,
                StoredCall::Call {
                    state: CallState::Interrupted(_),
                    ..
                } => status.interrupted += 1,
                StoredCall::Call {
                    call,
                    state: CallState::Waiting,
                } => {
                    status.waiting += 1;
                    let older = |o: &PendingCall| (call.created_at_ms, &call.tool_call_id) < (o.created_at_ms, &o.tool_call_id);
                    if status.oldest_waiting.as_ref().is_none_or(older) {
                        status.oldest_waiting = Some((**call).clone());
                    }
                }
            }
        }
        status
    }
}

/// Sorts listed rows oldest first (a damaged row, whose age is unknown, first), ties by id.
pub(crate) fn sort_oldest_first(entries: &mut [StoredCall]) {
    entries.sort_by_key(|e| match e {
        StoredCall::Call { call, .. } => (call.created_at_ms, call.tool_call_id.clone()),
        StoredCall::Damaged { tool_call_id, .. } => (0, tool_call_id.clone()),
    });
}

/// The error of a claim that found the call interrupted.
#[cfg(any(feature = "sqlite", feature = "postgres"))]
pub(crate) fn interrupted(call: PendingCall, state: CallState) -> StoreError {
    let claim = state.claim().copied().unwrap_or_default();
    StoreError::Interrupted(Box::new(Interruption {
        tool_call_id: call.tool_call_id,
        tool_name: call.tool_name,
        claim,
    }))
}

/// Where a store lives, as `--store` names it: `postgres://…` (or `postgresql://…`) is a
/// PostgreSQL database, `sqlite:PATH` or any other text a SQLite file.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum StoreLocation {
    /// A SQLite file.
    Sqlite(std::path::PathBuf),
    /// A PostgreSQL connection URL.
    Postgres(String),
}

impl StoreLocation {
    /// Reads a `--store` value.
    ///
    /// ```
    /// use tool_core::runtime::StoreLocation;
    ///
    /// assert_eq!(StoreLocation::parse("sqlite:/tmp/p.db"), StoreLocation::Sqlite("/tmp/p.db".into()));
    /// assert_eq!(StoreLocation::parse("p.db"), StoreLocation::Sqlite("p.db".into()));
    /// assert!(matches!(StoreLocation::parse("postgres://db/toolsmith"), StoreLocation::Postgres(_)));
    /// ```
    pub fn parse(text: &str) -> StoreLocation {
        if text.starts_with("postgres://") || text.starts_with("postgresql://") {
            return StoreLocation::Postgres(text.to_owned());
        }
        let path = text
            .strip_prefix("sqlite://")
            .or_else(|| text.strip_prefix("sqlite:"))
            .unwrap_or(text);
        StoreLocation::Sqlite(path.into())
    }

    /// The location as shown in messages (a URL's password hidden).
    pub fn shown(&self) -> String {
        match self {
            StoreLocation::Sqlite(path) => path.display().to_string(),
            StoreLocation::Postgres(url) => hide_password(url),
        }
    }
}

/// A connection URL with its password replaced by `***`.
pub(crate) fn hide_password(url: &str) -> String {
    let Some((scheme, rest)) = url.split_once("://") else {
        return url.to_owned();
    };
    let (authority, tail) = rest.split_at(rest.find('/').unwrap_or(rest.len()));
    match authority.rsplit_once('@') {
        Some((user, host)) if user.contains(':') => {
            let name = user.split(':').next().unwrap_or_default();
            format!("{scheme}://{name}:***@{host}{tail}")
        }
        _ => url.to_owned(),
    }
}

/// Opens the store at `location`: a SQLite file (opened on the blocking pool) or a PostgreSQL
/// database (connected, its schema migrated; the integrity key from [`STORE_KEY_ENV`]).
#[cfg(any(feature = "sqlite", feature = "postgres"))]
#[cfg_attr(docsrs, doc(cfg(any(feature = "sqlite", feature = "postgres"))))]
pub async fn open_store(location: &StoreLocation) -> Result<Arc<dyn PendingStore>, StoreError> {
    Ok(open_stores(location).await?.pending)
}

/// [`open_store`], as both of the store's faces: its waiting calls and its background tasks.
#[cfg(any(feature = "sqlite", feature = "postgres"))]
#[cfg_attr(docsrs, doc(cfg(any(feature = "sqlite", feature = "postgres"))))]
pub async fn open_stores(location: &StoreLocation) -> Result<OpenedStore, StoreError> {
    fn both<S: PendingStore + TaskStore>(store: Arc<S>) -> OpenedStore {
        OpenedStore {
            pending: store.clone(),
            tasks: store,
        }
    }
    match location {
        #[cfg(feature = "sqlite")]
        StoreLocation::Sqlite(path) => {
            let path = path.clone();
            let opened = tokio::task::spawn_blocking(move || SqliteStore::open(path)).await;
            Ok(both(Arc::new(
                opened.map_err(|e| StoreError::storage(format!("opening the store failed: {e}")))??,
            )))
        }
        #[cfg(feature = "postgres")]
        StoreLocation::Postgres(url) => Ok(both(Arc::new(PostgresStore::connect(url).await?))),
        #[allow(unreachable_patterns)]
        other => Err(StoreError::storage(format!(
            "{} needs a store this build does not have (enable the tool-core feature `sqlite` or `postgres`)",
            other.shown()
        ))),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn passwords_are_hidden() {
        assert_eq!(hide_password("postgres://u:secret@h:5432/db"), "postgres://u:***@h:5432/db");
        assert_eq!(hide_password("postgres://u@h/db"), "postgres://u@h/db");
        assert_eq!(hide_password("postgres://h/db?x=@"), "postgres://h/db?x=@");
    }
}
