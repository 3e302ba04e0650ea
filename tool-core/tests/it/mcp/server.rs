//! The MCP server end to end: a real server started in-process, spoken to over stdio (a pair of
//! in-memory pipes carrying line-delimited JSON-RPC, written by hand where the wire itself is
//! tested, and `rmcp`'s client through the test kit's `McpPair` where only the answers are) and
//! over Streamable HTTP (hand-written HTTP/1.1 on 127.0.0.1, SSE responses decoded in
//! `http_client`). This file holds the tools, the JSON-RPC helpers and the stdio client the
//! tests share; the tests are in `stdio`, `http` (with sessions), `stateless` and `budget`.

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

mod budget;
mod http;
mod http_client;
mod stateless;
mod stdio;

pub(crate) use http_client::{sessionless, start_http, stateless};

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
