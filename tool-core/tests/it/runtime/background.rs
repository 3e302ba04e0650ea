//! Background tasks through the runtime: the placeholder, the task's events, retries,
//! per-attempt timeouts, the wait timeout, the concurrency limit, per-call overrides,
//! validation and panics.
//!
//! Every tool here has its own attempt counter or gate (tests run in parallel). No test
//! depends on timing beyond generous timeouts: a tool that must still be running when the
//! placeholder is sent waits on a gate the test opens only after seeing the placeholder.

use std::sync::atomic::{AtomicU32, Ordering::SeqCst};
use std::time::Duration;

use tokio::sync::Semaphore;
use tool_core::prelude::*;
use tool_core::runtime::{EventStream, ResumeOptions, Runtime};
use tool_core::spec::BackgroundOverride;

use crate::support::wire::{Wire as RunEvent, wire};
use tool_core::CancellationToken;

const PREFIX: &str = "Background task started. Task ID: ";
/// How long anything may take before a test gives up (never reached when the feature works).
const PATIENCE: Duration = Duration::from_secs(10);

// ---------------------------------------------------------------------------------------------
// Helpers
// ---------------------------------------------------------------------------------------------

/// The raw events of a whole run.
async fn run(runtime: &Runtime, tool: &str, args: Value, options: CallOptions) -> Vec<RunEvent> {
    let events = tokio::time::timeout(PATIENCE, runtime.call(tool, args, options).collect())
        .await
        .unwrap_or_else(|_| panic!("the run of `{tool}` did not end"));
    events.into_iter().map(|e| wire(&e.raw)).collect()
}

/// The next raw event of a run (`None` when it is over).
async fn next(stream: &mut EventStream) -> Option<RunEvent> {
    tokio::time::timeout(PATIENCE, stream.next())
        .await
        .expect("no event arrived")
        .map(|e| wire(&e.raw))
}

fn kinds(events: &[RunEvent]) -> Vec<&'static str> {
    events.iter().map(RunEvent::kind).collect()
}

fn is_background(event: &RunEvent) -> bool {
    matches!(
        event,
        RunEvent::BackgroundTaskStarted { .. } | RunEvent::BackgroundTaskCompleted { .. } | RunEvent::BackgroundTaskFailed { .. }
    )
}

/// The id every event of a run shares.
fn single_call_id(events: &[RunEvent]) -> String {
    let id = events.first().expect("no events").tool_call_id().to_owned();
    assert!(
        events.iter().all(|e| e.tool_call_id() == id),
        "events of several calls: {events:#?}"
    );
    id
}

/// Checks a placeholder result (and its model output) and returns the task id it names.
fn placeholder_task(event: &RunEvent) -> String {
    let RunEvent::ToolResult { result, model_output, .. } = event else {
        panic!("expected the placeholder tool-result, got {event:#?}");
    };
    let Value::String(text) = result else {
        panic!("the placeholder is not a string: {result}");
    };
    let task = text.strip_prefix(PREFIX).unwrap_or_else(|| panic!("not a placeholder: {text:?}"));
    assert!(!task.trim().is_empty(), "the placeholder names no task: {text:?}");
    assert_eq!(
        model_output.as_ref(),
        Some(&ModelOutput::Text(text.clone())),
        "the model sees the placeholder"
    );
    task.to_owned()
}

/// A whole background run: tool-call, placeholder, started, then completed (`Ok` with the
/// result) or failed (`Err` with the error JSON), every event of one call and one task.
fn background_outcome(events: &[RunEvent]) -> Result<Value, Value> {
    let ends = ["background-task-completed", "background-task-failed"];
    assert!(
        events.len() == 4
            && kinds(&events[..3]) == ["tool-call", "tool-result", "background-task-started"]
            && ends.contains(&events[3].kind()),
        "{events:#?}"
    );
    single_call_id(events);
    let task = placeholder_task(&events[1]);
    let RunEvent::BackgroundTaskStarted { task_id, .. } = &events[2] else {
        unreachable!()
    };
    assert_eq!(task_id, &task);
    match &events[3] {
        RunEvent::BackgroundTaskCompleted { task_id, result, .. } => {
            assert_eq!(task_id, &task);
            Ok(result.clone())
        }
        RunEvent::BackgroundTaskFailed { task_id, error, .. } => {
            assert_eq!(task_id, &task);
            Err(error.clone())
        }
        _ => unreachable!(),
    }
}

