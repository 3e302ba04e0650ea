//! `provider_call`: one Arcade tool call through Toolsmith (a resolved tool in a `Registry`:
//! input validation against the schema built from `value_schema`, the user id from the
//! request context, the shared HTTP layer with its size cap and retry logic, `output.value`
//! extracted) against the hand-written baseline (one `reqwest` POST of the same body with the
//! same client settings, the body parsed and `output.value` taken), both against the same local
//! fake in the same run. The ratio is the price of the provider layer over the wire.

#[path = "../tests/support/arcade_fake.rs"]
mod arcade_fake;
#[path = "../tests/support/misbehave.rs"]
mod misbehave;

use criterion::{Criterion, criterion_group, criterion_main};
use serde_json::{Value, json};
use tool_core::provider::{ResolveOptions, ToolProvider};
use tool_core::{CallOptions, Registry};
use tool_providers::ArcadeToolProvider;

const KEY: &str = "arc_bench_key";

fn provider_call(c: &mut Criterion) {
    let rt = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .unwrap();
    let (fake, registry) = rt.block_on(async {
        let fake = arcade_fake::ArcadeFake::start(KEY).await;
        let arcade = ArcadeToolProvider::new(KEY).base_url(&fake.url);
        let tools = arcade
            .resolve_tools(vec!["Math.Add".into()], ResolveOptions::default())
            .await
            .unwrap();
        let registry = Registry::new();
        for (_, tool) in tools {
            registry.insert(tool).unwrap();
        }
        (fake, registry)
    });
    let client = reqwest::Client::new();
    let url = format!("{}/v1/tools/execute", fake.url);
    let args = json!({"a": 2, "b": 3});
    let options = || CallOptions::with_context(json!({"mastra__resourceId": "bench-user"}));

    // Both paths answer the same value before anything is timed.
    rt.block_on(async {
        let ours = registry.call("Math.Add", args.clone(), options()).await.unwrap().value();
        let raw = baseline(&client, &url, &args).await;
        assert_eq!(ours, raw);
    });

    let mut group = c.benchmark_group("provider_call");
    group.bench_function("toolsmith_registry_call", |b| {
        b.to_async(&rt)
            .iter(|| async { registry.call("Math.Add", args.clone(), options()).await.unwrap().value() })
    });
    group.bench_function("baseline_reqwest_post", |b| b.to_async(&rt).iter(|| baseline(&client, &url, &args)));
    group.finish();
}

async fn baseline(client: &reqwest::Client, url: &str, args: &Value) -> Value {
    let body = json!({"tool_name": "Math.Add", "input": args, "user_id": "bench-user"});
    let resp = client
        .post(url)
        .header(reqwest::header::AUTHORIZATION, KEY)
        .header(reqwest::header::ACCEPT, "application/json")
        .json(&body)
        .send()
        .await
        .unwrap();
    let bytes = resp.bytes().await.unwrap();
    let v: Value = serde_json::from_slice(&bytes).unwrap();
    v["output"]["value"].clone()
}

criterion_group!(benches, provider_call);
criterion_main!(benches);
