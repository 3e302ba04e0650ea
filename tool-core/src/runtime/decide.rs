//! Continuing a waiting call: approve, decline, resume, submit a client-side call's result.
//!
//! Owns claiming a waiting call from the store (exactly one claimer; anything wrong puts it
//! back, nothing runs) and the four ways it goes on, each recorded in the audit trail by who
//! decided ([`ResumeOptions::by`]) once the call is claimed and the decision validated, before
//! it takes effect (see `audit`). A continued call runs with what the
//! continuing request brings ([`CallEnv`]: its cancellation, timeout, MCP client), never with
//! the handles of the request that started it.

use std::sync::Arc;

use serde_json::{Value, json};
use tracing::Instrument;

use super::audit::{self, Actor, AuditAction, AuditRecord};
use super::binding::{Answer, Binding, Decision};
use super::events::{CallRef, Event, RunEventKind};
use super::outcome::{EventStream, Outcome, Sink};
use super::pending::{PendingCall, PendingKind};
use super::run::Origin;
use super::store::StoreError;
use super::{Runtime, RuntimeError};
use crate::call::{CallArgs, Finished, trace};
use crate::context::{CallEnv, ToolCallInfo};
use crate::error::{ErrorKind, ToolError};
use crate::registry::OwnedPrepared;
use crate::spec::{BackgroundOverride, ToolSpec};

impl Answer {
    /// The answer as the `tool-call-resumed` event carries it (an edit's arguments are added
    /// by the views).
    fn to_json(&self) -> Value {
        match self {
            Answer::Approve => json!({"approved": true}),
            Answer::Edit { .. } => json!({"approved": true, "edited": true}),
            Answer::Reject { reason } => json!({"approved": false, "reason": reason}),
        }
    }

    /// Reads `{approved, reason?, args?}`; anything else is refused.
    fn read_for(id: &str, data: &Value) -> Result<Answer, ToolError> {
        Answer::read(data).ok_or_else(|| {
            ToolError::with_kind(
                ErrorKind::InvalidInput,
                format!("call `{id}` waits for approval: send {{\"approved\": true}}, {{\"approved\": true, \"args\": {{…}}}} (edited arguments) or {{\"approved\": false, \"reason\": \"…\"}}"),
            )
        })
    }
}

/// What a continuing request asks of a call.
#[derive(Clone, Copy)]
struct Ask<'a> {
    /// What is attempted, as messages say it.
    what: &'static str,
    /// The kind of call it continues (`None`: approval or resume data).
    kind: Option<PendingKind>,
    /// The binding the decision was made for (`None`: bound to what is stored).
    binding: Option<&'a Binding>,
    /// Whether the tool would run (an approval or an edit; not a rejection).
    runs: bool,
}

impl<'a> Ask<'a> {
    const fn new(what: &'static str, kind: Option<PendingKind>, runs: bool) -> Ask<'a> {
        Ask {
            what,
            kind,
            binding: None,
            runs,
        }
    }
}

/// How a waiting call goes on when it is approved, decided, declined, resumed or completed:
/// with what the continuing request brings ([`CallEnv`]: its cancellation, its MCP client;
/// nothing by default), whether a call whose earlier run was interrupted may run once more, and
/// who decided (recorded in the audit trail; [`Actor::Application`] by default).
///
/// ```
/// use tool_core::CallEnv;
/// use tool_core::runtime::{Actor, ResumeOptions};
///
/// let plain = ResumeOptions::default();
/// let again = ResumeOptions::default().env(CallEnv::default()).rerun().by(Actor::Operator);
/// # let _ = (plain, again);
/// ```
#[derive(Debug, Clone, Default)]
pub struct ResumeOptions {
    env: CallEnv,
    rerun: bool,
    actor: Actor,
    background: Option<BackgroundOverride>,
}

impl ResumeOptions {
    /// Who decides: the operator, a caller (`Actor::from(&caller)`), or the application
    /// (default). Recorded in the audit trail ([`Runtime::audit`]).
    pub fn by(mut self, actor: Actor) -> Self {
        self.actor = actor;
        self
    }

