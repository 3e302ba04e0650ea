//! A streamed model response drives each call's hooks in order and runs the calls.

mod support {
    pub mod anthropic_sse;
}
use support::anthropic_sse::anthropic_sse;

use std::sync::Mutex;

use serde_json::json;
use tool_core::prelude::*;
use tool_core::runtime::{RunEventKind as K, Runtime, ShownEvent, ShownOutput};
use tool_core::Dialect;

static LOG: Mutex<Vec<String>> = Mutex::new(Vec::new());

fn log(line: String) {
    LOG.lock().unwrap().push(line);
}

fn started(call: &ToolCallInfo) {
    log(format!("{} start", call.tool_call_id));
}
fn delta(call: &ToolCallInfo, d: &str) -> Result<(), String> {
    if d.contains("PANIC") {
        panic!("a hook panicked");
    }
    log(format!("{} delta {d}", call.tool_call_id));
    Ok(())
}
fn available(call: &ToolCallInfo, input: &InputOf<forecast>) {
    log(format!("{} available {}", call.tool_call_id, input.city));
}
fn output(call: &ToolCallInfo, out: &String) -> Result<(), String> {
    log(format!("{} output {out}", call.tool_call_id));
    Err("the on_output hook fails, which must not fail the call".into())
}

/// Forecast for a city
#[tool(id = "rt-forecast", on_input_start = started, on_input_delta = delta, on_input_available = available, on_output = output)]
pub async fn forecast(
    /// City
    city: String,
    /// Days
    days: Option<u32>,
) -> String {
    log(format!("execute {city}"));
    format!("{city}: sunny for {} days", days.unwrap_or(1))
}

fn gated(_input: &InputOf<delete_all>, _cx: &RequestContext) -> bool {
    true
}
fn gated_available(call: &ToolCallInfo, _input: &InputOf<delete_all>) {
    log(format!("{} available (approval pending)", call.tool_call_id));
}

/// Deletes everything (needs approval)
#[tool(id = "rt-delete", require_approval = gated, on_input_available = gated_available)]
pub async fn delete_all(
    /// Scope
    scope: String,
) -> String {
    log("execute delete".into());
    scope
}

#[tokio::test]
async fn hooks_fire_in_order_and_calls_run() {
    let sse = anthropic_sse(&[
        ("toolu_a", "rt-forecast", &[r#"{"city": "Pa"#, r#"ris", "days""#, ": 3}"]),
        ("toolu_b", "rt-forecast", &[r#"{"city": "PANIC"#, r#"Oslo"}"#]),
        ("toolu_c", "no-such-tool", &["{}"]),
        ("toolu_d", "rt-delete", &[r#"{"scope": "all"}"#]),
    ]);
    let runtime = Runtime::new(Registry::global());
    let (mut run, stream) = runtime.stream(Dialect::Anthropic, CallOptions::default());
    // Feed in small chunks, checking the live preview on the way.
    let mut saw_partial_preview = false;
    for chunk in sse.as_bytes().chunks(7) {
        run.push(chunk).unwrap();
        if let Some(p) = run.preview("toolu_a") {
            saw_partial_preview |= p == &json!({"city": "Pa"});
        }
    }
    run.finish().unwrap();
    let events: Vec<ShownEvent> = stream.collect().await.into_iter().map(|e| e.raw.shown()).collect();
    assert!(saw_partial_preview, "the preview showed the partial city");
    // Calls run concurrently: each call's own events are in order.
    for id in ["toolu_a", "toolu_b", "toolu_c", "toolu_d"] {
        let kinds: Vec<&str> = events
            .iter()
            .filter(|e| e.tool_call_id() == id)
            .map(ShownEvent::type_name)
            .collect();
        assert_eq!(kinds.first(), Some(&"input-streaming-start"), "{id}: {kinds:?}");
        let call = kinds.iter().position(|k| *k == "tool-call").unwrap();
        assert!(kinds[1..call].iter().all(|k| *k == "input-delta"), "{id}: {kinds:?}");
        assert_eq!(kinds.len(), call + 2, "one outcome after the call: {id}: {kinds:?}");
    }

    let log = LOG.lock().unwrap().clone();
    let expected_a = [
        "toolu_a start",
        r#"toolu_a delta {"city": "Pa"#,
        r#"toolu_a delta ris", "days""#,
        "toolu_a delta : 3}",
        "toolu_a available Paris",
        "execute Paris",
        "toolu_a output Paris: sunny for 3 days",
    ];
    let pos: Vec<usize> = expected_a
        .iter()
        .map(|e| {
            log.iter()
                .position(|l| l == e)
                .unwrap_or_else(|| panic!("missing {e:?} in {log:?}"))
        })
        .collect();
    assert!(pos.windows(2).all(|w| w[0] < w[1]), "hooks out of order: {log:?}");
    // A panicking delta hook is logged, not fatal: the call still runs.
    assert!(log.contains(&"execute PANICOslo".to_string()), "{log:?}");
    // on_input_available runs before the approval check; the tool itself never runs.
    assert!(log.contains(&"toolu_d available (approval pending)".to_string()), "{log:?}");
    assert!(!log.contains(&"execute delete".to_string()));

    let outcome = |id: &str| events.iter().rev().find(|e| e.tool_call_id() == id).unwrap();
    match &outcome("toolu_a").kind {
        K::ToolResult {
            output: ShownOutput { result, model_output },
        } => {
            assert_eq!(result, &json!("Paris: sunny for 3 days"));
            assert_eq!(model_output, &None);
        }
        other => panic!("{other:?}"),
    }
    assert!(matches!(&outcome("toolu_b").kind, K::ToolResult { output } if output.result == json!("PANICOslo: sunny for 1 days")));
    let K::ToolError { error } = &outcome("toolu_c").kind else {
        panic!()
    };
    assert_eq!(error["kind"], "unknown_tool");
    assert!(matches!(&outcome("toolu_d").kind, K::ToolCallApproval { args, .. } if args == &json!({"scope": "all"})));
    // The ToolCall event carries the validated arguments.
    let args = events.iter().find_map(|e| match &e.kind {
        K::ToolCall { args } if e.tool_call_id() == "toolu_a" => Some(args),
        _ => None,
    });
    assert_eq!(args, Some(&json!({"city": "Paris", "days": 3})));
    assert_eq!(runtime.pending().await.unwrap().len(), 1, "the approval waits in the store");
}
