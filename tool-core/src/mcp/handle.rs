//! The per-call MCP handle a tool sees as `cx.mcp()`: progress, logs, elicitation, sampling,
//! sent to the client that made the call.
//!
//! Owns [`PeerHandle`]. Notifications go through one queue per call, so they reach the client
//! in the order the tool sent them, and the server flushes the queue before it answers the
//! call (a client sees every progress and log message of a call before its result). The queue
//! and the task that sends it are made by the call's first notification: a call that sends
//! none costs neither. On 2026-07-28, where a server may not send requests of its own, an
//! elicitation or sampling request becomes an [`Ask`] the server answers the call with (an
//! input-required result); the client's next request carries the answer back, and the call
//! goes on reporting to that request ([`PeerHandle::retarget`]).

#![allow(deprecated)] // MCP logging and sampling are deprecated by SEP-2577 but still in use.

use std::sync::{Arc, Mutex, OnceLock};

use rmcp::model::{
    CreateMessageRequest, CreateMessageRequestParams, ElicitRequest, ElicitRequestParams, ElicitResult, ElicitationAction,
    ElicitationSchema, InputRequest, InputRequests, InputResponses, LoggingLevel, LoggingMessageNotificationParam,
    ProgressNotificationParam, ProgressToken,
};
use rmcp::service::{Peer, RoleServer};
use serde_json::Value;
use tokio::sync::{mpsc, oneshot};
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
    Log(Peer<RoleServer>, LoggingMessageNotificationParam),
    Progress(Peer<RoleServer>, ProgressNotificationParam),
    /// Answered once every earlier note went out.
    Barrier(oneshot::Sender<()>),
}

/// The request a call currently reports to.
struct Target {
    peer: Peer<RoleServer>,
    progress_token: Option<ProgressToken>,
    /// The least severe level the client wants; `None`: no logs.
    min_level: Option<LoggingLevel>,
}

/// Questions a tool asks the client mid-call on 2026-07-28, each under its key: the server
/// answers the call with them and sends the client's answers (the raw input responses, by key)
/// back through `reply` once every key has one.
pub(crate) struct Ask {
    pub(crate) requests: InputRequests,
    pub(crate) reply: oneshot::Sender<InputResponses>,
}

/// The key of a question asked alone (`elicit`, `sample`).
const ALONE: &str = "input";

/// The MCP client of one call.
pub(crate) struct PeerHandle {
    target: std::sync::RwLock<Target>,
    /// What the client can be asked.
    reach: Reach,
    /// 2026-07-28: questions go through `asks`, not as requests of the server's own.
    modern: bool,
    /// The call's notifications, in order, to the task that sends them: both made by the
    /// first one (most calls send none).
    queue: OnceLock<mpsc::UnboundedSender<Note>>,
    flush: Flush,
    runtime: tokio::runtime::Handle,
    asks: Option<mpsc::UnboundedSender<Ask>>,
    /// Answers the request brought without a request state (SEP-2322's ephemeral flow: the
    /// client calls again with its answers and the tool, run anew, finds them), by key.
    given: Mutex<InputResponses>,
}

/// The task sending a call's notifications, once one was sent: await it (every handle
/// dropped) and they have all gone out.
#[derive(Clone, Default)]
pub(crate) struct Flush(Arc<Mutex<Option<JoinHandle<()>>>>);

impl Flush {
    /// Waits until the notifications sent so far went out and the queue closed (every
    /// [`PeerHandle`] of the call dropped); at once when none was sent.
    pub(crate) async fn sent(self) {
        let task = self.0.lock().unwrap_or_else(|p| p.into_inner()).take();
        if let Some(task) = task {
            let _ = task.await;
        }
    }
}

async fn send_notes(mut notes: mpsc::UnboundedReceiver<Note>) {
    while let Some(note) = notes.recv().await {
        // A client that went away misses its notifications; the call goes on.
        let _ = match note {
            Note::Log(peer, p) => peer.notify_logging_message(p).await,
            Note::Progress(peer, p) => peer.notify_progress(p).await,
            Note::Barrier(done) => {
                let _ = done.send(());
                Ok(())
            }
        };
    }
}