/// A whole background run that completed; returns the completed result.
fn completed_in_background(events: &[RunEvent]) -> Value {
    background_outcome(events).unwrap_or_else(|error| panic!("the task failed: {error}\n{events:#?}"))
}

/// A whole background run that failed; returns the error JSON.
fn failed_in_background(events: &[RunEvent]) -> Value {
    match background_outcome(events) {
        Ok(result) => panic!("the task completed with {result}\n{events:#?}"),
        Err(error) => error,
    }
}

/// A whole foreground run that succeeded: tool-call, then the real result. Returns it.
fn foreground_result(events: &[RunEvent]) -> Value {
    assert_eq!(kinds(events), ["tool-call", "tool-result"], "{events:#?}");
    assert!(!events.iter().any(is_background));
    single_call_id(events);
    let RunEvent::ToolResult { result, .. } = &events[1] else {
        unreachable!()
    };
    assert!(
        !result.as_str().is_some_and(|s| s.starts_with(PREFIX)),
        "a foreground run must not answer with the placeholder: {result}"
    );
    result.clone()
}

/// Waits until the test opens `gate` (or gives up after [`PATIENCE`]; the tool then returns
/// a value the test rejects).
async fn pass(gate: &Semaphore) -> bool {
    matches!(tokio::time::timeout(PATIENCE, gate.acquire()).await, Ok(Ok(_)))
}

// ---------------------------------------------------------------------------------------------
// 1. The placeholder, then the task's events
// ---------------------------------------------------------------------------------------------

#[derive(Serialize, JsonSchema)]
pub struct Summary {
    pub title: String,
    pub words: u32,
}

fn summary_for_model(s: &Summary) -> ModelOutput {
    ModelOutput::text(format!("{}: {} words", s.title, s.words))
}

static SUMMARIZE_GATE: Semaphore = Semaphore::const_new(0);

