//! The per-call MCP handle a tool sees as `cx.mcp()`: progress, logs, elicitation, sampling,
//! sent to the client that made the call.
//!
//! Owns [`PeerHandle`]. Notifications go through one queue per call, so they reach the client
//! in the order the tool sent them, and the server flushes the queue before it answers the
//! call (a client sees every progress and log message of a call before its result).

#![allow(deprecated)] // MCP logging and sampling are deprecated by SEP-2577 but still in use.

use std::sync::Arc;

use rmcp::model::{
    CreateMessageRequestParams, ElicitRequestParams, ElicitationAction, ElicitationSchema, LoggingLevel, LoggingMessageNotificationParam,
    ProgressNotificationParam, ProgressToken, ProtocolVersion,
};
use rmcp::service::{Peer, RoleServer};
use serde_json::Value;
use tokio::sync::mpsc;
use tokio::task::JoinHandle;

use crate::context::{Elicitation, LogLevel, McpHandle};
use crate::error::ToolError;
use crate::tool::BoxFuture;

/// How verbose a level is (MCP levels are ordered by severity).
pub(crate) fn rank(level: LoggingLevel) -> u8 {
    match level {
        LoggingLevel::Debug => 0,
        LoggingLevel::Info => 1,
        LoggingLevel::Notice => 2,
        LoggingLevel::Warning => 3,
        LoggingLevel::Error => 4,
        LoggingLevel::Critical => 5,
        LoggingLevel::Alert => 6,
        LoggingLevel::Emergency => 7,
    }
}

fn mcp_level(level: LogLevel) -> LoggingLevel {
    match level {
        LogLevel::Debug => LoggingLevel::Debug,
        LogLevel::Info => LoggingLevel::Info,
        LogLevel::Warn => LoggingLevel::Warning,
        LogLevel::Error => LoggingLevel::Error,
        LogLevel::Fatal => LoggingLevel::Critical,
    }
}

enum Note {
    Log(LoggingMessageNotificationParam),
    Progress(ProgressNotificationParam),
}

/// The MCP client of one call.
pub(crate) struct PeerHandle {
    peer: Peer<RoleServer>,
    progress_token: Option<ProgressToken>,
    /// The least severe level the client wants; `None`: no logs.
    min_level: Option<LoggingLevel>,
    /// The client can answer elicitations (and the revision lets the server ask mid-call).
    can_elicit: bool,
    can_sample: bool,
    modern: bool,
    queue: mpsc::UnboundedSender<Note>,
}

impl PeerHandle {
    /// A handle and the task that sends its notifications; await the task (after dropping the
    /// handle) to flush them.
    pub(crate) fn start(
        peer: Peer<RoleServer>,
        progress_token: Option<ProgressToken>,
        min_level: Option<LoggingLevel>,
        capabilities: Option<rmcp::model::ClientCapabilities>,
        version: Option<ProtocolVersion>,
    ) -> (Arc<PeerHandle>, JoinHandle<()>) {
        let (queue, mut rx) = mpsc::unbounded_channel::<Note>();
        let sender = peer.clone();
        let task = tokio::spawn(async move {
            while let Some(note) = rx.recv().await {
                // A client that went away misses its notifications; the call goes on.
                let _ = match note {
                    Note::Log(p) => sender.notify_logging_message(p).await,
                    Note::Progress(p) => sender.notify_progress(p).await,
                };
            }
        });
        let modern = version.is_some_and(|v| v >= ProtocolVersion::V_2026_07_28);
        let handle = PeerHandle {
            peer,
            progress_token,
            min_level,
            can_elicit: capabilities.as_ref().is_some_and(|c| c.elicitation.is_some()),
            can_sample: capabilities.as_ref().is_some_and(|c| c.sampling.is_some()),
            modern,
            queue,
        };
        (Arc::new(handle), task)
    }
}

fn unsupported(what: &str, why: &str) -> ToolError {
    ToolError::new(format!("This MCP client cannot {what}: {why}."))
}

impl McpHandle for PeerHandle {
    fn elicit(&self, message: String, schema: Value) -> BoxFuture<'_, Result<Elicitation, ToolError>> {
        Box::pin(async move {
            if !self.can_elicit {
                return Err(unsupported(
                    "ask its user for input",
                    "it did not declare the elicitation capability",
                ));
            }
            if self.modern {
                return Err(unsupported(
                    "be asked for input in the middle of a call",
                    "MCP 2026-07-28 lets a server ask only between calls (use a `suspend` type instead)",
                ));
            }
            let requested_schema: ElicitationSchema = serde_json::from_value(schema)
                .map_err(|e| ToolError::new(format!("The elicitation schema is not a flat form MCP can show: {e}")))?;
            let params = ElicitRequestParams::FormElicitationParams {
                meta: None,
                message,
                requested_schema,
            };
            let answer = self
                .peer
                .create_elicitation(params)
                .await
                .map_err(|e| ToolError::new(format!("The MCP client did not answer the elicitation: {e}")))?;
            Ok(match answer.action {
                ElicitationAction::Accept => Elicitation::Accept {
                    content: answer.content.unwrap_or(Value::Null),
                },
                ElicitationAction::Decline => Elicitation::Decline,
                _ => Elicitation::Cancel,
            })
        })
    }

    fn log(&self, level: LogLevel, data: Value) {
        let level = mcp_level(level);
        if self.min_level.is_some_and(|min| rank(level) >= rank(min)) {
            let _ = self.queue.send(Note::Log(
                LoggingMessageNotificationParam::new(level, data).with_logger("toolsmith"),
            ));
        }
    }

    fn progress(&self, progress: f64, total: Option<f64>, message: Option<String>) {
        let Some(token) = &self.progress_token else { return };
        let mut p = ProgressNotificationParam::new(token.clone(), progress);
        if let Some(t) = total {
            p = p.with_total(t);
        }
        if let Some(m) = message {
            p = p.with_message(m);
        }
        let _ = self.queue.send(Note::Progress(p));
    }

    fn sample(&self, request: Value) -> BoxFuture<'_, Result<Value, ToolError>> {
        Box::pin(async move {
            if !self.can_sample {
                return Err(unsupported("sample a model", "it did not declare the sampling capability"));
            }
            if self.modern {
                return Err(unsupported(
                    "sample in the middle of a call",
                    "MCP 2026-07-28 lets a server ask only between calls",
                ));
            }
            let params: CreateMessageRequestParams =
                serde_json::from_value(request).map_err(|e| ToolError::new(format!("The sampling request is not valid: {e}")))?;
            let result = self
                .peer
                .create_message(params)
                .await
                .map_err(|e| ToolError::new(format!("The MCP client did not answer the sampling request: {e}")))?;
            serde_json::to_value(result).map_err(|e| ToolError::new(format!("The sampling result could not be read: {e}")))
        })
    }
}
