//! The MCP server: any registry served over stdio or Streamable HTTP, on `rmcp`.
//!
//! Owns [`McpServer`] (the `rmcp` handler: `tools/list` with cursor pagination from the MCP
//! catalog, `tools/call` through the [`Runtime`] — validation, approval, suspension, background
//! tasks, views — with content from `to_model_output` and `structuredContent` from the raw
//! output, logging levels, progress, cancellation, `list_changed`) and [`McpConfig`]. Approval
//! and suspension ask the client's user through elicitation when it can (a blocking request on
//! revisions up to 2025-11-25, an input-required result on 2026-07-28); otherwise (a client
//! without elicitation, or a request without a session: stateless HTTP before 2026-07-28) the
//! result says how to continue the call from the `toolsmith` command line. A tool that elicits or
//! samples mid-call on 2026-07-28 is parked while its question travels as an input-required
//! result, and goes on when the client calls again with the answer. Transports are in `http`
//! and `stdio`; prompts, resources and completion come from an optional extra handler.

#![allow(deprecated)] // MCP logging is deprecated by SEP-2577 but still in use.

mod handle;
pub mod http;
pub mod stdio;

use std::sync::{Arc, Mutex};

use rmcp::model::{
    CallToolRequestParams, CallToolResponse, CallToolResult, CompleteRequestParams, CompleteResult, ContentBlock, CustomRequest,
    CustomResult, ElicitRequest, ElicitRequestParams, ElicitResult, ElicitationAction, ElicitationSchema, GetPromptRequestParams,
    GetPromptResponse, Implementation, InputRequest, InputRequests, InputRequiredResult, ListPromptsResult, ListResourceTemplatesResult,
    ListResourcesResult, ListToolsResult, LoggingLevel, PaginatedRequestParams, ProtocolVersion, ReadResourceRequestParams,
    ReadResourceResponse, ServerCapabilities, ServerConfig, SetLevelRequestParams, SubscribeRequestParams, SubscriptionFilter,
    Tool as McpTool, UnsubscribeRequestParams,
};
use rmcp::service::{NotificationContext, RequestContext, RoleServer, SubscriptionContext};
use rmcp::{ErrorData, ServerHandler};
use serde_json::{json, Value};
use tokio::sync::Semaphore;

use crate::call::CallOptions;
use crate::catalog::Catalog;
use crate::dialect::Dialect;
use crate::model_output::ModelOutput;
use crate::registry::Registry;
use crate::runtime::{Continuation, Event, EventStream, RunEvent, Runtime};
use crate::spec::TransformTarget;
use handle::{Ask, PeerHandle};

/// How a server presents itself and what it allows.
#[derive(Debug, Clone)]
pub struct McpConfig {
    /// The server's name in `initialize`.
    pub name: String,
    /// The server's version in `initialize`.
    pub version: String,
    /// Instructions for the client's model.
    pub instructions: Option<String>,
    /// Tools per `tools/list` page (default 100).
    pub page_size: usize,
    /// Calls that may run at once per session (default 16); past it a call is refused with an
    /// error result saying so. A request without a session (stateless HTTP, every 2026-07-28
    /// request) is a session of its own, so this bounds nothing across requests there.
    pub max_concurrent_calls: usize,
    /// The request context every call gets (MCP has none of its own).
    pub context: Option<Value>,
    /// How long a call whose tool asked the client something mid-call waits for the client to
    /// call again with the answer (2026-07-28; default 10 minutes). Past it the tool's question
    /// fails and the call's slot is freed.
    pub input_timeout: std::time::Duration,
}

impl Default for McpConfig {
    fn default() -> Self {
        McpConfig {
            name: "toolsmith".into(),
            version: env!("CARGO_PKG_VERSION").into(),
            instructions: None,
            page_size: 100,
            max_concurrent_calls: 16,
            context: None,
            input_timeout: std::time::Duration::from_secs(600),
        }
    }
}

/// The `tools/list` entries of one version of the registry.
struct Listing {
    version: u64,
    catalog: Arc<Catalog>,
    tools: Arc<Vec<McpTool>>,
}

struct Shared {
    runtime: Runtime,
    config: McpConfig,
    listing: Mutex<Option<Listing>>,
    /// Calls whose tool asked the client mid-call (2026-07-28), by the request state the
    /// client brings back with the answer.
    parked: Mutex<std::collections::HashMap<String, Parked>>,
}

/// A running call waiting for its client to answer the question its tool asked.
struct Parked {
    /// The MCP name of the tool.
    tool: String,
    events: EventStream,
    seen: Vec<Event>,
    slot: Slot,
    reply: tokio::sync::oneshot::Sender<Value>,
    round: u32,
}

/// What one client session has set.
struct Session {
    level: Mutex<Option<LoggingLevel>>,
    calls: Arc<Semaphore>,
}

/// A handler with nothing but the tools: no prompts, resources or completion.
#[derive(Debug, Clone, Copy, Default)]
pub struct NoExtras;

