//! The background-task queue, against every backend ([`CASES`], run by the suite for memory,
//! SQLite and PostgreSQL): claims exclusive under concurrency, expired leases taken over, stale
//! owners refused, retries exhausted, cancellation, and two runtimes sharing the queue. And,
//! PostgreSQL only ([`POSTGRES_TESTS`]): a real `toolsmith serve` process killed with SIGKILL
//! mid-task, its task taken over by another process and completed exactly once.

use std::collections::HashMap;
use std::future::Future;
use std::pin::Pin;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use tool_core::ToolOutput;
use tool_core::prelude::*;
use tool_core::runtime::backend::{Began, NewTask, ReceiptClaim, TaskState, TaskStore};
use tool_core::runtime::{Outcome, PostgresStore, RunEventKind, Runtime, TaskOptions};

use super::{Backend, Case, KEY, child_cli, options, pg};

/// The cases every backend passes.
pub const CASES: &[(&str, Case)] = &[
    ("tasks_are_claimed_oldest_first_and_their_result_is_readable_everywhere", |b| {
        Box::pin(round_trip(b))
    }),
    ("twenty_concurrent_claimers_take_each_task_once", |b| Box::pin(concurrent_claims(b))),
    ("an_expired_lease_is_taken_over_and_the_stale_owner_is_refused", |b| {
        Box::pin(takeover(b))
    }),
    ("retries_exhausted_end_failed_and_cancelled_tasks_never_run", |b| {
        Box::pin(retries_and_cancel(b))
    }),
    ("a_background_call_queued_by_one_runtime_is_run_by_another", |b| {
        Box::pin(two_runtimes(b))
    }),
    ("a_task_with_a_chosen_id_cancelled_while_running_stops_at_once", |b| {
        Box::pin(cancel_running(b))
    }),
    ("a_task_that_ended_without_running_is_kept_and_never_claimed", |b| {
        Box::pin(ended_unrun(b))
    }),
    ("an_idempotent_task_has_its_effect_once_across_attempts", |b| {
        Box::pin(idempotent_task(b))
    }),
    ("retention_expires_ended_tasks_and_done_receipts_and_keeps_the_rest", |b| {
        Box::pin(retention(b))
    }),
];

type Test = fn(String) -> Pin<Box<dyn Future<Output = Result<(), String>> + Send>>;

/// The PostgreSQL-only tests.
pub const POSTGRES_TESTS: &[(&str, Test)] = &[
    ("a_task_of_a_killed_instance_is_taken_over_and_completes_once", |url| {
        Box::pin(killed_instance(url))
    }),
    ("a_task_row_edited_in_the_database_is_never_run", |url| Box::pin(edited_row(url))),
];

async fn edited_row(url: String) -> Result<(), String> {
    let schema = pg::fresh_schema(&url).await?;
    let store = PostgresStore::connect_with(&url, options(&schema)).await.unwrap();
    store.enqueue_task(&task("edited", 1, 3)).await.unwrap();
    store.enqueue_task(&task("intact", 2, 0)).await.unwrap();
    let client = pg::connect(&url).await?;
    let edit =
        format!("UPDATE {schema}.toolsmith_tasks SET task_json = replace(task_json, 'suite-bg', 'wipe-disk') WHERE task_id = 'edited'");
    assert_eq!(client.execute(&edit, &[]).await.unwrap(), 1);
    let claimed = store.claim_task("w", LONG).await.unwrap().unwrap();
    assert_eq!(claimed.task.task_id, "intact", "the edited task is skipped, never handed out");
    let Err(damaged) = store.get_task("edited").await else {
        panic!("an edited row is refused")
    };
    assert!(damaged.to_string().contains("integrity tag"), "{damaged}");
    let state: String = client
        .query_one(&format!("SELECT state FROM {schema}.toolsmith_tasks WHERE task_id = 'edited'"), &[])
        .await
        .unwrap()
        .get(0);
    assert_eq!(state, "failed", "ended, not retried");
    assert!(
        !store.list_tasks(None, 10).await.unwrap().iter().any(|t| t.task.task_id == "edited"),
        "listings skip it"
    );
    pg::drop_schema(&url, &schema).await;
    Ok(())
}

