//! `task_queue`: one background task through the durable queue — enqueue, claim, complete —
//! on each store in the same run: in memory, a SQLite file, and PostgreSQL (from
//! `TOOLSMITH_TEST_POSTGRES`, in a schema of its own dropped at the end; skipped with a note
//! when unset). The ratios between them are what to read.

use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::Duration;

use criterion::{Criterion, criterion_group, criterion_main};
use support::stores::Stores;
use tool_core::ToolOutput;
use tool_core::runtime::backend::{NewTask, TaskStore};

mod support {
    pub mod stores;
}

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
    let all = Stores::open("tasks", KEY);
    let rt = &all.rt;
    let stores: Vec<(&str, Arc<dyn TaskStore>)> = all.named(|m| m as _, |s| s as _, |p| p as _);
    let mut group = c.benchmark_group("task_queue/enqueue_claim_complete");
    group.sample_size(20).measurement_time(Duration::from_secs(5));
    let next = AtomicU64::new(0);
    for (name, store) in &stores {
        group.bench_function(*name, |b| b.to_async(rt).iter(|| one(&**store, &next)));
    }
    group.finish();
}

criterion_group!(benches, task_queue);
criterion_main!(benches);
