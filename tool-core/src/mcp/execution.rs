//! `execution.taskSupport` in the `tools/list` answers of MCP 2025-11-25 peers.
//!
//! 2025-11-25 lists, per tool, whether its calls may (`optional`), must (`required`) or must
//! not (`forbidden`, also what an absent field means) run as tasks; 2026-07-28 dropped the
//! field (there the server decides when a call becomes a task). rmcp 3.11 models only
//! 2026-07-28's `Tool`, and its handler builds the `tools/list` result itself, so the field is
//! added to the answer as it leaves for a 2025-11-25 peer: over HTTP, to the response of a
//! `tools/list` POST sent with `MCP-Protocol-Version: 2025-11-25` (the guard calls
//! [`Execution::rewrite`]); over stdio, to the answer of each `tools/list` request of a session
//! that negotiated 2025-11-25 ([`StdioListings`]). A page none of whose tools may be a task is
//! sent as rmcp wrote it. Owns those two rewrites; a tool's level is the spec's
//! ([`BackgroundSpec::task_support`](crate::spec::BackgroundSpec::task_support)).

use std::collections::HashSet;
use std::sync::{Arc, Mutex};

use axum::body::Body;
use axum::http::{HeaderValue, header};
use axum::response::Response;
use rmcp::ServerHandler;
use serde_json::{Value, json};

use super::McpServer;
use crate::spec::TaskSupport;

/// The revision whose `tools/list` carries `execution`.
pub(super) const REVISION: &str = "2025-11-25";

/// Each listed tool's task support, by the name it is listed under.
#[derive(Clone)]
pub(crate) struct Execution(Arc<dyn Fn(&str) -> TaskSupport + Send + Sync>);

impl Execution {
    /// The levels of `server`'s tools, as its listing names them at the time of asking.
    pub(super) fn of<E: ServerHandler + Clone + Send + Sync + 'static>(server: &McpServer<E>) -> Self {
        let server = server.clone();
        Execution(Arc::new(move |name| {
            let listing = server.listing().ok();
            let id = listing.as_ref().and_then(|l| l.id(name));
            id.map_or(TaskSupport::Forbidden, |id| server.task_support(id))
        }))
    }

    /// Adds `execution.taskSupport` to each tool of a `tools/list` answer (a JSON-RPC
    /// response) that may or must run as a task; whether anything was added.
    pub(super) fn annotate(&self, message: &mut Value) -> bool {
        let mut added = false;
        let tools = message.pointer_mut("/result/tools").and_then(Value::as_array_mut);
        for tool in tools.into_iter().flatten() {
            let level = (self.0)(tool["name"].as_str().unwrap_or_default());
            if let (TaskSupport::Optional | TaskSupport::Required, Some(tool)) = (level, tool.as_object_mut()) {
                tool.insert("execution".to_owned(), json!({"taskSupport": level.as_str()}));
                added = true;
            }
        }
        added
    }

    /// The HTTP response to a 2025-11-25 `tools/list` POST with `execution` added: a JSON body,
    /// or the `data` of each event of an SSE body (the request's stream, which ends with its
    /// answer). A body that cannot be read is answered as an internal error.
    pub(super) async fn rewrite(&self, response: Response) -> Response {
        let (mut parts, body) = response.into_parts();
        let sse = parts
            .headers
            .get(header::CONTENT_TYPE)
            .and_then(|v| v.to_str().ok())
            .is_some_and(|v| v.starts_with("text/event-stream"));
        let bytes = match axum::body::to_bytes(body, usize::MAX).await {
            Ok(bytes) => bytes,
            Err(e) => {
                tracing::warn!(error = %e, "the tools/list answer could not be read to add `execution`");
                let error = json!({"jsonrpc": "2.0", "id": null, "error": {"code": -32603, "message": "the tool list could not be sent"}});
                parts
                    .headers
                    .insert(header::CONTENT_TYPE, HeaderValue::from_static("application/json"));
                parts.headers.remove(header::CONTENT_LENGTH);
                return Response::from_parts(parts, Body::from(error.to_string()));
            }
        };
        let text = String::from_utf8_lossy(&bytes);
        let rewritten = if sse {
            self.rewrite_events(&text)
        } else {
            self.rewrite_json(&text)
        };
        match rewritten {
            Some(text) => {
                parts.headers.remove(header::CONTENT_LENGTH);
                Response::from_parts(parts, Body::from(text))
            }
            None => Response::from_parts(parts, Body::from(bytes)),
        }
    }

    /// A JSON message with `execution` added (`None`: not JSON, or nothing to add).
    fn rewrite_json(&self, text: &str) -> Option<String> {
        let mut message: Value = serde_json::from_str(text).ok()?;
        self.annotate(&mut message).then(|| message.to_string())
    }

    /// An SSE body whose events' `data` are rewritten as [`Self::rewrite_json`] does (`None`:
    /// nothing to add).
    fn rewrite_events(&self, text: &str) -> Option<String> {
        let mut changed = false;
        let mut out = String::with_capacity(text.len() + 64);
        for event in text.split_inclusive("\n\n") {
            let data: Vec<&str> = event
                .lines()
                .filter_map(|l| l.strip_prefix("data:"))
                .map(|d| d.strip_prefix(' ').unwrap_or(d))
                .collect();
            match self.rewrite_json(&data.join("\n")) {
                Some(json) => {
                    changed = true;
                    for line in event.lines().filter(|l| !l.starts_with("data:") && !l.is_empty()) {
                        out.push_str(line);
                        out.push('\n');
                    }
                    out.push_str("data: ");
                    out.push_str(&json);
                    out.push_str("\n\n");
                }
                None => out.push_str(event),
            }
        }
        changed.then_some(out)
    }
}

