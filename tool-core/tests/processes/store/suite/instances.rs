//! Several instances on one PostgreSQL: the store's bus (`LISTEN/NOTIFY`, large messages through
//! a table, liveness of instances), expiry past a retention, and fifty approvals of one call
//! spread over three runtimes (each its own instance) running the tool once. Each test has a
//! schema of its own and drops it at its end.

use std::future::Future;
use std::pin::Pin;
use std::sync::Arc;
use std::time::Duration;

use serde_json::json;
use tool_core::Registry;
use tool_core::call::CallOptions;
use tool_core::runtime::backend::PendingStore;
use tool_core::runtime::{Outcome, PostgresStore, ResumeOptions, Runtime};

use super::{options, pg};

type Test = fn(String) -> Pin<Box<dyn Future<Output = Result<(), String>> + Send>>;

/// The tests of several instances.
pub const TESTS: &[(&str, Test)] = &[
    ("the_bus_carries_messages_between_instances_of_one_schema_only", |url| {
        Box::pin(bus_messages(url))
    }),
    ("calls_past_the_retention_expire_without_running", |url| Box::pin(expiry(url))),
    ("fifty_approvals_over_three_instances_run_the_tool_once", |url| {
        Box::pin(three_instances(url))
    }),
];

async fn next_message(
    rx: &mut tokio::sync::broadcast::Receiver<Arc<tool_core::runtime::backend::BusMessage>>,
) -> Arc<tool_core::runtime::backend::BusMessage> {
    tokio::time::timeout(Duration::from_secs(20), rx.recv())
        .await
        .expect("a message within 20 s")
        .expect("the bus is open")
}

async fn bus_messages(url: String) -> Result<(), String> {
    let schema = pg::fresh_schema(&url).await?;
    let other_schema = pg::fresh_schema(&url).await?;
    let a = PostgresStore::connect_with(&url, options(&schema))
        .await
        .map_err(|e| e.to_string())?;
    let b = PostgresStore::connect_with(&url, options(&schema))
        .await
        .map_err(|e| e.to_string())?;
    let elsewhere = PostgresStore::connect_with(&url, options(&other_schema))
        .await
        .map_err(|e| e.to_string())?;
    let (bus_a, bus_b, bus_x) = (a.bus().unwrap(), b.bus().unwrap(), elsewhere.bus().unwrap());
    for bus in [&bus_a, &bus_b, &bus_x] {
        bus.listening().await.map_err(|e| e.to_string())?;
    }
    let (mut rx_a, mut rx_x) = (bus_a.subscribe(), bus_x.subscribe());
    // To one instance: a small message inline, a large one through the table.
    bus_b
        .publish(Some(bus_a.instance_id()), "small", &json!({"n": 1}))
        .await
        .map_err(|e| e.to_string())?;
    let large = "x".repeat(100_000);
    bus_b
        .publish(Some(bus_a.instance_id()), "large", &json!({"text": large}))
        .await
        .map_err(|e| e.to_string())?;
    // To another instance: A never sees it. To every instance: A sees it, the other schema not.
    bus_b
        .publish(Some(bus_b.instance_id()), "for-b", &json!({}))
        .await
        .map_err(|e| e.to_string())?;
    bus_b.publish(None, "all", &json!({})).await.map_err(|e| e.to_string())?;
    let got: Vec<_> = [
        next_message(&mut rx_a).await,
        next_message(&mut rx_a).await,
        next_message(&mut rx_a).await,
    ]
    .into();
    let topics: Vec<&str> = got.iter().map(|m| m.topic.as_str()).collect();
    assert_eq!(topics, ["small", "large", "all"]);
    assert_eq!(got[1].body["text"].as_str().map(str::len), Some(100_000));
    assert!(got.iter().all(|m| m.from == bus_b.instance_id()));
    bus_x.publish(None, "marker", &json!({})).await.map_err(|e| e.to_string())?;
    assert_eq!(
        next_message(&mut rx_x).await.topic,
        "marker",
        "the other schema's instance heard only its own"
    );
    // A message too large for every instance is refused, not cut.
    assert!(bus_b.publish(None, "huge", &json!({"text": large})).await.is_err());
    // Liveness: both are alive, an unknown one is not; seals are shared by the instances.
    assert!(bus_b.alive(bus_a.instance_id()).await.map_err(|e| e.to_string())?);
    assert!(!bus_b.alive("no-such-instance").await.map_err(|e| e.to_string())?);
    let tag = bus_a.seal(&["run", "instance"]);
    assert!(bus_b.verify(&["run", "instance"], &tag));
    assert!(!bus_b.verify(&["run", "other"], &tag));
    drop((a, b, elsewhere));
    pg::drop_schema(&url, &schema).await;
    pg::drop_schema(&url, &other_schema).await;
    Ok(())
}

