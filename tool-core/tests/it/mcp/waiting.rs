//! What becomes of a call waiting for approval when the MCP request that asks the client's user
//! about it goes away: cancelled (`notifications/cancelled`), or its session ended (stdio input
//! closed, Streamable HTTP session deleted). The call is declined, "cancelled by the client":
//! it leaves the store and never runs later by surprise. A real server in-process, over
//! in-memory stdio pipes and over HTTP/1.1 on 127.0.0.1.

use crate::support::http_server;
use std::net::SocketAddr;
use std::sync::Mutex;
use std::time::{Duration, Instant};

use tokio::io::{AsyncBufReadExt, AsyncReadExt, AsyncWriteExt, BufReader, DuplexStream, Lines};
use tokio::net::TcpStream;
use tool_core::mcp::http::HttpOptions;
use tool_core::mcp::{McpConfig, McpServer};
use tool_core::prelude::*;
use tool_core::runtime::{ResumeOptions, Runtime, RuntimeError};

/// How long a test waits for what should happen.
const PATIENCE: Duration = Duration::from_secs(10);

/// Amounts the tool really sent.
static SENT: Mutex<Vec<u32>> = Mutex::new(Vec::new());

/// Sends money (a person approves every transfer)
#[tool(id = "wait-transfer", require_approval)]
async fn transfer(
    /// Amount in cents
    amount: u32,
) -> String {
    SENT.lock().unwrap().push(amount);
    format!("sent {amount}")
}

fn server() -> (McpServer, Runtime) {
    let runtime = Runtime::new(Registry::from_iter([transfer::tool()]));
    (McpServer::new(runtime.clone(), McpConfig::default()), runtime)
}

fn request(id: u64, method: &str, params: Value) -> Value {
    json!({"jsonrpc": "2.0", "id": id, "method": method, "params": params})
}

fn initialize(id: u64) -> Value {
    let params = json!({"protocolVersion": "2025-06-18", "capabilities": {"elicitation": {}},
                        "clientInfo": {"name": "test", "version": "0"}});
    request(id, "initialize", params)
}

fn call(id: u64, amount: u32) -> Value {
    request(id, "tools/call", json!({"name": "wait-transfer", "arguments": {"amount": amount}}))
}