/// What a call's client can be asked: whether the request has a session (stateless HTTP before
/// 2026-07-28 has none, and nothing can be asked) and which of the capabilities a question needs
/// it declared.
#[derive(Debug, Clone, Copy, Default)]
pub(crate) struct Reach {
    /// The request has no session: nothing can be asked.
    pub(crate) sessionless: bool,
    /// The client can answer elicitations.
    pub(crate) can_elicit: bool,
    pub(crate) can_sample: bool,
    pub(crate) can_list_roots: bool,
}

impl Reach {
    /// What the client of a request with these capabilities (and session or none) can be asked.
    pub(crate) fn of(capabilities: Option<&rmcp::model::ClientCapabilities>, sessionless: bool) -> Self {
        Reach {
            sessionless,
            can_elicit: capabilities.is_some_and(|c| c.elicitation.is_some()),
            can_sample: capabilities.is_some_and(|c| c.sampling.is_some()),
            can_list_roots: capabilities.is_some_and(|c| c.roots.is_some()),
        }
    }

    /// Nothing can be asked of the client.
    pub(crate) fn none(&self) -> bool {
        self.sessionless || !(self.can_elicit || self.can_sample || self.can_list_roots)
    }

    /// Why the client's user cannot be asked for input, if they cannot.
    fn elicit_refusal(&self) -> Option<ToolError> {
        if self.sessionless {
            return Some(ToolError::new(format!(
                "The user cannot be asked for input: {}.",
                super::SESSIONLESS
            )));
        }
        (!self.can_elicit).then(|| unsupported("ask its user for input", "it did not declare the elicitation capability"))
    }

    /// Why the client's model cannot be sampled, if it cannot.
    fn sample_refusal(&self) -> Option<ToolError> {
        if self.sessionless {
            return Some(ToolError::new(format!("No model can be sampled: {}.", super::SESSIONLESS)));
        }
        (!self.can_sample).then(|| unsupported("sample a model", "it did not declare the sampling capability"))
    }

    /// Why the client cannot be sent this question, if it cannot.
    fn refusal(&self, request: &InputRequest) -> Option<ToolError> {
        if self.sessionless {
            return Some(ToolError::new(format!("The MCP client cannot be asked: {}.", super::SESSIONLESS)));
        }
        let (declared, what, capability) = match request {
            InputRequest::Elicitation(_) => (self.can_elicit, "ask its user for input", "elicitation"),
            InputRequest::CreateMessage(_) => (self.can_sample, "sample a model", "sampling"),
            InputRequest::ListRoots(_) => (self.can_list_roots, "list its roots", "roots"),
            _ => (false, "answer this request", "its"),
        };
        (!declared).then(|| unsupported(what, &format!("it did not declare the {capability} capability")))
    }

    /// The questions of an [`McpHandle::ask`], each checked: a method a tool may ask, a valid
    /// request of it, one this client can be sent.
    fn questions(&self, requests: serde_json::Map<String, Value>) -> Result<InputRequests, ToolError> {
        let mut asked = InputRequests::new();
        for (key, request) in requests {
            let method = request.get("method").and_then(Value::as_str).unwrap_or_default().to_owned();
            if !ASKABLE.contains(&method.as_str()) {
                return Err(ToolError::new(format!(
                    "`{key}` asks `{method}`: a tool can ask `elicitation/create`, `sampling/createMessage` or `roots/list`."
                )));
            }
            let request: InputRequest =
                serde_json::from_value(request).map_err(|e| ToolError::new(format!("`{key}` is not a valid `{method}` request: {e}")))?;
            if let Some(refused) = self.refusal(&request) {
                return Err(refused);
            }
            asked.insert(key, request);
        }
        Ok(asked)
    }

    fn supports(&self, method: &str) -> bool {
        !self.sessionless
            && match method {
                "elicitation/create" => self.can_elicit,
                "sampling/createMessage" => self.can_sample,
                "roots/list" => self.can_list_roots,
                _ => false,
            }
    }
}

