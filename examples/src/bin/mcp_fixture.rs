//! The MCP conformance fixture: the tools, prompts and resources the official conformance
//! suite (`@modelcontextprotocol/conformance`) calls, served by Toolsmith's MCP server.
//!
//! ```text
//! mcp_fixture --stdio
//! mcp_fixture --http 127.0.0.1:PORT     # port 0: prints `serving MCP on http://ADDR/mcp` to stderr
//! mcp_fixture --http 127.0.0.1:0 --stateless --json-response   # the stateless modes
//! ```
//!
//! The tools are ordinary `#[tool]` functions served from an explicit registry (not
//! `Registry::global()`, so the examples library's tools stay out): the suite's fixture tools
//! (`test_*`, `json_schema_2020_12_tool`, whose schema carries `allOf`, `if`/`then`/`else` and an
//! `$anchor`; the 2026-07-28 diagnostic tools: `test_input_required_result_*`, which ask under
//! keys of their own, `test_missing_capability` (`mcp(requires = ["sampling"])`),
//! `test_streaming_elicitation`, `test_logging_tool`, `test_trigger_tool_change`,
//! `test_custom_headers` (a `#[tool(header = "Region")]` parameter); the tasks extension's:
//! `greet`, `slow_compute`, `failing_job`, `protocol_error_job`, `confirm_delete`, and `multi_input`
//! and `test_tool_with_task` from [`mrtr`]), each bounded
//! (sleeps of at most 120 s, echoes of at most 200 characters), and a few more for our own
//! client tests: `echo`
//! (the benchmark tool), `slow` (runs until cancelled; with `MCP_FIXTURE_CANCEL_LOG` set it
//! appends `cancelled <tool_call_id>` to that file when it sees the cancellation;
//! `MCP_FIXTURE_INPUT_TIMEOUT_MS` shortens how long a mid-call question waits for its answer),
//! `add_tool`/`remove_tool` (add or remove `dynamic_echo` at run time, so clients hear
//! `notifications/tools/list_changed`), `ask_twice` (two elicitations in one call, progress
//! between them), `approve_me` (requires approval; reports progress once it runs) and
//! `overflow` (overflows its stack in a child process: `isolate = "process"`). Prompts,
//! resources, resource subscriptions and completion, which `#[tool]` does not cover, come from
//! [`FixtureExtras`], an `rmcp` handler written directly.

#[path = "mcp_fixture/mrtr.rs"]
mod mrtr;

use std::collections::HashSet;
use std::net::SocketAddr;
use std::process::ExitCode;
use std::sync::{Arc, Mutex, OnceLock};
use std::time::Duration;

use rmcp::model::{
    CompleteRequestParams, CompleteResult, CompletionInfo, ContentBlock, GetPromptRequestParams, GetPromptResponse, GetPromptResult,
    Implementation, InputRequests, InputRequiredResult, InputResponses, ListPromptsResult, ListResourceTemplatesResult,
    ListResourcesResult, PaginatedRequestParams, Prompt, PromptArgument, PromptMessage, ReadResourceRequestParams, ReadResourceResponse,
    ReadResourceResult, Reference, Resource, ResourceContents, ResourceTemplate, Role, ServerCapabilities, ServerConfig,
    SubscribeRequestParams, UnsubscribeRequestParams,
};
use rmcp::service::{RequestContext as McpRequestContext, RoleServer};
use rmcp::{ErrorData, ServerHandler};
use tool_core::context::Elicitation;
use tool_core::mcp::http::HttpOptions;
use tool_core::mcp::{McpConfig, McpServer};
use tool_core::prelude::*;
use tool_core::runtime::Runtime;

/// A 1×1 PNG.
const PNG: &str = "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8/5+hHgAHggJ/PchI7wAAAABJRU5ErkJggg==";
/// An empty WAV file.
const WAV: &str = "UklGRiQAAABXQVZFZm10IBAAAAABAAEARKwAAIhYAQACABAAZGF0YQAAAAA=";

/// The registry being served, for the tools that change it.
static SERVED: OnceLock<Arc<Registry>> = OnceLock::new();

fn png() -> ContentPart {
    ContentPart::ImageData {
        data: PNG.into(),
        media_type: "image/png".into(),
    }
}

/// An MCP block passed through as is.
fn mcp_block(block: Value) -> ContentPart {
    ContentPart::Custom {
        provider_options: json!({ "mcp": block }),
    }
}

/// At most the first 200 characters of a text a client sent (what the tools echo stays small).
fn bounded(text: &str) -> &str {
    text.char_indices().nth(200).map_or(text, |(end, _)| &text[..end])
}

