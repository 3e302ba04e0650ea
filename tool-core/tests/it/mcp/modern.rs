//! The server on MCP 2026-07-28 over real HTTP (stateless, JSON answers), as the conformance
//! suite's 2026-07-28 requirement set and the tasks extension see it:
//!
//! - methods 2026-07-28 removed answer 404 with `-32601`, while 2025-11-25 peers keep them;
//! - `tools/list` keeps every JSON Schema 2020-12 keyword a schema declares, drops schemars'
//!   own `format`s, and lists a `#[tool(header = "…")]` parameter's `x-mcp-header` and a
//!   `#[tool(icon = "…")]`;
//! - the `Mcp-Param-*` header of such a parameter is checked against its argument;
//! - a tool that requires a client capability refuses a client without it (`-32021`, 400);
//! - a tool's questions travel under the keys it chose, a client that leaves one out is asked
//!   again for it, answers brought without a request state are found by the tool, and a
//!   tampered request state is refused (`-32602`);
//! - a task cancelled after it ended is acknowledged, and a task whose tool panicked is
//!   `failed` with a JSON-RPC error.

use std::sync::Arc;
use std::time::Duration;

use crate::support::http_server::{self, Served};
use serde_json::{Value, json};
use tool_core::mcp::http::HttpOptions;
use tool_core::mcp::{McpConfig, McpServer};
use tool_core::prelude::*;
use tool_core::runtime::{MemoryStore, Runtime, TaskOptions};

pub(super) const MODERN: &str = "2026-07-28";
pub(super) const LEGACY: &str = "2025-11-25";
const PATIENCE: Duration = Duration::from_secs(20);

/// Routes by region (the header mirrors the argument)
#[tool(id = "modern-route", icon = "https://example.com/icons/route.svg")]
async fn route(
    /// The region
    #[tool(header = "Region")]
    region: String,
    /// Anything else
    note: Option<String>,
) -> String {
    format!("routed to {region}{}", note.map(|n| format!(" ({n})")).unwrap_or_default())
}

/// Needs a client that can sample (it only says so here)
#[tool(id = "modern-needs-sampling", mcp(requires = ["sampling"]))]
async fn needs_sampling() -> String {
    "ran".into()
}

/// Asks two things at once, under keys of its own
#[tool(id = "modern-ask")]
async fn ask_two(#[ctx] cx: ToolContext) -> Result<String, ToolError> {
    let mcp = cx.mcp().ok_or_else(|| ToolError::new("no MCP client"))?;
    let requests = json!({
        "user_name": {"method": "elicitation/create", "params": {"message": "Name?", "requestedSchema": {"type": "object", "properties": {"name": {"type": "string"}}, "required": ["name"]}}},
        "client_roots": {"method": "roots/list", "params": {}}
    });
    let Value::Object(requests) = requests else { unreachable!() };
    let answers = mcp.ask(requests).await?;
    let name = answers["user_name"]["content"]["name"].as_str().unwrap_or("-").to_owned();
    let root = answers["client_roots"]["roots"][0]["uri"].as_str().unwrap_or("-").to_owned();
    Ok(format!("{name} at {root}"))
}

/// Sleeps a moment, then answers (a task)
#[tool(id = "modern-quick-task", background(enabled = true))]
async fn quick_task() -> String {
    tokio::time::sleep(Duration::from_millis(200)).await;
    "done".into()
}

/// Panics (a task that breaks)
#[tool(id = "modern-panicking-task", background(enabled = true))]
async fn panicking_task() -> String {
    tokio::time::sleep(Duration::from_millis(200)).await;
    panic!("broken on purpose")
}

fn registry() -> Registry {
    let with_2020_12 = DynamicTool::builder("modern-2020-12", "A schema with JSON Schema 2020-12 keywords")
        .input_schema(schema_2020_12())
        .handler(|_input, _cx| async move { Ok(json!("ok")) })
        .unwrap();
    let registry = Registry::from_iter([
        route::tool(),
        needs_sampling::tool(),
        ask_two::tool(),
        quick_task::tool(),
        panicking_task::tool(),
    ]);
    registry.insert(with_2020_12).unwrap();
    registry
}

