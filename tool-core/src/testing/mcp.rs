//! An MCP client and the registry's MCP server in one test process, connected in memory.
//!
//! Owns [`McpPair`] and its builder, [`McpCall`] (one `tools/call` with the progress and log
//! notifications that came with it) and the client handler behind them: `rmcp`'s own client,
//! speaking to [`stdio::serve_io`](crate::mcp::stdio::serve_io) over two
//! `tokio::io::duplex` pipes — no port, no subprocess, the server's real stdio path. The
//! client answers elicitation requests (approvals, a tool's own questions) from a script and
//! records what it was asked.

#![allow(deprecated)] // MCP logging is deprecated by SEP-2577 but the server still sends it.

use std::collections::VecDeque;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};

use rmcp::model::{
    CallToolRequestParams, ClientConfig, ElicitRequestParams, ElicitResult, ElicitationAction, LoggingMessageNotificationParam,
    ProgressNotificationParam, RequestMetaObject,
};
use rmcp::service::{NotificationContext, RequestContext, RoleClient, RunningService};
use rmcp::{ClientHandler, ErrorData, ServerHandler, ServiceExt};
use serde_json::{Value, json};

use super::client::Progress;
use crate::context::Elicitation;
use crate::mcp::{McpConfig, McpServer};
use crate::registry::Registry;
use crate::runtime::Runtime;

#[derive(Debug, Default)]
struct Heard {
    answers: VecDeque<Elicitation>,
    asked: Vec<Value>,
    progress: Vec<Progress>,
    logs: Vec<Value>,
    list_changes: usize,
}

/// The test client's handler: scripted answers, recorded notifications.
#[derive(Clone)]
struct Client {
    config: ClientConfig,
    heard: Arc<Mutex<Heard>>,
}

impl Client {
    fn heard(&self) -> std::sync::MutexGuard<'_, Heard> {
        self.heard.lock().unwrap_or_else(|p| p.into_inner())
    }
}

impl ClientHandler for Client {
    fn get_info(&self) -> ClientConfig {
        self.config.clone()
    }

    async fn create_elicitation(&self, request: ElicitRequestParams, _cx: RequestContext<RoleClient>) -> Result<ElicitResult, ErrorData> {
        let mut heard = self.heard();
        heard.asked.push(serde_json::to_value(&request).unwrap_or(Value::Null));
        let Some(answer) = heard.answers.pop_front() else {
            return Err(ErrorData::internal_error(
                "the test client has no answer for this elicitation (add one with `McpPair::elicit`)",
                None,
            ));
        };
        Ok(match answer {
            Elicitation::Accept { content } => ElicitResult::new(ElicitationAction::Accept).with_content(content),
            Elicitation::Decline => ElicitResult::new(ElicitationAction::Decline),
            Elicitation::Cancel => ElicitResult::new(ElicitationAction::Cancel),
        })
    }

    async fn on_progress(&self, params: ProgressNotificationParam, _cx: NotificationContext<RoleClient>) {
        let progress = Progress {
            progress: params.progress,
            total: params.total,
            message: params.message,
        };
        self.heard().progress.push(progress);
    }

    async fn on_tool_list_changed(&self, _cx: NotificationContext<RoleClient>) {
        self.heard().list_changes += 1;
    }

    async fn on_logging_message(&self, params: LoggingMessageNotificationParam, _cx: NotificationContext<RoleClient>) {
        self.heard().logs.push(serde_json::to_value(&params).unwrap_or(Value::Null));
    }
}

/// Sets up an [`McpPair`]: the protocol revision and what the client can do.
pub struct McpPairBuilder<E> {
    server: McpServer<E>,
    protocol: Option<String>,
    elicitation: bool,
    answers: VecDeque<Elicitation>,
}

