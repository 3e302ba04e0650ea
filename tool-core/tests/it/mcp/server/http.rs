//! The server over Streamable HTTP with sessions: session ids, foreign hosts and origins, the
//! bearer token and the caller it names, body limits, the concurrent-call limit and list changes
//! on the GET stream.

use super::http_client::*;
use super::*;

fn is_uuid_v4(s: &str) -> bool {
    uuid::Uuid::parse_str(s).is_ok_and(|u| u.get_version_num() == 4 && u.get_variant() == uuid::Variant::RFC4122) && s.len() == 36
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn http_sessions_have_random_ids_and_serve_tools() {
    let server = start_http(server_with(all_tools(), McpConfig::default()), HttpOptions::default()).await;
    let a = HttpSession::open(server.addr, None, json!({})).await;
    let b = HttpSession::open(server.addr, None, json!({})).await;
    assert!(is_uuid_v4(&a.id), "not a UUID v4: {}", a.id);
    assert!(is_uuid_v4(&b.id), "not a UUID v4: {}", b.id);
    assert_ne!(a.id, b.id);

    let (list, _) = a.request(1, "tools/list", json!({})).await;
    assert!(tool_names(result_of(&list)).contains(&"add".to_owned()));
    let (r, _) = b.request(1, "tools/call", call_params("add", json!({"a": 20, "b": 22}))).await;
    assert_eq!(serde_json::from_str::<f64>(text_of(result_of(&r))).unwrap(), 42.0);

    // Without the session id, a request is refused; with a made-up one, it is unknown.
    let r = http(
        server.addr,
        "POST",
        &[("MCP-Protocol-Version", LEGACY)],
        &request(2, "tools/list", json!({})).to_string(),
    )
    .await;
    assert_eq!(r.status, 400);
    let r = http(
        server.addr,
        "POST",
        &[
            ("Mcp-Session-Id", "6f1c1f0e-0000-4000-8000-000000000000"),
            ("MCP-Protocol-Version", LEGACY),
        ],
        &request(2, "tools/list", json!({})).to_string(),
    )
    .await;
    assert_eq!(r.status, 404);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn http_refuses_foreign_hosts_and_origins() {
    let server = start_http(server_with(all_tools(), McpConfig::default()), HttpOptions::default()).await;
    let body = initialize_body();

    let r = http(server.addr, "POST", &[("Host", "evil.example.com")], &body).await;
    assert_eq!(r.status, 403, "a foreign Host was accepted");
    let r = http(server.addr, "POST", &[("Host", "evil.example.com:8080")], &body).await;
    assert_eq!(r.status, 403, "a foreign Host with a port was accepted");
    let r = http(server.addr, "POST", &[("Origin", "http://evil.example.com")], &body).await;
    assert_eq!(r.status, 403, "a foreign Origin was accepted");

    // Local names pass.
    let local_host = format!("localhost:{}", server.addr.port());
    let r = http(server.addr, "POST", &[("Host", local_host.as_str())], &body).await;
    assert_eq!(r.status, 200);
    let local_origin = format!("http://localhost:{}", server.addr.port());
    let r = http(server.addr, "POST", &[("Origin", local_origin.as_str())], &body).await;
    assert_eq!(r.status, 200);

    // Names the options allow pass too.
    let options = HttpOptions {
        allowed_hosts: vec!["mcp.example.com".into()],
        allowed_origins: vec!["https://app.example.com".into()],
        ..HttpOptions::default()
    };
    let allowing = start_http(server_with(all_tools(), McpConfig::default()), options).await;
    let r = http(
        allowing.addr,
        "POST",
        &[("Host", "mcp.example.com"), ("Origin", "https://app.example.com")],
        &body,
    )
    .await;
    assert_eq!(r.status, 200);
    let r = http(allowing.addr, "POST", &[("Origin", "http://evil.example.com")], &body).await;
    assert_eq!(r.status, 403);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn http_bearer_token_is_required() {
    let options = HttpOptions {
        auth_token: Some("t0k".into()),
        ..HttpOptions::default()
    };
    let server = start_http(server_with(all_tools(), McpConfig::default()), options).await;
    let body = initialize_body();

    for headers in [vec![], vec![("Authorization", "Bearer wrong")], vec![("Authorization", "t0k")]] {
        let r = http(server.addr, "POST", &headers, &body).await;
        assert_eq!(r.status, 401, "accepted with {headers:?}");
        let challenge = r.header("www-authenticate").unwrap_or_default().to_owned();
        assert!(challenge.starts_with("Bearer"), "no WWW-Authenticate: Bearer with {headers:?}");
        let e = r.json().await;
        assert!(e["error"]["code"].is_i64(), "{e}");
    }
    // The GET stream is guarded too.
    let r = http(server.addr, "GET", &[("Accept", "text/event-stream")], "").await;
    assert_eq!(r.status, 401);

    let session = HttpSession::open(server.addr, Some("t0k"), json!({})).await;
    let (r, _) = session.request(1, "tools/call", call_params("add", json!({"a": 1, "b": 2}))).await;
    assert_eq!(serde_json::from_str::<f64>(text_of(result_of(&r))).unwrap(), 3.0);
}

/// Who is calling, as a tool sees it, and its request context.
#[tool]
async fn caller_seen(#[ctx] cx: ToolContext) -> Value {
    json!({
        "caller": cx.caller().map(|c| json!({"subject": c.subject(), "owner": c.owner(), "scopes": c.scopes()})),
        "context": cx.raw_request_context(),
    })
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_tool_sees_the_static_token_holder_as_its_caller_and_an_open_server_shows_none() {
    let config = || McpConfig {
        context: Some(json!({"region": "eu"})),
        ..McpConfig::default()
    };
    let guarded = HttpOptions {
        auth_token: Some("t0k".into()),
        ..HttpOptions::default()
    };
    let server = start_http(server_with(Registry::from_iter([caller_seen::tool()]), config()), guarded).await;
    let session = HttpSession::open(server.addr, Some("t0k"), json!({})).await;
    let (r, _) = session.request(1, "tools/call", call_params("caller-seen", json!({}))).await;
    let seen: Value = serde_json::from_str(text_of(result_of(&r))).unwrap();
    assert_eq!(
        seen["caller"],
        json!({"subject": null, "owner": "bearer-token", "scopes": []}),
        "{seen}"
    );
    assert_eq!(
        seen["context"],
        json!({"region": "eu"}),
        "the context is the configured one, nothing added"
    );

    let open = start_http(
        server_with(Registry::from_iter([caller_seen::tool()]), config()),
        HttpOptions::default(),
    )
    .await;
    let session = HttpSession::open(open.addr, None, json!({})).await;
    let (r, _) = session.request(1, "tools/call", call_params("caller-seen", json!({}))).await;
    let seen: Value = serde_json::from_str(text_of(result_of(&r))).unwrap();
    assert_eq!(seen, json!({"caller": null, "context": {"region": "eu"}}));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn http_refuses_large_and_malformed_bodies() {
    let options = HttpOptions {
        max_body_bytes: 512,
        ..HttpOptions::default()
    };
    let server = start_http(server_with(all_tools(), McpConfig::default()), options).await;

    let big = request(1, "tools/list", json!({"padding": "x".repeat(2000)})).to_string();
    let r = http(server.addr, "POST", &[], &big).await;
    assert_eq!(r.status, 413);
    let e = r.json().await;
    assert_eq!(e["jsonrpc"], "2.0", "{e}");
    assert!(e["error"]["message"].as_str().unwrap().contains("512"), "{e}");

    let r = http(server.addr, "POST", &[], "{\"jsonrpc\": \"2.0\", \"id\": 1, ").await;
    assert_eq!(r.status, 400);
    assert!(r.header("content-type").unwrap_or_default().starts_with("application/json"));
    let e = r.json().await;
    assert_eq!(e["jsonrpc"], "2.0");
    assert_eq!(e["id"], Value::Null);
    assert_eq!(e["error"]["code"], -32700, "{e}");

    for (body, id) in [
        (r#"{"jsonrpc":"2.0","id":4,"method":"x","params":"bad"}"#, json!(4)),
        (r#"{"hello":1}"#, Value::Null),
        (r#"[{"jsonrpc":"2.0","id":5,"method":"ping"}]"#, Value::Null),
        (r#"{"jsonrpc":"2.0","id":{"a":1},"method":"ping"}"#, Value::Null),
    ] {
        let r = http(server.addr, "POST", &[], body).await;
        assert_eq!(r.status, 400, "{body}");
        let e = r.json().await;
        assert_eq!(e["error"]["code"], -32600, "{body} -> {e}");
        assert_eq!(e["id"], id, "{body} -> {e}");
    }

    // A body under the limit still works.
    let r = http(server.addr, "POST", &[], &initialize_body()).await;
    assert_eq!(r.status, 200);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn http_concurrent_call_limit_refuses_a_second_call() {
    let (slow, mut started, gate) = gated_tool("slow");
    let config = McpConfig {
        max_concurrent_calls: 1,
        ..McpConfig::default()
    };
    let server = start_http(server_with(Registry::from_iter([slow.into_tool()]), config), HttpOptions::default()).await;
    let session = Arc::new(HttpSession::open(server.addr, None, json!({})).await);
    let other = Arc::new(HttpSession::open(server.addr, None, json!({})).await);
    let call_in = |s: &Arc<HttpSession>, id: u64| {
        let s = s.clone();
        tokio::spawn(async move { s.request(id, "tools/call", call_params("slow", json!({}))).await })
    };

    let first = call_in(&session, 1);
    tokio::time::timeout(PATIENCE, started.recv())
        .await
        .expect("the first call did not start");

    // The same session, while its call runs: refused at once, and the tool never starts.
    let (r, _) = session.request(2, "tools/call", call_params("slow", json!({}))).await;
    let refused = result_of(&r);
    assert!(is_error(refused), "a second call ran past the limit: {refused}");
    let text = text_of(refused);
    assert!(text.contains("limit is 1"), "{text}");
    assert!(started.try_recv().is_err(), "the refused call started the tool");

    // The limit is per session: another session's call runs meanwhile.
    let second = call_in(&other, 1);
    tokio::time::timeout(PATIENCE, started.recv())
        .await
        .expect("another session's call did not start");

    gate.add_permits(2);
    for call in [first, second] {
        let (r, _) = tokio::time::timeout(PATIENCE, call).await.unwrap().unwrap();
        let done = result_of(&r);
        assert!(!is_error(done), "{done}");
        assert_eq!(text_of(done), "finished");
    }

    // Once the call ended, the session may call again.
    let third = call_in(&session, 3);
    tokio::time::timeout(PATIENCE, started.recv())
        .await
        .expect("a call after the first one ended did not start");
    gate.add_permits(1);
    let (r, _) = tokio::time::timeout(PATIENCE, third).await.unwrap().unwrap();
    assert_eq!(text_of(result_of(&r)), "finished");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn http_list_changed_arrives_on_the_get_stream() {
    let registry = Arc::new(all_tools());
    let server = start_http(
        McpServer::new(Runtime::new(registry.clone()), McpConfig::default()),
        HttpOptions::default(),
    )
    .await;
    let session = HttpSession::open(server.addr, None, json!({})).await;
    let mut stream = session.listen().await;
    assert!(stream.header("content-type").unwrap_or_default().starts_with("text/event-stream"));

    let mut heard = None;
    for n in 0..10 {
        registry.insert(plain_tool(&format!("http_added_{n}"))).unwrap();
        if let Some(m) = stream.try_next_message(Duration::from_millis(500)).await {
            heard = Some(m);
            break;
        }
    }
    let m = heard.expect("no notifications/tools/list_changed on the GET stream");
    assert_eq!(m["method"], "notifications/tools/list_changed", "{m}");
}