    /// The tool runs with what the current request brings instead of nothing.
    pub fn env(mut self, env: CallEnv) -> Self {
        self.env = env;
        self
    }

    /// Also a call whose earlier run was interrupted (the process running it died, so the tool
    /// may already have had its effect): the explicit, logged decision to run it once more.
    /// Without it such a call is refused ([`StoreError::Interrupted`](super::StoreError::Interrupted)).
    pub fn rerun(mut self) -> Self {
        self.rerun = true;
        self
    }

    /// A resumed call continues in the background with these settings instead of the ones it
    /// was stored with (its task id and owner, say): for a tool that gathers its input first
    /// (`background(asks_first)`), whose resumed run is queued as a durable task. Ignored for
    /// a tool that did not opt into the background, and on a runtime without a task store.
    pub fn background(mut self, settings: BackgroundOverride) -> Self {
        self.background = Some(settings);
        self
    }

    fn take(&self) -> Take {
        if self.rerun { Take::Again } else { Take::Fresh }
    }

    /// Who decides.
    pub(super) fn actor(&self) -> &Actor {
        &self.actor
    }
}

/// How a call is taken from the store.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Take {
    /// A waiting call only (an interrupted one only when its tool is declared idempotent).
    Fresh,
    /// A waiting or an interrupted call: the caller decided to run it again (or to decline it).
    Again,
}

impl Runtime {
    /// Appends the audit row of a decision on `call`, accepted and about to take effect.
    async fn audit_decision(&self, call: &PendingCall, action: AuditAction, options: &ResumeOptions, (token, rerun): (bool, bool)) {
        let mut row = AuditRecord::new(options.actor.clone(), action).call(&call.tool_call_id, &call.tool_name);
        (row.token, row.rerun) = (token, rerun && options.rerun);
        audit::record(&*self.inner.audit, row).await;
    }

    /// Puts a claimed call back to waiting (nothing ran). When the store fails, the release is
    /// kept and tried again until it goes through (`settle`): the row is never left `running`
    /// under this live process, refusing every later decision.
    pub(super) async fn release(&self, id: &str) {
        let (store, owned) = (self.inner.store.clone(), id.to_owned());
        // The claim stays this runtime's until the write went through (or was given up).
        let held = Held(id.to_owned());
        super::settle::settle("release a claimed call", id, move || {
            let _held = &held;
            let (store, id) = (store.clone(), owned.clone());
            async move { store.release(&id).await }
        })
        .await;
    }

    /// Whether the tool declares that calling it twice has no extra effect (MCP's
    /// `idempotentHint`), or runs once per call over a receipt (`idempotent`: its receipt, not
    /// the pending row, then decides whether the body runs again).
    fn idempotent(&self, tool: &str) -> bool {
        let tool = self.inner.registry.get(tool);
        tool.is_some_and(|t| t.spec().presentation.mcp.idempotent_hint == Some(true) || t.spec().policy.idempotent.is_some())
    }

    /// Takes a call from the store. A call whose earlier run was interrupted is taken only as
    /// decided (`Take::Again`), or on its own when its tool is declared idempotent.
    async fn take(&self, id: &str, how: Take) -> Result<PendingCall, RuntimeError> {
        let store = &self.inner.store;
        // Held from before the claim, so the reconciler never takes a claim being made for an
        // orphan; kept on success until the write ending the claim (`release`, `forget`).
        let hold = super::reconcile::active().hold(id);
        let taken = match how {
            Take::Again => store.claim_again(id).await,
            Take::Fresh => match store.claim(id).await {
                Err(StoreError::Interrupted(i)) if self.idempotent(&i.tool_name) => {
                    let (tool, claim) = (&i.tool_name, &i.claim);
                    tracing::warn!(tool_call_id = id, %tool, %claim, "running an interrupted call again: its tool is declared idempotent");
                    store.claim_again(id).await
                }
                other => other,
            },
        };
        let call = taken?.ok_or_else(|| RuntimeError::UnknownCall(id.to_owned()))?;
        hold.keep();
        Ok(call)
    }

