//! Calls that wait: pending approvals, suspended calls and client-side calls waiting for their
//! result.
//!
//! Owns [`PendingCall`] (everything needed to continue a call in another process) and
//! [`PendingKind`] (why it waits). Where such calls are kept is `store`'s; a call's states are
//! `state`'s. Nothing here runs tools: the runtime claims a call, runs it and removes it.

use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};

use super::binding::Binding;
use crate::context::CallData;

/// Why a call is waiting.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum PendingKind {
    /// It needs a person's approval before it runs.
    Approval,
    /// The tool suspended itself and waits for resume data.
    Suspended,
    /// A client-side tool's call waits for its result from the application
    /// (`Runtime::submit_result`). Stored and listed as `result`.
    #[serde(rename = "result")]
    ClientResult,
}

impl PendingKind {
    /// The snake_case name (`approval`, `suspended`, `result`).
    pub fn as_str(self) -> &'static str {
        match self {
            PendingKind::Approval => "approval",
            PendingKind::Suspended => "suspended",
            PendingKind::ClientResult => "result",
        }
    }

    /// What a call of this kind waits for, as messages say it.
    pub fn waits_for(self) -> &'static str {
        match self {
            PendingKind::Approval => "approval",
            PendingKind::Suspended => "resume data",
            PendingKind::ClientResult => "a result from the application",
        }
    }
}

/// A call waiting for approval, resume data or its result: what a new process needs to
/// continue it.
///
/// What the call *is* ([`CallData`]: thread, resource, messages, request context, background
/// settings) is kept whole, flattened into the record; its id is the record's own
/// (`data.tool_call_id` stays empty). The request context is stored as validated (it may hold
/// credentials the tool needs); stores must keep it private (the SQLite store's file is
/// readable by its owner only).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct PendingCall {
    /// The call id; approvals and resumes name it.
    pub tool_call_id: String,
    /// The tool.
    pub tool_name: String,
    /// Why it waits.
    pub kind: PendingKind,
    /// The validated arguments.
    pub args: Value,
    /// What the call is (its id aside).
    #[serde(flatten)]
    pub data: CallData,
    /// What the tool passed to `suspend` (suspended calls).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub suspend_payload: Option<Value>,
    /// The schema resume data must match (for a call waiting for its result, the tool's output
    /// schema: what the result must match).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub resume_schema: Option<Value>,
    /// When it started waiting (milliseconds since the Unix epoch).
    pub created_at_ms: u64,
    /// What a decision on it must be bound to (calls waiting for approval; a call stored by an
    /// earlier version has none, and is bound to what is stored).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub binding: Option<Binding>,
    /// The parts of the resume data given so far, by property of the resume schema (a
    /// suspended call asked in parts: [`Runtime::answer_part`](super::Runtime::answer_part)).
    /// The call resumes once every required part is in; until then any instance sharing the
    /// store takes the rest.
    #[serde(default, skip_serializing_if = "Map::is_empty")]
    pub answers: Map<String, Value>,
}

impl PendingCall {
    /// The call's data as it continues: the record's id, the stored request context.
    pub fn data_for_run(&self) -> CallData {
        CallData {
            tool_call_id: Some(self.tool_call_id.clone()),
            ..self.data.clone()
        }
    }

    /// The stored request context (an empty object when none was sent).
    pub fn context(&self) -> Map<String, Value> {
        match &self.data.context {
            Some(Value::Object(map)) => map.clone(),
            _ => Map::new(),
        }
    }
}
