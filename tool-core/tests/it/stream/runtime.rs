//! A streamed model response drives each call's hooks in order and runs the calls.

use serde_json::json;
use tool_core::prelude::*;
use tool_core::runtime::{RunEventKind as K, ShownOutput};
use tool_core::testing::{Hook, ScriptedStream};

fn started(_call: &ToolCallInfo) {}
fn delta(_call: &ToolCallInfo, d: &str) -> Result<(), String> {
    if d.contains("PANIC") {
        panic!("a hook panicked");
    }
    Ok(())
}
fn available(_call: &ToolCallInfo, _input: &InputOf<forecast>) {}
fn output(_call: &ToolCallInfo, _out: &String) -> Result<(), String> {
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
    format!("{city}: sunny for {} days", days.unwrap_or(1))
}

fn gated(_input: &InputOf<delete_all>, _cx: &RequestContext) -> bool {
    true
}
fn gated_available(_call: &ToolCallInfo, _input: &InputOf<delete_all>) {}

/// Deletes everything (needs approval)
#[tool(id = "rt-delete", require_approval = gated, on_input_available = gated_available)]
pub async fn delete_all(
    /// Scope
    scope: String,
) -> String {
    scope
}

#[tokio::test]
async fn hooks_fire_in_order_and_calls_run() {
    // Fed in small chunks, with the live preview recorded on the way.
    let got = ScriptedStream::anthropic()
        .tool_call_pieces("toolu_a", "rt-forecast", &[r#"{"city": "Pa"#, r#"ris", "days""#, ": 3}"])
        .tool_call_pieces("toolu_b", "rt-forecast", &[r#"{"city": "PANIC"#, r#"Oslo"}"#])
        .tool_call_pieces("toolu_c", "no-such-tool", &["{}"])
        .tool_call_pieces("toolu_d", "rt-delete", &[r#"{"scope": "all"}"#])
        .replay()
        // Its own tools: this binary defines some ids twice (`call::from_module`), so it has
        // no global registry.
        .tools([forecast::tool(), delete_all::tool()])
        .byte_chunks(7)
        .await;
    assert!(
        got.previews("toolu_a").contains(&json!({"city": "Pa"})),
        "the preview showed the partial city"
    );
    // Calls run concurrently: each call's own events are in order.
    for id in ["toolu_a", "toolu_b", "toolu_c", "toolu_d"] {
        let kinds = got.types_of(id);
        assert_eq!(kinds.first(), Some(&"input-streaming-start"), "{id}: {kinds:?}");
        let call = kinds.iter().position(|k| *k == "tool-call").unwrap();
        assert!(kinds[1..call].iter().all(|k| *k == "input-delta"), "{id}: {kinds:?}");
        assert_eq!(kinds.len(), call + 2, "one outcome after the call: {id}: {kinds:?}");
    }

    // The hooks, the body and on_output, in order (on_output's failure is only logged).
    assert_eq!(
        got.hook_lines("toolu_a"),
        [
            "on_input_start",
            r#"on_input_delta {"city": "Pa"#,
            r#"on_input_delta ris", "days""#,
            "on_input_delta : 3}",
            r#"on_input_available {"city":"Paris","days":3}"#,
            r#"execute {"city":"Paris","days":3}"#,
            r#"on_output "Paris: sunny for 3 days""#,
        ]
    );
    assert!(got.logs().iter().any(|l| l.message == "on_output hook failed"));
    // A panicking delta hook is logged, not fatal: the call still runs.
    let b = got.hooks().into_iter().filter(|h| h.tool_call_id == "toolu_b").collect::<Vec<_>>();
    assert!(
        b.iter().any(|h| h.hook
            == Hook::InputDelta {
                delta: r#"{"city": "PANIC"#.into()
            }
            && h.error.is_some()),
        "{b:?}"
    );
    assert!(
        b.iter().any(|h| h.hook
            == Hook::Execute {
                input: json!({"city": "PANICOslo"})
            }),
        "{b:?}"
    );
    // on_input_available runs before the approval check; the tool itself never runs.
    assert_eq!(got.hook_lines("toolu_d"), [r#"on_input_available {"scope":"all"}"#]);

    match got.last_of("toolu_a").kind {
        K::ToolResult {
            output: ShownOutput { result, model_output },
        } => {
            assert_eq!(result, json!("Paris: sunny for 3 days"));
            assert_eq!(model_output, None);
        }
        other => panic!("{other:?}"),
    }
    assert_eq!(got.result_of("toolu_b"), json!("PANICOslo: sunny for 1 days"));
    assert_eq!(got.error_of("toolu_c")["kind"], "unknown_tool");
    assert!(matches!(got.last_of("toolu_d").kind, K::ToolCallApproval { args, .. } if args == json!({"scope": "all"})));
    // The ToolCall event carries the validated arguments.
    assert_eq!(got.args_of("toolu_a"), Some(json!({"city": "Paris", "days": 3})));
    assert_eq!(got.runtime().pending().await.unwrap().len(), 1, "the approval waits in the store");
}