/// What a stdio session needs to add `execution`: the revision it negotiated (read from the
/// server's `initialize` answer) and the ids of the `tools/list` requests not yet answered.
#[derive(Default)]
pub(super) struct StdioListings {
    revision: Mutex<Option<String>>,
    pending: Mutex<HashSet<String>>,
}

impl StdioListings {
    /// Notes a client line that went to rmcp (a parsed JSON-RPC message).
    pub(super) fn client_sent(&self, message: &super::body::Message<'_>) {
        if message.is("tools/list") {
            self.pending
                .lock()
                .unwrap_or_else(|p| p.into_inner())
                .insert(message.id().to_string());
        }
    }

    /// The server's line as it goes to the client: with `execution` added when it answers a
    /// `tools/list` of a 2025-11-25 session.
    pub(super) fn server_sends(&self, execution: &Execution, line: String) -> String {
        let mut revision = self.revision.lock().unwrap_or_else(|p| p.into_inner());
        if revision.is_none() && line.contains("\"protocolVersion\"") {
            let message: Option<Value> = serde_json::from_str(&line).ok();
            let result = message
                .as_ref()
                .and_then(|m| m.get("result"))
                .filter(|r| r.get("serverInfo").is_some());
            *revision = result.and_then(|r| r["protocolVersion"].as_str()).map(str::to_owned);
        }
        let legacy = revision.as_deref() == Some(REVISION);
        drop(revision);
        let mut pending = self.pending.lock().unwrap_or_else(|p| p.into_inner());
        if pending.is_empty() || !line.contains("\"tools\"") {
            return line;
        }
        let Ok(mut message) = serde_json::from_str::<Value>(&line) else {
            return line;
        };
        let answered = message.get("result").is_some() || message.get("error").is_some();
        if !answered || !pending.remove(&message["id"].to_string()) {
            return line;
        }
        drop(pending);
        if legacy && execution.annotate(&mut message) {
            return message.to_string();
        }
        line
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn levels() -> Execution {
        Execution(Arc::new(|name| match name {
            "job" => TaskSupport::Optional,
            "only" => TaskSupport::Required,
            _ => TaskSupport::Forbidden,
        }))
    }

    fn page() -> Value {
        json!({"jsonrpc": "2.0", "id": 3, "result": {"tools": [{"name": "job"}, {"name": "only"}, {"name": "plain"}]}})
    }

    #[test]
    fn each_tool_that_may_be_a_task_says_so_and_the_rest_say_nothing() {
        let mut message = page();
        assert!(levels().annotate(&mut message));
        let tools = &message["result"]["tools"];
        assert_eq!(tools[0]["execution"], json!({"taskSupport": "optional"}));
        assert_eq!(tools[1]["execution"], json!({"taskSupport": "required"}));
        assert!(tools[2].get("execution").is_none(), "absent reads as `forbidden`");
    }

    #[test]
    fn sse_events_keep_their_other_lines() {
        let body = format!("id: 0\nretry: 3000\ndata: \n\nevent: message\nid: 1\ndata: {}\n\n", page());
        let out = levels().rewrite_events(&body).unwrap();
        let (priming, answer) = out.split_once("\n\n").unwrap();
        assert_eq!(priming, "id: 0\nretry: 3000\ndata: ");
        assert!(answer.starts_with("event: message\nid: 1\ndata: {"), "{answer}");
        let data: Value = serde_json::from_str(answer.lines().nth(2).unwrap().strip_prefix("data: ").unwrap()).unwrap();
        assert_eq!(data["result"]["tools"][1]["execution"]["taskSupport"], "required");
        assert!(
            levels()
                .rewrite_events("data: {\"jsonrpc\": \"2.0\", \"id\": 1, \"result\": {}}\n\n")
                .is_none()
        );
    }

    #[test]
    fn a_stdio_session_gets_execution_only_at_2025_11_25() {
        for (revision, expected) in [("2025-11-25", true), ("2025-06-18", false)] {
            let session = StdioListings::default();
            let init = json!({"jsonrpc": "2.0", "id": 0, "result": {"protocolVersion": revision, "serverInfo": {"name": "s", "version": "1"}, "capabilities": {}}});
            session.server_sends(&levels(), init.to_string());
            let request = br#"{"jsonrpc": "2.0", "id": 3, "method": "tools/list"}"#;
            session.client_sent(&super::super::body::parse(request).ok().unwrap());
            let line = session.server_sends(&levels(), page().to_string());
            assert_eq!(line.contains("taskSupport"), expected, "{revision}: {line}");
            // Answered once: a second line with that id is left alone.
            assert!(!session.server_sends(&levels(), page().to_string()).contains("taskSupport"));
        }
    }
}
