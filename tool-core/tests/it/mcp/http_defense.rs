//! The MCP server defends itself: real servers on 127.0.0.1 spoken to over real TCP (HTTP/1.1
//! written by hand, so a test can stall mid-request), and the stdio server over in-memory
//! pipes. Slow heads and bodies, idle connections, a flood past the connection cap, the session
//! cap, duplicate `Host`/`Origin`, invalid `initialize` params, and a stdio line far over the
//! limit. Every wait is bounded ([`PATIENCE`] for what must come).

use crate::support::http_server;
use http_server::Served;
use std::net::SocketAddr;
use std::time::Duration;

use serde_json::{Value, json};
use tokio::io::{AsyncBufReadExt, AsyncReadExt, AsyncWriteExt, BufReader};
use tokio::net::TcpStream;
use tool_core::mcp::http::{HttpLimits, HttpOptions};
use tool_core::mcp::{McpConfig, McpServer};
use tool_core::prelude::*;
use tool_core::runtime::Runtime;

/// How long a test waits for what must come (a response, a close).
const PATIENCE: Duration = Duration::from_secs(10);
const LEGACY: &str = "2025-06-18";

/// Repeats a text
#[tool]
async fn echo(
    /// The text
    text: String,
) -> String {
    text
}

fn server() -> McpServer {
    McpServer::new(Runtime::new(Registry::from_iter([echo::tool()])), McpConfig::default())
}

async fn start(limits: HttpLimits, configure: impl FnOnce(&mut HttpOptions)) -> Served {
    let mut options = HttpOptions {
        limits,
        ..HttpOptions::default()
    };
    configure(&mut options);
    http_server::serve(server(), options).await
}

/// Generous limits, so that only the one a test lowers acts.
fn patient() -> HttpLimits {
    HttpLimits {
        header_read_timeout: Duration::from_secs(60),
        body_read_timeout: Duration::from_secs(60),
        idle_timeout: Duration::from_secs(60),
        max_connections: 512,
        max_sessions: 64,
        session_idle_timeout: Duration::from_secs(300),
        per_caller: Default::default(),
    }
}

fn initialize(id: u64) -> String {
    json!({
        "jsonrpc": "2.0", "id": id, "method": "initialize",
        "params": {"protocolVersion": LEGACY, "capabilities": {}, "clientInfo": {"name": "defense-test", "version": "1"}}
    })
    .to_string()
}

/// A POST of `body` to `/mcp` with the usual headers plus `extra` (each a whole header line).
fn post(addr: SocketAddr, body: &str, extra: &[String], close: bool) -> String {
    let mut head = format!(
        "POST /mcp HTTP/1.1\r\nHost: {addr}\r\nAccept: application/json, text/event-stream\r\nContent-Type: application/json\r\nContent-Length: {}\r\n",
        body.len()
    );
    for line in extra {
        head.push_str(line);
        head.push_str("\r\n");
    }
    if close {
        head.push_str("Connection: close\r\n");
    }
    format!("{head}\r\n{body}")
}

/// A response's status, headers (names in lower case) and, when it has a `Content-Length`,
/// its body.
#[derive(Debug)]
struct Answer {
    status: u16,
    headers: Vec<(String, String)>,
    body: Option<String>,
}

impl Answer {
    fn header(&self, name: &str) -> Option<&str> {
        self.headers.iter().find(|(k, _)| k == name).map(|(_, v)| v.as_str())
    }

    fn json(&self) -> Value {
        let body = self.body.as_deref().unwrap_or_else(|| panic!("no sized body: {self:?}"));
        serde_json::from_str(body).unwrap_or_else(|e| panic!("not JSON ({e}): {body}"))
    }

    /// The JSON-RPC error of the body: its code and message.
    fn rpc_error(&self) -> (i64, String) {
        let v = self.json();
        assert_eq!(v["jsonrpc"], "2.0", "{v}");
        let code = v["error"]["code"].as_i64().unwrap_or_else(|| panic!("no error code: {v}"));
        (code, v["error"]["message"].as_str().unwrap_or_default().to_owned())
    }
}

