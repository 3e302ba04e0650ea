//! `isolation_overhead`: the same tiny tool called through the registry in process, on the
//! blocking pool and in a child process (`isolate = "process"`), in the same run: what a call
//! pays for each placement; and `policy_read`, what choosing the placement adds to every call.
//!
//! This binary is its own tool worker (`main` calls `worker_main()` first).

use criterion::{Criterion, criterion_group};
use tool_core::prelude::*;

/// Adds one
#[tool(id = "bench-tiny")]
async fn tiny(
    /// The number
    n: u64,
) -> u64 {
    n + 1
}

/// Adds one, on the blocking pool
#[tool(id = "bench-tiny-blocking", blocking)]
async fn tiny_blocking(
    /// The number
    n: u64,
) -> u64 {
    n + 1
}

/// Adds one, in a child process
#[tool(id = "bench-tiny-isolated", isolate = "process")]
async fn tiny_isolated(
    /// The number
    n: u64,
) -> u64 {
    n + 1
}

const ARGS: &str = r#"{"n": 41}"#;

fn placements(c: &mut Criterion) {
    let rt = tokio::runtime::Builder::new_multi_thread().enable_all().build().unwrap();
    let registry = Registry::global();
    let mut group = c.benchmark_group("isolation_overhead");
    for (name, id) in [
        ("in_process", "bench-tiny"),
        ("blocking_pool", "bench-tiny-blocking"),
        ("isolated_process", "bench-tiny-isolated"),
    ] {
        if id == "bench-tiny-isolated" {
            group.sample_size(20);
        }
        group.bench_function(name, |b| {
            b.to_async(&rt).iter(|| async {
                let out = registry.call(id, std::hint::black_box(ARGS), CallOptions::default()).await.unwrap();
                assert_eq!(out.json.get(), "42");
                out.json
            })
        });
    }
    // What every call now pays for choosing its placement: reading the registry's policy.
    group.bench_function("policy_read", |b| b.iter(|| std::hint::black_box(registry.execution())));
    group.finish();
}

criterion_group!(benches, placements);

fn main() {
    tool_core::isolate::worker_main();
    benches();
    Criterion::default().configure_from_args().final_summary();
}
