//! Where a stored call is in its life, and what a listing of the store shows.
//!
//! Owns the state machine of a waiting call ([`CallState`]), the claim a running call carries
//! ([`Claim`]), what is known of a call whose run was cut short ([`Interruption`]) and one
//! listed row ([`StoredCall`]: an intact call, or a damaged row with its id and why). The store
//! trait is `pending`'s; how the SQLite store tells the states apart is `sqlite`'s.
//!
//! ```text
//! save ──► waiting ──claim──► running ──► (removed: done, failed, declined)
//!            ▲                   │
//!            └──── release ──────┤ (nothing ran: resume data refused)
//!                                │
//!             its process died ──► interrupted ──claim_again──► running
//!                                       │  (an explicit rerun, or a tool declared idempotent)
//!                                       └──decline──► (removed; nothing runs)
//! ```
//!
//! An interrupted call may have had its effect already (the process died after the tool ran,
//! before the row was removed), so it is never run again silently: exactly once, or an explicit
//! decision to run it once more.

use std::time::{Duration, SystemTime, UNIX_EPOCH};

use super::pending::PendingCall;

/// The process that took a call to run it, and when.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct Claim {
    /// Its process id (`None` when the store did not record one).
    pub owner_pid: Option<u32>,
    /// When it took the call (milliseconds since the Unix epoch).
    pub claimed_at_ms: Option<u64>,
}

impl std::fmt::Display for Claim {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self.owner_pid {
            Some(pid) => write!(f, "process {pid}")?,
            None => f.write_str("an unknown process")?,
        }
        if let Some(at) = self.claimed_at_ms {
            let now = SystemTime::now().duration_since(UNIX_EPOCH).unwrap_or(Duration::ZERO);
            let ago = now.as_millis().saturating_sub(u128::from(at)) / 1000;
            write!(f, ", started {ago} s ago (Unix time {at} ms)")?;
        }
        Ok(())
    }
}

impl Claim {
    /// The claim time of a claim this process takes now: the clock in milliseconds, but always
    /// later than this process's previous claim, so no two claims of one process are equal (a
    /// call stored again and claimed again within one millisecond is another claim, which
    /// [`remove_claimed`](super::backend::PendingStore::remove_claimed) leaves alone).
    pub(crate) fn now_ms() -> u64 {
        static LAST: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(0);
        let since_epoch = SystemTime::now().duration_since(UNIX_EPOCH).unwrap_or(Duration::ZERO);
        let now = u64::try_from(since_epoch.as_millis()).unwrap_or(u64::MAX);
        let mut last = LAST.load(std::sync::atomic::Ordering::Relaxed);
        loop {
            let at = now.max(last.saturating_add(1));
            match LAST.compare_exchange_weak(last, at, std::sync::atomic::Ordering::Relaxed, std::sync::atomic::Ordering::Relaxed) {
                Ok(_) => return at,
                Err(seen) => last = seen,
            }
        }
    }
}

/// Where a stored call is in its life.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum CallState {
    /// Waiting for approval or resume data: it can be continued.
    Waiting,
    /// A live process is running it.
    Running(Claim),
    /// The process that was running it died before it finished: it may or may not have had
    /// its effect. It runs again only on an explicit rerun (or for a tool declared idempotent).
    Interrupted(Claim),
}

impl CallState {
    /// The state's name: `waiting`, `running` or `interrupted`.
    pub fn as_str(&self) -> &'static str {
        match self {
            CallState::Waiting => "waiting",
            CallState::Running(_) => "running",
            CallState::Interrupted(_) => "interrupted",
        }
    }

    /// The claim of a running or interrupted call.
    pub fn claim(&self) -> Option<&Claim> {
        match self {
            CallState::Waiting => None,
            CallState::Running(c) | CallState::Interrupted(c) => Some(c),
        }
    }
}

/// A call whose run was cut short: what is known of it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Interruption {
    /// The call.
    pub tool_call_id: String,
    /// Its tool.
    pub tool_name: String,
    /// The process that was running it, and since when.
    pub claim: Claim,
}

impl std::fmt::Display for Interruption {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let Interruption {
            tool_call_id: id,
            tool_name,
            claim,
        } = self;
        write!(
            f,
            "call `{id}` of tool `{tool_name}` was interrupted: {claim} was running it and ended before it finished, \
             so the tool may already have had its effect. It is not run again on its own: run it again explicitly \
             (`{cmd} call {id} --approve --rerun`, or `{cmd} resume {id} DATA --rerun` for a suspended call) \
             or decline it (`{cmd} call {id} --decline REASON`)",
            cmd = crate::error::operator(),
        )
    }
}

/// One row of the store as a listing shows it.
#[derive(Debug, Clone, PartialEq)]
pub enum StoredCall {
    /// An intact call, and where it is in its life.
    Call {
        /// The call (boxed: it is much larger than a damaged row).
        call: Box<PendingCall>,
        /// Its state.
        state: CallState,
    },
    /// A row that cannot be used (unreadable, edited outside toolsmith, for an unknown tool, in
    /// an unknown state). It is skipped: never run, never breaking the listing.
    Damaged {
        /// The row's id, as stored.
        tool_call_id: String,
        /// The row's tool, as stored (when it can be read).
        tool_name: Option<String>,
        /// What is wrong with it (never the stored text, which may hold credentials).
        reason: String,
    },
}

impl StoredCall {
    /// The row's id.
    pub fn tool_call_id(&self) -> &str {
        match self {
            StoredCall::Call { call, .. } => &call.tool_call_id,
            StoredCall::Damaged { tool_call_id, .. } => tool_call_id,
        }
    }
}