/// The MCP client of a call through which nothing can reach it (revisions up to 2025-11-25): the
/// request carries no progress token, its client wants no logs, and it can be asked nothing
/// ([`Reach::none`]). It answers the tool exactly as a [`PeerHandle`] would there (no
/// notification is sent, every question is refused with the same error), and costs a call
/// nothing: every such call shares one of two ([`Inert::shared`]), so it has no queue to flush.
pub(crate) struct Inert(Reach);

impl Inert {
    /// The shared handle of such a call, with a session or without.
    pub(crate) fn shared(sessionless: bool) -> Arc<dyn McpHandle> {
        static SESSION: OnceLock<Arc<dyn McpHandle>> = OnceLock::new();
        static SESSIONLESS: OnceLock<Arc<dyn McpHandle>> = OnceLock::new();
        let (cell, reach) = if sessionless {
            (
                &SESSIONLESS,
                Reach {
                    sessionless: true,
                    ..Reach::default()
                },
            )
        } else {
            (&SESSION, Reach::default())
        };
        cell.get_or_init(|| Arc::new(Inert(reach))).clone()
    }
}

impl McpHandle for Inert {
    fn elicit(&self, _: String, _: Value) -> BoxFuture<'_, Result<Elicitation, ToolError>> {
        let refused = self
            .0
            .elicit_refusal()
            .unwrap_or_else(|| unsupported("ask its user for input", "it cannot be reached"));
        Box::pin(std::future::ready(Err(refused)))
    }

    fn log(&self, _: LogLevel, _: Value) {}

    fn progress(&self, _: f64, _: Option<f64>, _: Option<String>) {}

    fn ask(&self, requests: serde_json::Map<String, Value>) -> BoxFuture<'_, Result<serde_json::Map<String, Value>, ToolError>> {
        // Every question is refused ([`Reach::none`]): only an empty ask is answered.
        let answered = self.0.questions(requests).and_then(|asked| match asked.is_empty() {
            true => Ok(serde_json::Map::new()),
            false => Err(unsupported("be asked for input", "it cannot be reached")),
        });
        Box::pin(std::future::ready(answered))
    }

    fn supports(&self, method: &str) -> bool {
        self.0.supports(method)
    }

    fn sample(&self, _: Value) -> BoxFuture<'_, Result<Value, ToolError>> {
        let refused = self
            .0
            .sample_refusal()
            .unwrap_or_else(|| unsupported("sample a model", "it cannot be reached"));
        Box::pin(std::future::ready(Err(refused)))
    }
}

impl PeerHandle {
    /// A handle, its [`Flush`] (await it, after dropping every handle, for its notifications
    /// to have gone out) and, on 2026-07-28, the questions its tool asks mid-call.
    /// `modern`: the request speaks 2026-07-28 or later. `reach`: what its client can be asked
    /// (nothing, at once, without a session).
    pub(crate) fn start(
        peer: Peer<RoleServer>,
        progress_token: Option<ProgressToken>,
        min_level: Option<LoggingLevel>,
        reach: Reach,
        modern: bool,
    ) -> (Arc<PeerHandle>, Flush, Option<mpsc::UnboundedReceiver<Ask>>) {
        let flush = Flush::default();
        let (asks, questions) = if modern {
            let (tx, rx) = mpsc::unbounded_channel();
            (Some(tx), Some(rx))
        } else {
            (None, None)
        };
        let handle = PeerHandle {
            target: std::sync::RwLock::new(Target {
                peer,
                progress_token,
                min_level,
            }),
            reach,
            modern,
            queue: OnceLock::new(),
            flush: flush.clone(),
            runtime: tokio::runtime::Handle::current(),
            asks,
            given: Mutex::default(),
        };
        (Arc::new(handle), flush, questions)
    }

    /// Answers the request brought with no request state (2026-07-28): a question the tool
    /// asks under one of their keys is answered by it at once.
    pub(crate) fn answered_in_advance(&self, responses: InputResponses) {
        *self.given.lock().unwrap_or_else(|p| p.into_inner()) = responses;
    }

