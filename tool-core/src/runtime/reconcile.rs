//! The reconciler: claims this process holds in the store that nothing in it works on any more.
//!
//! Owns [`Active`] (the calls this process has claimed and not yet let go of: from just before
//! the claim until the write that gives it back or removes it went through or was given up; one
//! set for the whole process, as the store's claims are the process's, so a runtime never takes
//! another runtime's claim in the same process for an orphan),
//! and [`Runtime::reconcile`] / [`Runtime::keep_reconciling`]. A row the store lists as
//! `running` under this process (this pid for SQLite, this instance for PostgreSQL) that is not
//! active here is an orphan: nothing will ever finish it, and as long as this process lives it
//! would be refused to everyone as "already being continued by another process". Kept writes
//! (`settle`) leave none while the store only fails for a while; an orphan is left by a write
//! refused for good, or by code that lost track of a claim. The reconciler gives it up
//! ([`PendingStore::abandon`](super::backend::PendingStore::abandon)): it then reads
//! *interrupted*, exactly as if its process had died, so the tool's declared recovery applies
//! (an explicit rerun or decline; idempotent tools run again on their own).

use std::collections::HashMap;
use std::sync::{Arc, Mutex, OnceLock};
use std::time::Duration;

use super::Runtime;
use super::state::{CallState, StoredCall};
use super::store::StoreError;

/// The calls this process holds claimed (see the module docs).
pub(crate) fn active() -> &'static Arc<Active> {
    static ACTIVE: OnceLock<Arc<Active>> = OnceLock::new();
    ACTIVE.get_or_init(Arc::default)
}

/// The calls this process holds claimed, each with how many holds it has.
#[derive(Default)]
pub(crate) struct Active(Mutex<HashMap<String, usize>>);

impl Active {
    /// Marks `id` held until the returned mark is dropped (or [`Hold::keep`] hands it on).
    pub(crate) fn hold(self: &Arc<Self>, id: &str) -> Hold {
        *self.lock().entry(id.to_owned()).or_default() += 1;
        Hold {
            active: self.clone(),
            id: id.to_owned(),
        }
    }

    fn contains(&self, id: &str) -> bool {
        self.lock().contains_key(id)
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, HashMap<String, usize>> {
        self.0.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// Lets go of one hold of `id` (none held: nothing happens).
    pub(crate) fn let_go(&self, id: &str) {
        let mut held = self.lock();
        if let Some(count) = held.get_mut(id) {
            *count -= 1;
            if *count == 0 {
                held.remove(id);
            }
        }
    }
}

/// One hold of a call: let go of when dropped, unless kept.
pub(crate) struct Hold {
    active: Arc<Active>,
    id: String,
}

impl Hold {
    /// Keeps the hold past this mark: the call stays active until [`Active::let_go`] (the
    /// write that ends the claim does it).
    pub(crate) fn keep(self) {
        std::mem::forget(self);
    }
}

impl Drop for Hold {
    fn drop(&mut self) {
        self.active.let_go(&self.id);
    }
}

/// The periodic reconciliation of a runtime's claims; dropping it stops it.
#[derive(Debug)]
pub struct Reconciling(tokio::task::JoinHandle<()>);

impl Drop for Reconciling {
    fn drop(&mut self) {
        self.0.abort();
    }
}

impl Runtime {
    /// Gives up the calls the store lists as `running` under this process that nothing in this
    /// process works on (see the module docs): each then reads *interrupted*. Returns their ids.
    /// A store whose calls end with their process (memory) has none.
    pub async fn reconcile(&self) -> Result<Vec<String>, StoreError> {
        let store = &self.inner.store;
        let mut abandoned = Vec::new();
        for entry in store.entries().await? {
            let StoredCall::Call {
                call,
                state: CallState::Running(claim),
            } = entry
            else {
                continue;
            };
            let id = &call.tool_call_id;
            if claim.owner_pid != Some(std::process::id()) || active().contains(id) {
                continue;
            }
            if store.abandon(id, &claim).await? {
                tracing::warn!(tool_call_id = %id, tool = %call.tool_name, "a claim of this process's that nothing here works on any more was given up: the call reads interrupted (rerun or decline it)");
                abandoned.push(id.clone());
            }
        }
        Ok(abandoned)
    }

    /// Runs [`reconcile`](Self::reconcile) every `every`, and whenever a store write kept
    /// during an outage goes through (the store is back), for as long as the returned handle
    /// lives (or the runtime does). Failures are logged, bounded like the store's other
    /// periodic operations.
    pub fn keep_reconciling(&self, every: Duration) -> Reconciling {
        let weak = Arc::downgrade(&self.inner);
        Reconciling(tokio::spawn(async move {
            let mut failing = false;
            loop {
                tokio::select! {
                    _ = tokio::time::sleep(every) => {}
                    _ = super::settle::store_back() => {}
                }
                let Some(inner) = weak.upgrade() else { return };
                match (Runtime { inner }).reconcile().await {
                    Ok(_) => super::settle::recovered("reconcile claims", &mut failing),
                    Err(error) => super::settle::outage("reconcile claims", &error, &mut failing),
                }
            }
        }))
    }
}
