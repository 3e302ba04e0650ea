//! Sessions and the call slots they hand out.
//!
//! Owns [`Session`] (a client session's log level and its bound on concurrent calls) and
//! [`Slot`] (one running call's permit, its MCP handle and notification queue, and its
//! cancellation, linked to whichever request currently carries the call). It does not run calls
//! or answer them (`call`), and it does not keep parked calls (`parked`).
//!
//! When a session ends (stdio input closed, Streamable HTTP session deleted), its requests are
//! cancelled: a call waiting for approval while its user is asked is then declined ("cancelled
//! by the client", `ask`), as when the client cancels that one request. Calls handed to a person
//! (`toolsmith call ID --approve`) are no longer the session's and keep waiting.

use std::sync::{Arc, Mutex, OnceLock};

use rmcp::ServerHandler;
use rmcp::model::LoggingLevel;
use rmcp::service::{RequestContext, RoleServer};
use tokio::sync::{OwnedSemaphorePermit, Semaphore, mpsc};
use tokio::task::AbortHandle;
use tokio_util::sync::CancellationToken;

use super::handle::{Ask, Flush, Inert, PeerHandle, Reach};
use super::server::{McpConfig, McpServer, modern};
use crate::context::CallEnv;

/// What one client session has set.
pub(super) struct Session {
    level: Mutex<Option<LoggingLevel>>,
    calls: Arc<Semaphore>,
    /// Who owns what the session's calls leave behind (their kept full results): random, from
    /// a CSPRNG seeded from the OS, never sent to the client; drawn when first needed (a
    /// session that keeps no result never draws one, nor does the server's template session,
    /// so an idle server has not seeded the generator).
    id: OnceLock<String>,
    /// The tools the session loaded through tool search.
    pub(super) loaded: super::tool_search::SessionLoaded,
}

impl Session {
    pub(super) fn new(config: &McpConfig) -> Self {
        Session {
            level: Mutex::new(None),
            calls: Arc::new(Semaphore::new(config.max_concurrent_calls.clamp(1, Semaphore::MAX_PERMITS))),
            id: OnceLock::new(),
            loaded: Default::default(),
        }
    }

    /// The session's id (see `id`), drawn at its first use.
    pub(super) fn id(&self) -> &str {
        self.id.get_or_init(|| uuid::Uuid::new_v4().simple().to_string())
    }

    /// The client's `logging/setLevel` (revisions up to 2025-11-25).
    pub(super) fn set_level(&self, level: LoggingLevel) {
        *self.level.lock().unwrap_or_else(|p| p.into_inner()) = Some(level);
    }

    fn level(&self) -> Option<LoggingLevel> {
        *self.level.lock().unwrap_or_else(|p| p.into_inner())
    }
}

/// A running call's session slot, and what its request brings to it.
pub(super) struct Slot {
    _permit: OwnedSemaphorePermit,
    /// What the call runs with: its cancellation and its MCP handle.
    pub(super) continuation: CallEnv,
    /// The call's own MCP handle and the task sending its notifications; `None` for a call
    /// nothing can reach its client from, whose handle is a shared [`Inert`] one.
    peer: Option<(Arc<PeerHandle>, Flush)>,
    /// The questions its tool asks mid-call (2026-07-28).
    pub(super) asks: Option<mpsc::UnboundedReceiver<Ask>>,
    /// The cancellation of a call that may be parked: the call's own token, linked to the
    /// request carrying it. `None` for any other call, which is cancelled with its request's
    /// token itself.
    cancel: Option<CancellationToken>,
    /// Cancels the call when the request carrying it is cancelled.
    link: Option<AbortHandle>,
}

impl Slot {
    /// The call is cancelled with this request from now on.
    pub(super) fn link(&mut self, ctx: &RequestContext<RoleServer>) {
        self.unlink();
        let Some(call) = self.cancel.clone() else { return };
        let request = ctx.ct.clone();
        let watcher = tokio::spawn(async move {
            tokio::select! {
                _ = request.cancelled() => call.cancel(),
                _ = call.cancelled() => {}
            }
        });
        self.link = Some(watcher.abort_handle());
    }

    /// The request that carried the call no longer cancels it.
    pub(super) fn unlink(&mut self) {
        if let Some(link) = self.link.take() {
            link.abort();
        }
    }

    /// Answers the request brought without a request state (2026-07-28; see
    /// [`PeerHandle::answered_in_advance`]).
    pub(super) fn answered_in_advance(&self, responses: rmcp::model::InputResponses) {
        if let Some((handle, _)) = &self.peer {
            handle.answered_in_advance(responses);
        }
    }

    /// Waits until every notification the call sent so far went out.
    pub(super) async fn flushed(&self) {
        if let Some((handle, _)) = &self.peer {
            handle.flushed().await;
        }
    }

    /// From now on the call reports to this request (see [`PeerHandle::retarget`]).
    pub(super) fn retarget(&self, ctx: &RequestContext<RoleServer>, min_level: Option<LoggingLevel>) {
        if let Some((handle, _)) = &self.peer {
            handle.retarget(ctx.peer.clone(), ctx.meta.get_progress_token(), min_level);
        }
    }