/// The MCP client of a call, or an error saying the tool needs one.
fn client(cx: &ToolContext) -> Result<&dyn tool_core::context::McpHandle, ToolError> {
    cx.mcp()
        .ok_or_else(|| ToolError::new("This tool talks to the MCP client that calls it; call it through an MCP server."))
}

// ---- the conformance suite's tools ----

/// Returns a simple text response
#[tool(id = "test_simple_text")]
pub async fn test_simple_text() -> String {
    "This is a simple text response for testing.".into()
}

/// Returns a 1×1 PNG image
#[tool(id = "test_image_content", to_model_output = image_for_model)]
pub async fn test_image_content() -> String {
    "a 1x1 PNG image".into()
}

#[allow(clippy::ptr_arg)] // `to_model_output` takes `fn(&Output)`.
fn image_for_model(_: &String) -> ModelOutput {
    ModelOutput::content([png()])
}

/// Returns a short WAV audio clip
#[tool(id = "test_audio_content", to_model_output = audio_for_model)]
pub async fn test_audio_content() -> String {
    "an empty WAV clip".into()
}

#[allow(clippy::ptr_arg)] // `to_model_output` takes `fn(&Output)`.
fn audio_for_model(_: &String) -> ModelOutput {
    // Image data with an audio media type becomes an MCP audio block.
    ModelOutput::content([ContentPart::ImageData {
        data: WAV.into(),
        media_type: "audio/wav".into(),
    }])
}

/// Returns an embedded text resource
#[tool(id = "test_embedded_resource", to_model_output = embedded_for_model)]
pub async fn test_embedded_resource() -> String {
    "This is an embedded resource content.".into()
}

#[allow(clippy::ptr_arg)] // `to_model_output` takes `fn(&Output)`.
fn embedded_for_model(text: &String) -> ModelOutput {
    ModelOutput::content([mcp_block(json!({
        "type": "resource",
        "resource": {"uri": "test://embedded-resource", "mimeType": "text/plain", "text": text}
    }))])
}

/// Returns text, an image and an embedded resource in one result
#[tool(id = "test_multiple_content_types", to_model_output = mixed_for_model)]
pub async fn test_multiple_content_types() -> String {
    "Multiple content types test:".into()
}

#[allow(clippy::ptr_arg)] // `to_model_output` takes `fn(&Output)`.
fn mixed_for_model(text: &String) -> ModelOutput {
    ModelOutput::content([
        ContentPart::text(text.as_str()),
        png(),
        mcp_block(json!({
            "type": "resource",
            "resource": {
                "uri": "test://mixed-content-resource",
                "mimeType": "application/json",
                "text": json!({"test": "data", "value": 123}).to_string()
            }
        })),
    ])
}

/// Sends three log messages while it runs
#[tool(id = "test_tool_with_logging")]
pub async fn test_tool_with_logging(#[ctx] cx: ToolContext) -> String {
    let steps = ["Tool execution started", "Tool processing data", "Tool execution completed"];
    for (i, step) in steps.into_iter().enumerate() {
        if i > 0 {
            tokio::time::sleep(Duration::from_millis(50)).await;
        }
        cx.observe().log(LogLevel::Info, step, None);
    }
    "Logging test completed".into()
}

/// Reports progress 0, 50 and 100 of 100
#[tool(id = "test_tool_with_progress")]
pub async fn test_tool_with_progress(#[ctx] cx: ToolContext) -> String {
    for (i, step) in [0.0, 50.0, 100.0].into_iter().enumerate() {
        if i > 0 {
            tokio::time::sleep(Duration::from_millis(50)).await;
        }
        if let Some(mcp) = cx.mcp() {
            mcp.progress(step, Some(100.0), Some(format!("{step}% done")));
        }
    }
    "Progress test completed".into()
}

/// Always fails, to test error reporting
#[tool(id = "test_error_handling")]
pub async fn test_error_handling() -> Result<String, ToolError> {
    Err(ToolError::new("This tool intentionally returns an error for testing"))
}

/// Asks the client's model to answer a prompt (sampling)
#[tool(id = "test_sampling")]
pub async fn test_sampling(
    /// The prompt to send to the client's model
    prompt: String,
    #[ctx] cx: ToolContext,
) -> Result<String, ToolError> {
    let answer = client(&cx)?
        .sample(json!({
            "messages": [{"role": "user", "content": {"type": "text", "text": prompt}}],
            "maxTokens": 100
        }))
        .await?;
    // `content` is one block, or a list of blocks on newer revisions.
    let blocks = match &answer["content"] {
        Value::Array(items) => items.clone(),
        one => vec![one.clone()],
    };
    let text: Vec<&str> = blocks.iter().filter_map(|b| b["text"].as_str()).collect();
    Ok(format!("LLM response: {}", text.join("\n")))
}

