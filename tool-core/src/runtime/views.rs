//! What the `display` and `transcript` views of an event show.
//!
//! Owns the [`TransformPolicy`] a runtime may apply to every tool, [`RedactSecrets`], the
//! [`placeholder`] and the one function that decides what a view shows ([`Viewer`]). Views fail
//! closed: a configured transform that yields nothing, fails or panics shows a placeholder
//! (input deltas are dropped), never the raw payload. A waiting call's arguments (approval,
//! suspension) are shown redacted even when nothing rewrites them: they are put before a
//! person, like an error, and the redaction is the one errors get.

use serde_json::{Value, json};

use super::events::{Event, RunEvent, RunEventKind, ShownEvent, ShownOutput};
use crate::error::ToolError;
use crate::panic::{catch_panic, guarded};
use crate::spec::{ToolSpec, TransformPhase, TransformTarget};
use crate::tool::{Tool, ToolOutput};

/// Transforms a runtime applies to every tool, before the tool's own (the first value wins).
///
/// When [`configures`](TransformPolicy::configures) says yes for a target and phase, that view
/// never shows the raw payload: if neither the policy nor the tool yields a value, the view
/// shows a placeholder.
pub trait TransformPolicy: Send + Sync + 'static {
    /// Whether this policy rewrites `phase` payloads of `tool` for `target`.
    fn configures(&self, tool: &ToolSpec, target: TransformTarget, phase: TransformPhase) -> bool;
    /// Rewrites a payload; `None` leaves it to the tool's own transform.
    fn transform(
        &self,
        tool: &ToolSpec,
        target: TransformTarget,
        phase: TransformPhase,
        payload: &Value,
    ) -> Option<Result<Value, ToolError>>;
}

/// A policy that removes secret-named keys (by [`is_secret_key`](crate::call::is_secret_key):
/// password, secret, token, apiKey, api_key, auth, credential, …) from every payload of every tool (known to the runtime or not) in both views,
/// and drops input deltas (which cannot be redacted before they are complete). Arguments that
/// are not JSON (shown as their text) have no keys to redact: the views show the placeholder.
#[derive(Debug, Clone, Copy, Default)]
pub struct RedactSecrets;

impl TransformPolicy for RedactSecrets {
    fn configures(&self, _: &ToolSpec, _: TransformTarget, _: TransformPhase) -> bool {
        true
    }

    fn transform(&self, _: &ToolSpec, _: TransformTarget, phase: TransformPhase, payload: &Value) -> Option<Result<Value, ToolError>> {
        match phase {
            TransformPhase::InputDelta => None,
            // An input root is an object: a string is the text of arguments that were not JSON.
            TransformPhase::Input if payload.is_string() => Some(Err(ToolError::new("arguments that are not JSON cannot be redacted"))),
            _ => Some(Ok(crate::call::redact(payload))),
        }
    }
}

/// The name of a phase in placeholders (`inputDelta`, as the reference spells it).
fn phase_name(phase: TransformPhase) -> &'static str {
    match phase {
        TransformPhase::Input => "input",
        TransformPhase::InputDelta => "inputDelta",
        TransformPhase::Output => "output",
        TransformPhase::Error => "error",
        TransformPhase::Approval => "approval",
        TransformPhase::Suspend => "suspend",
        TransformPhase::Resume => "resume",
    }
}

/// The payload shown in place of one that could not be transformed.
pub fn placeholder(phase: TransformPhase) -> Value {
    json!({ "message": format!("Tool {} payload unavailable", phase_name(phase)) })
}

/// Decides what each view shows for one tool.
#[derive(Clone, Copy)]
pub(crate) struct Viewer<'a> {
    pub(crate) tool: Option<&'a dyn Tool>,
    pub(crate) policy: Option<&'a dyn TransformPolicy>,
}

/// A viewer at work on one event. `spec` is what the policy is asked about: the tool's, or for
/// a call to a tool the runtime does not have, a stand-in naming it (the policy still applies
/// to what the model sent).
struct Scope<'a> {
    tool: Option<&'a dyn Tool>,
    spec: Option<&'a ToolSpec>,
    policy: Option<&'a dyn TransformPolicy>,
}

/// What a view shows for one payload.
enum Shown {
    Raw,
    Value(Value),
    Dropped,
}