impl<E: ServerHandler + Clone + Send + Sync + 'static> McpPairBuilder<E> {
    /// The protocol revision the client asks for (default: `rmcp`'s latest).
    pub fn protocol(mut self, revision: &str) -> Self {
        self.protocol = Some(revision.to_owned());
        self
    }

    /// A client that cannot elicit (the server then says how to continue a waiting call).
    pub fn without_elicitation(mut self) -> Self {
        self.elicitation = false;
        self
    }

    /// The client's answer to the next elicitation (answers are used in order).
    pub fn elicit(mut self, answer: Elicitation) -> Self {
        self.answers.push_back(answer);
        self
    }

    /// Connects the client to the server.
    ///
    /// # Panics
    /// When the session cannot start (the test fails with the reason).
    pub async fn start(self) -> McpPair {
        let mut config = ClientConfig::default();
        let capabilities = if self.elicitation { json!({"elicitation": {}}) } else { json!({}) };
        config.capabilities = serde_json::from_value(capabilities).unwrap_or_default();
        if let Some(revision) = &self.protocol {
            config.protocol_version = serde_json::from_value(json!(revision)).unwrap_or_else(|e| panic!("protocol {revision:?}: {e}"));
        }
        let heard = Arc::new(Mutex::new(Heard {
            answers: self.answers,
            ..Heard::default()
        }));
        let (client_out, server_in) = tokio::io::duplex(1 << 16);
        let (server_out, client_in) = tokio::io::duplex(1 << 16);
        let server = tokio::spawn(crate::mcp::stdio::serve_io(self.server, server_in, server_out));
        let handler = Client {
            config,
            heard: heard.clone(),
        };
        let client = handler
            .serve((client_in, client_out))
            .await
            .unwrap_or_else(|e| panic!("the in-process MCP session did not start: {e}"));
        McpPair {
            client,
            heard,
            server,
            next_token: AtomicU64::new(1),
        }
    }
}

/// An `rmcp` client connected to a Toolsmith MCP server in the same process.
///
/// ```
/// use tool_core::prelude::*;
/// use tool_core::testing::McpPair;
///
/// /// Add two numbers
/// #[tool(id = "kit-doc-add")]
/// async fn add(a: i64, b: i64) -> i64 {
///     a + b
/// }
///
/// # tokio::runtime::Builder::new_current_thread().enable_all().build().unwrap().block_on(async {
/// let mcp = McpPair::of(Registry::from_iter([add::tool()])).await;
/// assert_eq!(mcp.tool_names().await, ["kit-doc-add"]);
/// let call = mcp.call("kit-doc-add", json!({"a": 2, "b": 3})).await;
/// assert!(!call.is_error());
/// assert_eq!(call.text(), "5");
/// # });
/// ```
pub struct McpPair {
    client: RunningService<RoleClient, Client>,
    heard: Arc<Mutex<Heard>>,
    server: tokio::task::JoinHandle<std::io::Result<()>>,
    next_token: AtomicU64,
}

