//! Tasks that gather input, as a 2026-07-28 MCP client sees them:
//!
//! - a task whose tool suspends with a resume type in parts is `input_required` with one
//!   `inputRequests` entry per part; `tasks/update` answers one part on one instance, the task
//!   stays `input_required` with only the other (read on a second instance sharing the SQLite
//!   store), and answering it there completes the task with both answers;
//! - a task-required tool that asks first (`background(required, asks_first)`) answers its
//!   first call with an input-required result (no task id) and the call bringing the answer back
//!   with a task handle (no request state), whose result carries the answer.

use std::sync::Arc;
use std::time::Duration;

use serde_json::{Value, json};
use tool_core::mcp::http::HttpOptions;
use tool_core::mcp::{McpConfig, McpServer};
use tool_core::prelude::*;
use tool_core::runtime::{Runtime, SqliteStore, TaskOptions};

use super::modern::{MODERN, TASKS, rpc, settled};
use crate::support::http_server::{self, Served};

/// What the tools ask.
#[derive(Serialize, Deserialize, JsonSchema)]
struct Ask {
    /// The question
    question: String,
}

/// One answer.
#[derive(Serialize, Deserialize, JsonSchema)]
struct Answer {
    /// A name
    name: String,
    /// Whether to go on
    confirm: bool,
}

/// Two answers, one question each.
#[derive(Serialize, Deserialize, JsonSchema)]
struct Two {
    /// The first answer
    first: Answer,
    /// The second answer
    second: Answer,
}

/// Asks two questions at once, then answers with both answers
#[tool(id = "ti-two", background(enabled = true), suspend = Ask, resume = Two)]
async fn two(#[ctx] cx: ToolContext<RequestContext, Ask, Two>) -> Result<String, ToolError> {
    match cx.resume_data()? {
        None => Err(cx.suspend(Ask { question: "two".into() })),
        Some(Two { first, second }) => Ok(format!("{} and {}", first.name, second.name)),
    }
}

/// A name.
#[derive(Serialize, Deserialize, JsonSchema)]
struct Name {
    /// The name
    name: String,
}

/// Asks for a name within the call, then greets as a task
#[tool(id = "ti-asks-first", background(required, asks_first), suspend = Ask, resume = Name)]
async fn asks_first(#[ctx] cx: ToolContext<RequestContext, Ask, Name>) -> Result<String, ToolError> {
    match cx.resume_data()? {
        None => Err(cx.suspend(Ask { question: "name?".into() })),
        Some(Name { name }) => Ok(format!("hello {name}")),
    }
}

/// One stateless instance over the SQLite store in `dir`.
async fn instance(dir: &std::path::Path) -> Served {
    let store = Arc::new(SqliteStore::open_with_key(dir.join("store.sqlite3"), b"task-input test key").unwrap());
    let registry = Registry::try_from_tools([two::tool(), asks_first::tool()]).unwrap();
    let runtime = Runtime::builder(registry)
        .shared_store(store.clone())
        .task_store(store, TaskOptions::default().poll_interval(Duration::from_millis(20)))
        .build();
    let options = HttpOptions {
        stateless: true,
        json_response: true,
        ..HttpOptions::default()
    };
    http_server::serve(McpServer::new(runtime, McpConfig::default()), options).await
}

fn url(served: &Served) -> String {
    format!("http://{}/mcp", served.addr)
}

async fn call(url: &str, method: &str, params: Value, capabilities: Value) -> Value {
    let (status, answer) = rpc(url, MODERN, method, params, capabilities, &[]).await;
    assert_eq!((status, answer.get("error")), (200, None), "{answer}");
    answer["result"].clone()
}

fn keys(task: &Value) -> Vec<String> {
    task["inputRequests"]
        .as_object()
        .map(|o| o.keys().cloned().collect())
        .unwrap_or_default()
}

fn accept(name: &str) -> Value {
    json!({"action": "accept", "content": {"name": name, "confirm": true}})
}

