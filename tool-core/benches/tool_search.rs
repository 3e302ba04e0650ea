//! `tool_search`: the search index over 1,000 and 10,000 realistic tools (build, 1,000
//! queries), and the deferred export of a 10,000-tool catalog against the plain export of the
//! same catalog, in the same run. Before the criterion groups it prints, per size, the index's
//! build time and memory and the p50/p99 latency of single queries.

use std::time::Instant;

use criterion::{BenchmarkId, Criterion, criterion_group, criterion_main};
use serde_json::Value;
use tool_core::catalog::{Catalog, LoadedTools, SearchIndex, ToolSearchMode};
use tool_core::spec::ToolSpec;
use tool_core::{Dialect, DynamicTool, Registry};

#[path = "support/tool_corpus.rs"]
mod tool_corpus;

#[path = "support/live_bytes.rs"]
mod live_bytes;

/// Bytes allocated and not freed, to weigh the index.
#[global_allocator]
static ALLOC: live_bytes::Counting = live_bytes::Counting;

/// 1,000 queries: the hand-written ones, cycled.
fn queries() -> Vec<&'static str> {
    tool_corpus::QUERIES.iter().map(|(q, _)| *q).cycle().take(1000).collect()
}

fn report(n: usize, specs: &[ToolSpec]) {
    let before = live_bytes::live();
    let start = Instant::now();
    let index = SearchIndex::new(specs.iter());
    let build = start.elapsed();
    let memory = live_bytes::live() - before;
    let mut times: Vec<u128> = queries()
        .into_iter()
        .map(|q| {
            let start = Instant::now();
            std::hint::black_box(index.search(q, 5));
            start.elapsed().as_nanos()
        })
        .collect();
    times.sort_unstable();
    let at = |p: f64| times[((times.len() as f64 * p) as usize).min(times.len() - 1)] as f64 / 1000.0;
    println!(
        "tool_search n={n}: build {:.1} ms, index {:.1} MiB, query p50 {:.1} µs, p99 {:.1} µs",
        build.as_secs_f64() * 1000.0,
        memory as f64 / (1024.0 * 1024.0),
        at(0.50),
        at(0.99)
    );
}

fn catalog(specs: &[ToolSpec]) -> Catalog {
    let tools = specs.iter().enumerate().map(|(i, s)| {
        DynamicTool::builder(s.id.clone(), s.description.clone())
            .input_schema(s.schemas.input.clone())
            .with_spec(|spec| {
                spec.presentation.namespace = s.presentation.namespace.clone();
                // A core set of 20 loads up front; the rest waits for search.
                spec.presentation.defer_loading = i >= 20;
            })
            .handler(|_, _| async { Ok(Value::Null) })
            .unwrap()
    });
    Catalog::new("bench", "1", Registry::from_iter(tools))
}

fn tool_search(c: &mut Criterion) {
    let sizes = [1_000, 10_000];
    for n in sizes {
        report(n, &tool_corpus::tools(n));
    }
    let mut group = c.benchmark_group("tool_search");
    group.sample_size(10);
    for n in sizes {
        let specs = tool_corpus::tools(n);
        group.bench_with_input(BenchmarkId::new("build", n), &specs, |b, specs| {
            b.iter(|| SearchIndex::new(specs.iter()).len())
        });
        let index = SearchIndex::new(specs.iter());
        let queries = queries();
        group.bench_with_input(BenchmarkId::new("queries_x1000", n), &queries, |b, queries| {
            b.iter(|| queries.iter().map(|q| index.search(q, 5).len()).sum::<usize>())
        });
    }
    group.finish();

    let catalog = catalog(&tool_corpus::tools(10_000));
    let loaded = LoadedTools::default();
    let mut group = c.benchmark_group("deferred_export_10000");
    group.sample_size(10);
    for dialect in [Dialect::OpenAiResponses, Dialect::Anthropic, Dialect::OpenAiChat] {
        // Warm both: the entries are cached at the first export.
        let _ = catalog.export(dialect).unwrap();
        let _ = catalog.export_deferred(dialect, ToolSearchMode::Native, &loaded).unwrap();
        group.bench_function(BenchmarkId::new("plain", dialect.as_str()), |b| {
            b.iter(|| serde_json::to_vec(&catalog.export(dialect).unwrap()).unwrap().len())
        });
        group.bench_function(BenchmarkId::new("deferred", dialect.as_str()), |b| {
            b.iter(|| {
                let export = catalog.export_deferred(dialect, ToolSearchMode::Native, &loaded).unwrap();
                serde_json::to_vec(&export).unwrap().len()
            })
        });
    }
    group.finish();
}

criterion_group!(benches, tool_search);
criterion_main!(benches);
