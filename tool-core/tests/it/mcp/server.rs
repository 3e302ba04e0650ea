//! The MCP server end to end: a real server started in-process, spoken to over stdio (a pair of
//! in-memory pipes carrying line-delimited JSON-RPC, written by hand where the wire itself is
//! tested, and `rmcp`'s client through the test kit's `McpPair` where only the answers are) and
//! over Streamable HTTP (hand-written HTTP/1.1 on 127.0.0.1, SSE responses decoded here).

use crate::support::http_server;
use http_server::Served;
use std::net::SocketAddr;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use tokio::io::{AsyncBufReadExt, AsyncRead, AsyncReadExt, AsyncWriteExt, BufReader, DuplexStream, Lines};
use tokio::net::TcpStream;
use tokio::sync::Semaphore;
use tokio::task::JoinHandle;
use tool_core::CancellationToken;
use tool_core::mcp::http::HttpOptions;
use tool_core::mcp::{McpConfig, McpServer};
use tool_core::prelude::*;
use tool_core::runtime::{PendingKind, ResumeOptions, RunEventKind, Runtime};
use tool_core::testing::McpPair;

/// How long a test waits for a message that should come.
const PATIENCE: Duration = Duration::from_secs(10);
/// How long a test listens for a message that should not come.
const QUIET: Duration = Duration::from_millis(300);

const LEGACY: &str = "2025-06-18";

// ---------------------------------------------------------------------------------------------
// Tools

/// Adds two numbers
#[tool]
async fn add(
    /// The first addend
    a: f64,
    /// The second addend
    b: f64,
) -> f64 {
    a + b
}

/// A weather forecast.
#[derive(Debug, Serialize, JsonSchema)]
pub struct Forecast {
    /// The city.
    pub city: String,
    /// Degrees Celsius.
    pub celsius: i32,
    /// The sky.
    pub sky: String,
}

fn forecast_for(city: String) -> Forecast {
    Forecast {
        celsius: 21,
        sky: "sunny".into(),
        city,
    }
}

/// The weather in a city
#[tool]
async fn forecast(
    /// The city
    city: String,
) -> Forecast {
    forecast_for(city)
}

fn radar_blocks(f: &Forecast) -> ModelOutput {
    ModelOutput::content([
        ContentPart::text(format!("{}: {}°C and {}", f.city, f.celsius, f.sky)),
        ContentPart::ImageData {
            data: "iVBORw0KGgo=".into(),
            media_type: "image/png".into(),
        },
    ])
}

/// The weather in a city, with a radar picture
#[tool(to_model_output = radar_blocks)]
async fn radar(
    /// The city
    city: String,
) -> Forecast {
    forecast_for(city)
}

// `to_model_output` takes exactly `&Output`, here `&String`.
#[allow(clippy::ptr_arg)]
fn shout_blocks(s: &String) -> ModelOutput {
    ModelOutput::content([ContentPart::text(s.to_uppercase()), ContentPart::text("!")])
}

/// Repeats a text loudly
#[tool(to_model_output = shout_blocks)]
async fn shout(
    /// The text
    text: String,
) -> String {
    text
}

/// Amounts the `transfer` tool really sent.
static SENT: Mutex<Vec<u32>> = Mutex::new(Vec::new());

fn sent(amount: u32) -> bool {
    SENT.lock().unwrap().contains(&amount)
}

/// Sends money (a person approves every transfer)
#[tool(require_approval)]
async fn transfer(
    /// Amount in cents
    amount: u32,
) -> String {
    SENT.lock().unwrap().push(amount);
    format!("sent {amount}")
}

/// Works in three steps, reporting progress after each
#[tool]
async fn steps(#[ctx] cx: ToolContext) -> String {
    let mcp = cx.mcp().unwrap();
    for i in 1..=3 {
        mcp.progress(f64::from(i), Some(3.0), Some(format!("step {i}")));
    }
    "all steps done".into()
}

/// Logs while it works
#[tool]
async fn chatty(#[ctx] cx: ToolContext) -> String {
    cx.observe().log(LogLevel::Debug, "details nobody asked for", None);
    cx.observe().log(LogLevel::Info, "working", Some(&json!({"step": 1})));
    "talked".into()
}

fn server_with(registry: Registry, config: McpConfig) -> McpServer {
    McpServer::new(Runtime::new(registry), config)
}

