//! Calls that wait: pending approvals, suspended calls, client-side calls waiting for their
//! result, and where they are kept.
//!
//! Owns [`PendingCall`] (everything needed to continue a call in another process), the
//! [`PendingStore`] trait (small on purpose, so a server database can implement it) and
//! [`MemoryStore`] (for tests and for processes that need nothing to survive). The SQLite store
//! is in `sqlite`; a call's states are `state`'s. Nothing here runs tools: the runtime claims a
//! call, runs it and removes it.

use std::collections::BTreeMap;
use std::sync::Mutex;

use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};

use super::state::{CallState, Claim, Interruption, StoredCall};
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

/// Why a store could not do what was asked.
#[derive(Debug, thiserror::Error)]
pub enum StoreError {
    /// Another live process (or task) is already continuing this call.
    #[error("call `{0}` is already being continued by another process; wait for its result")]
    Busy(String),
    /// The process that was running the call died before it finished: it may have had its
    /// effect, so it is not run again without an explicit decision.
    #[error("{0}")]
    Interrupted(Box<Interruption>),
    /// The stored row cannot be used (unreadable, edited outside toolsmith, unknown state);
    /// nothing ran.
    #[error("call `{id}` cannot be used: {reason}; it was not run")]
    Damaged {
        /// The row's id.
        id: String,
        /// What is wrong with it (never the stored text).
        reason: String,
    },
    /// The storage itself failed.
    #[error("the pending-call store failed: {0}")]
    Storage(String),
}

/// Where pending calls are kept. Every method is durable before it returns: a call that
/// [`save`](PendingStore::save) accepted survives the process being killed right after.
///
/// A call is *waiting* after `save`; [`claim`](PendingStore::claim) moves it to *running* for
/// the caller (exactly one claimer wins); [`release`](PendingStore::release) puts it back to
/// waiting (the resume data was refused, nothing ran); [`remove`](PendingStore::remove) ends
/// it. A call whose claiming process died is *interrupted* (the SQLite store checks whether the
/// claiming process is still alive): it is never lost, and never claimed again by `claim`, only
/// by [`claim_again`](PendingStore::claim_again), an explicit decision to run it once more
/// (see `CallState`).
pub trait PendingStore: Send + Sync + 'static {
    /// Inserts or replaces a waiting call.
    fn save(&self, call: &PendingCall) -> Result<(), StoreError>;
    /// Takes a waiting call for running it. `Ok(None)`: no such call (unknown, or already
    /// resolved). `Err(Busy)`: another live process holds it. `Err(Interrupted)`: the process
    /// that ran it died (see [`claim_again`](PendingStore::claim_again)). `Err(Damaged)`: the
    /// row cannot be used.
    fn claim(&self, tool_call_id: &str) -> Result<Option<PendingCall>, StoreError>;
    /// [`claim`](PendingStore::claim), also taking an interrupted call: the caller decided to
    /// run it again (or to decline it). A store that cannot tell interrupted calls apart
    /// claims as `claim` does.
    fn claim_again(&self, tool_call_id: &str) -> Result<Option<PendingCall>, StoreError> {
        self.claim(tool_call_id)
    }
    /// Puts a claimed call back to waiting.
    fn release(&self, tool_call_id: &str) -> Result<(), StoreError>;
    /// Forgets a call (it was resolved).
    fn remove(&self, tool_call_id: &str) -> Result<(), StoreError>;
    /// One call, waiting or running.
    fn get(&self, tool_call_id: &str) -> Result<Option<PendingCall>, StoreError>;
    /// Every intact call, waiting, running or interrupted, oldest first (damaged rows are
    /// skipped; [`entries`](PendingStore::entries) shows them).
    fn list(&self) -> Result<Vec<PendingCall>, StoreError>;
    /// Every row with its state, oldest first, damaged rows included (a store that cannot
    /// tell states apart lists its calls as waiting).
    fn entries(&self) -> Result<Vec<StoredCall>, StoreError> {
        let calls = self.list()?.into_iter();
        Ok(calls
            .map(|call| StoredCall::Call {
                call: Box::new(call),
                state: CallState::Waiting,
            })
            .collect())
    }
}