impl McpPair {
    /// A pair to set up around `server`.
    pub fn builder<E: ServerHandler + Clone + Send + Sync + 'static>(server: McpServer<E>) -> McpPairBuilder<E> {
        McpPairBuilder {
            server,
            protocol: None,
            elicitation: true,
            answers: VecDeque::new(),
        }
    }

    /// A client that can elicit, connected to `server`.
    pub async fn start<E: ServerHandler + Clone + Send + Sync + 'static>(server: McpServer<E>) -> McpPair {
        McpPair::builder(server).start().await
    }

    /// A client connected to a default server over `registry`.
    pub async fn of(registry: Registry) -> McpPair {
        McpPair::start(McpServer::new(Runtime::new(registry), McpConfig::default())).await
    }

    fn heard(&self) -> std::sync::MutexGuard<'_, Heard> {
        self.heard.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// `rmcp`'s client, for anything the helpers do not cover.
    pub fn client(&self) -> &RunningService<RoleClient, impl ClientHandler + use<>> {
        &self.client
    }

    /// The client's answer to the next elicitation.
    pub fn elicit(&self, answer: Elicitation) {
        self.heard().answers.push_back(answer);
    }

    /// The elicitation requests the server sent, as JSON (`message`, `requestedSchema`, …).
    pub fn elicitations(&self) -> Vec<Value> {
        self.heard().asked.clone()
    }

    /// Every log notification (`notifications/message` params) heard so far, in order.
    pub fn logs(&self) -> Vec<Value> {
        self.heard().logs.clone()
    }

    /// Every progress notification heard so far, in order.
    pub fn progress(&self) -> Vec<Progress> {
        self.heard().progress.clone()
    }

    /// How many `notifications/tools/list_changed` the client heard so far.
    pub fn list_changes(&self) -> usize {
        self.heard().list_changes
    }

    /// Every tool listed (all pages), as JSON.
    pub async fn list(&self) -> Vec<Value> {
        let tools = self
            .client
            .peer()
            .list_all_tools()
            .await
            .unwrap_or_else(|e| panic!("tools/list failed: {e}"));
        tools.iter().map(|t| serde_json::to_value(t).unwrap_or(Value::Null)).collect()
    }

    /// The names of the tools listed, in order.
    pub async fn tool_names(&self) -> Vec<String> {
        self.list()
            .await
            .iter()
            .filter_map(|t| t["name"].as_str().map(str::to_owned))
            .collect()
    }

    /// Calls a tool with a progress token; returns its result with the progress and log
    /// notifications that arrived during the call (make concurrent calls on separate pairs:
    /// the notifications of calls in flight together are not told apart).
    ///
    /// # Panics
    /// When the request itself fails (a protocol error, not a tool error: those are results).
    pub async fn call(&self, name: &str, arguments: Value) -> McpCall {
        let token = format!("kit-{}", self.next_token.fetch_add(1, Ordering::Relaxed));
        let progress_token = serde_json::from_value(json!(token)).unwrap_or_else(|e| panic!("progress token: {e}"));
        let mut params = CallToolRequestParams::new(name.to_owned());
        params.meta = Some(RequestMetaObject::with_progress_token(progress_token));
        params.arguments = match arguments {
            Value::Object(map) => Some(map),
            Value::Null => None,
            other => panic!("McpPair::call: arguments must be a JSON object, not {other}"),
        };
        let (logs_before, progress_before) = {
            let heard = self.heard();
            (heard.logs.len(), heard.progress.len())
        };
        let result = self
            .client
            .call_tool(params)
            .await
            .unwrap_or_else(|e| panic!("tools/call `{name}` failed: {e}"));
        // Notifications are handled in their own tasks: a round trip after the answer lets the
        // ones sent before it land.
        let _ = self
            .client
            .peer()
            .send_request(rmcp::model::ClientRequest::PingRequest(Default::default()))
            .await;
        let heard = self.heard();
        McpCall {
            result: serde_json::to_value(&result).unwrap_or(Value::Null),
            progress: heard.progress[progress_before..].to_vec(),
            logs: heard.logs[logs_before..].to_vec(),
        }
    }

    /// Sets the server's log level for this session (`logging/setLevel`: `debug`, `info`, …).
    pub async fn set_log_level(&self, level: &str) {
        let level = serde_json::from_value(json!(level)).unwrap_or_else(|e| panic!("log level {level:?}: {e}"));
        let params = rmcp::model::SetLevelRequestParams::new(level);
        self.client
            .peer()
            .set_level(params)
            .await
            .unwrap_or_else(|e| panic!("logging/setLevel failed: {e}"));
    }

    /// Ends the session and waits for the server to end.
    pub async fn close(self) {
        let _ = self.client.cancel().await;
        match self.server.await {
            Ok(Ok(())) => {}
            Ok(Err(e)) => panic!("the MCP server ended with an error: {e}"),
            Err(e) => panic!("the MCP server task failed: {e}"),
        }
    }
}

/// One `tools/call` answer, with what came with it.
#[derive(Debug, Clone, PartialEq)]
pub struct McpCall {
    /// The `CallToolResult` as JSON (`content`, `structuredContent`, `isError`).
    pub result: Value,
    /// The progress notifications of this call, in order.
    pub progress: Vec<Progress>,
    /// The log notifications (`notifications/message` params) that arrived during the call.
    pub logs: Vec<Value>,
}

impl McpCall {
    /// Whether the result is an error result (`isError: true`).
    pub fn is_error(&self) -> bool {
        self.result["isError"] == json!(true)
    }

    /// The first content block's text; fails the test when there is none.
    pub fn text(&self) -> &str {
        self.result["content"][0]["text"]
            .as_str()
            .unwrap_or_else(|| panic!("the result has no text block: {}", self.result))
    }

    /// `structuredContent`; fails the test unless the call succeeded with one.
    pub fn structured(&self) -> Value {
        assert!(
            !self.is_error(),
            "expected the call to succeed, but it returned an error: {}",
            self.result
        );
        self.result
            .get("structuredContent")
            .cloned()
            .unwrap_or_else(|| panic!("the result has no structuredContent: {}", self.result))
    }
}