fn all_tools() -> Registry {
    Registry::from_iter([
        add::tool(),
        forecast::tool(),
        radar::tool(),
        shout::tool(),
        transfer::tool(),
        steps::tool(),
        chatty::tool(),
    ])
}

/// A tool that reports each start on a channel and finishes only when the test adds a
/// permit to its gate.
fn gated_tool(id: &str) -> (DynamicTool, tokio::sync::mpsc::UnboundedReceiver<()>, Arc<Semaphore>) {
    let (started_tx, started) = tokio::sync::mpsc::unbounded_channel();
    let gate = Arc::new(Semaphore::new(0));
    let g = gate.clone();
    let tool = DynamicTool::builder(id, "Waits until the test lets it finish")
        .handler(move |_, _| {
            let (started_tx, g) = (started_tx.clone(), g.clone());
            async move {
                let _ = started_tx.send(());
                g.acquire().await.unwrap().forget();
                Ok(json!("finished"))
            }
        })
        .unwrap();
    (tool, started, gate)
}

fn plain_tool(id: &str) -> DynamicTool {
    let answer = id.to_owned();
    DynamicTool::builder(id, format!("Answers with its name, {id}"))
        .handler(move |_, _| {
            let answer = answer.clone();
            async move { Ok(json!(answer)) }
        })
        .unwrap()
}

// ---------------------------------------------------------------------------------------------
// JSON-RPC helpers

pub(crate) fn request(id: u64, method: &str, params: Value) -> Value {
    json!({"jsonrpc": "2.0", "id": id, "method": method, "params": params})
}

fn initialize_params(capabilities: Value) -> Value {
    json!({"protocolVersion": LEGACY, "capabilities": capabilities, "clientInfo": {"name": "mcp-server-test", "version": "1.0"}})
}

pub(crate) fn call_params(name: &str, arguments: Value) -> Value {
    json!({"name": name, "arguments": arguments})
}

/// Whether `m` is the response (result or error) to the client's request `id`.
fn is_response_to(m: &Value, id: u64) -> bool {
    m.get("method").is_none() && m["id"] == json!(id) && (m.get("result").is_some() || m.get("error").is_some())
}

pub(crate) fn result_of(m: &Value) -> &Value {
    assert!(m.get("error").is_none(), "expected a result, got {m}");
    &m["result"]
}

/// The text of a tool result's first content block.
pub(crate) fn text_of(result: &Value) -> &str {
    result["content"][0]["text"]
        .as_str()
        .unwrap_or_else(|| panic!("no text block in {result}"))
}

pub(crate) fn is_error(result: &Value) -> bool {
    result["isError"] == json!(true)
}

pub(crate) fn tool_names(list_result: &Value) -> Vec<String> {
    list_result["tools"]
        .as_array()
        .unwrap_or_else(|| panic!("no tools in {list_result}"))
        .iter()
        .map(|t| t["name"].as_str().unwrap().to_owned())
        .collect()
}

// ---------------------------------------------------------------------------------------------
// stdio client

struct Stdio {
    to_server: DuplexStream,
    from_server: Lines<BufReader<DuplexStream>>,
    task: JoinHandle<std::io::Result<()>>,
}

impl Stdio {
    fn start(server: McpServer) -> Stdio {
        let (to_server, server_in) = tokio::io::duplex(1 << 16);
        let (server_out, from_server) = tokio::io::duplex(1 << 16);
        let task = tokio::spawn(tool_core::mcp::stdio::serve_io(server, server_in, server_out));
        Stdio {
            to_server,
            from_server: BufReader::new(from_server).lines(),
            task,
        }
    }

    async fn send_line(&mut self, line: &str) {
        self.to_server.write_all(line.as_bytes()).await.unwrap();
        self.to_server.write_all(b"\n").await.unwrap();
        self.to_server.flush().await.unwrap();
    }

    async fn send(&mut self, message: &Value) {
        self.send_line(&message.to_string()).await;
    }

    /// The next message, or `None` when none comes within `wait`.
    async fn try_recv(&mut self, wait: Duration) -> Option<Value> {
        let line = tokio::time::timeout(wait, self.from_server.next_line()).await.ok()?;
        let line = line.unwrap().expect("the server closed its output");
        Some(serde_json::from_str(&line).unwrap_or_else(|e| panic!("the server wrote a line that is not JSON ({e}): {line}")))
    }

