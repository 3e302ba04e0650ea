//! The 2026-07-28 diagnostic tools: a form on the call's response stream, log levels, a tool
//! change on demand, a header-bound parameter, a required client capability, and the
//! input-required results (SEP-2322), whose questions go under keys the tool chooses.

use tool_core::prelude::*;

use super::client_tests::{DYNAMIC, add_tool, remove_tool, served};
use super::suite::elicit;
use super::{bounded, client};

/// Asks the user for input mid-call: a form on the call's response stream (an input-required
/// result on 2026-07-28, never a request of the server's own)
#[tool(id = "test_streaming_elicitation")]
pub async fn test_streaming_elicitation(#[ctx] cx: ToolContext) -> Result<String, ToolError> {
    let schema = json!({"type": "object", "properties": {"answer": {"type": "string"}}, "required": ["answer"]});
    elicit(&cx, "Please answer".into(), schema).await
}

/// Logs one message at each of three levels; a client that asked for no log level hears none
#[tool(id = "test_logging_tool")]
pub async fn test_logging_tool(#[ctx] cx: ToolContext) -> String {
    cx.observe().log(LogLevel::Debug, "debug from test_logging_tool", None);
    cx.observe().log(LogLevel::Info, "info from test_logging_tool", None);
    cx.observe().log(LogLevel::Warn, "warning from test_logging_tool", None);
    "logged three messages".into()
}

/// Adds `dynamic_echo` when it is not served, removes it when it is (subscribers hear
/// `tools/list_changed` either way)
#[tool(id = "test_trigger_tool_change")]
pub async fn test_trigger_tool_change() -> Result<String, ToolError> {
    if served()?.get(DYNAMIC).is_some() {
        remove_tool().await
    } else {
        add_tool().await
    }
}

/// Routes by region: `region` travels as the HTTP header `Mcp-Param-Region` too (SEP-2243),
/// and the server refuses a request whose header and argument differ
#[tool(id = "test_custom_headers")]
pub async fn test_custom_headers(
    /// The region (the first 200 characters are echoed)
    #[tool(header = "Region")]
    region: String,
    /// A note echoed back (its first 200 characters)
    note: Option<String>,
) -> String {
    let note = note.as_deref().map(|n| format!(": {}", bounded(n))).unwrap_or_default();
    format!("region {}{note}", bounded(&region))
}

/// Samples the client's model; it requires the sampling capability, so a client that did not
/// declare it is refused before the tool runs (`-32021`)
#[tool(id = "test_missing_capability", mcp(requires = ["sampling"]))]
pub async fn test_missing_capability(#[ctx] cx: ToolContext) -> Result<String, ToolError> {
    let answer = client(&cx)?
        .sample(json!({"messages": [{"role": "user", "content": {"type": "text", "text": "Say hello"}}], "maxTokens": 20}))
        .await?;
    Ok(format!("The model said: {}", sampled(&answer)))
}

// ---- input-required results (SEP-2322): questions asked under keys the tool chooses ----

/// An `elicitation/create` request for one required field.
pub(crate) fn form_request(message: &str, field: &str, kind: &str) -> Value {
    json!({
        "method": "elicitation/create",
        "params": {
            "message": message,
            "requestedSchema": {"type": "object", "properties": {field: {"type": kind}}, "required": [field]}
        }
    })
}

/// A `sampling/createMessage` request for one user message.
fn sampling_request(text: &str, max_tokens: u32) -> Value {
    json!({
        "method": "sampling/createMessage",
        "params": {"messages": [{"role": "user", "content": {"type": "text", "text": text}}], "maxTokens": max_tokens}
    })
}

/// A `roots/list` request.
fn roots_request() -> Value {
    json!({"method": "roots/list", "params": {}})
}

/// Asks the client the questions of `requests` (an object of key → request) at once.
async fn ask(cx: &ToolContext, requests: Value) -> Result<serde_json::Map<String, Value>, ToolError> {
    let Value::Object(requests) = requests else {
        return Err(ToolError::new("the questions are an object of key → request"));
    };
    client(cx)?.ask(requests).await
}

/// A field of an accepted form (at most 200 characters of it), or `-`.
fn accepted<'a>(answer: &'a Value, field: &str) -> &'a str {
    match answer["action"].as_str() {
        Some("accept") => answer["content"][field].as_str().map_or("-", bounded),
        _ => "-",
    }
}

/// The text of a sampling result (its first 200 characters).
fn sampled(answer: &Value) -> String {
    let blocks = match &answer["content"] {
        Value::Array(items) => items.clone(),
        one => vec![one.clone()],
    };
    let text: Vec<&str> = blocks.iter().filter_map(|b| b["text"].as_str()).collect();
    bounded(&text.join("\n")).to_owned()
}