/// Asks the client's user for a username and an email address (elicitation)
#[tool(id = "test_elicitation")]
pub async fn test_elicitation(
    /// The message shown to the user
    message: String,
    #[ctx] cx: ToolContext,
) -> Result<String, ToolError> {
    let schema = json!({
        "type": "object",
        "properties": {
            "username": {"type": "string", "description": "User's response"},
            "email": {"type": "string", "description": "User's email address"}
        },
        "required": ["username", "email"]
    });
    elicit(&cx, message, schema).await
}

/// Asks the user for a form whose fields have default values (SEP-1034)
#[tool(id = "test_elicitation_sep1034_defaults")]
pub async fn test_elicitation_sep1034_defaults(#[ctx] cx: ToolContext) -> Result<String, ToolError> {
    let schema = json!({
        "type": "object",
        "properties": {
            "name": {"type": "string", "description": "User name", "default": "John Doe"},
            "age": {"type": "integer", "description": "User age", "default": 30},
            "score": {"type": "number", "description": "User score", "default": 95.5},
            "status": {"type": "string", "description": "User status", "enum": ["active", "inactive", "pending"], "default": "active"},
            "verified": {"type": "boolean", "description": "Verification status", "default": true}
        }
    });
    elicit(&cx, "Please review and update the form fields with defaults".into(), schema).await
}

/// Asks the user for a form with every kind of enum field (SEP-1330)
#[tool(id = "test_elicitation_sep1330_enums")]
pub async fn test_elicitation_sep1330_enums(#[ctx] cx: ToolContext) -> Result<String, ToolError> {
    let schema = json!({
        "type": "object",
        "properties": {
            "untitledSingle": {"type": "string", "description": "Choose an option", "enum": ["option1", "option2", "option3"]},
            "titledSingle": {"type": "string", "description": "Choose a titled option", "oneOf": [
                {"const": "value1", "title": "First Option"},
                {"const": "value2", "title": "Second Option"},
                {"const": "value3", "title": "Third Option"}
            ]},
            "legacyEnum": {"type": "string", "description": "Choose a legacy option", "enum": ["opt1", "opt2", "opt3"],
                "enumNames": ["Option One", "Option Two", "Option Three"]},
            "untitledMulti": {"type": "array", "description": "Choose options", "items": {"type": "string", "enum": ["option1", "option2", "option3"]}},
            "titledMulti": {"type": "array", "description": "Choose titled options", "items": {"anyOf": [
                {"const": "value1", "title": "First Choice"},
                {"const": "value2", "title": "Second Choice"},
                {"const": "value3", "title": "Third Choice"}
            ]}}
        }
    });
    elicit(&cx, "Please select options from the enum fields".into(), schema).await
}

async fn elicit(cx: &ToolContext, message: String, schema: Value) -> Result<String, ToolError> {
    Ok(match client(cx)?.elicit(message, schema).await? {
        Elicitation::Accept { content } => format!("User provided the requested information: {content}"),
        Elicitation::Decline => "User declined to provide the information".into(),
        Elicitation::Cancel => "User cancelled the request".into(),
    })
}

/// A street address.
#[derive(Debug, Deserialize, Serialize, JsonSchema)]
#[serde(deny_unknown_fields)]
#[schemars(rename = "address", extend("$anchor" = "addressDef"))]
pub struct Address {
    /// Street and number
    pub street: Option<String>,
    /// City
    pub city: Option<String>,
}

/// How to reach a person.
#[derive(Debug, Clone, Copy, Deserialize, Serialize, JsonSchema)]
#[serde(rename_all = "lowercase")]
pub enum ContactMethod {
    /// By phone
    Phone,
    /// By email
    Email,
}

/// A name, an optional address and a way to reach the person: a phone number or an email
/// address (`allOf`/`anyOf`), the one `contactMethod` names (`if`/`then`/`else`). The JSON
/// Schema 2020-12 keywords a derive does not write are the struct's `extend`s; the MCP listing
/// keeps every one of them.
#[derive(Debug, Deserialize, Serialize, JsonSchema)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
#[schemars(extend(
    "allOf" = [{"anyOf": [{"required": ["phone"]}, {"required": ["email"]}]}],
    "if" = {"properties": {"contactMethod": {"const": "phone"}}, "required": ["contactMethod"]},
    "then" = {"required": ["phone"]},
    "else" = {"required": ["email"]}
))]
pub struct PersonInput {
    /// The person's name
    pub name: Option<String>,
    /// Where the person lives
    pub address: Option<Address>,
    /// How to reach the person
    pub contact_method: Option<ContactMethod>,
    /// Phone number
    pub phone: Option<String>,
    /// Email address
    pub email: Option<String>,
}

