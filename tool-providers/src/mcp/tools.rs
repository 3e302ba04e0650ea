//! The server's tools as ours: each listed [`rmcp::model::Tool`] becomes an [`McpTool`]
//! (name, schemas, annotations and `_meta` kept) whose calls go out as `tools/call`, with the
//! server's progress routed to the call's own MCP client and a dropped call cancelled on the
//! server. The typed result becomes our output in `content`.
//!
//! Owns one remote call from our side. Must not read the tool list or touch the registry
//! (`session`).

use std::sync::{Arc, Weak};

use rmcp::model::{
    CallToolRequest, CallToolRequestParams, CallToolResult, CancelledNotification, CancelledNotificationParam, ClientNotification,
    ClientRequest, ProgressToken, RequestId, RequestMetaObject, ServerResult,
};
use rmcp::service::{Peer, PeerRequestOptions, RoleClient};
use serde::Deserialize;
use serde_json::{Map, Value};
use tool_core::context::{McpHandle, ToolCallInfo};
use tool_core::mcp::IDEMPOTENCY_KEY_META;
use tool_core::spec::ToolSpec;
use tool_core::tool::{BoxFuture, ToolInput, ToolOutput};
use tool_core::{DynamicTool, ErrorKind, Tool, ToolError};

use super::PIN_PROVIDER;
use super::content::{all_text, outcome};
use super::session::Shared;
use tool_core::pins;

/// A non-blank text.
fn text(s: Option<&str>) -> Option<String> {
    s.filter(|s| !s.trim().is_empty()).map(str::to_owned)
}

/// One listed tool of the server, callable through `tools/call`.
pub(super) struct McpTool {
    spec: ToolSpec,
    shared: Weak<Shared>,
    /// The server's name for it (the id may carry a prefix).
    name: String,
}

/// An [`McpTool`] for one listed tool, or `None` (with a warning) when its name or schemas
/// are not usable (the spec is checked as every dynamic tool's is).
pub(super) fn build_tool(shared: &Arc<Shared>, def: &rmcp::model::Tool) -> Option<Arc<dyn Tool>> {
    let name = def.name.to_string();
    let title = text(def.title.as_deref());
    let description = text(def.description.as_deref())
        .or_else(|| title.clone())
        .unwrap_or_else(|| format!("The `{name}` tool of the MCP server `{}`", shared.id));
    let mut builder =
        DynamicTool::builder(format!("{}{name}", shared.prefix), description).input_schema(Value::Object((*def.input_schema).clone()));
    if let Some(out) = &def.output_schema {
        builder = builder.output_schema(Value::Object((**out).clone()));
    }
    if let Some(title) = title {
        builder = builder.title(title);
    }
    builder = builder.with_spec(|s| {
        if let Some(a) = &def.annotations {
            s.presentation.mcp.title = a.title.clone();
            s.presentation.mcp.read_only_hint = a.read_only_hint;
            s.presentation.mcp.destructive_hint = a.destructive_hint;
            s.presentation.mcp.idempotent_hint = a.idempotent_hint;
            s.presentation.mcp.open_world_hint = a.open_world_hint;
        }
        s.presentation.mcp.meta = def.meta.as_ref().map(|m| Value::Object(m.0.clone()));
    });
    builder = shared.placement.apply(builder, &shared.id);
    // The builder checks the spec; its handler is never called (the tool is an `McpTool`).
    match builder.handler(|_, _| async { Ok(Value::Null) }) {
        Ok(checked) => {
            let tool: Arc<dyn Tool> = Arc::new(McpTool {
                spec: checked.spec().clone(),
                shared: Arc::downgrade(shared),
                name,
            });
            Some(match &shared.pins {
                Some(store) => pins::pinned(tool, PIN_PROVIDER, &shared.id, store.clone()),
                None => tool,
            })
        }
        Err(e) => {
            tracing::warn!(provider = %shared.id, tool = %name, error = %e, "skipping an MCP tool that is not a valid Toolsmith tool");
            None
        }
    }
}

impl Tool for McpTool {
    fn spec(&self) -> &ToolSpec {
        &self.spec
    }

