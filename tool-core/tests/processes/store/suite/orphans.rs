//! The reconciler (`Runtime::reconcile`) on the stores that outlive a call's process (SQLite,
//! PostgreSQL): a claim this process holds that nothing in it works on (an orphan) is given up
//! and reads interrupted, so the call is no longer refused as "being continued" for as long as
//! the process lives; a call this process is running is left alone; another instance's claim is
//! not this process's to give up.

use std::sync::atomic::{AtomicBool, Ordering};

use super::{Backend, Case, fresh_ledger, ran};
use tool_core::prelude::*;
use tool_core::runtime::backend::StoredCall;
use tool_core::runtime::{Outcome, ResumeOptions, Runtime, RuntimeError, StoreError};

/// Cases for the stores that keep calls past their process.
pub const STORE_CASES: &[(&str, Case)] = &[
    ("an_orphaned_claim_reads_interrupted_after_reconciling_and_runs_on_a_rerun", |b| {
        Box::pin(an_orphaned_claim_reads_interrupted(b))
    }),
    ("a_call_this_process_is_running_is_not_an_orphan", |b| {
        Box::pin(a_running_call_is_not_an_orphan(b))
    }),
];

/// Set while `suite-hold` runs; cleared to let it end.
static HOLDING: AtomicBool = AtomicBool::new(false);

/// Runs until the test lets it end (at most a minute), once a person approves
#[tool(id = "suite-hold", require_approval)]
async fn suite_hold(
    /// The ledger counting the runs
    ledger: String,
) -> String {
    HOLDING.store(true, Ordering::SeqCst);
    let until = std::time::Instant::now() + std::time::Duration::from_secs(60);
    while HOLDING.load(Ordering::SeqCst) && std::time::Instant::now() < until {
        tokio::time::sleep(std::time::Duration::from_millis(10)).await;
    }
    super::suite_approve(ledger).await
}

/// A call waiting for approval in `runtime`'s store: its id.
async fn waiting(runtime: &Runtime, tool: &str, ledger: &str) -> String {
    let run = runtime.call(tool, json!({"ledger": ledger}), CallOptions::default()).finish().await;
    let Outcome::AwaitingApproval(waiting) = run.outcome else {
        panic!("{:?}", run.outcome)
    };
    waiting.id().to_owned()
}

async fn state_of(runtime: &Runtime, id: &str) -> &'static str {
    let entries = runtime.pending_entries().await.unwrap();
    let state = entries.iter().find_map(|e| match e {
        StoredCall::Call { call, state } if call.tool_call_id == id => Some(state.as_str()),
        _ => None,
    });
    state.unwrap_or("gone")
}

async fn an_orphaned_claim_reads_interrupted(b: Backend) {
    let ledger = fresh_ledger();
    let store = b.open().await;
    let runtime = Runtime::builder(Registry::global()).shared_store(store.clone()).build();
    let id = waiting(&runtime, "suite-approve", &ledger).await;
    // Claimed by this process (its store handle) with nothing working on it: what a claim whose
    // follow-up writes were refused for good leaves.
    assert!(store.claim(&id).await.unwrap().is_some());
    let refused = runtime.approve(&id, ResumeOptions::default()).await.err();
    assert!(
        matches!(refused, Some(RuntimeError::Store(StoreError::Busy(_)))),
        "before reconciling, the orphan is refused as in progress: {refused:?}"
    );
    // Another instance (PostgreSQL) or process does not give up this one's claim.
    if matches!(b, Backend::Postgres { .. }) {
        let other = Runtime::builder(Registry::global()).shared_store(b.open().await).build();
        assert_eq!(
            other.reconcile().await.unwrap(),
            Vec::<String>::new(),
            "not another instance's to give up"
        );
        assert_eq!(state_of(&runtime, &id).await, "running");
    }
    assert_eq!(runtime.reconcile().await.unwrap(), std::slice::from_ref(&id));
    assert_eq!(state_of(&runtime, &id).await, "interrupted");
    assert_eq!(runtime.reconcile().await.unwrap(), Vec::<String>::new(), "given up once");
    let plain = runtime.approve(&id, ResumeOptions::default()).await.err();
    assert!(
        matches!(plain, Some(RuntimeError::Store(StoreError::Interrupted(_)))),
        "an approval alone does not run it (it may have had its effect): {plain:?}"
    );
    let rerun = runtime.approve(&id, ResumeOptions::default().rerun()).await.unwrap().finish().await;
    assert!(matches!(rerun.outcome, Outcome::Done(_)), "{:?}", rerun.outcome);
    assert_eq!(ran(&ledger), 1);
    assert_eq!(state_of(&runtime, &id).await, "gone");
}

async fn a_running_call_is_not_an_orphan(b: Backend) {
    let ledger = fresh_ledger();
    let runtime = Runtime::builder(Registry::global()).shared_store(b.open().await).build();
    let id = waiting(&runtime, "suite-hold", &ledger).await;
    let approved = runtime.approve(&id, ResumeOptions::default()).await.unwrap();
    let done = tokio::spawn(approved.finish());
    let until = std::time::Instant::now() + std::time::Duration::from_secs(30);
    while !HOLDING.load(Ordering::SeqCst) {
        assert!(std::time::Instant::now() < until, "the approved call did not start");
        tokio::time::sleep(std::time::Duration::from_millis(10)).await;
    }
    assert_eq!(state_of(&runtime, &id).await, "running");
    assert_eq!(
        runtime.reconcile().await.unwrap(),
        Vec::<String>::new(),
        "a call being run is not an orphan"
    );
    assert_eq!(state_of(&runtime, &id).await, "running");
    HOLDING.store(false, Ordering::SeqCst);
    let done = done.await.unwrap();
    assert!(matches!(done.outcome, Outcome::Done(_)), "{:?}", done.outcome);
    assert_eq!(ran(&ledger), 1);
    assert_eq!(state_of(&runtime, &id).await, "gone");
}
