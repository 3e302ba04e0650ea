//! Kept results (the full results of cut calls), against every backend ([`CASES`]: memory, a
//! SQLite file, PostgreSQL): read by their owner only, unknown ids, the time to live, the byte
//! and count bounds, expiry, from other handles and after the store is reopened. And, for the
//! stores that keep them ([`STORE_CASES`]: SQLite and PostgreSQL), what the runtime and the
//! command line do with them: `Runtime::expire` removes expired ones, `toolsmith store status`
//! counts them beside the receipts.

use std::future::Future;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use serde_json::{Value, json};
use tool_core::prelude::Registry;
use tool_core::runtime::backend::{Began, KeptResult, MemoryResults, ReceiptClaim, ResultError, ResultLimits, ResultStore};
use tool_core::runtime::{Runtime, STORE_KEY_ENV};

use super::{Backend, Case, KEY, child_cli, pg};

/// The cases every backend passes.
pub const CASES: &[(&str, Case)] = &[
    ("kept_results_are_read_by_their_owner_only_from_any_handle", |b| {
        Box::pin(with_results(b, owner_only))
    }),
    ("kept_results_past_their_time_to_live_are_not_read_and_expire", |b| {
        Box::pin(with_results(b, time_to_live))
    }),
    ("kept_results_hold_the_byte_and_count_bounds", |b| Box::pin(with_results(b, bounds))),
];

/// The cases of the stores that keep results themselves (SQLite, PostgreSQL).
pub const STORE_CASES: &[(&str, Case)] = &[
    ("the_runtimes_expiry_removes_expired_kept_results", |b| Box::pin(runtime_expiry(b))),
    ("store_status_counts_receipts_and_kept_results", |b| Box::pin(store_status(b))),
];

/// Result stores on one backend: for SQLite and PostgreSQL a new handle on the same rows each
/// time (the store's own, `PendingStore::results`); in memory one store per set of limits (a
/// process's memory is all there is to share).
struct Results {
    backend: Backend,
    memory: Mutex<Vec<(ResultLimits, Arc<MemoryResults>)>>,
}

impl Results {
    async fn open(&self, limits: ResultLimits) -> Arc<dyn ResultStore> {
        if let Backend::Memory(_) = self.backend {
            let mut memory = self.memory.lock().unwrap();
            if let Some((_, store)) = memory.iter().find(|(l, _)| *l == limits) {
                return store.clone();
            }
            let store = Arc::new(MemoryResults::new(limits));
            memory.push((limits, store.clone()));
            return store;
        }
        self.backend.open().await.results(limits).expect("a database store keeps results")
    }
}

async fn with_results<F, Fut>(backend: Backend, case: F)
where
    F: FnOnce(Results) -> Fut,
    Fut: Future<Output = ()>,
{
    case(Results {
        backend,
        memory: Mutex::default(),
    })
    .await;
}

fn kept(owner: &str, text: &str) -> KeptResult {
    KeptResult {
        owner: owner.into(),
        text: text.into(),
        json: None,
    }
}

fn limits(max_count: usize, max_bytes: usize, ttl: Duration) -> ResultLimits {
    ResultLimits { max_count, max_bytes, ttl }
}

fn now_ms() -> u64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap()
        .as_millis() as u64
}

const HOUR: Duration = Duration::from_secs(3_600);

