//! One PostgreSQL row of a waiting call: read whatever its columns hold (a damaged row must not
//! break a listing), its two integrity tags, and the checks before use.
//!
//! `call_tag` covers what the call is (id, tool, kind, JSON, creation time), written once by
//! `save`; `state_tag` covers where it is (id, state, owner, claim time) and is rewritten by
//! every claim. The state tag depends on nothing stored, so a claim computes it beforehand and
//! claims in one `UPDATE … WHERE state = 'waiting' AND state_tag = <the waiting tag>`.

use tokio_postgres::Row as PgRow;

use crate::runtime::pending::PendingCall;
use crate::runtime::state::{CallState, Claim};
use crate::runtime::store::checks;
use crate::runtime::store::integrity::Key;

/// The columns a row is read with, in [`Row::read`]'s order (`alive`, whether the claiming
/// instance still renews its lease, is added by the query).
pub(super) const COLUMNS: &str = "tool_call_id, tool_name, kind, call_json, created_at_ms, call_tag, \
     state, owner_instance, owner_pid, claimed_at_ms, state_tag";

/// A row as stored.
#[derive(Debug, Clone, Default)]
pub(super) struct Row {
    pub(super) id: String,
    pub(super) tool_name: Option<String>,
    pub(super) kind: Option<String>,
    pub(super) json: Option<String>,
    pub(super) created_at_ms: Option<i64>,
    pub(super) call_tag: Option<Vec<u8>>,
    pub(super) state: State,
    pub(super) state_tag: Option<Vec<u8>>,
    /// Whether the owner's lease is current (read by listings; `true` when not asked).
    pub(super) alive: bool,
}

/// Where a row is in its life, as its state columns hold it.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub(super) struct State {
    pub(super) state: Option<String>,
    pub(super) owner_instance: Option<String>,
    pub(super) owner_pid: Option<i64>,
    pub(super) claimed_at_ms: Option<i64>,
}

impl State {
    /// A waiting call's state.
    pub(super) fn waiting() -> State {
        State {
            state: Some("waiting".into()),
            ..State::default()
        }
    }

    /// The state of a call claimed by `instance` (process `pid`) at `at_ms`.
    pub(super) fn running(instance: &str, pid: u32, at_ms: i64) -> State {
        State {
            state: Some("running".into()),
            owner_instance: Some(instance.to_owned()),
            owner_pid: Some(i64::from(pid)),
            claimed_at_ms: Some(at_ms),
        }
    }

    /// The tag of this state for the call `id`.
    pub(super) fn tag(&self, id: &str, key: &Key) -> Vec<u8> {
        key.tag(&refs(&self.fields(id)))
    }

    /// What the state tag covers.
    fn fields(&self, id: &str) -> [Option<Vec<u8>>; 6] {
        let n = |v: Option<i64>| v.map(|v| v.to_string().into_bytes());
        [
            Some(b"postgres state v1".to_vec()),
            Some(id.as_bytes().to_vec()),
            self.state.as_ref().map(|s| s.as_bytes().to_vec()),
            self.owner_instance.as_ref().map(|s| s.as_bytes().to_vec()),
            n(self.owner_pid),
            n(self.claimed_at_ms),
        ]
    }
}

impl Row {
    /// Reads a row selected with [`COLUMNS`] (and `alive` after them, when `with_alive`); a
    /// column that cannot be read reads as `None` (and fails the checks).
    pub(super) fn read(r: &PgRow, with_alive: bool) -> Row {
        let text = |i: usize| r.try_get::<_, Option<String>>(i).ok().flatten();
        let int = |i: usize| r.try_get::<_, Option<i64>>(i).ok().flatten();
        let bytes = |i: usize| r.try_get::<_, Option<Vec<u8>>>(i).ok().flatten();
        Row {
            id: text(0).unwrap_or_else(|| "<unreadable id>".to_owned()),
            tool_name: text(1),
            kind: text(2),
            json: text(3),
            created_at_ms: int(4),
            call_tag: bytes(5),
            state: State {
                state: text(6),
                owner_instance: text(7),
                owner_pid: int(8),
                claimed_at_ms: int(9),
            },
            state_tag: bytes(10),
            alive: !with_alive || r.try_get::<_, Option<bool>>(11).ok().flatten().unwrap_or(false),
        }
    }

    /// The tag of what the call is.
    pub(super) fn call_tag(&self, key: &Key) -> Vec<u8> {
        key.tag(&refs(&self.call_fields()))
    }

    /// What the call tag covers.
    fn call_fields(&self) -> [Option<Vec<u8>>; 6] {
        let t = |v: &Option<String>| v.as_ref().map(|v| v.as_bytes().to_vec());
        [
            Some(b"postgres call v1".to_vec()),
            Some(self.id.as_bytes().to_vec()),
            t(&self.tool_name),
            t(&self.kind),
            t(&self.json),
            self.created_at_ms.map(|v| v.to_string().into_bytes()),
        ]
    }

    /// The call (checked against its tag), whatever its state.
    pub(super) fn call(&self, key: &Key) -> Result<PendingCall, String> {
        let call = checks::call(self.json.as_deref(), &self.id, self.tool_name.as_deref(), self.kind.as_deref())?;
        match &self.call_tag {
            None => Err("it has no integrity tag (it was written outside toolsmith)".into()),
            Some(tag) if !key.verify(&refs(&self.call_fields()), tag) => Err(checks::TAG_MISMATCH.into()),
            Some(_) => Ok(call),
        }
    }

    /// The call and its state, or why the row cannot be used (never the stored text).
    pub(super) fn check(&self, key: &Key) -> Result<(PendingCall, CallState), String> {
        let running = checks::running(self.state.state.as_deref())?;
        let call = self.call(key)?;
        let fields = self.state.fields(&self.id);
        let tag_ok = self.state_tag.as_deref().is_some_and(|tag| key.verify(&refs(&fields), tag));
        if !tag_ok {
            return Err(checks::TAG_MISMATCH.into());
        }
        if !running {
            return Ok((call, CallState::Waiting));
        }
        let claim = Claim {
            owner_pid: self.state.owner_pid.and_then(|p| u32::try_from(p).ok()),
            claimed_at_ms: self.state.claimed_at_ms.and_then(|t| u64::try_from(t).ok()),
        };
        let state = if self.alive {
            CallState::Running(claim)
        } else {
            CallState::Interrupted(claim)
        };
        Ok((call, state))
    }
}

/// The fields as the key takes them.
fn refs(fields: &[Option<Vec<u8>>]) -> Vec<Option<&[u8]>> {
    fields.iter().map(|f| f.as_deref()).collect()
}
