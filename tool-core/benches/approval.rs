//! `approval`: what waiting for a person costs, on each store in the same run (in memory, a
//! SQLite file, and PostgreSQL from `TOOLSMITH_TEST_POSTGRES`, in a schema of its own dropped
//! at the end; skipped with a note when unset).
//!
//! - `pending/save_claim_remove`: the store operations of one waiting call (create it, claim it
//!   for a decision, remove it once it ran).
//! - `call/<store>/plain` and `call/<store>/approved`: a runtime call of a tool that needs no
//!   approval, and the same tool behind `require_approval` called and then approved (the call
//!   stored, claimed, bound and checked, run, removed). Their ratio is the added latency of an
//!   approval, without the person.
//!
//! The ratios between the rows of one run are what to read.

use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::Duration;

use criterion::{Criterion, criterion_group, criterion_main};
use support::stores::Stores;
use tool_core::prelude::*;
use tool_core::runtime::backend::PendingStore;
use tool_core::runtime::{Answer, Decision, Outcome, PendingCall, ResumeOptions, Runtime};

mod support {
    pub mod stores;
}

const KEY: &[u8] = b"approval bench key";

/// Adds two numbers
#[tool(id = "bench-add")]
async fn add(
    /// The first
    a: i64,
    /// The second
    b: i64,
) -> i64 {
    a.saturating_add(b)
}

/// Adds two numbers (asks a person first)
#[tool(id = "bench-add-gated", require_approval)]
async fn add_gated(
    /// The first
    a: i64,
    /// The second
    b: i64,
) -> i64 {
    a.saturating_add(b)
}

fn waiting(n: u64) -> PendingCall {
    let call = json!({"tool_call_id": format!("call_bench_{n}"), "tool_name": "bench-add-gated",
        "kind": "approval", "args": {"a": 1, "b": 2}, "created_at_ms": n});
    serde_json::from_value(call).expect("a waiting call")
}

/// One waiting call through the store: save, claim, remove.
async fn store_ops(store: &dyn PendingStore, next: &AtomicU64) {
    let call = waiting(next.fetch_add(1, Ordering::Relaxed));
    store.save(&call).await.expect("saved");
    let claimed = store.claim(&call.tool_call_id).await.expect("claimed");
    assert!(claimed.is_some(), "the call was claimed");
    store.remove(&call.tool_call_id).await.expect("removed");
}

async fn plain(runtime: &Runtime, next: &AtomicU64) {
    let id = format!("call_plain_{}", next.fetch_add(1, Ordering::Relaxed));
    let run = runtime
        .call("bench-add", json!({"a": 1, "b": 2}), CallOptions::default().id(id))
        .finish()
        .await;
    assert!(matches!(run.outcome, Outcome::Done(_)), "{:?}", run.outcome);
}

async fn approved(runtime: &Runtime, next: &AtomicU64) {
    let id = format!("call_gated_{}", next.fetch_add(1, Ordering::Relaxed));
    let run = runtime
        .call("bench-add-gated", json!({"a": 1, "b": 2}), CallOptions::default().id(id))
        .finish()
        .await;
    let Outcome::AwaitingApproval(waiting) = run.outcome else {
        panic!("{:?}", run.outcome)
    };
    let binding = waiting.call.binding.clone().expect("a binding");
    let run = runtime
        .decide(Decision::new(binding, Answer::Approve), ResumeOptions::default())
        .await
        .expect("decided")
        .finish()
        .await;
    assert!(matches!(run.outcome, Outcome::Done(_)), "{:?}", run.outcome);
}

fn approval(c: &mut Criterion) {
    let all = Stores::open("approval", KEY);
    let rt = &all.rt;
    let stores: Vec<(&str, Arc<dyn PendingStore>)> = all.named(|m| m as _, |s| s as _, |p| p as _);
    let next = AtomicU64::new(0);

    let mut group = c.benchmark_group("pending/save_claim_remove");
    group.sample_size(20).measurement_time(Duration::from_secs(5));
    for (name, store) in &stores {
        group.bench_function(*name, |b| b.to_async(rt).iter(|| store_ops(&**store, &next)));
    }
    group.finish();

    for (name, store) in &stores {
        let registry = Registry::from_iter([add::tool(), add_gated::tool()]);
        let runtime = Runtime::builder(registry).shared_store(store.clone()).build();
        let mut group = c.benchmark_group(format!("call/{name}"));
        group.sample_size(20).measurement_time(Duration::from_secs(5));
        group.bench_function("plain", |b| b.to_async(rt).iter(|| plain(&runtime, &next)));
        group.bench_function("approved", |b| b.to_async(rt).iter(|| approved(&runtime, &next)));
        group.finish();
    }
}

criterion_group!(benches, approval);
criterion_main!(benches);
