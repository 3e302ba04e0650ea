//! HTTP without sessions (`HttpOptions::stateless`, `json_response`): every request on its
//! own, JSON answers, and what a call that would need the user says at once.

use super::http_client::*;
use super::*;

/// Asks its user for a name mid-call.
#[tool]
async fn ask_name(#[ctx] cx: ToolContext) -> Result<String, ToolError> {
    let mcp = cx.mcp().ok_or_else(|| ToolError::new("no MCP client"))?;
    let form = json!({"type": "object", "properties": {"name": {"type": "string"}}, "required": ["name"]});
    match mcp.elicit("Your name?".into(), form).await? {
        tool_core::context::Elicitation::Accept { content } => Ok(format!("hello {}", content["name"])),
        other => Ok(format!("no name: {other:?}")),
    }
}

/// Why `hold-on` stopped.
#[derive(Serialize, Deserialize, JsonSchema)]
struct Hold {
    why: String,
}

/// What lets `hold-on` go on.
#[derive(Serialize, Deserialize, JsonSchema)]
struct Go {
    go: bool,
}

/// Waits for a person's go-ahead before it finishes
#[tool(suspend = Hold, resume = Go)]
async fn hold_on(#[ctx] cx: ToolContext<RequestContext, Hold, Go>) -> Result<String, ToolError> {
    match cx.resume_data()? {
        Some(Go { go }) => Ok(format!("went on: {go}")),
        None => Err(cx.suspend(Hold {
            why: "needs a go-ahead".into(),
        })),
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn http_stateless_serves_every_request_without_a_session() {
    let server = start_http(server_with(all_tools(), McpConfig::default()), stateless(false)).await;

    let mut r = http(server.addr, "POST", &[], &initialize_body()).await;
    assert_eq!(r.status, 200);
    assert!(r.header("mcp-session-id").is_none(), "a stateless server gave a session id");
    let (init, _) = r.response_to(0).await;
    assert_eq!(result_of(&init)["protocolVersion"], LEGACY);
    let r = sessionless(server.addr, &json!({"jsonrpc": "2.0", "method": "notifications/initialized"})).await;
    assert_eq!(r.status, 202);

    let mut r = sessionless(server.addr, &request(1, "tools/list", json!({}))).await;
    assert_eq!(r.status, 200, "tools/list without a session was refused");
    assert!(r.header("mcp-session-id").is_none());
    let (list, _) = r.response_to(1).await;
    assert!(tool_names(result_of(&list)).contains(&"add".to_owned()), "{list}");

    let mut r = sessionless(server.addr, &request(2, "tools/call", call_params("add", json!({"a": 40, "b": 2})))).await;
    assert_eq!(r.status, 200, "tools/call without a session was refused");
    assert!(r.header("content-type").unwrap_or_default().starts_with("text/event-stream"));
    let (call, _) = r.response_to(2).await;
    assert_eq!(serde_json::from_str::<f64>(text_of(result_of(&call))).unwrap(), 42.0);

    // There is no session to stream to outside a request, or to end.
    let r = http(server.addr, "GET", &[("Accept", "text/event-stream")], "").await;
    assert_eq!(r.status, 405, "a stateless server opened a GET stream");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn http_stateless_json_response_answers_json_and_streams_only_when_needed() {
    let server = start_http(server_with(all_tools(), McpConfig::default()), stateless(true)).await;

    let r = sessionless(server.addr, &request(1, "tools/call", call_params("add", json!({"a": 1, "b": 2})))).await;
    assert_eq!(r.status, 200);
    let content_type = r.header("content-type").unwrap_or_default().to_owned();
    assert!(
        content_type.starts_with("application/json"),
        "a plain call was answered {content_type}"
    );
    let body = r.json().await;
    assert!(is_response_to(&body, 1), "{body}");
    assert_eq!(serde_json::from_str::<f64>(text_of(result_of(&body))).unwrap(), 3.0);

    // A call that reports progress first gets a stream: the progress, then the result.
    let params = json!({"name": "steps", "arguments": {}, "_meta": {"progressToken": "tok-json"}});
    let mut r = sessionless(server.addr, &request(2, "tools/call", params)).await;
    assert_eq!(r.status, 200);
    let content_type = r.header("content-type").unwrap_or_default().to_owned();
    assert!(
        content_type.starts_with("text/event-stream"),
        "a call with progress was answered {content_type}"
    );
    let (result, before) = r.response_to(2).await;
    assert_eq!(text_of(result_of(&result)), "all steps done");
    let progress: Vec<&Value> = before.iter().filter(|m| m["method"] == "notifications/progress").collect();
    assert_eq!(progress.len(), 3, "{before:?}");
    assert_eq!(progress[0]["params"]["progressToken"], "tok-json", "{before:?}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn http_stateless_cannot_ask_the_user_and_says_so_at_once() {
    let registry = Registry::from_iter([transfer::tool(), ask_name::tool(), hold_on::tool()]);
    let server = server_with(registry, McpConfig::default());
    let runtime = server.runtime().clone();
    let server = start_http(server, stateless(false)).await;
    let call = |id: u64, params: Value| async move {
        let mut r = sessionless(server.addr, &request(id, "tools/call", params)).await;
        assert_eq!(r.status, 200);
        let (m, before) = tokio::time::timeout(Duration::from_secs(5), r.response_to(id))
            .await
            .expect("a call needing the user's answer hung without a session");
        assert!(
            before.iter().all(|m| m["method"] != "elicitation/create"),
            "the server asked a client it cannot hear back from: {before:?}"
        );
        result_of(&m).clone()
    };

    // The approval path: the call waits, and the result says why and how to continue it. A
    // client that claims elicitation in `_meta` is not asked either (its answer could not
    // reach this request).
    let elicits = json!({"io.modelcontextprotocol/clientCapabilities": {"elicitation": {}}});
    for (id, amount, meta) in [(1, 771, None), (2, 772, Some(elicits))] {
        let mut params = call_params("transfer", json!({"amount": amount}));
        if let Some(meta) = meta {
            params["_meta"] = meta;
        }
        let result = call(id, params).await;
        assert!(is_error(&result), "{result}");
        let text = text_of(&result).to_owned();
        assert!(text.contains("requires approval"), "{text}");
        assert!(
            text.contains("stateless"),
            "the result does not say why the user was not asked: {text}"
        );
        let waiting = runtime
            .pending()
            .await
            .unwrap()
            .into_iter()
            .find(|p| p.args == json!({"amount": amount}))
            .expect("the call does not wait for approval");
        assert!(
            text.contains(&format!("toolsmith call {} --approve", waiting.tool_call_id)),
            "the command to approve it is missing: {text}"
        );
        assert!(!sent(amount), "the tool ran without approval");
    }

    // A tool that elicits mid-call fails with the reason.
    let result = call(3, call_params("ask-name", json!({}))).await;
    assert!(is_error(&result), "{result}");
    let text = text_of(&result);
    assert!(text.contains("cannot be asked") && text.contains("stateless"), "{text}");

    // A suspended call waits with its payload, and the result says how to resume it.
    let result = call(4, call_params("hold-on", json!({}))).await;
    assert!(!is_error(&result), "a suspension is not a failure: {result}");
    let text = text_of(&result).to_owned();
    let waiting = runtime
        .pending()
        .await
        .unwrap()
        .into_iter()
        .find(|p| p.tool_name == "hold-on")
        .expect("the suspended call does not wait");
    assert_eq!(waiting.kind, PendingKind::Suspended);
    assert!(text.contains("stateless") && text.contains("needs a go-ahead"), "{text}");
    assert!(
        text.contains(&format!("toolsmith resume {} ", waiting.tool_call_id)),
        "the command to resume it is missing: {text}"
    );
    // Resumed out of band, the call finishes.
    let events = runtime
        .resume(&waiting.tool_call_id, json!({"go": true}), ResumeOptions::default())
        .await
        .unwrap()
        .collect()
        .await;
    assert!(
        events
            .iter()
            .any(|e| matches!(&e.raw.kind, RunEventKind::ToolResult { output } if output.value() == "went on: true")),
        "the resumed call did not finish"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn http_json_response_requires_stateless() {
    let options = HttpOptions {
        json_response: true,
        ..HttpOptions::default()
    };
    assert!(options.check().is_err());
    let server = server_with(all_tools(), McpConfig::default());
    let addr: SocketAddr = "127.0.0.1:0".parse().unwrap();
    let served = tokio::time::timeout(
        PATIENCE,
        tool_core::mcp::http::serve(server, addr, options, CancellationToken::new(), |a| {
            panic!("bound {a} for options it should refuse")
        }),
    )
    .await
    .expect("serve did not refuse the options");
    let e = served.expect_err("json_response without stateless was served");
    assert_eq!(e.kind(), std::io::ErrorKind::InvalidInput);
    assert!(e.to_string().contains("requires `stateless`"), "{e}");

    // The command line refuses it as well, and takes the pair.
    let parse = |args: &[&str]| tool_core::cli::Cli::try_parse_args(["toolsmith", "serve"].iter().chain(args));
    let e = parse(&["--http", "127.0.0.1:0", "--json-response"]).expect_err("--json-response alone was accepted");
    assert!(e.to_string().contains("--stateless"), "{e}");
    assert!(parse(&["--http", "127.0.0.1:0", "--stateless", "--json-response"]).is_ok());
    assert!(parse(&["--http", "127.0.0.1:0", "--stateless"]).is_ok());
    assert!(parse(&["--stdio", "--stateless"]).is_err(), "--stateless was accepted with --stdio");
}