    /// Lets every notification of the call go out (before its result), then frees the slot.
    pub(super) async fn finish(self) {
        let Slot { continuation, peer, .. } = self;
        drop(continuation);
        if let Some((handle, flush)) = peer {
            drop(handle);
            flush.sent().await;
        }
    }
}

impl<E: ServerHandler + Clone> McpServer<E> {
    /// This request has no session: the server cannot send its client a request (stateless
    /// HTTP, revisions up to 2025-11-25; 2026-07-28 asks through input-required results).
    pub(super) fn sessionless(&self, ctx: &RequestContext<RoleServer>) -> bool {
        self.sessionless_at(modern(ctx))
    }

    /// [`sessionless`](Self::sessionless) for a request whose revision (`modern`) is known.
    fn sessionless_at(&self, modern: bool) -> bool {
        self.stateless && !modern
    }

    /// The least severe level this request's client wants logs at (`None`: none).
    pub(super) fn log_level(&self, ctx: &RequestContext<RoleServer>) -> Option<LoggingLevel> {
        self.log_level_at(ctx, modern(ctx))
    }

    /// [`log_level`](Self::log_level) for a request whose revision (`modern`) is known.
    fn log_level_at(&self, ctx: &RequestContext<RoleServer>, modern: bool) -> Option<LoggingLevel> {
        if modern { ctx.meta.log_level() } else { self.session.level() }
    }

    /// Takes one of the session's call slots and starts what the request brings to a call:
    /// its client (progress, logs) and its cancellation. Refused when the session's calls are
    /// all running (`retry` says what to do then).
    pub(super) fn take_slot(&self, ctx: &RequestContext<RoleServer>, retry: &dyn std::fmt::Display) -> Result<Slot, String> {
        let Ok(permit) = self.session.calls.clone().try_acquire_owned() else {
            return Err(format!(
                "Too many calls are running in this session (the limit is {}); wait for one to finish and {retry}.",
                self.shared.config.max_concurrent_calls
            ));
        };
        // The revision is read once (each read copies it): the level, the handle and whether
        // the request has a session all follow from it.
        let modern = modern(ctx);
        let sessionless = self.sessionless_at(modern);
        let progress_token = ctx.meta.get_progress_token();
        let min_level = self.log_level_at(ctx, modern);
        let reach = reach(ctx, sessionless);
        // Through a call whose request has no progress token and whose client wants no logs
        // and can be asked nothing (revisions up to 2025-11-25), no message can reach the
        // client: its handle is a shared inert one, and it has no queue to flush. Its
        // cancellation is still the request's (`notifications/cancelled` cancels it).
        let (handle, peer, asks) = if !modern && progress_token.is_none() && min_level.is_none() && reach.none() {
            (Inert::shared(sessionless), None, None)
        } else {
            let (handle, flush, asks) = PeerHandle::start(ctx.peer.clone(), progress_token, min_level, reach, modern);
            (handle.clone() as Arc<dyn crate::context::McpHandle>, Some((handle, flush)), asks)
        };
        // A call that may be parked (2026-07-28: its tool can ask mid-call) gets its own token,
        // cancelled by whichever request carries it; any other call is the request's.
        let cancel = asks.is_some().then(CancellationToken::new);
        let continuation = CallEnv {
            cancellation: Some(cancel.clone().unwrap_or_else(|| ctx.ct.clone())),
            mcp: Some(handle),
            ..CallEnv::default()
        };
        let mut slot = Slot {
            _permit: permit,
            continuation,
            peer,
            asks,
            cancel,
            link: None,
        };
        slot.link(ctx);
        Ok(slot)
    }
}

/// What the client of a request can be asked: what `RequestContext::client_capabilities` reads
/// (the request's `_meta`, else the session's handshake; a session whose requests carry their
/// metadata has none), looked at where it is rather than copied.
fn reach(ctx: &RequestContext<RoleServer>, sessionless: bool) -> Reach {
    // Without a session nothing is asked: the client's capabilities are not read.
    if sessionless {
        return Reach::of(None, true);
    }
    if let Some(declared) = ctx.meta.client_capabilities() {
        return Reach::of(Some(&declared), false);
    }
    let handshake = ctx.peer.peer_info();
    Reach::of(handshake.as_deref().map(|info| &info.capabilities), false)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A session draws its id when first asked (not when it opens), keeps it, and no two
    /// sessions share one.
    #[test]
    fn a_session_draws_its_id_at_its_first_use() {
        let config = McpConfig::default();
        let (one, two) = (Session::new(&config), Session::new(&config));
        assert!(one.id.get().is_none(), "a new session has drawn no id");
        let id = one.id().to_owned();
        assert_eq!(id.len(), 32);
        assert!(id.bytes().all(|b| b.is_ascii_hexdigit()));
        assert_eq!(one.id(), id, "the id does not change once drawn");
        assert_ne!(two.id(), id);
    }
}
