//! Memory held per waiting call and per background task, counted exactly: a global allocator
//! that keeps the number of live heap bytes, read before and after N calls that stay open
//! (the performance issue's goal 2 asks for both figures beside the server's RSS).
//!
//! - *waiting call*: a call of a tool that needs approval, through a runtime with the in-memory
//!   store; it ends `AwaitingApproval` and is kept until someone approves or declines it.
//! - *background task*: a call of a background tool whose body waits forever, through the same
//!   runtime; it ends `Backgrounded` at once and its task stays running.
//!
//! `cargo run --release -p tool-core --example memory_per_call -- 1000`

use serde_json::json;
use tool_core::runtime::{Outcome, RunEventKind, Runtime};
use tool_core::spec::{ApprovalRule, BackgroundSpec};
use tool_core::{CallOptions, DynamicTool, Registry};

#[path = "../benches/support/live_bytes.rs"]
mod live_bytes;

#[global_allocator]
static ALLOCATOR: live_bytes::Counting = live_bytes::Counting;

const ARGS: &str = r#"{"city": "Lisbon", "days": 3}"#;

fn schema() -> serde_json::Value {
    json!({
        "type": "object",
        "properties": {"city": {"type": "string", "maxLength": 100}, "days": {"type": "integer", "minimum": 1, "maximum": 14}},
        "required": ["city"]
    })
}

fn main() {
    let n: usize = std::env::args().nth(1).and_then(|n| n.parse().ok()).unwrap_or(1000);
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .expect("a runtime");
    let approve = DynamicTool::builder("needs-approval", "Books a trip once someone approves it")
        .input_schema(schema())
        .with_spec(|s| s.policy.require_approval = ApprovalRule::Always)
        .handler(|_, _| async { Ok(json!("booked")) })
        .expect("a tool");
    let background = DynamicTool::builder("runs-long", "Plans a trip in the background")
        .input_schema(schema())
        .with_spec(|s| {
            s.policy.background = Some(BackgroundSpec {
                enabled: true,
                required: false,
                asks_first: false,
                timeout_ms: None,
                max_retries: None,
                wait_timeout_ms: Some(0),
            })
        })
        .handler(|_, _| async { std::future::pending().await })
        .expect("a tool");
    let runtime = Runtime::builder(Registry::from_iter([approve, background]))
        .max_background_tasks(n + 10)
        .build();
    rt.block_on(async {
        // One of each first, so what is allocated once per process is not counted.
        for (tool, label) in [("needs-approval", "waiting call"), ("runs-long", "background task")] {
            open(&runtime, tool, 1).await;
            let before = live_bytes::live();
            open(&runtime, tool, n).await;
            let after = live_bytes::live();
            println!("{label}: {} bytes each ({n} open)", (after - before) / n as isize);
        }
    });
}

/// Makes `n` calls of `tool` that stay open (waiting or running), checking each one's outcome.
async fn open(runtime: &Runtime, tool: &str, n: usize) {
    for _ in 0..n {
        // A waiting call's run ends with its outcome; a backgrounded call's stream goes on with
        // its task's events: read until the task started (dropping the stream leaves it running).
        let mut stream = runtime.call(tool, ARGS, CallOptions::default());
        while let Some(event) = stream.next().await {
            if matches!(event.raw.kind, RunEventKind::BackgroundTaskStarted { .. }) {
                break;
            }
        }
        match stream.take_outcome() {
            Some(Outcome::AwaitingApproval(_)) | None if tool == "needs-approval" => {}
            Some(Outcome::Backgrounded(_)) | None if tool == "runs-long" => {}
            other => panic!("{tool}: the call ended {other:?}"),
        }
    }
}