fn task(id: &str, at: u64, max_retries: u32) -> NewTask {
    let task = json!({"task_id": id, "tool_name": "suite-bg", "args": {"ledger": id}, "context": {"api_key": "sk-1"},
        "tool_call_id": format!("call_{id}"), "max_retries": max_retries, "created_at_ms": at});
    serde_json::from_value(task).unwrap()
}

const LONG: Duration = Duration::from_secs(60);

async fn round_trip(b: Backend) {
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

async fn concurrent_claims(b: Backend) {
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

async fn takeover(b: Backend) {
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

async fn retries_and_cancel(b: Backend) {
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

async fn two_runtimes(b: Backend) {
    let ledger = super::fresh_ledger();
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
async fn idempotent_task(b: Backend) {
    let ledger = super::fresh_ledger();
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

fn receipt(key: &str) -> ReceiptClaim {
    ReceiptClaim {
        key: key.into(),
        tool_name: "suite-bg-once".into(),
        args_digest: "args".into(),
    }
}

/// `Runtime::expire` removes what ended (tasks completed, failed or cancelled; receipts with a
/// result) and keeps what still waits or runs (queued and running tasks, running and interrupted
/// receipts); `RuntimeBuilder::retention` sweeps on its own.
async fn retention(b: Backend) {
    let tasks = b.open_tasks().await;
    let idle = TaskOptions::default().start_on_build(false);
    let runtime = Runtime::builder(Registry::global())
        .shared_store(b.open().await)
        .task_store(tasks.clone(), idle.clone())
        .build();
    let prefix = super::fresh_ledger();
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

/// Records when a background task starts and ends in a table, holding in between
#[tool(id = "suite-task-effect", background(enabled = true))]
async fn suite_task_effect(
    /// The database
    url: String,
    /// The table (`schema.task_effects`)
    table: String,
    /// How long to hold between start and end, in milliseconds
    hold_ms: u64,
) -> Result<String, ToolError> {
    let client = pg::connect(&url).await.map_err(ToolError::new)?;
    let insert = format!("INSERT INTO {table} (what, pid) VALUES ($1, $2)");
    let pid = i64::from(std::process::id());
    client
        .execute(&insert, &[&"started", &pid])
        .await
        .map_err(|e| ToolError::new(e.to_string()))?;
    tokio::time::sleep(Duration::from_millis(hold_ms)).await;
    client
        .execute(&insert, &[&"done", &pid])
        .await
        .map_err(|e| ToolError::new(e.to_string()))?;
    Ok("done".into())
}

/// `toolsmith serve --http` on the test's schema, holding task leases of one second and an
/// instance lease of two (a killed instance's task is taken over once both ran out).
fn instance(store: &str) -> std::process::Child {
    let mut command = child_cli::toolsmith(&[
        "serve",
        "--http",
        "127.0.0.1:0",
        "--stateless",
        "--store",
        store,
        "--task-lease",
        "1",
        "--instance-lease",
        "2",
    ]);
    command.env(tool_core::runtime::STORE_KEY_ENV, std::str::from_utf8(KEY).unwrap());
    command.stdout(std::process::Stdio::null()).stderr(std::process::Stdio::null());
    command.spawn().expect("the instance starts")
}

/// The `(what, pid)` rows of the effects table.
async fn effects(client: &tokio_postgres::Client, table: &str) -> Vec<(String, i64)> {
    let rows = client.query(&format!("SELECT what, pid FROM {table}"), &[]).await.unwrap();
    let mut rows: Vec<(String, i64)> = rows.iter().map(|r| (r.get(0), r.get(1))).collect();
    rows.sort();
    rows
}

async fn killed_instance(url: String) -> Result<(), String> {
    let schema = pg::fresh_schema(&url).await?;
    let client = pg::connect(&url).await?;
    let table = format!("{schema}.task_effects");
    client
        .batch_execute(&format!("CREATE TABLE {table} (what TEXT NOT NULL, pid BIGINT NOT NULL)"))
        .await
        .map_err(|e| e.to_string())?;
    let store = PostgresStore::connect_with(&url, options(&schema)).await.unwrap();
    let args = json!({"url": url, "table": table, "hold_ms": 4000});
    let queued: NewTask = serde_json::from_value(json!({"task_id": "task_killed", "tool_name": "suite-task-effect",
        "args": args, "max_retries": 2, "created_at_ms": 1}))
    .unwrap();
    store.enqueue_task(&queued).await.unwrap();
    let location = pg::url_in_schema(&url, &schema);
    let mut a = instance(&location);
    let deadline = Instant::now() + Duration::from_secs(60);
    let a_pid = i64::from(a.id());
    while !effects(&client, &table).await.contains(&("started".into(), a_pid)) {
        assert!(Instant::now() < deadline, "instance A never started the task");
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    let mut b = instance(&location);
    a.kill().unwrap(); // SIGKILL: no cleanup, its lease simply stops being renewed
    a.wait().unwrap();
    let done = loop {
        let record = store.get_task("task_killed").await.unwrap().unwrap();
        if record.state.is_final() {
            break record;
        }
        assert!(Instant::now() < deadline, "the task was never completed: {record:?}");
        tokio::time::sleep(Duration::from_millis(100)).await;
    };
    let b_pid = i64::from(b.id());
    b.kill().unwrap();
    b.wait().unwrap();
    assert_eq!(done.state, TaskState::Completed, "{done:?}");
    assert_eq!(done.attempts, 2, "A's attempt, then B's takeover");
    assert_eq!(done.output.map(|o| o.value()), Some(json!("done")));
    // A lease's owner names its instance (`INSTANCE/random`): B's.
    let b_instance: String = client
        .query_one(&format!("SELECT id FROM {schema}.toolsmith_instances WHERE pid = $1"), &[&b_pid])
        .await
        .map_err(|e| e.to_string())?
        .get(0);
    assert!(
        done.lease_owner
            .as_deref()
            .is_some_and(|o| o.starts_with(&format!("{b_instance}/"))),
        "{:?}",
        done.lease_owner
    );
    let rows = effects(&client, &table).await;
    let mut expected = vec![
        ("done".to_owned(), b_pid),
        ("started".to_owned(), a_pid),
        ("started".to_owned(), b_pid),
    ];
    expected.sort();
    assert_eq!(rows, expected, "started on A, taken over and completed once on B");
    let read = tokio::task::spawn_blocking(move || {
        let cli = |args: &[&str]| {
            let mut command = child_cli::toolsmith(args);
            command.env(tool_core::runtime::STORE_KEY_ENV, std::str::from_utf8(KEY).unwrap());
            child_cli::Ran::from(command.output().expect("the child runs"))
        };
        let get = cli(&["tasks", "get", "task_killed", "--json", "--store", &location]);
        let list = cli(&["tasks", "list", "--store", &location]);
        let status = cli(&["store", "status", "--json", "--store", &location]);
        let unknown = cli(&["tasks", "get", "task_never", "--store", &location]);
        [get, list, status, unknown]
    });
    let [get, list, status, unknown] = read.await.unwrap();
    assert!(get.ok, "{}", get.stderr);
    let got: Value = serde_json::from_str(&get.stdout).map_err(|e| format!("{e}: {}", get.stdout))?;
    assert_eq!(
        (&got["state"], &got["attempts"], &got["output"]["result"]),
        (&json!("completed"), &json!(2), &json!("done")),
        "{got}"
    );
    assert!(
        list.ok && list.stdout.contains("task_killed") && list.stdout.contains("completed"),
        "{}{}",
        list.stdout,
        list.stderr
    );
    assert!(status.ok, "{}", status.stderr);
    let status: Value = serde_json::from_str(&status.stdout).map_err(|e| format!("{e}: {}", status.stdout))?;
    assert_eq!(
        status["tasks"],
        json!({"queued": 0, "running": 0, "completed": 1, "failed": 0, "cancelled": 0}),
        "{status}"
    );
    assert!(
        !unknown.ok && unknown.stderr.contains("no background task has the id `task_never`"),
        "{}",
        unknown.stderr
    );
    pg::drop_schema(&url, &schema).await;
    Ok(())
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
async fn cancel_running(b: Backend) {
    let ledger = super::fresh_ledger();
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
async fn ended_unrun(b: Backend) {
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
