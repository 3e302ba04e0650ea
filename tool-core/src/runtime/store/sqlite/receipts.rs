//! Receipts in the SQLite file: one row per idempotency key (by its digest), claimed in an
//! immediate transaction (so of processes claiming one key at once exactly one runs it), owned
//! by a process (a claim whose process died reads as interrupted) and tagged like the pending
//! calls' rows.

use rusqlite::TransactionBehavior::Immediate;
use rusqlite::types::Value as Sql;
use rusqlite::{Connection, OptionalExtension, params};
use serde_json::Value;

use super::owner::{owner_alive, process_stat};
use super::{Db, OrStorage, SqliteStore, now_ms};
use crate::idempotency::key_digest;
use crate::runtime::store::integrity::Key;
use crate::runtime::store::receipts::{self, Began, ReceiptClaim, ReceiptEntry, ReceiptStore, RowView, Stored, check_row, damaged};
use crate::runtime::store::{StoreError, StorePart};

/// The table (schema version 3 of the file).
pub(super) const SCHEMA_V3: &str = "CREATE TABLE IF NOT EXISTS receipts (
    key_digest TEXT PRIMARY KEY NOT NULL, tool_name TEXT, args_digest TEXT, state TEXT,
    owner_pid INTEGER, owner_start TEXT, claimed_at_ms INTEGER, result_json TEXT, finished_at_ms INTEGER, tag BLOB);";

const COLUMNS: &str = "key_digest, tool_name, args_digest, state, owner_pid, owner_start, claimed_at_ms, result_json, finished_at_ms, tag";

/// A receipt row as stored (columns of an unexpected type read as `None` and fail the checks).
#[derive(Debug, Clone, Default)]
struct Row {
    digest: String,
    tool_name: Option<String>,
    args_digest: Option<String>,
    state: Option<String>,
    owner_pid: Option<i64>,
    owner_start: Option<String>,
    claimed_at_ms: Option<i64>,
    result_json: Option<String>,
    finished_at_ms: Option<i64>,
    tag: Option<Vec<u8>>,
}

impl Row {
    fn read(r: &rusqlite::Row<'_>) -> rusqlite::Result<Row> {
        let text = |i| r.get::<_, Sql>(i).map(|v| if let Sql::Text(t) = v { Some(t) } else { None });
        let int = |i| r.get::<_, Sql>(i).map(|v| if let Sql::Integer(n) = v { Some(n) } else { None });
        Ok(Row {
            digest: text(0)?.unwrap_or_default(),
            tool_name: text(1)?,
            args_digest: text(2)?,
            state: text(3)?,
            owner_pid: int(4)?,
            owner_start: text(5)?,
            claimed_at_ms: int(6)?,
            result_json: text(7)?,
            finished_at_ms: int(8)?,
            tag: match r.get::<_, Sql>(9)? {
                Sql::Blob(b) => Some(b),
                _ => None,
            },
        })
    }

    fn fields(&self) -> Vec<Option<Vec<u8>>> {
        let n = |v: Option<i64>| v.map(|v| v.to_string().into_bytes());
        let t = |v: &Option<String>| v.as_ref().map(|v| v.as_bytes().to_vec());
        vec![
            Some(b"sqlite receipt v1".to_vec()),
            Some(self.digest.as_bytes().to_vec()),
            t(&self.tool_name),
            t(&self.args_digest),
            t(&self.state),
            n(self.owner_pid),
            t(&self.owner_start),
            n(self.claimed_at_ms),
            t(&self.result_json),
            n(self.finished_at_ms),
        ]
    }

    fn tag(&self, key: &Key) -> Vec<u8> {
        let fields = self.fields();
        key.tag(&fields.iter().map(|f| f.as_deref()).collect::<Vec<_>>())
    }

    /// The row's state, or why it cannot be used (never its stored text).
    fn check(&self, key: &Key) -> Result<Stored, String> {
        let fields = self.fields();
        check_row(
            RowView {
                fields: &fields,
                tag: self.tag.as_deref(),
                state: self.state.as_deref(),
                owner_pid: self.owner_pid,
                claimed_at_ms: self.claimed_at_ms,
                result_json: self.result_json.as_deref(),
                owner_alive: &|| owner_alive(self.owner_pid, self.owner_start.as_deref()),
            },
            key,
        )
    }

    /// This process's claim of the row.
    fn mine(self) -> Row {
        let me = std::process::id();
        Row {
            state: Some("running".into()),
            owner_pid: Some(i64::from(me)),
            owner_start: process_stat(me).map(|(_, start)| start),
            claimed_at_ms: Some(now_ms()),
            result_json: None,
            finished_at_ms: None,
            ..self
        }
    }

    fn held_by_me(&self) -> bool {
        self.state.as_deref() == Some("running") && self.owner_pid == Some(i64::from(std::process::id()))
    }
}

fn read(conn: &Connection, digest: &str) -> rusqlite::Result<Option<Row>> {
    let sql = format!("SELECT {COLUMNS} FROM receipts WHERE key_digest = ?1");
    conn.query_row(&sql, [digest], Row::read).optional()
}

fn write(conn: &Connection, mut row: Row, key: &Key) -> rusqlite::Result<()> {
    row.tag = Some(row.tag(key));
    let sql = format!("INSERT OR REPLACE INTO receipts ({COLUMNS}) VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10)");
    let r = row;
    let values = params![
        r.digest,
        r.tool_name,
        r.args_digest,
        r.state,
        r.owner_pid,
        r.owner_start,
        r.claimed_at_ms,
        r.result_json,
        r.finished_at_ms,
        r.tag
    ];
    conn.execute(&sql, values).map(drop)
}

