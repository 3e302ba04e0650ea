//! The queue under runtimes: a background call queued by one runtime run by another, an
//! idempotent task's effect once across attempts, a running task cancelled at once, and a task
//! that ended without running kept and never claimed.

use super::*;

/// How many times each ledger's background tool ran, and in which runtime's worker.
static RUNS: Mutex<Option<HashMap<String, u32>>> = Mutex::new(None);

/// Counts a run in its ledger, in the background
#[tool(id = "suite-bg", background(enabled = true))]
async fn suite_bg(
    /// The ledger counting the runs
    ledger: String,
) -> String {
    let mut runs = RUNS.lock().unwrap_or_else(|p| p.into_inner());
    *runs.get_or_insert_with(HashMap::new).entry(ledger.clone()).or_default() += 1;
    format!("ran {ledger}")
}

fn runs(ledger: &str) -> u32 {
    let runs = RUNS.lock().unwrap_or_else(|p| p.into_inner());
    runs.as_ref().and_then(|r| r.get(ledger).copied()).unwrap_or(0)
}

pub(super) async fn two_runtimes(b: Backend) {
    let ledger = fresh_ledger();
    let fast = TaskOptions::default().poll_interval(Duration::from_millis(20));
    // A queues but runs nothing (no slot); B runs what it claims.
    let a = Runtime::builder(Registry::global())
        .shared_store(b.open().await)
        .task_store(b.open_tasks().await, fast.clone())
        .max_background_tasks(0)
        .build();
    let b_runtime = Runtime::builder(Registry::global())
        .shared_store(b.open().await)
        .task_store(b.open_tasks().await, fast)
        .build();
    let run = a.call("suite-bg", json!({"ledger": ledger}), CallOptions::default()).finish().await;
    let Outcome::Done(output) = &run.outcome else {
        panic!("{:?}", run.outcome)
    };
    assert_eq!(output.value(), json!(format!("ran {ledger}")));
    let kinds: Vec<&str> = run.events.iter().map(|e| e.raw.type_name()).collect();
    assert_eq!(
        kinds,
        ["tool-call", "tool-result", "background-task-started", "background-task-completed"],
        "the placeholder, then the end the other runtime recorded"
    );
    assert_eq!(runs(&ledger), 1, "ran once");
    let started = run.events.iter().find_map(|e| match &e.raw.kind {
        RunEventKind::BackgroundTaskStarted { task_id } => Some(task_id.clone()),
        _ => None,
    });
    let record = a.task(&started.unwrap()).await.unwrap().unwrap();
    assert_eq!(record.state, TaskState::Completed);
    assert_eq!(record.lease_owner.as_deref(), b_runtime.task_worker_id(), "B ran it");
    assert_eq!(record.task.args, json!({"ledger": ledger}));
}

/// Counts a run in its ledger, then is cut short (aborted, as by a timeout) before its receipt
/// is recorded; a run told it follows an interrupted one finds the effect and answers without
/// counting again
#[tool(id = "suite-bg-once", idempotent = "recover", background(enabled = true, max_retries = 3))]
async fn suite_bg_once(
    /// The ledger counting the runs
    ledger: String,
    #[ctx] cx: ToolContext,
) -> Result<String, ToolError> {
    if cx.idempotency_key().after_interruption() {
        return Ok(format!("found {ledger}"));
    }
    {
        let mut runs = RUNS.lock().unwrap_or_else(|p| p.into_inner());
        *runs.get_or_insert_with(HashMap::new).entry(ledger.clone()).or_default() += 1;
    }
    Err(ToolError::aborted(
        "the effect happened, then the attempt was cut short before its receipt",
    ))
}

/// A durable task's attempts run over the receipts: the attempt after one that died between its
/// effect and its receipt is told so (and, here, finds the effect), instead of running blind.
pub(super) async fn idempotent_task(b: Backend) {
    let ledger = fresh_ledger();
    let fast = TaskOptions::default().poll_interval(Duration::from_millis(20));
    let runtime = Runtime::builder(Registry::global())
        .shared_store(b.open().await)
        .task_store(b.open_tasks().await, fast)
        .build();
    let run = runtime
        .call("suite-bg-once", json!({"ledger": ledger}), CallOptions::default())
        .finish();
    let run = tokio::time::timeout(Duration::from_secs(60), run).await.expect("the task ends");
    let Outcome::Done(output) = &run.outcome else {
        panic!("{:?}", run.outcome)
    };
    assert_eq!(output.value(), json!(format!("found {ledger}")), "the second attempt was told");
    assert_eq!(runs(&ledger), 1, "the effect happened once over two attempts");
    let started = run.events.iter().find_map(|e| match &e.raw.kind {
        RunEventKind::BackgroundTaskStarted { task_id } => Some(task_id.clone()),
        _ => None,
    });
    let record = runtime.task(&started.unwrap()).await.unwrap().unwrap();
    assert_eq!((record.state, record.attempts), (TaskState::Completed, 2));
}

/// The ledgers whose `suite-bg-hold` run saw its cancellation.
static CANCELLED: Mutex<Vec<String>> = Mutex::new(Vec::new());

