//! One stored row: read whatever its columns hold (a damaged row must not break a listing),
//! tagged, and checked before use (its state, its JSON, its integrity tag).

use rusqlite::types::Value as Sql;

use super::owner::owner_alive;
use crate::runtime::pending::PendingCall;
use crate::runtime::state::{CallState, Claim};
use crate::runtime::store::checks;
use crate::runtime::store::integrity::Key;

/// The columns a row is read with, in [`Row::read`]'s order.
pub(super) const COLUMNS: &str =
    "tool_call_id, tool_name, kind, call_json, created_at_ms, state, owner_pid, owner_start, claimed_at_ms, tag";

/// A row as stored. Columns of an unexpected type read as `None` (and fail the checks).
#[derive(Debug, Clone, Default)]
pub(super) struct Row {
    pub(super) id: String,
    pub(super) tool_name: Option<String>,
    pub(super) kind: Option<String>,
    pub(super) json: Option<String>,
    pub(super) created_at_ms: Option<i64>,
    pub(super) state: Option<String>,
    pub(super) owner_pid: Option<i64>,
    pub(super) owner_start: Option<String>,
    pub(super) claimed_at_ms: Option<i64>,
    pub(super) tag: Option<Vec<u8>>,
}

fn text(v: Sql) -> Option<String> {
    match v {
        Sql::Text(t) => Some(t),
        _ => None,
    }
}

fn int(v: Sql) -> Option<i64> {
    match v {
        Sql::Integer(i) => Some(i),
        _ => None,
    }
}

impl Row {
    /// Reads a row selected with [`COLUMNS`]; never fails on what the columns hold.
    pub(super) fn read(r: &rusqlite::Row<'_>) -> rusqlite::Result<Row> {
        let mut values = (0..10)
            .map(|i| r.get::<_, Sql>(i))
            .collect::<rusqlite::Result<Vec<Sql>>>()?
            .into_iter();
        let mut next = || values.next().unwrap_or(Sql::Null);
        let id = match next() {
            Sql::Text(t) => t,
            Sql::Integer(i) => i.to_string(),
            Sql::Real(f) => f.to_string(),
            Sql::Blob(_) | Sql::Null => "<unreadable id>".to_owned(),
        };
        Ok(Row {
            id,
            tool_name: text(next()),
            kind: text(next()),
            json: text(next()),
            created_at_ms: int(next()),
            state: text(next()),
            owner_pid: int(next()),
            owner_start: text(next()),
            claimed_at_ms: int(next()),
            tag: match next() {
                Sql::Blob(b) => Some(b),
                _ => None,
            },
        })
    }

    /// The fields the integrity tag covers: every column but the tag itself.
    fn fields(&self) -> [Option<Vec<u8>>; 9] {
        let n = |v: Option<i64>| v.map(|v| v.to_string().into_bytes());
        let t = |v: &Option<String>| v.as_ref().map(|v| v.as_bytes().to_vec());
        [
            Some(self.id.as_bytes().to_vec()),
            t(&self.tool_name),
            t(&self.kind),
            t(&self.json),
            n(self.created_at_ms),
            t(&self.state),
            n(self.owner_pid),
            t(&self.owner_start),
            n(self.claimed_at_ms),
        ]
    }

    /// The row's tag under `key`.
    pub(super) fn compute_tag(&self, key: &Key) -> Vec<u8> {
        let fields = self.fields();
        let refs: Vec<Option<&[u8]>> = fields.iter().map(|f| f.as_deref()).collect();
        key.tag(&refs)
    }

    /// Whether the row carries its tag under `key`.
    fn tag_matches(&self, key: &Key) -> bool {
        let fields = self.fields();
        let refs: Vec<Option<&[u8]>> = fields.iter().map(|f| f.as_deref()).collect();
        self.tag.as_deref().is_some_and(|tag| key.verify(&refs, tag))
    }

    /// The call and its state, or why the row cannot be used (never the stored text: it may
    /// hold credentials).
    pub(super) fn check(&self, key: &Key) -> Result<(PendingCall, CallState), String> {
        let running = checks::running(self.state.as_deref())?;
        let call = checks::call(self.json.as_deref(), &self.id, self.tool_name.as_deref(), self.kind.as_deref())?;
        if self.tag.is_none() {
            return Err("it has no integrity tag (it was written outside toolsmith)".into());
        }
        if !self.tag_matches(key) {
            return Err(checks::TAG_MISMATCH.into());
        }
        if !running {
            return Ok((call, CallState::Waiting));
        }
        let claim = Claim {
            owner_pid: self.owner_pid.and_then(|p| u32::try_from(p).ok()),
            claimed_at_ms: self.claimed_at_ms.and_then(|t| u64::try_from(t).ok()),
        };
        let alive = owner_alive(self.owner_pid, self.owner_start.as_deref());
        Ok((
            call,
            if alive {
                CallState::Running(claim)
            } else {
                CallState::Interrupted(claim)
            },
        ))
    }
}
