//! `provider_resolve`: resolving five Arcade tools (a definition fetched per slug, a schema
//! built from each) against a local fake that answers every request after 20 ms, standing in
//! for a platform one round trip away. Three ways, in the same run: the baseline fetches the
//! five definitions one after another with a hand-written `reqwest` GET each (what resolution
//! cost before definitions were fetched together); `resolve_uncached` is the provider with
//! its definition cache off (fetches together, eight at a time); `resolve_cached` is the
//! provider as configured by default, resolving tools it resolved a moment ago (what a
//! per-request or per-caller resolution costs).

#[path = "../tests/support/arcade_fake.rs"]
mod arcade_fake;
#[path = "../tests/support/misbehave.rs"]
mod misbehave;

use std::time::Duration;

use criterion::{Criterion, criterion_group, criterion_main};
use serde_json::Value;
use tool_core::provider::{ResolveOptions, ToolProvider};
use tool_providers::ArcadeToolProvider;

const KEY: &str = "arc_bench_key";
const SLUGS: [&str; 5] = [
    "Math.Add",
    "Math.Divide",
    "Github.GetRepository",
    "Gmail.ListEmails",
    "Slack.SendMessage",
];
const ROUND_TRIP: Duration = Duration::from_millis(20);

fn provider_resolve(c: &mut Criterion) {
    let rt = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .unwrap();
    let fake = rt.block_on(arcade_fake::ArcadeFake::start(KEY));
    fake.misbehave(|m| m.slow = Some(ROUND_TRIP));
    let cached = ArcadeToolProvider::new(KEY).base_url(&fake.url);
    let uncached = cached.clone().definition_cache_ttl(Duration::ZERO);
    let client = reqwest::Client::new();
    let slugs = || SLUGS.map(String::from).to_vec();
    let resolve = |provider: &ArcadeToolProvider| {
        let provider = provider.clone();
        async move {
            let tools = provider.resolve_tools(slugs(), ResolveOptions::default()).await.unwrap();
            assert_eq!(tools.len(), SLUGS.len());
            tools
        }
    };

    // Every way finds the five tools before anything is timed (and the cache is warm).
    rt.block_on(async {
        resolve(&cached).await;
        resolve(&uncached).await;
        assert_eq!(baseline(&client, &fake.url).await.len(), SLUGS.len());
    });

    let mut group = c.benchmark_group("provider_resolve_5_tools_20ms_away");
    group.sample_size(20).measurement_time(Duration::from_secs(8));
    group.bench_function("resolve_cached", |b| b.to_async(&rt).iter(|| resolve(&cached)));
    group.bench_function("resolve_uncached", |b| b.to_async(&rt).iter(|| resolve(&uncached)));
    group.bench_function("baseline_sequential_reqwest_gets", |b| {
        b.to_async(&rt).iter(|| baseline(&client, &fake.url))
    });
    group.finish();
}

/// The five definitions, one GET after another.
async fn baseline(client: &reqwest::Client, base: &str) -> Vec<Value> {
    let mut out = Vec::new();
    for slug in SLUGS {
        let resp = client
            .get(format!("{base}/v1/tools/{slug}"))
            .header(reqwest::header::AUTHORIZATION, KEY)
            .header(reqwest::header::ACCEPT, "application/json")
            .send()
            .await
            .unwrap();
        out.push(serde_json::from_slice(&resp.bytes().await.unwrap()).unwrap());
    }
    out
}

criterion_group!(benches, provider_resolve);
criterion_main!(benches);
