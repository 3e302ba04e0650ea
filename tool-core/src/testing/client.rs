//! A scripted MCP client, as a tool sees it through `cx.mcp()`: it records progress and log
//! notifications and answers elicitation and sampling requests from a script.
//!
//! Owns [`Progress`], [`McpLog`], [`Answers`] (the script) and [`ScriptedClient`], the
//! [`McpHandle`] a one-line test call hands its tool. A request the script has no answer for
//! fails with an error that says so, which the tool sees as any client error.

use std::collections::VecDeque;
use std::sync::{Arc, Mutex};

use serde::Serialize;
use serde_json::Value;

use crate::context::{BoxFuture, Elicitation, LogLevel, McpHandle};
use crate::error::ToolError;

/// One `notifications/progress` a tool sent.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Progress {
    /// Progress so far.
    pub progress: f64,
    /// The total, when known.
    pub total: Option<f64>,
    /// A message for the user.
    pub message: Option<String>,
}

/// One `notifications/message` (log) a tool sent to the client.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct McpLog {
    /// Its level.
    pub level: LogLevel,
    /// Its data (`{"message", "data"?}` for `cx.observe().log`).
    pub data: Value,
}

/// The client's answers, used in order.
#[derive(Debug, Clone, Default)]
pub struct Answers {
    /// Answers to `elicitation/create`.
    pub elicitations: VecDeque<Elicitation>,
    /// Results of `sampling/createMessage`.
    pub samples: VecDeque<Value>,
}

#[derive(Debug, Default)]
struct State {
    answers: Answers,
    progress: Vec<Progress>,
    logs: Vec<McpLog>,
    /// The questions asked: `(message, schema)` of each elicitation.
    asked: Vec<(String, Value)>,
}

/// A client that answers from a script and records what it was told.
#[derive(Debug, Clone, Default)]
pub struct ScriptedClient(Arc<Mutex<State>>);

impl ScriptedClient {
    /// A client answering with `answers`.
    pub fn new(answers: Answers) -> Self {
        ScriptedClient(Arc::new(Mutex::new(State {
            answers,
            ..State::default()
        })))
    }

    fn state(&self) -> std::sync::MutexGuard<'_, State> {
        self.0.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// The progress notifications received, in order.
    pub fn progress(&self) -> Vec<Progress> {
        self.state().progress.clone()
    }

    /// The log notifications received, in order.
    pub fn logs(&self) -> Vec<McpLog> {
        self.state().logs.clone()
    }

    /// The elicitations asked, `(message, requested schema)`, in order.
    pub fn asked(&self) -> Vec<(String, Value)> {
        self.state().asked.clone()
    }
}

impl McpHandle for ScriptedClient {
    fn elicit(&self, message: String, schema: Value) -> BoxFuture<'_, Result<Elicitation, ToolError>> {
        let mut state = self.state();
        state.asked.push((message, schema));
        let answer = state
            .answers
            .elicitations
            .pop_front()
            .ok_or_else(|| ToolError::new("The test client has no answer for this elicitation (add one with `.elicit(...)`)."));
        Box::pin(std::future::ready(answer))
    }

    fn log(&self, level: LogLevel, data: Value) {
        self.state().logs.push(McpLog { level, data });
    }

    fn progress(&self, progress: f64, total: Option<f64>, message: Option<String>) {
        self.state().progress.push(Progress { progress, total, message });
    }

    fn sample(&self, request: Value) -> BoxFuture<'_, Result<Value, ToolError>> {
        let _ = request;
        let answer = self
            .state()
            .answers
            .samples
            .pop_front()
            .ok_or_else(|| ToolError::new("The test client has no answer for this sampling request (add one with `.sample(...)`)."));
        Box::pin(std::future::ready(answer))
    }
}
