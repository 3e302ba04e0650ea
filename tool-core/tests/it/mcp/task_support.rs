//! Which tools may or must run as tasks, as MCP clients see it:
//!
//! - a 2025-11-25 peer's `tools/list` carries `execution.taskSupport` (`optional` for
//!   `background(...)`, `required` for `background(required)`, absent for the rest), over HTTP
//!   (JSON and SSE answers) and stdio; 2025-06-18 and 2026-07-28 peers get no such field;
//! - a task-required tool refuses, before it runs, a 2026-07-28 client without the tasks
//!   extension (`-32021`, naming the extension) and an older client (`-32601`), and runs as a
//!   task for a client with the extension;
//! - the toolsmith catalog format keeps `background(required)` through a round trip.

use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::Duration;

use serde_json::{Value, json};
use tokio::io::{AsyncBufReadExt, AsyncWriteExt, BufReader};
use tool_core::mcp::http::HttpOptions;
use tool_core::mcp::{McpConfig, McpServer};
use tool_core::prelude::*;
use tool_core::runtime::{MemoryStore, Runtime, TaskOptions};
use tool_core::spec::TaskSupport;

use super::modern::{LEGACY, MODERN, TASKS, listed, rpc, settled};
use crate::support::http_server::{self, Served};

/// How often `ts-only-a-task` has run.
static RAN: AtomicUsize = AtomicUsize::new(0);

/// Builds a report, maybe in the background
#[tool(id = "ts-may-be-a-task", background)]
async fn may_be_a_task() -> String {
    "built".into()
}

/// Builds a report, only ever in the background
#[tool(id = "ts-only-a-task", background(required))]
async fn only_a_task() -> String {
    RAN.fetch_add(1, Ordering::SeqCst);
    tokio::time::sleep(Duration::from_millis(100)).await;
    "built in the background".into()
}

/// Answers at once
#[tool(id = "ts-plain")]
async fn plain() -> String {
    "plain".into()
}

fn server() -> McpServer {
    let store = Arc::new(MemoryStore::new());
    let registry = Registry::from_iter([may_be_a_task::tool(), only_a_task::tool(), plain::tool()]);
    let runtime = Runtime::builder(registry)
        .shared_store(store.clone())
        .task_store(store, TaskOptions::default().poll_interval(Duration::from_millis(20)))
        .build();
    McpServer::new(runtime, McpConfig::default())
}

async fn serve(json_response: bool) -> (Served, String) {
    let options = HttpOptions {
        stateless: true,
        json_response,
        ..HttpOptions::default()
    };
    let served = http_server::serve(server(), options).await;
    let url = format!("http://{}/mcp", served.addr);
    (served, url)
}

/// Each tool's `execution`, by name (`Null`: none).
fn executions(list: &Value) -> Vec<(String, Value)> {
    ["ts-may-be-a-task", "ts-only-a-task", "ts-plain"]
        .iter()
        .map(|name| {
            (
                name.to_string(),
                listed(list, name).get("execution").cloned().unwrap_or(Value::Null),
            )
        })
        .collect()
}

fn levels(may: Value, only: Value) -> Vec<(String, Value)> {
    vec![
        ("ts-may-be-a-task".into(), may),
        ("ts-only-a-task".into(), only),
        ("ts-plain".into(), Value::Null),
    ]
}

#[tokio::test]
async fn a_2025_11_25_listing_says_which_tools_may_or_must_be_tasks_and_no_other_revision_does() {
    let said = levels(json!({"taskSupport": "optional"}), json!({"taskSupport": "required"}));
    let unsaid = levels(Value::Null, Value::Null);
    let (_served, url) = serve(true).await;
    let (status, list) = rpc(&url, LEGACY, "tools/list", json!({}), json!({}), &[]).await;
    assert_eq!(status, 200, "{list}");
    assert_eq!(executions(&list), said);
    for revision in ["2025-06-18", MODERN] {
        let (_, list) = rpc(&url, revision, "tools/list", json!({}), json!({}), &[]).await;
        assert_eq!(executions(&list), unsaid, "{revision}");
    }
    // An SSE answer: its event's data rewritten.
    let (_served, url) = serve(false).await;
    assert_eq!(executions(&sse_list(&url, LEGACY).await), said);
    assert_eq!(executions(&sse_list(&url, "2025-06-18").await), unsaid);
}

/// A stateless `tools/list` of `revision` answered as an SSE stream: the answer's data.
async fn sse_list(url: &str, revision: &str) -> Value {
    let request = reqwest::Client::new()
        .post(url)
        .header("Accept", "application/json, text/event-stream")
        .header("Content-Type", "application/json")
        .header("MCP-Protocol-Version", revision)
        .body(json!({"jsonrpc": "2.0", "id": 7, "method": "tools/list"}).to_string());
    let response = tokio::time::timeout(Duration::from_secs(20), request.send())
        .await
        .expect("an answer in time")
        .unwrap();
    assert_eq!(response.headers()["content-type"], "text/event-stream");
    let text = response.text().await.unwrap();
    let data = text
        .lines()
        .filter_map(|l| l.strip_prefix("data: "))
        .find(|d| d.contains("\"tools\""));
    serde_json::from_str(data.unwrap_or_else(|| panic!("no answer in {text}"))).unwrap()
}