/// Tool with JSON Schema 2020-12 features
#[tool(id = "json_schema_2020_12_tool")]
pub async fn json_schema_2020_12_tool(input: PersonInput) -> String {
    let city = input.address.and_then(|a| a.city);
    let contact = input.phone.or(input.email);
    format!(
        "name: {}, city: {}, contact: {}",
        input.name.as_deref().unwrap_or("-"),
        city.as_deref().unwrap_or("-"),
        contact.as_deref().unwrap_or("-")
    )
}

/// Answers at once (the pending suite's SSE polling scenario calls it)
///
/// The scenario lets a server close the POST stream mid-call and resume on a GET with
/// `Last-Event-ID`; a tool cannot close its stream through Toolsmith, so the result comes on the
/// POST stream, which the scenario accepts.
#[tool(id = "test_reconnection")]
pub async fn test_reconnection() -> String {
    "Reconnection test completed successfully".into()
}

/// Answers `Hello, {name}!` at once (the tasks scenarios' tool that never runs as a task)
#[tool(id = "greet", icon = "https://modelcontextprotocol.io/favicon.png")]
pub async fn greet(
    /// Who to greet (the first 200 characters are echoed)
    name: String,
) -> String {
    format!("Hello, {}!", bounded(&name))
}

/// Sleeps `seconds` (at most 120), then answers; a durable task, to a client that declared the
/// tasks extension, that ends cancelled when the task is cancelled
#[tool(id = "slow_compute", background(enabled = true))]
pub async fn slow_compute(
    /// How long to compute, in seconds (0 answers at once; at most 120)
    seconds: f64,
    /// A label echoed in the answer (its first 200 characters)
    label: Option<String>,
    #[ctx] cx: ToolContext,
) -> Result<String, ToolError> {
    let seconds = seconds.clamp(0.0, 120.0);
    tokio::select! {
        _ = tokio::time::sleep(Duration::from_secs_f64(seconds)) => {}
        _ = cx.cancellation().cancelled() => return Err(ToolError::new("The computation was cancelled.")),
    }
    Ok(format!("computed {} in {seconds} s", bounded(label.as_deref().unwrap_or("result"))))
}

/// Fails with a tool error after a second (a task that completes with `isError`); task-required,
/// so a client that cannot take a task is refused before it runs (`-32021` on 2026-07-28)
#[tool(id = "failing_job", background(required))]
pub async fn failing_job() -> Result<String, ToolError> {
    tokio::time::sleep(Duration::from_secs(1)).await;
    Err(ToolError::new("The job failed, as it always does."))
}

/// Panics: a protocol-level failure, not a tool error (a task that ends `failed`)
#[tool(id = "protocol_error_job", background(enabled = true))]
pub async fn protocol_error_job() -> String {
    panic!("protocol_error_job always panics")
}

/// Deletes nothing, once the user approved: as a task, it waits for the approval
/// (`input_required`, the form in `inputRequests`) and answers `tasks/update`
#[tool(id = "confirm_delete", require_approval, background(enabled = true))]
pub async fn confirm_delete(
    /// The file to delete (nothing is deleted; the first 200 characters are echoed)
    filename: Option<String>,
) -> String {
    format!("deleted {} (not really)", filename.as_deref().map_or("the file", bounded))
}

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
fn form_request(message: &str, field: &str, kind: &str) -> Value {
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

// ---- our own client tests ----

/// Returns the text it is given
#[tool(id = "echo", mcp(read_only_hint = true, idempotent_hint = true, open_world_hint = false))]
pub async fn echo(
    /// The text to return
    text: String,
) -> String {
    text
}

/// Returns `lines` numbered lines; the model sees at most 1 KiB of them (head and tail), and
/// the full text is a resource the calling session can read
#[tool(id = "long_log", max_model_output = "1KiB")]
pub async fn long_log(
    /// How many lines
    lines: usize,
) -> String {
    (0..lines).map(|i| format!("line {i}: ünïcödé\n")).collect()
}

/// Recurses until its stack is gone: it always runs in a child process of its own
/// (`isolate = "process"`), so the crash fails only the call and the server answers the next
#[tool(id = "overflow", isolate = "process")]
pub async fn overflow() -> u64 {
    #[allow(unconditional_recursion)]
    fn down(n: u64) -> u64 {
        let frame = std::hint::black_box([n; 512]);
        frame[(n % 512) as usize] + down(std::hint::black_box(n + 1))
    }
    down(0)
}

/// Sleeps (30 s unless told less) and ends early when the call is cancelled
#[tool(id = "slow")]
pub async fn slow(
    /// How long to sleep, in seconds (at most 30)
    seconds: Option<f64>,
    #[ctx] cx: ToolContext,
) -> Result<String, ToolError> {
    let seconds = seconds.unwrap_or(30.0).clamp(0.0, 30.0);
    tokio::select! {
        _ = tokio::time::sleep(Duration::from_secs_f64(seconds)) => Ok(format!("slept {seconds} s")),
        _ = cx.cancellation().cancelled() => {
            // Written at once (no await), so it lands before the runtime reports the abort.
            if let Some(path) = std::env::var_os("MCP_FIXTURE_CANCEL_LOG") {
                use std::io::Write;
                let line = format!("cancelled {}\n", cx.tool_call_id());
                let written = std::fs::OpenOptions::new().create(true).append(true).open(&path).and_then(|mut f| f.write_all(line.as_bytes()));
                if let Err(e) = written {
                    eprintln!("mcp_fixture: cannot append to {}: {e}", path.to_string_lossy());
                }
            }
            Err(ToolError::new("The call was cancelled."))
        }
    }
}

/// Sleeps like `slow`, as a durable background task (an MCP task, to a client that declared the
/// tasks extension, when the fixture has a `--store`)
#[tool(id = "slow_task", background(enabled = true))]
pub async fn slow_task(
    /// How long to sleep, in seconds (at most 30)
    seconds: Option<f64>,
    #[ctx] cx: ToolContext,
) -> Result<String, ToolError> {
    slow(seconds, cx).await
}

/// Runs as a durable background task only after a person approved it
#[tool(id = "approve_task", require_approval, background(enabled = true))]
pub async fn approve_task(
    /// Echoed back
    note: String,
) -> String {
    format!("approved: {note}")
}

const DYNAMIC: &str = "dynamic_echo";

fn served() -> Result<&'static Arc<Registry>, ToolError> {
    SERVED.get().ok_or_else(|| ToolError::new("No registry is being served."))
}

