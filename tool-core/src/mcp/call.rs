//! Running a `tools/call` and answering it with how the run ended.
//!
//! Owns the way from a call request to its response: which tool it names ([`ToolRef`]),
//! whether the caller's identity grants the tool's scopes (an error result naming the missing
//! ones; over HTTP the transport answers `403` before the call gets here),
//! starting the run in the runtime (with the client's idempotency key, or deciding a waiting
//! call when it carries a decision token: `call_meta`), following it to its end ([`McpServer::drive`]) and mapping
//! its [`Outcome`] to the MCP answer with one `match` ([`McpServer::answer`]). Asking the
//! client's user is `ask`'s, keeping a run whose tool asked mid-call is `parked`'s, the slot a
//! call runs in is `session`'s, and the shape of a result is `convert`'s.

use std::sync::Arc;

use rmcp::model::{
    CallToolRequestParams, CallToolResponse, CallToolResult, ContentBlock, InputResponses, ReadResourceResult, ResourceContents,
};
use rmcp::service::{RequestContext, RoleServer};
use rmcp::{ErrorData, ServerHandler};
use serde_json::{Value, json};
use tracing::Instrument;

use super::call_meta::{CallMeta, scoped_key};
use super::convert;
use super::identity;
use super::results::{KeptResult, RESULTS_URI, ResultError};
use super::server::{McpServer, modern};
use super::session::Slot;
use super::tool_search;
use crate::Caller;
use crate::call::CallOptions;
use crate::catalog::{LoadedTools, SEARCH_TOOL};
use crate::context::{CallData, CallEnv};
use crate::runtime::{EventStream, Outcome};
use crate::tool::{Tool, ToolOutput};

/// The tool a call names: its MCP name (what messages say) and its registry id.
#[derive(Debug, Clone)]
pub(super) struct ToolRef {
    pub(super) name: String,
    pub(super) id: String,
}

/// The id of a call made over MCP: `mcp_` and `uuid` in 32 lowercase hex digits, written
/// into a fixed buffer and copied once (`format!` cost about 900 instructions a call).
fn mcp_call_id(uuid: uuid::Uuid) -> String {
    let mut hex = [0u8; uuid::fmt::Simple::LENGTH];
    let mut id = String::with_capacity(4 + uuid::fmt::Simple::LENGTH);
    id.push_str("mcp_");
    // `encode_lower` hands back the digits as text: no UTF-8 check to repeat.
    id.push_str(uuid.simple().encode_lower(&mut hex));
    id
}

/// A call's answer that is an error result saying `text`.
pub(super) fn error_result(text: String) -> CallToolResponse {
    CallToolResult::error(vec![ContentBlock::text(text)]).into()
}