/// The conformance suite's `json_schema_2020_12_tool` schema, plus a schemars integer format.
fn schema_2020_12() -> Value {
    json!({
        "$schema": "https://json-schema.org/draft/2020-12/schema",
        "type": "object",
        "$defs": {"address": {"$anchor": "addressDef", "type": "object", "properties": {"street": {"type": "string"}}}},
        "properties": {
            "address": {"$ref": "#/$defs/address"},
            "contactMethod": {"type": "string", "enum": ["phone", "email"]},
            "phone": {"type": "string"},
            "email": {"type": "string", "format": "email"},
            "count": {"type": "integer", "format": "uint32", "minimum": 0, "maximum": 4294967295u64}
        },
        "allOf": [{"anyOf": [{"required": ["phone"]}, {"required": ["email"]}]}],
        "if": {"properties": {"contactMethod": {"const": "phone"}}, "required": ["contactMethod"]},
        "then": {"required": ["phone"]},
        "else": {"required": ["email"]},
        "additionalProperties": false
    })
}

async fn serve() -> (Served, String) {
    let store = Arc::new(MemoryStore::new());
    let runtime = Runtime::builder(registry())
        .shared_store(store.clone())
        .task_store(store, TaskOptions::default().poll_interval(Duration::from_millis(20)))
        .build();
    let server = McpServer::new(runtime, McpConfig::default());
    let options = HttpOptions {
        stateless: true,
        json_response: true,
        ..HttpOptions::default()
    };
    let served = http_server::serve(server, options).await;
    let url = format!("http://{}/mcp", served.addr);
    (served, url)
}

/// One request of revision `version` (2026-07-28: with its `_meta`, declaring `capabilities`,
/// and the `Mcp-Method`/`Mcp-Name` headers unless `headers` sets them): the HTTP status and
/// the JSON-RPC answer.
pub(super) async fn rpc(
    url: &str,
    version: &str,
    method: &str,
    mut params: Value,
    capabilities: Value,
    headers: &[(&str, &str)],
) -> (u16, Value) {
    if version == MODERN {
        params["_meta"] = json!({
            "io.modelcontextprotocol/protocolVersion": MODERN,
            "io.modelcontextprotocol/clientCapabilities": capabilities,
        });
    }
    let mut request = reqwest::Client::new()
        .post(url)
        .header("Accept", "application/json, text/event-stream")
        .header("Content-Type", "application/json")
        .header("MCP-Protocol-Version", version);
    let has = |name: &str| headers.iter().any(|(k, _)| k.eq_ignore_ascii_case(name));
    if version == MODERN && !has("mcp-method") {
        request = request.header("Mcp-Method", method);
    }
    let name = ["name", "uri", "taskId"]
        .iter()
        .find_map(|k| params.get(*k))
        .and_then(Value::as_str);
    if let (true, false, Some(name)) = (version == MODERN, has("mcp-name"), name) {
        request = request.header("Mcp-Name", name);
    }
    for (k, v) in headers {
        request = request.header(*k, *v);
    }
    let body = json!({"jsonrpc": "2.0", "id": 7, "method": method, "params": params}).to_string();
    let response = tokio::time::timeout(PATIENCE, request.body(body).send())
        .await
        .expect("an answer in time")
        .unwrap();
    let status = response.status().as_u16();
    let text = response.text().await.unwrap();
    (status, serde_json::from_str(&text).unwrap_or_else(|_| panic!("not JSON: {text}")))
}

async fn modern(url: &str, method: &str, params: Value) -> (u16, Value) {
    rpc(url, MODERN, method, params, json!({}), &[]).await
}

pub(super) fn listed<'a>(list: &'a Value, name: &str) -> &'a Value {
    list["result"]["tools"]
        .as_array()
        .and_then(|tools| tools.iter().find(|t| t["name"] == name))
        .unwrap_or_else(|| panic!("`{name}` is not listed: {list}"))
}

#[tokio::test]
async fn methods_removed_in_2026_07_28_are_not_found_there_and_kept_before() {
    let (_served, url) = serve().await;
    for (method, params) in [
        ("initialize", json!({})),
        ("logging/setLevel", json!({})),
        ("logging/setLevel", json!({"level": "info"})),
        ("resources/subscribe", json!({"uri": "test://x"})),
        ("resources/unsubscribe", json!({"uri": "test://x"})),
    ] {
        let (status, answer) = modern(&url, method, params.clone()).await;
        assert_eq!(
            (status, answer["error"]["code"].clone()),
            (404, json!(-32601)),
            "{method} {params}: {answer}"
        );
        assert_eq!(answer["id"], 7, "{answer}");
    }
    // A 2025-11-25 peer keeps them.
    let init = json!({"protocolVersion": LEGACY, "capabilities": {}, "clientInfo": {"name": "t", "version": "1"}});
    let (status, answer) = rpc(&url, LEGACY, "initialize", init, json!({}), &[]).await;
    assert_eq!(status, 200, "{answer}");
    assert_eq!(answer["result"]["protocolVersion"], LEGACY, "{answer}");
    let (status, answer) = rpc(&url, LEGACY, "logging/setLevel", json!({"level": "info"}), json!({}), &[]).await;
    assert_eq!((status, answer.get("error")), (200, None), "{answer}");
}

