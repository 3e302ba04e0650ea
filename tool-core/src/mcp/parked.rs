//! Runs parked while their tool's question travels to a 2026-07-28 client.
//!
//! On 2026-07-28 a server may not send the client requests of its own: a tool that elicits or
//! samples mid-call has its question sent as the call's answer (an input-required result), and
//! its run waits here ([`Parking`]) until the client calls again with the answer and the request
//! state naming the run ([`McpServer::continue_call`]), or until `input_timeout` passes. Owns
//! [`Parked`], parking, resuming and expiry, and the request state: `mcp_input_<id>.<instance>.<tag>`,
//! naming the run and the instance that holds it, sealed with the key the instances share (the
//! tool's id and the owner of the caller who made the call are sealed in too), so a client can
//! neither forge a state nor point it at another run, instance or tool, and a state another
//! caller brings is worthless. An answer that reaches another instance is relayed to the holder
//! (`relay`). The request state of a call waiting in the runtime (approval, resume data) is
//! its id; on instances sharing a store it is sealed too, `<id>.<tag>` over the id, the tool and
//! the owner (`waiting_state`), so a call id seen elsewhere (a listing, a log) cannot be answered
//! over MCP, nor a state carried to another tool or by another caller.
//!
//! A state whose seal does not verify — forged, edited, another tool's or another caller's — is
//! refused as invalid params (JSON-RPC `-32602`, SEP-2322: a server rejects request state that
//! fails its integrity check), all in the same words ([`tampered`]); a genuine state that names
//! nothing to answer (expired, answered) is told so in an error result ([`no_waiting_call`]).
//! Either way a stranger learns nothing about other callers' calls: their states fail the seal
//! like any forged one. It does not ask the user about the runtime's
//! waiting calls (`ask`), and it does not run or answer calls (`call`).

use std::collections::HashMap;
use std::sync::{Arc, Mutex};

use rmcp::ErrorData;
use rmcp::ServerHandler;
use rmcp::model::{CallToolResponse, InputRequests, InputRequiredResult, InputResponses};
use rmcp::service::{RequestContext, RoleServer};
use tokio::sync::oneshot;

use super::call::{ToolRef, error_result};
use super::handle::{Ask, answers_request};
use super::identity::{owner_of, refused_as_unknown, sealed_owner};
use super::server::McpServer;
use super::session::Slot;
use crate::runtime::EventStream;

/// A running call waiting for its client to answer the question its tool asked.
pub(super) struct Parked {
    pub(super) tool: ToolRef,
    /// The owner of the caller who made the call: only it may answer.
    owner: Option<String>,
    events: EventStream,
    slot: Slot,
    /// The questions, by key, and the answers the client gave so far.
    asked: InputRequests,
    answers: InputResponses,
    reply: oneshot::Sender<InputResponses>,
    /// The request state the client brings back (to ask again for what it left out).
    client_state: String,
    round: u32,
    /// The request that parked it: a run resumed for another instance reports as it did.
    ctx: RequestContext<RoleServer>,
}

/// What a parked run's request state names.
pub(super) struct ParkedState<'a> {
    /// The run's key in its instance's [`Parking`] (`mcp_input_<id>`).
    pub(super) key: &'a str,
    /// The instance holding the run.
    pub(super) instance: &'a str,
}

/// The prefix of a parked run's request state.
const PREFIX: &str = "mcp_input_";

/// What a request state naming nothing this caller may answer is told, whatever the reason
/// (forged, edited, expired, already answered, another tool's, another caller's).
pub(super) fn no_waiting_call(state: &str, tool: &ToolRef) -> CallToolResponse {
    error_result(format!(
        "No call of `{name}` waits for an answer as `{state}` (it was already answered, or its wait for an answer expired); call `{name}` again.",
        name = tool.name
    ))
}

/// The refusal of a request state whose seal does not verify for this tool and caller.
pub(super) fn tampered(tool: &ToolRef) -> ErrorData {
    ErrorData::invalid_params(
        format!(
            "The request state is not one this server issued for `{}` and this caller (it was edited, forged, or belongs to another call); call the tool again.",
            tool.name
        ),
        None,
    )
}