    /// Takes a call of the expected kind and re-validates it (and the data it continues with)
    /// against this process's registry; anything wrong puts it back. Taking an interrupted call
    /// again, what would be refused is refused first, so a refusal leaves it interrupted.
    async fn claim(&self, id: &str, ask: Ask<'_>, data: Option<&Value>, how: Take) -> Result<(PendingCall, OwnedPrepared), RuntimeError> {
        if how == Take::Again
            && let Some(call) = self.inner.store.get(id).await?
        {
            self.validate(id, &call, ask, data)?;
        }
        let call = self.take(id, how).await?;
        match self.validate(id, &call, ask, data) {
            Ok(prepared) => Ok((call, prepared)),
            Err(e) => {
                self.release(id).await;
                Err(e)
            }
        }
    }

    /// Whether the call can go on as asked: its kind (`None`: approval or resume data), its
    /// tool, its binding, its arguments and context, and the data it continues with.
    fn validate(&self, id: &str, call: &PendingCall, ask: Ask<'_>, data: Option<&Value>) -> Result<OwnedPrepared, RuntimeError> {
        let fits = match ask.kind {
            Some(kind) => kind == call.kind,
            None => call.kind != PendingKind::ClientResult,
        };
        if !fits {
            return Err(RuntimeError::WrongKind {
                id: id.to_owned(),
                waits: call.kind.waits_for(),
                asked: ask.what,
            });
        }
        let Some(tool) = self.inner.registry.get(&call.tool_name) else {
            return Err(RuntimeError::ToolGone {
                id: id.to_owned(),
                tool: call.tool_name.clone(),
            });
        };
        let answer = match (call.kind, data) {
            (PendingKind::Approval, Some(data)) => Some(Answer::read_for(id, data).map_err(RuntimeError::InvalidResume)?),
            _ => None,
        };
        if call.kind == PendingKind::Approval {
            let runs = answer.as_ref().map_or(ask.runs, |a| !matches!(a, Answer::Reject { .. }));
            check_binding(call, tool.spec(), ask.binding, runs)?;
        }
        let args = CallArgs::Value(call.args.clone());
        let context = Some(Value::Object(call.context()));
        let prepared = self.inner.registry.prepare(&call.tool_name, &args, context);
        let prepared = prepared.and_then(|p| p.into_owned()).map_err(RuntimeError::InvalidResume)?;
        match (call.kind, data) {
            (PendingKind::Suspended, Some(data)) => prepared.check_resume(data).map_err(RuntimeError::InvalidResume)?,
            (PendingKind::ClientResult, Some(data)) => prepared.check_result(data).map_err(RuntimeError::InvalidResult)?,
            _ => {}
        }
        Ok(prepared)
    }

    /// The call as an answer runs it: an edit's arguments validated like a model's (with the
    /// stored request context) and its approval predicate run on them again; anything else as
    /// stored. An edit that does not validate is refused.
    fn answered(&self, call: &PendingCall, prepared: OwnedPrepared, answer: &Answer) -> Result<OwnedPrepared, RuntimeError> {
        let Answer::Edit { args } = answer else {
            return Ok(prepared);
        };
        let edited = CallArgs::Value(args.clone());
        let context = Some(Value::Object(call.context()));
        let edited = self.inner.registry.prepare(&call.tool_name, &edited, context);
        let edited = edited.and_then(|p| p.into_owned()).map_err(RuntimeError::InvalidResume)?;
        // The editor's decision is the approval the edited arguments need, if they need one.
        let still = edited.needs_approval(call.data.caller.as_deref());
        tracing::info!(tool_call_id = %call.tool_call_id, tool = %call.tool_name, approval_still_needed = still, "a call runs with arguments edited by its approver");
        Ok(edited)
    }