/// Summarise a document (slowly)
#[tool(id = "bg-summarize", background(enabled = true), to_model_output = summary_for_model)]
pub async fn summarize(title: String) -> Summary {
    let words = if pass(&SUMMARIZE_GATE).await { 42 } else { 0 };
    Summary { title, words }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn opted_in_tool_answers_with_a_placeholder_then_completes() {
    let runtime = Runtime::new(Registry::from_iter([summarize::tool()]));
    let mut stream = runtime.call("bg-summarize", json!({"title": "Q3"}), CallOptions::default());

    let Some(RunEvent::ToolCall {
        tool_call_id,
        tool_name,
        args,
    }) = next(&mut stream).await
    else {
        panic!("the run does not start with tool-call");
    };
    assert_eq!((tool_name.as_str(), args), ("bg-summarize", json!({"title": "Q3"})));

    // The tool is still blocked on its gate: the caller already has its answer.
    let placeholder = next(&mut stream).await.expect("no tool-result");
    assert_eq!(placeholder.tool_call_id(), tool_call_id);
    let task = placeholder_task(&placeholder);
    assert_eq!(
        next(&mut stream).await,
        Some(RunEvent::BackgroundTaskStarted {
            tool_call_id: tool_call_id.clone(),
            tool_name: "bg-summarize".into(),
            task_id: task.clone(),
        })
    );

    SUMMARIZE_GATE.add_permits(1);
    assert_eq!(
        next(&mut stream).await,
        Some(RunEvent::BackgroundTaskCompleted {
            tool_call_id,
            tool_name: "bg-summarize".into(),
            task_id: task,
            result: json!({"title": "Q3", "words": 42}),
            model_output: Some(ModelOutput::text("Q3: 42 words")),
        })
    );
    assert_eq!(next(&mut stream).await, None, "the run ends once the task is done");
}

#[tokio::test]
async fn task_ids_are_distinct_per_call() {
    let runtime = Runtime::new(Registry::from_iter([quick_bg::tool()]));
    let a = run(&runtime, "bg-quick-bg", json!({}), CallOptions::default()).await;
    let b = run(&runtime, "bg-quick-bg", json!({}), CallOptions::default()).await;
    completed_in_background(&a);
    completed_in_background(&b);
    assert_ne!(single_call_id(&a), single_call_id(&b));
    assert_ne!(placeholder_task(&a[1]), placeholder_task(&b[1]));
}

static WAITED_GATE: Semaphore = Semaphore::const_new(0);

/// Finishes only when the test lets it
#[tool(id = "bg-waited", background(wait_timeout_ms = 10))]
pub async fn waited() -> String {
    if pass(&WAITED_GATE).await {
        "finished late".into()
    } else {
        "never released".into()
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_task_still_running_after_the_wait_timeout_answers_with_the_placeholder() {
    let runtime = Runtime::new(Registry::from_iter([waited::tool()]));
    let mut stream = runtime.call("bg-waited", json!({}), CallOptions::default());
    assert!(matches!(next(&mut stream).await, Some(RunEvent::ToolCall { .. })));
    let task = placeholder_task(&next(&mut stream).await.expect("no tool-result"));
    assert!(matches!(next(&mut stream).await, Some(RunEvent::BackgroundTaskStarted { task_id, .. }) if task_id == task));
    WAITED_GATE.add_permits(1);
    match next(&mut stream).await {
        Some(RunEvent::BackgroundTaskCompleted { task_id, result, .. }) => {
            assert_eq!(task_id, task);
            assert_eq!(result, json!("finished late"));
        }
        other => panic!("expected background-task-completed, got {other:#?}"),
    }
    assert_eq!(next(&mut stream).await, None);
}

// ---------------------------------------------------------------------------------------------
// 2. Retries
// ---------------------------------------------------------------------------------------------

static RECOVERS_ATTEMPTS: AtomicU32 = AtomicU32::new(0);

/// Fails its first two attempts
#[tool(id = "bg-flaky-recovers", background(max_retries = 2))]
pub async fn flaky_recovers() -> Result<String, ToolError> {
    let attempt = RECOVERS_ATTEMPTS.fetch_add(1, SeqCst) + 1;
    if attempt <= 2 {
        Err(ToolError::new(format!("attempt {attempt} failed")))
    } else {
        Ok(format!("done on attempt {attempt}"))
    }
}

static GIVES_UP_ATTEMPTS: AtomicU32 = AtomicU32::new(0);

/// Fails its first two attempts, but may retry only once
#[tool(id = "bg-flaky-gives-up", background(max_retries = 1))]
pub async fn flaky_gives_up() -> Result<String, ToolError> {
    let attempt = GIVES_UP_ATTEMPTS.fetch_add(1, SeqCst) + 1;
    if attempt <= 2 {
        Err(ToolError::new(format!("attempt {attempt} failed")))
    } else {
        Ok(format!("done on attempt {attempt}"))
    }
}

#[tokio::test]
async fn a_task_that_fails_within_its_retries_completes() {
    let runtime = Runtime::new(Registry::from_iter([flaky_recovers::tool()]));
    let events = run(&runtime, "bg-flaky-recovers", json!({}), CallOptions::default()).await;
    assert_eq!(completed_in_background(&events), json!("done on attempt 3"));
    assert_eq!(RECOVERS_ATTEMPTS.load(SeqCst), 3);
}

#[tokio::test]
async fn a_task_that_fails_past_its_retries_fails_with_the_last_error() {
    let runtime = Runtime::new(Registry::from_iter([flaky_gives_up::tool()]));
    let events = run(&runtime, "bg-flaky-gives-up", json!({}), CallOptions::default()).await;
    let error = failed_in_background(&events);
    assert_eq!(error["error"], json!(true));
    assert_eq!(error["kind"], json!("execution"));
    assert_eq!(error["message"], json!("attempt 2 failed"), "the last attempt's error: {error}");
    assert_eq!(GIVES_UP_ATTEMPTS.load(SeqCst), 2, "1 attempt + max_retries = 1");
}

static FAILS_FAST_ATTEMPTS: AtomicU32 = AtomicU32::new(0);

/// Always fails at once; the caller waits long enough for every attempt
#[tool(id = "bg-fails-fast", background(max_retries = 2, wait_timeout_ms = 10_000))]
pub async fn fails_fast() -> Result<String, ToolError> {
    let attempt = FAILS_FAST_ATTEMPTS.fetch_add(1, SeqCst) + 1;
    Err(ToolError::new(format!("attempt {attempt} failed")))
}

#[tokio::test]
async fn a_task_that_fails_within_the_wait_timeout_is_an_ordinary_error_after_its_retries() {
    let runtime = Runtime::new(Registry::from_iter([fails_fast::tool()]));
    let events = run(&runtime, "bg-fails-fast", json!({}), CallOptions::default()).await;
    assert_eq!(kinds(&events), ["tool-call", "tool-error"], "{events:#?}");
    single_call_id(&events);
    let RunEvent::ToolError { error, .. } = &events[1] else {
        unreachable!()
    };
    assert_eq!(error["message"], json!("attempt 3 failed"), "{error}");
    assert_eq!(FAILS_FAST_ATTEMPTS.load(SeqCst), 3);
}

static CANCELLED_ENTERED: Semaphore = Semaphore::const_new(0);
static CANCELLED_ATTEMPTS: AtomicU32 = AtomicU32::new(0);

/// Runs until cancelled
#[tool(id = "bg-cancelled", background(max_retries = 3))]
pub async fn cancelled() -> String {
    CANCELLED_ATTEMPTS.fetch_add(1, SeqCst);
    CANCELLED_ENTERED.add_permits(1);
    tokio::time::sleep(Duration::from_secs(60)).await;
    "not cancelled".into()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_callers_cancellation_is_not_retried() {
    let runtime = Runtime::new(Registry::from_iter([cancelled::tool()]));
    let token = CancellationToken::new();
    let options = CallOptions::default().cancellation(token.clone());
    let mut stream = runtime.call("bg-cancelled", json!({}), options);
    assert!(matches!(next(&mut stream).await, Some(RunEvent::ToolCall { .. })));
    let task = placeholder_task(&next(&mut stream).await.expect("no tool-result"));
    assert!(matches!(next(&mut stream).await, Some(RunEvent::BackgroundTaskStarted { .. })));
    assert!(pass(&CANCELLED_ENTERED).await, "the first attempt never started");
    token.cancel();
    match next(&mut stream).await {
        Some(RunEvent::BackgroundTaskFailed { task_id, error, .. }) => {
            assert_eq!(task_id, task);
            assert_eq!(error["kind"], json!("aborted"), "{error}");
        }
        other => panic!("expected background-task-failed, got {other:#?}"),
    }
    assert_eq!(next(&mut stream).await, None);
    assert_eq!(CANCELLED_ATTEMPTS.load(SeqCst), 1, "a cancelled task is not retried");
}

// ---------------------------------------------------------------------------------------------
// 3. Per-attempt timeout
// ---------------------------------------------------------------------------------------------

static SLOW_ONCE_ATTEMPTS: AtomicU32 = AtomicU32::new(0);

/// Hangs on its first attempt only
#[tool(id = "bg-slow-once", background(timeout_ms = 100, max_retries = 1))]
pub async fn slow_once() -> String {
    let attempt = SLOW_ONCE_ATTEMPTS.fetch_add(1, SeqCst) + 1;
    if attempt == 1 {
        tokio::time::sleep(Duration::from_secs(60)).await;
    }
    format!("attempt {attempt}")
}

static ALWAYS_SLOW_ATTEMPTS: AtomicU32 = AtomicU32::new(0);

/// Always hangs
#[tool(id = "bg-always-slow", background(timeout_ms = 50, max_retries = 1))]
pub async fn always_slow() -> String {
    ALWAYS_SLOW_ATTEMPTS.fetch_add(1, SeqCst);
    tokio::time::sleep(Duration::from_secs(60)).await;
    "woke up".into()
}

#[tokio::test]
async fn a_timed_out_attempt_is_retried() {
    let runtime = Runtime::new(Registry::from_iter([slow_once::tool()]));
    let events = run(&runtime, "bg-slow-once", json!({}), CallOptions::default()).await;
    assert_eq!(completed_in_background(&events), json!("attempt 2"));
    assert_eq!(SLOW_ONCE_ATTEMPTS.load(SeqCst), 2);
}

#[tokio::test]
async fn a_task_whose_every_attempt_times_out_fails_as_aborted() {
    let runtime = Runtime::new(Registry::from_iter([always_slow::tool()]));
    let events = run(&runtime, "bg-always-slow", json!({}), CallOptions::default()).await;
    let error = failed_in_background(&events);
    assert_eq!(error["kind"], json!("aborted"), "{error}");
    assert_eq!(ALWAYS_SLOW_ATTEMPTS.load(SeqCst), 2);
}

// ---------------------------------------------------------------------------------------------
// 4. wait_timeout_ms
// ---------------------------------------------------------------------------------------------

// `to_model_output` takes exactly `&Output`, here `&String`.
#[allow(clippy::ptr_arg)]
fn shout(s: &String) -> ModelOutput {
    ModelOutput::text(s.to_uppercase())
}

/// Answers at once, though it may run in the background
#[tool(id = "bg-quick", background(wait_timeout_ms = 10_000), to_model_output = shout)]
pub async fn quick(word: String) -> String {
    format!("quick {word}")
}

#[tokio::test]
async fn a_task_done_within_the_wait_timeout_is_an_ordinary_result() {
    let runtime = Runtime::new(Registry::from_iter([quick::tool()]));
    let events = run(&runtime, "bg-quick", json!({"word": "fox"}), CallOptions::default()).await;
    assert_eq!(foreground_result(&events), json!("quick fox"));
    let RunEvent::ToolResult {
        tool_name, model_output, ..
    } = &events[1]
    else {
        unreachable!()
    };
    assert_eq!(tool_name, "bg-quick");
    assert_eq!(model_output, &Some(ModelOutput::text("QUICK FOX")));
}

// ---------------------------------------------------------------------------------------------
// 5. Concurrency limit
// ---------------------------------------------------------------------------------------------

static CROWDED_ENTERED: AtomicU32 = AtomicU32::new(0);

/// Returns only once two calls of it are running
#[tool(id = "bg-crowded", background(enabled = true))]
pub async fn crowded(n: u32) -> String {
    CROWDED_ENTERED.fetch_add(1, SeqCst);
    let deadline = tokio::time::Instant::now() + PATIENCE;
    while CROWDED_ENTERED.load(SeqCst) < 2 && tokio::time::Instant::now() < deadline {
        tokio::time::sleep(Duration::from_millis(2)).await;
    }
    format!("crowded {n}")
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn past_the_limit_an_opted_in_tool_runs_in_the_foreground() {
    let runtime = Runtime::builder(Registry::from_iter([crowded::tool()]))
        .max_background_tasks(1)
        .build();
    // Neither call can finish before both run: the background one holds the only slot while
    // the other starts.
    let (a, b) = tokio::join!(
        run(&runtime, "bg-crowded", json!({"n": 1}), CallOptions::default()),
        run(&runtime, "bg-crowded", json!({"n": 2}), CallOptions::default()),
    );
    let (background, foreground, n) = match (a.iter().any(is_background), b.iter().any(is_background)) {
        (true, false) => (a, b, 1),
        (false, true) => (b, a, 2),
        other => panic!("exactly one call must go to the background, got {other:?}:\n{a:#?}\n{b:#?}"),
    };
    assert_eq!(completed_in_background(&background), json!(format!("crowded {n}")));
    assert_eq!(foreground_result(&foreground), json!(format!("crowded {}", 3 - n)));

    // The slot is free again once the task is done.
    let again = run(&runtime, "bg-crowded", json!({"n": 3}), CallOptions::default()).await;
    assert_eq!(completed_in_background(&again), json!("crowded 3"));
}

// ---------------------------------------------------------------------------------------------
// 6. Per-call overrides
// ---------------------------------------------------------------------------------------------

/// Opted in, returns at once
#[tool(id = "bg-quick-bg", background(enabled = true))]
pub async fn quick_bg() -> String {
    "quick bg".into()
}

/// Never opted in
#[tool(id = "bg-not-opted")]
pub async fn not_opted() -> String {
    "not opted".into()
}

/// Opted out explicitly
#[tool(id = "bg-opted-out", background(enabled = false))]
pub async fn opted_out() -> String {
    "opted out".into()
}

static OVERRIDE_FAILS_ATTEMPTS: AtomicU32 = AtomicU32::new(0);

/// Always fails; retries nothing unless told
#[tool(id = "bg-override-fails", background(max_retries = 0))]
pub async fn override_fails() -> Result<String, ToolError> {
    let attempt = OVERRIDE_FAILS_ATTEMPTS.fetch_add(1, SeqCst) + 1;
    Err(ToolError::new(format!("attempt {attempt} failed")))
}

fn with_override(over: BackgroundOverride) -> CallOptions {
    CallOptions::default().background(over)
}

#[tokio::test]
async fn an_override_can_keep_an_opted_in_tool_in_the_foreground() {
    let runtime = Runtime::new(Registry::from_iter([quick_bg::tool()]));
    // Without the override it goes to the background…
    let events = run(&runtime, "bg-quick-bg", json!({}), CallOptions::default()).await;
    assert_eq!(completed_in_background(&events), json!("quick bg"));
    // …with `enabled: false` it does not.
    let off = with_override(BackgroundOverride {
        enabled: Some(false),
        ..Default::default()
    });
    let events = run(&runtime, "bg-quick-bg", json!({}), off).await;
    assert_eq!(foreground_result(&events), json!("quick bg"));
}

/// Answers at once, but only ever in the background
#[tool(id = "bg-only-bg", background(required))]
pub async fn only_bg() -> String {
    "only bg".into()
}

#[tokio::test]
async fn a_task_required_tool_stays_in_the_background_whatever_the_override() {
    let runtime = Runtime::new(Registry::from_iter([only_bg::tool()]));
    let off = with_override(BackgroundOverride {
        enabled: Some(false),
        ..Default::default()
    });
    let events = run(&runtime, "bg-only-bg", json!({}), off).await;
    assert_eq!(completed_in_background(&events), json!("only bg"));
}

#[tokio::test]
async fn an_override_never_moves_a_tool_that_did_not_opt_in() {
    let runtime = Runtime::new(Registry::from_iter([not_opted::tool(), opted_out::tool()]));
    let on = BackgroundOverride {
        enabled: Some(true),
        timeout_ms: Some(5_000),
        max_retries: Some(3),
        // No wait: a call moved to the background would answer with the placeholder.
        wait_timeout_ms: None,
        ..Default::default()
    };
    let events = run(&runtime, "bg-not-opted", json!({}), with_override(on.clone())).await;
    assert_eq!(foreground_result(&events), json!("not opted"));
    let events = run(&runtime, "bg-opted-out", json!({}), with_override(on)).await;
    assert_eq!(foreground_result(&events), json!("opted out"));
}

#[tokio::test]
async fn an_override_of_max_retries_changes_the_attempts() {
    let runtime = Runtime::new(Registry::from_iter([override_fails::tool()]));
    let events = run(&runtime, "bg-override-fails", json!({}), CallOptions::default()).await;
    assert_eq!(failed_in_background(&events)["message"], json!("attempt 1 failed"));
    assert_eq!(OVERRIDE_FAILS_ATTEMPTS.load(SeqCst), 1, "the tool's own policy: no retry");

    let retry_twice = with_override(BackgroundOverride {
        max_retries: Some(2),
        ..Default::default()
    });
    let events = run(&runtime, "bg-override-fails", json!({}), retry_twice).await;
    assert_eq!(failed_in_background(&events)["message"], json!("attempt 4 failed"));
    assert_eq!(
        OVERRIDE_FAILS_ATTEMPTS.load(SeqCst),
        1 + 3,
        "the override's policy: 1 attempt + 2 retries"
    );
}

#[tokio::test]
async fn an_override_of_the_wait_timeout_applies() {
    let runtime = Runtime::new(Registry::from_iter([quick_bg::tool()]));
    let wait = with_override(BackgroundOverride {
        wait_timeout_ms: Some(10_000),
        ..Default::default()
    });
    let events = run(&runtime, "bg-quick-bg", json!({}), wait).await;
    assert_eq!(foreground_result(&events), json!("quick bg"));
}

// ---------------------------------------------------------------------------------------------
// 7. Validation
// ---------------------------------------------------------------------------------------------

static VALIDATED_RUNS: AtomicU32 = AtomicU32::new(0);

/// Counts things, in the background
#[tool(id = "bg-validated", background(max_retries = 3))]
pub async fn validated(count: u32) -> u32 {
    VALIDATED_RUNS.fetch_add(1, SeqCst);
    count * 2
}

#[tokio::test]
async fn invalid_arguments_never_go_to_the_background() {
    let runtime = Runtime::builder(Registry::from_iter([validated::tool()]))
        .max_background_tasks(1)
        .build();
    let events = run(&runtime, "bg-validated", json!({"count": "many"}), CallOptions::default()).await;
    assert_eq!(kinds(&events), ["tool-call", "tool-error"], "{events:#?}");
    single_call_id(&events);
    let RunEvent::ToolError { error, .. } = &events[1] else {
        unreachable!()
    };
    assert_eq!(error["kind"], json!("invalid_input"), "{error}");
    assert_eq!(VALIDATED_RUNS.load(SeqCst), 0, "the tool never ran");

    // The refused call took no slot: a valid one still goes to the background.
    let events = run(&runtime, "bg-validated", json!({"count": 4}), CallOptions::default()).await;
    assert_eq!(completed_in_background(&events), json!(8));
    assert_eq!(VALIDATED_RUNS.load(SeqCst), 1);
}

// ---------------------------------------------------------------------------------------------
// 8. Panics
// ---------------------------------------------------------------------------------------------

static PANICS_ATTEMPTS: AtomicU32 = AtomicU32::new(0);

/// Always panics
#[tool(id = "bg-panics", background(max_retries = 2))]
pub async fn panics() -> String {
    let attempt = PANICS_ATTEMPTS.fetch_add(1, SeqCst) + 1;
    panic!("background attempt {attempt} panicked on purpose");
}

static PANICS_ONCE_ATTEMPTS: AtomicU32 = AtomicU32::new(0);

/// Panics on its first attempt only
#[tool(id = "bg-panics-once", background(max_retries = 1))]
pub async fn panics_once() -> String {
    let attempt = PANICS_ONCE_ATTEMPTS.fetch_add(1, SeqCst) + 1;
    if attempt == 1 {
        panic!("first attempt panicked on purpose");
    }
    format!("attempt {attempt}")
}

#[tokio::test]
async fn a_panicking_task_is_retried_then_fails_as_a_panic() {
    let runtime = Runtime::new(Registry::from_iter([panics::tool(), panics_once::tool(), quick_bg::tool()]));
    let events = run(&runtime, "bg-panics", json!({}), CallOptions::default()).await;
    let error = failed_in_background(&events);
    assert_eq!(error["kind"], json!("panic"), "{error}");
    assert!(
        error["message"].as_str().unwrap_or_default().contains("attempt 3 panicked"),
        "{error}"
    );
    assert_eq!(PANICS_ATTEMPTS.load(SeqCst), 3, "1 attempt + max_retries = 2");

    let events = run(&runtime, "bg-panics-once", json!({}), CallOptions::default()).await;
    assert_eq!(completed_in_background(&events), json!("attempt 2"));
    assert_eq!(PANICS_ONCE_ATTEMPTS.load(SeqCst), 2);

    // The runtime (and the process) carry on.
    let events = run(&runtime, "bg-quick-bg", json!({}), CallOptions::default()).await;
    assert_eq!(completed_in_background(&events), json!("quick bg"));
}

// ---------------------------------------------------------------------------------------------
// Approval, then background
// ---------------------------------------------------------------------------------------------

/// Needs approval, then runs in the background
#[tool(id = "bg-approved", require_approval, background(enabled = true))]
pub async fn approved(what: String) -> String {
    format!("approved {what}")
}

#[tokio::test]
async fn an_approved_background_call_is_resolved_in_the_store() {
    let runtime = Runtime::new(Registry::from_iter([approved::tool()]));
    let events = run(&runtime, "bg-approved", json!({"what": "deploy"}), CallOptions::default()).await;
    assert_eq!(kinds(&events), ["tool-call", "tool-call-approval"]);
    let id = single_call_id(&events);
    assert_eq!(runtime.pending().await.unwrap().len(), 1);

    let stream = runtime.approve(&id, ResumeOptions::default()).await.unwrap();
    let events: Vec<RunEvent> = tokio::time::timeout(PATIENCE, stream.collect())
        .await
        .expect("the approved run did not end")
        .into_iter()
        .map(|e| wire(&e.raw))
        .collect();
    assert_eq!(
        kinds(&events),
        [
            "tool-call-resumed",
            "tool-result",
            "background-task-started",
            "background-task-completed"
        ],
        "{events:#?}"
    );
    assert_eq!(single_call_id(&events), id);
    placeholder_task(&events[1]);
    let RunEvent::BackgroundTaskCompleted { result, .. } = &events[3] else {
        unreachable!()
    };
    assert_eq!(result, &json!("approved deploy"));
    assert!(
        runtime.pending().await.unwrap().is_empty(),
        "a finished background task leaves no pending call behind"
    );
    assert!(
        runtime.approve(&id, ResumeOptions::default()).await.is_err(),
        "an approval is used once"
    );
}

// ---------------------------------------------------------------------------------------------
// Views of the placeholder and of the task's result
// ---------------------------------------------------------------------------------------------

#[derive(Serialize, JsonSchema)]
pub struct Secret {
    pub owner: String,
    pub token: String,
}

fn display_secret(s: &Secret) -> Value {
    json!({ "owner": s.owner })
}

fn transcript_secret(s: &Secret) -> Value {
    json!(format!("a secret of {}", s.owner))
}

/// Fetches a secret in the background
#[tool(
    id = "bg-secret",
    background(enabled = true),
    transform(display(output = display_secret), transcript(output = transcript_secret))
)]
pub async fn secret(owner: String) -> Secret {
    Secret {
        owner,
        token: "t0p-s3cret".into(),
    }
}

#[tokio::test]
async fn the_placeholder_is_shown_as_is_and_the_result_through_the_transforms() {
    let runtime = Runtime::new(Registry::from_iter([secret::tool()]));
    let events = tokio::time::timeout(
        PATIENCE,
        runtime.call("bg-secret", json!({"owner": "ada"}), CallOptions::default()).collect(),
    )
    .await
    .expect("the run did not end");
    let raw: Vec<RunEvent> = events.iter().map(|e| wire(&e.raw)).collect();
    assert_eq!(completed_in_background(&raw), json!({"owner": "ada", "token": "t0p-s3cret"}));

    // The placeholder is the runtime's text: every view shows it, task id included.
    let placeholder = &events[1];
    assert_eq!(
        placeholder.display.as_ref(),
        Some(&placeholder.raw.shown()),
        "display view of the placeholder"
    );
    assert_eq!(
        placeholder.transcript.as_ref(),
        Some(&placeholder.raw.shown()),
        "transcript view of the placeholder"
    );

    // The real result goes through the tool's output transforms; the raw token never shows.
    let completed = &events[3];
    let Some(RunEvent::BackgroundTaskCompleted { result, .. }) = completed.display.as_ref().map(wire) else {
        panic!("display view: {completed:#?}");
    };
    assert_eq!(result, json!({"owner": "ada"}));
    let Some(RunEvent::BackgroundTaskCompleted { result, .. }) = completed.transcript.as_ref().map(wire) else {
        panic!("transcript view: {completed:#?}");
    };
    assert_eq!(result, json!("a secret of ada"));
}
