//! Runs parked while their tool's question travels to a 2026-07-28 client.
//!
//! On 2026-07-28 a server may not send the client requests of its own: a tool that elicits or
//! samples mid-call has its question sent as the call's answer (an input-required result), and
//! its run waits here ([`Parking`]) until the client calls again with the answer and the request
//! state naming the run ([`McpServer::continue_call`]), or until `input_timeout` passes. Owns
//! [`Parked`], parking, resuming and expiry. It does not ask the user about the runtime's
//! waiting calls (approval, resume data: `ask`), and it does not run or answer calls (`call`).

use std::collections::HashMap;
use std::sync::{Arc, Mutex};

use rmcp::model::{CallToolResponse, InputRequests, InputRequiredResult, InputResponses};
use rmcp::service::{RequestContext, RoleServer};
use rmcp::ServerHandler;
use serde_json::Value;
use tokio::sync::oneshot;

use super::call::{error_result, ToolRef};
use super::handle::Ask;
use super::server::McpServer;
use super::session::Slot;
use crate::runtime::EventStream;

/// A running call waiting for its client to answer the question its tool asked.
pub(super) struct Parked {
    tool: ToolRef,
    events: EventStream,
    slot: Slot,
    reply: oneshot::Sender<Value>,
    round: u32,
}

/// The parked runs, by the request state the client brings back with the answer.
#[derive(Default)]
pub(super) struct Parking(Mutex<HashMap<String, Parked>>);

impl Parking {
    fn put(&self, state: String, parked: Parked) {
        self.0.lock().unwrap_or_else(|p| p.into_inner()).insert(state, parked);
    }

    fn take(&self, state: &str) -> Option<Parked> {
        self.0.lock().unwrap_or_else(|p| p.into_inner()).remove(state)
    }
}

impl<E: ServerHandler + Clone> McpServer<E> {
    /// Keeps a run whose tool asked the client a question, and answers the call with the
    /// question. Unanswered past `input_timeout`, the run is dropped (the tool's question
    /// fails, the slot is freed).
    pub(super) async fn park(&self, tool: &ToolRef, events: EventStream, mut slot: Slot, ask: Ask, round: u32) -> CallToolResponse {
        // The request that carried the call ends with this answer; its end must not cancel
        // the call, and its notifications go out first.
        slot.unlink();
        slot.handle.flushed().await;
        let state = format!("mcp_input_{}", uuid::Uuid::new_v4().simple());
        let mut requests = InputRequests::new();
        requests.insert("input".to_owned(), ask.request);
        let parked = Parked {
            tool: tool.clone(),
            events,
            slot,
            reply: ask.reply,
            round,
        };
        self.shared.parked.put(state.clone(), parked);
        let shared = Arc::downgrade(&self.shared);
        let (timeout, key) = (self.shared.config.input_timeout, state.clone());
        tokio::spawn(async move {
            tokio::time::sleep(timeout).await;
            if let Some(shared) = shared.upgrade() {
                drop(shared.parked.take(&key));
            }
        });
        InputRequiredResult::new(Some(requests), Some(state)).into()
    }

    /// A 2026-07-28 client calls again with its user's answer and the request state naming
    /// what waits for it: a parked run, or a call waiting in the runtime (approval, resume).
    pub(super) async fn continue_call(
        &self,
        tool: &ToolRef,
        state: &str,
        responses: &InputResponses,
        ctx: &RequestContext<RoleServer>,
    ) -> CallToolResponse {
        match self.shared.parked.take(state) {
            Some(parked) => self.resume_parked(tool, state, parked, responses, ctx).await,
            None => self.answer_waiting(tool, state, responses, ctx).await,
        }
    }

    /// The answer to a parked run's question: the tool gets it and the run goes on, reporting
    /// to (and cancellable by) this request.
    async fn resume_parked(
        &self,
        tool: &ToolRef,
        state: &str,
        mut parked: Parked,
        responses: &InputResponses,
        ctx: &RequestContext<RoleServer>,
    ) -> CallToolResponse {
        let answer = responses.get("input").or_else(|| responses.values().next()).cloned();
        let same_tool = parked.tool.id == tool.id;
        let (true, Some(answer)) = (same_tool, answer) else {
            let why = if same_tool {
                "the answer to its question is missing"
            } else {
                "it is not a call of this tool"
            };
            self.shared.parked.put(state.to_owned(), parked);
            return error_result(format!("The waiting call `{state}` cannot go on: {why}."));
        };
        parked.slot.link(ctx);
        parked
            .slot
            .handle
            .retarget(ctx.peer.clone(), ctx.meta.get_progress_token(), self.log_level(ctx));
        // A tool that stopped waiting (it was cancelled) just finishes its run.
        let _ = parked.reply.send(answer);
        self.drive(tool, parked.events, parked.slot, ctx, parked.round).await
    }
}