    async fn recv(&mut self) -> Value {
        self.try_recv(PATIENCE).await.expect("no message from the server in time")
    }

    /// Sends a request and reads up to its response; returns the response and what came before.
    async fn request(&mut self, id: u64, method: &str, params: Value) -> (Value, Vec<Value>) {
        self.send(&request(id, method, params)).await;
        self.response_to(id).await
    }

    async fn response_to(&mut self, id: u64) -> (Value, Vec<Value>) {
        let mut before = Vec::new();
        loop {
            let m = self.recv().await;
            if is_response_to(&m, id) {
                return (m, before);
            }
            assert!(
                m.get("method").is_none() || m.get("id").is_none(),
                "unexpected request from the server: {m}"
            );
            before.push(m);
        }
    }

    /// `initialize` and `notifications/initialized`; returns the initialize result.
    async fn initialize(&mut self, capabilities: Value) -> Value {
        let (r, _) = self.request(0, "initialize", initialize_params(capabilities)).await;
        let result = result_of(&r).clone();
        self.send(&json!({"jsonrpc": "2.0", "method": "notifications/initialized"})).await;
        result
    }

    async fn call(&mut self, id: u64, name: &str, arguments: Value) -> (Value, Vec<Value>) {
        let (r, before) = self.request(id, "tools/call", call_params(name, arguments)).await;
        (result_of(&r).clone(), before)
    }

    /// Closes the client's side and waits for the server to end.
    async fn close(self) {
        drop(self.to_server);
        let ended = tokio::time::timeout(PATIENCE, self.task)
            .await
            .expect("the server did not end after its input closed");
        ended.unwrap().expect("the server ended with an error");
    }
}

// ---------------------------------------------------------------------------------------------
// HTTP client

pub(crate) async fn start_http(server: McpServer, options: HttpOptions) -> Served {
    http_server::serve(server, options).await
}

enum Framing {
    Length(usize),
    Chunked { left_in_chunk: usize, done: bool },
    UntilClose,
}

/// One HTTP/1.1 exchange on its own connection: the status and headers, then the body read
/// as it arrives.
pub(crate) struct HttpResponse {
    status: u16,
    headers: Vec<(String, String)>,
    reader: BufReader<TcpStream>,
    framing: Framing,
    /// Decoded body bytes not yet consumed as SSE lines.
    pending: Vec<u8>,
}

/// Sends one request. `Host`, `Accept`, `Content-Type` and `Content-Length` are added unless
/// `headers` names them; the connection closes after the response.
pub(crate) async fn http(addr: SocketAddr, method: &str, headers: &[(&str, &str)], body: &str) -> HttpResponse {
    let has = |name: &str| headers.iter().any(|(k, _)| k.eq_ignore_ascii_case(name));
    let mut head = format!("{method} /mcp HTTP/1.1\r\n");
    if !has("host") {
        head.push_str(&format!("Host: {addr}\r\n"));
    }
    if !has("accept") {
        head.push_str("Accept: application/json, text/event-stream\r\n");
    }
    if method == "POST" && !has("content-type") {
        head.push_str("Content-Type: application/json\r\n");
    }
    if method == "POST" || !body.is_empty() {
        head.push_str(&format!("Content-Length: {}\r\n", body.len()));
    }
    for (k, v) in headers {
        head.push_str(&format!("{k}: {v}\r\n"));
    }
    head.push_str("Connection: close\r\n\r\n");
    // One write: a server that answers before reading the body (401, 413) then finds it all
    // read already, and closes without a reset that could lose its answer.
    let mut stream = TcpStream::connect(addr).await.unwrap();
    stream.write_all(format!("{head}{body}").as_bytes()).await.unwrap();
    stream.flush().await.unwrap();
    let mut reader = BufReader::new(stream);

    let mut status_line = String::new();
    read_line(&mut reader, &mut status_line).await;
    let status = status_line
        .split_whitespace()
        .nth(1)
        .and_then(|s| s.parse().ok())
        .unwrap_or_else(|| panic!("not an HTTP status line: {status_line:?}"));
    let mut headers = Vec::new();
    loop {
        let mut line = String::new();
        read_line(&mut reader, &mut line).await;
        let line = line.trim_end();
        if line.is_empty() {
            break;
        }
        let (k, v) = line.split_once(':').unwrap_or_else(|| panic!("not a header: {line:?}"));
        headers.push((k.trim().to_ascii_lowercase(), v.trim().to_owned()));
    }
    let header = |name: &str| headers.iter().find(|(k, _)| k == name).map(|(_, v)| v.clone());
    let framing = if header("transfer-encoding").is_some_and(|v| v.eq_ignore_ascii_case("chunked")) {
        Framing::Chunked {
            left_in_chunk: 0,
            done: false,
        }
    } else if let Some(n) = header("content-length") {
        Framing::Length(n.parse().unwrap())
    } else {
        Framing::UntilClose
    };
    HttpResponse {
        status,
        headers,
        reader,
        framing,
        pending: Vec::new(),
    }
}

