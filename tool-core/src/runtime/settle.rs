//! Store writes that must happen even when the store is down: giving back a claimed call that
//! did not run, recording a finished run's receipt, forgetting a resolved call.
//!
//! Owns [`settle`]: the write is tried at once; when the storage itself fails
//! ([`StoreError::Storage`]: unreachable, refused, timed out), it is kept in memory and tried
//! again in the background with exponential backoff (100 ms doubling to 10 s) until the store
//! takes it, for as long as the process lives. A row this process owns is therefore never left
//! `running` once its run ended just because the store failed at that moment: when the store
//! returns, the claim is released, the receipt finished with the run's outcome, the resolved call
//! removed. Another error (a damaged row, a row another process took) is not retried: it is
//! logged once.
//!
//! What it logs during an outage is bounded: the first failure of each kind of write at
//! `warn`, then at most one line per kind every [`QUIET`] with the number of failures since;
//! one `info` line per kind when a kept write finally went through. Arguments and results are
//! never logged, only the kind of write and the call id.

use std::collections::HashMap;
use std::future::Future;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Mutex, OnceLock};
use std::time::{Duration, Instant};

use super::store::StoreError;

/// The longest pause between two tries of a kept write.
const MAX_PAUSE: Duration = Duration::from_secs(10);
/// The first pause.
const FIRST_PAUSE: Duration = Duration::from_millis(100);
/// At most one warning per kind of write in this long (with the count of failures since).
pub(crate) const QUIET: Duration = Duration::from_secs(10);

/// How this process's store was configured (`--store postgres://…@db/app`, the password
/// hidden), named by every line logged about it; set once by the command line's `serve`.
static STORE_NAME: OnceLock<String> = OnceLock::new();

/// Woken whenever a write kept during an outage goes through, or a failing periodic operation
/// works again: the store is back (the reconciler then looks at once).
static BACK: tokio::sync::Notify = tokio::sync::Notify::const_new();

/// Resolves the next time the store is seen back (see [`BACK`]).
pub(crate) async fn store_back() {
    BACK.notified().await;
}

/// The writes kept in memory now, waiting for the store to take them.
static KEPT: AtomicUsize = AtomicUsize::new(0);

/// Names this process's store in the lines logged about it (the first name given stays).
#[cfg_attr(not(feature = "cli"), allow(dead_code))]
pub(crate) fn name_store(label: String) {
    let _ = STORE_NAME.set(label);
}

/// The name [`name_store`] gave, if any.
#[cfg_attr(not(feature = "cli"), allow(dead_code))]
pub(crate) fn store_name() -> Option<&'static str> {
    STORE_NAME.get().map(String::as_str)
}

/// The store as the log lines name it.
fn shown_store() -> &'static str {
    store_name().unwrap_or("the runtime's store")
}

/// How many writes are kept in memory now, waiting for the store to take them (every runtime
/// of this process together).
#[cfg_attr(not(feature = "mcp"), allow(dead_code))]
pub(crate) fn kept_writes() -> usize {
    KEPT.load(Ordering::Relaxed)
}

/// One write counted in [`KEPT`] while it lives: counted out however its task ends (the
/// runtime shutting down and dropping it unpolled included).
struct Kept;

impl Kept {
    fn new() -> Kept {
        KEPT.fetch_add(1, Ordering::Relaxed);
        Kept
    }
}

impl Drop for Kept {
    fn drop(&mut self) {
        KEPT.fetch_sub(1, Ordering::Relaxed);
    }
}

/// Per kind of line (a write's kind, and whether it says "failed" or "back"): when its last line
/// was logged, and the events not logged since.
static LOG: Mutex<Option<Lines>> = Mutex::new(None);