    /// Decides a call waiting for approval: approve, edit (the approver's arguments instead)
    /// or reject with a reason. The decision is bound to the call it was made for
    /// ([`Binding`]): a decision for another call id, other arguments, another version of the
    /// tool (the tool changed since the call started to wait), an earlier call that had the
    /// same id or another caller's call is refused ([`RuntimeError::Unbound`]), nothing runs and the call keeps waiting.
    /// Edited arguments that do not validate are refused the same way. `options`: what the tool
    /// runs with, and whether an interrupted call may run again.
    pub async fn decide(&self, decision: Decision, options: ResumeOptions) -> Result<EventStream, RuntimeError> {
        let id = decision.call_id().to_owned();
        let runs = !matches!(decision.answer, Answer::Reject { .. });
        let ask = Ask {
            binding: Some(&decision.binding),
            ..Ask::new("a decision", Some(PendingKind::Approval), runs)
        };
        // A rejection runs nothing: an interrupted call can be rejected, as it can be declined.
        let how = if runs { options.take() } else { Take::Again };
        let (call, prepared) = self.claim(&id, ask, None, how).await?;
        let prepared = match self.answered(&call, prepared, &decision.answer) {
            Ok(prepared) => prepared,
            Err(e) => {
                self.release(&id).await;
                return Err(e);
            }
        };
        let action = action_of(&call, &prepared, &decision.answer);
        self.audit_decision(&call, action, &options, (decision.signed(), runs)).await;
        let env = if runs { options.env } else { CallEnv::default() };
        Ok(self.continue_approval(call, prepared, (decision.answer, None), env))
    }

    /// The binding of a call waiting for approval: what a decision on it must carry.
    pub async fn binding(&self, tool_call_id: &str) -> Result<Binding, RuntimeError> {
        let call = self.inner.store.get(tool_call_id).await?;
        let call = call.ok_or_else(|| RuntimeError::UnknownCall(tool_call_id.to_owned()))?;
        if call.kind != PendingKind::Approval {
            return Err(RuntimeError::WrongKind {
                id: tool_call_id.to_owned(),
                waits: call.kind.waits_for(),
                asked: "a decision",
            });
        }
        let tool = self.inner.registry.get(&call.tool_name).ok_or_else(|| RuntimeError::ToolGone {
            id: tool_call_id.to_owned(),
            tool: call.tool_name.clone(),
        })?;
        Ok(stored_binding(&call, tool.spec()))
    }

    /// Approves a call waiting for approval and runs it. Bound to that call id and to what is
    /// stored: an unknown or already resolved id is an error, and so is a call whose tool
    /// changed since it started to wait, or whose earlier run was interrupted (unless
    /// `options` says [`rerun`](ResumeOptions::rerun)).
    pub async fn approve(&self, tool_call_id: &str, options: ResumeOptions) -> Result<EventStream, RuntimeError> {
        let ask = Ask::new("approval", Some(PendingKind::Approval), true);
        let (call, prepared) = self.claim(tool_call_id, ask, None, options.take()).await?;
        self.audit_decision(&call, AuditAction::Approve, &options, (false, true)).await;
        Ok(self.continue_approval(call, prepared, (Answer::Approve, None), options.env))
    }

    /// Declines a call waiting for approval: it never runs; the model receives a "not
    /// approved" result with the reason. A call whose earlier run was interrupted can be
    /// declined too (it is not run again; the store forgets it). Recorded as decided by
    /// [`Actor::Application`]; [`decline_with`](Self::decline_with) names who declines.
    pub async fn decline(&self, tool_call_id: &str, reason: &str) -> Result<EventStream, RuntimeError> {
        self.decline_with(tool_call_id, reason, ResumeOptions::default()).await
    }

    /// [`decline`](Self::decline), by whom `options` names ([`ResumeOptions::by`]; nothing
    /// runs, so its environment and `rerun` do not matter).
    pub async fn decline_with(&self, tool_call_id: &str, reason: &str, options: ResumeOptions) -> Result<EventStream, RuntimeError> {
        let ask = Ask::new("a decline", Some(PendingKind::Approval), false);
        let (call, prepared) = self.claim(tool_call_id, ask, None, Take::Again).await?;
        self.audit_decision(&call, AuditAction::Reject, &options, (false, false)).await;
        // A declined tool never runs: nothing of the request needs to reach it.
        let answer = Answer::Reject { reason: reason.to_owned() };
        Ok(self.continue_approval(call, prepared, (answer, None), CallEnv::default()))
    }

