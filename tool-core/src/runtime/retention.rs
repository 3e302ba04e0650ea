//! Operating a runtime's store: expiry of old records (retention), the store's health, and the
//! bus its instances share.
//!
//! Owns [`Expiry`] (the periodic sweep), [`parse_retention`] (`7d`, `12h`, `30m`, `90s`),
//! [`expire_stores`] (one expiry over every kind of record: waiting calls, ended tasks, done
//! receipts, kept results, audit rows) and the runtime's [`Runtime::expire`], [`Runtime::keep_expiring`],
//! [`Runtime::check_store`], [`Runtime::kept_results`] and [`Runtime::bus`]. What each store
//! removes is its own (`PendingStore::expire`, `TaskStore::expire_tasks`,
//! `ReceiptStore::expire`, `ResultStore::expire`, `AuditStore::expire`). Each call expired
//! unanswered is itself recorded in the audit trail, after the expiry of old rows.

use std::sync::Arc;
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use super::Runtime;
use super::audit::{self, Actor, AuditAction, AuditRecord};
use super::bus::Bus;
use super::pending::PendingCall;
use super::store::{AuditStore, PendingStore, ReceiptStore, ResultLimits, ResultStore, StoreError, TaskStore};

/// What one expiry removed.
#[derive(Debug, Default)]
pub struct Expired {
    /// Waiting and interrupted calls created before the cutoff (never run).
    pub calls: Vec<PendingCall>,
    /// Background tasks that had ended (completed, failed, cancelled) before it.
    pub tasks: u64,
    /// Receipts of idempotent calls whose result was recorded before it (a later run of such a
    /// call runs its body again).
    pub receipts: u64,
    /// Kept results of cut calls past their time to live, or kept before the cutoff.
    pub results: u64,
    /// Audit rows made before the cutoff.
    pub audit: u64,
}

/// Expires every kind of record past `retention` once: waiting and interrupted calls (never
/// running ones), ended background tasks with their results, done receipts (never running or
/// interrupted ones, which wait for a decision), and the kept results of `pending`'s store
/// (see [`PendingStore::results`]) past their own time to live or kept before the cutoff, and
/// the rows of `audit` made before the cutoff; each expired call is then recorded in `audit`
/// as expired by its actor (who runs the expiry). What `toolsmith store expire` and
/// [`Runtime::expire`] do.
pub async fn expire_stores(
    pending: &dyn PendingStore,
    (tasks, receipts): (Option<&dyn TaskStore>, Option<&dyn ReceiptStore>),
    audit: Option<(&dyn AuditStore, &Actor)>,
    retention: Duration,
) -> Result<Expired, StoreError> {
    let now = SystemTime::now().duration_since(UNIX_EPOCH).unwrap_or_default();
    let cutoff = u64::try_from(now.saturating_sub(retention).as_millis()).unwrap_or(u64::MAX);
    let calls = pending.expire(retention).await?;
    let tasks = match tasks {
        Some(store) => store.expire_tasks(cutoff).await?,
        None => 0,
    };
    let receipts = match receipts {
        Some(store) => store.expire(cutoff).await?,
        None => 0,
    };
    // Each kept row records its own expiry: the limits of this handle do not matter here.
    let results = match pending.results(ResultLimits::default()) {
        Some(store) => store.expire(cutoff).await?,
        None => 0,
    };
    let audit_rows = match audit {
        Some((store, actor)) => {
            let removed = store.expire(cutoff).await?;
            for call in &calls {
                let row = AuditRecord::new(actor.clone(), AuditAction::Expire).call(&call.tool_call_id, &call.tool_name);
                audit::record(store, row).await;
            }
            removed
        }
        None => 0,
    };
    Ok(Expired {
        calls,
        tasks,
        receipts,
        results,
        audit: audit_rows,
    })
}

/// The sweep of [`RuntimeBuilder::retention`](super::RuntimeBuilder::retention): like
/// [`Runtime::keep_expiring`], but ends by itself once the runtime is dropped.
pub(super) fn sweep_while_alive(runtime: &Runtime, retention: Duration) {
    let weak = Arc::downgrade(&runtime.inner);
    tokio::spawn(async move {
        let mut ticks = tokio::time::interval(every(retention));
        ticks.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
        loop {
            ticks.tick().await;
            let Some(inner) = weak.upgrade() else { return };
            if let Err(error) = (Runtime { inner }).expire(retention).await {
                tracing::warn!(%error, "the store's expiry failed; trying again at the next sweep");
            }
        }
    });
}

/// How often a sweep runs: a tenth of the retention, between a second and an hour.
fn every(retention: Duration) -> Duration {
    (retention / 10).clamp(Duration::from_secs(1), Duration::from_secs(3_600))
}

/// The periodic expiry of a runtime's store; dropping it stops the sweeps.
#[derive(Debug)]
pub struct Expiry(tokio::task::JoinHandle<()>);

impl Drop for Expiry {
    fn drop(&mut self) {
        self.0.abort();
    }
}