/// Holds until cancelled (a minute at most), in the background
#[tool(id = "suite-bg-hold", background(enabled = true))]
async fn suite_bg_hold(
    /// The ledger counting the runs
    ledger: String,
    #[ctx] cx: ToolContext,
) -> Result<String, ToolError> {
    *RUNS
        .lock()
        .unwrap_or_else(|p| p.into_inner())
        .get_or_insert_with(HashMap::new)
        .entry(ledger.clone())
        .or_default() += 1;
    tokio::select! {
        () = tokio::time::sleep(Duration::from_secs(60)) => Ok("held a minute".into()),
        () = cx.cancellation().cancelled() => {
            CANCELLED.lock().unwrap_or_else(|p| p.into_inner()).push(ledger);
            Err(ToolError::new("cancelled"))
        }
    }
}

/// Waits (at most `within`) until `done` holds.
async fn until(within: Duration, what: &str, done: impl Fn() -> bool) {
    let deadline = Instant::now() + within;
    while !done() {
        assert!(Instant::now() < deadline, "{what} did not happen within {within:?}");
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
}

/// A call queued under the id and owner its caller chose (as the MCP tasks edge does), then
/// cancelled while it runs: the row ends cancelled and the attempt is stopped through its
/// cancellation token at once, long before its next lease renewal (10 s into a 30 s lease).
pub(super) async fn cancel_running(b: Backend) {
    let ledger = fresh_ledger();
    let runtime = Runtime::builder(Registry::global())
        .shared_store(b.open().await)
        .task_store(
            b.open_tasks().await,
            TaskOptions::default().poll_interval(Duration::from_millis(20)),
        )
        .build();
    let task_id = format!("task_chosen_{ledger}");
    let over = tool_core::spec::BackgroundOverride {
        wait_timeout_ms: Some(0),
        task_id: Some(task_id.clone()),
        task_owner: Some("subject:alice".into()),
        ..Default::default()
    };
    let mut events = runtime.call("suite-bg-hold", json!({"ledger": ledger}), CallOptions::default().background(over));
    let started = loop {
        let event = events.next().await.expect("the run ended before its task started");
        if let RunEventKind::BackgroundTaskStarted { task_id } = event.raw.kind {
            break task_id;
        }
    };
    assert_eq!(started, task_id, "the chosen id");
    until(Duration::from_secs(10), "the task running", || runs(&ledger) == 1).await;
    let record = runtime.task(&task_id).await.unwrap().unwrap();
    assert_eq!(record.state, TaskState::Running);
    let kept = record.task.data.background.as_ref().and_then(|b| b.task_owner.as_deref());
    assert_eq!(kept, Some("subject:alice"), "the owner is stored with the task");

    assert!(runtime.cancel_task(&task_id).await.unwrap());
    assert!(!runtime.cancel_task(&task_id).await.unwrap(), "cancelled once");
    let stopped = || CANCELLED.lock().unwrap_or_else(|p| p.into_inner()).contains(&ledger);
    until(Duration::from_secs(5), "the running attempt stopping", stopped).await;
    assert_eq!(runtime.task(&task_id).await.unwrap().unwrap().state, TaskState::Cancelled);
    let end = tokio::time::timeout(Duration::from_secs(10), events.finish())
        .await
        .expect("the run ends");
    assert!(matches!(end.outcome, Outcome::Failed(_)), "{:?}", end.outcome);
    assert_eq!(runs(&ledger), 1, "never run again");
}

/// A task recorded as ended before it ran (the call it was to be was declined or cancelled
/// while it waited): readable with its error from any store handle, never claimed, its id
/// taken.
pub(super) async fn ended_unrun(b: Backend) {
    let s = b.open_tasks().await;
    let declined = ToolError::new("Tool call was not approved by the user. Reason: no");
    s.enqueue_ended_task(&task("declined", 1, 0), TaskState::Failed, &declined)
        .await
        .unwrap();
    let cancelled = ToolError::new("The task was cancelled.");
    s.enqueue_ended_task(&task("withdrawn", 2, 3), TaskState::Cancelled, &cancelled)
        .await
        .unwrap();
    assert!(s.claim_task("w", LONG).await.unwrap().is_none(), "an ended task is never claimed");
    let other = b.open_tasks().await;
    let read = other.get_task("declined").await.unwrap().unwrap();
    assert_eq!((read.state, read.attempts, read.output), (TaskState::Failed, 0, None));
    assert_eq!(read.error.unwrap().message(), declined.message());
    assert_eq!(other.get_task("withdrawn").await.unwrap().unwrap().state, TaskState::Cancelled);
    assert!(!s.cancel_task("withdrawn").await.unwrap(), "already ended");
    assert!(s.enqueue_task(&task("declined", 3, 0)).await.is_err(), "the id is taken");
    assert!(
        s.enqueue_ended_task(&task("declined", 3, 0), TaskState::Cancelled, &cancelled)
            .await
            .is_err()
    );
    let counts = s.count_tasks().await.unwrap();
    assert_eq!((counts.failed, counts.cancelled, counts.queued), (1, 1, 0));
}