impl<E: ServerHandler + Clone> McpServer<E> {
    /// Answers a `tools/call`: a new call, or (2026-07-28) a call coming back with the answer
    /// to what it asked. An unknown tool is a protocol error naming the tools there are.
    pub(super) async fn call(
        &self,
        mut request: CallToolRequestParams,
        ctx: &RequestContext<RoleServer>,
    ) -> Result<CallToolResponse, ErrorData> {
        let listing = self.listing()?;
        let name = std::mem::take(&mut request.name).into_owned();
        let caller = identity::of(ctx);
        let loaded = if self.searching() {
            let loaded = self.loaded(&listing, ctx, tool_search::metas(ctx, request.meta.as_ref().map(|m| &*m.0)))?;
            if name == SEARCH_TOOL && listing.id(SEARCH_TOOL).is_none() {
                let args = Value::Object(request.arguments.unwrap_or_default());
                return Ok(Box::pin(self.answer_search(&listing, &args, &loaded, caller, ctx)).await);
            }
            Some(loaded)
        } else {
            None
        };
        let Some(id) = listing.id(&name).map(str::to_owned) else {
            // With tool search, the tools this request can see: those loaded, and the search.
            let seen = |n: &&str| {
                loaded
                    .as_ref()
                    .is_none_or(|l| listing.id(n).is_none_or(|id| !listing.deferred(id) || l.contains(id)))
            };
            let mut known: Vec<&str> = listing.names().filter(seen).collect();
            if loaded.is_some() && listing.id(SEARCH_TOOL).is_none() {
                known.push(SEARCH_TOOL);
            }
            return Err(ErrorData::invalid_params(
                format!("There is no tool `{name}`. Available tools: {}", known.join(", ")),
                Some(json!({"available": known})),
            ));
        };
        // A tool MCP cannot list is a definition error: its calls are refused, naming why
        // (its listing fails whole the same way).
        if let Some(Err(unlistable)) = listing.entry_of(&id) {
            return Err(ErrorData::internal_error(
                format!("the tool `{name}` cannot be served over MCP: {unlistable}"),
                None,
            ));
        }
        if let Some(refused) = loaded
            .as_ref()
            .and_then(|loaded| self.refuse_unloaded(&listing, &name, &id, loaded))
        {
            return Ok(refused);
        }
        if let Some(caller) = caller {
            let missing = caller.missing(listing.scopes(&name).unwrap_or_default());
            if !missing.is_empty() {
                return Ok(error_result(identity::missing_text(&name, &missing)));
            }
        }
        // The tool as listed: its spec is read here without another registry lookup.
        let registered = listing.tool_of(&id);
        if let Some(refused) = self.missing_capability(&id, registered, ctx) {
            return Err(refused);
        }
        let tool = ToolRef { name, id };
        if let Some(refused) = self.refuse_foreground(&tool, registered, ctx) {
            return Err(refused);
        }
        // rmcp hands a request's `_meta` to its context; a params `_meta` left in place counts too.
        let meta = [Some(&ctx.meta.0), request.meta.as_ref().map(|m| &m.0)];
        let asked = CallMeta::read(meta.iter().flatten().map(|m| &***m))?;
        // The rarely taken branches here and below are boxed: inline, their futures would size
        // every call's future (see `call_tool`).
        if let Some(token) = &asked.decision {
            return Ok(Box::pin(self.decide_by_token(&tool, token, ctx)).await);
        }
        let trace_context = meta.into_iter().flatten().find(|m| m.get_traceparent().is_some());
        let trace_context = trace_context.map(|m| (m.get_traceparent(), m.get_tracestate()));
        if let (Some(state), Some(responses)) = (&request.request_state, &request.input_responses) {
            let continued = Box::pin(self.continue_call(&tool, state, responses, ctx));
            return match self.continued_span(&tool, state, trace_context) {
                Some(span) => continued.instrument(span).await,
                None => continued.await,
            };
        }
        let args = Value::Object(request.arguments.unwrap_or_default());
        let key = asked.idempotency_key.map(|key| scoped_key(&key, caller));
        // Answers brought without a request state are the tool's to find when it asks (SEP-2322).
        let given = request.input_responses.filter(|_| modern(ctx)).unwrap_or_default();
        // The loaded set goes with the call: kept with it if it waits (see `CallData::loaded_tools`).
        Ok(self.run_call(&tool, (args, key, given, loaded), ctx, trace_context).await)
    }

    /// The refusal of a call whose tool requires a client capability (`mcp(requires = [...])`)
    /// this request's client did not declare: a missing required client capability (`-32021`,
    /// SEP-2575; HTTP 400 on 2026-07-28), naming them in `requiredCapabilities`, before the tool
    /// runs.
    fn missing_capability(&self, id: &str, tool: Option<&dyn Tool>, ctx: &RequestContext<RoleServer>) -> Option<ErrorData> {
        let requires = &tool?.spec().presentation.mcp.requires;
        if requires.is_empty() {
            return None;
        }
        let declared = ctx.client_capabilities();
        let has = |capability: &str| {
            declared.as_ref().is_some_and(|c| match capability {
                "elicitation" => c.elicitation.is_some(),
                "sampling" => c.sampling.is_some(),
                "roots" => c.roots.is_some(),
                _ => false,
            })
        };
        let missing: serde_json::Map<String, Value> = requires.iter().filter(|c| !has(c)).map(|c| (c.clone(), json!({}))).collect();
        if missing.is_empty() {
            return None;
        }
        let names: Vec<&str> = missing.keys().map(String::as_str).collect();
        Some(ErrorData::new(
            rmcp::model::ErrorCode::MISSING_REQUIRED_CLIENT_CAPABILITY,
            format!(
                "The tool `{id}` needs the client capabilities {}, which this client did not declare.",
                names.join(", ")
            ),
            Some(json!({"requiredCapabilities": missing})),
        ))
    }