/// Reads one response head (and a sized body) from `reader`.
async fn read_answer(reader: &mut BufReader<TcpStream>) -> Answer {
    let read = async {
        let mut line = String::new();
        reader.read_line(&mut line).await.unwrap();
        let status = line
            .split_whitespace()
            .nth(1)
            .and_then(|s| s.parse().ok())
            .unwrap_or_else(|| panic!("not a status line: {line:?}"));
        let mut headers = Vec::new();
        loop {
            let mut line = String::new();
            reader.read_line(&mut line).await.unwrap();
            let line = line.trim_end();
            if line.is_empty() {
                break;
            }
            let (k, v) = line.split_once(':').unwrap();
            headers.push((k.trim().to_ascii_lowercase(), v.trim().to_owned()));
        }
        let length = headers
            .iter()
            .find(|(k, _)| k == "content-length")
            .map(|(_, v)| v.parse::<usize>().unwrap());
        let body = match length {
            Some(n) => {
                let mut buf = vec![0; n];
                reader.read_exact(&mut buf).await.unwrap();
                Some(String::from_utf8(buf).unwrap())
            }
            None => None,
        };
        Answer { status, headers, body }
    };
    tokio::time::timeout(PATIENCE, read).await.expect("no answer in time")
}

/// Sends `raw` on a new connection and reads the answer.
async fn exchange(addr: SocketAddr, raw: &str) -> Answer {
    let mut tcp = TcpStream::connect(addr).await.unwrap();
    tcp.write_all(raw.as_bytes()).await.unwrap();
    read_answer(&mut BufReader::new(tcp)).await
}

/// Whether the server closes `tcp` within [`PATIENCE`] (whatever it sends first).
async fn closed_by_server(tcp: &mut TcpStream) -> bool {
    let mut buf = [0u8; 4096];
    let read_to_end = async {
        loop {
            match tcp.read(&mut buf).await {
                Ok(0) | Err(_) => return,
                Ok(_) => {}
            }
        }
    };
    tokio::time::timeout(PATIENCE, read_to_end).await.is_ok()
}

/// A normal request is answered: an `initialize` gets 200 and a session.
async fn answers_normally(addr: SocketAddr) {
    let a = exchange(addr, &post(addr, &initialize(1), &[], true)).await;
    assert_eq!(a.status, 200, "a normal request was not served: {a:?}");
    assert!(a.header("mcp-session-id").is_some(), "{a:?}");
}

