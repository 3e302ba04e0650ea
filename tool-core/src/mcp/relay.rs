//! What the instances of one server tell each other over the store's bus: answers to parked
//! runs held by another instance, and tool-list changes.
//!
//! A 2026-07-28 client may bring the answer to a parked run's question to any instance. The
//! instance it reaches ([`McpServer::relay_answer`]) checks that the holder is alive (its lease
//! in the store), sends it the answer, waits (bounded) for its acknowledgement, then for the
//! continued run's response, checking the holder's lease meanwhile: a holder that is gone is a
//! clear error result, never a hang. The holder's side is the relay task
//! ([`McpServer::ensure_relay`]), which also publishes this instance's tool changes and turns
//! other instances' into `list_changed` for its own clients (`listing`).

use std::collections::HashMap;
use std::sync::{Arc, Weak};
use std::time::Duration;

use rmcp::ServerHandler;
use rmcp::model::{CallToolResponse, CallToolResult, InputRequiredResult, InputResponses};
use rmcp::service::{RequestContext, RoleServer};
use serde_json::{Value, json};
use tokio::sync::broadcast;
use tokio_util::sync::CancellationToken;

use super::call::{ToolRef, error_result};
use super::parked::{ParkedState, no_waiting_call};
use super::server::{McpServer, Shared};
use super::session::Session;
use crate::runtime::{Bus, BusMessage};

const ANSWER: &str = "mcp.parked.answer";
const ACK: &str = "mcp.parked.ack";
const RESULT: &str = "mcp.parked.result";
const CANCEL: &str = "mcp.parked.cancel";
const TOOLS_CHANGED: &str = "mcp.tools_changed";

/// How long the holder of a parked run has to acknowledge an answer.
const ACK_WAIT: Duration = Duration::from_secs(5);
/// How often the holder's lease is checked while its continued run goes on.
const LIVENESS_EVERY: Duration = Duration::from_secs(2);

/// The relay task of a server; dropping it stops the task.
pub(super) struct Relay(tokio::task::JoinHandle<()>);

impl Drop for Relay {
    fn drop(&mut self) {
        self.0.abort();
    }
}

/// A response as bus JSON (rmcp's `CallToolResponse` has no serde of its own).
fn encode(response: &CallToolResponse) -> Value {
    match response {
        CallToolResponse::Complete(result) => json!({"complete": result}),
        CallToolResponse::InputRequired(input) => json!({"input_required": input}),
        _ => {
            json!({"complete": CallToolResult::error(vec![rmcp::model::ContentBlock::text("The continued call ended in a form that cannot be relayed.")])})
        }
    }
}

fn decode(value: &Value) -> Option<CallToolResponse> {
    if let Some(result) = value.get("complete") {
        return serde_json::from_value::<CallToolResult>(result.clone()).ok().map(Into::into);
    }
    let input = value.get("input_required")?;
    serde_json::from_value::<InputRequiredResult>(input.clone()).ok().map(Into::into)
}

/// The next message of `topic` answering `nonce` (`None`: the bus closed).
async fn next(rx: &mut broadcast::Receiver<Arc<BusMessage>>, topic: &str, nonce: &str) -> Option<Arc<BusMessage>> {
    loop {
        match rx.recv().await {
            Ok(m) if m.topic == topic && m.body.get("nonce").and_then(Value::as_str) == Some(nonce) => return Some(m),
            Ok(_) | Err(broadcast::error::RecvError::Lagged(_)) => {}
            Err(broadcast::error::RecvError::Closed) => return None,
        }
    }
}

