//! The server over stdio: listing and calling, lines that are not JSON-RPC, paging, structured
//! content, list changes, approval with and without elicitation, client-side tools, progress,
//! logs, cancellation and per-session settings.

use super::*;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn stdio_session_lists_and_calls_tools() {
    let mut c = Stdio::start(server_with(all_tools(), McpConfig::default()));
    let init = c.initialize(json!({})).await;
    assert_eq!(init["protocolVersion"], LEGACY);
    assert_eq!(init["serverInfo"]["name"], "toolsmith");
    assert_eq!(init["capabilities"]["tools"]["listChanged"], true);
    assert!(init["capabilities"]["logging"].is_object(), "{init}");

    let (list, _) = c.request(1, "tools/list", json!({})).await;
    let list = result_of(&list);
    let names = tool_names(list);
    assert_eq!(names, ["add", "chatty", "forecast", "radar", "shout", "steps", "transfer"]);
    assert!(list.get("nextCursor").is_none(), "one page holds every tool: {list}");
    let add = &list["tools"][0];
    assert_eq!(add["description"], "Adds two numbers");
    assert_eq!(add["inputSchema"]["type"], "object");
    assert_eq!(add["inputSchema"]["properties"]["a"]["description"], "The first addend");
    assert_eq!(add["inputSchema"]["required"], json!(["a", "b"]));

    let (result, _) = c.call(2, "add", json!({"a": 2, "b": 3})).await;
    assert!(!is_error(&result), "{result}");
    assert_eq!(serde_json::from_str::<f64>(text_of(&result)).unwrap(), 5.0);

    c.close().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn stdio_answers_lines_that_are_not_json_rpc_and_goes_on() {
    let mut c = Stdio::start(server_with(all_tools(), McpConfig::default()));
    c.initialize(json!({})).await;

    c.send_line("this is not JSON {").await;
    let e = c.recv().await;
    assert_eq!(e["jsonrpc"], "2.0");
    assert_eq!(e["id"], Value::Null);
    assert!(e.as_object().unwrap().contains_key("id"), "the parse error has no id member: {e}");
    assert_eq!(e["error"]["code"], -32700, "{e}");
    assert!(e["error"]["message"].is_string());
    let (pong, _) = c.request(1, "ping", json!({})).await;
    assert_eq!(*result_of(&pong), json!({}));

    c.send_line(r#"{"hello":1}"#).await;
    let e = c.recv().await;
    assert_eq!(e["error"]["code"], -32600, "{e}");
    assert_eq!(e["id"], Value::Null);

    c.send_line(r#"{"jsonrpc":"2.0","id":9,"method":"x","params":"bad"}"#).await;
    let e = c.recv().await;
    assert_eq!(e["error"]["code"], -32600, "{e}");
    assert_eq!(e["id"], 9, "the error does not carry the request's id: {e}");

    // Shapes rmcp would answer without an `id` (or not at all) are answered here.
    for (line, id) in [
        (r#"[{"jsonrpc":"2.0","id":10,"method":"ping"}]"#, Value::Null),
        (r#"{"jsonrpc":"2.0","id":{"a":1},"method":"ping"}"#, Value::Null),
        (r#"{"jsonrpc":"2.0","id":null,"method":"ping"}"#, Value::Null),
        (r#"{"jsonrpc":"2.0","id":1.5,"method":"ping"}"#, Value::Null),
        (r#"{"jsonrpc":"2.0","id":11,"method":"tools/list","params":[]}"#, json!(11)),
        (r#"{"jsonrpc":"1.0","id":"twelve","method":"ping"}"#, json!("twelve")),
    ] {
        c.send_line(line).await;
        let e = c.recv().await;
        assert_eq!(e["error"]["code"], -32600, "{line} -> {e}");
        assert!(e.as_object().unwrap().contains_key("id"), "{line} -> {e}");
        assert_eq!(e["id"], id, "{line} -> {e}");
    }

    // A standard method with params that do not parse is invalid params, not an unknown method.
    for (id, method, params) in [
        (13, "tools/call", json!({"name": "add", "arguments": "a=1"})),
        (14, "tools/call", json!({"arguments": {}})),
        (15, "logging/setLevel", json!({"level": "loud"})),
    ] {
        let (r, _) = c.request(id, method, params).await;
        assert_eq!(r["error"]["code"], -32602, "{method}: {r}");
    }
    c.send_line(r#"{"jsonrpc":"2.0","id":16,"method":"tools/call"}"#).await;
    let (r, _) = c.response_to(16).await;
    assert_eq!(r["error"]["code"], -32602, "{r}");
    let (r, _) = c.request(17, "no/such/method", json!({})).await;
    assert_eq!(r["error"]["code"], -32601, "{r}");

    // Still a working session.
    let (result, _) = c.call(2, "add", json!({"a": 1, "b": 1})).await;
    assert_eq!(serde_json::from_str::<f64>(text_of(&result)).unwrap(), 2.0);

    // An unknown tool is a protocol error.
    let (r, _) = c.request(3, "tools/call", call_params("no_such_tool", json!({}))).await;
    assert_eq!(r["error"]["code"], -32602, "{r}");
    assert!(r["error"]["message"].as_str().unwrap().contains("no_such_tool"), "{r}");

    // Bad arguments are the tool's error, naming the failing path.
    let (result, _) = c.call(4, "add", json!({"a": "two", "b": 1})).await;
    assert!(is_error(&result), "{result}");
    assert!(text_of(&result).contains("/a"), "the error does not name /a: {result}");
    let (result, _) = c.call(5, "add", json!({"a": 1})).await;
    assert!(is_error(&result), "{result}");
    assert!(text_of(&result).contains('b'), "the error does not name the missing b: {result}");

    let (pong, _) = c.request(6, "ping", json!({})).await;
    assert_eq!(*result_of(&pong), json!({}));
    c.close().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn tools_list_pages_follow_the_cursor() {
    // Inserted out of order: the listing is ordered by name.
    let registry = Registry::from_iter(
        ["page_d", "page_b", "page_e", "page_a", "page_c"]
            .into_iter()
            .map(|id| plain_tool(id).into_tool()),
    );
    let config = McpConfig {
        page_size: 2,
        ..McpConfig::default()
    };
    let mut c = Stdio::start(server_with(registry, config));
    c.initialize(json!({})).await;

    let mut seen = Vec::new();
    let mut pages = 0;
    let mut cursor: Option<String> = None;
    loop {
        let params = match &cursor {
            Some(c) => json!({"cursor": c}),
            None => json!({}),
        };
        let (r, _) = c.request(10 + pages, "tools/list", params).await;
        let page = result_of(&r);
        let names = tool_names(page);
        assert!(names.len() <= 2, "a page is larger than page_size: {page}");
        seen.extend(names);
        pages += 1;
        assert!(pages <= 5, "the cursor never ends");
        match page.get("nextCursor").and_then(Value::as_str) {
            Some(next) => cursor = Some(next.to_owned()),
            None => break,
        }
    }
    assert_eq!(seen, ["page_a", "page_b", "page_c", "page_d", "page_e"]);
    assert_eq!(pages, 3);

    let (r, _) = c.request(20, "tools/list", json!({"cursor": "not-a-cursor-we-gave"})).await;
    assert_eq!(r["error"]["code"], -32602, "{r}");
    let (r, _) = c.request(21, "tools/list", json!({"cursor": "99"})).await;
    assert_eq!(r["error"]["code"], -32602, "{r}");
    c.close().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn object_outputs_are_structured_content() {
    let c = McpPair::builder(server_with(all_tools(), McpConfig::default()))
        .protocol(LEGACY)
        .start()
        .await;
    let forecast_entry = c.list().await.into_iter().find(|t| t["name"] == "forecast").unwrap();
    assert_eq!(forecast_entry["outputSchema"]["type"], "object", "{forecast_entry}");

    let raw = json!({"city": "Oslo", "celsius": 21, "sky": "sunny"});
    let result = c.call("forecast", json!({"city": "Oslo"})).await;
    assert_eq!(result.structured(), raw);
    let content = result.result["content"].as_array().unwrap();
    assert_eq!(content.len(), 1, "{}", result.result);
    assert_eq!(content[0]["type"], "text");
    let text: Value = serde_json::from_str(result.text()).unwrap();
    assert_eq!(text, raw, "the text block is not the output as JSON");

    // `to_model_output` decides the content; the raw output is still the structured content.
    let result = c.call("radar", json!({"city": "Oslo"})).await;
    assert_eq!(result.structured(), raw);
    let content = result.result["content"].as_array().unwrap();
    assert_eq!(content[0], json!({"type": "text", "text": "Oslo: 21°C and sunny"}));
    assert_eq!(
        content[1],
        json!({"type": "image", "data": "iVBORw0KGgo=", "mimeType": "image/png"})
    );
    // Structured content comes with its JSON as text, for clients that read only content.
    assert_eq!(content.len(), 3, "{}", result.result);
    assert_eq!(content[2]["type"], "text");
    let text: Value = serde_json::from_str(content[2]["text"].as_str().unwrap()).unwrap();
    assert_eq!(text, raw);

    // A text output with `to_model_output`: exactly its blocks, nothing structured.
    let result = c.call("shout", json!({"text": "hey"})).await;
    assert!(!result.is_error(), "{}", result.result);
    assert_eq!(
        result.result["content"],
        json!([{"type": "text", "text": "HEY"}, {"type": "text", "text": "!"}])
    );
    assert!(result.result.get("structuredContent").is_none(), "{}", result.result);
    c.close().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn stdio_list_changed_reaches_the_client() {
    let registry = Arc::new(all_tools());
    let server = McpServer::new(Runtime::new(registry.clone()), McpConfig::default());
    let mut c = Stdio::start(server);
    c.initialize(json!({})).await;
    let (pong, _) = c.request(1, "ping", json!({})).await;
    result_of(&pong);

    // Nothing changed, nothing is said.
    assert!(c.try_recv(QUIET).await.is_none());

    // `initialized` is handled on its own task: retry the change in case the server had not
    // subscribed yet when the first one happened.
    let mut heard = None;
    for n in 0..10 {
        registry.insert(plain_tool(&format!("added_{n}"))).unwrap();
        if let Some(m) = c.try_recv(Duration::from_millis(500)).await {
            heard = Some(m);
            break;
        }
    }
    let m = heard.expect("no notifications/tools/list_changed after registry.insert");
    assert_eq!(m["method"], "notifications/tools/list_changed", "{m}");
    assert!(m.get("id").is_none(), "{m}");

    let (list, _) = c.request(2, "tools/list", json!({})).await;
    assert!(tool_names(result_of(&list)).contains(&"added_0".to_owned()));

    // A later change is announced too.
    registry.insert(plain_tool("added_later")).unwrap();
    let m = c.recv().await;
    assert_eq!(m["method"], "notifications/tools/list_changed", "{m}");
    c.close().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn approval_without_elicitation_says_how_to_continue() {
    let server = server_with(all_tools(), McpConfig::default());
    let runtime = server.runtime().clone();
    let c = McpPair::builder(server).protocol(LEGACY).without_elicitation().start().await;

    let result = c.call("transfer", json!({"amount": 111})).await;
    assert!(result.is_error(), "{}", result.result);
    let pending = runtime.pending().await.unwrap();
    assert_eq!(pending.len(), 1, "{pending:?}");
    let waiting = &pending[0];
    assert_eq!(waiting.tool_name, "transfer");
    assert_eq!(waiting.kind, PendingKind::Approval);
    assert_eq!(waiting.args, json!({"amount": 111}));
    let text = result.text();
    assert!(text.contains(&waiting.tool_call_id), "the waiting call's id is missing: {text}");
    assert!(
        text.contains(&format!("toolsmith call {} --approve", waiting.tool_call_id)),
        "the command to approve it is missing: {text}"
    );
    assert!(!sent(111), "the tool ran without approval");
    assert!(c.elicitations().is_empty(), "a client without elicitation was asked");

    // The call really waits: approving it runs the tool.
    let events = runtime
        .approve(&waiting.tool_call_id, ResumeOptions::default())
        .await
        .unwrap()
        .collect()
        .await;
    assert!(
        events
            .iter()
            .any(|e| matches!(&e.raw.kind, RunEventKind::ToolResult { output } if output.value() == json!("sent 111"))),
        "approving did not run the call"
    );
    assert!(sent(111));
    assert!(runtime.pending().await.unwrap().is_empty());
    c.close().await;
}

/// Shows a map in the user's browser (the application answers)
#[tool(id = "show-map")]
fn show_map(
    /// The place
    place: String,
) -> bool;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_client_side_tool_is_listed_and_its_call_is_an_error_naming_the_waiting_call() {
    let server = server_with(Registry::from_iter([add::tool(), show_map::tool()]), McpConfig::default());
    let runtime = server.runtime().clone();
    let mut c = Stdio::start(server);
    c.initialize(json!({"elicitation": {}})).await;
    let (listed, _) = c.request(1, "tools/list", json!({})).await;
    assert!(tool_names(result_of(&listed)).contains(&"show-map".to_owned()), "{listed}");

    // Invalid input is refused before anything waits.
    let (invalid, _) = c.call(2, "show-map", json!({"place": 7})).await;
    assert!(is_error(&invalid) && text_of(&invalid).contains("/place"), "{invalid}");
    assert!(runtime.pending().await.unwrap().is_empty());

    let (result, _) = c.call(3, "show-map", json!({"place": "Oslo"})).await;
    assert!(is_error(&result), "{result}");
    let pending = runtime.pending().await.unwrap();
    assert_eq!(pending.len(), 1, "{pending:?}");
    let waiting = &pending[0];
    assert_eq!((waiting.kind, waiting.tool_name.as_str()), (PendingKind::ClientResult, "show-map"));
    let text = text_of(&result);
    assert!(text.contains("answered by the application"), "{text}");
    assert!(
        text.contains(&format!("toolsmith call {} --result", waiting.tool_call_id)),
        "the waiting call and how to complete it are missing: {text}"
    );

    // It stays answerable through the runtime.
    let run = runtime
        .submit_result(&waiting.tool_call_id, json!(true))
        .await
        .unwrap()
        .finish()
        .await;
    assert!(
        run.events
            .iter()
            .any(|e| matches!(&e.raw.kind, RunEventKind::ToolResult { output } if output.value() == json!(true))),
        "{:?}",
        run.events
    );
    assert!(runtime.pending().await.unwrap().is_empty());
    c.close().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn approval_asks_a_client_that_can_elicit() {
    let server = server_with(all_tools(), McpConfig::default());
    let runtime = server.runtime().clone();
    let mut c = Stdio::start(server);
    c.initialize(json!({"elicitation": {}})).await;

    // Accepted: the tool runs and its result answers the call.
    c.send(&request(1, "tools/call", call_params("transfer", json!({"amount": 222}))))
        .await;
    let ask = c.recv().await;
    assert_eq!(ask["method"], "elicitation/create", "{ask}");
    let schema = &ask["params"]["requestedSchema"];
    assert_eq!(schema["properties"]["approved"]["type"], "boolean", "{ask}");
    assert!(ask["params"]["message"].as_str().unwrap().contains("transfer"), "{ask}");
    assert!(!sent(222), "the tool ran before it was approved");
    assert_eq!(runtime.pending().await.unwrap().len(), 1);
    c.send(&json!({"jsonrpc": "2.0", "id": ask["id"], "result": {"action": "accept", "content": {"approved": true}}}))
        .await;
    let (r, _) = c.response_to(1).await;
    let result = result_of(&r);
    assert!(!is_error(result), "{result}");
    assert_eq!(text_of(result), "sent 222");
    assert!(sent(222));
    assert!(runtime.pending().await.unwrap().is_empty());

    // Declined: the tool does not run and the result says so.
    c.send(&request(2, "tools/call", call_params("transfer", json!({"amount": 333}))))
        .await;
    let ask = c.recv().await;
    assert_eq!(ask["method"], "elicitation/create", "{ask}");
    c.send(&json!({"jsonrpc": "2.0", "id": ask["id"], "result": {"action": "decline"}}))
        .await;
    let (r, _) = c.response_to(2).await;
    let text = text_of(result_of(&r)).to_owned();
    assert!(text.contains("not approved"), "{text}");
    assert!(!sent(333), "a declined call ran");
    assert!(runtime.pending().await.unwrap().is_empty(), "a declined call still waits");
    c.close().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_approval_form_offers_an_edit_of_flat_arguments() {
    let server = server_with(all_tools(), McpConfig::default());
    let runtime = server.runtime().clone();
    let mut c = Stdio::start(server);
    c.initialize(json!({"elicitation": {}})).await;
    c.send(&request(1, "tools/call", call_params("transfer", json!({"amount": 4440}))))
        .await;
    let ask = c.recv().await;
    assert_eq!(
        ask["params"]["requestedSchema"]["properties"]["edit.amount"]["type"], "integer",
        "{ask}"
    );
    let edited = json!({"action": "accept", "content": {"approved": true, "edit.amount": 445}});
    c.send(&json!({"jsonrpc": "2.0", "id": ask["id"], "result": edited})).await;
    let (r, _) = c.response_to(1).await;
    assert_eq!(text_of(result_of(&r)), "sent 445");
    assert!(sent(445) && !sent(4440), "the edited arguments ran, not the model's");
    assert!(runtime.pending().await.unwrap().is_empty());
    c.close().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn progress_notifications_come_before_the_result() {
    let mut c = Stdio::start(server_with(all_tools(), McpConfig::default()));
    c.initialize(json!({})).await;
    let params = json!({"name": "steps", "arguments": {}, "_meta": {"progressToken": "tok-7"}});
    let (r, before) = c.request(1, "tools/call", params).await;
    assert_eq!(text_of(result_of(&r)), "all steps done");
    let progress: Vec<&Value> = before.iter().filter(|m| m["method"] == "notifications/progress").collect();
    assert_eq!(progress.len(), 3, "{before:?}");
    for (i, p) in progress.iter().enumerate() {
        assert_eq!(p["params"]["progressToken"], "tok-7", "{p}");
        assert_eq!(p["params"]["progress"], json!((i + 1) as f64), "{p}");
        assert_eq!(p["params"]["total"], json!(3.0), "{p}");
        assert_eq!(p["params"]["message"], format!("step {}", i + 1), "{p}");
    }

    // Without a progress token, no progress is sent.
    let (r, before) = c.call(2, "steps", json!({})).await;
    assert_eq!(text_of(&r), "all steps done");
    assert!(before.is_empty(), "{before:?}");
    assert!(c.try_recv(QUIET).await.is_none());
    c.close().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn logs_reach_a_client_that_set_a_level() {
    // No level set: no log messages.
    let quiet = McpPair::builder(server_with(all_tools(), McpConfig::default()))
        .protocol(LEGACY)
        .start()
        .await;
    let r = quiet.call("chatty", json!({})).await;
    assert_eq!(r.text(), "talked");
    assert!(r.logs.is_empty(), "logs without logging/setLevel: {:?}", r.logs);
    tokio::time::sleep(QUIET).await;
    assert!(quiet.logs().is_empty(), "late logs: {:?}", quiet.logs());
    quiet.close().await;

    let c = McpPair::builder(server_with(all_tools(), McpConfig::default()))
        .protocol(LEGACY)
        .start()
        .await;
    c.set_log_level("info").await;
    let r = c.call("chatty", json!({})).await;
    assert_eq!(r.text(), "talked");
    assert_eq!(r.logs.len(), 1, "only the info message passes an info level: {:?}", r.logs);
    let log = &r.logs[0];
    assert_eq!(log["level"], "info");
    assert_eq!(log["data"]["message"], "working");
    assert_eq!(log["data"]["data"], json!({"step": 1}));

    // A debug level lets both through (rmcp's client hands notifications to its handler
    // concurrently, so they may arrive in either order).
    c.set_log_level("debug").await;
    let r = c.call("chatty", json!({})).await;
    let mut levels: Vec<&str> = r.logs.iter().filter_map(|m| m["level"].as_str()).collect();
    levels.sort_unstable();
    assert_eq!(levels, ["debug", "info"], "{:?}", r.logs);
    c.close().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_cancelled_call_is_not_answered_and_frees_its_slot() {
    let (slow, mut started, gate) = gated_tool("slow");
    let config = McpConfig {
        max_concurrent_calls: 1,
        ..McpConfig::default()
    };
    let mut c = Stdio::start(server_with(Registry::from_iter([slow.into_tool()]), config));
    c.initialize(json!({})).await;
    c.send(&request(1, "tools/call", call_params("slow", json!({})))).await;
    tokio::time::timeout(PATIENCE, started.recv())
        .await
        .expect("the call did not start");
    c.send(&json!({"jsonrpc": "2.0", "method": "notifications/cancelled", "params": {"requestId": 1, "reason": "no longer needed"}}))
        .await;
    assert!(c.try_recv(QUIET).await.is_none(), "a cancelled request was answered");

    // The slot is free again: the next call runs instead of being refused.
    c.send(&request(2, "tools/call", call_params("slow", json!({})))).await;
    tokio::time::timeout(PATIENCE, started.recv())
        .await
        .expect("the call after a cancelled one did not start");
    gate.add_permits(1);
    let (r, before) = c.response_to(2).await;
    assert_eq!(text_of(result_of(&r)), "finished");
    assert!(before.is_empty(), "{before:?}");
    c.close().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn stdio_sessions_of_one_server_keep_their_own_settings() {
    let server = server_with(all_tools(), McpConfig::default());
    let mut a = Stdio::start(server.clone());
    let mut b = Stdio::start(server);
    a.initialize(json!({})).await;
    b.initialize(json!({})).await;
    let (r, _) = a.request(1, "logging/setLevel", json!({"level": "debug"})).await;
    result_of(&r);
    let (_, before) = a.call(2, "chatty", json!({})).await;
    assert_eq!(before.len(), 2, "{before:?}");
    // The other session set no level: it hears nothing.
    let (r, before) = b.call(1, "chatty", json!({})).await;
    assert_eq!(text_of(&r), "talked");
    assert!(before.is_empty(), "one session's log level applies to another: {before:?}");
    a.close().await;
    b.close().await;
}

#[tokio::test]
async fn a_tools_writer_is_connected_only_when_its_run_is_read() {
    // An MCP request answers with the outcome alone, so a tool's chunks have no reader there;
    // an application reading the run's events does read them.
    let probe = DynamicTool::builder("probe", "Says whether its writer has a reader")
        .handler(|_, cx| async move { Ok(json!(cx.writer().is_connected())) })
        .unwrap();
    let server = server_with(Registry::from_iter([probe.into_tool()]), McpConfig::default());
    let runtime = server.runtime().clone();
    let c = McpPair::builder(server).protocol(LEGACY).start().await;
    assert_eq!(c.call("probe", json!({})).await.text(), "false");
    match runtime.call("probe", json!({}), Default::default()).finish().await.outcome {
        tool_core::runtime::Outcome::Done(output) => assert_eq!(output.json.get(), "true"),
        other => panic!("unexpected outcome {}", other.name()),
    }
}

/// A call through which nothing can reach its client (no progress token, no log level, a client
/// that declared no capability a question needs) still has an MCP client that refuses every
/// question as before, and `notifications/cancelled` for its request still cancels it.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_call_nothing_can_reach_the_client_from_still_sees_its_client_and_is_cancelled() {
    /// Reports, when the tool's run is dropped or ends, whether its call was cancelled.
    struct Seen(CancellationToken, tokio::sync::mpsc::UnboundedSender<bool>);
    impl Drop for Seen {
        fn drop(&mut self) {
            let _ = self.1.send(self.0.is_cancelled());
        }
    }
    let (seen_tx, mut seen) = tokio::sync::mpsc::unbounded_channel();
    let (found_tx, mut found) = tokio::sync::mpsc::unbounded_channel();
    let probe = DynamicTool::builder("probe", "Looks at its MCP client, then waits to be cancelled")
        .handler(move |_, cx| {
            let (seen_tx, found_tx) = (seen_tx.clone(), found_tx.clone());
            async move {
                let _seen = Seen(cx.cancellation().clone(), seen_tx);
                let mcp = cx.mcp().expect("a call made over MCP has its client");
                mcp.progress(0.5, None, None);
                mcp.log(LogLevel::Info, json!("nobody asked for logs"));
                let elicited = mcp
                    .elicit("Name?".into(), json!({"type": "object"}))
                    .await
                    .err()
                    .map(|e| e.message().to_owned());
                let sampled = mcp.sample(json!({})).await.err().map(|e| e.message().to_owned());
                let asked = mcp.ask(serde_json::Map::new()).await.map(|a| a.len()).ok();
                let roots = mcp
                    .ask(serde_json::from_value(json!({"r": {"method": "roots/list"}})).unwrap())
                    .await
                    .err()
                    .map(|e| e.message().to_owned());
                let _ = found_tx.send((mcp.supports("elicitation/create"), elicited, sampled, asked, roots));
                cx.cancellation().cancelled().await;
                Ok(json!("cancelled"))
            }
        })
        .unwrap();
    let mut c = Stdio::start(server_with(Registry::from_iter([probe.into_tool()]), McpConfig::default()));
    c.initialize(json!({})).await;
    c.send(&request(1, "tools/call", call_params("probe", json!({})))).await;
    let (supports, elicited, sampled, asked, roots) = tokio::time::timeout(PATIENCE, found.recv())
        .await
        .expect("the call did not start")
        .unwrap();
    assert!(!supports, "a client that declared nothing supports elicitation");
    assert_eq!(
        elicited.as_deref(),
        Some("This MCP client cannot ask its user for input: it did not declare the elicitation capability.")
    );
    assert_eq!(
        sampled.as_deref(),
        Some("This MCP client cannot sample a model: it did not declare the sampling capability.")
    );
    assert_eq!(asked, Some(0), "an empty ask is answered with no answers");
    assert_eq!(
        roots.as_deref(),
        Some("This MCP client cannot list its roots: it did not declare the roots capability.")
    );
    c.send(&json!({"jsonrpc": "2.0", "method": "notifications/cancelled", "params": {"requestId": 1}}))
        .await;
    let cancelled = tokio::time::timeout(PATIENCE, seen.recv())
        .await
        .expect("the cancelled call's tool went on running")
        .unwrap();
    assert!(cancelled, "the tool's run ended without its call being cancelled");
    // Neither the progress nor the log went out, and the cancelled request is not answered.
    assert!(c.try_recv(QUIET).await.is_none(), "a message reached the client");
    c.close().await;
}