    /// From now on the call reports to this request (the one that brought an answer back).
    pub(crate) fn retarget(&self, peer: Peer<RoleServer>, progress_token: Option<ProgressToken>, min_level: Option<LoggingLevel>) {
        *self.target.write().unwrap_or_else(|p| p.into_inner()) = Target {
            peer,
            progress_token,
            min_level,
        };
    }

    /// Waits until every notification sent so far went out (before the request that carries
    /// them is answered).
    pub(crate) async fn flushed(&self) {
        let Some(queue) = self.queue.get() else { return };
        let (done, sent) = oneshot::channel();
        if queue.send(Note::Barrier(done)).is_ok() {
            let _ = sent.await;
        }
    }

    /// Queues a notification, starting the task that sends them with the first.
    fn send(&self, note: Note) {
        let queue = self.queue.get_or_init(|| {
            let (queue, notes) = mpsc::unbounded_channel();
            let task = self.runtime.spawn(send_notes(notes));
            *self.flush.0.lock().unwrap_or_else(|p| p.into_inner()) = Some(task);
            queue
        });
        let _ = queue.send(note);
    }

    fn peer(&self) -> Peer<RoleServer> {
        self.target.read().unwrap_or_else(|p| p.into_inner()).peer.clone()
    }

    /// Asks the client through the call's result (2026-07-28) and waits for every answer.
    async fn ask_through_result(&self, mut requests: InputRequests) -> Result<InputResponses, ToolError> {
        // What the request brought answers first; only the rest is asked.
        let mut answers = InputResponses::new();
        {
            let mut given = self.given.lock().unwrap_or_else(|p| p.into_inner());
            requests.retain(|key, request| match given.remove(key) {
                Some(answer) if answers_request(request, &answer) => {
                    answers.insert(key.clone(), answer);
                    false
                }
                _ => true,
            });
        }
        if requests.is_empty() {
            return Ok(answers);
        }
        let Some(asks) = &self.asks else {
            return Err(ToolError::new("This MCP client cannot be asked mid-call."));
        };
        let (reply, answer) = oneshot::channel();
        asks.send(Ask { requests, reply })
            .map_err(|_| ToolError::new("The MCP request that carried this call is gone; the client cannot be asked."))?;
        let asked = answer
            .await
            .map_err(|_| ToolError::new("The MCP client did not answer the question (it never called again, or the wait expired)."))?;
        answers.extend(asked);
        Ok(answers)
    }

    /// One question through the call's result (2026-07-28), and its answer.
    async fn ask_alone(&self, request: InputRequest) -> Result<Value, ToolError> {
        let mut answers = self.ask_through_result(InputRequests::from([(ALONE.to_owned(), request)])).await?;
        answers
            .remove(ALONE)
            .ok_or_else(|| ToolError::new("The MCP client's answer is missing."))
    }

    /// One question as a request of the server's own (revisions up to 2025-11-25): the
    /// client's result as JSON.
    async fn request(&self, request: InputRequest) -> Result<Value, ToolError> {
        let failed = |e: rmcp::service::ServiceError| ToolError::new(format!("The MCP client did not answer: {e}"));
        let peer = self.peer();
        let result = match request {
            InputRequest::Elicitation(r) => serde_json::to_value(peer.create_elicitation(r.params).await.map_err(failed)?),
            InputRequest::CreateMessage(r) => serde_json::to_value(peer.create_message(r.params).await.map_err(failed)?),
            InputRequest::ListRoots(_) => serde_json::to_value(peer.list_roots().await.map_err(failed)?),
            _ => return Err(ToolError::new("The MCP client cannot be sent this request.")),
        };
        result.map_err(|e| ToolError::new(format!("The MCP client's answer could not be read: {e}")))
    }
}