async fn owner_only(r: Results) {
    let full = KeptResult {
        owner: "subject:alice".into(),
        text: "every line ✓ ".repeat(100),
        json: Some(json!({"lines": 100}).to_string()),
    };
    let writer = r.open(ResultLimits::default()).await;
    writer.put("call_a".into(), full.clone()).await;
    drop(writer);
    // Another handle (for a file or a database: opened anew, the first one gone).
    let reader = r.open(ResultLimits::default()).await;
    assert_eq!(reader.get("call_a", "subject:alice").await, Ok(full), "the owner reads it whole");
    let refused = reader.get("call_a", "subject:mallory").await;
    assert_eq!(refused, Err(ResultError::NotYours("call_a".into())));
    let message = refused.unwrap_err().to_string();
    assert!(
        message.contains("belongs to another caller") && !message.contains("every line"),
        "{message}"
    );
    let unknown = reader.get("call_unknown", "subject:alice").await;
    assert_eq!(unknown, Err(ResultError::NotFound("call_unknown".into())));
    assert!(unknown.unwrap_err().to_string().contains("is not kept here"));
    assert_eq!(
        reader.get("call_a", "").await,
        Err(ResultError::NotYours("call_a".into())),
        "no owner is no one's"
    );
    // Kept again, it is replaced (and may change hands).
    reader.put("call_a".into(), kept("subject:bob", "second")).await;
    assert_eq!(reader.get("call_a", "subject:bob").await.map(|k| k.text), Ok("second".into()));
    assert!(matches!(reader.get("call_a", "subject:alice").await, Err(ResultError::NotYours(_))));
    assert_eq!(reader.count().await.unwrap(), 1);
}

async fn time_to_live(r: Results) {
    let brief = r.open(limits(10, 1 << 20, Duration::from_millis(1))).await;
    let lasting = r.open(limits(10, 1 << 20, HOUR)).await;
    // The lasting one first: each put drops the rows already past the time to live they were
    // kept with.
    lasting.put("call_lasting".into(), kept("o", "lasting")).await;
    brief.put("call_brief".into(), kept("o", "brief")).await;
    tokio::time::sleep(Duration::from_millis(30)).await;
    assert_eq!(
        brief.get("call_brief", "o").await,
        Err(ResultError::NotFound("call_brief".into())),
        "past its time to live"
    );
    assert_eq!(
        lasting.get("call_brief", "o").await,
        Err(ResultError::NotFound("call_brief".into())),
        "past the time to live it was kept with, whoever reads"
    );
    assert_eq!(
        brief.get("call_lasting", "o").await,
        Err(ResultError::NotFound("call_lasting".into())),
        "older than the reader's time to live"
    );
    assert_eq!(lasting.get("call_lasting", "o").await.map(|k| k.text), Ok("lasting".into()));
    assert_eq!(lasting.count().await.unwrap(), 1, "an expired result is not counted");
    // Expiry removes what is past its time to live, once, whatever the handle's limits.
    let removed = lasting.expire(0).await.unwrap() + brief.expire(0).await.unwrap();
    assert_eq!(removed, 1, "only the expired result");
    assert_eq!(lasting.expire(0).await.unwrap() + brief.expire(0).await.unwrap(), 0, "once");
    assert_eq!(lasting.get("call_lasting", "o").await.map(|k| k.text), Ok("lasting".into()));
    // A retention cutoff after it was kept removes it too.
    assert_eq!(lasting.expire(now_ms() + 1_000).await.unwrap(), 1);
    assert_eq!(
        lasting.get("call_lasting", "o").await,
        Err(ResultError::NotFound("call_lasting".into()))
    );
    assert_eq!(lasting.count().await.unwrap(), 0);
}

async fn bounds(r: Results) {
    let bytes = r.open(limits(10, 100, HOUR)).await;
    bytes.put("call_big".into(), kept("o", &"x".repeat(200))).await;
    assert_eq!(
        bytes.get("call_big", "o").await,
        Err(ResultError::NotFound("call_big".into())),
        "larger than the byte bound: not kept"
    );
    bytes.put("call_small".into(), kept("o", &"x".repeat(90))).await;
    assert!(bytes.get("call_small", "o").await.is_ok(), "within the bound: kept");

    let count = r.open(limits(3, 1 << 20, HOUR)).await;
    for i in 0..6 {
        count.put(format!("call_{i}"), kept("o", &format!("r{i}"))).await;
    }
    let readable = |store: Arc<dyn ResultStore>, ids: Vec<String>| async move {
        let mut kept = Vec::new();
        for id in ids {
            if store.get(&id, "o").await.is_ok() {
                kept.push(id);
            }
        }
        kept
    };
    let all: Vec<String> = (0..7).map(|i| format!("call_{i}")).collect();
    assert_eq!(
        readable(count.clone(), all.clone()).await,
        ["call_3", "call_4", "call_5"],
        "the newest three"
    );
    // Kept again, a result is the newest: the oldest other one goes next.
    count.put("call_3".into(), kept("o", "r3 again")).await;
    count.put("call_6".into(), kept("o", "r6")).await;
    assert_eq!(
        readable(count.clone(), all).await,
        ["call_3", "call_5", "call_6"],
        "call_4 was the oldest"
    );
    assert_eq!(count.get("call_3", "o").await.map(|k| k.text), Ok("r3 again".into()));
    let zero = r.open(limits(0, 1 << 20, HOUR)).await;
    zero.put("call_none".into(), kept("o", "none")).await;
    assert!(zero.get("call_none", "o").await.is_err(), "a bound of zero keeps nothing");
}

