//! The audit trail in PostgreSQL: one row per decision in `toolsmith_audit`, appended by one
//! `INSERT`, ordered by `seq` (the order of appending), tagged with the key every instance
//! shares.

use deadpool_postgres::Pool;

use super::{pool_error, storage};
use crate::runtime::audit::{AuditEntry, AuditFilter, AuditRecord};
use crate::runtime::store::integrity::Key;
use crate::runtime::store::{AuditRow, AuditStore, StoreError, StorePart};

/// What a PostgreSQL audit row's tag is made under.
const DOMAIN: &[u8] = b"postgres audit v1";

/// The audit trail of one instance's store (see [`PostgresStore`](super::PostgresStore)).
pub(super) struct PgAudit {
    pub(super) pool: Pool,
    pub(super) key: Key,
}

#[async_trait::async_trait]
impl AuditStore for PgAudit {
    async fn append(&self, record: &AuditRecord) -> Result<(), StoreError> {
        let row = AuditRow::of(record, &self.key, DOMAIN)?;
        let client = self.pool.get().await.map_err(|e| pool_error(StorePart::Audit, e))?;
        let sql = "INSERT INTO toolsmith_audit (id, at_ms, call_id, record_json, tag) VALUES ($1, $2, $3, $4, $5)";
        let values: [&(dyn tokio_postgres::types::ToSql + Sync); 5] = [&row.id, &row.at_ms, &row.call_id, &row.record_json, &row.tag];
        client
            .execute(sql, &values)
            .await
            .map_err(storage(StorePart::Audit, "cannot append an audit row"))
            .map(drop)
    }

    async fn list(&self, filter: &AuditFilter) -> Result<Vec<AuditEntry>, StoreError> {
        let client = self.pool.get().await.map_err(|e| pool_error(StorePart::Audit, e))?;
        let since = filter.since_ms.map(|t| i64::try_from(t).unwrap_or(i64::MAX));
        let sql = "SELECT id, at_ms, call_id, record_json, tag FROM toolsmith_audit \
                   WHERE ($1::BIGINT IS NULL OR at_ms >= $1) AND ($2::TEXT IS NULL OR call_id = $2) ORDER BY seq";
        let rows = client
            .query(sql, &[&since, &filter.call_id])
            .await
            .map_err(storage(StorePart::Audit, "cannot list the audit rows"))?;
        Ok(rows
            .iter()
            .map(|r| {
                let row = AuditRow {
                    id: r.try_get(0).unwrap_or_default(),
                    at_ms: r.try_get(1).ok().flatten(),
                    call_id: r.try_get(2).ok().flatten(),
                    record_json: r.try_get(3).ok().flatten(),
                    tag: r.try_get(4).ok().flatten(),
                };
                row.entry(&self.key, DOMAIN)
            })
            .collect())
    }

    async fn expire(&self, before_ms: u64) -> Result<u64, StoreError> {
        let before = i64::try_from(before_ms).unwrap_or(i64::MAX);
        let client = self.pool.get().await.map_err(|e| pool_error(StorePart::Audit, e))?;
        let sql = "DELETE FROM toolsmith_audit WHERE at_ms < $1";
        client
            .execute(sql, &[&before])
            .await
            .map_err(storage(StorePart::Audit, "cannot expire audit rows"))
    }
}
