//! The store in memory: nothing survives the process. For tests and throwaway runtimes.

use std::collections::BTreeMap;
use std::sync::{Arc, Mutex, MutexGuard};

use super::{AuditStore, MemoryAudit, PendingStore, StoreError, sort_oldest_first};
use crate::runtime::pending::PendingCall;
use crate::runtime::state::{CallState, Claim, StoredCall};

/// A store in memory: nothing survives the process. For tests and throwaway runtimes.
#[derive(Debug, Default)]
pub struct MemoryStore {
    calls: Mutex<BTreeMap<String, (PendingCall, Option<Claim>)>>,
    /// The background tasks (`memory_tasks`).
    pub(super) tasks: Mutex<BTreeMap<String, super::TaskRecord>>,
    /// The audit trail of the decisions on these calls.
    audit: Arc<MemoryAudit>,
}

impl MemoryStore {
    /// An empty store.
    pub fn new() -> Self {
        Self::default()
    }

    fn calls(&self) -> MutexGuard<'_, BTreeMap<String, (PendingCall, Option<Claim>)>> {
        self.calls.lock().unwrap_or_else(|p| p.into_inner())
    }
}

#[async_trait::async_trait]
impl PendingStore for MemoryStore {
    fn backend(&self) -> &'static str {
        "memory"
    }
    async fn save(&self, call: &PendingCall) -> Result<(), StoreError> {
        self.calls().insert(call.tool_call_id.clone(), (call.clone(), None));
        Ok(())
    }

    async fn claim(&self, tool_call_id: &str) -> Result<Option<PendingCall>, StoreError> {
        match self.calls().get_mut(tool_call_id) {
            None => Ok(None),
            Some((_, Some(_))) => Err(StoreError::Busy(tool_call_id.to_owned())),
            Some((call, running)) => {
                *running = Some(Claim {
                    owner_pid: Some(std::process::id()),
                    claimed_at_ms: Some(Claim::now_ms()),
                });
                Ok(Some(call.clone()))
            }
        }
    }

    async fn release(&self, tool_call_id: &str) -> Result<(), StoreError> {
        if let Some((_, running)) = self.calls().get_mut(tool_call_id) {
            *running = None;
        }
        Ok(())
    }

    async fn remove(&self, tool_call_id: &str) -> Result<(), StoreError> {
        self.calls().remove(tool_call_id);
        Ok(())
    }

    /// Removes the call while it is still running under exactly `claim` (this process's).
    async fn remove_claimed(&self, tool_call_id: &str, claim: &Claim) -> Result<bool, StoreError> {
        let mut calls = self.calls();
        let mine = claim.owner_pid == Some(std::process::id());
        if mine && matches!(calls.get(tool_call_id), Some((_, Some(running))) if running == claim) {
            calls.remove(tool_call_id);
            return Ok(true);
        }
        Ok(false)
    }

    async fn state(&self, tool_call_id: &str) -> Result<Option<CallState>, StoreError> {
        let calls = self.calls();
        Ok(calls
            .get(tool_call_id)
            .map(|(_, claim)| claim.map_or(CallState::Waiting, CallState::Running)))
    }

    async fn get(&self, tool_call_id: &str) -> Result<Option<PendingCall>, StoreError> {
        Ok(self.calls().get(tool_call_id).map(|(c, _)| c.clone()))
    }

    /// Calls in memory are never interrupted: they end with the process that runs them.
    async fn entries(&self) -> Result<Vec<StoredCall>, StoreError> {
        let mut all: Vec<StoredCall> = self
            .calls()
            .values()
            .map(|(call, claim)| StoredCall::Call {
                call: Box::new(call.clone()),
                state: claim.map_or(CallState::Waiting, CallState::Running),
            })
            .collect();
        sort_oldest_first(&mut all);
        Ok(all)
    }

    fn audit(&self) -> Option<Arc<dyn AuditStore>> {
        Some(self.audit.clone())
    }
}