impl ServerHandler for NoExtras {}

/// An MCP server over a runtime's registry. `E` answers prompts, resources, resource templates,
/// completion and resource subscriptions (its capabilities are merged in); tools, logging and
/// `list_changed` are the server's own.
#[derive(Clone)]
pub struct McpServer<E = NoExtras> {
    shared: Arc<Shared>,
    session: Arc<Session>,
    extras: E,
    /// Served without sessions (stateless Streamable HTTP): a request of a revision up to
    /// 2025-11-25 has no client the server could send a request to.
    stateless: bool,
}

impl McpServer<NoExtras> {
    /// A server over `runtime`'s tools.
    pub fn new(runtime: Runtime, config: McpConfig) -> Self {
        McpServer {
            session: Arc::new(Session::new(&config)),
            shared: Arc::new(Shared {
                runtime,
                config,
                listing: Mutex::new(None),
                parked: Mutex::default(),
            }),
            extras: NoExtras,
            stateless: false,
        }
    }
}

impl Session {
    fn new(config: &McpConfig) -> Self {
        Session {
            level: Mutex::new(None),
            calls: Arc::new(Semaphore::new(config.max_concurrent_calls.clamp(1, Semaphore::MAX_PERMITS))),
        }
    }
}

impl<E: ServerHandler + Clone> McpServer<E> {
    /// The same server, with prompts, resources and completion from `extras`.
    pub fn with_extras<X: ServerHandler + Clone>(self, extras: X) -> McpServer<X> {
        McpServer {
            shared: self.shared,
            session: self.session,
            extras,
            stateless: self.stateless,
        }
    }

    /// A handler for a new client session (fresh log level and call limit), sharing the tools.
    pub fn for_new_session(&self) -> Self {
        McpServer {
            shared: self.shared.clone(),
            session: Arc::new(Session::new(&self.shared.config)),
            extras: self.extras.clone(),
            stateless: self.stateless,
        }
    }

    /// The same server, told whether it is served without sessions (each request a session of
    /// its own, no way to send the client a request): then approval, suspension and a tool's
    /// `elicit`/`sample` on revisions up to 2025-11-25 say so at once instead of asking.
    pub(crate) fn without_sessions(mut self, stateless: bool) -> Self {
        self.stateless = stateless;
        self
    }

    /// This request has no session: the server cannot send its client a request (stateless
    /// HTTP, revisions up to 2025-11-25; 2026-07-28 asks through input-required results).
    fn sessionless(&self, ctx: &RequestContext<RoleServer>) -> bool {
        self.stateless && !modern(ctx)
    }

    /// The runtime the server calls through.
    pub fn runtime(&self) -> &Runtime {
        &self.shared.runtime
    }

    fn registry(&self) -> &Registry {
        self.shared.runtime.registry()
    }

    /// The current listing, rebuilt when the registry changed.
    fn listing(&self) -> Result<(Arc<Catalog>, Arc<Vec<McpTool>>), ErrorData> {
        let version = self.registry().version();
        let mut cached = self.shared.listing.lock().unwrap_or_else(|p| p.into_inner());
        if let Some(l) = cached.as_ref().filter(|l| l.version == version) {
            return Ok((l.catalog.clone(), l.tools.clone()));
        }
        let registry = Registry::try_from_tools(self.registry().tools()).map_err(|e| ErrorData::internal_error(e.to_string(), None))?;
        let catalog = Arc::new(Catalog::new(&self.shared.config.name, &self.shared.config.version, registry));
        let export = catalog
            .export(Dialect::Mcp)
            .map_err(|e| ErrorData::internal_error(e.to_string(), None))?;
        let entries = export.document()["tools"].as_array().cloned().unwrap_or_default();
        let tools = entries
            .into_iter()
            .map(serde_json::from_value::<McpTool>)
            .collect::<Result<Vec<_>, _>>()
            .map_err(|e| ErrorData::internal_error(format!("a catalog entry is not an MCP tool: {e}"), None))?;
        let tools = Arc::new(tools);
        *cached = Some(Listing {
            version,
            catalog: catalog.clone(),
            tools: tools.clone(),
        });
        Ok((catalog, tools))
    }

    /// The least severe level this request's client wants logs at (`None`: none).
    fn log_level(&self, ctx: &RequestContext<RoleServer>) -> Option<LoggingLevel> {
        if modern(ctx) {
            ctx.meta.log_level()
        } else {
            *self.session.level.lock().unwrap_or_else(|p| p.into_inner())
        }
    }