    /// The span of a call continued by a 2026-07-28 follow-up request that carries W3C trace
    /// context (SEP-414): a call span of its own whose parent is that request's, so the rest of
    /// the run (and the runtime's approval or resume, which adopts the current call span) is in
    /// the follow-up's trace. `None` without trace context (or spans exported).
    #[cfg(feature = "otel")]
    fn continued_span(&self, tool: &ToolRef, call_id: &str, trace_context: Option<(Option<&str>, Option<&str>)>) -> Option<tracing::Span> {
        let (traceparent, tracestate) = trace_context?;
        let registered = self.registry().get(&tool.id);
        let span = crate::call::trace::call_span(&tool.id, call_id, registered.as_ref().map(|t| t.spec()));
        crate::otel::adopt_trace_context(&span, traceparent, tracestate).then_some(span)
    }

    #[cfg(not(feature = "otel"))]
    fn continued_span(&self, _: &ToolRef, _: &str, _: Option<(Option<&str>, Option<&str>)>) -> Option<tracing::Span> {
        None
    }

    /// Runs a new call (its arguments, and the client's idempotency key when it gave one)
    /// inside its span (`execute_tool`), whose parent is the request's W3C trace context when
    /// it has one (SEP-414) and spans are exported (feature `otel`).
    async fn run_call(
        &self,
        tool: &ToolRef,
        (args, idempotency_key, given, loaded_tools): (Value, Option<String>, InputResponses, Option<LoadedTools>),
        ctx: &RequestContext<RoleServer>,
        trace_context: Option<(Option<&str>, Option<&str>)>,
    ) -> CallToolResponse {
        let slot = match self.take_slot(ctx, &format_args!("call `{}` again", tool.name)) {
            Ok(slot) => slot,
            Err(refused) => return error_result(refused),
        };
        if !given.is_empty() {
            slot.answered_in_advance(given);
        }
        // Read once: the identified caller, else the static token's holder (who has no subject).
        let caller = identity::caller_of(ctx);
        // From a CSPRNG (rand's thread-local ChaCha, seeded from the OS): on 2026-07-28 the id
        // comes back as the request state that names the waiting call (and in a task's id), so
        // it must not be guessable.
        let call_id = mcp_call_id(uuid::Uuid::new_v4());
        // A tool that gathers its input first asks within this request; its resumed run is the
        // task (`ask::answer_waiting`).
        let as_task = self.runs_as_task(tool, ctx) && !self.asks_first(&tool.id);
        // The id moves into the call: a task's id is taken from it first.
        let task_id = as_task.then(|| super::tasks::task_id_of(&call_id));
        let mut options = CallOptions {
            data: CallData {
                background: as_task.then(|| self.task_override(&call_id, ctx)),
                tool_call_id: Some(call_id),
                // An authorized caller acts as its token's subject, whatever the configured
                // context says.
                resource_id: caller.as_ref().and_then(Caller::subject).map(str::to_owned),
                caller: caller.map(Arc::new),
                context: self.shared.config.context.clone(),
                idempotency_key,
                // The server's rule goes with the set: the runtime's check then agrees with ours.
                deferral: loaded_tools.as_ref().map(|_| self.shared.config.deferral.clone()),
                loaded_tools,
                ..Default::default()
            },
            env: slot.continuation.clone(),
        };
        let span = self.shared.runtime.call_span(&tool.id, &mut options);
        #[cfg(feature = "otel")]
        if let Some((traceparent, tracestate)) = trace_context {
            crate::otel::adopt_trace_context(&span, traceparent, tracestate);
        }
        #[cfg(not(feature = "otel"))]
        let _ = trace_context;
        // A call the request reads to its end runs in the request's task; a task's call is
        // left running when the request is answered, so it is a task of its own.
        let events = self
            .shared
            .runtime
            .call_in(span.clone(), &tool.id, args.into(), (options, !as_task));
        if let Some(task_id) = task_id {
            let continuation = slot.continuation.clone();
            let handle = Box::pin(self.task_handle(tool, events, &task_id, ctx, &continuation));
            let response = handle.instrument(span).await;
            // The slot flushes once every handle on its client is gone.
            drop(continuation);
            slot.finish().await;
            return response;
        }
        // The whole request is the call's: asking the client for approval or resume data too.
        self.drive(tool, events, slot, ctx, 0).instrument(span).await
    }