// ---------------------------------------------------------------------------------------------
// Connections

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn connections_stalled_in_their_head_are_closed_and_others_are_served() {
    let limits = HttpLimits {
        header_read_timeout: Duration::from_secs(1),
        ..patient()
    };
    let server = start(limits, |_| {}).await;
    let mut stalled = Vec::new();
    for _ in 0..100 {
        let mut tcp = TcpStream::connect(server.addr).await.unwrap();
        tcp.write_all(b"POST /mcp HT").await.unwrap();
        stalled.push(tcp);
    }
    // While they stall, a normal request is served.
    answers_normally(server.addr).await;
    for (i, tcp) in stalled.iter_mut().enumerate() {
        assert!(closed_by_server(tcp).await, "stalled connection {i} was not closed");
    }
    answers_normally(server.addr).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn idle_connections_are_closed_but_open_streams_are_not() {
    let limits = HttpLimits {
        idle_timeout: Duration::from_secs(1),
        ..patient()
    };
    let server = start(limits, |_| {}).await;
    // A connection that never sends anything.
    let mut silent = TcpStream::connect(server.addr).await.unwrap();
    assert!(closed_by_server(&mut silent).await, "a silent connection was kept open");

    // A kept-alive connection after its response.
    let tcp = TcpStream::connect(server.addr).await.unwrap();
    let mut reader = BufReader::new(tcp);
    reader
        .get_mut()
        .write_all(post(server.addr, "{not json", &[], false).as_bytes())
        .await
        .unwrap();
    let a = read_answer(&mut reader).await;
    assert_eq!(a.status, 400);
    assert_ne!(a.header("connection"), Some("close"), "the connection should be kept alive");
    assert!(
        closed_by_server(reader.get_mut()).await,
        "an idle kept-alive connection was kept open"
    );

    // A GET stream is a request in flight: open past the idle timeout.
    let init = exchange(server.addr, &post(server.addr, &initialize(1), &[], true)).await;
    let session = init.header("mcp-session-id").unwrap().to_owned();
    let mut stream = TcpStream::connect(server.addr).await.unwrap();
    let get = format!(
        "GET /mcp HTTP/1.1\r\nHost: {}\r\nAccept: text/event-stream\r\nMcp-Session-Id: {session}\r\nMCP-Protocol-Version: {LEGACY}\r\n\r\n",
        server.addr
    );
    stream.write_all(get.as_bytes()).await.unwrap();
    let mut reader = BufReader::new(stream);
    let a = read_answer(&mut reader).await;
    assert_eq!(a.status, 200, "{a:?}");
    let mut buf = [0u8; 1024];
    let still_open = tokio::time::timeout(Duration::from_secs(3), async {
        loop {
            match reader.read(&mut buf).await {
                Ok(0) | Err(_) => return,
                Ok(_) => {}
            }
        }
    })
    .await;
    assert!(still_open.is_err(), "an open SSE stream was closed as idle");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_body_that_does_not_arrive_in_time_is_answered_408() {
    let limits = HttpLimits {
        body_read_timeout: Duration::from_secs(1),
        ..patient()
    };
    let server = start(limits, |_| {}).await;
    let mut tcp = TcpStream::connect(server.addr).await.unwrap();
    let head = format!(
        "POST /mcp HTTP/1.1\r\nHost: {}\r\nAccept: application/json, text/event-stream\r\nContent-Type: application/json\r\nContent-Length: 100\r\n\r\n{{\"jsonrpc\"",
        server.addr
    );
    tcp.write_all(head.as_bytes()).await.unwrap();
    let mut reader = BufReader::new(tcp);
    let a = read_answer(&mut reader).await;
    assert_eq!(a.status, 408, "{a:?}");
    let (code, message) = a.rpc_error();
    assert_eq!(code, -32600);
    assert!(message.contains("did not arrive"), "{message}");
    assert!(closed_by_server(reader.get_mut()).await, "the connection stayed open after a 408");
    answers_normally(server.addr).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_flood_past_the_connection_cap_is_refused_503_and_service_resumes() {
    let limits = HttpLimits {
        max_connections: 8,
        ..patient()
    };
    let server = start(limits, |_| {}).await;
    let mut held = Vec::new();
    for _ in 0..8 {
        held.push(TcpStream::connect(server.addr).await.unwrap());
    }
    // The held connections are served (a request on one is answered) ...
    let mut first = BufReader::new(held.remove(0));
    first
        .get_mut()
        .write_all(post(server.addr, &initialize(1), &[], false).as_bytes())
        .await
        .unwrap();
    assert_eq!(read_answer(&mut first).await.status, 200);
    // ... and every one past the cap is refused clearly.
    for i in 0..20 {
        let a = exchange(server.addr, &post(server.addr, &initialize(2), &[], false)).await;
        assert_eq!(a.status, 503, "connection {i} past the cap: {a:?}");
        assert!(a.header("retry-after").is_some(), "{a:?}");
        let (code, message) = a.rpc_error();
        assert_eq!(code, -32000);
        assert!(message.contains("limit of 8 connections"), "{message}");
    }
    drop(first);
    drop(held);
    // Once they are closed, requests are served again.
    let served = async {
        loop {
            let a = exchange(server.addr, &post(server.addr, &initialize(3), &[], true)).await;
            if a.status == 200 {
                return;
            }
            assert_eq!(a.status, 503, "{a:?}");
            tokio::time::sleep(Duration::from_millis(50)).await;
        }
    };
    tokio::time::timeout(PATIENCE, served)
        .await
        .expect("requests were not served again after the flood");
}

// ---------------------------------------------------------------------------------------------
// Sessions

async fn open_session(addr: SocketAddr, id: u64) -> Answer {
    exchange(addr, &post(addr, &initialize(id), &[], true)).await
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_session_cap_refuses_the_next_initialize_until_one_is_deleted() {
    let limits = HttpLimits {
        max_sessions: 2,
        ..patient()
    };
    let server = start(limits, |_| {}).await;
    let a = open_session(server.addr, 1).await;
    let b = open_session(server.addr, 2).await;
    assert_eq!((a.status, b.status), (200, 200));
    let first = a.header("mcp-session-id").unwrap().to_owned();

    let refused = open_session(server.addr, 3).await;
    assert_eq!(refused.status, 503, "{refused:?}");
    let (code, message) = refused.rpc_error();
    assert_eq!(code, -32000);
    assert!(message.contains("limit of 2 live sessions"), "{message}");
    assert_eq!(refused.json()["id"], 3, "the error answers the request's id");

    // Requests in the live sessions are still served.
    let ping = json!({"jsonrpc": "2.0", "id": 4, "method": "ping"}).to_string();
    let session_headers = [format!("Mcp-Session-Id: {first}"), format!("MCP-Protocol-Version: {LEGACY}")];
    let r = exchange(server.addr, &post(server.addr, &ping, &session_headers, true)).await;
    assert_eq!(r.status, 200, "{r:?}");

    let delete = format!(
        "DELETE /mcp HTTP/1.1\r\nHost: {}\r\nMcp-Session-Id: {first}\r\nMCP-Protocol-Version: {LEGACY}\r\nConnection: close\r\n\r\n",
        server.addr
    );
    let d = exchange(server.addr, &delete).await;
    assert!(d.status < 300, "DELETE failed: {d:?}");
    let again = open_session(server.addr, 5).await;
    assert_eq!(again.status, 200, "the deleted session's slot was not freed: {again:?}");
    assert_eq!(open_session(server.addr, 6).await.status, 503, "the cap holds again");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_expired_session_frees_its_slot() {
    let limits = HttpLimits {
        max_sessions: 1,
        session_idle_timeout: Duration::from_millis(500),
        ..patient()
    };
    let server = start(limits, |_| {}).await;
    assert_eq!(open_session(server.addr, 1).await.status, 200);
    assert_eq!(open_session(server.addr, 2).await.status, 503);
    let freed = async {
        loop {
            let a = open_session(server.addr, 3).await;
            if a.status == 200 {
                return;
            }
            assert_eq!(a.status, 503, "{a:?}");
            tokio::time::sleep(Duration::from_millis(100)).await;
        }
    };
    tokio::time::timeout(PATIENCE, freed)
        .await
        .expect("the expired session's slot was never freed");
}

// ---------------------------------------------------------------------------------------------
// Requests

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn duplicate_host_or_origin_headers_are_refused_before_anything_else() {
    let server = start(patient(), |o| o.auth_token = Some("t0k".into())).await;
    let addr = server.addr;
    let auth = "Authorization: Bearer t0k".to_owned();
    let cases = [
        ("host", vec![format!("Host: {addr}"), auth.clone()]),
        ("host", vec![format!("Host: {addr}")]),
        (
            "origin",
            vec![
                format!("Origin: http://localhost:{}", addr.port()),
                "Origin: http://evil.example.com".into(),
                auth.clone(),
            ],
        ),
        ("origin", vec!["Origin: http://localhost".into(), "Origin: http://localhost".into()]),
    ];
    for (name, extra) in cases {
        // `post` sends one Host already.
        let a = exchange(addr, &post(addr, &initialize(1), &extra, true)).await;
        assert_eq!(a.status, 400, "{extra:?}: {a:?}");
        let (code, message) = a.rpc_error();
        assert_eq!(code, -32600);
        assert!(message.contains(&format!("`{name}` header appears more than once")), "{message}");
    }
    // One of each, with the token, passes.
    let one = [format!("Origin: http://localhost:{}", addr.port()), auth.clone()];
    assert_eq!(exchange(addr, &post(addr, &initialize(1), &one, true)).await.status, 200);
    let portless = ["Origin: http://localhost".to_owned(), auth];
    assert_eq!(exchange(addr, &post(addr, &initialize(1), &portless, true)).await.status, 200);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn invalid_initialize_params_are_invalid_params() {
    let server = start(patient(), |_| {}).await;
    let addr = server.addr;
    let bad = [
        (
            json!({"capabilities": {}, "clientInfo": {"name": "x", "version": "1"}}),
            "protocolVersion",
        ),
        (
            json!({"protocolVersion": 7, "capabilities": {}, "clientInfo": {"name": "x", "version": "1"}}),
            "string",
        ),
        (json!({"protocolVersion": LEGACY, "capabilities": {}}), "clientInfo"),
        (
            json!({"protocolVersion": LEGACY, "capabilities": [], "clientInfo": {"name": "x", "version": "1"}}),
            "capabilities",
        ),
    ];
    for (i, (params, names)) in bad.into_iter().enumerate() {
        let body = json!({"jsonrpc": "2.0", "id": 40 + i, "method": "initialize", "params": params}).to_string();
        let a = exchange(addr, &post(addr, &body, &[], true)).await;
        assert_eq!(a.status, 400, "{params}: {a:?}");
        let (code, message) = a.rpc_error();
        assert_eq!(code, -32602, "{message}");
        assert!(message.contains(names), "{params}: {message}");
        assert_eq!(a.json()["id"], json!(40 + i));
    }
    let none = json!({"jsonrpc": "2.0", "id": 9, "method": "initialize"}).to_string();
    assert_eq!(exchange(addr, &post(addr, &none, &[], true)).await.rpc_error().0, -32602);
    answers_normally(addr).await;
}

/// [`tool_core::mcp::http::router`] mounted in an application's own axum server.
async fn mounted(options: HttpOptions) -> (SocketAddr, tokio::task::JoinHandle<()>) {
    let app = tool_core::mcp::http::router(server(), &options);
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap();
    let task = tokio::spawn(async move {
        axum::serve(listener, app).await.unwrap();
    });
    (addr, task)
}

/// What a server answers to requests that probe every refusal of the guard, a call, and the
/// paths beside `/mcp`: each as (status, JSON-RPC error code or result text).
async fn probe(addr: SocketAddr) -> Vec<(u16, Value)> {
    let mut answers = Vec::new();
    let not_json = "{\"jsonrpc\": \"2.0\", \"id\": 1, ";
    let repeated = r#"{"jsonrpc": "2.0", "id": 1, "id": 2, "method": "ping"}"#;
    let no_method = json!({"jsonrpc": "2.0", "id": 3}).to_string();
    let bad_params = json!({"jsonrpc": "2.0", "id": 4, "method": "initialize", "params": {"capabilities": {}}}).to_string();
    for body in [not_json, repeated, &no_method, &bad_params] {
        let a = exchange(addr, &post(addr, body, &[], true)).await;
        answers.push((a.status, json!(a.rpc_error().0)));
    }
    let twice = [format!("Host: {addr}")];
    let a = exchange(addr, &post(addr, &initialize(5), &twice, true)).await;
    answers.push((a.status, json!(a.rpc_error().0)));
    let a = exchange(addr, &post(addr, &initialize(6), &[], true)).await;
    answers.push((a.status, json!(a.header("mcp-session-id").is_some())));
    let session = format!("Mcp-Session-Id: {}", a.header("mcp-session-id").expect("a session"));
    let protocol = format!("Mcp-Protocol-Version: {LEGACY}");
    let initialized = json!({"jsonrpc": "2.0", "method": "notifications/initialized"}).to_string();
    let a = exchange(addr, &post(addr, &initialized, &[session.clone(), protocol.clone()], true)).await;
    answers.push((a.status, Value::Null));
    let call = json!({"jsonrpc": "2.0", "id": 7, "method": "tools/call", "params": {"name": "echo", "arguments": {"text": "both ways"}}});
    let raw = post(addr, &call.to_string(), &[session, protocol], true);
    let mut tcp = TcpStream::connect(addr).await.unwrap();
    tcp.write_all(raw.as_bytes()).await.unwrap();
    let mut text = String::new();
    let _ = tokio::time::timeout(PATIENCE, tcp.read_to_string(&mut text)).await;
    let status = text.split_whitespace().nth(1).and_then(|s| s.parse().ok()).unwrap_or(0);
    answers.push((status, json!(text.contains("both ways"))));
    for path in ["/healthz", "/mcp/elsewhere", "/nothing"] {
        let raw = format!("GET {path} HTTP/1.1\r\nHost: {addr}\r\nConnection: close\r\n\r\n");
        let mut tcp = TcpStream::connect(addr).await.unwrap();
        tcp.write_all(raw.as_bytes()).await.unwrap();
        let mut text = String::new();
        let _ = tokio::time::timeout(PATIENCE, tcp.read_to_string(&mut text)).await;
        let status = text.split_whitespace().nth(1).and_then(|s| s.parse().ok()).unwrap_or(0);
        answers.push((status, json!(path)));
    }
    answers
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_router_mounted_by_an_application_guards_as_serve_does() {
    // `serve` answers `/mcp` by calling the guard and rmcp's service directly; `router` puts
    // the same guard in front of the same service as a layer. Both must answer alike.
    let served = start(patient(), |_| {}).await;
    let direct = probe(served.addr).await;
    let expected: Vec<(u16, Value)> = vec![
        (400, json!(-32700)),
        (400, json!(-32600)),
        (400, json!(-32600)),
        (400, json!(-32602)),
        (400, json!(-32600)),
        (200, json!(true)),
        (202, Value::Null),
        (200, json!(true)),
        (200, json!("/healthz")),
        // Below `/mcp`, rmcp's service (behind the guard) answers: a GET that accepts no
        // event stream is refused 406.
        (406, json!("/mcp/elsewhere")),
        (404, json!("/nothing")),
    ];
    assert_eq!(direct, expected);
    let (addr, task) = mounted(HttpOptions {
        limits: patient(),
        ..HttpOptions::default()
    })
    .await;
    assert_eq!(probe(addr).await, expected);
    task.abort();
}

// ---------------------------------------------------------------------------------------------
// stdio

async fn next_message(lines: &mut tokio::io::Lines<BufReader<tokio::io::DuplexStream>>) -> Value {
    let line = tokio::time::timeout(PATIENCE, lines.next_line())
        .await
        .expect("no answer in time")
        .unwrap()
        .expect("the server closed its output");
    serde_json::from_str(&line).unwrap()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_stdio_line_far_over_the_limit_is_refused_while_it_is_read() {
    const LIMIT: usize = 16 << 20;
    let (mut to_server, server_in) = tokio::io::duplex(1 << 16);
    let (server_out, from_server) = tokio::io::duplex(1 << 16);
    let task = tokio::spawn(tool_core::mcp::stdio::serve_io(server(), server_in, server_out));
    let mut lines = BufReader::new(from_server).lines();

    // Past the limit, without a newline: the refusal comes while the line is still open.
    let chunk = vec![b'a'; 1 << 16];
    let mut written = 0;
    to_server
        .write_all(b"{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"ping\",\"params\":{\"x\":\"")
        .await
        .unwrap();
    while written <= LIMIT + (1 << 20) {
        tokio::time::timeout(PATIENCE, to_server.write_all(&chunk))
            .await
            .expect("the server stopped reading the long line")
            .unwrap();
        written += chunk.len();
    }
    let line = tokio::time::timeout(PATIENCE, lines.next_line())
        .await
        .expect("no refusal while the line was still being written")
        .unwrap()
        .unwrap();
    let refusal: Value = serde_json::from_str(&line).unwrap();
    assert_eq!(refusal["error"]["code"], -32600, "{refusal}");
    assert!(refusal["error"]["message"].as_str().unwrap().contains("longer than"), "{refusal}");

    // Twice the limit again: discarded as it comes (the pipe holds 64 KiB, so every write
    // waits for the server to read), then the line ends.
    for _ in 0..(2 * LIMIT / chunk.len()) {
        tokio::time::timeout(PATIENCE, to_server.write_all(&chunk))
            .await
            .expect("the server stopped discarding the long line")
            .unwrap();
    }
    to_server.write_all(b"\"}}\n").await.unwrap();

    // An invalid initialize is -32602, and the session still starts with a valid one.
    let bad = json!({"jsonrpc": "2.0", "id": 2, "method": "initialize", "params": {"capabilities": {}}});
    to_server.write_all(format!("{bad}\n").as_bytes()).await.unwrap();
    let answer = next_message(&mut lines).await;
    assert_eq!(answer["id"], 2);
    assert_eq!(answer["error"]["code"], -32602, "{answer}");

    to_server.write_all(format!("{}\n", initialize(3)).as_bytes()).await.unwrap();
    let answer = next_message(&mut lines).await;
    assert_eq!(answer["id"], 3);
    assert_eq!(answer["result"]["protocolVersion"], LEGACY, "{answer}");
    to_server
        .write_all(b"{\"jsonrpc\":\"2.0\",\"method\":\"notifications/initialized\"}\n{\"jsonrpc\":\"2.0\",\"id\":4,\"method\":\"ping\"}\n")
        .await
        .unwrap();
    let answer = next_message(&mut lines).await;
    assert_eq!(answer["id"], 4, "{answer}");
    assert!(answer.get("result").is_some(), "{answer}");

    drop(to_server);
    tokio::time::timeout(PATIENCE, task).await.unwrap().unwrap().unwrap();
}
