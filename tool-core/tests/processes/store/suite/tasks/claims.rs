//! Claims on the queue: oldest first and readable everywhere, exclusive among twenty concurrent
//! claimers, expired leases taken over with the stale owner refused, retries exhausted and
//! cancelled tasks never run.

use super::*;

pub(super) async fn round_trip(b: Backend) {
    let (one, two) = (b.open_tasks().await, b.open_tasks().await);
    for (id, at) in [("b", 2), ("a", 1), ("c", 3)] {
        one.enqueue_task(&task(id, at, 0)).await.unwrap();
    }
    let again = one.enqueue_task(&task("a", 9, 0)).await.unwrap_err().to_string();
    assert!(again.contains("already stored"), "{again}");
    let claimed = two.claim_task("owner-2", LONG).await.unwrap().unwrap();
    assert_eq!(claimed.task, task("a", 1, 0), "oldest first, every field kept");
    assert_eq!((claimed.lease.attempt, claimed.lease.owner.as_str()), (1, "owner-2"));
    let seen = one.get_task("a").await.unwrap().unwrap();
    assert_eq!(
        (seen.state, seen.attempts, seen.lease_owner.as_deref()),
        (TaskState::Running, 1, Some("owner-2"))
    );
    let output = ToolOutput::new(json!({"rows": 3}));
    assert!(two.complete_task(&claimed.lease, &output).await.unwrap());
    assert!(
        !two.complete_task(&claimed.lease, &output).await.unwrap(),
        "a result is written once"
    );
    let done = one.get_task("a").await.unwrap().unwrap();
    assert_eq!(
        (done.state, done.output),
        (TaskState::Completed, Some(output)),
        "read from another handle"
    );
    assert!(one.get_task("nope").await.unwrap().is_none());
    let listed = one.list_tasks(None, 10).await.unwrap();
    let ids: Vec<&str> = listed.iter().map(|t| t.task.task_id.as_str()).collect();
    assert_eq!(ids, ["c", "b", "a"], "newest first");
    let queued = one.list_tasks(Some(TaskState::Queued), 1).await.unwrap();
    assert_eq!(queued.len(), 1, "limited");
    let counts = two.count_tasks().await.unwrap();
    assert_eq!((counts.queued, counts.running, counts.completed), (2, 0, 1));
}

pub(super) async fn concurrent_claims(b: Backend) {
    const CLAIMERS: usize = 20;
    const TASKS: usize = 30;
    let first = b.open_tasks().await;
    for i in 0..TASKS {
        first.enqueue_task(&task(&format!("t{i:02}"), i as u64, 0)).await.unwrap();
    }
    let mut handles = Vec::new();
    for _ in 0..CLAIMERS {
        handles.push(b.open_tasks().await);
    }
    let barrier = Arc::new(tokio::sync::Barrier::new(CLAIMERS));
    let claimers = handles.into_iter().enumerate().map(|(n, store)| {
        let barrier = barrier.clone();
        tokio::spawn(async move {
            barrier.wait().await;
            let mut mine = Vec::new();
            while let Some(claimed) = store.claim_task(&format!("claimer-{n}"), LONG).await.unwrap() {
                mine.push(claimed.task.task_id);
            }
            mine
        })
    });
    let mut claimed: Vec<String> = futures::future::join_all(claimers)
        .await
        .into_iter()
        .flat_map(Result::unwrap)
        .collect();
    claimed.sort();
    let expected: Vec<String> = (0..TASKS).map(|i| format!("t{i:02}")).collect();
    assert_eq!(claimed, expected, "every task claimed exactly once");
    assert_eq!(first.count_tasks().await.unwrap().running, TASKS as u64);
}

