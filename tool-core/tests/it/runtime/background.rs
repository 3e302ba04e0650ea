//! Background tasks through the runtime: the placeholder, the task's events, the wait timeout,
//! the concurrency limit, validation, approval and views. Retries, per-attempt timeouts and
//! panics are in `background_retries`, per-call overrides in `background_overrides`, the
//! helpers they share in `background_support`.
//!
//! Every tool here has its own attempt counter or gate (tests run in parallel). No test
//! depends on timing beyond generous timeouts: a tool that must still be running when the
//! placeholder is sent waits on a gate the test opens only after seeing the placeholder.

use std::sync::atomic::{AtomicU32, Ordering::SeqCst};
use std::time::Duration;

use tokio::sync::Semaphore;
use tool_core::prelude::*;
use tool_core::runtime::{ResumeOptions, Runtime};

use super::background_support::*;
use crate::support::wire::{Wire as RunEvent, wire};

// ---------------------------------------------------------------------------------------------
// The placeholder, then the task's events
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
// wait_timeout_ms
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
// Concurrency limit
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
// Validation
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