    /// Takes one of the session's call slots and starts what the request brings to a call:
    /// its client (progress, logs) and its cancellation. Refused when the session's calls are
    /// all running (`retry` says what to do then).
    fn take_slot(&self, ctx: &RequestContext<RoleServer>, retry: &str) -> Result<Slot, String> {
        let Ok(permit) = self.session.calls.clone().try_acquire_owned() else {
            return Err(format!(
                "Too many calls are running in this session (the limit is {}); wait for one to finish and {retry}.",
                self.shared.config.max_concurrent_calls
            ));
        };
        let (handle, flush, asks) = PeerHandle::start(
            ctx.peer.clone(),
            ctx.meta.get_progress_token(),
            self.log_level(ctx),
            ctx.client_capabilities(),
            ctx.protocol_version(),
            self.sessionless(ctx),
        );
        // A call that may be parked (2026-07-28: its tool can ask mid-call) gets its own token,
        // cancelled by whichever request carries it; any other call is the request's.
        let parkable = asks.is_some();
        let cancel = if parkable {
            tokio_util::sync::CancellationToken::new()
        } else {
            ctx.ct.clone()
        };
        let continuation = Continuation {
            cancellation: Some(cancel.clone()),
            mcp: Some(handle.clone()),
            timeout: None,
        };
        let mut slot = Slot {
            _permit: permit,
            continuation,
            flush,
            handle,
            asks,
            cancel,
            link: None,
        };
        if parkable {
            slot.link(ctx);
        }
        Ok(slot)
    }

    async fn run_call(&self, name: &str, tool_id: &str, args: Value, ctx: &RequestContext<RoleServer>) -> CallToolResponse {
        let slot = match self.take_slot(ctx, &format!("call `{name}` again")) {
            Ok(slot) => slot,
            Err(refused) => return error_result(refused),
        };
        let options = CallOptions {
            // From the OS's CSPRNG: on 2026-07-28 the id comes back as the request state that
            // names the waiting call, so it must not be guessable.
            tool_call_id: Some(format!("mcp_{}", uuid::Uuid::new_v4().simple())),
            context: self.shared.config.context.clone(),
            cancellation: slot.continuation.cancellation.clone(),
            mcp: slot.continuation.mcp.clone(),
            ..CallOptions::default()
        };
        let events = self.shared.runtime.call(tool_id, args, options);
        self.drive(name, events, Vec::new(), slot, ctx, 0).await
    }

    /// Follows a run to its end and answers the call. A tool that asks the client something
    /// mid-call on 2026-07-28 parks the run: the call is answered with the question (an
    /// input-required result whose request state names the parked run), and the client's
    /// next call brings the answer back ([`Self::resume_parked`]). A call approved or resumed
    /// within this request keeps reporting to it and stays cancellable by it.
    async fn drive(
        &self,
        name: &str,
        mut events: EventStream,
        mut seen: Vec<Event>,
        mut slot: Slot,
        ctx: &RequestContext<RoleServer>,
        round: u32,
    ) -> CallToolResponse {
        loop {
            let question = async {
                match slot.asks.as_mut() {
                    Some(asks) => asks.recv().await,
                    None => std::future::pending().await,
                }
            };
            tokio::select! {
                event = events.next() => match event {
                    Some(e) => seen.push(e),
                    None => break,
                },
                Some(ask) = question => return self.park(name, events, seen, slot, ask, round).await,
            }
        }
        let response = self.conclude_events(name, seen, ctx, round, &slot.continuation).await;
        slot.finish().await;
        response
    }

    /// Keeps a run whose tool asked the client a question, and answers the call with the
    /// question. Unanswered past `input_timeout`, the run is dropped (the tool's question
    /// fails, the slot is freed).
    async fn park(&self, name: &str, events: EventStream, seen: Vec<Event>, mut slot: Slot, ask: Ask, round: u32) -> CallToolResponse {
        // The request that carried the call ends with this answer; its end must not cancel
        // the call, and its notifications go out first.
        slot.unlink();
        slot.handle.flushed().await;
        let state = format!("mcp_input_{}", uuid::Uuid::new_v4().simple());
        let mut requests = InputRequests::new();
        requests.insert("input".to_owned(), ask.request);
        let parked = Parked {
            tool: name.to_owned(),
            events,
            seen,
            slot,
            reply: ask.reply,
            round,
        };
        self.shared
            .parked
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .insert(state.clone(), parked);
        let shared = Arc::downgrade(&self.shared);
        let (timeout, key) = (self.shared.config.input_timeout, state.clone());
        tokio::spawn(async move {
            tokio::time::sleep(timeout).await;
            if let Some(shared) = shared.upgrade() {
                let expired = shared.parked.lock().unwrap_or_else(|p| p.into_inner()).remove(&key);
                drop(expired);
            }
        });
        InputRequiredResult::new(Some(requests), Some(state)).into()
    }

