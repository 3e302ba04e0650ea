//! Receipts: what makes a tool declared `idempotent` run once per idempotency key.
//!
//! Owns [`ReceiptStore`] (beside [`PendingStore`](super::PendingStore), implemented by the same
//! backends over the same file or database), what claiming a key answers ([`Began`]), the
//! claim's description ([`ReceiptClaim`]) and the in-memory backend ([`MemoryReceipts`]).
//! Running a tool over a receipt is the runtime's `once`.
//!
//! # A receipt's life
//!
//! ```text
//! begin ──► running (owner, time) ──finish──► done (the result; answers every later begin)
//!              │  ├──release──► (gone: the body said it failed, or suspended; nothing happened)
//!              │  └──interrupt─► interrupted (cut short: panic, timeout, cancellation)
//!              └── its owner died ─► interrupted
//! interrupted ──begin(take_over)──► running   (only for `idempotent = "recover"`; one taker wins)
//! ```
//!
//! A store never keeps the key itself: rows are found by a one-way digest of it. Database rows
//! carry an integrity tag over every column (the store's key, as pending calls do) and are
//! refused when it does not match; the recorded result is kept as the rest of the store is
//! (the SQLite file readable by its owner only).

use std::collections::HashMap;
use std::sync::Mutex;

use serde_json::Value;

use super::StoreError;
use crate::runtime::state::Claim;

/// What a run asks for when it claims a key.
#[derive(Clone, PartialEq, Eq)]
pub struct ReceiptClaim {
    /// The idempotency key (never stored: stores keep its digest).
    pub key: String,
    /// The tool.
    pub tool_name: String,
    /// A digest of the validated arguments: a key used again with other arguments is refused.
    pub args_digest: String,
}

impl std::fmt::Debug for ReceiptClaim {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ReceiptClaim")
            .field("key", &"<hidden>")
            .field("tool_name", &self.tool_name)
            .finish_non_exhaustive()
    }
}

/// What claiming a key answers.
#[derive(Debug, Clone, PartialEq)]
pub enum Began {
    /// The key is this run's: run the body. `Some`: it took over the claim of an interrupted
    /// run (only when asked to take over).
    Run(Option<Claim>),
    /// A run of this key finished: its recorded result (the output as JSON).
    Done(Value),
    /// A live run holds the key.
    Busy(Claim),
    /// A run holding the key was interrupted before its result was recorded (not taken over).
    Interrupted(Claim),
    /// The key was used by a call of another tool, or with other arguments.
    Mismatch,
}

/// A receipt as listed: its key's digest, its tool, its state and since when; never the key,
/// never the recorded result.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ReceiptEntry {
    /// The digest of its idempotency key (what stores keep; [`key_digest`](crate::idempotency::key_digest)).
    pub key_digest: String,
    /// The tool whose run it records (`?` when the row cannot say).
    pub tool_name: String,
    /// Where it is.
    pub state: ReceiptState,
    /// When it was claimed (running, interrupted) or finished (done), in milliseconds since the
    /// Unix epoch, when known.
    pub since_ms: Option<u64>,
}

/// Where a listed receipt is.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ReceiptState {
    /// A live run holds the key.
    Running,
    /// A run holding the key was cut short before its result was recorded: its effect may
    /// have happened; clearing the receipt lets the call run once more.
    Interrupted,
    /// The result is recorded: later runs of the key answer with it.
    Done,
    /// The row fails its checks (edited outside toolsmith, unreadable), and why.
    Damaged(String),
}

impl ReceiptState {
    /// Its name: `running`, `interrupted`, `done`, `damaged`.
    pub fn as_str(&self) -> &'static str {
        match self {
            ReceiptState::Running => "running",
            ReceiptState::Interrupted => "interrupted",
            ReceiptState::Done => "done",
            ReceiptState::Damaged(_) => "damaged",
        }
    }
}

/// How many receipts are in each state (`toolsmith store status`).
///
/// ```
/// use tool_core::runtime::backend::{ReceiptCounts, ReceiptEntry, ReceiptState};
///
/// let entry = |state| ReceiptEntry { key_digest: "d".into(), tool_name: "t".into(), state, since_ms: None };
/// let counts = ReceiptCounts::of(&[entry(ReceiptState::Done), entry(ReceiptState::Done), entry(ReceiptState::Running)]);
/// assert_eq!((counts.running, counts.done, counts.interrupted), (1, 2, 0));
/// ```
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, serde::Serialize)]
pub struct ReceiptCounts {
    /// Held by a live run.
    pub running: u64,
    /// Cut short before their result was recorded (waiting for a decision).
    pub interrupted: u64,
    /// Their result recorded.
    pub done: u64,
    /// Failing their checks.
    pub damaged: u64,
}

