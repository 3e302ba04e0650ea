//! What travels with a call through `McpToolProvider`, against Toolsmith's own MCP server
//! served in-process over Streamable HTTP: the server's progress reaches the MCP client of the
//! call (a gateway's client, say), and a call cancelled here is cancelled on the server.

use crate::support::toolsmith_server;

use std::sync::{Arc, Mutex};
use std::time::Duration;

use serde_json::{Value, json};
use tokio::sync::{Notify, mpsc};
use tool_core::context::{Elicitation, McpHandle};
use tool_core::mcp::{McpConfig, McpServer};
use tool_core::provider::{ResolveOptions, ToolProvider};
use tool_core::runtime::Runtime;
use tool_core::tool::BoxFuture;
use tool_core::{CallOptions, CancellationToken, DynamicTool, ErrorKind, LogLevel, Registry, ToolError};
use tool_providers::mcp::McpToolProvider;

/// One progress report: progress, total, message.
type Progress = (f64, Option<f64>, Option<String>);

/// Records the progress a call reports to its MCP client, and says when the last step arrived.
struct Recorder(Mutex<Vec<Progress>>, Arc<Notify>);

impl McpHandle for Recorder {
    fn elicit(&self, _message: String, _schema: Value) -> BoxFuture<'_, Result<Elicitation, ToolError>> {
        Box::pin(std::future::ready(Err(ToolError::new("not asked in this test"))))
    }

    fn log(&self, _level: LogLevel, _data: Value) {}

    fn progress(&self, progress: f64, total: Option<f64>, message: Option<String>) {
        let last = Some(progress) == total;
        self.0.lock().unwrap().push((progress, total, message));
        if last {
            self.1.notify_one();
        }
    }
}