/// The root URIs of a `roots/list` result (at most 20).
fn root_uris(answer: &Value) -> Vec<&str> {
    answer["roots"]
        .as_array()
        .map(|roots| roots.iter().take(20).filter_map(|r| r["uri"].as_str()).map(bounded).collect())
        .unwrap_or_default()
}

/// Asks the user's name (`user_name`) and greets them
#[tool(id = "test_input_required_result_elicitation")]
pub async fn test_input_required_result_elicitation(#[ctx] cx: ToolContext) -> Result<String, ToolError> {
    let answers = ask(&cx, json!({"user_name": form_request("What is your name?", "name", "string")})).await?;
    Ok(format!("Hello, {}!", accepted(&answers["user_name"], "name")))
}

/// Asks the client's model a question (`capital_question`) and answers with its reply
#[tool(id = "test_input_required_result_sampling")]
pub async fn test_input_required_result_sampling(#[ctx] cx: ToolContext) -> Result<String, ToolError> {
    let answers = ask(
        &cx,
        json!({"capital_question": sampling_request("What is the capital of France?", 100)}),
    )
    .await?;
    Ok(format!("The model answered: {}", sampled(&answers["capital_question"])))
}

/// Asks the client for its roots (`client_roots`) and lists them
#[tool(id = "test_input_required_result_list_roots")]
pub async fn test_input_required_result_list_roots(#[ctx] cx: ToolContext) -> Result<String, ToolError> {
    let answers = ask(&cx, json!({"client_roots": roots_request()})).await?;
    Ok(format!("The client's roots: {}", root_uris(&answers["client_roots"]).join(", ")))
}

/// Asks for a confirmation (`confirm`); the answer comes back with the request state the server
/// sealed, which it verifies before the call goes on
#[tool(id = "test_input_required_result_request_state")]
pub async fn test_input_required_result_request_state(#[ctx] cx: ToolContext) -> Result<String, ToolError> {
    let answers = ask(&cx, json!({"confirm": form_request("Please confirm", "ok", "boolean")})).await?;
    let ok = answers["confirm"]["content"]["ok"] == json!(true);
    Ok(format!("state-ok: the request state verified; confirmed: {ok}"))
}

/// Asks three things at once: the user's name, a greeting from the client's model, the
/// client's roots
#[tool(id = "test_input_required_result_multiple_inputs")]
pub async fn test_input_required_result_multiple_inputs(#[ctx] cx: ToolContext) -> Result<String, ToolError> {
    let answers = ask(
        &cx,
        json!({
            "user_name": form_request("What is your name?", "name", "string"),
            "greeting": sampling_request("Generate a greeting", 50),
            "client_roots": roots_request()
        }),
    )
    .await?;
    Ok(format!(
        "name: {}; greeting: {}; roots: {}",
        accepted(&answers["user_name"], "name"),
        sampled(&answers["greeting"]),
        root_uris(&answers["client_roots"]).join(", ")
    ))
}

/// Asks two questions in two rounds (`step1`, then `step2`), each with a request state of its own
#[tool(id = "test_input_required_result_multi_round")]
pub async fn test_input_required_result_multi_round(#[ctx] cx: ToolContext) -> Result<String, ToolError> {
    let first = ask(&cx, json!({"step1": form_request("Step 1: What is your name?", "name", "string")})).await?;
    let second = ask(
        &cx,
        json!({"step2": form_request("Step 2: What is your favorite color?", "color", "string")}),
    )
    .await?;
    Ok(format!(
        "{} likes {}",
        accepted(&first["step1"], "name"),
        accepted(&second["step2"], "color")
    ))
}

/// Asks for a confirmation under a sealed request state: a state edited on its way back is refused
#[tool(id = "test_input_required_result_tampered_state")]
pub async fn test_input_required_result_tampered_state(#[ctx] cx: ToolContext) -> Result<String, ToolError> {
    let answers = ask(&cx, json!({"confirm": form_request("Please confirm", "ok", "boolean")})).await?;
    Ok(format!("confirmed: {}", answers["confirm"]["content"]["ok"] == json!(true)))
}

/// Asks only what the client declared it can answer: the user (elicitation), its model
/// (sampling)
#[tool(id = "test_input_required_result_capabilities")]
pub async fn test_input_required_result_capabilities(#[ctx] cx: ToolContext) -> Result<String, ToolError> {
    let mcp = client(&cx)?;
    let mut requests = serde_json::Map::new();
    if mcp.supports("elicitation/create") {
        requests.insert("user_name".into(), form_request("What is your name?", "name", "string"));
    }
    if mcp.supports("sampling/createMessage") {
        requests.insert("greeting".into(), sampling_request("Generate a greeting", 50));
    }
    if requests.is_empty() {
        return Ok("The client declared neither elicitation nor sampling: nothing was asked.".into());
    }
    let asked: Vec<String> = requests.keys().cloned().collect();
    mcp.ask(requests).await?;
    Ok(format!("asked: {}", asked.join(", ")))
}
