//! Continuing a waiting call: approve, decline, resume, submit a client-side call's result.
//!
//! Owns claiming a waiting call from the store (exactly one claimer; anything wrong puts it
//! back, nothing runs) and the four ways it goes on. A continued call runs with what the
//! continuing request brings ([`CallEnv`]: its cancellation, timeout, MCP client), never with
//! the handles of the request that started it.

use serde_json::{json, Value};
use tracing::Instrument;

use super::events::{CallRef, Event, RunEventKind};
use super::outcome::{EventStream, Outcome, Sink};
use super::pending::{PendingCall, PendingKind};
use super::store::StoreError;
use super::{Runtime, RuntimeError};
use crate::call::{trace, CallArgs, Finished};
use crate::context::{CallEnv, ToolCallInfo};
use crate::error::{ErrorKind, ToolError};
use crate::registry::OwnedPrepared;

/// A person's answer to a call waiting for approval.
enum Decision {
    Approve,
    Decline(String),
}

impl Decision {
    /// The decision as the `tool-call-resumed` event carries it.
    fn to_json(&self) -> Value {
        match self {
            Decision::Approve => json!({"approved": true}),
            Decision::Decline(reason) => json!({"approved": false, "reason": reason}),
        }
    }
}

impl Decision {
    /// Reads `{approved, reason?}`; anything else is refused.
    fn read(id: &str, data: &Value) -> Result<Decision, ToolError> {
        let ok = data.get("approved").is_some_and(Value::is_boolean)
            && data.get("reason").is_none_or(Value::is_string)
            && data.as_object().is_some_and(|o| o.keys().all(|k| k == "approved" || k == "reason"));
        if !ok {
            return Err(ToolError::with_kind(
                ErrorKind::InvalidInput,
                format!("call `{id}` waits for approval: send {{\"approved\": true}} or {{\"approved\": false, \"reason\": \"…\"}}"),
            ));
        }
        Ok(if data["approved"] == Value::Bool(true) {
            Decision::Approve
        } else {
            Decision::Decline(data["reason"].as_str().unwrap_or_default().to_owned())
        })
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
    /// Puts a claimed call back to waiting (nothing ran).
    async fn release(&self, id: &str) {
        if let Err(e) = self.inner.store.release(id).await {
            tracing::warn!(tool_call_id = id, error = %e, "a pending call could not be released");
        }
    }

    /// Whether the tool declares that calling it twice has no extra effect (MCP's
    /// `idempotentHint`), or runs once per call over a receipt (`idempotent`: its receipt, not
    /// the pending row, then decides whether the body runs again).
    fn idempotent(&self, tool: &str) -> bool {
        let tool = self.inner.registry.get(tool);
        tool.is_some_and(|t| t.spec().mcp.idempotent_hint == Some(true) || t.spec().idempotent.is_some())
    }

    /// Takes a call from the store. A call whose earlier run was interrupted is taken only as
    /// decided (`Take::Again`), or on its own when its tool is declared idempotent.
    async fn take(&self, id: &str, how: Take) -> Result<PendingCall, RuntimeError> {
        let store = &self.inner.store;
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
        taken?.ok_or_else(|| RuntimeError::UnknownCall(id.to_owned()))
    }

    /// Takes a call of the expected kind and re-validates it (and the data it continues with)
    /// against this process's registry; anything wrong puts it back. Taking an interrupted call
    /// again, what would be refused is refused first, so a refusal leaves it interrupted.
    async fn claim(
        &self,
        id: &str,
        (asked, kind): (&'static str, Option<PendingKind>),
        data: Option<&Value>,
        how: Take,
    ) -> Result<(PendingCall, OwnedPrepared), RuntimeError> {
        if how == Take::Again {
            if let Some(call) = self.inner.store.get(id).await? {
                self.validate(id, &call, (asked, kind), data)?;
            }
        }
        let call = self.take(id, how).await?;
        match self.validate(id, &call, (asked, kind), data) {
            Ok(prepared) => Ok((call, prepared)),
            Err(e) => {
                self.release(id).await;
                Err(e)
            }
        }
    }

    /// Whether the call can go on as asked: its kind (`None`: approval or resume data), its
    /// tool, its arguments and context, and the data it continues with.
    fn validate(
        &self,
        id: &str,
        call: &PendingCall,
        (asked, kind): (&'static str, Option<PendingKind>),
        data: Option<&Value>,
    ) -> Result<OwnedPrepared, RuntimeError> {
        let fits = match kind {
            Some(kind) => kind == call.kind,
            None => call.kind != PendingKind::ClientResult,
        };
        if !fits {
            return Err(RuntimeError::WrongKind {
                id: id.to_owned(),
                waits: call.kind.waits_for(),
                asked,
            });
        }
        if self.inner.registry.get(&call.tool_name).is_none() {
            return Err(RuntimeError::ToolGone {
                id: id.to_owned(),
                tool: call.tool_name.clone(),
            });
        }
        let args = CallArgs::Value(call.args.clone());
        let context = Some(Value::Object(call.context()));
        let prepared = self.inner.registry.prepare(&call.tool_name, &args, context);
        let prepared = prepared.and_then(|p| p.into_owned()).map_err(RuntimeError::InvalidResume)?;
        if let Some(data) = data {
            match call.kind {
                PendingKind::Approval => Decision::read(id, data).map(drop).map_err(RuntimeError::InvalidResume)?,
                PendingKind::Suspended => prepared.check_resume(data).map_err(RuntimeError::InvalidResume)?,
                PendingKind::ClientResult => prepared.check_result(data).map_err(RuntimeError::InvalidResult)?,
            }
        }
        Ok(prepared)
    }

    /// Approves a call waiting for approval and runs it. Bound to that call id: an unknown or
    /// already resolved id is an error, and so is a call whose earlier run was interrupted
    /// (see [`approve_rerun`](Self::approve_rerun)).
    pub async fn approve(&self, tool_call_id: &str) -> Result<EventStream, RuntimeError> {
        self.approve_with(tool_call_id, CallEnv::default()).await
    }

    /// [`approve`](Self::approve), the tool running with what the current request brings
    /// (its cancellation, its MCP client) instead of nothing.
    pub async fn approve_with(&self, tool_call_id: &str, env: CallEnv) -> Result<EventStream, RuntimeError> {
        self.approve_as(tool_call_id, env, Take::Fresh).await
    }

    /// Approves and runs a call whose earlier run was interrupted (the process running it died,
    /// so the tool may already have had its effect): the explicit, logged decision to run it
    /// once more. A call that simply waits is approved as [`approve_with`](Self::approve_with)
    /// does.
    pub async fn approve_rerun(&self, tool_call_id: &str, env: CallEnv) -> Result<EventStream, RuntimeError> {
        self.approve_as(tool_call_id, env, Take::Again).await
    }

    async fn approve_as(&self, tool_call_id: &str, env: CallEnv, how: Take) -> Result<EventStream, RuntimeError> {
        let asked = ("approval", Some(PendingKind::Approval));
        let (call, prepared) = self.claim(tool_call_id, asked, None, how).await?;
        Ok(self.continue_approval(call, prepared, (Decision::Approve, None), env))
    }

    /// Declines a call waiting for approval: it never runs; the model receives a "not
    /// approved" result with the reason. A call whose earlier run was interrupted can be
    /// declined too (it is not run again; the store forgets it).
    pub async fn decline(&self, tool_call_id: &str, reason: &str) -> Result<EventStream, RuntimeError> {
        let asked = ("a decline", Some(PendingKind::Approval));
        let (call, prepared) = self.claim(tool_call_id, asked, None, Take::Again).await?;
        // A declined tool never runs: nothing of the request needs to reach it.
        let decision = Decision::Decline(reason.to_owned());
        Ok(self.continue_approval(call, prepared, (decision, None), CallEnv::default()))
    }

    /// Runs or declines an approval-waiting call; `sent` is the decision as the person sent it
    /// (what the `tool-call-resumed` event shows), when they sent one.
    fn continue_approval(
        &self,
        call: PendingCall,
        prepared: OwnedPrepared,
        (decision, sent): (Decision, Option<Value>),
        env: CallEnv,
    ) -> EventStream {
        let (sink, stream) = Sink::channel();
        let this = self.clone();
        let span = trace::continued_span(&call.tool_name, &call.tool_call_id, Some(prepared.tool().spec()));
        let run = async move {
            let tool = prepared.tool().clone();
            let viewer = this.viewer(Some(&*tool));
            let at = CallRef::new(call.tool_call_id.clone(), call.tool_name.clone());
            let resume_data = sent.unwrap_or_else(|| decision.to_json());
            sink.send(viewer.event(at.event(RunEventKind::ToolCallResumed { resume_data })));
            match decision {
                Decision::Approve => {
                    let env = CallEnv {
                        writer: this.writer(&sink, &at, &tool),
                        ..env
                    };
                    this.execute(&sink, &prepared, &at, (call.data_for_run(), env), None, true).await;
                }
                Decision::Decline(reason) => {
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
    /// approval, a decision `{approved, reason?}`. Data that does not match is refused and the
    /// call keeps waiting. A call whose earlier run was interrupted is refused (see
    /// [`resume_rerun`](Self::resume_rerun)).
    pub async fn resume(&self, tool_call_id: &str, data: Value) -> Result<EventStream, RuntimeError> {
        self.resume_with(tool_call_id, data, CallEnv::default()).await
    }

    /// [`resume`](Self::resume), the tool running with what the current request brings.
    pub async fn resume_with(&self, tool_call_id: &str, data: Value, env: CallEnv) -> Result<EventStream, RuntimeError> {
        self.resume_as(tool_call_id, data, env, Take::Fresh).await
    }

    /// [`resume_with`](Self::resume_with), also for a call whose earlier run was interrupted:
    /// the explicit, logged decision to run it once more.
    pub async fn resume_rerun(&self, tool_call_id: &str, data: Value, env: CallEnv) -> Result<EventStream, RuntimeError> {
        self.resume_as(tool_call_id, data, env, Take::Again).await
    }

    async fn resume_as(&self, tool_call_id: &str, data: Value, env: CallEnv, how: Take) -> Result<EventStream, RuntimeError> {
        let (call, prepared) = self.claim(tool_call_id, ("resume data", None), Some(&data), how).await?;
        if call.kind == PendingKind::Approval {
            // Read by `claim` already: a decision that does not read was refused there.
            let decision = Decision::read(tool_call_id, &data).unwrap_or(Decision::Decline(String::new()));
            return Ok(self.continue_approval(call, prepared, (decision, Some(data)), env));
        }
        let (sink, stream) = Sink::channel();
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
            this.execute(&sink, &prepared, &at, (call.data_for_run(), env), Some(data), false)
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
    /// waiting ([`RuntimeError::UnknownCall`]).
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
        // Nothing runs on a result: an interrupted submit (its process died) may be submitted again.
        let asked = ("a result", Some(PendingKind::ClientResult));
        let (call, prepared) = self.claim(tool_call_id, asked, Some(&result), Take::Again).await?;
        let tool = prepared.tool().clone();
        let data = call.data_for_run();
        let info = ToolCallInfo::new(
            &call.tool_name,
            call.tool_call_id.clone(),
            &data,
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
        let (sink, stream) = Sink::channel();
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