/// Claims until a task comes (bounded: a lease that never expires fails the test).
async fn claim_when_expired(store: &dyn TaskStore, owner: &str) -> tool_core::runtime::backend::ClaimedTask {
    let deadline = Instant::now() + Duration::from_secs(20);
    loop {
        if let Some(claimed) = store.claim_task(owner, LONG).await.unwrap() {
            return claimed;
        }
        assert!(Instant::now() < deadline, "the expired lease was never taken over");
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
}

pub(super) async fn takeover(b: Backend) {
    let (a, other) = (b.open_tasks().await, b.open_tasks().await);
    a.enqueue_task(&task("x", 1, 1)).await.unwrap();
    let stale = a.claim_task("a", Duration::from_millis(200)).await.unwrap().unwrap();
    assert!(
        a.renew_task(&stale.lease, Duration::from_millis(200)).await.unwrap(),
        "the holder renews"
    );
    let taken = claim_when_expired(&*other, "b").await;
    assert_eq!(
        (taken.task.task_id.as_str(), taken.lease.attempt),
        ("x", 2),
        "a takeover is an attempt"
    );
    let output = ToolOutput::new(json!("stale"));
    assert!(!a.renew_task(&stale.lease, LONG).await.unwrap(), "the stale owner cannot renew");
    assert!(!a.complete_task(&stale.lease, &output).await.unwrap(), "nor complete");
    assert_eq!(
        a.fail_task(&stale.lease, &ToolError::new("late"), true).await.unwrap(),
        None,
        "nor fail"
    );
    assert!(other.complete_task(&taken.lease, &ToolOutput::new(json!("fresh"))).await.unwrap());
    let done = a.get_task("x").await.unwrap().unwrap();
    assert_eq!((done.state, done.attempts), (TaskState::Completed, 2));
    assert_eq!(
        done.output.unwrap().value(),
        json!("fresh"),
        "only the current owner's result is kept"
    );
}

pub(super) async fn retries_and_cancel(b: Backend) {
    let s = b.open_tasks().await;
    s.enqueue_task(&task("retried", 1, 1)).await.unwrap();
    let first = s.claim_task("w", LONG).await.unwrap().unwrap();
    let error = ToolError::new("boom");
    assert_eq!(s.fail_task(&first.lease, &error, true).await.unwrap(), Some(TaskState::Queued));
    let second = s.claim_task("w", LONG).await.unwrap().unwrap();
    assert_eq!(second.lease.attempt, 2);
    assert_eq!(
        s.fail_task(&second.lease, &ToolError::new("boom 2"), true).await.unwrap(),
        Some(TaskState::Failed)
    );
    let failed = s.get_task("retried").await.unwrap().unwrap();
    assert_eq!((failed.state, failed.attempts), (TaskState::Failed, 2));
    assert_eq!(failed.error.unwrap().message(), "boom 2", "the last error is kept");

    s.enqueue_task(&task("abandoned", 2, 0)).await.unwrap();
    s.claim_task("dies", Duration::from_millis(100)).await.unwrap().unwrap();
    tokio::time::sleep(Duration::from_millis(300)).await;
    assert!(s.claim_task("w", LONG).await.unwrap().is_none(), "no retries left: not taken over");
    let abandoned = s.get_task("abandoned").await.unwrap().unwrap();
    assert_eq!(abandoned.state, TaskState::Failed);
    let message = abandoned.error.unwrap().message().to_owned();
    assert!(
        message.contains("stopped renewing its lease") && message.contains("max_retries = 0"),
        "{message}"
    );

    s.enqueue_task(&task("cancelled", 3, 0)).await.unwrap();
    assert!(s.cancel_task("cancelled").await.unwrap());
    assert!(!s.cancel_task("cancelled").await.unwrap(), "cancelled once");
    assert!(
        s.claim_task("w", LONG).await.unwrap().is_none(),
        "a cancelled task is never claimed"
    );
    s.enqueue_task(&task("running", 4, 0)).await.unwrap();
    let running = s.claim_task("w", LONG).await.unwrap().unwrap();
    assert!(s.cancel_task("running").await.unwrap());
    assert!(
        !s.renew_task(&running.lease, LONG).await.unwrap(),
        "its owner learns it at the next renewal"
    );
    assert!(!s.complete_task(&running.lease, &ToolOutput::new(json!(1))).await.unwrap());
    let counts = s.count_tasks().await.unwrap();
    assert_eq!((counts.failed, counts.cancelled, counts.queued, counts.running), (2, 2, 0, 0));
}