    /// A 2026-07-28 client brings back the answer to a parked run's question: the tool gets
    /// it and the run goes on, reporting to (and cancellable by) this request.
    async fn resume_parked(
        &self,
        name: &str,
        state: &str,
        mut parked: Parked,
        responses: &rmcp::model::InputResponses,
        ctx: &RequestContext<RoleServer>,
    ) -> CallToolResponse {
        let answer = responses.get("input").or_else(|| responses.values().next()).cloned();
        let (true, Some(answer)) = (parked.tool == name, answer) else {
            let why = if parked.tool == name {
                "the answer to its question is missing"
            } else {
                "it is not a call of this tool"
            };
            self.shared
                .parked
                .lock()
                .unwrap_or_else(|p| p.into_inner())
                .insert(state.to_owned(), parked);
            return error_result(format!("The waiting call `{state}` cannot go on: {why}."));
        };
        parked.slot.link(ctx);
        parked
            .slot
            .handle
            .retarget(ctx.peer.clone(), ctx.meta.get_progress_token(), self.log_level(ctx));
        // A tool that stopped waiting (it was cancelled) just finishes its run.
        let _ = parked.reply.send(answer);
        self.drive(name, parked.events, parked.seen, parked.slot, ctx, parked.round).await
    }

    /// [`Self::conclude_events`] over a whole run (for runs continued within a request on
    /// revisions up to 2025-11-25, whose tools ask the client directly).
    async fn conclude(
        &self,
        name: &str,
        events: EventStream,
        ctx: &RequestContext<RoleServer>,
        round: u32,
        continuation: &Continuation,
    ) -> CallToolResponse {
        let events = events.collect().await;
        self.conclude_events(name, events, ctx, round, continuation).await
    }

    /// Turns a run's events into the call's response: the result, an error result, or a
    /// question to the client's user (approval, resume data).
    async fn conclude_events(
        &self,
        name: &str,
        events: Vec<Event>,
        ctx: &RequestContext<RoleServer>,
        round: u32,
        continuation: &Continuation,
    ) -> CallToolResponse {
        let Some(last) = events.iter().rev().find(|e| is_outcome(&e.raw)) else {
            return error_result(format!("Tool `{name}` ended without a result."));
        };
        let declined = events.iter().any(
            |e| matches!(&e.raw, RunEvent::ToolCallResumed { resume_data, .. } if resume_data.get("approved") == Some(&Value::Bool(false))),
        );
        match &last.raw {
            // The tool did not run: the "not approved" text is an error result (it has none of
            // the output schema's shape).
            RunEvent::ToolResult { model_output, .. } if declined => error_result(
                model_output
                    .as_ref()
                    .map(ModelOutput::to_text)
                    .unwrap_or_else(|| "Tool call was not approved.".into()),
            ),
            RunEvent::ToolResult {
                tool_name,
                result,
                model_output,
                ..
            }
            | RunEvent::BackgroundTaskCompleted {
                tool_name,
                result,
                model_output,
                ..
            } => self.result(name, tool_name, result, model_output.as_ref()),
            RunEvent::ToolError { error, .. } | RunEvent::BackgroundTaskFailed { error, .. } => {
                error_result(error["message"].as_str().unwrap_or("The tool failed.").to_owned())
            }
            RunEvent::ToolCallApproval { tool_call_id, .. } => self.ask_approval(name, tool_call_id, last, ctx, round, continuation).await,
            RunEvent::ToolCallSuspended { tool_call_id, .. } => self.ask_resume(name, tool_call_id, last, ctx, round, continuation).await,
            _ => error_result(format!("Tool `{name}` ended without a result.")),
        }
    }

    /// `name` is the tool's MCP name (for messages), `tool_id` its registry id.
    fn result(&self, name: &str, tool_id: &str, result: &Value, model_output: Option<&ModelOutput>) -> CallToolResponse {
        let structured = self.registry().get(tool_id).is_some_and(|t| t.spec().output_schema.is_some()) && result.is_object();
        let model = model_output.cloned().unwrap_or_else(|| match result {
            Value::String(s) => ModelOutput::Text(s.clone()),
            other => ModelOutput::Json(other.clone()),
        });
        let mut message = model.to_tool_result(Dialect::Mcp, "").unwrap_or_default();
        if structured {
            if model_output.is_some() {
                if let Some(content) = message["content"].as_array_mut() {
                    content.push(json!({"type": "text", "text": result.to_string()}));
                }
            }
            message["structuredContent"] = result.clone();
        }
        match serde_json::from_value::<CallToolResult>(message) {
            Ok(mut r) => {
                // 2026-07-28 requires it; rmcp strips it for older revisions.
                r.result_type = Some(rmcp::model::ResultType::COMPLETE);
                r.into()
            }
            Err(e) => error_result(format!("Tool `{name}` produced content MCP cannot carry: {e}")),
        }
    }