impl ReceiptCounts {
    /// Counts a listing (see [`ReceiptStore::list`]).
    pub fn of(entries: &[ReceiptEntry]) -> ReceiptCounts {
        let mut counts = ReceiptCounts::default();
        for entry in entries {
            *match entry.state {
                ReceiptState::Running => &mut counts.running,
                ReceiptState::Interrupted => &mut counts.interrupted,
                ReceiptState::Done => &mut counts.done,
                ReceiptState::Damaged(_) => &mut counts.damaged,
            } += 1;
        }
        counts
    }
}

/// Where receipts are kept. Every method is durable before it returns.
///
/// `begin` is atomic across every process sharing the store: of concurrent runs claiming one
/// key exactly one gets [`Began::Run`]; the others see [`Began::Busy`] (or the result, once
/// recorded). `finish`, `release` and `interrupt` change only a receipt this process holds.
///
/// ```
/// use tool_core::runtime::backend::{Began, MemoryReceipts, ReceiptClaim, ReceiptStore};
///
/// # tokio::runtime::Runtime::new().unwrap().block_on(async {
/// let store = MemoryReceipts::default();
/// let claim = ReceiptClaim { key: "k".into(), tool_name: "send".into(), args_digest: "a".into() };
/// assert_eq!(store.begin(&claim, false).await.unwrap(), Began::Run(None));
/// assert!(matches!(store.begin(&claim, false).await.unwrap(), Began::Busy(_)));
/// store.finish("k", &serde_json::json!("sent")).await.unwrap();
/// assert_eq!(store.begin(&claim, false).await.unwrap(), Began::Done(serde_json::json!("sent")));
/// # });
/// ```
#[async_trait::async_trait]
pub trait ReceiptStore: Send + Sync + 'static {
    /// Claims `claim.key` for running; with `take_over`, also the key of an interrupted run.
    async fn begin(&self, claim: &ReceiptClaim, take_over: bool) -> Result<Began, StoreError>;
    /// Records the result of the run holding `key`.
    async fn finish(&self, key: &str, result: &Value) -> Result<(), StoreError>;
    /// Drops the claim of the run holding `key`: nothing happened (the body failed by itself,
    /// or suspended), so a later run may run the body.
    async fn release(&self, key: &str) -> Result<(), StoreError>;
    /// Marks the run holding `key` as interrupted: it was cut short and may have had its effect.
    async fn interrupt(&self, key: &str) -> Result<(), StoreError>;
    /// Forgets the receipt of `key`, whatever its state (the explicit decision, after checking
    /// an interrupted run's effect, to let the call run again). Returns whether there was one.
    async fn remove(&self, key: &str) -> Result<bool, StoreError> {
        self.remove_digest(&crate::idempotency::key_digest(key)).await
    }
    /// [`remove`](Self::remove) by the digest of the key, as [`list`](Self::list) shows it.
    async fn remove_digest(&self, key_digest: &str) -> Result<bool, StoreError>;
    /// Every receipt, oldest first (never a key or a result).
    async fn list(&self) -> Result<Vec<ReceiptEntry>, StoreError>;
    /// Removes the receipts whose result was recorded before `before_ms` (Unix time, ms): the
    /// store's retention (a later run of such a call runs its body again). Running and
    /// interrupted receipts are kept: they wait for their run or for a decision. Returns how
    /// many were removed.
    async fn expire(&self, before_ms: u64) -> Result<u64, StoreError>;
}

/// One receipt of the in-memory store.
#[derive(Debug, Clone)]
enum Entry {
    Running {
        tool: String,
        args: String,
        claim: Claim,
    },
    Interrupted {
        tool: String,
        args: String,
        claim: Claim,
    },
    Done {
        tool: String,
        args: String,
        result: Value,
        at: Option<u64>,
    },
}

/// Receipts in this process's memory: exactly once while the process lives (what a runtime
/// without a durable store gets).
#[derive(Debug, Default)]
pub struct MemoryReceipts {
    entries: Mutex<HashMap<String, Entry>>,
}

fn now_claim() -> Claim {
    let now = std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH);
    Claim {
        owner_pid: Some(std::process::id()),
        claimed_at_ms: now.ok().map(|d| d.as_millis() as u64),
    }
}