/// Adds the tool `dynamic_echo` to the served set (clients get `tools/list_changed`)
#[tool(id = "add_tool")]
pub async fn add_tool() -> Result<String, ToolError> {
    let registry = served()?;
    if registry.get(DYNAMIC).is_some() {
        return Ok(format!("`{DYNAMIC}` is already there"));
    }
    let tool = DynamicTool::builder(DYNAMIC, "Returns the text it is given (a tool added at run time)")
        .input_schema(json!({
            "type": "object",
            "properties": {"text": {"type": "string", "description": "The text to return"}},
            "required": ["text"]
        }))
        .handler(|input, _cx| async move { Ok(input["text"].clone()) })
        .map_err(|e| ToolError::new(e.to_string()))?;
    registry.insert(tool).map_err(|e| ToolError::new(e.to_string()))?;
    Ok(format!("added `{DYNAMIC}`"))
}

/// Removes the tool `dynamic_echo` from the served set (clients get `tools/list_changed`)
#[tool(id = "remove_tool")]
pub async fn remove_tool() -> Result<String, ToolError> {
    Ok(match served()?.remove(DYNAMIC) {
        Some(_) => format!("removed `{DYNAMIC}`"),
        None => format!("`{DYNAMIC}` was not there"),
    })
}

/// Asks the user two questions in turn, reporting progress between them, and answers with both
/// answers (on MCP 2026-07-28 each question is a round trip of its own)
#[tool(id = "ask_twice")]
pub async fn ask_twice(#[ctx] cx: ToolContext) -> Result<String, ToolError> {
    let mcp = client(&cx)?;
    let form = |field: &str| json!({"type": "object", "properties": {field: {"type": "string"}}, "required": [field]});
    let mut answers = Vec::new();
    for (n, field) in ["first", "second"].into_iter().enumerate() {
        if n > 0 {
            mcp.progress(n as f64, Some(2.0), Some(format!("asked {n} of 2")));
        }
        match mcp.elicit(format!("Question {}: your {field} answer?", n + 1), form(field)).await? {
            Elicitation::Accept { content } => answers.push(content[field].as_str().unwrap_or_default().to_owned()),
            other => return Ok(format!("stopped at question {}: {other:?}", n + 1)),
        }
    }
    Ok(format!("answers: {}", answers.join(", ")))
}

/// Runs only after a person approved it
#[tool(id = "approve_me", require_approval)]
pub async fn approve_me(#[ctx] cx: ToolContext) -> String {
    // Progress after approval reaches the request that approved the call.
    if let Some(mcp) = cx.mcp() {
        mcp.progress(1.0, Some(1.0), Some("approved".into()));
    }
    "approved and ran".into()
}

// ---- prompts, resources and completion ----

/// Prompts, resources (with subscriptions) and completion for the suite, written on `rmcp`.
#[derive(Debug, Clone, Default)]
pub struct FixtureExtras {
    subscriptions: Arc<Mutex<HashSet<String>>>,
}

fn argument(name: &str, description: &str) -> PromptArgument {
    PromptArgument::new(name).with_description(description).with_required(true)
}