impl Db {
    fn begin_receipt(&self, c: &ReceiptClaim, take_over: bool) -> Result<Began, StoreError> {
        const FAILED: &str = "cannot claim an idempotency key";
        let digest = key_digest(&c.key);
        let mut conn = self.conn();
        let tx = conn.transaction_with_behavior(Immediate).or_storage(StorePart::Receipts, FAILED)?;
        let row = read(&tx, &digest).or_storage(StorePart::Receipts, FAILED)?;
        let began = match &row {
            None => Began::Run(None),
            Some(row) => {
                let state = row.check(&self.key).map_err(|reason| damaged(&digest, reason))?;
                if row.tool_name.as_deref() != Some(&c.tool_name) || row.args_digest.as_deref() != Some(&c.args_digest) {
                    return Ok(Began::Mismatch);
                }
                match state {
                    Stored::Done(result) => return Ok(Began::Done(result)),
                    Stored::Running(claim) => return Ok(Began::Busy(claim)),
                    Stored::Interrupted(claim) if !take_over => return Ok(Began::Interrupted(claim)),
                    Stored::Interrupted(claim) => Began::Run(Some(claim)),
                }
            }
        };
        let fresh = Row {
            digest,
            tool_name: Some(c.tool_name.clone()),
            args_digest: Some(c.args_digest.clone()),
            ..Row::default()
        };
        write(&tx, fresh.mine(), &self.key).or_storage(StorePart::Receipts, FAILED)?;
        tx.commit().or_storage(StorePart::Receipts, FAILED)?;
        Ok(began)
    }

    /// Changes the row this process holds for `key` (`None`: deletes it); another's is left.
    fn change_receipt(&self, key: &str, change: impl FnOnce(Row) -> Option<Row>) -> Result<(), StoreError> {
        const FAILED: &str = "cannot record a receipt";
        let digest = key_digest(key);
        let mut conn = self.conn();
        let tx = conn.transaction_with_behavior(Immediate).or_storage(StorePart::Receipts, FAILED)?;
        let Some(row) = read(&tx, &digest).or_storage(StorePart::Receipts, FAILED)? else {
            return Ok(());
        };
        row.check(&self.key).map_err(|reason| damaged(&digest, reason))?;
        if !row.held_by_me() {
            return Ok(());
        }
        match change(row) {
            Some(row) => write(&tx, row, &self.key).or_storage(StorePart::Receipts, FAILED)?,
            None => tx
                .execute("DELETE FROM receipts WHERE key_digest = ?1", [&digest])
                .map(drop)
                .or_storage(StorePart::Receipts, FAILED)?,
        }
        tx.commit().or_storage(StorePart::Receipts, FAILED)
    }
}

#[async_trait::async_trait]
impl ReceiptStore for SqliteStore {
    async fn begin(&self, claim: &ReceiptClaim, take_over: bool) -> Result<Began, StoreError> {
        let claim = claim.clone();
        self.blocking(move |db| db.begin_receipt(&claim, take_over)).await
    }

    async fn finish(&self, key: &str, result: &Value) -> Result<(), StoreError> {
        let (key, json) = (key.to_owned(), result.to_string());
        self.blocking(move |db| {
            db.change_receipt(&key, |row| {
                Some(Row {
                    state: Some("done".into()),
                    result_json: Some(json),
                    finished_at_ms: Some(now_ms()),
                    ..row
                })
            })
        })
        .await
    }

    async fn release(&self, key: &str) -> Result<(), StoreError> {
        let key = key.to_owned();
        self.blocking(move |db| db.change_receipt(&key, |_| None)).await
    }

    async fn interrupt(&self, key: &str) -> Result<(), StoreError> {
        let key = key.to_owned();
        self.blocking(move |db| {
            db.change_receipt(&key, |row| {
                Some(Row {
                    state: Some("interrupted".into()),
                    ..row
                })
            })
        })
        .await
    }

    async fn remove_digest(&self, digest: &str) -> Result<bool, StoreError> {
        let digest = digest.to_owned();
        self.blocking(move |db| {
            let removed = db.conn().execute("DELETE FROM receipts WHERE key_digest = ?1", [&digest]);
            removed.or_storage(StorePart::Receipts, "cannot remove a receipt").map(|n| n > 0)
        })
        .await
    }

    async fn list(&self) -> Result<Vec<ReceiptEntry>, StoreError> {
        self.blocking(move |db| {
            const FAILED: &str = "cannot list the receipts";
            let conn = db.conn();
            let sql = format!("SELECT {COLUMNS} FROM receipts ORDER BY COALESCE(claimed_at_ms, 0), key_digest");
            let mut statement = conn.prepare(&sql).or_storage(StorePart::Receipts, FAILED)?;
            let rows = statement.query_map([], Row::read).or_storage(StorePart::Receipts, FAILED)?;
            let mut listed = Vec::new();
            for row in rows {
                let row = row.or_storage(StorePart::Receipts, FAILED)?;
                let checked = row.check(&db.key);
                let times = (row.claimed_at_ms, row.finished_at_ms);
                listed.push(receipts::listed(&row.digest, row.tool_name.as_deref(), checked, times));
            }
            Ok(listed)
        })
        .await
    }

    async fn expire(&self, before_ms: u64) -> Result<u64, StoreError> {
        let before = i64::try_from(before_ms).unwrap_or(i64::MAX);
        self.blocking(move |db| {
            let delete = "DELETE FROM receipts WHERE state = 'done' AND finished_at_ms < ?1";
            let removed = db.conn().execute(delete, [before]);
            removed.or_storage(StorePart::Receipts, "cannot expire receipts").map(|n| n as u64)
        })
        .await
    }
}