/// `tools/list` over stdio after an `initialize` at `revision`.
async fn stdio_list(revision: &str) -> Value {
    let (client, server_io) = tokio::io::duplex(1 << 16);
    let (server_in, server_out) = tokio::io::split(server_io);
    let serving = tokio::spawn(tool_core::mcp::stdio::serve_io(server(), server_in, server_out));
    let (client_in, mut client_out) = tokio::io::split(client);
    let mut lines = BufReader::new(client_in).lines();
    let init = json!({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {"protocolVersion": revision, "capabilities": {}, "clientInfo": {"name": "t", "version": "1"}}});
    let initialized = json!({"jsonrpc": "2.0", "method": "notifications/initialized"});
    let list = json!({"jsonrpc": "2.0", "id": 2, "method": "tools/list"});
    let mut answers = Vec::new();
    for message in [init, initialized, list] {
        client_out.write_all(format!("{message}\n").as_bytes()).await.unwrap();
        if message.get("id").is_some() {
            let line = tokio::time::timeout(Duration::from_secs(20), lines.next_line()).await;
            answers.push(serde_json::from_str::<Value>(&line.expect("an answer in time").unwrap().unwrap()).unwrap());
        }
    }
    assert_eq!(answers[0]["result"]["protocolVersion"], revision, "{}", answers[0]);
    drop(client_out);
    serving.abort();
    answers.pop().unwrap()
}

#[tokio::test]
async fn a_stdio_session_at_2025_11_25_hears_it_too() {
    let said = levels(json!({"taskSupport": "optional"}), json!({"taskSupport": "required"}));
    assert_eq!(executions(&stdio_list(LEGACY).await), said);
    assert_eq!(executions(&stdio_list("2025-06-18").await), levels(Value::Null, Value::Null));
}

#[tokio::test]
async fn a_task_required_tool_refuses_a_client_that_cannot_take_a_task_before_it_runs() {
    let (_served, url) = serve(true).await;
    let call = || json!({"name": "ts-only-a-task", "arguments": {}});
    let before = RAN.load(Ordering::SeqCst);

    let (_, refused) = rpc(&url, MODERN, "tools/call", call(), json!({}), &[]).await;
    assert_eq!(refused["error"]["code"], -32021, "{refused}");
    assert_eq!(
        refused["error"]["data"]["requiredCapabilities"]["extensions"],
        json!({"io.modelcontextprotocol/tasks": {}}),
        "{refused}"
    );
    assert!(
        refused["error"]["message"].as_str().unwrap().contains("runs only as a task"),
        "{refused}"
    );

    // A 2025-11-25 client cannot start a task here: the revision's answer for a `required` tool.
    let (_, refused) = rpc(&url, LEGACY, "tools/call", call(), json!({}), &[]).await;
    assert_eq!(refused["error"]["code"], -32601, "{refused}");
    assert_eq!(RAN.load(Ordering::SeqCst), before, "a refused call never ran");

    // A tool that may be a task still answers such a client itself.
    let (_, ran) = rpc(
        &url,
        MODERN,
        "tools/call",
        json!({"name": "ts-may-be-a-task", "arguments": {}}),
        json!({}),
        &[],
    )
    .await;
    assert_eq!(ran["result"]["content"][0]["text"], "built", "{ran}");

    // With the extension, the call is a task that completes.
    let (_, handle) = rpc(&url, MODERN, "tools/call", call(), TASKS(), &[]).await;
    assert_eq!(handle["result"]["resultType"], "task", "{handle}");
    let done = settled(&url, handle["result"]["taskId"].as_str().unwrap()).await;
    assert_eq!(done["status"], "completed", "{done}");
    assert_eq!(done["result"]["content"][0]["text"], "built in the background", "{done}");
}

#[test]
fn the_toolsmith_catalog_keeps_a_task_required_tool_required() {
    let catalog = tool_core::catalog::Catalog::new("t", "1", Registry::from_iter([only_a_task::tool(), may_be_a_task::tool()]));
    let doc = catalog.to_toolsmith();
    let background = |id: &str| {
        let tools = doc["tools"].as_array().unwrap();
        tools.iter().find(|t| t["id"] == id).unwrap()["background"].clone()
    };
    assert_eq!(background("ts-only-a-task"), json!({"enabled": true, "required": true}));
    assert_eq!(background("ts-may-be-a-task"), json!({"enabled": true}));
    let never = tool_core::catalog::toolsmith::dispatcher(|id, _, _| async move { Err(ToolError::new(format!("{id} was dispatched"))) });
    let loaded = tool_core::catalog::Catalog::from_toolsmith(&doc, never).unwrap();
    let support: Vec<_> = loaded
        .tools()
        .iter()
        .map(|t| tool_core::spec::BackgroundSpec::task_support(t.spec().policy.background.as_ref()))
        .collect();
    assert_eq!(support, [TaskSupport::Optional, TaskSupport::Required], "in id order");
}
