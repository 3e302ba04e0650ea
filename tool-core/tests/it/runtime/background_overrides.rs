//! Per-call overrides of a tool's background options: what they may change (foreground or
//! background, retries, the wait timeout) and what they may not (a task-required tool, a tool
//! that never opted in).

use std::sync::atomic::{AtomicU32, Ordering::SeqCst};

use tool_core::prelude::*;
use tool_core::runtime::Runtime;
use tool_core::spec::BackgroundOverride;

use super::background_support::*;

// ---------------------------------------------------------------------------------------------
// Per-call overrides
// ---------------------------------------------------------------------------------------------

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
