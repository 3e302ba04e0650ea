//! A streamed model response drives each call's hooks in order and runs the calls.

use std::sync::Mutex;

use serde_json::{json, Value};
use tool_core::prelude::*;
use tool_core::runtime::{RunEvent, StreamRun};
use tool_core::stream::StreamFormat;
use tool_core::ErrorKind;

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

/// An Anthropic Messages stream with the given tool_use blocks (id, name, input pieces).
fn anthropic_sse(blocks: &[(&str, &str, &[&str])]) -> String {
    let mut s = String::from("event: message_start\ndata: {\"type\":\"message_start\",\"message\":{\"id\":\"msg_1\",\"type\":\"message\",\"role\":\"assistant\",\"content\":[],\"model\":\"claude\",\"stop_reason\":null,\"usage\":{\"input_tokens\":1,\"output_tokens\":1}}}\n\n");
    for (i, (id, name, pieces)) in blocks.iter().enumerate() {
        let start =
            json!({"type": "content_block_start", "index": i, "content_block": {"type": "tool_use", "id": id, "name": name, "input": {}}});
        s += &format!("event: content_block_start\ndata: {start}\n\n");
        for p in *pieces {
            let d = json!({"type": "content_block_delta", "index": i, "delta": {"type": "input_json_delta", "partial_json": p}});
            s += &format!("event: content_block_delta\ndata: {d}\n\n");
        }
        s += &format!(
            "event: content_block_stop\ndata: {}\n\n",
            json!({"type": "content_block_stop", "index": i})
        );
    }
    s += "event: message_stop\ndata: {\"type\":\"message_stop\"}\n\n";
    s
}

#[tokio::test]
async fn hooks_fire_in_order_and_calls_run() {
    let sse = anthropic_sse(&[
        ("toolu_a", "rt-forecast", &[r#"{"city": "Pa"#, r#"ris", "days""#, ": 3}"]),
        ("toolu_b", "rt-forecast", &[r#"{"city": "PANIC"#, r#"Oslo"}"#]),
        ("toolu_c", "no-such-tool", &["{}"]),
        ("toolu_d", "rt-delete", &[r#"{"scope": "all"}"#]),
    ]);
    let registry = Registry::global();
    let mut run = StreamRun::new(registry, StreamFormat::Anthropic, CallOptions::default());
    let mut events = Vec::new();
    // Feed in small chunks, checking the live preview on the way.
    let mut saw_partial_preview = false;
    for chunk in sse.as_bytes().chunks(7) {
        events.extend(run.push(chunk).await.unwrap());
        if let Some(p) = run.preview("toolu_a") {
            saw_partial_preview |= p == &json!({"city": "Pa"});
        }
    }
    events.extend(run.finish().await.unwrap());
    assert!(saw_partial_preview, "the preview showed the partial city");

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

    let results: Vec<(&str, &RunEvent)> = events
        .iter()
        .filter_map(|e| match e {
            RunEvent::ToolResult { tool_call_id, .. } | RunEvent::ToolError { tool_call_id, .. } => Some((tool_call_id.as_str(), e)),
            _ => None,
        })
        .collect();
    assert_eq!(results.len(), 4);
    match results[0].1 {
        RunEvent::ToolResult { result, model_output, .. } => {
            assert_eq!(result, &json!("Paris: sunny for 3 days"));
            assert_eq!(model_output, &ModelOutput::Json(json!("Paris: sunny for 3 days")));
        }
        other => panic!("{other:?}"),
    }
    assert!(matches!(results[1].1, RunEvent::ToolResult { result, .. } if result == &json!("PANICOslo: sunny for 1 days")));
    assert!(matches!(results[2].1, RunEvent::ToolError { error, .. } if error.kind() == ErrorKind::UnknownTool));
    assert!(matches!(results[3].1, RunEvent::ToolError { error, .. } if error.kind() == ErrorKind::ApprovalRequired));
    // Each call's ToolCall event carries the parsed arguments.
    let args: Vec<&Value> = events
        .iter()
        .filter_map(|e| {
            if let RunEvent::ToolCall { args, .. } = e {
                Some(args)
            } else {
                None
            }
        })
        .collect();
    assert_eq!(args[0], &json!({"city": "Paris", "days": 3}));
}
