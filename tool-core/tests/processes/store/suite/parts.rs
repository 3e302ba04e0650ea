//! Tasks that gather input, against every backend ([`CASES`], run by the suite for memory,
//! SQLite and PostgreSQL): a task whose tool suspends itself with a resume type in parts waits
//! in the pending store under its task id, its parts given one at a time on two instances (the
//! first part kept in the store, read by the other instance), and queued again as the same task
//! with them once the last is in; and a tool that gathers its input first
//! (`background(required, asks_first)`), whose first run suspends in the foreground and whose
//! resumed run is the task.

use std::time::{Duration, Instant};

use serde_json::Map;
use tool_core::context::CallData;
use tool_core::prelude::*;
use tool_core::runtime::backend::TaskState;
use tool_core::runtime::{Outcome, Parted, ResumeOptions, Runtime, RuntimeError, TaskOptions};
use tool_core::spec::BackgroundOverride;

use super::{Backend, Case};

/// The cases every backend passes.
pub const CASES: &[(&str, Case)] = &[
    ("a_task_answered_in_parts_on_two_instances_resumes_as_the_same_task", |b| {
        Box::pin(parts_on_two_instances(b))
    }),
    ("a_tool_that_asks_first_suspends_in_the_foreground_and_resumes_as_a_task", |b| {
        Box::pin(asks_first(b))
    }),
];

/// What the suite's tools ask.
#[derive(Serialize, Deserialize, JsonSchema)]
struct Ask {
    /// The question
    question: String,
}

/// One part of the answer.
#[derive(Serialize, Deserialize, JsonSchema)]
struct Part {
    /// A name
    name: String,
    /// Whether to go on
    confirm: bool,
}

/// The answer in two parts.
#[derive(Serialize, Deserialize, JsonSchema)]
struct TwoParts {
    /// The first part
    first: Part,
    /// The second part
    second: Part,
}

/// Asks two questions at once, then answers with both answers
#[tool(id = "suite-parts", background(enabled = true), suspend = Ask, resume = TwoParts)]
async fn suite_parts(#[ctx] cx: ToolContext<RequestContext, Ask, TwoParts>) -> Result<String, ToolError> {
    match cx.resume_data()? {
        None => Err(cx.suspend(Ask {
            question: "two parts".into(),
        })),
        Some(TwoParts { first, second }) => Ok(format!("{} {} / {} {}", first.name, first.confirm, second.name, second.confirm)),
    }
}

/// A name.
#[derive(Serialize, Deserialize, JsonSchema)]
struct Name {
    /// The name
    name: String,
}

/// Asks for a name in the foreground, then greets as a task
#[tool(id = "suite-asks-first", background(required, asks_first), suspend = Ask, resume = Name)]
async fn suite_asks_first(#[ctx] cx: ToolContext<RequestContext, Ask, Name>) -> Result<String, ToolError> {
    match cx.resume_data()? {
        None => Err(cx.suspend(Ask {
            question: "your name?".into(),
        })),
        Some(Name { name }) => Ok(format!("hello {name}")),
    }
}

/// A runtime over new handles on the store and its task queue.
async fn runtime(b: &Backend) -> Runtime {
    let fast = TaskOptions::default().poll_interval(Duration::from_millis(20));
    Runtime::builder(Registry::global())
        .shared_store(b.open().await)
        .task_store(b.open_tasks().await, fast)
        .build()
}

