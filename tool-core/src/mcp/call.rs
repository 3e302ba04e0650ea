//! Running a `tools/call` and answering it with how the run ended.
//!
//! Owns the way from a call request to its response: which tool it names ([`ToolRef`]),
//! starting the run in the runtime, following it to its end ([`McpServer::drive`]) and mapping
//! its [`Outcome`] to the MCP answer with one `match` ([`McpServer::answer`]). Asking the
//! client's user is `ask`'s, keeping a run whose tool asked mid-call is `parked`'s, the slot a
//! call runs in is `session`'s, and the shape of a result is `convert`'s.

use rmcp::model::{CallToolRequestParams, CallToolResponse, CallToolResult, ContentBlock};
use rmcp::service::{RequestContext, RoleServer};
use rmcp::{ErrorData, ServerHandler};
use serde_json::{json, Value};
use tracing::Instrument;

use super::convert;
use super::server::McpServer;
use super::session::Slot;
use crate::call::CallOptions;
use crate::context::{CallData, CallEnv};
use crate::runtime::{EventStream, Outcome};
use crate::tool::ToolOutput;

/// The tool a call names: its MCP name (what messages say) and its registry id.
#[derive(Debug, Clone)]
pub(super) struct ToolRef {
    pub(super) name: String,
    pub(super) id: String,
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
        request: CallToolRequestParams,
        ctx: &RequestContext<RoleServer>,
    ) -> Result<CallToolResponse, ErrorData> {
        let listing = self.listing()?;
        let name = request.name.to_string();
        let Some(id) = listing.id(&name).map(str::to_owned) else {
            let known: Vec<&str> = listing.names().collect();
            return Err(ErrorData::invalid_params(
                format!("There is no tool `{name}`. Available tools: {}", known.join(", ")),
                Some(json!({"available": known})),
            ));
        };
        let tool = ToolRef { name, id };
        if let (Some(state), Some(responses)) = (&request.request_state, &request.input_responses) {
            return Ok(self.continue_call(&tool, state, responses, ctx).await);
        }
        let args = Value::Object(request.arguments.unwrap_or_default());
        // rmcp hands a request's `_meta` to its context; a params `_meta` left in place counts too.
        let meta = [Some(&ctx.meta.0), request.meta.as_ref().map(|m| &m.0)];
        let trace_context = meta.into_iter().flatten().find(|m| m.get_traceparent().is_some());
        let trace_context = trace_context.map(|m| (m.get_traceparent(), m.get_tracestate()));
        Ok(self.run_call(&tool, args, ctx, trace_context).await)
    }

    /// Runs a new call inside its span (`execute_tool`), whose parent is the request's W3C
    /// trace context when it has one (SEP-414) and spans are exported (feature `otel`).
    async fn run_call(
        &self,
        tool: &ToolRef,
        args: Value,
        ctx: &RequestContext<RoleServer>,
        trace_context: Option<(Option<&str>, Option<&str>)>,
    ) -> CallToolResponse {
        let slot = match self.take_slot(ctx, &format!("call `{}` again", tool.name)) {
            Ok(slot) => slot,
            Err(refused) => return error_result(refused),
        };
        let mut options = CallOptions {
            data: CallData {
                // From the OS's CSPRNG: on 2026-07-28 the id comes back as the request state
                // that names the waiting call, so it must not be guessable.
                tool_call_id: Some(format!("mcp_{}", uuid::Uuid::new_v4().simple())),
                context: self.shared.config.context.clone(),
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
        let events = self.shared.runtime.call_in(span.clone(), &tool.id, args.into(), options);
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
                Some(ask) = question => return self.park(tool, events, slot, ask, round).await,
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
    async fn answer(
        &self,
        tool: &ToolRef,
        outcome: Option<Outcome>,
        ctx: &RequestContext<RoleServer>,
        round: u32,
        continuation: &CallEnv,
    ) -> CallToolResponse {
        match outcome {
            Some(Outcome::Done(output)) => self.result(tool, &output),
            // The tool did not run: the "not approved" text is an error result (it has none of
            // the output schema's shape).
            Some(Outcome::Declined { reason }) => error_result(Outcome::declined_text(&reason)),
            Some(Outcome::Failed(error)) => error_result(error.message().to_owned()),
            Some(Outcome::AwaitingApproval(waiting)) => {
                let asking = self.ask_approval(tool, &waiting, ctx, round, continuation);
                asking.instrument(crate::call::trace::approval_span()).await
            }
            Some(Outcome::Suspended(waiting)) => self.ask_resume(tool, &waiting, ctx, round, continuation).await,
            Some(Outcome::Backgrounded(_)) | None => error_result(format!("Tool `{}` ended without a result.", tool.name)),
        }
    }

    /// The result of a call that ran: its content, and its output as `structuredContent` when
    /// the tool declares an output schema.
    fn result(&self, tool: &ToolRef, output: &ToolOutput) -> CallToolResponse {
        let has_output_schema = self.registry().get(&tool.id).is_some_and(|t| t.spec().output_schema.is_some());
        match convert::call_result(output, has_output_schema) {
            Ok(result) => result.into(),
            Err(e) => error_result(format!("Tool `{}` produced content MCP cannot carry: {e}", tool.name)),
        }
    }
}
