//! Approvals bound to the exact call: what a decision covers, and the three answers.
//!
//! Owns [`Binding`] (a waiting call's id, its tool, the RFC 8785 + SHA-256 hash of its validated
//! arguments, the tool's spec fingerprint, a nonce drawn when the call started to wait, and the
//! owner of the caller who made it),
//! [`Answer`] (approve, edit, reject) and [`Decision`] (an answer bound to one call). The binding
//! is stored with the waiting call; a decision whose binding differs from the stored one, or a
//! stored binding whose tool has changed since, is refused before anything runs. Claiming and
//! running are `decide`'s; signing decisions is `token`'s.

use serde::{Deserialize, Serialize};
use serde_json::Value;

use crate::fingerprint::{Change, Definition, Fingerprint, PartDigests, hash};
use crate::spec::ToolSpec;

/// What an approval covers: exactly one waiting call, its arguments and its tool as they were
/// when it started to wait.
///
/// ```
/// use tool_core::prelude::*;
/// use tool_core::runtime::{ResumeOptions, Answer, Decision, Outcome, Runtime};
///
/// /// Send an email (asks a person first)
/// #[tool(require_approval)]
/// async fn send_email(to: String) -> String {
///     format!("sent to {to}")
/// }
///
/// # tokio::runtime::Runtime::new().unwrap().block_on(async {
/// let runtime = Runtime::new(Registry::from_iter([send_email::tool()]));
/// let run = runtime.call("send-email", json!({"to": "ann@example.com"}), CallOptions::default()).finish().await;
/// let Outcome::AwaitingApproval(waiting) = run.outcome else { panic!() };
/// let binding = waiting.call.binding.clone().unwrap();
/// assert_eq!(binding.call_id, waiting.id());
///
/// // A binding for other arguments is refused; nothing runs and the call keeps waiting.
/// let mut forged = binding.clone();
/// forged.args_hash = tool_core::fingerprint::hash(&json!({"to": "eve@example.com"}));
/// let refused = runtime.decide(Decision::new(forged, Answer::Approve), ResumeOptions::default()).await.err().unwrap();
/// assert!(refused.to_string().contains("arguments"), "{refused}");
///
/// let run = runtime.decide(Decision::new(binding, Answer::Approve), ResumeOptions::default()).await.unwrap().finish().await;
/// let Outcome::Done(output) = run.outcome else { panic!() };
/// assert_eq!(output.value(), json!("sent to ann@example.com"));
/// # });
/// ```
#[derive(Debug, Clone, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Binding {
    /// The waiting call's id.
    pub call_id: String,
    /// The tool's id.
    pub tool: String,
    /// `sha256:` and the SHA-256 of the validated arguments' RFC 8785 canonical JSON.
    pub args_hash: String,
    /// The tool's spec fingerprint when the call started to wait.
    pub spec: Fingerprint,
    /// Drawn when the call started to wait: a decision for an earlier call that had the same
    /// id (a reused id) does not match.
    pub nonce: String,
    /// The hash of each part of the tool's definition when the call started to wait, so a
    /// refusal says what changed (`None` in a binding stored by an earlier version). Not
    /// compared by itself: `spec` covers the same parts.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub parts: Option<PartDigests>,
    /// The owner of the caller who made the call ([`Caller::owner`](crate::Caller::owner)), `None`
    /// when it had none (stdio, an open endpoint, a direct call). A signed decision carries it, so
    /// an edge can refuse a token brought by anyone else; a decision for another owner than the
    /// stored call's is refused like one for other arguments.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub owner: Option<String>,
}

impl Binding {
    /// The binding of a call of `owner` that starts to wait now (a fresh nonce).
    pub(crate) fn new(call_id: &str, spec: &ToolSpec, args: &Value, owner: Option<String>) -> Binding {
        Binding {
            owner,
            call_id: call_id.to_owned(),
            tool: spec.id.clone(),
            args_hash: hash(args),
            spec: spec.fingerprint(),
            nonce: crate::call::new_call_id().trim_start_matches("call_").to_owned(),
            parts: Some(Definition::of(spec).parts()),
        }
    }

    /// What in `sent` differs from this (stored) binding, in words; `None` when they match.
    pub(crate) fn differs(&self, sent: &Binding) -> Option<String> {
        let parts = [
            (self.call_id != sent.call_id, "another call id"),
            (self.tool != sent.tool, "another tool"),
            (self.args_hash != sent.args_hash, "other arguments"),
            (self.spec != sent.spec, "another version of the tool"),
            (self.nonce != sent.nonce, "an earlier call that had the same id"),
            (self.owner != sent.owner, "another caller's call"),
        ];
        let named: Vec<&str> = parts.iter().filter_map(|(d, what)| d.then_some(*what)).collect();
        (!named.is_empty()).then(|| named.join(", "))
    }

    /// What in the tool changed since this binding was made, in words (`its description, input
    /// schema`), when it did; a binding without part digests (stored by an earlier version)
    /// says only that the definition changed.
    pub(crate) fn tool_changed(&self, now: &ToolSpec) -> Option<String> {
        if self.tool == now.id && self.spec == now.fingerprint() {
            return None;
        }
        let changes = match &self.parts {
            Some(parts) => parts.changes(&Definition::of(now).parts()),
            None => Vec::new(),
        };
        Some(match changes.as_slice() {
            [] => "the tool's definition".to_owned(),
            changes => {
                let named: Vec<&str> = changes.iter().copied().map(Change::as_str).collect();
                format!("its {}", named.join(", "))
            }
        })
    }
}

