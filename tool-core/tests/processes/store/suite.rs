//! One store test suite, run against every backend: the same cases against `MemoryStore`, a
//! SQLite file and a PostgreSQL database (`TOOLSMITH_TEST_POSTGRES`; see `support/postgres.rs`
//! for what happens without it). Each case opens as many handles on one store as it needs (for
//! SQLite and PostgreSQL each handle is a store of its own on the same file or database, as
//! separate processes would have). The PostgreSQL-only tests (migrations, dead instances, 50
//! concurrent approvals, the command line across processes, damaged rows) are in
//! `suite/postgres_only.rs`; the audit trail's, on every backend and through the command line,
//! in `suite/audit.rs`.
//!
//! Trials of the `processes` binary (no libtest harness): the binary is also the `toolsmith`
//! command line of its tools (`support/child_cli.rs`), and opted-out PostgreSQL tests are
//! reported as ignored.

use crate::support::child_cli;
mod audit;
mod instances;
mod orphans;
mod parts;
use crate::support::postgres as pg;
mod credentials;
mod pins;
mod postgres_only;
mod results;
mod tasks;
mod tool_search;
mod tool_search_e2e;

use std::collections::HashMap;
use std::future::Future;
use std::pin::Pin;
use std::sync::{Arc, Mutex};

use libtest_mimic::{Failed, Trial};
use tool_core::prelude::*;
use tool_core::runtime::backend::{CallState, Claim, PendingStore, StoreStatus, StoredCall, TaskStore};
use tool_core::runtime::{
    MemoryStore, Outcome, PendingCall, PostgresOptions, PostgresStore, ResumeOptions, Runtime, RuntimeError, SqliteStore, StoreError,
};

/// The integrity key every handle of a test's store shares.
const KEY: &[u8] = b"store-suite key: the same on every instance";

/// How many times each ledger's tool ran.
static LEDGER: Mutex<Option<HashMap<String, u32>>> = Mutex::new(None);

fn ran(ledger: &str) -> u32 {
    let ledgers = LEDGER.lock().unwrap_or_else(|p| p.into_inner());
    ledgers.as_ref().and_then(|l| l.get(ledger).copied()).unwrap_or(0)
}

/// Counts a run in its ledger (a person approves every call)
#[tool(id = "suite-approve", require_approval)]
async fn suite_approve(
    /// The ledger counting the runs
    ledger: String,
) -> String {
    let mut ledgers = LEDGER.lock().unwrap_or_else(|p| p.into_inner());
    *ledgers.get_or_insert_with(HashMap::new).entry(ledger).or_default() += 1;
    "ran".into()
}

/// A ledger no other test uses.
fn fresh_ledger() -> String {
    static NEXT: std::sync::atomic::AtomicU32 = std::sync::atomic::AtomicU32::new(0);
    format!("ledger-{}", NEXT.fetch_add(1, std::sync::atomic::Ordering::Relaxed))
}

/// One store under test; [`Backend::open`] gives a new handle on the same rows.
#[derive(Clone)]
enum Backend {
    Memory(Arc<MemoryStore>),
    Sqlite(Arc<tempfile::TempDir>),
    Postgres { url: String, schema: String },
}

#[derive(Debug, Clone, Copy)]
enum Kind {
    Memory,
    Sqlite,
    Postgres,
}

impl Backend {
    async fn new(kind: Kind, url: Option<&str>) -> Result<Backend, String> {
        Ok(match (kind, url) {
            (Kind::Memory, _) => Backend::Memory(Arc::new(MemoryStore::new())),
            (Kind::Sqlite, _) => Backend::Sqlite(Arc::new(tempfile::tempdir().map_err(|e| e.to_string())?)),
            (Kind::Postgres, Some(url)) => Backend::Postgres {
                url: url.to_owned(),
                schema: pg::fresh_schema(url).await?,
            },
            (Kind::Postgres, None) => return Err("no PostgreSQL URL".into()),
        })
    }

    /// A new handle on this store's rows.
    async fn open(&self) -> Arc<dyn PendingStore> {
        match self {
            Backend::Memory(store) => store.clone(),
            Backend::Sqlite(dir) => Arc::new(SqliteStore::open_with_key(dir.path().join("pending.sqlite3"), KEY).unwrap()),
            Backend::Postgres { url, schema } => Arc::new(PostgresStore::connect_with(url, options(schema)).await.unwrap()),
        }
    }