/// `test://template/{id}/data` → `id`.
fn template_id(uri: &str) -> Option<&str> {
    uri.strip_prefix("test://template/")?
        .strip_suffix("/data")
        .filter(|id| !id.is_empty() && !id.contains('/'))
}

/// `test_input_required_result_prompt`: asks for the user's context (`user_context`) until the
/// client brings it back, then answers the prompt with it. Nothing is kept between the rounds.
fn context_prompt(responses: Option<&InputResponses>) -> GetPromptResponse {
    let context = responses
        .and_then(|r| r.get("user_context"))
        .filter(|answer| answer["action"] == "accept")
        .map(|answer| answer["content"]["context"].as_str().map_or("-", bounded).to_owned());
    match context {
        Some(context) => GetPromptResult::new(vec![PromptMessage::new_text(
            Role::User,
            format!("Answer in this context: {context}"),
        )])
        .into(),
        None => {
            let Ok(request) = serde_json::from_value(form_request("What context should the prompt use?", "context", "string")) else {
                return GetPromptResult::new(vec![]).into();
            };
            GetPromptResponse::InputRequired(InputRequiredResult::new(
                Some(InputRequests::from([("user_context".to_owned(), request)])),
                None,
            ))
        }
    }
}

impl ServerHandler for FixtureExtras {
    fn get_info(&self) -> ServerConfig {
        let caps = ServerCapabilities::builder()
            .enable_completions()
            .enable_prompts()
            .enable_resources()
            .enable_resources_subscribe()
            .build();
        ServerConfig::new(caps).with_server_info(Implementation::new("mcp_fixture", env!("CARGO_PKG_VERSION")))
    }

    async fn list_prompts(
        &self,
        _request: Option<PaginatedRequestParams>,
        _ctx: McpRequestContext<RoleServer>,
    ) -> Result<ListPromptsResult, ErrorData> {
        Ok(ListPromptsResult::with_all_items(vec![
            Prompt::new("test_simple_prompt", Some("A simple prompt without arguments"), None),
            Prompt::new(
                "test_prompt_with_arguments",
                Some("A prompt with two required arguments"),
                Some(vec![
                    argument("arg1", "First test argument"),
                    argument("arg2", "Second test argument"),
                ]),
            ),
            Prompt::new(
                "test_prompt_with_embedded_resource",
                Some("A prompt with an embedded resource"),
                Some(vec![argument("resourceUri", "URI of the resource to embed")]),
            ),
            Prompt::new("test_prompt_with_image", Some("A prompt with an image"), None),
            Prompt::new(
                "test_input_required_result_prompt",
                Some("A prompt that asks the user for its context first (an input-required result)"),
                None,
            ),
        ]))
    }

    async fn get_prompt(
        &self,
        request: GetPromptRequestParams,
        _ctx: McpRequestContext<RoleServer>,
    ) -> Result<GetPromptResponse, ErrorData> {
        if request.name == "test_input_required_result_prompt" {
            return Ok(context_prompt(request.input_responses.as_ref()));
        }
        let args = request.arguments.unwrap_or_default();
        let arg = |name: &str| -> Result<String, ErrorData> {
            args.get(name)
                .and_then(Value::as_str)
                .map(str::to_owned)
                .ok_or_else(|| ErrorData::invalid_params(format!("the prompt `{}` needs the argument `{name}`", request.name), None))
        };
        let messages = match request.name.as_str() {
            "test_simple_prompt" => vec![PromptMessage::new_text(Role::User, "This is a simple prompt for testing.")],
            "test_prompt_with_arguments" => vec![PromptMessage::new_text(
                Role::User,
                format!("Prompt with arguments: arg1='{}', arg2='{}'", arg("arg1")?, arg("arg2")?),
            )],
            "test_prompt_with_embedded_resource" => vec![
                PromptMessage::new(
                    Role::User,
                    ContentBlock::resource(
                        ResourceContents::text("Embedded resource content for testing.", arg("resourceUri")?).with_mime_type("text/plain"),
                    ),
                ),
                PromptMessage::new_text(Role::User, "Please process the embedded resource above."),
            ],
            "test_prompt_with_image" => vec![
                PromptMessage::new(Role::User, ContentBlock::image(PNG, "image/png")),
                PromptMessage::new_text(Role::User, "Please analyze the image above."),
            ],
            other => return Err(ErrorData::invalid_params(format!("there is no prompt `{other}`"), None)),
        };
        Ok(GetPromptResult::new(messages).into())
    }