/// A person's answer to a call waiting for approval.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "answer", rename_all = "kebab-case")]
pub enum Answer {
    /// Run the call with its arguments.
    Approve,
    /// Run the call with these arguments instead: validated against the tool's input schema
    /// like a model's; the tool's approval predicate runs again on them, and the editor's
    /// decision is the approval when they still need one.
    Edit {
        /// The replacement arguments.
        args: Value,
    },
    /// Do not run it; the model is told why.
    Reject {
        /// Why (shown to the model).
        reason: String,
    },
}

impl Answer {
    /// Reads a decision as a person sends it: `{approved: true}`, `{approved: true, args: {…}}`
    /// (an edit) or `{approved: false, reason?}`. Anything else is `None`.
    pub(crate) fn read(data: &Value) -> Option<Answer> {
        let object = data.as_object()?;
        let known = object.keys().all(|k| matches!(k.as_str(), "approved" | "reason" | "args"));
        let reason = match object.get("reason") {
            None => String::new(),
            Some(Value::String(r)) => r.clone(),
            Some(_) => return None,
        };
        match (object.get("approved")?, object.get("args")) {
            _ if !known => None,
            (Value::Bool(true), None) => Some(Answer::Approve),
            (Value::Bool(true), Some(args)) => Some(Answer::Edit { args: args.clone() }),
            (Value::Bool(false), None) => Some(Answer::Reject { reason }),
            _ => None,
        }
    }

    /// The answer's name (`approve`, `edit`, `reject`).
    pub fn name(&self) -> &'static str {
        match self {
            Answer::Approve => "approve",
            Answer::Edit { .. } => "edit",
            Answer::Reject { .. } => "reject",
        }
    }
}

/// An answer bound to one waiting call ([`Runtime::decide`](super::Runtime::decide)).
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct Decision {
    /// The call it was made for, as the approver saw it.
    pub binding: Binding,
    /// The answer.
    #[serde(flatten)]
    pub answer: Answer,
    /// Whether it came out of a signed token ([`Runtime::verify_decision`](super::Runtime::verify_decision)):
    /// the audit trail records that a token was used. Never part of a token itself.
    #[serde(skip)]
    signed: bool,
}

/// Two decisions are equal when they decide the same thing (however they arrived).
impl PartialEq for Decision {
    fn eq(&self, other: &Decision) -> bool {
        self.binding == other.binding && self.answer == other.answer
    }
}

impl Decision {
    /// An answer for the call `binding` names.
    pub fn new(binding: Binding, answer: Answer) -> Decision {
        Decision {
            binding,
            answer,
            signed: false,
        }
    }

    /// Whether it came out of a signed decision token.
    pub fn signed(&self) -> bool {
        self.signed
    }

    /// The decision, marked as one that came out of a signed token.
    pub(crate) fn came_signed(self) -> Decision {
        Decision { signed: true, ..self }
    }

    /// The call it decides.
    pub fn call_id(&self) -> &str {
        &self.binding.call_id
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    #[test]
    fn each_difference_is_named_and_answers_read() {
        let spec = ToolSpec::new("t", "Does it", json!({"type": "object"}));
        let a = Binding::new("call_1", &spec, &json!({"x": 1, "y": [1.0]}), None);
        let mut b = a.clone();
        assert_eq!(a.differs(&b), None);
        b.args_hash = hash(&json!({"y": [1], "x": 1}));
        assert_eq!(a.differs(&b), None, "canonical: key order and number spelling do not matter");
        b.args_hash = hash(&json!({"x": 2}));
        b.nonce = "other".into();
        assert_eq!(a.differs(&b).unwrap(), "other arguments, an earlier call that had the same id");
        let mut theirs = a.clone();
        theirs.owner = Some("subject:bob".into());
        assert_eq!(a.differs(&theirs).unwrap(), "another caller's call");
        assert_ne!(
            Binding::new("call_1", &spec, &json!({}), None).nonce,
            Binding::new("call_1", &spec, &json!({}), None).nonce
        );
        let changed = ToolSpec::new("t", "Does more", json!({"type": "object"}));
        assert_eq!(a.tool_changed(&spec), None);
        assert_eq!(a.tool_changed(&changed).unwrap(), "its description");
        let mut schemas = ToolSpec::new("t", "Does it", json!({"type": "object", "required": ["x"]}));
        schemas.schemas.output = Some(json!({"type": "string"}));
        schemas.presentation.mcp.destructive_hint = Some(true);
        assert_eq!(a.tool_changed(&schemas).unwrap(), "its input schema, output schema, annotations");
        let old: Binding = serde_json::from_value(json!({
            "callId": "call_1", "tool": "t", "argsHash": a.args_hash, "spec": a.spec, "nonce": "n"
        }))
        .unwrap();
        assert_eq!(old.parts, None, "a binding stored by an earlier version reads");
        assert_eq!(old.tool_changed(&spec), None);
        assert_eq!(old.tool_changed(&changed).unwrap(), "the tool's definition");

        assert_eq!(Answer::read(&json!({"approved": true})), Some(Answer::Approve));
        assert_eq!(
            Answer::read(&json!({"approved": true, "args": {"x": 3}})),
            Some(Answer::Edit { args: json!({"x": 3}) })
        );
        assert_eq!(
            Answer::read(&json!({"approved": false, "reason": "no"})),
            Some(Answer::Reject { reason: "no".into() })
        );
        for bad in [
            json!({"approved": "yes"}),
            json!({"approved": false, "args": {}}),
            json!({"approved": true, "x": 1}),
            json!([]),
        ] {
            assert_eq!(Answer::read(&bad), None, "{bad}");
        }
    }
}