    /// Runs (as approved or edited) or rejects an approval-waiting call; `sent` is the decision
    /// as the person sent it (what the `tool-call-resumed` event shows), when they sent one.
    fn continue_approval(
        &self,
        call: PendingCall,
        prepared: OwnedPrepared,
        (answer, sent): (Answer, Option<Value>),
        env: CallEnv,
    ) -> EventStream {
        let (sink, stream) = Sink::channel();
        let stream = stream.with_loaded(call.data.loaded_tools.clone());
        let this = self.clone();
        let span = trace::continued_span(&call.tool_name, &call.tool_call_id, Some(prepared.tool().spec()));
        let run = async move {
            let tool = prepared.tool().clone();
            let viewer = this.viewer(Some(&*tool));
            let at = CallRef::new(call.tool_call_id.clone(), call.tool_name.clone());
            let mut resume_data = sent.unwrap_or_else(|| answer.to_json());
            let resumed = if let Answer::Edit { .. } = answer {
                let edited = prepared.args().into_owned();
                resume_data["edited"] = Value::Bool(true);
                resume_data["original"] = call.args.clone();
                resume_data["args"] = edited.clone();
                viewer.edited(at.event(RunEventKind::ToolCallResumed { resume_data }), &call.args, &edited)
            } else {
                viewer.event(at.event(RunEventKind::ToolCallResumed { resume_data }))
            };
            sink.send(resumed);
            match answer {
                Answer::Approve | Answer::Edit { .. } => {
                    let env = CallEnv {
                        writer: this.writer(&sink, &at, &tool),
                        ..env
                    };
                    this.execute(
                        &sink,
                        &prepared,
                        &at,
                        (Arc::new(call.data_for_run()), env),
                        None,
                        (true, Origin::Stored),
                    )
                    .await;
                }
                Answer::Reject { reason } => {
                    let reason = if reason.trim().is_empty() {
                        "no reason given".to_owned()
                    } else {
                        reason
                    };
                    this.forget(&at.tool_call_id).await;
                    let output = Outcome::declined_output(&reason);
                    // The runtime's own result (the person's reason): no output transform applies.
                    sink.send(Event::unchanged(at.event(RunEventKind::ToolResult { output })));
                    sink.end(Outcome::Declined { reason });
                }
            }
        };
        tokio::spawn(run.instrument(span));
        stream
    }

    /// Resumes a waiting call with data: for a suspended call, data matching the tool's
    /// `resume` schema (the tool runs again with it as `resume_data`); for a call waiting for
    /// approval, a decision `{approved, reason?}`, or `{approved: true, args}` to run it with
    /// edited arguments (bound to what is stored, as [`approve`](Self::approve) is). Data that
    /// does not match is refused and the call keeps waiting. A call whose earlier run was
    /// interrupted is refused unless `options` says [`rerun`](ResumeOptions::rerun).
    ///
    /// On a runtime with a task store, a suspended call that is a durable task (its tool
    /// suspended itself in the task: the call names its task id) and a call of a tool that
    /// gathers its input first (`background(asks_first)`) are queued as a task again, with the
    /// data, rather than run in the foreground ([`ResumeOptions::background`] may name the
    /// task).
    pub async fn resume(&self, tool_call_id: &str, data: Value, options: ResumeOptions) -> Result<EventStream, RuntimeError> {
        let ask = Ask::new("resume data", None, true);
        let (call, prepared) = self.claim(tool_call_id, ask, Some(&data), options.take()).await?;
        if call.kind == PendingKind::Approval {
            // Read by `claim` already: a decision that does not read was refused there.
            let answer = Answer::read(&data).unwrap_or(Answer::Reject { reason: String::new() });
            let prepared = match self.answered(&call, prepared, &answer) {
                Ok(prepared) => prepared,
                Err(e) => {
                    self.release(tool_call_id).await;
                    return Err(e);
                }
            };
            let runs = !matches!(answer, Answer::Reject { .. });
            self.audit_decision(&call, action_of(&call, &prepared, &answer), &options, (false, runs))
                .await;
            return Ok(self.continue_approval(call, prepared, (answer, Some(data)), options.env));
        }
        self.audit_decision(&call, AuditAction::Resume, &options, (false, true)).await;
        let mut data_for_run = call.data_for_run();
        if let Some(settings) = options.background {
            data_for_run.background = Some(settings);
        }
        // Queued again with its data: a task whose tool suspended itself (it names its task),
        // and the call of a tool that gathers its input before it goes to the background.
        let is_task = data_for_run.background.as_ref().is_some_and(|b| b.task_id.is_some());
        let to_queue = self.inner.tasks.is_some() && (is_task || super::background::asks_first(prepared.tool().spec()));
        let env = options.env;
        let (sink, stream) = Sink::channel();
        let stream = stream.with_loaded(call.data.loaded_tools.clone());
        let this = self.clone();
        let span = trace::continued_span(&call.tool_name, &call.tool_call_id, Some(prepared.tool().spec()));
        let run = async move {
            let tool = prepared.tool().clone();
            let at = CallRef::new(call.tool_call_id.clone(), call.tool_name.clone());
            let resumed = at.event(RunEventKind::ToolCallResumed { resume_data: data.clone() });
            sink.send(this.viewer(Some(&*tool)).event(resumed));
            let env = CallEnv {
                writer: this.writer(&sink, &at, &tool),
                ..env
            };
            this.execute(
                &sink,
                &prepared,
                &at,
                (Arc::new(data_for_run), env),
                Some(data),
                (to_queue, Origin::Stored),
            )
            .await;
        };
        tokio::spawn(run.instrument(span));
        Ok(stream)
    }