    async fn list_resources(
        &self,
        _request: Option<PaginatedRequestParams>,
        _ctx: McpRequestContext<RoleServer>,
    ) -> Result<ListResourcesResult, ErrorData> {
        Ok(ListResourcesResult::with_all_items(vec![
            Resource::new("test://static-text", "static-text")
                .with_description("A static text resource")
                .with_mime_type("text/plain"),
            Resource::new("test://static-binary", "static-binary")
                .with_description("A static binary resource (a PNG image)")
                .with_mime_type("image/png"),
            Resource::new("test://watched-resource", "watched-resource")
                .with_description("A resource clients can subscribe to")
                .with_mime_type("text/plain"),
        ]))
    }

    async fn list_resource_templates(
        &self,
        _request: Option<PaginatedRequestParams>,
        _ctx: McpRequestContext<RoleServer>,
    ) -> Result<ListResourceTemplatesResult, ErrorData> {
        Ok(ListResourceTemplatesResult::with_all_items(vec![
            ResourceTemplate::new("test://template/{id}/data", "template-data")
                .with_description("Data for an id")
                .with_mime_type("application/json"),
        ]))
    }

    async fn read_resource(
        &self,
        request: ReadResourceRequestParams,
        _ctx: McpRequestContext<RoleServer>,
    ) -> Result<ReadResourceResponse, ErrorData> {
        let uri = request.uri.as_str();
        let contents = match uri {
            "test://static-text" => {
                ResourceContents::text("This is the content of the static text resource.", uri).with_mime_type("text/plain")
            }
            "test://static-binary" => ResourceContents::blob(PNG, uri).with_mime_type("image/png"),
            "test://watched-resource" => ResourceContents::text("This resource can be watched.", uri).with_mime_type("text/plain"),
            _ => match template_id(uri) {
                Some(id) => {
                    let data = json!({"id": id, "templateTest": true, "data": format!("Data for ID: {id}")});
                    ResourceContents::text(data.to_string(), uri).with_mime_type("application/json")
                }
                None => {
                    return Err(ErrorData::resource_not_found(
                        format!("there is no resource `{uri}`"),
                        Some(json!({"uri": uri})),
                    ));
                }
            },
        };
        Ok(ReadResourceResult::new(vec![contents]).into())
    }

    async fn subscribe(&self, request: SubscribeRequestParams, _ctx: McpRequestContext<RoleServer>) -> Result<(), ErrorData> {
        self.subscriptions
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .insert(request.uri.to_string());
        Ok(())
    }

    async fn unsubscribe(&self, request: UnsubscribeRequestParams, _ctx: McpRequestContext<RoleServer>) -> Result<(), ErrorData> {
        self.subscriptions
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .remove(request.uri.as_str());
        Ok(())
    }

    async fn complete(&self, request: CompleteRequestParams, _ctx: McpRequestContext<RoleServer>) -> Result<CompleteResult, ErrorData> {
        let candidates: &[&str] = match (&request.r#ref, request.argument.name.as_str()) {
            (Reference::Prompt(p), "arg1") if p.name == "test_prompt_with_arguments" => &["testValue1", "test-value", "other"],
            (Reference::Prompt(p), "arg2") if p.name == "test_prompt_with_arguments" => &["testValue2", "other"],
            (Reference::Resource(r), "id") if r.uri == "test://template/{id}/data" => &["123", "456", "789"],
            _ => &[],
        };
        let typed = request.argument.value.as_str();
        let values = candidates
            .iter()
            .filter(|c| c.starts_with(typed))
            .map(|c| (*c).to_owned())
            .collect();
        let info = CompletionInfo::with_all_values(values).map_err(|e| ErrorData::internal_error(e, None))?;
        Ok(CompleteResult::new(info))
    }
}

// ---- the server ----

enum Transport {
    Stdio,
    Http(SocketAddr, Box<HttpOptions>),
}

const USAGE: &str =
    "usage: mcp_fixture [--store FILE_OR_URL] --stdio | --http 127.0.0.1:PORT [--stateless] [--json-response] (port 0 picks a free port)";

/// `--store FILE_OR_URL` first, when given (several fixture instances on one PostgreSQL).
fn parse_store(args: &mut Vec<String>) -> Option<String> {
    if args.first().map(String::as_str) != Some("--store") || args.len() < 2 {
        return None;
    }
    let store = args.remove(1);
    args.remove(0);
    Some(store)
}

fn parse_args(args: Vec<String>) -> Result<Transport, String> {
    match args.iter().map(String::as_str).collect::<Vec<_>>().as_slice() {
        ["--stdio"] => Ok(Transport::Stdio),
        ["--http", addr, flags @ ..] => {
            let addr = addr
                .parse()
                .map_err(|e| format!("`{addr}` is not an address like 127.0.0.1:8931: {e}"))?;
            let mut options = HttpOptions::default();
            for flag in flags {
                match *flag {
                    "--stateless" => options.stateless = true,
                    "--json-response" => options.json_response = true,
                    _ => return Err(USAGE.into()),
                }
            }
            options.check().map_err(|e| e.to_string())?;
            Ok(Transport::Http(addr, Box::new(options)))
        }
        _ => Err(USAGE.into()),
    }
}