/// Polls until `done` holds (at most 10 s).
async fn until<F: std::future::Future<Output = bool>>(what: &str, mut done: impl FnMut() -> F) {
    let start = Instant::now();
    while !done().await {
        assert!(start.elapsed() < Duration::from_secs(10), "timed out waiting until {what}");
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
}

/// The task's record once it ended.
async fn ended(runtime: &Runtime, task_id: &str) -> tool_core::runtime::backend::TaskRecord {
    until("the task ended", || async {
        runtime.task(task_id).await.unwrap().is_some_and(|r| r.state.is_final())
    })
    .await;
    runtime.task(task_id).await.unwrap().unwrap()
}

fn part(name: &str, confirm: bool) -> Map<String, Value> {
    let mut map = Map::new();
    map.insert(name.to_owned(), json!({"name": name, "confirm": confirm}));
    map
}

async fn parts_on_two_instances(b: Backend) {
    let (a, other) = (runtime(&b).await, runtime(&b).await);
    let (call_id, task_id) = ("call_parts", "task_parts");
    let options = CallOptions {
        data: CallData {
            tool_call_id: Some(call_id.into()),
            background: Some(BackgroundOverride {
                enabled: Some(true),
                wait_timeout_ms: Some(0),
                task_id: Some(task_id.into()),
                ..Default::default()
            }),
            ..Default::default()
        },
        ..Default::default()
    };
    // The caller listens: it hears the task's call suspend.
    let run = a.call("suite-parts", json!({}), options).finish().await;
    let Outcome::Suspended(waiting) = &run.outcome else {
        panic!("{:?}", run.outcome)
    };
    assert_eq!(waiting.call.suspend_payload, Some(json!({"question": "two parts"})));
    assert!(a.task(task_id).await.unwrap().is_none(), "the task left the queue while it waits");
    let stored = other.pending_call(call_id).await.unwrap().expect("the call waits in the store");
    assert_eq!(stored.parts(), ["first", "second"]);
    assert_eq!(stored.missing_parts(), ["first", "second"]);
    assert_eq!(
        stored.data.background.as_ref().and_then(|b| b.task_id.as_deref()),
        Some(task_id),
        "it keeps its task id"
    );
    assert_eq!(
        stored.part_schema("first").unwrap()["properties"]["confirm"]["type"],
        "boolean",
        "$ref resolved"
    );

    // A name that is no part is refused, and nothing is kept.
    let refused = a.answer_part(call_id, part("third", true), ResumeOptions::default()).await;
    assert!(
        matches!(&refused, Err(RuntimeError::InvalidResume(e)) if e.message().contains("no part `third`")),
        "{:?}",
        refused.err()
    );
    // A part that does not match its schema is refused, and nothing is kept.
    let mut wrong = Map::new();
    wrong.insert("first".into(), json!({"name": "first"}));
    let refused = a.answer_part(call_id, wrong, ResumeOptions::default()).await;
    assert!(
        matches!(&refused, Err(RuntimeError::InvalidResume(e)) if e.message().contains("confirm")),
        "{:?}",
        refused.err()
    );
    assert!(other.pending_call(call_id).await.unwrap().unwrap().answers.is_empty());
    // The first part on one instance; the other instance reads it from the store.
    match a.answer_part(call_id, part("first", true), ResumeOptions::default()).await.unwrap() {
        Parted::Waiting { missing } => assert_eq!(missing, ["second"]),
        Parted::Resumed(_) => panic!("resumed with a part missing"),
    }
    let stored = other.pending_call(call_id).await.unwrap().expect("still waiting");
    assert_eq!(stored.answers.get("first"), Some(&json!({"name": "first", "confirm": true})));
    assert_eq!(stored.missing_parts(), ["second"]);
    assert!(a.task(task_id).await.unwrap().is_none(), "not queued with a part missing");

    // The last part on the other instance: queued again as the same task, with both parts.
    let Parted::Resumed(stream) = other
        .answer_part(call_id, part("second", false), ResumeOptions::default())
        .await
        .unwrap()
    else {
        panic!("the last part resumes the call")
    };
    drop(stream);
    let record = ended(&a, task_id).await;
    assert_eq!(record.state, TaskState::Completed, "{:?}", record.error);
    assert_eq!(record.output.unwrap().value(), json!("first true / second false"));
    assert!(a.pending_call(call_id).await.unwrap().is_none(), "the waiting call is gone");
}

async fn asks_first(b: Backend) {
    let (a, other) = (runtime(&b).await, runtime(&b).await);
    let call_id = "call_asks_first";
    let options = CallOptions {
        data: CallData {
            tool_call_id: Some(call_id.into()),
            ..Default::default()
        },
        ..Default::default()
    };
    // The first run is the foreground's: it suspends, and no task is queued.
    let run = a.call("suite-asks-first", json!({}), options).finish().await;
    let Outcome::Suspended(waiting) = &run.outcome else {
        panic!("{:?}", run.outcome)
    };
    assert_eq!(waiting.id(), call_id);
    let kinds: Vec<&str> = run.events.iter().map(|e| e.raw.type_name()).collect();
    assert!(!kinds.contains(&"background-task-started"), "{kinds:?}");
    // Resumed on the other instance as the task the options name.
    let task_id = "task_asks_first";
    let settings = BackgroundOverride {
        task_id: Some(task_id.into()),
        wait_timeout_ms: Some(0),
        ..Default::default()
    };
    let resumed = other
        .resume(call_id, json!({"name": "Ada"}), ResumeOptions::default().background(settings))
        .await
        .unwrap();
    // (A worker may end the task before the resuming caller's wait of 0 ms is up: then the
    // result comes without the placeholder.)
    let run = resumed.finish().await;
    let Outcome::Done(output) = &run.outcome else {
        panic!("{:?}", run.outcome)
    };
    assert_eq!(output.value(), json!("hello Ada"));
    let record = ended(&a, task_id).await;
    assert_eq!(record.state, TaskState::Completed, "it ran as the task the options named");
    assert_eq!(record.output.unwrap().value(), json!("hello Ada"));
    assert_eq!(
        record.task.resume_data,
        Some(json!({"name": "Ada"})),
        "the task carries the gathered answer"
    );
    assert!(a.pending_call(call_id).await.unwrap().is_none());
}