    async fn ask_approval(
        &self,
        name: &str,
        id: &str,
        event: &Event,
        ctx: &RequestContext<RoleServer>,
        round: u32,
        continuation: &Continuation,
    ) -> CallToolResponse {
        let shown = event.view(TransformTarget::Display).unwrap_or(&event.raw);
        let args = match shown {
            RunEvent::ToolCallApproval { args, .. } => args.to_string(),
            _ => String::new(),
        };
        let message = format!("Allow the tool `{name}` to run with these arguments?\n{args}");
        let schema = json!({
            "type": "object",
            "properties": {
                "approved": {"type": "boolean", "title": "Approve", "description": "Let the tool run."},
                "reason": {"type": "string", "title": "Reason", "description": "Why (told to the model when you decline)."}
            },
            "required": ["approved"]
        });
        let not_asked = |why: &str| {
            error_result(format!(
                "Tool `{name}` requires approval before it runs; it was not run ({why}). The call waits as `{id}`: a person can approve it with `toolsmith call {id} --approve` or decline it with `toolsmith call {id} --decline REASON` (`toolsmith pending` lists waiting calls)."
            ))
        };
        match self.elicit(ctx, "approval", id, &message, schema).await {
            Asked::Answer(answer) => {
                let stream = self.decide(id, &answer, continuation.clone()).await;
                match stream {
                    Ok(s) => Box::pin(self.conclude(name, s, ctx, round + 1, continuation)).await,
                    Err(e) => error_result(format!("The approval of `{id}` could not be applied: {e}")),
                }
            }
            Asked::Deferred(r) => r,
            Asked::Cannot(why) => not_asked(&why),
        }
    }

    async fn ask_resume(
        &self,
        name: &str,
        id: &str,
        event: &Event,
        ctx: &RequestContext<RoleServer>,
        round: u32,
        continuation: &Continuation,
    ) -> CallToolResponse {
        let resume_schema = match &event.raw {
            RunEvent::ToolCallSuspended { resume_schema, .. } => resume_schema.as_ref(),
            _ => None,
        };
        let payload = match event.view(TransformTarget::Display).unwrap_or(&event.raw) {
            RunEvent::ToolCallSuspended { suspend_payload, .. } => suspend_payload.to_string(),
            _ => String::new(),
        };
        let waiting = |why: &str| {
            let text = format!(
                "Tool `{name}` is waiting for input ({why}): {payload}. The call waits as `{id}`; continue it with `toolsmith resume {id} 'JSON'` (data matching its resume schema)."
            );
            CallToolResult::success(vec![ContentBlock::text(text)]).into()
        };
        let Some(schema) = resume_schema.and_then(flat_form) else {
            return waiting("its resume data is not a flat form a client can ask for");
        };
        if round >= 8 {
            return waiting("it asked too many times in one call");
        }
        let message = format!("Tool `{name}` needs your input to continue:\n{payload}");
        match self.elicit(ctx, "resume", id, &message, schema).await {
            Asked::Answer(answer) if answer.action == ElicitationAction::Accept => {
                let data = answer.content.unwrap_or(json!({}));
                match self.shared.runtime.resume_with(id, data, continuation.clone()).await {
                    Ok(s) => Box::pin(self.conclude(name, s, ctx, round + 1, continuation)).await,
                    Err(e) => error_result(format!("The answer could not be used ({e}); the call still waits as `{id}`.")),
                }
            }
            Asked::Answer(_) => waiting("the user did not answer"),
            Asked::Deferred(r) => r,
            Asked::Cannot(why) => waiting(&why),
        }
    }

    /// Asks the client's user: a request on older revisions, an input-required result (the
    /// client answers and calls again, naming the waiting call) on 2026-07-28.
    async fn elicit(&self, ctx: &RequestContext<RoleServer>, key: &str, id: &str, message: &str, schema: Value) -> Asked {
        if self.sessionless(ctx) {
            return Asked::Cannot(format!("{SESSIONLESS}, so the client's user cannot be asked"));
        }
        if ctx.client_capabilities().is_none_or(|c| c.elicitation.is_none()) {
            return Asked::Cannot("the client cannot ask its user: it did not declare elicitation".into());
        }
        let requested_schema: ElicitationSchema = match serde_json::from_value(schema) {
            Ok(s) => s,
            Err(e) => return Asked::Cannot(format!("the form cannot be shown: {e}")),
        };
        let params = ElicitRequestParams::FormElicitationParams {
            meta: None,
            message: message.to_owned(),
            requested_schema,
        };
        if modern(ctx) {
            let mut requests = InputRequests::new();
            requests.insert(key.to_owned(), InputRequest::Elicitation(ElicitRequest::new(params)));
            return Asked::Deferred(InputRequiredResult::new(Some(requests), Some(id.to_owned())).into());
        }
        match ctx.peer.create_elicitation(params).await {
            Ok(answer) => Asked::Answer(answer),
            Err(e) => Asked::Cannot(format!("the client did not answer: {e}")),
        }
    }