async fn read_line<R: AsyncRead + Unpin>(reader: &mut BufReader<R>, line: &mut String) {
    tokio::time::timeout(PATIENCE, reader.read_line(line))
        .await
        .expect("no response line in time")
        .expect("the connection failed");
}

impl HttpResponse {
    fn header(&self, name: &str) -> Option<&str> {
        self.headers.iter().find(|(k, _)| k == name).map(|(_, v)| v.as_str())
    }

    /// The next piece of the decoded body; `None` at its end.
    async fn next_piece(&mut self) -> Option<Vec<u8>> {
        match &mut self.framing {
            Framing::Length(0) => None,
            Framing::Length(left) => {
                let mut buf = vec![0; (*left).min(8192)];
                let n = self.reader.read(&mut buf).await.unwrap();
                assert!(n > 0, "the body ended early");
                *left -= n;
                buf.truncate(n);
                Some(buf)
            }
            Framing::UntilClose => {
                let mut buf = vec![0; 8192];
                let n = self.reader.read(&mut buf).await.unwrap();
                buf.truncate(n);
                (n > 0).then_some(buf)
            }
            Framing::Chunked { done: true, .. } => None,
            Framing::Chunked { left_in_chunk, done } => {
                if *left_in_chunk == 0 {
                    let mut size = String::new();
                    self.reader.read_line(&mut size).await.unwrap();
                    let size = size.trim();
                    let size = size.split(';').next().unwrap();
                    let n = usize::from_str_radix(size, 16).unwrap_or_else(|_| panic!("not a chunk size: {size:?}"));
                    if n == 0 {
                        *done = true;
                        return None;
                    }
                    *left_in_chunk = n;
                }
                let mut buf = vec![0; (*left_in_chunk).min(8192)];
                let n = self.reader.read(&mut buf).await.unwrap();
                assert!(n > 0, "the body ended inside a chunk");
                buf.truncate(n);
                *left_in_chunk -= n;
                if *left_in_chunk == 0 {
                    let mut crlf = [0u8; 2];
                    self.reader.read_exact(&mut crlf).await.unwrap();
                    assert_eq!(&crlf, b"\r\n", "a chunk does not end with CRLF");
                }
                Some(buf)
            }
        }
    }

    /// The whole (rest of the) body as text.
    async fn text(mut self) -> String {
        let mut all = std::mem::take(&mut self.pending);
        loop {
            match tokio::time::timeout(PATIENCE, self.next_piece())
                .await
                .expect("the body did not end in time")
            {
                Some(p) => all.extend(p),
                None => return String::from_utf8(all).unwrap(),
            }
        }
    }

    async fn json(self) -> Value {
        let text = self.text().await;
        serde_json::from_str(&text).unwrap_or_else(|e| panic!("the body is not JSON ({e}): {text}"))
    }

    /// The next JSON-RPC message of an SSE body (`data:` lines); `None` at the body's end.
    async fn next_message(&mut self) -> Option<Value> {
        loop {
            if let Some(end) = self.pending.iter().position(|b| *b == b'\n') {
                let line: Vec<u8> = self.pending.drain(..=end).collect();
                let line = String::from_utf8(line).unwrap();
                if let Some(data) = line.trim_end().strip_prefix("data:") {
                    let data = data.trim();
                    if !data.is_empty() {
                        return Some(serde_json::from_str(data).unwrap_or_else(|e| panic!("SSE data is not JSON ({e}): {data}")));
                    }
                }
                continue;
            }
            let piece = tokio::time::timeout(PATIENCE, self.next_piece())
                .await
                .expect("no SSE message in time")?;
            self.pending.extend(piece);
        }
    }