/// A store in memory: nothing survives the process. For tests and throwaway runtimes.
#[derive(Debug, Default)]
pub struct MemoryStore {
    calls: Mutex<BTreeMap<String, (PendingCall, Option<Claim>)>>,
}

impl MemoryStore {
    /// An empty store.
    pub fn new() -> Self {
        Self::default()
    }

    fn calls(&self) -> std::sync::MutexGuard<'_, BTreeMap<String, (PendingCall, Option<Claim>)>> {
        self.calls.lock().unwrap_or_else(|p| p.into_inner())
    }
}

impl PendingStore for MemoryStore {
    fn save(&self, call: &PendingCall) -> Result<(), StoreError> {
        self.calls().insert(call.tool_call_id.clone(), (call.clone(), None));
        Ok(())
    }

    fn claim(&self, tool_call_id: &str) -> Result<Option<PendingCall>, StoreError> {
        match self.calls().get_mut(tool_call_id) {
            None => Ok(None),
            Some((_, Some(_))) => Err(StoreError::Busy(tool_call_id.to_owned())),
            Some((call, running)) => {
                let at = std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH);
                *running = Some(Claim {
                    owner_pid: Some(std::process::id()),
                    claimed_at_ms: at.ok().map(|d| u64::try_from(d.as_millis()).unwrap_or(u64::MAX)),
                });
                Ok(Some(call.clone()))
            }
        }
    }

    fn release(&self, tool_call_id: &str) -> Result<(), StoreError> {
        if let Some((_, running)) = self.calls().get_mut(tool_call_id) {
            *running = None;
        }
        Ok(())
    }

    fn remove(&self, tool_call_id: &str) -> Result<(), StoreError> {
        self.calls().remove(tool_call_id);
        Ok(())
    }

    fn get(&self, tool_call_id: &str) -> Result<Option<PendingCall>, StoreError> {
        Ok(self.calls().get(tool_call_id).map(|(c, _)| c.clone()))
    }

    fn list(&self) -> Result<Vec<PendingCall>, StoreError> {
        let mut all: Vec<PendingCall> = self.calls().values().map(|(c, _)| c.clone()).collect();
        all.sort_by(|a, b| (a.created_at_ms, &a.tool_call_id).cmp(&(b.created_at_ms, &b.tool_call_id)));
        Ok(all)
    }

    /// Calls in memory are never interrupted: they end with the process that runs them.
    fn entries(&self) -> Result<Vec<StoredCall>, StoreError> {
        let calls = self.calls();
        let mut all: Vec<StoredCall> = calls
            .values()
            .map(|(call, claim)| StoredCall::Call {
                call: Box::new(call.clone()),
                state: claim.map_or(CallState::Waiting, CallState::Running),
            })
            .collect();
        let key = |e: &StoredCall| match e {
            StoredCall::Call { call, .. } => (call.created_at_ms, call.tool_call_id.clone()),
            StoredCall::Damaged { tool_call_id, .. } => (0, tool_call_id.clone()),
        };
        all.sort_by_key(key);
        Ok(all)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    pub(crate) fn sample(id: &str, at: u64) -> PendingCall {
        PendingCall {
            tool_call_id: id.into(),
            tool_name: "write-file".into(),
            kind: PendingKind::Suspended,
            args: json!({"path": "a.txt"}),
            data: CallData::default(),
            suspend_payload: Some(json!({"path": "a.txt"})),
            resume_schema: None,
            created_at_ms: at,
        }
    }

    #[test]
    fn claim_is_exclusive_and_release_reopens() {
        let s = MemoryStore::new();
        s.save(&sample("b", 2)).unwrap();
        s.save(&sample("a", 1)).unwrap();
        assert_eq!(
            s.list().unwrap().iter().map(|c| c.tool_call_id.as_str()).collect::<Vec<_>>(),
            ["a", "b"]
        );
        assert!(s.claim("a").unwrap().is_some());
        assert!(matches!(s.claim("a"), Err(StoreError::Busy(_))));
        s.release("a").unwrap();
        assert!(s.claim("a").unwrap().is_some());
        s.remove("a").unwrap();
        assert!(s.claim("a").unwrap().is_none());
        assert!(s.get("b").unwrap().is_some());
    }
}