    /// A 2026-07-28 client calls again with its user's answer and the waiting call's id.
    async fn continue_call(
        &self,
        name: &str,
        state: &str,
        responses: &rmcp::model::InputResponses,
        ctx: &RequestContext<RoleServer>,
    ) -> CallToolResponse {
        let parked = self.shared.parked.lock().unwrap_or_else(|p| p.into_inner()).remove(state);
        if let Some(parked) = parked {
            return self.resume_parked(name, state, parked, responses, ctx).await;
        }
        let waiting = match self.shared.runtime.pending_call(state) {
            Ok(Some(call)) => call,
            Ok(None) => {
                return error_result(format!(
                    "No call waits as `{state}` (it was already resolved, or its wait for an answer expired); call `{name}` again."
                ))
            }
            Err(e) => return error_result(format!("The waiting call `{state}` could not be read: {e}")),
        };
        if self
            .listing()
            .ok()
            .and_then(|(c, _)| c.resolve(Dialect::Mcp, name).map(str::to_owned))
            .as_deref()
            != Some(&waiting.tool_name)
        {
            return error_result(format!("The waiting call `{state}` is not a call of `{name}`."));
        }
        let answer = ["approval", "resume"]
            .into_iter()
            .find_map(|k| responses.get(k))
            .and_then(|v| serde_json::from_value::<ElicitResult>(v.clone()).ok());
        let Some(answer) = answer else {
            return error_result(format!(
                "The answer for the waiting call `{state}` is missing or not an elicitation result."
            ));
        };
        if waiting.kind == crate::runtime::PendingKind::Suspended && answer.action != ElicitationAction::Accept {
            return CallToolResult::success(vec![ContentBlock::text(format!(
                "The user did not answer; the call still waits as `{state}`."
            ))])
            .into();
        }
        // The continued call reports to, and is cancelled by, this request.
        let slot = match self.take_slot(ctx, "answer again") {
            Ok(slot) => slot,
            Err(refused) => return error_result(refused),
        };
        let continuation = slot.continuation.clone();
        let stream = match waiting.kind {
            crate::runtime::PendingKind::Approval => self.decide(state, &answer, continuation).await,
            crate::runtime::PendingKind::Suspended => {
                let data = answer.content.unwrap_or(json!({}));
                self.shared.runtime.resume_with(state, data, continuation).await
            }
        };
        match stream {
            Ok(s) => self.drive(name, s, Vec::new(), slot, ctx, 1).await,
            Err(e) => {
                slot.finish().await;
                error_result(format!("The answer could not be used: {e}"))
            }
        }
    }

    /// Approves or declines a waiting call as the user answered the approval form; a decline
    /// without a reason says how the user answered.
    async fn decide(
        &self,
        id: &str,
        answer: &ElicitResult,
        continuation: Continuation,
    ) -> Result<EventStream, crate::runtime::RuntimeError> {
        let field = |k: &str| answer.content.as_ref().and_then(|c| c.get(k));
        let runtime = &self.shared.runtime;
        if answer.action == ElicitationAction::Accept && field("approved").and_then(Value::as_bool) == Some(true) {
            return runtime.approve_with(id, continuation).await;
        }
        let reason = field("reason")
            .and_then(Value::as_str)
            .map(str::to_owned)
            .unwrap_or_else(|| match answer.action {
                ElicitationAction::Cancel => "the user dismissed the request".into(),
                _ => "the user declined".into(),
            });
        runtime.decline(id, &reason).await
    }
}

/// A running call's session slot, and what its request brings to it.
struct Slot {
    _permit: tokio::sync::OwnedSemaphorePermit,
    continuation: Continuation,
    flush: tokio::task::JoinHandle<()>,
    handle: Arc<PeerHandle>,
    /// The questions its tool asks mid-call (2026-07-28).
    asks: Option<tokio::sync::mpsc::UnboundedReceiver<Ask>>,
    /// The call's cancellation: the request's own token, or (a call that may be parked) the
    /// call's, linked to the request carrying it.
    cancel: tokio_util::sync::CancellationToken,
    /// Cancels the call when the request carrying it is cancelled.
    link: Option<tokio::task::AbortHandle>,
}

impl Slot {
    /// The call is cancelled with this request from now on.
    fn link(&mut self, ctx: &RequestContext<RoleServer>) {
        self.unlink();
        let (request, call) = (ctx.ct.clone(), self.cancel.clone());
        let watcher = tokio::spawn(async move {
            tokio::select! {
                _ = request.cancelled() => call.cancel(),
                _ = call.cancelled() => {}
            }
        });
        self.link = Some(watcher.abort_handle());
    }

    fn unlink(&mut self) {
        if let Some(link) = self.link.take() {
            link.abort();
        }
    }

    /// Lets every notification of the call go out (before its result), then frees the slot.
    async fn finish(self) {
        let Slot {
            continuation,
            flush,
            handle,
            ..
        } = self;
        drop((continuation, handle));
        let _ = flush.await;
    }
}

enum Asked {
    Answer(ElicitResult),
    Deferred(CallToolResponse),
    Cannot(String),
}

/// Client requests `rmcp` parses into typed params.
const STANDARD_METHODS: [&str; 15] = [
    "initialize",
    "ping",
    "server/discover",
    "tools/list",
    "tools/call",
    "logging/setLevel",
    "prompts/list",
    "prompts/get",
    "resources/list",
    "resources/templates/list",
    "resources/read",
    "resources/subscribe",
    "resources/unsubscribe",
    "completion/complete",
    "subscriptions/listen",
];