    /// A new handle on this store's background tasks.
    async fn open_tasks(&self) -> Arc<dyn TaskStore> {
        match self {
            Backend::Memory(store) => store.clone(),
            Backend::Sqlite(dir) => Arc::new(SqliteStore::open_with_key(dir.path().join("pending.sqlite3"), KEY).unwrap()),
            Backend::Postgres { url, schema } => Arc::new(PostgresStore::connect_with(url, options(schema)).await.unwrap()),
        }
    }

    /// A runtime over a new handle.
    async fn runtime(&self) -> Runtime {
        Runtime::builder(Registry::global()).shared_store(self.open().await).build()
    }

    async fn cleanup(&self) {
        if let Backend::Postgres { url, schema } = self {
            pg::drop_schema(url, schema).await;
        }
    }
}

/// The options of a test's PostgreSQL store: its schema, the shared key, a small pool.
fn options(schema: &str) -> PostgresOptions {
    PostgresOptions::default().schema(schema).unwrap().key(KEY).max_connections(2)
}

fn call(id: &str, at: u64) -> PendingCall {
    let call = json!({"tool_call_id": id, "tool_name": "suite-approve", "kind": "approval", "args": {"ledger": id}, "created_at_ms": at});
    serde_json::from_value(call).unwrap()
}

fn ids(calls: &[PendingCall]) -> Vec<&str> {
    calls.iter().map(|c| c.tool_call_id.as_str()).collect()
}

async fn every_field_round_trips_and_lists_oldest_first(b: Backend) {
    let s = b.open().await;
    let full: PendingCall = serde_json::from_value(json!({"tool_call_id": "full", "tool_name": "pay", "kind": "suspended",
        "args": {"n": 1}, "context": {"api_key": "sk-1"}, "thread_id": "t1", "resource_id": "user-9", "created_at_ms": 3,
        "messages": [{"role": "user", "content": "hi ✓"}], "suspend_payload": [1], "resume_schema": {"type": "object"}}))
    .unwrap();
    s.save(&full).await.unwrap();
    s.save(&call("b", 2)).await.unwrap();
    s.save(&call("a", 2)).await.unwrap();
    assert_eq!(s.get("full").await.unwrap().unwrap(), full);
    assert_eq!(ids(&s.list().await.unwrap()), ["a", "b", "full"], "oldest first, then by id");
    assert!(s.get("nope").await.unwrap().is_none());
    let other = b.open().await;
    assert_eq!(
        other.list().await.unwrap(),
        s.list().await.unwrap(),
        "another handle sees the same rows"
    );
}

async fn claim_is_exclusive_and_release_reopens(b: Backend) {
    let (one, two) = (b.open().await, b.open().await);
    one.save(&call("a", 1)).await.unwrap();
    one.save(&call("b", 2)).await.unwrap();
    assert_eq!(one.claim("a").await.unwrap().unwrap(), call("a", 1));
    assert!(matches!(one.claim("a").await, Err(StoreError::Busy(id)) if id == "a"));
    assert!(
        matches!(two.claim("a").await, Err(StoreError::Busy(_))),
        "another handle sees the claim"
    );
    assert!(two.claim_again("a").await.is_err(), "a live run is never taken, even on purpose");
    assert!(two.get("a").await.unwrap().is_some(), "a running call is still there");
    one.release("a").await.unwrap();
    assert!(two.claim("a").await.unwrap().is_some(), "released, it can be claimed again");
    one.save(&call("a", 1)).await.unwrap();
    assert!(one.claim("a").await.unwrap().is_some(), "save puts a call back to waiting");
    two.remove("a").await.unwrap();
    assert!(one.claim("a").await.unwrap().is_none(), "a removed call is unknown");
    one.release("unknown").await.unwrap();
    one.remove("unknown").await.unwrap();
    assert!(one.claim("unknown").await.unwrap().is_none());
    assert!(one.claim_again("unknown").await.unwrap().is_none());
    assert_eq!(ids(&two.list().await.unwrap()), ["b"]);
}

