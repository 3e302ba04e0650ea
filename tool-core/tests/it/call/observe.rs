//! `cx.observe().span(...)`: the work runs inside a child span carrying the call's attributes
//! (tool, call id) and the ones given, recorded by a real `tracing` subscriber (the test kit's
//! capture); what the work logs is recorded inside that span.

use serde_json::json;
use tool_core::prelude::*;
use tool_core::testing;

/// Counts rows in a child span
#[tool(id = "observed")]
async fn observed(#[ctx] cx: ToolContext) -> Result<u32, ToolError> {
    let work = async {
        tracing::info!("counting rows");
        3
    };
    Ok(cx.observe().span("count-rows", work, &[("table", json!("orders"))]).await)
}

#[tokio::test]
async fn a_child_span_carries_the_calls_attributes_and_holds_what_the_work_logs() {
    let got = testing::call(observed::tool()).id("call-42").await;
    assert_eq!(got.output(), json!(3));

    let spans = got.spans();
    let span = spans
        .iter()
        .find(|s| s.field("otel.name") == Some("count-rows"))
        .unwrap_or_else(|| panic!("the child span is recorded: {spans:?}"));
    assert_eq!(span.name, "tool.span");
    assert_eq!(span.field("tool"), Some("observed"));
    assert_eq!(span.field("tool_call_id"), Some("call-42"));
    let attributes: serde_json::Value = serde_json::from_str(span.field("attributes").unwrap()).unwrap();
    assert_eq!(attributes, json!({"table": "orders"}));

    let log = got.logs().into_iter().find(|l| l.message == "counting rows");
    let inside = log.map(|l| l.spans.last().cloned());
    assert_eq!(
        inside,
        Some(Some("tool.span".to_owned())),
        "the work's log is inside the span: {:?}",
        got.logs()
    );
}