/// Why a request served without a session cannot be sent a request of the server's own.
pub(crate) const SESSIONLESS: &str =
    "this MCP server is stateless: it keeps no sessions and cannot send the client a request during a call";

fn modern(ctx: &RequestContext<RoleServer>) -> bool {
    ctx.protocol_version().is_some_and(|v| v >= ProtocolVersion::V_2026_07_28)
}

fn is_outcome(e: &RunEvent) -> bool {
    matches!(
        e,
        RunEvent::ToolResult { .. }
            | RunEvent::ToolError { .. }
            | RunEvent::ToolCallApproval { .. }
            | RunEvent::ToolCallSuspended { .. }
            | RunEvent::BackgroundTaskCompleted { .. }
            | RunEvent::BackgroundTaskFailed { .. }
    )
}

fn error_result(text: String) -> CallToolResponse {
    CallToolResult::error(vec![ContentBlock::text(text)]).into()
}

/// A resume schema as an elicitation form: an object whose properties are all strings,
/// numbers, integers, booleans or enums (what MCP forms can show). `None` otherwise.
fn flat_form(schema: &Value) -> Option<Value> {
    let props = schema.get("properties")?.as_object()?;
    let mut out = serde_json::Map::new();
    for (k, p) in props {
        let mut p = p.clone();
        // schemars writes optional fields as `type: [T, "null"]`; a form field is just T.
        if let Some(types) = p.get("type").and_then(Value::as_array) {
            let non_null: Vec<&Value> = types.iter().filter(|t| *t != "null").collect();
            if non_null.len() != 1 {
                return None;
            }
            p["type"] = non_null[0].clone();
        }
        let ty = p.get("type").and_then(Value::as_str)?;
        if !matches!(ty, "string" | "number" | "integer" | "boolean") {
            return None;
        }
        if let Some(obj) = p.as_object_mut() {
            obj.retain(|k, _| {
                matches!(
                    k.as_str(),
                    "type" | "title" | "description" | "enum" | "default" | "minimum" | "maximum" | "format"
                )
            });
        }
        out.insert(k.clone(), p);
    }
    let mut form = json!({"type": "object", "properties": out});
    if let Some(req) = schema.get("required") {
        form["required"] = req.clone();
    }
    serde_json::from_value::<ElicitationSchema>(form.clone()).ok().map(|_| form)
}

impl<E: ServerHandler + Clone> ServerHandler for McpServer<E> {
    fn get_info(&self) -> ServerConfig {
        let extra = self.extras.get_info().capabilities;
        let mut caps = ServerCapabilities::builder()
            .enable_logging()
            .enable_tools()
            .enable_tool_list_changed()
            .build();
        caps.prompts = extra.prompts;
        caps.resources = extra.resources;
        caps.completions = extra.completions;
        let mut info = ServerConfig::new(caps).with_server_info(Implementation::new(&self.shared.config.name, &self.shared.config.version));
        if let Some(i) = &self.shared.config.instructions {
            info = info.with_instructions(i.clone());
        }
        info
    }

    async fn list_tools(
        &self,
        request: Option<PaginatedRequestParams>,
        _ctx: RequestContext<RoleServer>,
    ) -> Result<ListToolsResult, ErrorData> {
        let (_, tools) = self.listing()?;
        let start = match request.and_then(|r| r.cursor) {
            None => 0,
            Some(c) => c
                .parse::<usize>()
                .ok()
                .filter(|n| *n <= tools.len())
                .ok_or_else(|| ErrorData::invalid_params(format!("the cursor `{c}` is not one this server gave"), None))?,
        };
        let end = (start + self.shared.config.page_size.max(1)).min(tools.len());
        let mut result = ListToolsResult::with_all_items(tools[start..end].to_vec());
        result.next_cursor = (end < tools.len()).then(|| end.to_string());
        Ok(result)
    }

    fn get_tool(&self, name: &str) -> Option<McpTool> {
        self.listing().ok()?.1.iter().find(|t| t.name == name).cloned()
    }

    async fn call_tool(&self, request: CallToolRequestParams, ctx: RequestContext<RoleServer>) -> Result<CallToolResponse, ErrorData> {
        let name = request.name.to_string();
        let (catalog, _) = self.listing()?;
        let Some(id) = catalog.resolve(Dialect::Mcp, &name).map(str::to_owned) else {
            let known: Vec<String> = self.listing()?.1.iter().map(|t| t.name.to_string()).collect();
            return Err(ErrorData::invalid_params(
                format!("There is no tool `{name}`. Available tools: {}", known.join(", ")),
                Some(json!({"available": known})),
            ));
        };
        if let (Some(state), Some(responses)) = (&request.request_state, &request.input_responses) {
            return Ok(self.continue_call(&name, state, responses, &ctx).await);
        }
        let args = Value::Object(request.arguments.unwrap_or_default());
        Ok(self.run_call(&name, &id, args, &ctx).await)
    }