    /// The next SSE message, or `None` when none comes within `wait`.
    async fn try_next_message(&mut self, wait: Duration) -> Option<Value> {
        tokio::time::timeout(wait, self.next_message()).await.ok().flatten()
    }

    /// Reads SSE messages up to the response to `id`.
    pub(crate) async fn response_to(&mut self, id: u64) -> (Value, Vec<Value>) {
        let mut before = Vec::new();
        loop {
            let m = self
                .next_message()
                .await
                .unwrap_or_else(|| panic!("the stream ended before the response to {id}"));
            if is_response_to(&m, id) {
                return (m, before);
            }
            before.push(m);
        }
    }
}

/// A legacy (2025-06-18) Streamable HTTP session.
struct HttpSession {
    addr: SocketAddr,
    id: String,
    token: Option<String>,
}

impl HttpSession {
    async fn open(addr: SocketAddr, token: Option<&str>, capabilities: Value) -> HttpSession {
        let auth = token.map(|t| format!("Bearer {t}"));
        let mut headers = Vec::new();
        if let Some(a) = &auth {
            headers.push(("Authorization", a.as_str()));
        }
        let body = request(0, "initialize", initialize_params(capabilities)).to_string();
        let mut r = http(addr, "POST", &headers, &body).await;
        if r.status != 200 {
            let status = r.status;
            panic!("initialize failed with {status}: {}", r.text().await);
        }
        let id = r.header("mcp-session-id").expect("initialize gave no mcp-session-id").to_owned();
        let (init, _) = r.response_to(0).await;
        assert_eq!(result_of(&init)["protocolVersion"], LEGACY);
        let session = HttpSession {
            addr,
            id,
            token: token.map(str::to_owned),
        };
        let r = session
            .post(&json!({"jsonrpc": "2.0", "method": "notifications/initialized"}))
            .await;
        assert_eq!(r.status, 202, "initialized was not accepted");
        session
    }

    async fn post(&self, message: &Value) -> HttpResponse {
        let auth = self.token.as_ref().map(|t| format!("Bearer {t}"));
        let mut headers = vec![("Mcp-Session-Id", self.id.as_str()), ("MCP-Protocol-Version", LEGACY)];
        if let Some(a) = &auth {
            headers.push(("Authorization", a.as_str()));
        }
        http(self.addr, "POST", &headers, &message.to_string()).await
    }

    async fn request(&self, id: u64, method: &str, params: Value) -> (Value, Vec<Value>) {
        let mut r = self.post(&request(id, method, params)).await;
        assert_eq!(r.status, 200, "{method} failed");
        r.response_to(id).await
    }

    /// The session's standalone SSE stream (server-to-client messages outside any request).
    async fn listen(&self) -> HttpResponse {
        let r = http(
            self.addr,
            "GET",
            &[
                ("Accept", "text/event-stream"),
                ("Mcp-Session-Id", self.id.as_str()),
                ("MCP-Protocol-Version", LEGACY),
            ],
            "",
        )
        .await;
        assert_eq!(r.status, 200, "the GET stream was refused");
        r
    }
}

fn initialize_body() -> String {
    request(0, "initialize", initialize_params(json!({}))).to_string()
}

// ---------------------------------------------------------------------------------------------
// stdio

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

// ---------------------------------------------------------------------------------------------
// HTTP

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

// ---------------------------------------------------------------------------------------------
// HTTP without sessions (`HttpOptions::stateless`, `json_response`)

const STATELESS_VERSION: &str = "2025-11-25";

pub(crate) fn stateless(json_response: bool) -> HttpOptions {
    HttpOptions {
        stateless: true,
        json_response,
        ..HttpOptions::default()
    }
}

/// One request without any session header.
pub(crate) async fn sessionless(addr: SocketAddr, message: &Value) -> HttpResponse {
    http(addr, "POST", &[("MCP-Protocol-Version", STATELESS_VERSION)], &message.to_string()).await
}

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

// ---------------------------------------------------------------------------------------------
// Bounded model output: a cut result links its full form, readable by its session only