    /// Follows a run to its end and answers the call. A tool that asks the client something
    /// mid-call on 2026-07-28 parks the run: the call is answered with the question (an
    /// input-required result whose request state names the parked run), and the client's
    /// next call brings the answer back ([`Self::resume_parked`]). A call approved or resumed
    /// within this request keeps reporting to it and stays cancellable by it.
    pub(super) async fn drive(
        &self,
        tool: &ToolRef,
        mut events: EventStream,
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
                // The events only matter to the run's other listeners: the answer is its outcome.
                event = events.next() => if event.is_none() { break },
                Some(ask) = question => return Box::pin(self.park(tool, events, slot, ask, (round, ctx))).await,
            }
        }
        let response = self.answer(tool, events.take_outcome(), ctx, round, &slot.continuation).await;
        slot.finish().await;
        response
    }

    /// [`Self::answer`] once a whole run is over (for runs continued within a request on
    /// revisions up to 2025-11-25, whose tools ask the client directly).
    pub(super) async fn conclude(
        &self,
        tool: &ToolRef,
        events: EventStream,
        ctx: &RequestContext<RoleServer>,
        round: u32,
        continuation: &CallEnv,
    ) -> CallToolResponse {
        let run = events.finish().await;
        self.answer(tool, Some(run.outcome), ctx, round, continuation).await
    }

    /// Turns how a run ended into the call's response: the result, an error result, or a
    /// question to the client's user (approval, resume data).
    pub(super) async fn answer(
        &self,
        tool: &ToolRef,
        outcome: Option<Outcome>,
        ctx: &RequestContext<RoleServer>,
        round: u32,
        continuation: &CallEnv,
    ) -> CallToolResponse {
        match outcome {
            Some(Outcome::Done(output)) => self.result(tool, &output, ctx).await,
            // The tool did not run: the "not approved" text is an error result (it has none of
            // the output schema's shape).
            Some(Outcome::Declined { reason }) => error_result(Outcome::declined_text(&reason)),
            Some(Outcome::Failed(error)) => error_result(error.message().to_owned()),
            Some(Outcome::AwaitingApproval(waiting)) => {
                let asking = Box::pin(self.ask_approval(tool, &waiting, ctx, round, continuation));
                asking.instrument(crate::call::trace::approval_span()).await
            }
            Some(Outcome::Suspended(waiting)) => Box::pin(self.ask_resume(tool, &waiting, ctx, round, continuation)).await,
            // An MCP client cannot answer a server's tool: the call waits for the application.
            Some(Outcome::AwaitingResult(waiting)) => error_result(format!(
                "Tool `{}` is answered by the application, not by this server: its call `{}` waits for the application's result (`{} call {} --result 'JSON'`, or `Runtime::submit_result`), and this request cannot give it.",
                tool.name,
                waiting.id(),
                crate::error::operator(),
                waiting.id()
            )),
            Some(Outcome::Backgrounded(_)) | None => error_result(format!("Tool `{}` ended without a result.", tool.name)),
        }
    }

    /// The result of a call that ran: its content, and its output as `structuredContent` when
    /// the tool declares an output schema, within the call's model-output budget. A result that
    /// was cut is kept for this session to read in full, when the session can come back for it
    /// (not a request without a session: stateless HTTP, 2026-07-28).
    async fn result(&self, tool: &ToolRef, output: &ToolOutput, ctx: &RequestContext<RoleServer>) -> CallToolResponse {
        let has_output_schema = self.registry().get(&tool.id).is_some_and(|t| t.spec().schemas.output.is_some());
        // Who may read a cut result is written down only when one is cut (`result_owner`).
        let link = self.results_kept_by_session(ctx) || identity::caller_of(ctx).is_some();
        match convert::call_result(output, has_output_schema, link) {
            Ok((result, overflow)) => {
                if let Some((full, owner)) = overflow.and_then(|full| Some((full, self.result_owner(ctx)?))) {
                    let kept = KeptResult {
                        owner,
                        text: full.text,
                        json: full.json,
                    };
                    self.shared.results.put(full.call_id, kept).await;
                }
                result.into()
            }
            Err(e) => error_result(format!("Tool `{}` produced content MCP cannot carry: {e}", tool.name)),
        }
    }

    /// Who may read this request's kept results: its session, when it has one that lasts
    /// (stdio, an HTTP session); for a request served on its own (stateless HTTP, 2026-07-28 over
    /// HTTP), its caller: the OAuth token's subject, or the holders of the server's one static
    /// bearer token; with neither, nobody (no link is offered). The token itself never gets
    /// here: the gate removes the header once it has read it.
    pub(super) fn result_owner(&self, ctx: &RequestContext<RoleServer>) -> Option<String> {
        if self.results_kept_by_session(ctx) {
            return Some(self.session.id().to_owned());
        }
        identity::caller_of(ctx).map(|caller| caller.owner())
    }

    /// Whether this request's kept results are its session's (see [`Self::result_owner`]).
    fn results_kept_by_session(&self, ctx: &RequestContext<RoleServer>) -> bool {
        ctx.extensions.get::<axum::http::request::Parts>().is_none() || (!self.stateless && !modern(ctx))
    }

    /// `resources/read` of a kept result: its full text (and raw JSON), for the session (or
    /// caller) that made the call only; anyone else is told it is not kept here.
    pub(super) async fn read_result(&self, uri: &str, ctx: &RequestContext<RoleServer>) -> Result<ReadResourceResult, ErrorData> {
        let call_id = uri.strip_prefix(RESULTS_URI).unwrap_or(uri);
        let owner = self.result_owner(ctx).unwrap_or_default();
        let kept = self.shared.results.get(call_id, &owner).await.map_err(|e| {
            let data = Some(json!({"uri": uri}));
            match e {
                ResultError::NotFound(_) => ErrorData::resource_not_found(e.to_string(), data),
                // Another caller's result is told exactly what an unknown one is (no oracle).
                ResultError::NotYours(id) => {
                    identity::refused_as_unknown("kept result");
                    ErrorData::resource_not_found(ResultError::NotFound(id).to_string(), data)
                }
                ResultError::Unavailable(..) => ErrorData::internal_error(e.to_string(), data),
            }
        })?;
        let text = |text: String, mime: &str| ResourceContents::TextResourceContents {
            uri: uri.to_owned(),
            mime_type: Some(mime.to_owned()),
            text,
            meta: None,
        };
        let mut contents = vec![text(kept.text, "text/plain")];
        contents.extend(kept.json.map(|j| text(j, "application/json")));
        Ok(ReadResourceResult::new(contents))
    }
}

#[cfg(test)]
mod tests {
    #[test]
    fn a_call_id_is_the_prefix_and_the_uuid_in_hex() {
        let uuid = uuid::Uuid::from_u128(0x0123_4567_89ab_cdef_0011_2233_4455_6677);
        assert_eq!(super::mcp_call_id(uuid), format!("mcp_{}", uuid.simple()));
        assert_eq!(super::mcp_call_id(uuid), "mcp_0123456789abcdef0011223344556677");
    }
}
