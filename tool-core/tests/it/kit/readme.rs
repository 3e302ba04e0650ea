//! The guide's "Testing your tools" example: the guide includes this file between the anchors
//! (mdBook's `{{#include}}`), so what it shows is what runs here.
// ANCHOR: example
use std::time::Duration;

use tool_core::ErrorKind;
use tool_core::prelude::*;
use tool_core::testing::{self, McpPair, ScriptedStream};

/// Look up the weather for a city
#[tool(id = "readme-weather")]
async fn weather(#[ctx] cx: ToolContext, city: String) -> Result<String, ToolError> {
    cx.writer().write(json!({"looking_up": city}));
    if let Some(mcp) = cx.mcp() {
        mcp.progress(1.0, Some(1.0), None);
    }
    if city == "Atlantis" {
        tokio::time::sleep(Duration::from_secs(60)).await;
    }
    let unit: String = cx.request_context().get("unit").unwrap_or_else(|| "celsius".into());
    Ok(format!("{city}: 21 degrees {unit}"))
}

#[tokio::test]
async fn one_line_with_context_chunks_and_progress() {
    let got = testing::call(weather::tool())
        .context(json!({"unit": "fahrenheit"}))
        .args(json!({"city": "Paris"}))
        .await;
    assert_eq!(got.output(), json!("Paris: 21 degrees fahrenheit"));
    assert_eq!(got.chunks(), [json!({"looking_up": "Paris"})]);
    assert_eq!(got.progress().len(), 1);
    assert_eq!(got.hooks()[0].line(), r#"execute {"city":"Paris"}"#);
}

#[tokio::test]
async fn a_timeout_on_the_fake_clock_takes_no_time() {
    let got = testing::call(weather::tool())
        .args(json!({"city": "Atlantis"}))
        .timeout(Duration::from_secs(5))
        .fake_clock()
        .await;
    assert_eq!(got.error().kind(), ErrorKind::Aborted);
}

#[tokio::test]
async fn a_scripted_model_streams_the_call() {
    let got = ScriptedStream::openai_chat()
        .tool_call("call_1", "readme-weather", json!({"city": "Oslo"}))
        .chunk_size(3)
        .replay()
        .tools([weather::tool()])
        .await;
    assert_eq!(got.result_of("call_1"), json!("Oslo: 21 degrees celsius"));
    assert_eq!(got.previews("call_1").last(), Some(&json!({"city": "Oslo"})));
}

#[tokio::test]
async fn over_mcp_in_process() {
    let mcp = McpPair::of(Registry::from_iter([weather::tool()])).await;
    assert_eq!(mcp.tool_names().await, ["readme-weather"]);
    let call = mcp.call("readme-weather", json!({"city": "Rome"})).await;
    assert_eq!(call.text(), "Rome: 21 degrees celsius");
    assert_eq!(call.progress.len(), 1);
}

#[test]
fn the_schema_is_snapshotted() {
    tool_core::assert_tool_schema_snapshot!(weather::tool());
}

// ANCHOR_END: example