async fn entries_show_each_state_and_the_status_counts_them(b: Backend) {
    let s = b.open().await;
    for (id, at) in [("a", 1), ("b", 2), ("c", 3)] {
        s.save(&call(id, at)).await.unwrap();
    }
    s.claim("a").await.unwrap().unwrap();
    let entries = b.open().await.entries().await.unwrap();
    let states: Vec<(&str, &str)> = entries
        .iter()
        .map(|e| match e {
            StoredCall::Call { call, state } => (call.tool_call_id.as_str(), state.as_str()),
            StoredCall::Damaged { tool_call_id, .. } => (tool_call_id.as_str(), "damaged"),
        })
        .collect();
    assert_eq!(states, [("a", "running"), ("b", "waiting"), ("c", "waiting")]);
    let StoredCall::Call {
        state: CallState::Running(claim),
        ..
    } = &entries[0]
    else {
        unreachable!()
    };
    assert_eq!(claim.owner_pid, Some(std::process::id()), "the claim records its process");
    let status = StoreStatus::of(&entries);
    assert_eq!((status.waiting, status.running, status.interrupted, status.damaged), (2, 1, 0, 0));
    assert_eq!(status.oldest_waiting.map(|c| c.tool_call_id).as_deref(), Some("b"));
}

async fn one_of_many_concurrent_claimers_wins(b: Backend) {
    const CLAIMERS: usize = 16;
    b.open().await.save(&call("x", 1)).await.unwrap();
    let mut handles = Vec::new();
    for _ in 0..CLAIMERS {
        handles.push(b.open().await);
    }
    let barrier = Arc::new(tokio::sync::Barrier::new(CLAIMERS));
    let claims = handles.into_iter().map(|store| {
        let barrier = barrier.clone();
        tokio::spawn(async move {
            barrier.wait().await;
            store.claim("x").await
        })
    });
    let results = futures::future::join_all(claims).await;
    let results: Vec<_> = results.into_iter().map(Result::unwrap).collect();
    assert_eq!(results.iter().filter(|r| matches!(r, Ok(Some(_)))).count(), 1, "{results:?}");
    assert_eq!(
        results.iter().filter(|r| matches!(r, Err(StoreError::Busy(_)))).count(),
        CLAIMERS - 1
    );
}

async fn an_approval_runs_once_and_a_stale_or_unknown_id_is_refused(b: Backend) {
    let ledger = fresh_ledger();
    let (first, second) = (b.runtime().await, b.runtime().await);
    let run = first
        .call("suite-approve", json!({"ledger": ledger}), CallOptions::default())
        .finish()
        .await;
    let Outcome::AwaitingApproval(waiting) = run.outcome else {
        panic!("{:?}", run.outcome)
    };
    assert_eq!(ids(&second.pending().await.unwrap()), [waiting.id()], "another runtime lists it");
    let done = second.approve(waiting.id(), ResumeOptions::default()).await.unwrap().finish().await;
    assert!(matches!(done.outcome, Outcome::Done(_)), "{:?}", done.outcome);
    assert_eq!(ran(&ledger), 1);
    for runtime in [&first, &second] {
        assert!(
            matches!(
                runtime.approve(waiting.id(), ResumeOptions::default()).await,
                Err(RuntimeError::UnknownCall(_))
            ),
            "a stale id"
        );
    }
    assert!(matches!(
        first.approve("call_never_made", ResumeOptions::default()).await,
        Err(RuntimeError::UnknownCall(_))
    ));
    assert_eq!(ran(&ledger), 1, "ran once");
    assert!(first.pending().await.unwrap().is_empty());
}

async fn a_decline_never_runs_the_tool(b: Backend) {
    let ledger = fresh_ledger();
    let (first, second) = (b.runtime().await, b.runtime().await);
    let run = first
        .call("suite-approve", json!({"ledger": ledger}), CallOptions::default())
        .finish()
        .await;
    let Outcome::AwaitingApproval(waiting) = run.outcome else {
        panic!("{:?}", run.outcome)
    };
    let declined = second.decline(waiting.id(), "not today").await.unwrap().finish().await;
    assert!(
        matches!(&declined.outcome, Outcome::Declined { reason } if reason == "not today"),
        "{:?}",
        declined.outcome
    );
    assert!(matches!(
        first.approve(waiting.id(), ResumeOptions::default()).await,
        Err(RuntimeError::UnknownCall(_))
    ));
    assert_eq!(ran(&ledger), 0, "a declined call never runs");
    assert!(second.pending().await.unwrap().is_empty());
}

type Case = fn(Backend) -> Pin<Box<dyn Future<Output = ()> + Send>>;

macro_rules! cases {
    ($($name:ident),* $(,)?) => {
        &[$((stringify!($name), |b| Box::pin($name(b)))),*]
    };
}

