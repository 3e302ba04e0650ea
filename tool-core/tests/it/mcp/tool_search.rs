//! The MCP server's tool search (`McpConfig::tool_search`, `serve --tool-search`) through
//! `rmcp`'s client: deferred tools hidden until `search_tools` loads them for the session, the
//! session told its list changed, other sessions unaffected, calls of tools not loaded refused,
//! loaded ones run through the runtime as any listed tool (approval, `to_model_output`), and a
//! request without a session naming what it loaded in `_meta["io.toolsmith/loaded"]`; the
//! server's deferral rule (`McpConfig::deferral`) over the tools' own.

use super::server::{call_params, is_error, request, result_of, sessionless, start_http, stateless, text_of, tool_names};
use serde_json::{Value, json};
use tool_core::catalog::Deferral;
use tool_core::context::Elicitation;
use tool_core::mcp::{LOADED_META, McpConfig, McpServer};
use tool_core::prelude::*;
use tool_core::runtime::Runtime;
use tool_core::testing::McpPair;

/// Adds two numbers
#[tool(id = "ts_add")]
async fn add(
    /// The first addend
    a: f64,
    /// The second addend
    b: f64,
) -> f64 {
    a + b
}

fn card(name: &String) -> ModelOutput {
    ModelOutput::text(format!("customer card: {name}"))
}

/// Find a customer in the CRM by name
#[tool(id = "crm_find", defer_loading, namespace = "crm", to_model_output = card)]
async fn crm_find(
    /// The customer's name
    name: String,
) -> String {
    name
}

/// Delete a customer record from the CRM (a person approves)
#[tool(id = "crm_delete", defer_loading, namespace = "crm", require_approval)]
async fn crm_delete(
    /// The customer's name
    name: String,
) -> String {
    format!("deleted {name}")
}

/// The weather forecast for a city
#[tool(id = "ts_forecast", defer_loading)]
async fn forecast(
    /// The city
    city: String,
) -> String {
    format!("sunny in {city}")
}

fn server(tool_search: bool) -> McpServer {
    let registry = Registry::from_iter([add::tool(), crm_find::tool(), crm_delete::tool(), forecast::tool()]);
    let config = McpConfig {
        tool_search,
        ..McpConfig::default()
    };
    McpServer::new(Runtime::new(registry), config)
}

fn answer(call: &tool_core::testing::McpCall) -> Value {
    serde_json::from_str(call.text()).unwrap_or_else(|e| panic!("not JSON ({e}): {}", call.text()))
}