/// Waits (bounded) until no call waits in the runtime; returns whether none does.
async fn store_empties(runtime: &Runtime) -> bool {
    let started = Instant::now();
    while started.elapsed() < PATIENCE {
        if runtime.pending().await.unwrap().is_empty() {
            return true;
        }
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
    false
}

/// The one waiting call's id.
async fn waiting_id(runtime: &Runtime) -> String {
    let pending = runtime.pending().await.unwrap();
    assert_eq!(pending.len(), 1, "{pending:?}");
    pending[0].tool_call_id.clone()
}

/// The call was declined (gone from the store, never run): approving it now finds nothing.
async fn assert_declined_and_never_ran(runtime: &Runtime, id: &str, amount: u32) {
    assert!(store_empties(runtime).await, "the waiting call was left in the store");
    let again = runtime.approve(id, ResumeOptions::default()).await.map(drop).unwrap_err();
    assert!(matches!(again, RuntimeError::UnknownCall(_)), "{again}");
    assert!(!SENT.lock().unwrap().contains(&amount), "the declined call ran");
}

struct Stdio {
    to_server: DuplexStream,
    from_server: Lines<BufReader<DuplexStream>>,
}

impl Stdio {
    fn start(server: McpServer) -> Stdio {
        let (to_server, server_in) = tokio::io::duplex(1 << 16);
        let (server_out, from_server) = tokio::io::duplex(1 << 16);
        tokio::spawn(tool_core::mcp::stdio::serve_io(server, server_in, server_out));
        Stdio {
            to_server,
            from_server: BufReader::new(from_server).lines(),
        }
    }

    async fn send(&mut self, message: &Value) {
        let line = format!("{message}\n");
        self.to_server.write_all(line.as_bytes()).await.unwrap();
        self.to_server.flush().await.unwrap();
    }

    async fn recv(&mut self) -> Value {
        let line = tokio::time::timeout(PATIENCE, self.from_server.next_line())
            .await
            .expect("no message in time");
        serde_json::from_str(&line.unwrap().expect("the server closed its output")).unwrap()
    }

    /// Initializes as a client that can elicit, then calls `wait-transfer` and reads up to the
    /// server's approval question.
    async fn call_until_asked(&mut self, amount: u32) {
        self.send(&initialize(0)).await;
        assert_eq!(self.recv().await["id"], 0);
        self.send(&json!({"jsonrpc": "2.0", "method": "notifications/initialized"})).await;
        self.send(&call(1, amount)).await;
        let ask = self.recv().await;
        assert_eq!(ask["method"], "elicitation/create", "{ask}");
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn cancelling_the_request_declines_the_call_it_waits_on() {
    let (server, runtime) = server();
    let mut c = Stdio::start(server);
    c.call_until_asked(30).await;
    let id = waiting_id(&runtime).await;
    c.send(&json!({"jsonrpc": "2.0", "method": "notifications/cancelled", "params": {"requestId": 1, "reason": "user left"}}))
        .await;
    assert_declined_and_never_ran(&runtime, &id, 30).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_end_of_a_stdio_session_declines_its_waiting_calls() {
    let (server, runtime) = server();
    let mut c = Stdio::start(server);
    c.call_until_asked(50).await;
    let id = waiting_id(&runtime).await;
    drop(c.to_server);
    assert_declined_and_never_ran(&runtime, &id, 50).await;
}

/// Sends one HTTP/1.1 request on its own connection; returns the status, the session id
/// header, and the connection (to read the body from).
async fn http(addr: SocketAddr, method: &str, session: Option<&str>, body: &str) -> (u16, Option<String>, BufReader<TcpStream>) {
    let mut head = format!(
        "{method} /mcp HTTP/1.1\r\nHost: {addr}\r\nAccept: application/json, text/event-stream\r\nContent-Type: application/json\r\nContent-Length: {}\r\nConnection: close\r\n",
        body.len()
    );
    if let Some(id) = session {
        head.push_str(&format!("Mcp-Session-Id: {id}\r\nMCP-Protocol-Version: 2025-06-18\r\n"));
    }
    let mut stream = TcpStream::connect(addr).await.unwrap();
    stream.write_all(format!("{head}\r\n{body}").as_bytes()).await.unwrap();
    let mut reader = BufReader::new(stream);
    let mut lines = Vec::new();
    loop {
        let mut line = String::new();
        tokio::time::timeout(PATIENCE, reader.read_line(&mut line))
            .await
            .expect("no response in time")
            .unwrap();
        if line.trim().is_empty() {
            break;
        }
        lines.push(line.trim().to_owned());
    }
    let status = lines[0].split_whitespace().nth(1).unwrap().parse().unwrap();
    let session = lines.iter().find_map(|l| {
        let (k, v) = l.split_once(':')?;
        k.eq_ignore_ascii_case("mcp-session-id").then(|| v.trim().to_owned())
    });
    (status, session, reader)
}

/// Reads the body until it holds `needle` (bounded).
async fn read_until(reader: &mut BufReader<TcpStream>, needle: &str) {
    let mut seen = Vec::new();
    let mut buf = [0u8; 4096];
    while !String::from_utf8_lossy(&seen).contains(needle) {
        let n = tokio::time::timeout(PATIENCE, reader.read(&mut buf))
            .await
            .expect("nothing in time")
            .unwrap();
        assert!(n > 0, "the body ended without {needle}: {}", String::from_utf8_lossy(&seen));
        seen.extend_from_slice(&buf[..n]);
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn deleting_an_http_session_declines_its_waiting_calls() {
    let (server, runtime) = server();
    let served = http_server::serve(server, HttpOptions::default()).await;
    let addr = served.addr;
    let (status, session, mut init) = http(addr, "POST", None, &initialize(0).to_string()).await;
    assert_eq!(status, 200);
    let session = session.expect("a session id");
    read_until(&mut init, "protocolVersion").await;
    let initialized = json!({"jsonrpc": "2.0", "method": "notifications/initialized"}).to_string();
    assert_eq!(http(addr, "POST", Some(&session), &initialized).await.0, 202);
    let (status, _, mut asked) = http(addr, "POST", Some(&session), &call(1, 70).to_string()).await;
    assert_eq!(status, 200);
    read_until(&mut asked, "elicitation/create").await;
    let id = waiting_id(&runtime).await;
    let (status, _, _) = http(addr, "DELETE", Some(&session), "").await;
    assert!((200..300).contains(&status), "DELETE answered {status}");
    assert_declined_and_never_ran(&runtime, &id, 70).await;
    drop(served);
}