/// The suite: every case runs against every backend.
const CASES: &[(&str, Case)] = cases![
    every_field_round_trips_and_lists_oldest_first,
    claim_is_exclusive_and_release_reopens,
    entries_show_each_state_and_the_status_counts_them,
    one_of_many_concurrent_claimers_wins,
    an_approval_runs_once_and_a_stale_or_unknown_id_is_refused,
    a_decline_never_runs_the_tool,
    expiry_removes_old_waiting_calls_and_keeps_new_and_running_ones,
    remove_claimed_removes_only_the_claim_it_names,
];

/// The claim a running call is under.
async fn running(s: &Arc<dyn PendingStore>, id: &str) -> Claim {
    match s.state(id).await.unwrap() {
        Some(CallState::Running(claim)) => claim,
        other => panic!("`{id}` is not running: {other:?}"),
    }
}

async fn remove_claimed_removes_only_the_claim_it_names(b: Backend) {
    let s = b.open().await;
    s.save(&call("a", 1)).await.unwrap();
    assert_eq!(s.state("a").await.unwrap(), Some(CallState::Waiting));
    assert!(s.claim("a").await.unwrap().is_some());
    let first = running(&s, "a").await;
    assert_eq!(first.owner_pid, Some(std::process::id()));
    // What a tool that suspends itself again leaves (a worker saves it while the claim's
    // removal is still to come): a new waiting call under the same id.
    s.save(&call("a", 2)).await.unwrap();
    assert!(
        !s.remove_claimed("a", &first).await.unwrap(),
        "a call saved since is not the claim's"
    );
    assert_eq!(s.get("a").await.unwrap(), Some(call("a", 2)), "the new waiting call is kept");
    assert_eq!(s.state("a").await.unwrap(), Some(CallState::Waiting));
    // Claimed again (at once: within the same millisecond, as likely as not): another claim.
    assert!(s.claim("a").await.unwrap().is_some());
    let second = running(&s, "a").await;
    assert_ne!(first, second, "two claims of one process are never equal");
    assert!(!s.remove_claimed("a", &first).await.unwrap(), "an earlier claim removes nothing");
    assert!(s.get("a").await.unwrap().is_some());
    // Put back to waiting (nothing ran): not running under any claim.
    s.release("a").await.unwrap();
    assert!(!s.remove_claimed("a", &second).await.unwrap(), "a released call is kept");
    assert!(s.get("a").await.unwrap().is_some());
    // Claimed and nothing saved since: removed, once.
    assert!(s.claim("a").await.unwrap().is_some());
    let third = running(&s, "a").await;
    let another_process = Claim {
        owner_pid: third.owner_pid.map(|p| p.wrapping_add(1)),
        ..third
    };
    assert!(
        !s.remove_claimed("a", &another_process).await.unwrap(),
        "not another process's claim"
    );
    if matches!(b, Backend::Postgres { .. }) {
        let other_instance = b.open().await;
        assert!(
            !other_instance.remove_claimed("a", &third).await.unwrap(),
            "not another instance's claim"
        );
    }
    assert!(s.remove_claimed("a", &third).await.unwrap());
    assert!(s.get("a").await.unwrap().is_none(), "removed");
    assert_eq!(s.state("a").await.unwrap(), None);
    assert!(!s.remove_claimed("a", &third).await.unwrap(), "removed once");
    assert!(!s.remove_claimed("unknown", &third).await.unwrap(), "an unknown id");
    // A claim given up (it reads interrupted) is not running under it any more.
    s.save(&call("b", 3)).await.unwrap();
    assert!(s.claim("b").await.unwrap().is_some());
    let given_up = running(&s, "b").await;
    if s.abandon("b", &given_up).await.unwrap() {
        assert!(matches!(s.state("b").await.unwrap(), Some(CallState::Interrupted(_))));
        assert!(!s.remove_claimed("b", &given_up).await.unwrap(), "an interrupted call is kept");
        assert!(s.get("b").await.unwrap().is_some());
    } else {
        assert!(s.remove_claimed("b", &given_up).await.unwrap());
    }
}

async fn expiry_removes_old_waiting_calls_and_keeps_new_and_running_ones(b: Backend) {
    let s = b.open().await;
    let now = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap()
        .as_millis() as u64;
    for (id, at) in [("old-1", 1), ("old-2", 2), ("old-running", 3), ("new", now)] {
        s.save(&call(id, at)).await.unwrap();
    }
    assert!(s.claim("old-running").await.unwrap().is_some());
    let expired = s.expire(std::time::Duration::from_secs(3_600)).await.unwrap();
    assert_eq!(ids(&expired), ["old-1", "old-2"], "the old waiting calls, oldest first");
    assert_eq!(
        ids(&s.list().await.unwrap()),
        ["old-running", "new"],
        "a running call and a new one are kept"
    );
    assert!(s.expire(std::time::Duration::from_secs(3_600)).await.unwrap().is_empty(), "once");
}