impl<E: ServerHandler + Clone> McpServer<E> {
    /// Sends the answer of the caller `owner` to a run parked on another instance (named by the
    /// request state `parked`, which verified for this caller) and answers with how it went on.
    /// The holder takes the run only for the owner it was parked for.
    pub(super) async fn relay_answer(
        &self,
        tool: &ToolRef,
        (state, parked): (&str, &ParkedState<'_>),
        owner: Option<&str>,
        responses: &InputResponses,
        ctx: &RequestContext<RoleServer>,
    ) -> CallToolResponse {
        let bus = self.shared.bus.clone();
        let holder = parked.instance;
        let gone = |when: &str| {
            error_result(format!(
                "The call waiting for this answer ran on instance `{holder}`, which is gone ({when}); its run was lost. Call `{}` again.",
                tool.name
            ))
        };
        match bus.alive(holder).await {
            Ok(true) => {}
            Ok(false) => return gone("its lease in the store expired"),
            Err(e) => return error_result(format!("The answer cannot be delivered: {e}")),
        }
        let mut rx = bus.subscribe();
        let nonce = uuid::Uuid::new_v4().simple().to_string();
        let body = json!({"key": parked.key, "tool": tool.id, "owner": owner, "answers": responses, "nonce": nonce});
        if let Err(e) = bus.publish(Some(holder), ANSWER, &body).await {
            return error_result(format!("The answer cannot be delivered: {e}"));
        }
        let ack = match tokio::time::timeout(ACK_WAIT, next(&mut rx, ACK, &nonce)).await {
            Ok(Some(ack)) => ack,
            _ => return gone(&format!("it did not acknowledge the answer within {} s", ACK_WAIT.as_secs())),
        };
        if ack.body.get("refused").is_some_and(|r| r == &json!(true)) {
            return no_waiting_call(state, tool);
        }
        let mut check = tokio::time::interval(LIVENESS_EVERY);
        check.tick().await;
        loop {
            tokio::select! {
                result = next(&mut rx, RESULT, &nonce) => {
                    let decoded = result.and_then(|m| m.body.get("response").and_then(decode));
                    return decoded.unwrap_or_else(|| error_result("The continued call's result could not be read.".into()));
                }
                _ = check.tick() => if !bus.alive(holder).await.unwrap_or(true) {
                    return gone("its lease expired while it ran the call");
                },
                () = ctx.ct.cancelled() => {
                    let _ = bus.publish(Some(holder), CANCEL, &json!({"nonce": nonce})).await;
                    return error_result("The call was cancelled by the client.".into());
                }
            }
        }
    }

    /// Starts the relay task once, when the server has a store's bus (several instances).
    pub(super) fn ensure_relay(&self) {
        if self.shared.relay.get().is_some() || !self.shared.shares_store {
            return;
        }
        if tokio::runtime::Handle::try_current().is_err() {
            return;
        }
        let task = RelayTask {
            shared: Arc::downgrade(&self.shared),
            session: self.session.clone(),
            extras: self.extras.clone(),
            stateless: self.stateless,
            rx: self.shared.bus.subscribe(),
            changes: self.registry().subscribe(),
        };
        let started = self.shared.relay.set(Relay(tokio::spawn(task.run())));
        // Another request started it meanwhile: this one is dropped (and stopped).
        drop(started);
    }
}

/// What the relay task holds: the server (weakly: the task ends with it).
struct RelayTask<E> {
    shared: Weak<Shared>,
    session: Arc<Session>,
    extras: E,
    stateless: bool,
    rx: broadcast::Receiver<Arc<BusMessage>>,
    changes: tokio::sync::watch::Receiver<u64>,
}

impl<E: ServerHandler + Clone> RelayTask<E> {
    fn server(&self) -> Option<McpServer<E>> {
        Some(McpServer {
            shared: self.shared.upgrade()?,
            session: self.session.clone(),
            extras: self.extras.clone(),
            info: Arc::default(),
            stateless: self.stateless,
        })
    }

    async fn run(mut self) {
        let mut running: HashMap<String, CancellationToken> = HashMap::new();
        loop {
            let message = tokio::select! {
                changed = self.changes.changed() => {
                    let (Ok(()), Some(server)) = (changed, self.server()) else { return };
                    let bus = server.shared.bus.clone();
                    if let Err(error) = bus.publish(None, TOOLS_CHANGED, &json!({})).await {
                        tracing::warn!(%error, "could not tell the other instances that the tools changed");
                    }
                    continue;
                }
                message = self.rx.recv() => match message {
                    Ok(m) => m,
                    Err(broadcast::error::RecvError::Lagged(_)) => continue,
                    Err(broadcast::error::RecvError::Closed) => return,
                },
            };
            let Some(server) = self.server() else { return };
            running.retain(|_, token| !token.is_cancelled());
            match message.topic.as_str() {
                TOOLS_CHANGED if message.from != server.shared.bus.instance_id() => {
                    server.shared.remote_changes.send_modify(|n| *n += 1);
                }
                ANSWER => {
                    let cancel = CancellationToken::new();
                    if let Some(nonce) = message.body.get("nonce").and_then(Value::as_str) {
                        running.insert(nonce.to_owned(), cancel.clone());
                    }
                    // Boxed: the future is kilobytes, moved several times as a task is spawned.
                    tokio::spawn(Box::pin(answer(server, message, cancel)));
                }
                CANCEL => {
                    let nonce = message.body.get("nonce").and_then(Value::as_str).unwrap_or_default();
                    if let Some(token) = running.remove(nonce) {
                        token.cancel();
                    }
                }
                _ => {}
            }
        }
    }
}

/// The holder's side of a relayed answer: acknowledge (or refuse), resume, send the response.
async fn answer<E: ServerHandler + Clone>(server: McpServer<E>, message: Arc<BusMessage>, cancel: CancellationToken) {
    let bus: Arc<dyn Bus> = server.shared.bus.clone();
    let field = |k: &str| message.body.get(k).and_then(Value::as_str).unwrap_or_default();
    let (key, tool_id, nonce, to) = (field("key"), field("tool"), field("nonce"), message.from.as_str());
    let owner = message.body.get("owner").and_then(Value::as_str);
    let answers: InputResponses = message
        .body
        .get("answers")
        .and_then(|a| serde_json::from_value(a.clone()).ok())
        .unwrap_or_default();
    let parked = server.take_parked(key, tool_id, owner);
    let ack = match &parked {
        Ok(_) => json!({"nonce": nonce}),
        Err(_) => json!({"nonce": nonce, "refused": true}),
    };
    if let Err(error) = bus.publish(Some(to), ACK, &ack).await {
        tracing::warn!(%error, "could not acknowledge a relayed answer");
    }
    let Ok(parked) = parked else { return };
    let response = server.resume_relayed(key, parked, &answers, cancel.clone()).await;
    cancel.cancel();
    let body = json!({"nonce": nonce, "response": encode(&response)});
    if let Err(error) = bus.publish(Some(to), RESULT, &body).await {
        tracing::warn!(%error, "could not send a relayed call's response to the instance that asked");
    }
}