async fn expiry(url: String) -> Result<(), String> {
    let schema = pg::fresh_schema(&url).await?;
    let store = PostgresStore::connect_with(&url, options(&schema))
        .await
        .map_err(|e| e.to_string())?;
    let runtime = Runtime::builder(Registry::global()).store(store).build();
    let ledger = super::fresh_ledger();
    let mut ids = Vec::new();
    for _ in 0..2 {
        let run = runtime
            .call("suite-approve", json!({"ledger": ledger}), CallOptions::default())
            .finish()
            .await;
        let Outcome::AwaitingApproval(waiting) = run.outcome else {
            return Err(format!("{:?}", run.outcome));
        };
        ids.push(waiting.id().to_owned());
    }
    // A retention of a day keeps them; one of a millisecond (once they are older) expires both.
    assert!(
        runtime
            .expire(Duration::from_secs(86_400))
            .await
            .map_err(|e| e.to_string())?
            .calls
            .is_empty()
    );
    tokio::time::sleep(Duration::from_millis(20)).await;
    let expired = runtime.expire(Duration::from_millis(1)).await.map_err(|e| e.to_string())?;
    let mut expired: Vec<String> = expired.calls.into_iter().map(|c| c.tool_call_id).collect();
    expired.sort();
    ids.sort();
    assert_eq!(expired, ids);
    assert!(runtime.pending().await.map_err(|e| e.to_string())?.is_empty());
    let refused = runtime
        .approve(&ids[0], ResumeOptions::default())
        .await
        .err()
        .map(|e| e.to_string())
        .unwrap_or_default();
    assert!(refused.contains("no pending call"), "{refused}");
    assert_eq!(super::ran(&ledger), 0, "an expired call never runs");
    pg::drop_schema(&url, &schema).await;
    Ok(())
}

async fn three_instances(url: String) -> Result<(), String> {
    const APPROVALS: usize = 50;
    let schema = pg::fresh_schema(&url).await?;
    let mut runtimes = Vec::new();
    for _ in 0..3 {
        let store = PostgresStore::connect_with(&url, options(&schema).max_connections(8)).await;
        runtimes.push(
            Runtime::builder(Registry::global())
                .store(store.map_err(|e| e.to_string())?)
                .build(),
        );
    }
    // The side effect is a row in a table (the tool is `pg-effect`).
    let client = pg::connect(&url).await?;
    let create = format!("CREATE TABLE {schema}.effects (call TEXT NOT NULL)");
    client.batch_execute(&create).await.map_err(|e| e.to_string())?;
    let args = json!({"url": url, "table": format!("{schema}.effects"), "call": "three"});
    let run = runtimes[0].call("pg-effect", args, CallOptions::default()).finish().await;
    let Outcome::AwaitingApproval(waiting) = run.outcome else {
        return Err(format!("{:?}", run.outcome));
    };
    let barrier = Arc::new(tokio::sync::Barrier::new(APPROVALS));
    let approvals = (0..APPROVALS).map(|i| {
        let (runtime, barrier, id) = (runtimes[i % 3].clone(), barrier.clone(), waiting.id().to_owned());
        tokio::spawn(async move {
            barrier.wait().await;
            match runtime.approve(&id, ResumeOptions::default()).await {
                Ok(stream) => Ok(stream.finish().await.outcome),
                Err(e) => Err(e.to_string()),
            }
        })
    });
    let outcomes: Vec<_> = futures::future::join_all(approvals).await.into_iter().map(Result::unwrap).collect();
    let done = outcomes.iter().filter(|o| matches!(o, Ok(Outcome::Done(_)))).count();
    assert_eq!(done, 1, "exactly one approval ran the call: {outcomes:?}");
    let count = client.query_one(&format!("SELECT count(*) FROM {schema}.effects"), &[]).await;
    let count: i64 = count.map_err(|e| e.to_string())?.get(0);
    assert_eq!(count, 1, "the tool ran once");
    assert!(runtimes[2].pending().await.map_err(|e| e.to_string())?.is_empty());
    pg::drop_schema(&url, &schema).await;
    Ok(())
}