fn names(found: &Value) -> Vec<&str> {
    found["tools"]
        .as_array()
        .unwrap()
        .iter()
        .map(|t| t["name"].as_str().unwrap())
        .collect()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_search_loads_the_tools_it_finds_for_its_session_only() {
    let server = server(true);
    let one = McpPair::start(server.for_new_session()).await;
    let other = McpPair::start(server.for_new_session()).await;
    assert_eq!(one.tool_names().await, ["ts_add", "search_tools"]);

    // Not loaded: refused, saying to search first, and the tool did not run.
    let refused = one.call("crm_find", json!({"name": "Ada"})).await;
    assert!(refused.is_error());
    assert!(
        refused.text().contains("not loaded") && refused.text().contains("search_tools"),
        "{}",
        refused.text()
    );

    // One search loads several tools: the CRM's, best first, with their namespace.
    let before = one.list_changes();
    let found = one.call("search_tools", json!({"query": "customer in the CRM", "limit": 2})).await;
    assert!(!found.is_error(), "{}", found.text());
    let found = answer(&found);
    let mut crm = names(&found);
    crm.sort_unstable();
    assert_eq!(crm, ["crm_delete", "crm_find"], "{found}");
    assert_eq!(found["tools"][0]["namespace"], "crm", "{found}");
    assert_eq!(found["loaded"].as_array().unwrap().len(), 2, "{found}");
    tokio::time::timeout(std::time::Duration::from_secs(5), async {
        while one.list_changes() == before {
            tokio::time::sleep(std::time::Duration::from_millis(10)).await;
        }
    })
    .await
    .expect("the session heard that its list changed");
    assert_eq!(one.tool_names().await, ["crm_delete", "crm_find", "ts_add", "search_tools"]);

    // A loaded tool runs as a listed one: its model output is `to_model_output`'s.
    let call = one.call("crm_find", json!({"name": "Ada"})).await;
    assert!(!call.is_error(), "{}", call.text());
    assert_eq!(call.text(), "customer card: Ada");

    // A search does not find what is loaded already; the next best is the forecast.
    let again = answer(&one.call("search_tools", json!({"query": "customer CRM weather", "limit": 5})).await);
    assert_eq!(names(&again), ["ts_forecast"], "{again}");

    // The other session loaded nothing.
    assert_eq!(other.tool_names().await, ["ts_add", "search_tools"]);
    assert!(other.call("crm_find", json!({"name": "Ada"})).await.is_error());
    one.close().await;
    other.close().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_loaded_tool_that_needs_approval_asks_as_a_listed_one_does() {
    let server = server(true);
    let mcp = McpPair::start(server).await;
    let found = answer(
        &mcp.call("search_tools", json!({"query": "delete a customer record", "limit": 1}))
            .await,
    );
    assert_eq!(names(&found), ["crm_delete"]);
    mcp.elicit(Elicitation::Accept {
        content: json!({"approved": true}),
    });
    let call = mcp.call("crm_delete", json!({"name": "Ada"})).await;
    assert!(!call.is_error(), "{}", call.text());
    assert_eq!(call.text(), "deleted Ada");
    assert_eq!(mcp.elicitations().len(), 1, "the approval was asked");
    mcp.close().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_loaded_tool_waiting_for_approval_is_stored_with_the_loaded_set() {
    let server = server(true);
    let runtime = server.runtime().clone();
    let mcp = McpPair::builder(server).without_elicitation().start().await;
    mcp.call("search_tools", json!({"query": "delete a customer record", "limit": 1}))
        .await;
    let waiting = mcp.call("crm_delete", json!({"name": "Ada"})).await;
    assert!(waiting.text().contains("approv"), "{}", waiting.text());
    let pending = runtime.pending().await.unwrap();
    let loaded = pending[0].data.loaded_tools.as_ref().expect("stored with its loaded set");
    assert_eq!(loaded.iter().collect::<Vec<_>>(), ["crm_delete"]);
    mcp.close().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn without_tool_search_deferred_tools_are_listed_and_called_as_any() {
    let mcp = McpPair::start(server(false)).await;
    assert_eq!(mcp.tool_names().await, ["crm_delete", "crm_find", "ts_add", "ts_forecast"]);
    assert_eq!(mcp.call("ts_forecast", json!({"city": "Oslo"})).await.text(), "sunny in Oslo");
    mcp.close().await;
}

/// `tools/call` params naming `loaded` in `_meta`.
fn call_with(name: &str, arguments: Value, loaded: &[&str]) -> Value {
    let mut params = call_params(name, arguments);
    params["_meta"] = json!({LOADED_META: loaded});
    params
}

/// One request to a stateless server; its response's result.
async fn ask(addr: std::net::SocketAddr, id: u64, method: &str, params: Value) -> Value {
    let mut r = sessionless(addr, &request(id, method, params)).await;
    let (answer, _) = r.response_to(id).await;
    answer
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_request_without_a_session_names_what_it_loaded_in_meta() {
    let served = start_http(server(true), stateless(false)).await;
    let addr = served.addr;
    let found = ask(
        addr,
        1,
        "tools/call",
        call_params("search_tools", json!({"query": "weather forecast for a city", "limit": 1})),
    )
    .await;
    let found: Value = serde_json::from_str(text_of(result_of(&found))).unwrap();
    assert_eq!(found["loaded"], json!(["ts_forecast"]), "{found}");

    // Nothing kept: a request that does not name it neither lists nor runs it.
    let list = ask(addr, 2, "tools/list", json!({})).await;
    assert_eq!(tool_names(result_of(&list)), ["ts_add", "search_tools"]);
    let refused = ask(addr, 3, "tools/call", call_params("ts_forecast", json!({"city": "Oslo"}))).await;
    assert!(is_error(result_of(&refused)), "{refused}");
    assert!(text_of(result_of(&refused)).contains("search_tools"), "{refused}");

    // Named in `_meta`: listed and run.
    let list = ask(addr, 4, "tools/list", json!({"_meta": {LOADED_META: ["ts_forecast"]}})).await;
    assert_eq!(tool_names(result_of(&list)), ["ts_add", "ts_forecast", "search_tools"]);
    let call = ask(
        addr,
        5,
        "tools/call",
        call_with("ts_forecast", json!({"city": "Oslo"}), &["ts_forecast"]),
    )
    .await;
    assert!(!is_error(result_of(&call)), "{call}");
    assert_eq!(text_of(result_of(&call)), "sunny in Oslo");

    // A malformed value is a protocol error naming the key.
    let bad = ask(addr, 6, "tools/list", json!({"_meta": {LOADED_META: "ts_forecast"}})).await;
    assert!(bad["error"]["message"].as_str().unwrap_or_default().contains(LOADED_META), "{bad}");
}

fn server_deferring(deferral: Deferral) -> McpServer {
    let registry = Registry::from_iter([add::tool(), crm_find::tool(), crm_delete::tool(), forecast::tool()]);
    let config = McpConfig {
        tool_search: true,
        deferral,
        ..McpConfig::default()
    };
    McpServer::new(Runtime::new(registry), config)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_servers_deferral_rule_decides_what_is_listed_searched_and_refused() {
    // Every tool but `crm_find` (deferred by its own declaration) waits to be found.
    let mcp = McpPair::start(server_deferring(Deferral::all_except(["crm_find"]))).await;
    assert_eq!(mcp.tool_names().await, ["crm_find", "search_tools"]);
    let call = mcp.call("crm_find", json!({"name": "Ada"})).await;
    assert!(!call.is_error(), "loaded up front by the rule: {}", call.text());
    assert_eq!(call.text(), "customer card: Ada");
    // `ts_add` (loaded up front by its own) is deferred by the rule: refused until found.
    let refused = mcp.call("ts_add", json!({"a": 1, "b": 2})).await;
    assert!(refused.is_error() && refused.text().contains("not loaded"), "{}", refused.text());
    let found = answer(&mcp.call("search_tools", json!({"query": "add two numbers", "limit": 1})).await);
    assert_eq!(names(&found), ["ts_add"], "{found}");
    assert_eq!(mcp.call("ts_add", json!({"a": 1, "b": 2})).await.text(), "3.0");
    assert_eq!(mcp.tool_names().await, ["crm_find", "ts_add", "search_tools"]);
    mcp.close().await;

    // No tool deferred: every tool listed and called, whatever they declare.
    let mcp = McpPair::start(server_deferring(Deferral::none())).await;
    let listed = mcp.tool_names().await;
    assert!(
        listed.starts_with(&["crm_delete", "crm_find", "ts_add", "ts_forecast"].map(String::from)),
        "{listed:?}"
    );
    assert_eq!(mcp.call("ts_forecast", json!({"city": "Oslo"})).await.text(), "sunny in Oslo");
    mcp.close().await;
}