impl Scope<'_> {
    fn configured(&self, target: TransformTarget, phase: TransformPhase) -> bool {
        let Some(spec) = self.spec else {
            return false;
        };
        spec.has_transform(target, phase)
            || self
                .policy
                .is_some_and(|p| catch_panic(|| p.configures(spec, target, phase)).unwrap_or(true))
    }

    /// The policy's value, else the tool's, else the placeholder (or nothing, for deltas).
    fn transformed(&self, target: TransformTarget, phase: TransformPhase, payload: &Value, own: Option<Result<Value, ToolError>>) -> Shown {
        let policy = match (self.policy, self.spec) {
            (Some(p), Some(spec)) if catch_panic(|| p.configures(spec, target, phase)).unwrap_or(true) => {
                guarded(|| Ok(p.transform(spec, target, phase, payload))).unwrap_or_else(|e| Some(Err(e)))
            }
            _ => None,
        };
        // `#[tool]` transforms catch their own panics; a hand-written `Tool`'s may not.
        let own = || match own {
            Some(v) => Some(v),
            None => self
                .tool
                .and_then(|t| guarded(|| Ok(t.transform(target, phase, payload))).unwrap_or_else(|e| Some(Err(e)))),
        };
        match policy {
            Some(Ok(v)) => Shown::Value(v),
            _ => match own() {
                Some(Ok(v)) => Shown::Value(v),
                _ if phase == TransformPhase::InputDelta => Shown::Dropped,
                _ => Shown::Value(placeholder(phase)),
            },
        }
    }

    /// What `target` shows for a payload of `phase`. Phases derived from the input fall back
    /// on the input's transform: a view that hides the input never shows it in deltas,
    /// approvals or suspended calls, and a view that hides input or output never shows errors
    /// raw (they quote both).
    fn show(&self, target: TransformTarget, phase: TransformPhase, payload: &Value, own: Option<Result<Value, ToolError>>) -> Shown {
        if self.configured(target, phase) {
            return self.transformed(target, phase, payload, own);
        }
        let input_hidden = self.configured(target, TransformPhase::Input);
        match phase {
            TransformPhase::InputDelta if input_hidden => Shown::Dropped,
            TransformPhase::Approval if input_hidden => self.transformed(target, TransformPhase::Input, payload, None),
            TransformPhase::Error if input_hidden || self.configured(target, TransformPhase::Output) => {
                Shown::Value(placeholder(TransformPhase::Error))
            }
            _ => Shown::Raw,
        }
    }

    /// What `target` shows for one payload; `waiting` says the event is a waiting call's
    /// (whose arguments are never shown raw).
    fn field(&self, target: TransformTarget, phase: TransformPhase, payload: &Value, waiting: bool) -> Option<Value> {
        match self.show(target, phase, payload, None) {
            Shown::Raw if waiting && matches!(phase, TransformPhase::Input | TransformPhase::Approval) => {
                Some(crate::call::redact(payload))
            }
            Shown::Raw => Some(payload.clone()),
            Shown::Value(v) => Some(v),
            Shown::Dropped => None,
        }
    }

    /// The event in one view.
    fn view_of(&self, raw: &RunEvent, target: TransformTarget) -> Option<ShownEvent> {
        let output = |out: &ToolOutput| {
            let own = if target == TransformTarget::Display {
                out.display().cloned()
            } else {
                out.transcript().cloned()
            };
            match self.show(target, TransformPhase::Output, &out.value(), own) {
                // The model output is derived from the raw output: a view that rewrites the
                // output does not carry it.
                Shown::Value(result) => ShownOutput {
                    result,
                    model_output: None,
                },
                Shown::Raw | Shown::Dropped => ShownOutput::from(out),
            }
        };
        let error = |e: &crate::ToolError| self.field(target, TransformPhase::Error, &e.to_json(), false);
        let waiting = matches!(
            raw.kind,
            RunEventKind::ToolCallApproval { .. } | RunEventKind::ToolCallSuspended { .. } | RunEventKind::ToolCallAwaitingResult { .. }
        );
        let kind = raw
            .kind
            .try_map(|phase, payload| self.field(target, phase, payload, waiting), output, error)?;
        Some(raw.call.event(kind))
    }
}

impl Viewer<'_> {
    /// The `tool-call-resumed` event of an edited approval: the decision with both the
    /// original and the edited arguments, each shown in a view as that view shows a waiting
    /// call's arguments (the tool's approval or input transform, else redacted).
    pub(crate) fn edited(&self, raw: RunEvent, original: &Value, edited: &Value) -> Event {
        let scope = Scope {
            tool: self.tool,
            spec: self.tool.map(|t| t.spec()),
            policy: self.policy,
        };
        let view = |target| {
            let RunEventKind::ToolCallResumed { resume_data } = &raw.kind else {
                return None;
            };
            let shown = |args| {
                let field = scope.field(target, TransformPhase::Approval, args, true);
                field.unwrap_or_else(|| placeholder(TransformPhase::Approval))
            };
            let mut data = resume_data.clone();
            data["original"] = shown(original);
            data["args"] = shown(edited);
            Some(raw.call.event(RunEventKind::ToolCallResumed { resume_data: data }))
        };
        Event {
            display: view(TransformTarget::Display),
            transcript: view(TransformTarget::Transcript),
            raw,
        }
    }

    /// The event in all three views (a result's typed output transforms travel in its output).
    pub(crate) fn event(&self, raw: RunEvent) -> Event {
        let stand_in = match (self.tool, self.policy) {
            (None, Some(_)) => Some(ToolSpec::new(raw.tool_name(), "", json!({"type": "object"}))),
            _ => None,
        };
        let scope = Scope {
            tool: self.tool,
            spec: self.tool.map(|t| t.spec()).or(stand_in.as_ref()),
            policy: self.policy,
        };
        Event {
            display: scope.view_of(&raw, TransformTarget::Display),
            transcript: scope.view_of(&raw, TransformTarget::Transcript),
            raw,
        }
    }
}