#[tokio::test]
async fn the_listing_keeps_2020_12_keywords_headers_and_icons_and_drops_foreign_formats() {
    let (_served, url) = serve().await;
    let (_, list) = modern(&url, "tools/list", json!({})).await;
    let schema = &listed(&list, "modern-2020-12")["inputSchema"];
    let mut expected = schema_2020_12();
    expected["properties"]["count"].as_object_mut().unwrap().remove("format");
    assert_eq!(schema, &expected, "every 2020-12 keyword kept, only `uint32` dropped");

    let route = listed(&list, "modern-route");
    assert_eq!(route["inputSchema"]["properties"]["region"]["x-mcp-header"], "Region", "{route}");
    assert!(route["inputSchema"]["properties"]["note"].get("x-mcp-header").is_none(), "{route}");
    assert_eq!(
        route["icons"],
        json!([{"src": "https://example.com/icons/route.svg", "mimeType": "image/svg+xml"}]),
        "{route}"
    );
    assert!(listed(&list, "modern-ask").get("icons").is_none());
}

#[tokio::test]
async fn a_header_parameter_is_checked_against_its_argument() {
    let (_served, url) = serve().await;
    let call = |region: &str| json!({"name": "modern-route", "arguments": {"region": region}});
    let (status, ok) = rpc(
        &url,
        MODERN,
        "tools/call",
        call("eu-west"),
        json!({}),
        &[("Mcp-Param-Region", "eu-west")],
    )
    .await;
    assert_eq!(status, 200, "{ok}");
    assert_eq!(ok["result"]["content"][0]["text"], "routed to eu-west", "{ok}");
    // Base64 as SEP-2243 writes values that cannot travel bare.
    let (status, ok) = rpc(
        &url,
        MODERN,
        "tools/call",
        call(" spaced "),
        json!({}),
        &[("Mcp-Param-Region", "=?base64?IHNwYWNlZCA=?=")],
    )
    .await;
    assert_eq!(status, 200, "{ok}");
    for headers in [&[("Mcp-Param-Region", "us-east")][..], &[]] {
        let (status, refused) = rpc(&url, MODERN, "tools/call", call("eu-west"), json!({}), headers).await;
        assert_eq!(
            (status, refused["error"]["code"].clone()),
            (400, json!(-32020)),
            "{headers:?}: {refused}"
        );
    }
}

#[tokio::test]
async fn a_tool_requiring_a_capability_refuses_a_client_without_it() {
    let (_served, url) = serve().await;
    let call = json!({"name": "modern-needs-sampling", "arguments": {}});
    let (status, refused) = rpc(&url, MODERN, "tools/call", call.clone(), json!({"elicitation": {}}), &[]).await;
    assert_eq!((status, refused["error"]["code"].clone()), (400, json!(-32021)), "{refused}");
    assert_eq!(
        refused["error"]["data"]["requiredCapabilities"],
        json!({"sampling": {}}),
        "{refused}"
    );
    let (status, ran) = rpc(&url, MODERN, "tools/call", call, json!({"sampling": {}}), &[]).await;
    assert_eq!(status, 200, "{ran}");
    assert_eq!(ran["result"]["content"][0]["text"], "ran", "{ran}");
}

const CAN_ASK: fn() -> Value = || json!({"elicitation": {}, "roots": {}});

fn name_answer() -> Value {
    json!({"action": "accept", "content": {"name": "Ada"}})
}

fn roots_answer() -> Value {
    json!({"roots": [{"uri": "file:///work", "name": "work"}]})
}