    fn execute(
        &self,
        input: ToolInput<'_>,
        _context: Arc<Map<String, Value>>,
        call: ToolCallInfo,
    ) -> BoxFuture<'static, Result<ToolOutput, ToolError>> {
        let input = input
            .decode::<Value>()
            .map_err(|e| ToolError::with_kind(ErrorKind::InvalidInput, format!("the input could not be read: {e}")));
        // The call's idempotency key reaches the server as its digest (stable per key, 64 hex
        // characters whatever the key), so a server that honours it (a Toolsmith server does)
        // runs a retried or resumed call once.
        let key = tool_core::idempotency::key_digest(call.idempotency_key.as_str());
        let (shared, name, caller) = (self.shared.clone(), self.name.clone(), call.mcp);
        Box::pin(async move {
            let input = input?;
            let shared = shared
                .upgrade()
                .ok_or_else(|| ToolError::new(format!("The MCP provider of `{name}` is gone.")))?;
            let out = outcome(call_tool(&shared, &name, input, &key, caller).await?);
            let mut output = ToolOutput::new(out.value);
            output.set_model_output(out.model_output);
            Ok(output)
        })
    }
}

/// Routes a call's progress to its caller while it runs, and forgets its token when it ends.
struct ProgressRoute<'a> {
    shared: &'a Shared,
    token: ProgressToken,
}

impl Drop for ProgressRoute<'_> {
    fn drop(&mut self) {
        self.shared.progress.lock().unwrap_or_else(|e| e.into_inner()).close(&self.token);
    }
}

/// Tells the server a `tools/call` is no longer wanted when the call is dropped unanswered
/// (the caller cancelled it, or its timeout ran out).
struct Abandon {
    peer: Peer<RoleClient>,
    id: Option<RequestId>,
}

impl Drop for Abandon {
    fn drop(&mut self) {
        let Some(id) = self.id.take() else { return };
        let peer = self.peer.clone();
        let notification = ClientNotification::CancelledNotification(CancelledNotification::new(CancelledNotificationParam::new(
            Some(id),
            Some("cancelled by the caller".to_owned()),
        )));
        if let Ok(runtime) = tokio::runtime::Handle::try_current() {
            runtime.spawn(async move {
                let _ = peer.send_notification(notification).await;
            });
        }
    }
}

/// At most this many input-required rounds (SEP-2322) are answered in one call.
const MAX_INPUT_ROUNDS: usize = rmcp::model::DEFAULT_MRTR_MAX_ROUNDS;

/// `tools/call`, answered with the server's typed result; `isError` is our error (its text as
/// the message). The server's progress reaches `caller` (the MCP client of this call, if any),
/// and so do its questions (`ask`): an input-required result (2026-07-28) is answered and the
/// call sent again with the answers and the server's `requestState` as it came, up to
/// [`MAX_INPUT_ROUNDS`] times. A call dropped before its answer is cancelled on the server
/// (`notifications/cancelled`).
async fn call_tool(
    shared: &Shared,
    name: &str,
    input: Value,
    idempotency_key: &str,
    caller: Option<Arc<dyn McpHandle>>,
) -> Result<CallToolResult, ToolError> {
    let peer = shared.current_peer()?;
    let mut params = CallToolRequestParams::new(name.to_owned());
    let mut meta = RequestMetaObject::new();
    meta.insert(IDEMPOTENCY_KEY_META.to_owned(), Value::String(idempotency_key.to_owned()));
    params.meta = Some(meta);
    match input {
        Value::Object(args) => params = params.with_arguments(args),
        Value::Null => {}
        other => return Err(ToolError::new(format!("`{name}` takes a JSON object, not {other}"))),
    }
    let mut state_only = 0u32;
    for _round in 0..MAX_INPUT_ROUNDS {
        let response = call_once(shared, &peer, name, params.clone(), caller.as_ref()).await?;
        let asked = match response {
            ServerResult::CallToolResult(result) => return finished(shared, name, result),
            ServerResult::InputRequiredResult(asked) => asked,
            // Some servers answer an empty object; read whatever came like a result.
            other => {
                let result = serde_json::to_value(&other)
                    .ok()
                    .and_then(|v| CallToolResult::deserialize(v).ok())
                    .unwrap_or_default();
                return finished(shared, name, result);
            }
        };
        let requests = asked.input_requests.unwrap_or_default();
        if requests.is_empty() && asked.request_state.is_none() {
            return Err(ToolError::new(format!(
                "The MCP server `{}` asked for input in the middle of `{name}` without saying what.",
                shared.id
            )));
        }
        if requests.is_empty() {
            // Only state: the server is not ready yet; wait a little more each time.
            state_only += 1;
            tokio::time::sleep(std::time::Duration::from_millis(50 * u64::from(state_only))).await;
        }
        let answers = super::ask::answer_all(&shared.id, caller.as_ref(), requests).await?;
        params.input_responses = (!answers.is_empty()).then_some(answers);
        params.request_state = asked.request_state;
    }
    Err(ToolError::new(format!(
        "The MCP server `{}` still asked for input after {MAX_INPUT_ROUNDS} rounds of `{name}`; the call is given up.",
        shared.id
    )))
}