    /// Completes a client-side call (`Outcome::AwaitingResult`) with the result the
    /// application produced. The value is checked against the tool's output schema: one that
    /// does not match is refused with a model-readable list of what is wrong, and the call keeps
    /// waiting. An accepted value becomes the call's output as a run's would (`on_output`,
    /// `to_model_output`, the output transforms): the returned run has its `tool-result` event
    /// and ends [`Outcome::Done`]. A call is completed once: a second submit finds nothing
    /// waiting ([`RuntimeError::UnknownCall`]). Recorded as submitted by
    /// [`Actor::Application`]; [`submit_result_with`](Self::submit_result_with) names who.
    ///
    /// ```
    /// use tool_core::prelude::*;
    /// use tool_core::runtime::{Outcome, Runtime};
    ///
    /// #[derive(Debug, Serialize, Deserialize, JsonSchema)]
    /// pub struct Confirmed {
    ///     /// Whether the user said yes.
    ///     pub confirmed: bool,
    /// }
    ///
    /// /// Asks the user to confirm, in the browser
    /// #[tool]
    /// fn ask_confirmation(question: String) -> Confirmed;
    ///
    /// # tokio::runtime::Runtime::new().unwrap().block_on(async {
    /// let runtime = Runtime::new(Registry::from_iter([ask_confirmation::tool()]));
    /// let run = runtime.call("ask-confirmation", json!({"question": "Delete?"}), CallOptions::default()).finish().await;
    /// let Outcome::AwaitingResult(waiting) = run.outcome else { panic!("{:?}", run.outcome) };
    ///
    /// let refused = runtime.submit_result(waiting.id(), json!({"confirmed": "yes"})).await.err().unwrap();
    /// assert!(refused.to_string().contains("/confirmed"), "{refused}");
    /// let run = runtime.submit_result(waiting.id(), json!({"confirmed": true})).await.unwrap().finish().await;
    /// let Outcome::Done(output) = run.outcome else { panic!() };
    /// assert_eq!(output.value(), json!({"confirmed": true}));
    /// assert!(runtime.submit_result(waiting.id(), json!({"confirmed": true})).await.is_err(), "completed once");
    /// # });
    /// ```
    pub async fn submit_result(&self, tool_call_id: &str, result: Value) -> Result<EventStream, RuntimeError> {
        self.submit_result_with(tool_call_id, result, ResumeOptions::default()).await
    }