#[tokio::test]
async fn a_task_answered_in_parts_on_two_instances_completes_with_both() {
    let dir = tempfile::tempdir().unwrap();
    let (one, other) = (instance(dir.path()).await, instance(dir.path()).await);
    let (a, b) = (url(&one), url(&other));
    let handle = call(&a, "tools/call", json!({"name": "ti-two", "arguments": {}}), TASKS()).await;
    let task_id = handle["taskId"]
        .as_str()
        .unwrap_or_else(|| panic!("a task handle: {handle}"))
        .to_owned();
    let waiting = settled(&a, &task_id).await;
    assert_eq!(waiting["status"], "input_required", "{waiting}");
    assert_eq!(keys(&waiting), ["first", "second"]);
    assert_eq!(waiting["inputRequests"]["first"]["method"], "elicitation/create");
    let form = &waiting["inputRequests"]["first"]["params"]["requestedSchema"];
    assert_eq!(form["properties"]["confirm"]["type"], "boolean", "{form}");

    let ack = call(
        &a,
        "tasks/update",
        json!({"taskId": task_id, "inputResponses": {"first": accept("ada")}}),
        TASKS(),
    )
    .await;
    assert_eq!(ack["resultType"], "complete", "{ack}");
    let still = settled(&b, &task_id).await;
    assert_eq!(still["status"], "input_required", "{still}");
    assert_eq!(keys(&still), ["second"], "the other instance reads the first answer from the store");

    call(
        &b,
        "tasks/update",
        json!({"taskId": task_id, "inputResponses": {"second": accept("grace")}}),
        TASKS(),
    )
    .await;
    let done = settled(&a, &task_id).await;
    assert_eq!(done["status"], "completed", "{done}");
    assert_eq!(done["result"]["content"][0]["text"], "ada and grace", "{done}");

    // Cancelled while it waits (one part given), the task ends cancelled and takes no answer.
    let handle = call(&a, "tools/call", json!({"name": "ti-two", "arguments": {}}), TASKS()).await;
    let task_id = handle["taskId"].as_str().unwrap().to_owned();
    assert_eq!(settled(&a, &task_id).await["status"], "input_required");
    let first = json!({"taskId": task_id, "inputResponses": {"first": accept("ada")}});
    call(&a, "tasks/update", first, TASKS()).await;
    call(&b, "tasks/cancel", json!({"taskId": task_id}), TASKS()).await;
    assert_eq!(settled(&a, &task_id).await["status"], "cancelled");
    let second = json!({"taskId": task_id, "inputResponses": {"second": accept("grace")}});
    let (_, refused) = rpc(&a, MODERN, "tasks/update", second, TASKS(), &[]).await;
    assert_eq!(refused["error"]["code"], -32602, "{refused}");
    assert_eq!(settled(&b, &task_id).await["status"], "cancelled");
}

#[tokio::test]
async fn a_tool_that_asks_first_becomes_a_task_on_the_final_round() {
    let dir = tempfile::tempdir().unwrap();
    let served = instance(dir.path()).await;
    let url = url(&served);
    let caps = json!({"elicitation": {}, "extensions": {"io.modelcontextprotocol/tasks": {}}});
    let round1 = call(&url, "tools/call", json!({"name": "ti-asks-first", "arguments": {}}), caps.clone()).await;
    assert_eq!(round1["resultType"], "input_required", "{round1}");
    assert!(round1.get("taskId").is_none(), "{round1}");
    assert_eq!(keys(&round1), ["resume"]);
    let state = round1["requestState"].as_str().expect("a request state");

    let params = json!({"name": "ti-asks-first", "arguments": {}, "requestState": state,
        "inputResponses": {"resume": {"action": "accept", "content": {"name": "Alice"}}}});
    let round2 = call(&url, "tools/call", params, caps).await;
    assert_eq!(round2["resultType"], "task", "{round2}");
    assert!(
        round2.get("requestState").is_none() && round2.get("inputRequests").is_none(),
        "{round2}"
    );
    let task_id = round2["taskId"].as_str().unwrap();
    let done = settled(&url, task_id).await;
    assert_eq!(done["status"], "completed", "{done}");
    assert_eq!(done["result"]["content"][0]["text"], "hello Alice", "{done}");
}
