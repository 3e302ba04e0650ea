//! Background tasks that fail: retries, per-attempt timeouts and panics (each tool with its own
//! attempt counter: tests run in parallel).

use std::sync::atomic::{AtomicU32, Ordering::SeqCst};
use std::time::Duration;

use tokio::sync::Semaphore;
use tool_core::CancellationToken;
use tool_core::prelude::*;
use tool_core::runtime::Runtime;

use super::background_support::*;
use crate::support::wire::Wire as RunEvent;

// ---------------------------------------------------------------------------------------------
// Retries
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
// Per-attempt timeout
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
// Panics
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
