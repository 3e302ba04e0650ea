//! `task_queue`: one background task through the durable queue — enqueue, claim, complete —
//! on each store in the same run: in memory, a SQLite file, and PostgreSQL (from
//! `TOOLSMITH_TEST_POSTGRES`, in a schema of its own dropped at the end; skipped with a note
//! when unset). The ratios between them are what to read.

use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;
use std::time::Duration;

use criterion::{criterion_group, criterion_main, Criterion};
use tool_core::runtime::{MemoryStore, NewTask, PostgresOptions, PostgresStore, SqliteStore, TaskStore};
use tool_core::ToolOutput;

const KEY: &[u8] = b"task_queue bench key";

fn task(n: u64) -> NewTask {
    let task = serde_json::json!({"task_id": format!("task_bench_{n}"), "tool_name": "bench", "args": {"n": n},
        "context": {"tenant": "t1"}, "tool_call_id": format!("call_bench_{n}"), "max_retries": 2, "created_at_ms": n});
    serde_json::from_value(task).expect("a task")
}

/// One task through the queue: enqueue, claim, complete.
async fn one(store: &dyn TaskStore, next: &AtomicU64) {
    let n = next.fetch_add(1, Ordering::Relaxed);
    store.enqueue_task(&task(n)).await.expect("enqueued");
    let claimed = store
        .claim_task("bench", Duration::from_secs(30))
        .await
        .expect("claimed")
        .expect("a task");
    let done = store
        .complete_task(&claimed.lease, &ToolOutput::new(serde_json::json!({"ok": n})))
        .await;
    assert!(done.expect("completed"));
}

fn task_queue(c: &mut Criterion) {
    let rt = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .expect("a runtime");
    let dir = tempfile::tempdir().expect("a directory");
    let mut stores: Vec<(&str, Arc<dyn TaskStore>)> = vec![
        ("memory", Arc::new(MemoryStore::new())),
        (
            "sqlite",
            Arc::new(SqliteStore::open_with_key(dir.path().join("bench.sqlite3"), KEY).expect("sqlite")),
        ),
    ];
    let url = std::env::var("TOOLSMITH_TEST_POSTGRES").ok().filter(|u| !u.is_empty());
    let schema = format!("ts_bench_tasks_{}", std::process::id());
    match &url {
        Some(url) => {
            let options = PostgresOptions::default().schema(&schema).expect("a schema").key(KEY);
            let store = rt.block_on(PostgresStore::connect_with(url, options)).expect("postgres");
            stores.push(("postgres", Arc::new(store)));
        }
        None => eprintln!("task_queue: TOOLSMITH_TEST_POSTGRES is not set; PostgreSQL is not measured"),
    }
    let mut group = c.benchmark_group("task_queue/enqueue_claim_complete");
    group.sample_size(20).measurement_time(Duration::from_secs(5));
    let next = AtomicU64::new(0);
    for (name, store) in &stores {
        group.bench_function(*name, |b| b.to_async(&rt).iter(|| one(&**store, &next)));
    }
    group.finish();
    drop(stores);
    if let Some(url) = url {
        rt.block_on(async {
            if let Ok((client, connection)) = tokio_postgres::connect(&url, tokio_postgres::NoTls).await {
                tokio::spawn(connection);
                let _ = client.batch_execute(&format!("DROP SCHEMA IF EXISTS {schema} CASCADE")).await;
            }
        });
    }
}

criterion_group!(benches, task_queue);
criterion_main!(benches);