/// `big` returns 300 000 `ü` (600 000 bytes) within a 1 KiB budget; `rows` returns an object
/// under an output schema, larger than the registry's 2 KiB default.
fn budget_tools() -> Registry {
    let big = DynamicTool::builder("big", "Returns a long text")
        .max_model_output(1024)
        .handler(|_, _| async move { Ok(json!("ü".repeat(300_000))) })
        .unwrap();
    let rows = DynamicTool::builder("rows", "Returns many rows")
        .output_schema(json!({"type": "object", "properties": {"rows": {"type": "array"}}, "required": ["rows"]}))
        .handler(|_, _| async move { Ok(json!({"rows": (0..2000).collect::<Vec<_>>()})) })
        .unwrap();
    let registry = Registry::try_from_tools([big, rows]).unwrap();
    registry.set_model_output_budget(Some(tool_core::budget::OutputBudget::parse("2KiB").unwrap()));
    registry
}

/// The `resource_link` a cut result ends with.
fn result_link(result: &Value) -> String {
    let last = result["content"].as_array().and_then(|c| c.last()).cloned().unwrap_or_default();
    assert_eq!(last["type"], "resource_link", "a cut result ends with a link: {result}");
    let uri = last["uri"].as_str().unwrap().to_owned();
    assert!(uri.starts_with("toolsmith://results/mcp_"), "{uri}");
    uri
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn stdio_cut_result_is_read_in_full_by_its_session_and_refused_to_another() {
    let server = server_with(budget_tools(), McpConfig::default());
    let mut a = Stdio::start(server.clone());
    let init = a.initialize(json!({})).await;
    assert!(init["capabilities"]["resources"].is_object(), "results are resources: {init}");
    let mut b = Stdio::start(server);
    b.initialize(json!({})).await;

    let (r, _) = a.call(1, "big", json!({})).await;
    let seen = text_of(&r);
    assert!(seen.len() <= 1024 + 300, "the model sees {} bytes", seen.len());
    assert!(seen.contains("of 600000 bytes left out here"), "{seen}");
    let uri = result_link(&r);
    assert!(seen.contains(&uri), "the marker says where the rest is");

    let (read, _) = a.request(2, "resources/read", json!({"uri": uri})).await;
    let contents = &result_of(&read)["contents"];
    assert_eq!(contents[0]["uri"], json!(uri));
    assert_eq!(contents[0]["text"].as_str().unwrap(), "ü".repeat(300_000), "the full result");

    let (refused, _) = b.request(1, "resources/read", json!({"uri": uri})).await;
    let message = refused["error"]["message"]
        .as_str()
        .unwrap_or_else(|| panic!("not refused: {refused}"));
    let (unknown, _) = a.request(3, "resources/read", json!({"uri": "toolsmith://results/mcp_nope"})).await;
    assert_eq!(unknown["error"]["code"], json!(-32002), "{unknown}");
    assert!(unknown["error"]["message"].as_str().unwrap().contains("not kept here"));
    // Another session's result is told exactly what an unknown one is: no oracle of its existence.
    assert_eq!(refused["error"]["code"], unknown["error"]["code"], "{refused}");
    let id = uri.trim_start_matches("toolsmith://results/");
    assert_eq!(
        message.replace(id, "ID"),
        unknown["error"]["message"].as_str().unwrap().replace("mcp_nope", "ID")
    );
    a.close().await;
    b.close().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn http_structured_content_over_budget_is_left_out_and_linked() {
    let server = start_http(server_with(budget_tools(), McpConfig::default()), HttpOptions::default()).await;
    let a = HttpSession::open(server.addr, None, json!({})).await;
    let b = HttpSession::open(server.addr, None, json!({})).await;
    let (r, _) = a.request(1, "tools/call", call_params("rows", json!({}))).await;
    let result = result_of(&r);
    assert!(
        result.get("structuredContent").is_none(),
        "too large for the budget: {}",
        &result.to_string()[..300]
    );
    assert!(text_of(result).contains("structuredContent was left out"), "{}", text_of(result));
    assert!(text_of(result).len() <= 2048 + 400);
    let uri = result_link(result);
    let (read, _) = a.request(2, "resources/read", json!({"uri": uri})).await;
    let contents = &result_of(&read)["contents"];
    let full: Value = serde_json::from_str(contents[1]["text"].as_str().unwrap()).unwrap();
    assert_eq!(contents[1]["mimeType"], "application/json");
    assert_eq!(full["rows"].as_array().unwrap().len(), 2000, "the raw output, whole");
    let (refused, _) = b.request(1, "resources/read", json!({"uri": uri})).await;
    assert!(refused.get("error").is_some(), "another session may not read it: {refused}");
}