#[tokio::test]
async fn questions_travel_under_their_keys_and_what_is_left_out_is_asked_again() {
    let (_served, url) = serve().await;
    let call = |extra: Value| {
        let mut params = json!({"name": "modern-ask", "arguments": {}});
        params.as_object_mut().unwrap().extend(extra.as_object().unwrap().clone());
        params
    };
    let (_, first) = rpc(&url, MODERN, "tools/call", call(json!({})), CAN_ASK(), &[]).await;
    let first = &first["result"];
    assert_eq!(first["resultType"], "input_required", "{first}");
    let keys: Vec<&String> = first["inputRequests"].as_object().unwrap().keys().collect();
    assert_eq!(keys, ["client_roots", "user_name"], "{first}");
    assert_eq!(first["inputRequests"]["client_roots"]["method"], "roots/list");
    let state = first["requestState"].as_str().unwrap().to_owned();

    // Only the name, an unknown key, and a roots answer of the wrong shape: the roots are asked again.
    let partial = json!({"requestState": state, "inputResponses": {"user_name": name_answer(), "other": {"x": 1}, "client_roots": 3}});
    let (_, again) = rpc(&url, MODERN, "tools/call", call(partial), CAN_ASK(), &[]).await;
    let again = &again["result"];
    assert_eq!(again["resultType"], "input_required", "{again}");
    assert_eq!(
        again["inputRequests"].as_object().unwrap().keys().collect::<Vec<_>>(),
        ["client_roots"],
        "{again}"
    );
    assert_eq!(again["requestState"], state.as_str());

    let rest = json!({"requestState": state, "inputResponses": {"client_roots": roots_answer()}});
    let (_, done) = rpc(&url, MODERN, "tools/call", call(rest), CAN_ASK(), &[]).await;
    assert_eq!(done["result"]["content"][0]["text"], "Ada at file:///work", "{done}");

    // Answers brought without a request state are the tool's at once (SEP-2322's ephemeral flow).
    let ephemeral = json!({"inputResponses": {"user_name": name_answer(), "client_roots": roots_answer()}});
    let (_, done) = rpc(&url, MODERN, "tools/call", call(ephemeral), CAN_ASK(), &[]).await;
    assert_eq!(done["result"]["content"][0]["text"], "Ada at file:///work", "{done}");
}

#[tokio::test]
async fn a_tampered_request_state_is_refused_as_invalid_params() {
    let (_served, url) = serve().await;
    let start = json!({"name": "modern-ask", "arguments": {}});
    let (_, first) = rpc(&url, MODERN, "tools/call", start, CAN_ASK(), &[]).await;
    let state = first["result"]["requestState"].as_str().unwrap().to_owned();
    let answers = json!({"user_name": name_answer(), "client_roots": roots_answer()});
    let tampered = json!({"name": "modern-ask", "arguments": {}, "requestState": format!("{state}-TAMPERED"), "inputResponses": answers});
    let (status, refused) = rpc(&url, MODERN, "tools/call", tampered, CAN_ASK(), &[]).await;
    assert_eq!((status, refused["error"]["code"].clone()), (200, json!(-32602)), "{refused}");
    // The genuine state still works.
    let genuine = json!({"name": "modern-ask", "arguments": {}, "requestState": state, "inputResponses": answers});
    let (_, done) = rpc(&url, MODERN, "tools/call", genuine, CAN_ASK(), &[]).await;
    assert_eq!(done["result"]["content"][0]["text"], "Ada at file:///work", "{done}");
}

pub(super) const TASKS: fn() -> Value = || json!({"extensions": {"io.modelcontextprotocol/tasks": {}}});

/// Polls `tasks/get` until the task leaves `working`.
pub(super) async fn settled(url: &str, task_id: &str) -> Value {
    let deadline = tokio::time::Instant::now() + PATIENCE;
    loop {
        let (_, got) = rpc(url, MODERN, "tasks/get", json!({"taskId": task_id}), TASKS(), &[]).await;
        let got = got["result"].clone();
        if got["status"] != "working" {
            return got;
        }
        assert!(tokio::time::Instant::now() < deadline, "still working: {got}");
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
}

pub(super) async fn start_task(url: &str, tool: &str) -> String {
    let (_, handle) = rpc(url, MODERN, "tools/call", json!({"name": tool, "arguments": {}}), TASKS(), &[]).await;
    assert_eq!(handle["result"]["resultType"], "task", "{handle}");
    handle["result"]["taskId"].as_str().unwrap().to_owned()
}

#[tokio::test]
async fn an_ended_task_acknowledges_cancel_and_a_panic_fails_its_task() {
    let (_served, url) = serve().await;
    let done = start_task(&url, "modern-quick-task").await;
    assert_eq!(settled(&url, &done).await["status"], "completed");
    let (status, ack) = rpc(&url, MODERN, "tasks/cancel", json!({"taskId": done}), TASKS(), &[]).await;
    assert_eq!((status, ack.get("error")), (200, None), "{ack}");
    assert_eq!(
        settled(&url, &done).await["status"],
        "completed",
        "cancelling an ended task changes nothing"
    );

    let broken = start_task(&url, "modern-panicking-task").await;
    let failed = settled(&url, &broken).await;
    assert_eq!(failed["status"], "failed", "{failed}");
    assert_eq!(failed["error"]["code"], -32603, "{failed}");
    assert!(failed.get("result").is_none(), "{failed}");
}