    /// [`submit_result`](Self::submit_result), by whom `options` names ([`ResumeOptions::by`],
    /// for the audit trail; nothing runs, so its environment and `rerun` do not matter).
    pub async fn submit_result_with(&self, tool_call_id: &str, result: Value, options: ResumeOptions) -> Result<EventStream, RuntimeError> {
        // Nothing runs on a result: an interrupted submit (its process died) may be submitted again.
        let ask = Ask::new("a result", Some(PendingKind::ClientResult), false);
        let (call, prepared) = self.claim(tool_call_id, ask, Some(&result), Take::Again).await?;
        let tool = prepared.tool().clone();
        let data = Arc::new(call.data_for_run());
        let info = ToolCallInfo::new(
            &call.tool_name,
            call.tool_call_id.clone(),
            data.clone(),
            CallEnv::default(),
            Default::default(),
        );
        let output = match tool.complete(result, &info) {
            Ok(output) => output,
            Err(e) => {
                self.release(tool_call_id).await;
                return Err(RuntimeError::InvalidResult(e));
            }
        };
        self.audit_decision(&call, AuditAction::SubmitResult, &options, (false, false))
            .await;
        let (sink, stream) = Sink::channel();
        let stream = stream.with_loaded(call.data.loaded_tools.clone());
        let at = CallRef::new(call.tool_call_id, call.tool_name);
        self.report(
            &sink,
            &self.viewer(Some(&*tool)),
            &prepared,
            &at,
            &data,
            Ok(Finished::Output(output)),
        )
        .await;
        Ok(stream)
    }
}

/// What an answer to `call` records: approve, reject, or an edit with the digests of the
/// arguments it waited with and of those it runs with (never the arguments).
fn action_of(call: &PendingCall, prepared: &OwnedPrepared, answer: &Answer) -> AuditAction {
    match answer {
        Answer::Approve => AuditAction::Approve,
        Answer::Reject { .. } => AuditAction::Reject,
        Answer::Edit { .. } => AuditAction::Edit {
            args_before: crate::fingerprint::hash(&call.args),
            args_after: crate::fingerprint::hash(&*prepared.args()),
        },
    }
}

/// The binding a waiting call is held to: the stored one, or for a call stored without one (by
/// an earlier version), one made of what is stored now. Its owner is always the stored caller's
/// (a binding stored by an earlier version has none of its own).
fn stored_binding(call: &PendingCall, spec: &ToolSpec) -> Binding {
    let owner = call.data.caller.as_deref().map(crate::Caller::owner);
    let mut binding = call.binding.clone().unwrap_or_else(|| Binding {
        call_id: call.tool_call_id.clone(),
        tool: call.tool_name.clone(),
        args_hash: crate::fingerprint::hash(&call.args),
        spec: spec.fingerprint(),
        nonce: String::new(),
        parts: None,
        owner: None,
    });
    binding.owner = owner;
    binding
}

/// Whether a decision bound to `sent` (or to what is stored) may go on: it names this very
/// call, and, when the tool would run, the tool is the one the call waited with.
fn check_binding(call: &PendingCall, now: &ToolSpec, sent: Option<&Binding>, runs: bool) -> Result<(), RuntimeError> {
    let stored = stored_binding(call, now);
    let unbound = |reason: String| RuntimeError::Unbound {
        id: call.tool_call_id.clone(),
        reason,
    };
    if stored.call_id != call.tool_call_id || stored.args_hash != crate::fingerprint::hash(&call.args) {
        return Err(unbound("the stored call does not match its own binding".into()));
    }
    if let Some(reason) = sent.and_then(|sent| stored.differs(sent)) {
        return Err(unbound(format!("the decision was made for {reason}")));
    }
    if let Some(what) = stored.tool_changed(now).filter(|_| runs) {
        return Err(unbound(format!(
            "tool `{}` has changed since the call started to wait ({what} changed), so its approval no longer covers it; reject it, or call the tool again",
            call.tool_name
        )));
    }
    Ok(())
}

/// One hold of a claimed call, let go of when the write ending the claim is dropped (it went
/// through, or was given up).
pub(super) struct Held(pub(super) String);

impl Drop for Held {
    fn drop(&mut self) {
        super::reconcile::active().let_go(&self.0);
    }
}
