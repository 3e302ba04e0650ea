//! Repeated keys (I-JSON, RFC 7493): refused wherever arguments arrive as text (the registry,
//! streamed calls, the MCP server over HTTP and stdio), naming the key and its path; a tool's
//! own output is still delivered.

use super::*;

#[tokio::test]
async fn a_repeated_key_in_argument_text_is_refused_naming_the_key_and_its_path() {
    let registry = registry();
    let e = refused(&registry, "hy-add", r#"{"a": 1, "b": 2, "a": 40}"#).await;
    assert_eq!(e.kind(), ErrorKind::InvalidInput, "{e}");
    assert!(e.message().contains("`a`") && e.message().contains("top-level object"), "{e}");
    assert!(e.message().contains("RFC 7493"), "{e}");
    assert_eq!(e.issues()[0].path, "/a");

    let nested = r#"{"name": "n", "to": {"city": "Oslo", "country": "NO", "city": "Rome"}, "stops": []}"#;
    let e = refused(&registry, "hy-trip", nested).await;
    assert!(e.message().contains("`city`") && e.message().contains("`/to`"), "{e}");
    assert_eq!(e.issues()[0].path, "/to/city");

    let in_array = r#"{"name": "n", "to": {"city": "Oslo"}, "stops": [{"city": "A"}, {"city": "B", "city": "C"}]}"#;
    let e = refused(&registry, "hy-trip", in_array).await;
    assert!(e.message().contains("`/stops/1`"), "{e}");

    // A large object (past the one-by-one comparison) is checked too.
    let extras: Vec<String> = (0..40).map(|i| format!(r#""x{i}": {i}"#)).collect();
    let big = format!(
        r#"{{"name": "n", "to": {{"city": "Oslo"}}, "stops": [], {}, "x17": 0}}"#,
        extras.join(", ")
    );
    let e = refused(&registry, "hy-trip", &big).await;
    assert!(e.message().contains("`x17`"), "{e}");

    // The same arguments without the repeat are fine, as text and as a value.
    let ok = registry
        .call("hy-add", r#"{"a": 1, "b": 2}"#, CallOptions::default())
        .await
        .unwrap();
    assert_eq!(ok.value(), json!(3.0));
    let ok = registry
        .call(
            "hy-trip",
            r#"{"name": "n", "to": {"city": "Oslo"}, "stops": [{"city": "A"}]}"#,
            CallOptions::default(),
        )
        .await
        .unwrap();
    assert_eq!(ok.value(), json!("n to Oslo via [A]"));
}

#[tokio::test]
async fn an_object_sent_as_a_string_is_not_repaired_when_it_repeats_a_key() {
    let registry = registry();
    // Repaired as usual without the repeat...
    let fine = r#"{"name": "n", "to": "{\"city\": \"Oslo\"}", "stops": []}"#;
    let out = registry.call("hy-trip", fine, CallOptions::default()).await.unwrap();
    assert_eq!(out.value(), json!("n to Oslo via []"));
    // ...but a repeat inside it is not resolved by picking one.
    let repeated = r#"{"name": "n", "to": "{\"city\": \"Oslo\", \"city\": \"Rome\"}", "stops": []}"#;
    let e = refused(&registry, "hy-trip", repeated).await;
    assert_eq!(e.kind(), ErrorKind::InvalidInput, "{e}");
    assert!(!e.message().contains("Rome via"), "{e}");
}

#[tokio::test]
async fn streamed_calls_with_a_repeated_key_fail_with_the_key_named() {
    let runtime = Runtime::new(registry());
    let sse = ScriptedStream::anthropic().tool_call_pieces("toolu_1", "hy-add", &[r#"{"a": 1, "b": 2,"#, r#" "a": 5}"#]);
    let (mut run, events) = runtime.stream(Dialect::Anthropic, CallOptions::default());
    run.push(&sse.sse_bytes()).unwrap();
    run.finish().unwrap();
    let run = tokio::time::timeout(PATIENCE, events.finish()).await.expect("the run ends");
    match run.outcome {
        Outcome::Failed(e) => assert!(e.message().contains("`a`") && e.message().contains("RFC 7493"), "{e}"),
        other => panic!("{other:?}"),
    }

    // A server that puts the whole input in `content_block_start` (no deltas): its text is
    // kept as sent, so the repeat is still seen.
    let start = r#"{"type":"content_block_start","index":0,"content_block":{"type":"tool_use","id":"toolu_2","name":"hy-add","input":{"a":1,"b":2,"b":9}}}"#;
    let sse = format!(
        "event: content_block_start\ndata: {start}\n\nevent: content_block_stop\ndata: {}\n\nevent: message_stop\ndata: {{\"type\":\"message_stop\"}}\n\n",
        json!({"type": "content_block_stop", "index": 0})
    );
    let (mut run, events) = runtime.stream(Dialect::Anthropic, CallOptions::default());
    run.push(sse.as_bytes()).unwrap();
    run.finish().unwrap();
    let run = tokio::time::timeout(PATIENCE, events.finish()).await.expect("the run ends");
    match run.outcome {
        Outcome::Failed(e) => assert!(e.message().contains("`b`"), "{e}"),
        other => panic!("{other:?}"),
    }
    // The same start input without a repeat runs.
    let sse = sse.replace(r#","b":9"#, "");
    let (mut run, events) = runtime.stream(Dialect::Anthropic, CallOptions::default());
    run.push(sse.as_bytes()).unwrap();
    run.finish().unwrap();
    let run = tokio::time::timeout(PATIENCE, events.finish()).await.expect("the run ends");
    assert!(
        matches!(&run.outcome, Outcome::Done(out) if out.value() == json!(3.0)),
        "{:?}",
        run.outcome
    );
}

/// A running HTTP server, shut down on drop.
async fn start_http() -> Served {
    http_server::serve(
        McpServer::new(Runtime::new(registry()), McpConfig::default()),
        HttpOptions::default(),
    )
    .await
}

/// One POST to `/mcp` on its own connection: the status and the body.
async fn post(addr: SocketAddr, body: &str) -> (u16, String) {
    let mut stream = tokio::net::TcpStream::connect(addr).await.unwrap();
    let request = format!(
        "POST /mcp HTTP/1.1\r\nHost: {addr}\r\nAccept: application/json, text/event-stream\r\nContent-Type: application/json\r\nContent-Length: {}\r\nConnection: close\r\n\r\n{body}",
        body.len()
    );
    stream.write_all(request.as_bytes()).await.unwrap();
    let mut response = String::new();
    tokio::time::timeout(PATIENCE, stream.read_to_string(&mut response))
        .await
        .expect("the server answers")
        .unwrap();
    let status = response.split_whitespace().nth(1).and_then(|s| s.parse().ok()).unwrap_or(0);
    let body = response.split_once("\r\n\r\n").map(|(_, b)| b.to_owned()).unwrap_or_default();
    (status, body)
}

#[tokio::test]
async fn the_mcp_http_body_is_refused_when_it_repeats_a_key() {
    let server = start_http().await;
    let body =
        r#"{"jsonrpc": "2.0", "id": 41, "method": "tools/call", "params": {"name": "hy-add", "arguments": {"a": 1, "b": 2, "a": 3}}}"#;
    let (status, answer) = post(server.addr, body).await;
    assert_eq!(status, 400, "{answer}");
    let answer: Value = serde_json::from_str(&answer).unwrap();
    assert_eq!(answer["id"], 41, "{answer}");
    assert_eq!(answer["error"]["code"], -32600, "{answer}");
    let message = answer["error"]["message"].as_str().unwrap();
    assert!(message.contains("`a`") && message.contains("`/params/arguments`"), "{message}");
    // A repeat anywhere in the message counts (here, the method).
    let (status, answer) = post(
        server.addr,
        r#"{"jsonrpc": "2.0", "id": 1, "method": "ping", "method": "initialize"}"#,
    )
    .await;
    assert_eq!(status, 400, "{answer}");
    assert!(answer.contains("`method`"), "{answer}");
    // Text that is not JSON is still a parse error.
    let (status, answer) = post(server.addr, r#"{"jsonrpc": "#).await;
    assert_eq!(status, 400);
    assert!(answer.contains("-32700"), "{answer}");
    // A well-formed initialize still gets through.
    let init = json!({"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": {"protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": {"name": "hygiene", "version": "1"}}});
    let (status, answer) = post(server.addr, &init.to_string()).await;
    assert_eq!(status, 200, "{answer}");
    assert!(answer.contains("serverInfo"), "{answer}");
}

#[tokio::test]
async fn the_mcp_stdio_line_is_refused_when_it_repeats_a_key_and_the_session_goes_on() {
    let server = McpServer::new(Runtime::new(registry()), McpConfig::default());
    let (mut to_server, server_in) = tokio::io::duplex(1 << 16);
    let (server_out, from_server) = tokio::io::duplex(1 << 16);
    let task = tokio::spawn(tool_core::mcp::stdio::serve_io(server, server_in, server_out));
    let mut lines = BufReader::new(from_server).lines();
    let send = |v: String| {
        let mut line = v.into_bytes();
        line.push(b'\n');
        line
    };
    let init = json!({"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": {"protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": {"name": "hygiene", "version": "1"}}});
    to_server.write_all(&send(init.to_string())).await.unwrap();
    let first = tokio::time::timeout(PATIENCE, lines.next_line()).await.unwrap().unwrap().unwrap();
    assert!(first.contains("serverInfo"), "{first}");
    let initialized = json!({"jsonrpc": "2.0", "method": "notifications/initialized"});
    to_server.write_all(&send(initialized.to_string())).await.unwrap();

    let repeated =
        r#"{"jsonrpc": "2.0", "id": 5, "method": "tools/call", "params": {"name": "hy-add", "arguments": {"a": 1, "b": 2, "b": 3}}}"#;
    to_server.write_all(&send(repeated.to_owned())).await.unwrap();
    let line = tokio::time::timeout(PATIENCE, lines.next_line()).await.unwrap().unwrap().unwrap();
    let answer: Value = serde_json::from_str(&line).unwrap();
    assert_eq!(
        (answer["id"].clone(), answer["error"]["code"].clone()),
        (json!(5), json!(-32600)),
        "{answer}"
    );
    let message = answer["error"]["message"].as_str().unwrap();
    assert!(message.contains("`b`") && message.contains("`/params/arguments`"), "{message}");

    let fine = json!({"jsonrpc": "2.0", "id": 6, "method": "tools/call", "params": {"name": "hy-add", "arguments": {"a": 1, "b": 2}}});
    to_server.write_all(&send(fine.to_string())).await.unwrap();
    let line = tokio::time::timeout(PATIENCE, lines.next_line()).await.unwrap().unwrap().unwrap();
    let answer: Value = serde_json::from_str(&line).unwrap();
    assert_eq!(answer["id"], 6, "{answer}");
    assert_eq!(answer["result"]["content"][0]["text"], "3.0", "{answer}");
    drop(to_server);
    tokio::time::timeout(PATIENCE, task)
        .await
        .expect("the server ends")
        .unwrap()
        .unwrap();
}

#[tokio::test]
async fn a_tools_own_output_that_repeats_a_key_is_still_delivered() {
    // Repeated keys are refused in what arrives from outside; an output is the tool's own
    // serialisation, validated as `serde_json` reads it (as before).
    let out = registry().call("hy-tally", "{}", CallOptions::default()).await.unwrap();
    assert_eq!(out.json.get(), r#"{"total":1,"total":2}"#);
}