/// A state this server did not issue for this tool and caller: forged, edited, or brought by
/// another caller (the seal cannot tell which, and neither does the answer).
#[derive(Debug)]
pub(super) struct NotIssued;

/// Reads a parked run's request state: `Ok(None)` when it is not one (a waiting call's id),
/// `Err` when it is one this server did not issue for `tool` and the caller `owner`.
pub(super) fn read_state<'a>(
    bus: &dyn crate::runtime::Bus,
    state: &'a str,
    tool: &ToolRef,
    owner: Option<&str>,
) -> Result<Option<ParkedState<'a>>, NotIssued> {
    if !state.starts_with(PREFIX) {
        return Ok(None);
    }
    let (key, rest) = state.split_once('.').ok_or(NotIssued)?;
    let (instance, tag) = rest.rsplit_once('.').ok_or(NotIssued)?;
    if !bus.verify(&[key, instance, &tool.id, sealed_owner(owner)], tag) {
        return Err(NotIssued);
    }
    Ok(Some(ParkedState { key, instance }))
}

/// What a waiting call's seal covers besides its id and tool (so it is never a parked run's).
const WAITING: &str = "waiting-call";

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
    pub(super) async fn park(
        &self,
        tool: &ToolRef,
        mut events: EventStream,
        mut slot: Slot,
        ask: Ask,
        (round, ctx): (u32, &RequestContext<RoleServer>),
    ) -> CallToolResponse {
        // The request that carried the call ends with this answer; its end must not cancel
        // the call, and its notifications go out first.
        slot.unlink();
        // The run goes on while its client answers: no request reads it until then.
        events.detach();
        slot.flushed().await;
        self.ensure_relay();
        let key = format!("{PREFIX}{}", uuid::Uuid::new_v4().simple());
        let bus = &self.shared.bus;
        let instance = bus.instance_id();
        let owner = owner_of(ctx);
        let tag = bus.seal(&[&key, instance, &tool.id, sealed_owner(owner.as_deref())]);
        let client_state = format!("{key}.{instance}.{tag}");
        let requests = ask.requests.clone();
        let parked = Parked {
            tool: tool.clone(),
            owner,
            events,
            slot,
            asked: ask.requests,
            answers: InputResponses::new(),
            reply: ask.reply,
            client_state: client_state.clone(),
            round,
            ctx: ctx.clone(),
        };
        self.shared.parked.put(key.clone(), parked);
        let shared = Arc::downgrade(&self.shared);
        let timeout = self.shared.config.input_timeout;
        tokio::spawn(async move {
            tokio::time::sleep(timeout).await;
            if let Some(shared) = shared.upgrade() {
                drop(shared.parked.take(&key));
            }
        });
        InputRequiredResult::new(Some(requests), Some(client_state)).into()
    }

    /// A 2026-07-28 client calls again with its user's answer and the request state naming
    /// what waits for it: a parked run, or a call waiting in the runtime (approval, resume).
    pub(super) async fn continue_call(
        &self,
        tool: &ToolRef,
        state: &str,
        responses: &InputResponses,
        ctx: &RequestContext<RoleServer>,
    ) -> Result<CallToolResponse, ErrorData> {
        let owner = owner_of(ctx);
        let not_issued = || {
            tracing::warn!(tool = %tool.name, "a request state that this server did not issue for the tool and caller; refused");
            Err(tampered(tool))
        };
        let parked = match read_state(self.shared.bus.as_ref(), state, tool, owner.as_deref()) {
            Ok(Some(parked)) => parked,
            Ok(None) => {
                return match self.waiting_id(state, tool, owner.as_deref()) {
                    Ok(id) => Ok(self.answer_waiting(tool, id, responses, ctx).await),
                    Err(NotIssued) => not_issued(),
                };
            }
            Err(NotIssued) => return not_issued(),
        };
        if parked.instance != self.shared.bus.instance_id() {
            return Ok(self.relay_answer(tool, (state, &parked), owner.as_deref(), responses, ctx).await);
        }
        Ok(match self.take_parked(parked.key, &tool.id, owner.as_deref()) {
            Ok(run) => self.resume_parked(tool, parked.key, run, responses, ctx).await,
            Err(NotIssued) => no_waiting_call(state, tool),
        })
    }

    /// The request state of the runtime's waiting call `id` of `tool`, made by the caller
    /// `owner`: the id, sealed with the tool and the owner under the shared key when the
    /// instances share a store.
    pub(super) fn waiting_state(&self, id: &str, tool: &ToolRef, owner: Option<&str>) -> String {
        if !self.shared.shares_store {
            return id.to_owned();
        }
        let tag = self.shared.bus.seal(&[WAITING, id, &tool.id, sealed_owner(owner)]);
        format!("{id}.{tag}")
    }

    /// The waiting call a request state names ([`waiting_state`](Self::waiting_state)) for the
    /// caller `owner`, or [`NotIssued`] (forged, edited, another tool's or caller's, or a bare id
    /// on instances sharing a store).
    fn waiting_id<'a>(&self, state: &'a str, tool: &ToolRef, owner: Option<&str>) -> Result<&'a str, NotIssued> {
        if !self.shared.shares_store {
            return Ok(state);
        }
        let sealed = state
            .rsplit_once('.')
            .filter(|(id, tag)| self.shared.bus.verify(&[WAITING, id, &tool.id, sealed_owner(owner)], tag));
        sealed.map(|(id, _)| id).ok_or(NotIssued)
    }

    /// Takes the parked run `key` of tool `tool_id` for an answer from the caller `owner` (here,
    /// or relayed from another instance). [`NotIssued`] when there is none to resume: unknown,
    /// already answered, expired, another tool's or another caller's (such a run is put back,
    /// and the refusal logged).
    pub(super) fn take_parked(&self, key: &str, tool_id: &str, owner: Option<&str>) -> Result<Parked, NotIssued> {
        let parked = self.shared.parked.take(key).ok_or(NotIssued)?;
        let theirs = parked.owner.as_deref() != owner;
        if parked.tool.id != tool_id || theirs {
            if theirs {
                refused_as_unknown("parked run");
            }
            self.shared.parked.put(key.to_owned(), parked);
            return Err(NotIssued);
        }
        Ok(parked)
    }

    /// Resumes a parked run with an answer relayed from another instance: the run reports as
    /// it did to the request that parked it, and is cancelled by `cancel`.
    pub(super) async fn resume_relayed(
        &self,
        key: &str,
        parked: Parked,
        responses: &InputResponses,
        cancel: tokio_util::sync::CancellationToken,
    ) -> CallToolResponse {
        let mut ctx = parked.ctx.clone();
        ctx.ct = cancel;
        let tool = parked.tool.clone();
        self.resume_parked(&tool, key, parked, responses, &ctx).await
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
        if parked.tool.id != tool.id {
            self.shared.parked.put(state.to_owned(), parked);
            return error_result(format!("The waiting call `{state}` cannot go on: it is not a call of this tool."));
        }
        // The answers to what was asked (other keys, and answers of the wrong kind, are
        // ignored); what is still unanswered is asked again, under the same request state.
        for (key, request) in &parked.asked {
            if let Some(answer) = responses.get(key).filter(|a| answers_request(request, a)) {
                parked.answers.insert(key.clone(), answer.clone());
            }
        }
        let missing: InputRequests = parked
            .asked
            .iter()
            .filter(|(key, _)| !parked.answers.contains_key(*key))
            .map(|(key, request)| (key.clone(), request.clone()))
            .collect();
        if !missing.is_empty() {
            let client_state = parked.client_state.clone();
            self.shared.parked.put(state.to_owned(), parked);
            return InputRequiredResult::new(Some(missing), Some(client_state)).into();
        }
        let answer = std::mem::take(&mut parked.answers);
        parked.slot.link(ctx);
        parked.slot.retarget(ctx, self.log_level(ctx));
        // A tool that stopped waiting (it was cancelled) just finishes its run.
        let _ = parked.reply.send(answer);
        self.drive(tool, parked.events, parked.slot, ctx, parked.round).await
    }
}
