//! Kept results in the SQLite file ([`SqliteStore`] as a [`ResultStore`], through
//! `PendingStore::results`): the `kept_results` table (schema version 5), one row per call
//! tagged like the other rows. A put is one immediate transaction: the rows past the time to
//! live they were kept with go, the result is written, and the oldest rows beyond the count
//! bound go (by insertion order).

use rusqlite::TransactionBehavior::Immediate;
use rusqlite::types::Value as Sql;
use rusqlite::{Connection, OptionalExtension, params};

use super::{Db, OrStorage, SqliteStore};
use crate::context::BoxFuture;
use crate::runtime::store::results::{ResultRow, now_ms};
use crate::runtime::store::{KeptResult, ResultError, ResultLimits, ResultStore, StoreError, StorePart};

/// The table of schema version 5.
pub(super) const SCHEMA_V5: &str = "CREATE TABLE IF NOT EXISTS kept_results (
    call_id TEXT PRIMARY KEY NOT NULL, owner TEXT, result_text TEXT, result_json TEXT,
    created_at_ms INTEGER, expires_at_ms INTEGER, tag BLOB);
CREATE INDEX IF NOT EXISTS kept_results_by_expiry ON kept_results (expires_at_ms);";

const COLUMNS: &str = "call_id, owner, result_text, result_json, created_at_ms, expires_at_ms, tag";

/// What the tags of these rows are computed over first.
const LABEL: &str = "sqlite kept result v1";

/// The rows past the time to live they were kept with, at `?1` (now).
const EXPIRED: &str = "expires_at_ms IS NULL OR expires_at_ms <= ?1";

/// The kept results of one [`SqliteStore`] file, within `limits`.
pub(super) struct SqliteResults {
    pub(super) store: SqliteStore,
    pub(super) limits: ResultLimits,
}

/// Reads a row selected with [`COLUMNS`]; a column of an unexpected type reads as `None` (and
/// fails the tag).
fn read(r: &rusqlite::Row<'_>) -> rusqlite::Result<ResultRow> {
    let text = |i| r.get::<_, Sql>(i).map(|v| if let Sql::Text(t) = v { Some(t) } else { None });
    let int = |i| r.get::<_, Sql>(i).map(|v| if let Sql::Integer(n) = v { Some(n) } else { None });
    Ok(ResultRow {
        call_id: text(0)?.unwrap_or_default(),
        owner: text(1)?,
        text: text(2)?,
        json: text(3)?,
        created_at_ms: int(4)?,
        expires_at_ms: int(5)?,
        tag: match r.get::<_, Sql>(6)? {
            Sql::Blob(b) => Some(b),
            _ => None,
        },
    })
}

fn write(conn: &Connection, row: &ResultRow) -> rusqlite::Result<()> {
    let sql = format!("INSERT OR REPLACE INTO kept_results ({COLUMNS}) VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7)");
    let values = params![
        row.call_id,
        row.owner,
        row.text,
        row.json,
        row.created_at_ms,
        row.expires_at_ms,
        row.tag
    ];
    conn.execute(&sql, values).map(drop)
}

impl Db {
    /// Keeps `row`, after dropping the rows expired at `now`, then drops the oldest beyond
    /// `max_count` (a replaced row counts as new: `INSERT OR REPLACE` gives it the next rowid).
    fn put_result(&self, row: &ResultRow, now: i64, limits: &ResultLimits) -> Result<(), StoreError> {
        const FAILED: &str = "cannot keep a result";
        let mut conn = self.conn();
        let tx = conn.transaction_with_behavior(Immediate).or_storage(StorePart::Results, FAILED)?;
        tx.execute(&format!("DELETE FROM kept_results WHERE {EXPIRED}"), [now])
            .or_storage(StorePart::Results, FAILED)?;
        write(&tx, row).or_storage(StorePart::Results, FAILED)?;
        let max = i64::try_from(limits.max_count).unwrap_or(i64::MAX);
        let trim = "DELETE FROM kept_results WHERE rowid NOT IN (SELECT rowid FROM kept_results ORDER BY rowid DESC LIMIT ?1)";
        tx.execute(trim, [max]).or_storage(StorePart::Results, FAILED)?;
        tx.commit().or_storage(StorePart::Results, FAILED)
    }

    fn get_result(&self, call_id: &str) -> Result<Option<ResultRow>, StoreError> {
        let sql = format!("SELECT {COLUMNS} FROM kept_results WHERE call_id = ?1");
        let row = self.conn().query_row(&sql, [call_id], read).optional();
        row.or_storage(StorePart::Results, "cannot read a kept result")
    }
}

impl ResultStore for SqliteResults {
    fn put(&self, call_id: String, result: KeptResult) -> BoxFuture<'_, ()> {
        Box::pin(async move {
            if !self.limits.admits(result.size()) {
                return;
            }
            let (now, limits) = (now_ms(), self.limits);
            let row = ResultRow::new(LABEL, call_id, result, now, &limits, &self.store.db.key);
            let kept = self.store.blocking(move |db| db.put_result(&row, now, &limits)).await;
            if let Err(error) = kept {
                tracing::warn!(%error, "a cut call's full result could not be kept; its link will not resolve");
            }
        })
    }

    fn get<'a>(&'a self, call_id: &'a str, owner: &'a str) -> BoxFuture<'a, Result<KeptResult, ResultError>> {
        Box::pin(async move {
            let id = call_id.to_owned();
            let row = self.store.blocking(move |db| db.get_result(&id)).await;
            let row = row.map_err(|e| ResultError::Unavailable(call_id.to_owned(), e.to_string()))?;
            let row = row.ok_or_else(|| ResultError::NotFound(call_id.to_owned()))?;
            row.read(LABEL, owner, now_ms(), &self.limits, &self.store.db.key)
        })
    }

    fn expire(&self, before_ms: u64) -> BoxFuture<'_, Result<u64, StoreError>> {
        let before = i64::try_from(before_ms).unwrap_or(i64::MAX);
        Box::pin(self.store.blocking(move |db| {
            let sql = format!("DELETE FROM kept_results WHERE {EXPIRED} OR created_at_ms IS NULL OR created_at_ms < ?2");
            let removed = db.conn().execute(&sql, [now_ms(), before]);
            removed
                .or_storage(StorePart::Results, "cannot expire kept results")
                .map(|n| n as u64)
        }))
    }

    fn count(&self) -> BoxFuture<'_, Result<u64, StoreError>> {
        Box::pin(self.store.blocking(move |db| {
            let sql = "SELECT COUNT(*) FROM kept_results WHERE expires_at_ms > ?1";
            let n: rusqlite::Result<i64> = db.conn().query_row(sql, [now_ms()], |r| r.get(0));
            n.or_storage(StorePart::Results, "cannot count kept results")
                .map(|n| n.max(0) as u64)
        }))
    }
}