impl MemoryReceipts {
    fn entries(&self) -> std::sync::MutexGuard<'_, HashMap<String, Entry>> {
        self.entries.lock().unwrap_or_else(std::sync::PoisonError::into_inner)
    }

    fn set(&self, key: &str, change: impl FnOnce(Entry) -> Option<Entry>) {
        let mut entries = self.entries();
        if let Some(Entry::Running { .. }) = entries.get(key)
            && let Some(Some(next)) = entries.remove(key).map(change)
        {
            entries.insert(key.to_owned(), next);
        }
    }
}

#[async_trait::async_trait]
impl ReceiptStore for MemoryReceipts {
    async fn begin(&self, c: &ReceiptClaim, take_over: bool) -> Result<Began, StoreError> {
        let mut entries = self.entries();
        let fits = |tool: &str, args: &str| tool == c.tool_name && args == c.args_digest;
        let began = match entries.get(&c.key) {
            None => Began::Run(None),
            Some(Entry::Running { tool, args, .. } | Entry::Interrupted { tool, args, .. } | Entry::Done { tool, args, .. })
                if !fits(tool, args) =>
            {
                return Ok(Began::Mismatch);
            }
            Some(Entry::Done { result, .. }) => return Ok(Began::Done(result.clone())),
            Some(Entry::Running { claim, .. }) => return Ok(Began::Busy(*claim)),
            Some(Entry::Interrupted { claim, .. }) if !take_over => return Ok(Began::Interrupted(*claim)),
            Some(Entry::Interrupted { claim, .. }) => Began::Run(Some(*claim)),
        };
        let entry = Entry::Running {
            tool: c.tool_name.clone(),
            args: c.args_digest.clone(),
            claim: now_claim(),
        };
        entries.insert(c.key.clone(), entry);
        Ok(began)
    }

    async fn finish(&self, key: &str, result: &Value) -> Result<(), StoreError> {
        self.set(key, |e| match e {
            Entry::Running { tool, args, .. } => Some(Entry::Done {
                tool,
                args,
                result: result.clone(),
                at: now_claim().claimed_at_ms,
            }),
            other => Some(other),
        });
        Ok(())
    }

    async fn release(&self, key: &str) -> Result<(), StoreError> {
        self.set(key, |_| None);
        Ok(())
    }

    async fn interrupt(&self, key: &str) -> Result<(), StoreError> {
        self.set(key, |e| match e {
            Entry::Running { tool, args, claim } => Some(Entry::Interrupted { tool, args, claim }),
            other => Some(other),
        });
        Ok(())
    }

    async fn remove(&self, key: &str) -> Result<bool, StoreError> {
        Ok(self.entries().remove(key).is_some())
    }

    async fn remove_digest(&self, digest: &str) -> Result<bool, StoreError> {
        let mut entries = self.entries();
        let before = entries.len();
        entries.retain(|key, _| crate::idempotency::key_digest(key) != digest);
        Ok(entries.len() < before)
    }

    async fn list(&self) -> Result<Vec<ReceiptEntry>, StoreError> {
        let mut listed: Vec<ReceiptEntry> = self
            .entries()
            .iter()
            .map(|(key, entry)| {
                let (tool, state, since) = match entry {
                    Entry::Running { tool, claim, .. } => (tool, ReceiptState::Running, claim.claimed_at_ms),
                    Entry::Interrupted { tool, claim, .. } => (tool, ReceiptState::Interrupted, claim.claimed_at_ms),
                    Entry::Done { tool, at, .. } => (tool, ReceiptState::Done, *at),
                };
                ReceiptEntry {
                    key_digest: crate::idempotency::key_digest(key),
                    tool_name: tool.clone(),
                    state,
                    since_ms: since,
                }
            })
            .collect();
        listed.sort_by(|a, b| (a.since_ms, &a.key_digest).cmp(&(b.since_ms, &b.key_digest)));
        Ok(listed)
    }

    async fn expire(&self, before_ms: u64) -> Result<u64, StoreError> {
        let mut entries = self.entries();
        let before = entries.len();
        entries.retain(|_, e| !matches!(e, Entry::Done { at, .. } if at.unwrap_or(0) < before_ms));
        Ok((before - entries.len()) as u64)
    }
}