/// A finished call's result, or its `isError` as our error.
fn finished(shared: &Shared, name: &str, result: CallToolResult) -> Result<CallToolResult, ToolError> {
    if result.is_error == Some(true) {
        let message =
            all_text(&result.content).unwrap_or_else(|| format!("The MCP server `{}` reported an error from `{name}`.", shared.id));
        let details = serde_json::to_value(&result).unwrap_or(Value::Null);
        return Err(ToolError::with_details(message, details));
    }
    Ok(result)
}

/// One `tools/call` request and the server's answer, with the call's progress routed to
/// `caller`, its questions sent as requests of the server's own reaching `caller` too
/// (`Shared::calls`), and a drop before the answer cancelling it on the server.
async fn call_once(
    shared: &Shared,
    peer: &Peer<RoleClient>,
    name: &str,
    params: CallToolRequestParams,
    caller: Option<&Arc<dyn McpHandle>>,
) -> Result<ServerResult, ToolError> {
    let failed = |e: rmcp::ServiceError| {
        ToolError::new(format!(
            "The MCP server `{}` failed to run `{name}`: {e}{}",
            shared.id,
            shared.login_note()
        ))
    };
    let request = ClientRequest::CallToolRequest(CallToolRequest::new(params));
    let handle = peer
        .send_cancellable_request(request, PeerRequestOptions::no_options())
        .await
        .map_err(failed)?;
    let _call = CallRoute::new(shared, handle.id.clone(), caller.cloned());
    let token = handle.progress_token.clone();
    if let Some(sink) = caller {
        shared
            .progress
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .open(token.clone(), sink.clone());
    }
    let _route = ProgressRoute { shared, token };
    let mut abandon = Abandon {
        peer: peer.clone(),
        id: Some(handle.id.clone()),
    };
    let response = handle.await_response().await;
    abandon.id = None;
    response.map_err(failed)
}

/// Keeps a running request's caller where the server's questions find it
/// ([`Shared::calls`]) while it runs.
struct CallRoute<'a> {
    shared: &'a Shared,
    id: RequestId,
}

impl<'a> CallRoute<'a> {
    fn new(shared: &'a Shared, id: RequestId, caller: Option<Arc<dyn McpHandle>>) -> Self {
        shared.calls.lock().unwrap_or_else(|e| e.into_inner()).insert(id.clone(), caller);
        shared.call_started.notify_waiters();
        CallRoute { shared, id }
    }
}

impl Drop for CallRoute<'_> {
    fn drop(&mut self) {
        self.shared.calls.lock().unwrap_or_else(|e| e.into_inner()).remove(&self.id);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn def(v: Value) -> rmcp::model::Tool {
        serde_json::from_value(v).unwrap()
    }

    #[test]
    fn unusable_names_are_skipped() {
        let shared = Arc::new(Shared::new("s".into()));
        assert!(build_tool(&shared, &def(json!({"name": "has space", "inputSchema": {"type": "object"}}))).is_none());
        let ok = build_tool(
            &shared,
            &def(json!({"name": "ok.tool", "inputSchema": {"type": "object"}, "annotations": {"readOnlyHint": true}, "_meta": {"k": 1}})),
        )
        .unwrap();
        assert_eq!(ok.spec().presentation.mcp.read_only_hint, Some(true));
        assert_eq!(ok.spec().presentation.mcp.meta, Some(json!({"k": 1})));
    }
}
