//! Retention: `Runtime::expire` removes what ended and keeps what still waits or runs.

use super::*;

/// `Runtime::expire` removes what ended (tasks completed, failed or cancelled; receipts with a
/// result) and keeps what still waits or runs (queued and running tasks, running and interrupted
/// receipts); `RuntimeBuilder::retention` sweeps on its own.
pub(super) async fn retention(b: Backend) {
    let tasks = b.open_tasks().await;
    let idle = TaskOptions::default().start_on_build(false);
    let runtime = Runtime::builder(Registry::global())
        .shared_store(b.open().await)
        .task_store(tasks.clone(), idle.clone())
        .build();
    let prefix = fresh_ledger();
    let id = |what: &str| format!("{prefix}-{what}");
    for (n, what) in ["completed", "failed", "cancelled", "running", "queued"].into_iter().enumerate() {
        tasks.enqueue_task(&task(&id(what), n as u64, 0)).await.unwrap();
    }
    assert!(tasks.cancel_task(&id("cancelled")).await.unwrap());
    for what in ["completed", "failed", "running"] {
        // Claims go oldest first: completed, failed, (not the cancelled one) running.
        let claimed = tasks.claim_task("w", LONG).await.unwrap().unwrap();
        assert_eq!(claimed.task.task_id, id(what));
        match what {
            "completed" => assert!(tasks.complete_task(&claimed.lease, &ToolOutput::new(json!(1))).await.unwrap()),
            "failed" => assert!(
                tasks
                    .fail_task(&claimed.lease, &ToolError::new("no"), false)
                    .await
                    .unwrap()
                    .is_some()
            ),
            _ => {}
        }
    }
    let receipts = runtime.receipts();
    for what in ["done", "running", "interrupted"] {
        assert_eq!(receipts.begin(&receipt(&id(what)), false).await.unwrap(), Began::Run(None));
    }
    receipts.finish(&id("done"), &json!("recorded")).await.unwrap();
    receipts.interrupt(&id("interrupted")).await.unwrap();

    let kept = runtime.expire(Duration::from_secs(86_400)).await.unwrap();
    assert_eq!((kept.tasks, kept.receipts), (0, 0), "a day's retention keeps everything");
    tokio::time::sleep(Duration::from_millis(30)).await;
    let expired = runtime.expire(Duration::from_millis(1)).await.unwrap();
    assert_eq!((expired.tasks, expired.receipts), (3, 1), "{expired:?}");
    for (what, kept) in [
        ("completed", false),
        ("failed", false),
        ("cancelled", false),
        ("running", true),
        ("queued", true),
    ] {
        assert_eq!(tasks.get_task(&id(what)).await.unwrap().is_some(), kept, "{what}");
    }
    assert_eq!(
        receipts.begin(&receipt(&id("done")), false).await.unwrap(),
        Began::Run(None),
        "forgotten"
    );
    assert!(matches!(
        receipts.begin(&receipt(&id("running")), false).await.unwrap(),
        Began::Busy(_)
    ));
    assert!(matches!(
        receipts.begin(&receipt(&id("interrupted")), false).await.unwrap(),
        Began::Interrupted(_)
    ));

    // A runtime built with a retention sweeps by itself.
    let running = tasks.claim_task("w", LONG).await.unwrap().unwrap();
    assert_eq!(running.task.task_id, id("queued"));
    assert!(tasks.complete_task(&running.lease, &ToolOutput::new(json!(2))).await.unwrap());
    let _sweeping = Runtime::builder(Registry::global())
        .shared_store(b.open().await)
        .task_store(tasks.clone(), idle)
        .retention(Duration::from_millis(1))
        .build();
    let deadline = Instant::now() + Duration::from_secs(20);
    while tasks.get_task(&id("queued")).await.unwrap().is_some() {
        assert!(Instant::now() < deadline, "the retention's sweep never removed the ended task");
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    assert!(tasks.get_task(&id("running")).await.unwrap().is_some(), "a running task is kept");
}