/// A shared receipt store is a receipt store.
#[async_trait::async_trait]
impl<S: ReceiptStore + ?Sized> ReceiptStore for std::sync::Arc<S> {
    async fn begin(&self, claim: &ReceiptClaim, take_over: bool) -> Result<Began, StoreError> {
        (**self).begin(claim, take_over).await
    }
    async fn finish(&self, key: &str, result: &Value) -> Result<(), StoreError> {
        (**self).finish(key, result).await
    }
    async fn release(&self, key: &str) -> Result<(), StoreError> {
        (**self).release(key).await
    }
    async fn interrupt(&self, key: &str) -> Result<(), StoreError> {
        (**self).interrupt(key).await
    }
    async fn remove(&self, key: &str) -> Result<bool, StoreError> {
        (**self).remove(key).await
    }
    async fn remove_digest(&self, key_digest: &str) -> Result<bool, StoreError> {
        (**self).remove_digest(key_digest).await
    }
    async fn list(&self) -> Result<Vec<ReceiptEntry>, StoreError> {
        (**self).list().await
    }
    async fn expire(&self, before_ms: u64) -> Result<u64, StoreError> {
        (**self).expire(before_ms).await
    }
}
/// Where a stored receipt row is, once its tag checked (both databases' rows).
#[cfg(any(feature = "sqlite", feature = "postgres"))]
pub(crate) enum Stored {
    Running(Claim),
    Interrupted(Claim),
    Done(Value),
}

/// The columns of a receipt row that decide where it is, as both databases store them.
#[cfg(any(feature = "sqlite", feature = "postgres"))]
pub(crate) struct RowView<'a> {
    /// The row's tagged fields, in the backend's order, and its stored tag.
    pub fields: &'a [Option<Vec<u8>>],
    pub tag: Option<&'a [u8]>,
    pub state: Option<&'a str>,
    pub owner_pid: Option<i64>,
    pub claimed_at_ms: Option<i64>,
    pub result_json: Option<&'a str>,
    /// Whether the claim's owner still runs (a live process, or an instance's lease); asked
    /// only of a running row.
    pub owner_alive: &'a dyn Fn() -> bool,
}

/// A receipt row's state, or why it cannot be used (never its stored text): the tag is checked
/// first, then the state and the recorded result are read.
#[cfg(any(feature = "sqlite", feature = "postgres"))]
pub(crate) fn check_row(row: RowView<'_>, key: &super::integrity::Key) -> Result<Stored, String> {
    let refs: Vec<Option<&[u8]>> = row.fields.iter().map(|f| f.as_deref()).collect();
    if !row.tag.is_some_and(|tag| key.verify(&refs, tag)) {
        return Err(super::checks::TAG_MISMATCH.into());
    }
    let claim = Claim {
        owner_pid: row.owner_pid.and_then(|p| u32::try_from(p).ok()),
        claimed_at_ms: row.claimed_at_ms.and_then(|t| u64::try_from(t).ok()),
    };
    match row.state {
        Some("running") if (row.owner_alive)() => Ok(Stored::Running(claim)),
        Some("running" | "interrupted") => Ok(Stored::Interrupted(claim)),
        Some("done") => {
            let json = row.result_json.ok_or("its result is missing")?;
            serde_json::from_str(json)
                .map(Stored::Done)
                .map_err(|e| format!("its result is unreadable JSON ({:?} error)", e.classify()))
        }
        _ => Err("its state is not one toolsmith writes".into()),
    }
}

/// A database row as listed: its state as checked (a row failing its checks is listed as
/// damaged, with why), and since when.
#[cfg(any(feature = "sqlite", feature = "postgres"))]
pub(crate) fn listed(
    digest: &str,
    tool_name: Option<&str>,
    checked: Result<Stored, String>,
    times: (Option<i64>, Option<i64>),
) -> ReceiptEntry {
    let (claimed, finished) = times;
    let (state, since) = match checked {
        Ok(Stored::Running(_)) => (ReceiptState::Running, claimed),
        Ok(Stored::Interrupted(_)) => (ReceiptState::Interrupted, claimed),
        Ok(Stored::Done(_)) => (ReceiptState::Done, finished.or(claimed)),
        Err(why) => (ReceiptState::Damaged(why), claimed),
    };
    ReceiptEntry {
        key_digest: digest.to_owned(),
        tool_name: tool_name.unwrap_or("?").to_owned(),
        state,
        since_ms: since.and_then(|t| u64::try_from(t).ok()),
    }
}

/// The error of a receipt row that failed its checks (named by a prefix of its key's digest,
/// never by the key).
#[cfg(any(feature = "sqlite", feature = "postgres"))]
pub(crate) fn damaged(digest: &str, reason: String) -> StoreError {
    StoreError::Damaged {
        id: format!("receipt {}", digest.get(..12).unwrap_or(digest)),
        reason,
    }
}
