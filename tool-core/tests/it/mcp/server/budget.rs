//! Bounded model output: a cut result links its full form, readable by its session only.

use super::http_client::*;
use super::*;

/// `big` returns 300 000 `ü` (600 000 bytes) within a 1 KiB budget; `rows` returns an object
/// under an output schema, larger than the registry's 2 KiB default.
fn budget_tools() -> Registry {
    let big = DynamicTool::builder("big", "Returns a long text")
        .max_model_output(1024)
        .handler(|_, _| async move { Ok(json!("ü".repeat(300_000))) })
        .unwrap();
    let rows = DynamicTool::builder("rows", "Returns many rows")
        .output_schema(json!({"type": "object", "properties": {"rows": {"type": "array"}}, "required": ["rows"]}))
        .handler(|_, _| async move { Ok(json!({"rows": (0..2000).collect::<Vec<_>>()})) })
        .unwrap();
    let registry = Registry::try_from_tools([big, rows]).unwrap();
    registry.set_model_output_budget(Some(tool_core::budget::OutputBudget::parse("2KiB").unwrap()));
    registry
}

/// The `resource_link` a cut result ends with.
fn result_link(result: &Value) -> String {
    let last = result["content"].as_array().and_then(|c| c.last()).cloned().unwrap_or_default();
    assert_eq!(last["type"], "resource_link", "a cut result ends with a link: {result}");
    let uri = last["uri"].as_str().unwrap().to_owned();
    assert!(uri.starts_with("toolsmith://results/mcp_"), "{uri}");
    uri
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn stdio_cut_result_is_read_in_full_by_its_session_and_refused_to_another() {
    let server = server_with(budget_tools(), McpConfig::default());
    let mut a = Stdio::start(server.clone());
    let init = a.initialize(json!({})).await;
    assert!(init["capabilities"]["resources"].is_object(), "results are resources: {init}");
    let mut b = Stdio::start(server);
    b.initialize(json!({})).await;

    let (r, _) = a.call(1, "big", json!({})).await;
    let seen = text_of(&r);
    assert!(seen.len() <= 1024 + 300, "the model sees {} bytes", seen.len());
    assert!(seen.contains("of 600000 bytes left out here"), "{seen}");
    let uri = result_link(&r);
    assert!(seen.contains(&uri), "the marker says where the rest is");

    let (read, _) = a.request(2, "resources/read", json!({"uri": uri})).await;
    let contents = &result_of(&read)["contents"];
    assert_eq!(contents[0]["uri"], json!(uri));
    assert_eq!(contents[0]["text"].as_str().unwrap(), "ü".repeat(300_000), "the full result");

    let (refused, _) = b.request(1, "resources/read", json!({"uri": uri})).await;
    let message = refused["error"]["message"]
        .as_str()
        .unwrap_or_else(|| panic!("not refused: {refused}"));
    let (unknown, _) = a.request(3, "resources/read", json!({"uri": "toolsmith://results/mcp_nope"})).await;
    assert_eq!(unknown["error"]["code"], json!(-32002), "{unknown}");
    assert!(unknown["error"]["message"].as_str().unwrap().contains("not kept here"));
    // Another session's result is told exactly what an unknown one is: no oracle of its existence.
    assert_eq!(refused["error"]["code"], unknown["error"]["code"], "{refused}");
    let id = uri.trim_start_matches("toolsmith://results/");
    assert_eq!(
        message.replace(id, "ID"),
        unknown["error"]["message"].as_str().unwrap().replace("mcp_nope", "ID")
    );
    a.close().await;
    b.close().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn http_structured_content_over_budget_is_left_out_and_linked() {
    let server = start_http(server_with(budget_tools(), McpConfig::default()), HttpOptions::default()).await;
    let a = HttpSession::open(server.addr, None, json!({})).await;
    let b = HttpSession::open(server.addr, None, json!({})).await;
    let (r, _) = a.request(1, "tools/call", call_params("rows", json!({}))).await;
    let result = result_of(&r);
    assert!(
        result.get("structuredContent").is_none(),
        "too large for the budget: {}",
        &result.to_string()[..300]
    );
    assert!(text_of(result).contains("structuredContent was left out"), "{}", text_of(result));
    assert!(text_of(result).len() <= 2048 + 400);
    let uri = result_link(result);
    let (read, _) = a.request(2, "resources/read", json!({"uri": uri})).await;
    let contents = &result_of(&read)["contents"];
    let full: Value = serde_json::from_str(contents[1]["text"].as_str().unwrap()).unwrap();
    assert_eq!(contents[1]["mimeType"], "application/json");
    assert_eq!(full["rows"].as_array().unwrap().len(), 2000, "the raw output, whole");
    let (refused, _) = b.request(1, "resources/read", json!({"uri": uri})).await;
    assert!(refused.get("error").is_some(), "another session may not read it: {refused}");
}
