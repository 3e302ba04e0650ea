//! The audit trail in the SQLite file: one row per decision in `audit`, appended in its own
//! statement, ordered by `seq` (the order of appending), tagged like the file's other rows.

use rusqlite::params;
use rusqlite::types::Value as Sql;

use super::{OrStorage, SqliteStore};
use crate::runtime::audit::{AuditEntry, AuditFilter, AuditRecord};
use crate::runtime::store::{AuditRow, AuditStore, StoreError, StorePart};

/// The table (schema version 6 of the file). `seq` orders the rows and is not tagged; `tag`
/// covers every other column.
pub(super) const SCHEMA_V6: &str = "CREATE TABLE IF NOT EXISTS audit (
    seq INTEGER PRIMARY KEY AUTOINCREMENT, id TEXT NOT NULL, at_ms INTEGER, call_id TEXT, record_json TEXT, tag BLOB);
CREATE INDEX IF NOT EXISTS audit_by_time ON audit (at_ms);
CREATE INDEX IF NOT EXISTS audit_by_call ON audit (call_id);";

/// What a SQLite audit row's tag is made under.
const DOMAIN: &[u8] = b"sqlite audit v1";

fn read(r: &rusqlite::Row<'_>) -> rusqlite::Result<AuditRow> {
    let text = |i| r.get::<_, Sql>(i).map(|v| if let Sql::Text(t) = v { Some(t) } else { None });
    Ok(AuditRow {
        id: text(0)?.unwrap_or_default(),
        at_ms: match r.get::<_, Sql>(1)? {
            Sql::Integer(n) => Some(n),
            _ => None,
        },
        call_id: text(2)?,
        record_json: text(3)?,
        tag: match r.get::<_, Sql>(4)? {
            Sql::Blob(b) => Some(b),
            _ => None,
        },
    })
}

#[async_trait::async_trait]
impl AuditStore for SqliteStore {
    async fn append(&self, record: &AuditRecord) -> Result<(), StoreError> {
        let record = record.clone();
        self.blocking(move |db| {
            let row = AuditRow::of(&record, &db.key, DOMAIN)?;
            let sql = "INSERT INTO audit (id, at_ms, call_id, record_json, tag) VALUES (?1, ?2, ?3, ?4, ?5)";
            let values = params![row.id, row.at_ms, row.call_id, row.record_json, row.tag];
            db.conn()
                .execute(sql, values)
                .map(drop)
                .or_storage(StorePart::Audit, "cannot append an audit row")
        })
        .await
    }

    async fn list(&self, filter: &AuditFilter) -> Result<Vec<AuditEntry>, StoreError> {
        let filter = filter.clone();
        self.blocking(move |db| {
            const FAILED: &str = "cannot list the audit rows";
            let since = filter.since_ms.map(|t| i64::try_from(t).unwrap_or(i64::MAX));
            let conn = db.conn();
            let sql = "SELECT id, at_ms, call_id, record_json, tag FROM audit \
                       WHERE (?1 IS NULL OR at_ms >= ?1) AND (?2 IS NULL OR call_id = ?2) ORDER BY seq";
            let mut statement = conn.prepare(sql).or_storage(StorePart::Audit, FAILED)?;
            let rows = statement
                .query_map(params![since, filter.call_id], read)
                .or_storage(StorePart::Audit, FAILED)?;
            let mut listed = Vec::new();
            for row in rows {
                listed.push(row.or_storage(StorePart::Audit, FAILED)?.entry(&db.key, DOMAIN));
            }
            Ok(listed)
        })
        .await
    }

    async fn expire(&self, before_ms: u64) -> Result<u64, StoreError> {
        let before = i64::try_from(before_ms).unwrap_or(i64::MAX);
        self.blocking(move |db| {
            let removed = db.conn().execute("DELETE FROM audit WHERE at_ms < ?1", [before]);
            removed.or_storage(StorePart::Audit, "cannot expire audit rows").map(|n| n as u64)
        })
        .await
    }
}