    async fn set_level(&self, request: SetLevelRequestParams, _ctx: RequestContext<RoleServer>) -> Result<(), ErrorData> {
        *self.session.level.lock().unwrap_or_else(|p| p.into_inner()) = Some(request.level);
        Ok(())
    }

    async fn on_initialized(&self, ctx: NotificationContext<RoleServer>) {
        // Sessions of older revisions hear about tool changes as notifications.
        let mut changes = self.registry().subscribe();
        let peer = ctx.peer;
        tokio::spawn(async move {
            // rmcp has no "session closed" future: look every 30 s, so a finished session's
            // watcher does not wait for the next change to end.
            let mut check = tokio::time::interval(std::time::Duration::from_secs(30));
            loop {
                tokio::select! {
                    changed = changes.changed() => {
                        if changed.is_err() || peer.is_transport_closed() || peer.notify_tool_list_changed().await.is_err() {
                            break;
                        }
                    }
                    _ = check.tick() => {
                        if peer.is_transport_closed() {
                            break;
                        }
                    }
                }
            }
        });
    }

    fn accepted_subscription_filter(&self, _requested: &SubscriptionFilter) -> Option<SubscriptionFilter> {
        Some(SubscriptionFilter::builder().tools_list_changed().build())
    }

    async fn listen(&self, cx: SubscriptionContext) -> Result<(), ErrorData> {
        let mut changes = self.registry().subscribe();
        loop {
            tokio::select! {
                _ = cx.cancelled() => return Ok(()),
                changed = changes.changed() => {
                    if changed.is_err() || cx.sink().notify_tool_list_changed().await.is_err() {
                        return Ok(());
                    }
                }
            }
        }
    }

    async fn on_custom_request(&self, request: CustomRequest, ctx: RequestContext<RoleServer>) -> Result<CustomResult, ErrorData> {
        // rmcp hands a standard request whose params do not parse here, as a custom one; its
        // default would call the method unknown (-32601).
        if STANDARD_METHODS.contains(&request.method.as_str()) {
            return Err(ErrorData::invalid_params(
                format!("The params of `{}` are missing or not valid.", request.method),
                None,
            ));
        }
        self.extras.on_custom_request(request, ctx).await
    }

    async fn complete(&self, request: CompleteRequestParams, ctx: RequestContext<RoleServer>) -> Result<CompleteResult, ErrorData> {
        self.extras.complete(request, ctx).await
    }

    async fn list_prompts(
        &self,
        request: Option<PaginatedRequestParams>,
        ctx: RequestContext<RoleServer>,
    ) -> Result<ListPromptsResult, ErrorData> {
        self.extras.list_prompts(request, ctx).await
    }

    async fn get_prompt(&self, request: GetPromptRequestParams, ctx: RequestContext<RoleServer>) -> Result<GetPromptResponse, ErrorData> {
        self.extras.get_prompt(request, ctx).await
    }

    async fn list_resources(
        &self,
        request: Option<PaginatedRequestParams>,
        ctx: RequestContext<RoleServer>,
    ) -> Result<ListResourcesResult, ErrorData> {
        self.extras.list_resources(request, ctx).await
    }

    async fn list_resource_templates(
        &self,
        request: Option<PaginatedRequestParams>,
        ctx: RequestContext<RoleServer>,
    ) -> Result<ListResourceTemplatesResult, ErrorData> {
        self.extras.list_resource_templates(request, ctx).await
    }

    async fn read_resource(
        &self,
        request: ReadResourceRequestParams,
        ctx: RequestContext<RoleServer>,
    ) -> Result<ReadResourceResponse, ErrorData> {
        self.extras.read_resource(request, ctx).await
    }

    async fn subscribe(&self, request: SubscribeRequestParams, ctx: RequestContext<RoleServer>) -> Result<(), ErrorData> {
        self.extras.subscribe(request, ctx).await
    }

    async fn unsubscribe(&self, request: UnsubscribeRequestParams, ctx: RequestContext<RoleServer>) -> Result<(), ErrorData> {
        self.extras.unsubscribe(request, ctx).await
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn flat_forms_accept_primitives_and_refuse_nesting() {
        let schema = json!({"type": "object", "properties": {
            "overwrite": {"type": "boolean", "description": "Replace it"},
            "note": {"type": ["string", "null"]}
        }, "required": ["overwrite"]});
        let form = flat_form(&schema).unwrap();
        assert_eq!(form["properties"]["note"]["type"], "string");
        assert_eq!(form["required"], json!(["overwrite"]));
        let nested = json!({"type": "object", "properties": {"a": {"type": "object"}}});
        assert!(flat_form(&nested).is_none());
        assert!(flat_form(&json!({"type": "string"})).is_none());
    }
}