/// Per kind of line: when it was last logged, and the events folded since.
type Lines = HashMap<(&'static str, bool), (Instant, u64)>;

/// Whether an event of `kind` (`back`: a kept write went through; else a failure) is logged
/// now (`Some(events folded into this line)`), or counted for the next line.
fn should_log((kind, back): (&'static str, bool), now: Instant) -> Option<u64> {
    let kind = (kind, back);
    let mut log = LOG.lock().unwrap_or_else(|p| p.into_inner());
    let log = log.get_or_insert_with(HashMap::new);
    match log.get_mut(&kind) {
        Some((last, quiet)) if now.duration_since(*last) < QUIET => {
            *quiet += 1;
            None
        }
        Some((last, quiet)) => {
            let folded = *quiet;
            *last = now;
            *quiet = 0;
            Some(folded)
        }
        None => {
            log.insert(kind, (now, 0));
            Some(0)
        }
    }
}

/// Logs a failed try of a write of `kind` (bounded, see the module docs).
fn failed(kind: &'static str, id: &str, error: &StoreError, retried: bool) {
    let Some(folded) = should_log((kind, false), Instant::now()) else {
        return;
    };
    if retried {
        tracing::warn!(write = kind, tool_call_id = id, store = shown_store(), error = %error, failures_since_last_line = folded, "a store write still fails; it is kept and tried again with backoff");
    } else {
        tracing::warn!(write = kind, tool_call_id = id, store = shown_store(), error = %error, failures_since_last_line = folded, "a store write failed; it is kept and tried again until the store takes it");
    }
}

/// Whether a line about a repeated event of `kind` (a refusal a flood may repeat thousands of
/// times a second) is logged now: `Some(events folded into it)` at most once per [`QUIET`].
#[cfg_attr(not(feature = "mcp"), allow(dead_code))]
pub(crate) fn quiet(kind: &'static str) -> Option<u64> {
    should_log((kind, false), Instant::now())
}

/// Logs that a periodic store operation of `kind` failed (bounded like a kept write's failures:
/// the first at `warn`, then one line per [`QUIET`] with the count); `failing` remembers it, so
/// [`recovered`] says once that it works again.
pub(crate) fn outage(kind: &'static str, error: &dyn std::fmt::Display, failing: &mut bool) {
    *failing = true;
    if let Some(folded) = should_log((kind, false), Instant::now()) {
        tracing::warn!(operation = kind, store = shown_store(), error = %error, failures_since_last_line = folded, "a store operation fails; trying again");
    }
}

/// Says once (at `info`) that a periodic store operation of `kind` works again after failing.
pub(crate) fn recovered(kind: &'static str, failing: &mut bool) {
    if std::mem::take(failing) {
        BACK.notify_waiters();
        tracing::info!(
            operation = kind,
            store = shown_store(),
            "a store operation works again: the store is back"
        );
    }
}

/// Whether `error` may pass by itself (the storage failed), so the write is worth trying again.
fn transient(error: &StoreError) -> bool {
    matches!(error, StoreError::Storage { .. })
}

/// Performs the store write `write` of `kind` for call `id` (see the module docs): at once, and
/// when the storage fails, again in the background until it succeeds ([`keep`]). Returns when
/// the first try ended; `false` when the write was kept for later (or failed for good).
pub(crate) async fn settle<F, Fut>(kind: &'static str, id: &str, write: F) -> bool
where
    F: Fn() -> Fut + Send + Sync + 'static,
    Fut: Future<Output = Result<(), StoreError>> + Send + 'static,
{
    match write().await {
        Ok(()) => true,
        Err(error) => {
            keep(kind, id, &error, write);
            false
        }
    }
}

/// A store write of `kind` for call `id` that was just tried and failed with `error`: when the
/// storage failed, it is logged (bounded) and tried again in the background with backoff until
/// it goes through; another error is logged once and dropped.
pub(crate) fn keep<F, Fut>(kind: &'static str, id: &str, error: &StoreError, write: F)
where
    F: Fn() -> Fut + Send + Sync + 'static,
    Fut: Future<Output = Result<(), StoreError>> + Send + 'static,
{
    if !transient(error) {
        tracing::warn!(write = kind, tool_call_id = id, store = shown_store(), error = %error, "a store write failed and is not tried again");
        return;
    }
    failed(kind, id, error, false);
    let Ok(runtime) = tokio::runtime::Handle::try_current() else {
        return;
    };
    let id = id.to_owned();
    let kept = Kept::new();
    runtime.spawn(async move {
        let _kept = kept;
        let mut pause = FIRST_PAUSE;
        loop {
            tokio::time::sleep(pause).await;
            match write().await {
                Ok(()) => {
                    BACK.notify_waiters();
                    if let Some(folded) = should_log((kind, true), Instant::now()) {
                        tracing::info!(write = kind, tool_call_id = %id, store = shown_store(), also_through_since_last_line = folded, "a kept store write went through: the store is back");
                    }
                    return;
                }
                Err(error) if transient(&error) => failed(kind, &id, &error, true),
                Err(error) => {
                    tracing::warn!(write = kind, tool_call_id = %id, store = shown_store(), error = %error, "a kept store write failed and is not tried again");
                    return;
                }
            }
            pause = (pause * 2).min(MAX_PAUSE);
        }
    });
}

#[cfg(test)]
mod tests {
    use std::sync::Arc;
    use std::sync::atomic::{AtomicU32, Ordering};

    use super::*;

    #[tokio::test(start_paused = true)]
    async fn a_write_that_fails_is_tried_again_until_it_goes_through() {
        let tries = Arc::new(AtomicU32::new(0));
        let counted = tries.clone();
        let done = settle("test-retry", "call_1", move || {
            let n = counted.fetch_add(1, Ordering::SeqCst);
            async move {
                if n < 5 {
                    Err(StoreError::storage("the store is down"))
                } else {
                    Ok(())
                }
            }
        })
        .await;
        assert!(!done, "kept for later");
        // Paused time: the backoff's sleeps pass at once, each try in turn.
        for _ in 0..200 {
            if tries.load(Ordering::SeqCst) >= 6 {
                break;
            }
            tokio::time::sleep(Duration::from_millis(50)).await;
        }
        assert_eq!(tries.load(Ordering::SeqCst), 6, "tried until it went through, then no more");
        tokio::time::sleep(Duration::from_secs(60)).await;
        assert_eq!(tries.load(Ordering::SeqCst), 6);
    }

    #[tokio::test]
    async fn other_errors_and_successes_are_not_tried_again() {
        let tries = Arc::new(AtomicU32::new(0));
        let counted = tries.clone();
        let damaged = settle("test-damaged", "call_2", move || {
            counted.fetch_add(1, Ordering::SeqCst);
            async {
                Err(StoreError::Damaged {
                    id: "call_2".into(),
                    reason: "edited".into(),
                })
            }
        })
        .await;
        assert!(!damaged);
        assert!(settle("test-ok", "call_3", || async { Ok(()) }).await);
        tokio::time::sleep(Duration::from_millis(300)).await;
        assert_eq!(tries.load(Ordering::SeqCst), 1);
    }

    #[test]
    fn an_outage_logs_one_line_per_kind_per_quiet_period_with_a_count() {
        let t0 = Instant::now();
        let kind = ("test-log", false);
        assert_eq!(should_log(kind, t0), Some(0), "the first failure is logged");
        for s in 1..10 {
            assert_eq!(should_log(kind, t0 + Duration::from_secs(s)), None);
        }
        assert_eq!(should_log(("test-log-other", false), t0), Some(0), "each kind has its own");
        assert_eq!(should_log(("test-log", true), t0), Some(0), "and its return its own");
        assert_eq!(should_log(kind, t0 + QUIET), Some(9), "then one line with the count");
    }
}
