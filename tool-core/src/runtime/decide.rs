//! Continuing a waiting call: approve, decline, resume.
//!
//! Owns claiming a waiting call from the store (exactly one claimer; anything wrong puts it
//! back, nothing runs) and the three ways it goes on. A continued call runs with what the
//! continuing request brings ([`CallEnv`]: its cancellation, timeout, MCP client), never with
//! the handles of the request that started it.

use serde_json::{json, Value};

use super::events::{CallRef, Event, RunEventKind};
use super::outcome::{EventStream, Outcome, Sink};
use super::pending::{PendingCall, PendingKind};
use super::{Runtime, RuntimeError};
use crate::call::CallArgs;
use crate::context::CallEnv;
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

impl Runtime {
    /// Puts a claimed call back to waiting (nothing ran).
    fn release(&self, id: &str) {
        if let Err(e) = self.inner.store.release(id) {
            tracing::warn!(tool_call_id = id, error = %e, "a pending call could not be released");
        }
    }

    /// Takes a waiting call of the expected kind and re-validates it against this process's
    /// registry; anything wrong puts it back.
    fn claim(&self, id: &str, asked: &'static str, kind: Option<PendingKind>) -> Result<(PendingCall, OwnedPrepared), RuntimeError> {
        let call = self
            .inner
            .store
            .claim(id)?
            .ok_or_else(|| RuntimeError::UnknownCall(id.to_owned()))?;
        let release = |e: RuntimeError| {
            self.release(id);
            Err(e)
        };
        if let Some(kind) = kind.filter(|k| *k != call.kind) {
            let waits = match call.kind {
                PendingKind::Approval => "approval",
                PendingKind::Suspended => "resume data",
            };
            debug_assert_ne!(kind, call.kind);
            return release(RuntimeError::WrongKind {
                id: id.to_owned(),
                waits,
                asked,
            });
        }
        if self.inner.registry.get(&call.tool_name).is_none() {
            return release(RuntimeError::ToolGone {
                id: id.to_owned(),
                tool: call.tool_name.clone(),
            });
        }
        let args = CallArgs::Value(call.args.clone());
        let context = Some(Value::Object(call.context()));
        match self
            .inner
            .registry
            .prepare(&call.tool_name, &args, context)
            .and_then(|p| p.into_owned())
        {
            Ok(p) => Ok((call, p)),
            Err(e) => release(RuntimeError::InvalidResume(e)),
        }
    }

    /// Approves a call waiting for approval and runs it. Bound to that call id: an unknown or
    /// already resolved id is an error.
    pub async fn approve(&self, tool_call_id: &str) -> Result<EventStream, RuntimeError> {
        self.approve_with(tool_call_id, CallEnv::default()).await
    }

    /// [`approve`](Self::approve), the tool running with what the current request brings
    /// (its cancellation, its MCP client) instead of nothing.
    pub async fn approve_with(&self, tool_call_id: &str, env: CallEnv) -> Result<EventStream, RuntimeError> {
        let (call, prepared) = self.claim(tool_call_id, "approval", Some(PendingKind::Approval))?;
        Ok(self.continue_approval(call, prepared, (Decision::Approve, None), env))
    }

    /// Declines a call waiting for approval: it never runs; the model receives a "not
    /// approved" result with the reason.
    pub async fn decline(&self, tool_call_id: &str, reason: &str) -> Result<EventStream, RuntimeError> {
        let (call, prepared) = self.claim(tool_call_id, "a decline", Some(PendingKind::Approval))?;
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
        tokio::spawn(async move {
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
                    this.forget(&at.tool_call_id);
                    let output = Outcome::declined_output(&reason);
                    // The runtime's own result (the person's reason): no output transform applies.
                    sink.send(Event::unchanged(at.event(RunEventKind::ToolResult { output })));
                    sink.end(Outcome::Declined { reason });
                }
            }
        });
        stream
    }

    /// Resumes a waiting call with data: for a suspended call, data matching the tool's
    /// `resume` schema (the tool runs again with it as `resume_data`); for a call waiting for
    /// approval, a decision `{approved, reason?}`. Data that does not match is refused and the
    /// call keeps waiting.
    pub async fn resume(&self, tool_call_id: &str, data: Value) -> Result<EventStream, RuntimeError> {
        self.resume_with(tool_call_id, data, CallEnv::default()).await
    }

    /// [`resume`](Self::resume), the tool running with what the current request brings.
    pub async fn resume_with(&self, tool_call_id: &str, data: Value, env: CallEnv) -> Result<EventStream, RuntimeError> {
        let (call, prepared) = self.claim(tool_call_id, "resume data", None)?;
        let refuse = |e: ToolError| {
            self.release(tool_call_id);
            Err(RuntimeError::InvalidResume(e))
        };
        if call.kind == PendingKind::Approval {
            return match Decision::read(tool_call_id, &data) {
                Ok(decision) => Ok(self.continue_approval(call, prepared, (decision, Some(data)), env)),
                Err(e) => refuse(e),
            };
        }
        if let Err(e) = prepared.check_resume(&data) {
            return refuse(e);
        }
        let (sink, stream) = Sink::channel();
        let this = self.clone();
        tokio::spawn(async move {
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
        });
        Ok(stream)
    }
}