/// The remote server: `ticks` reports three steps of progress and, asked to (`{"delivered":
/// true}`), answers only once the last step has reached the caller's recorder (`delivered`):
/// rmcp's client passes progress on from tasks of its own, one per notification, so a result
/// right behind them could overtake them. `wait` says it started, then waits for its
/// cancellation and says so.
async fn start_server(started: mpsc::UnboundedSender<()>, cancelled: mpsc::UnboundedSender<()>, delivered: Arc<Notify>) -> String {
    let ticks = DynamicTool::builder("ticks", "Reports three steps of progress")
        .handler(move |args, cx| {
            let delivered = delivered.clone();
            async move {
                let mcp = cx.mcp().ok_or_else(|| ToolError::new("no MCP client"))?;
                for step in 1..=3 {
                    mcp.progress(f64::from(step), Some(3.0), Some(format!("step {step}")));
                }
                if args["delivered"] == json!(true) {
                    tokio::time::timeout(Duration::from_secs(30), delivered.notified())
                        .await
                        .map_err(|_| ToolError::new("the last step never reached the caller"))?;
                }
                Ok(json!("ticked"))
            }
        })
        .unwrap();
    let wait = DynamicTool::builder("wait", "Waits until it is cancelled")
        .handler(move |_, cx| {
            let (started, cancelled) = (started.clone(), cancelled.clone());
            async move {
                let _ = started.send(());
                cx.cancellation().cancelled().await;
                let _ = cancelled.send(());
                Ok(json!("cancelled"))
            }
        })
        .unwrap();
    let server = McpServer::new(Runtime::new(Registry::from_iter([ticks, wait])), McpConfig::default());
    toolsmith_server::serve(server).await
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn progress_reaches_the_caller_and_cancellation_reaches_the_server() {
    let (started_tx, mut started) = mpsc::unbounded_channel();
    let (cancelled_tx, mut cancelled) = mpsc::unbounded_channel();
    let delivered = Arc::new(Notify::new());
    let url = start_server(started_tx, cancelled_tx, delivered.clone()).await;
    let provider = McpToolProvider::http("remote", url);
    provider.connect().await.unwrap();
    let tools = provider
        .resolve_tools(vec!["ticks".into(), "wait".into()], ResolveOptions::default())
        .await
        .unwrap();
    let registry = Arc::new(Registry::from_iter(tools.into_values()));

    // The remote tool's progress arrives at the MCP client of the call, always increasing
    // (one overtaken by a later one on the way is dropped), ending with the last step.
    let recorder = Arc::new(Recorder(Mutex::default(), delivered));
    let options = CallOptions::default().mcp(recorder.clone());
    let out = registry.call("ticks", json!({"delivered": true}), options).await.unwrap();
    assert_eq!(out.value(), json!("ticked"));
    let seen = recorder.0.lock().unwrap().clone();
    assert!(seen.windows(2).all(|w| w[0].0 < w[1].0), "{seen:?}");
    assert_eq!(seen.last(), Some(&(3.0, Some(3.0), Some("step 3".into()))), "{seen:?}");

    // Without an MCP client the progress goes nowhere, and the call still answers.
    let out = registry.call("ticks", json!({}), CallOptions::default()).await.unwrap();
    assert_eq!(out.value(), json!("ticked"));

    // Cancelled here, the call is cancelled on the server too.
    let token = CancellationToken::new();
    let options = CallOptions::default().cancellation(token.clone());
    let call = tokio::spawn({
        let registry = registry.clone();
        async move { registry.call("wait", json!({}), options).await }
    });
    tokio::time::timeout(Duration::from_secs(10), started.recv())
        .await
        .expect("the remote tool did not start")
        .unwrap();
    token.cancel();
    let e = call.await.unwrap().unwrap_err();
    assert_eq!(e.kind(), ErrorKind::Aborted, "{e}");
    tokio::time::timeout(Duration::from_secs(10), cancelled.recv())
        .await
        .expect("the server's tool was never cancelled")
        .unwrap();
    provider.close().await;
}

/// A call's idempotency key travels to the remote server (`_meta["io.toolsmith/idempotencyKey"]`,
/// as its digest): an `idempotent` tool on a Toolsmith server runs once per key, however often
/// the call is made again through the provider (a retry, a background re-run, a resume).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_idempotency_key_reaches_the_server_and_a_repeated_call_runs_once() {
    let runs = Arc::new(Mutex::new(Vec::<String>::new()));
    let send = DynamicTool::builder("send", "Sends one message (once per key)")
        .idempotent(tool_core::spec::Idempotent::Fail)
        .handler({
            let runs = runs.clone();
            move |_, cx| {
                let runs = runs.clone();
                async move {
                    let key = cx.idempotency_key().as_str().to_owned();
                    let mut runs = runs.lock().unwrap();
                    runs.push(key);
                    Ok(json!(format!("sent #{}", runs.len())))
                }
            }
        })
        .unwrap();
    let server = McpServer::new(Runtime::new(Registry::from_iter([send])), McpConfig::default());
    let url = toolsmith_server::serve(server).await;
    let provider = McpToolProvider::http("remote", url);
    provider.connect().await.unwrap();
    let tools = provider
        .resolve_tools(vec!["send".into()], ResolveOptions::default())
        .await
        .unwrap();
    let registry = Registry::from_iter(tools.into_values());

    let call = |key: &'static str| registry.call("send", json!({}), CallOptions::default().idempotency_key(key));
    let first = call("order-1").await.unwrap();
    let again = call("order-1").await.unwrap();
    let other = call("order-2").await.unwrap();
    assert_eq!(first.value(), json!("sent #1"));
    assert_eq!(again.value(), json!("sent #1"), "the server answered from its receipt");
    assert_eq!(other.value(), json!("sent #2"), "another key is another call");
    let runs = runs.lock().unwrap().clone();
    assert_eq!(runs.len(), 2, "{runs:?}");
    assert_ne!(runs[0], runs[1], "each key is its own on the server");
    provider.close().await;
}