/// Runs a test's future on a runtime of its own; a panic fails the test with its message.
fn block_on(test: impl Future<Output = Result<(), String>> + Send) -> Result<(), Failed> {
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .unwrap();
    let ran = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| runtime.block_on(test)));
    match ran {
        Ok(result) => result.map_err(Failed::from),
        Err(panic) => {
            let text = panic
                .downcast_ref::<String>()
                .cloned()
                .or_else(|| panic.downcast_ref::<&str>().map(|s| s.to_string()));
            Err(Failed::from(text.unwrap_or_else(|| "the test panicked".into())))
        }
    }
}

/// A test that needs PostgreSQL: run with its URL, failed when none is set, ignored when opted
/// out.
fn postgres_trial<F, Fut>(name: String, postgres: &pg::Postgres, test: F) -> Trial
where
    F: FnOnce(String) -> Fut + Send + 'static,
    Fut: Future<Output = Result<(), String>> + Send,
{
    match postgres {
        pg::Postgres::Url(url) => {
            let url = url.clone();
            Trial::test(name, move || block_on(test(url)))
        }
        pg::Postgres::Missing(message) => {
            let message = message.clone();
            Trial::test(name, move || Err(Failed::from(message)))
        }
        pg::Postgres::Skipped(_) => Trial::test(name, || Ok(())).with_ignored_flag(true),
    }
}

/// This suite's tests, named `SUITE::BACKEND::TEST`: every case on every backend.
pub fn trials(suite: &str) -> Vec<Trial> {
    let postgres = pg::postgres();
    if let pg::Postgres::Skipped(reason) = &postgres {
        eprintln!("{reason}");
    }
    let mut trials = Vec::new();
    let every_kind: &[Kind] = &[Kind::Memory, Kind::Sqlite];
    let cases = CASES
        .iter()
        .chain(tasks::CASES)
        .chain(parts::CASES)
        .chain(results::CASES)
        .chain(audit::CASES)
        .chain(tool_search::CASES)
        .chain(tool_search_e2e::CASES);
    let cases = cases.map(|c| (c, every_kind));
    // The cases of what only a database keeps (kept results, counted by `store status`; the
    // audit trail through the command line).
    let store_cases = results::STORE_CASES.iter().chain(audit::STORE_CASES).chain(orphans::STORE_CASES);
    let cases = cases.chain(store_cases.map(|c| (c, &[Kind::Sqlite][..])));
    for (&(name, case), kinds) in cases {
        for &kind in kinds {
            let test = async move {
                let backend = Backend::new(kind, None).await?;
                case(backend).await;
                Ok(())
            };
            trials.push(Trial::test(
                format!("{suite}::{}", format!("{kind:?}::{name}").to_lowercase()),
                move || block_on(test),
            ));
        }
        let test = move |url: String| async move {
            let backend = Backend::new(Kind::Postgres, Some(&url)).await?;
            case(backend.clone()).await;
            backend.cleanup().await;
            Ok(())
        };
        trials.push(postgres_trial(format!("{suite}::postgres::{name}"), &postgres, test));
    }
    // The pin store: one contract on every backend.
    trials.push(Trial::test(format!("{suite}::memory::pin_store_contract"), || {
        block_on(pins::contract(pins::Pins::Memory(Arc::default())))
    }));
    trials.push(Trial::test(format!("{suite}::sqlite::pin_store_contract"), || {
        let dir = tempfile::tempdir().map_err(|e| Failed::from(e.to_string()))?;
        block_on(pins::contract(pins::Pins::Sqlite(dir)))
    }));
    trials.push(postgres_trial(
        format!("{suite}::postgres::pin_store_contract"),
        &postgres,
        pins::postgres_contract,
    ));
    for &(name, test) in postgres_only::TESTS
        .iter()
        .chain(instances::TESTS)
        .chain(tasks::POSTGRES_TESTS)
        .chain(pins::POSTGRES_TESTS)
        .chain(credentials::POSTGRES_TESTS)
    {
        trials.push(postgres_trial(format!("{suite}::postgres::{name}"), &postgres, test));
    }
    trials.push(Trial::test(
        format!("{suite}::postgres::an_unreachable_database_is_a_clear_error"),
        || block_on(postgres_only::an_unreachable_database_is_a_clear_error()),
    ));
    trials
}