/// Why a text is not a retention (the message names the text and what is accepted).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum RetentionError {
    /// Not a number and a unit.
    #[error("`{0}` is not a retention: write a number and a unit, like 7d, 12h, 30m, 90s or 500ms")]
    Unreadable(String),
    /// Zero.
    #[error("`{0}`: a retention must be more than zero")]
    Zero(String),
    /// Over ten years.
    #[error("`{0}`: a retention is at most 3650 days")]
    TooLong(String),
}

/// A retention like `7d`, `12h`, `30m`, `90s` or `500ms` (a bare number is seconds).
///
/// ```
/// use std::time::Duration;
/// use tool_core::runtime::parse_retention;
///
/// assert_eq!(parse_retention("7d"), Ok(Duration::from_secs(7 * 86_400)));
/// assert_eq!(parse_retention("90"), Ok(Duration::from_secs(90)));
/// assert!(parse_retention("0s").is_err());
/// assert!(parse_retention("soon").is_err());
/// ```
pub fn parse_retention(text: &str) -> Result<Duration, RetentionError> {
    let text = text.trim();
    let split = text.find(|c: char| !c.is_ascii_digit()).unwrap_or(text.len());
    let (number, unit) = text.split_at(split);
    let bad = || RetentionError::Unreadable(text.to_owned());
    let n: u64 = number.parse().map_err(|_| bad())?;
    let unit_ms: u64 = match unit {
        "ms" => 1,
        "" | "s" => 1_000,
        "m" => 60_000,
        "h" => 3_600_000,
        "d" => 86_400_000,
        _ => return Err(bad()),
    };
    match n.checked_mul(unit_ms) {
        Some(0) => Err(RetentionError::Zero(text.to_owned())),
        Some(ms) if ms <= 3_650 * 86_400_000 => Ok(Duration::from_millis(ms)),
        _ => Err(RetentionError::TooLong(text.to_owned())),
    }
}

impl Runtime {
    /// Expires what the stores hold past `retention` once: waiting and
    /// interrupted calls created before then are removed (never run; each is logged and
    /// returned, and a later approval or resume of one is refused as unknown), ended background
    /// tasks of the task store, done receipts, kept results past their time to live, audit rows
    /// (each expired call is then recorded as expired), and the store's other leftovers.
    pub async fn expire(&self, retention: Duration) -> Result<Expired, StoreError> {
        let tasks = self.inner.tasks.as_ref().map(|q| &*q.store as &dyn TaskStore);
        let audit = (&*self.inner.audit, &Actor::Application);
        let kinds = (tasks, Some(&*self.inner.receipts));
        let expired = expire_stores(&*self.inner.store, kinds, Some(audit), retention).await?;
        if expired.tasks + expired.receipts + expired.results + expired.audit > 0 {
            tracing::info!(
                tasks = expired.tasks,
                receipts = expired.receipts,
                results = expired.results,
                audit_rows = expired.audit,
                "expired ended tasks, receipts, kept results and audit rows past the store's retention"
            );
        }
        for call in &expired.calls {
            tracing::info!(
                tool_call_id = %call.tool_call_id,
                tool = %call.tool_name,
                waited_for = call.kind.waits_for(),
                "expired a waiting call past the store's retention; it was not run"
            );
        }
        Ok(expired)
    }

    /// Expires past `retention` now and then every `min(retention / 10, 1 h)` (at least every
    /// second), until the returned [`Expiry`] is dropped. Needs a Tokio runtime.
    pub fn keep_expiring(&self, retention: Duration) -> Expiry {
        let runtime = self.clone();
        Expiry(tokio::spawn(async move {
            let mut ticks = tokio::time::interval(every(retention));
            ticks.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
            loop {
                ticks.tick().await;
                if let Err(error) = runtime.expire(retention).await {
                    tracing::warn!(%error, "the store's expiry failed; trying again at the next sweep");
                }
            }
        }))
    }

    /// Whether the store answers (one cheap lookup), for a health check.
    pub async fn check_store(&self) -> Result<(), StoreError> {
        self.inner.store.get("toolsmith-health-probe").await.map(drop)
    }

    /// Which backend this runtime's store is (`"memory"`, `"sqlite"`, `"postgres"`, …).
    pub fn store_backend(&self) -> &'static str {
        self.inner.store.backend()
    }

    /// The full results of cut calls kept in this runtime's store within `limits`, shared by
    /// every instance on it (`None`: the store keeps none, as [`MemoryStore`](super::MemoryStore)).
    /// What an MCP server over this runtime keeps its cut results in by default.
    pub fn kept_results(&self, limits: ResultLimits) -> Option<Arc<dyn ResultStore>> {
        self.inner.store.results(limits)
    }

    /// The bus between the instances sharing this runtime's store (`None`: the store is this
    /// process's alone).
    pub fn bus(&self) -> Option<Arc<dyn Bus>> {
        self.inner.store.bus()
    }
}