fn registry() -> Registry {
    Registry::from_iter([
        test_simple_text::tool(),
        test_image_content::tool(),
        test_audio_content::tool(),
        test_embedded_resource::tool(),
        test_multiple_content_types::tool(),
        test_tool_with_logging::tool(),
        test_tool_with_progress::tool(),
        test_error_handling::tool(),
        test_sampling::tool(),
        test_elicitation::tool(),
        test_elicitation_sep1034_defaults::tool(),
        test_elicitation_sep1330_enums::tool(),
        json_schema_2020_12_tool::tool(),
        test_reconnection::tool(),
        greet::tool(),
        slow_compute::tool(),
        failing_job::tool(),
        protocol_error_job::tool(),
        confirm_delete::tool(),
        mrtr::multi_input::tool(),
        mrtr::test_tool_with_task::tool(),
        test_streaming_elicitation::tool(),
        test_logging_tool::tool(),
        test_trigger_tool_change::tool(),
        test_custom_headers::tool(),
        test_missing_capability::tool(),
        test_input_required_result_elicitation::tool(),
        test_input_required_result_sampling::tool(),
        test_input_required_result_list_roots::tool(),
        test_input_required_result_request_state::tool(),
        test_input_required_result_multiple_inputs::tool(),
        test_input_required_result_multi_round::tool(),
        test_input_required_result_tampered_state::tool(),
        test_input_required_result_capabilities::tool(),
        echo::tool(),
        long_log::tool(),
        overflow::tool(),
        slow::tool(),
        add_tool::tool(),
        remove_tool::tool(),
        ask_twice::tool(),
        approve_me::tool(),
        slow_task::tool(),
        approve_task::tool(),
    ])
}

fn main() -> ExitCode {
    // An isolated tool's call runs in a child process of this binary: be that worker when asked.
    tool_core::isolate::worker_main();
    match tokio::runtime::Builder::new_multi_thread().enable_all().build() {
        Ok(runtime) => runtime.block_on(serve()),
        Err(e) => {
            eprintln!("mcp_fixture: cannot start the async runtime: {e}");
            ExitCode::FAILURE
        }
    }
}

async fn serve() -> ExitCode {
    let mut args: Vec<String> = std::env::args().skip(1).collect();
    let store = parse_store(&mut args);
    let transport = match parse_args(args) {
        Ok(t) => t,
        Err(e) => {
            eprintln!("{e}");
            return ExitCode::from(2);
        }
    };
    let registry = SERVED.get_or_init(|| Arc::new(registry())).clone();
    let config = McpConfig {
        name: "toolsmith-mcp-fixture".into(),
        instructions: Some("Test fixtures for the MCP conformance suite and Toolsmith's client tests.".into()),
        // Tests shorten the wait for a mid-call answer to see it expire.
        input_timeout: std::env::var("MCP_FIXTURE_INPUT_TIMEOUT_MS")
            .ok()
            .and_then(|ms| ms.parse().ok())
            .map_or(McpConfig::default().input_timeout, Duration::from_millis),
        ..McpConfig::default()
    };
    let mut runtime = Runtime::builder(registry);
    if let Some(store) = store {
        match tool_core::runtime::open_stores(&tool_core::runtime::StoreLocation::parse(&store)).await {
            Ok(opened) => {
                let tasks = tool_core::runtime::TaskOptions::default().poll_interval(Duration::from_millis(100));
                runtime = runtime.shared_store(opened.pending).task_store(opened.tasks, tasks);
            }
            Err(e) => {
                eprintln!("mcp_fixture: --store: {e}");
                return ExitCode::FAILURE;
            }
        }
    }
    let runtime = runtime.build();
    if let Some(bus) = runtime.bus()
        && let Err(e) = bus.listening().await
    {
        eprintln!("mcp_fixture: --store: {e}");
        return ExitCode::FAILURE;
    }
    let server = McpServer::new(runtime, config).with_extras(FixtureExtras::default());
    let served = match transport {
        Transport::Stdio => tool_core::mcp::stdio::serve(server).await,
        Transport::Http(addr, options) => {
            // Never cancelled: the server runs until the process is stopped.
            let shutdown = Default::default();
            tool_core::mcp::http::serve(server, addr, *options, shutdown, |bound| {
                eprintln!("serving MCP on http://{bound}/mcp")
            })
            .await
        }
    };
    match served {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("mcp_fixture: {e}");
            ExitCode::FAILURE
        }
    }
}