async fn runtime_expiry(b: Backend) {
    let store = b.open().await;
    let runtime = Runtime::builder(Registry::global()).shared_store(store).build();
    let brief = runtime
        .kept_results(limits(10, 1 << 20, Duration::from_millis(1)))
        .expect("the store keeps results");
    let lasting = runtime.kept_results(limits(10, 1 << 20, HOUR)).unwrap();
    lasting.put("call_lasting".into(), kept("o", "lasting")).await;
    brief.put("call_brief".into(), kept("o", "brief")).await;
    tokio::time::sleep(Duration::from_millis(30)).await;
    let expired = runtime.expire(HOUR).await.unwrap();
    assert_eq!(expired.results, 1, "{expired:?}");
    assert_eq!(lasting.get("call_lasting", "o").await.map(|k| k.text), Ok("lasting".into()));
    assert_eq!(runtime.expire(HOUR).await.unwrap().results, 0, "once");
}

/// Where the command line finds a backend's store.
fn location(b: &Backend) -> String {
    match b {
        Backend::Sqlite(dir) => dir.path().join("pending.sqlite3").display().to_string(),
        Backend::Postgres { url, schema } => pg::url_in_schema(url, schema),
        Backend::Memory(_) => unreachable!("the memory store has no location"),
    }
}

async fn store_status(b: Backend) {
    let store = b.open().await;
    let receipts = store.receipts().expect("the store keeps receipts");
    let claim = |key: &str| ReceiptClaim {
        key: key.into(),
        tool_name: "send".into(),
        args_digest: "a".into(),
    };
    assert_eq!(receipts.begin(&claim("done"), false).await.unwrap(), Began::Run(None));
    receipts.finish("done", &json!("sent")).await.unwrap();
    assert_eq!(receipts.begin(&claim("running"), false).await.unwrap(), Began::Run(None));
    let results = store.results(ResultLimits::default()).unwrap();
    for id in ["call_1", "call_2"] {
        results.put(id.into(), kept("o", "whole")).await;
    }
    let at = location(&b);
    let ran = tokio::task::spawn_blocking(move || {
        let status = |json: bool| {
            let mut args = vec!["store", "status", "--store", &at];
            if json {
                args.push("--json");
            }
            let mut command = child_cli::toolsmith(&args);
            command.env(STORE_KEY_ENV, std::str::from_utf8(KEY).unwrap());
            child_cli::Ran::from(command.output().expect("the child runs"))
        };
        (status(true), status(false))
    });
    let (json_status, text_status) = ran.await.unwrap();
    assert!(json_status.ok, "{}", json_status.stderr);
    let status: Value = serde_json::from_str(&json_status.stdout).unwrap_or_else(|e| panic!("{e}: {}", json_status.stdout));
    assert_eq!(
        status["receipts"],
        json!({"running": 1, "interrupted": 0, "done": 1, "damaged": 0}),
        "{status}"
    );
    assert_eq!(status["kept_results"], 2, "{status}");
    assert!(text_status.ok, "{}", text_status.stderr);
    for line in ["receipts: 1 running, 0 interrupted, 1 done, 0 damaged", "kept results: 2"] {
        assert!(text_status.stdout.contains(line), "{line}: {}", text_status.stdout);
    }
    receipts.release("running").await.unwrap();
}
