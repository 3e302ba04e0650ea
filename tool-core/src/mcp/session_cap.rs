//! The cap on live Streamable HTTP sessions.
//!
//! Owns [`SessionSlots`] (one permit per live session, taken by the HTTP guard before an
//! `initialize` is served and handed to the session it created, with the subject of the token
//! that created it, if any: a session is its creator's) and [`CappedSessions`], the
//! `rmcp` session manager that frees a session's permit when the session closes, whether the
//! client deleted it (`DELETE /mcp`) or it expired (idle past the session keep-alive). It does
//! not decide what is refused or how the refusal reads (`http`).

use std::collections::HashMap;
use std::sync::{Arc, Mutex};

use futures::Stream;
use rmcp::model::{ClientJsonRpcMessage, ServerJsonRpcMessage};
use rmcp::transport::streamable_http_server::session::{EventStore, RestoreOutcome, ServerSseMessage, SessionId, SessionManager};
use tokio::sync::{OwnedSemaphorePermit, Semaphore};

/// The permits of live sessions: at most `cap` at once.
pub(super) struct SessionSlots {
    cap: usize,
    free: Arc<Semaphore>,
    live: Mutex<HashMap<String, Live>>,
}

/// A live session's slot and who created it.
struct Live {
    _permit: OwnedSemaphorePermit,
    /// The owner key of the caller whose token created it (OAuth), if any.
    owner: Option<String>,
}

impl SessionSlots {
    pub(super) fn new(cap: usize) -> Arc<Self> {
        let cap = cap.clamp(1, Semaphore::MAX_PERMITS);
        Arc::new(SessionSlots {
            cap,
            free: Arc::new(Semaphore::new(cap)),
            live: Mutex::default(),
        })
    }

    /// The most sessions that may live at once.
    pub(super) fn cap(&self) -> usize {
        self.cap
    }

    /// A slot for a session about to be created; `None` when every slot is taken.
    pub(super) fn reserve(&self) -> Option<OwnedSemaphorePermit> {
        self.free.clone().try_acquire_owned().ok()
    }

    /// The session `id` was created with `permit` (by `owner`'s token): it holds the slot until
    /// it closes.
    pub(super) fn adopt(&self, id: &str, permit: OwnedSemaphorePermit, owner: Option<String>) {
        self.lock().insert(id.to_owned(), Live { _permit: permit, owner });
    }

    /// Whether the session `id` was created by another caller than `owner` (a token may use
    /// only its own subject's sessions).
    pub(super) fn owned_by_another(&self, id: &str, owner: &str) -> bool {
        self.lock()
            .get(id)
            .and_then(|l| l.owner.as_deref())
            .is_some_and(|created_by| created_by != owner)
    }

    /// The session `id` closed: its slot is free again (nothing happens for an unknown id).
    fn release(&self, id: &str) {
        let permit = self.lock().remove(id);
        drop(permit);
    }

    /// How many sessions hold a slot.
    #[cfg(test)]
    fn live(&self) -> usize {
        self.lock().len()
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, HashMap<String, Live>> {
        self.live.lock().unwrap_or_else(|p| p.into_inner())
    }
}

/// A session manager that frees a session's slot when the session closes.
pub(super) struct CappedSessions<M> {
    inner: M,
    slots: Arc<SessionSlots>,
}

impl<M> CappedSessions<M> {
    pub(super) fn new(inner: M, slots: Arc<SessionSlots>) -> Self {
        CappedSessions { inner, slots }
    }
}

impl<M: SessionManager> SessionManager for CappedSessions<M> {
    type Error = M::Error;
    type Transport = M::Transport;

    async fn create_session(&self) -> Result<(SessionId, Self::Transport), Self::Error> {
        self.inner.create_session().await
    }

    async fn initialize_session(&self, id: &SessionId, message: ClientJsonRpcMessage) -> Result<ServerJsonRpcMessage, Self::Error> {
        self.inner.initialize_session(id, message).await
    }

    async fn has_session(&self, id: &SessionId) -> Result<bool, Self::Error> {
        self.inner.has_session(id).await
    }

    /// Called for `DELETE /mcp` and when a session's worker ends (it expired or failed).
    async fn close_session(&self, id: &SessionId) -> Result<(), Self::Error> {
        let closed = self.inner.close_session(id).await;
        self.slots.release(id);
        closed
    }

    async fn create_stream(
        &self,
        id: &SessionId,
        message: ClientJsonRpcMessage,
    ) -> Result<impl Stream<Item = ServerSseMessage> + Send + Sync + 'static, Self::Error> {
        self.inner.create_stream(id, message).await
    }

    async fn accept_message(&self, id: &SessionId, message: ClientJsonRpcMessage) -> Result<(), Self::Error> {
        self.inner.accept_message(id, message).await
    }

    async fn create_standalone_stream(
        &self,
        id: &SessionId,
    ) -> Result<impl Stream<Item = ServerSseMessage> + Send + Sync + 'static, Self::Error> {
        self.inner.create_standalone_stream(id).await
    }

    async fn resume(
        &self,
        id: &SessionId,
        last_event_id: String,
    ) -> Result<impl Stream<Item = ServerSseMessage> + Send + Sync + 'static, Self::Error> {
        self.inner.resume(id, last_event_id).await
    }

    async fn restore_session(&self, id: SessionId) -> Result<RestoreOutcome<Self::Transport>, Self::Error> {
        self.inner.restore_session(id).await
    }

    fn event_store(&self) -> Option<Arc<dyn EventStore>> {
        self.inner.event_store()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_closed_session_frees_its_slot_once() {
        let slots = SessionSlots::new(2);
        let a = slots.reserve().unwrap();
        let b = slots.reserve().unwrap();
        assert!(slots.reserve().is_none(), "both slots are taken");
        slots.adopt("a", a, Some("alice".into()));
        slots.adopt("b", b, None);
        assert!(slots.owned_by_another("a", "bob") && !slots.owned_by_another("a", "alice"));
        assert!(!slots.owned_by_another("b", "bob"), "a session made without a token is nobody's");
        assert_eq!(slots.live(), 2);
        slots.release("a");
        slots.release("a");
        slots.release("unknown");
        assert_eq!(slots.live(), 1);
        let c = slots.reserve().expect("a's slot is free");
        assert!(slots.reserve().is_none(), "releasing twice frees one slot, not two");
        drop(c);
        assert!(slots.reserve().is_some(), "an unadopted reservation frees its slot when dropped");
    }
}