/// Whether `answer` is a result of the kind `request` asks for (an elicitation result, a
/// sampling result, a roots list): anything else is no answer, and the question is asked again.
pub(crate) fn answers_request(request: &InputRequest, answer: &Value) -> bool {
    let answer = answer.clone();
    match request {
        InputRequest::Elicitation(_) => serde_json::from_value::<ElicitResult>(answer).is_ok(),
        InputRequest::CreateMessage(_) => serde_json::from_value::<rmcp::model::CreateMessageResult>(answer).is_ok(),
        InputRequest::ListRoots(_) => serde_json::from_value::<rmcp::model::ListRootsResult>(answer).is_ok(),
        _ => false,
    }
}

/// The MCP request method of each question a tool may ask.
const ASKABLE: [&str; 3] = ["elicitation/create", "sampling/createMessage", "roots/list"];

fn unsupported(what: &str, why: &str) -> ToolError {
    ToolError::new(format!("This MCP client cannot {what}: {why}."))
}

impl McpHandle for PeerHandle {
    fn elicit(&self, message: String, schema: Value) -> BoxFuture<'_, Result<Elicitation, ToolError>> {
        Box::pin(async move {
            if let Some(refused) = self.reach.elicit_refusal() {
                return Err(refused);
            }
            let requested_schema: ElicitationSchema = serde_json::from_value(schema)
                .map_err(|e| ToolError::new(format!("The elicitation schema is not a flat form MCP can show: {e}")))?;
            let params = ElicitRequestParams::FormElicitationParams {
                meta: None,
                message,
                requested_schema,
            };
            let answer = if self.modern {
                let raw = self.ask_alone(InputRequest::Elicitation(ElicitRequest::new(params))).await?;
                serde_json::from_value::<ElicitResult>(raw)
                    .map_err(|e| ToolError::new(format!("The MCP client's answer is not an elicitation result: {e}")))?
            } else {
                self.peer()
                    .create_elicitation(params)
                    .await
                    .map_err(|e| ToolError::new(format!("The MCP client did not answer the elicitation: {e}")))?
            };
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
        let target = self.target.read().unwrap_or_else(|p| p.into_inner());
        if target.min_level.is_some_and(|min| rank(level) >= rank(min)) {
            self.send(Note::Log(
                target.peer.clone(),
                LoggingMessageNotificationParam::new(level, data).with_logger("toolsmith"),
            ));
        }
    }

    fn progress(&self, progress: f64, total: Option<f64>, message: Option<String>) {
        let target = self.target.read().unwrap_or_else(|p| p.into_inner());
        let Some(token) = &target.progress_token else { return };
        let mut p = ProgressNotificationParam::new(token.clone(), progress);
        if let Some(t) = total {
            p = p.with_total(t);
        }
        if let Some(m) = message {
            p = p.with_message(m);
        }
        self.send(Note::Progress(target.peer.clone(), p));
    }

    fn ask(&self, requests: serde_json::Map<String, Value>) -> BoxFuture<'_, Result<serde_json::Map<String, Value>, ToolError>> {
        Box::pin(async move {
            let asked = self.reach.questions(requests)?;
            if asked.is_empty() {
                return Ok(serde_json::Map::new());
            }
            if self.modern {
                return Ok(self.ask_through_result(asked).await?.into_iter().collect());
            }
            let mut answers = serde_json::Map::new();
            for (key, request) in asked {
                answers.insert(key, self.request(request).await?);
            }
            Ok(answers)
        })
    }

    fn supports(&self, method: &str) -> bool {
        self.reach.supports(method)
    }

    fn sample(&self, request: Value) -> BoxFuture<'_, Result<Value, ToolError>> {
        Box::pin(async move {
            if let Some(refused) = self.reach.sample_refusal() {
                return Err(refused);
            }
            let params: CreateMessageRequestParams =
                serde_json::from_value(request).map_err(|e| ToolError::new(format!("The sampling request is not valid: {e}")))?;
            if self.modern {
                return self.ask_alone(InputRequest::CreateMessage(CreateMessageRequest::new(params))).await;
            }
            let result = self
                .peer()
                .create_message(params)
                .await
                .map_err(|e| ToolError::new(format!("The MCP client did not answer the sampling request: {e}")))?;
            serde_json::to_value(result).map_err(|e| ToolError::new(format!("The sampling result could not be read: {e}")))
        })
    }
}
