//! Kept results in PostgreSQL ([`PostgresStore`](super::PostgresStore) as a [`ResultStore`],
//! through `PendingStore::results`): `toolsmith_results` (migration 6), one row per call,
//! tagged with the key every instance shares, so a result kept by one instance is read from any
//! other. A put is one statement: the row is written (`INSERT … ON CONFLICT DO UPDATE`, a
//! rewrite moving it to the newest) while the rows past the time to live they were kept with
//! and the oldest beyond the count bound are deleted. Instances putting at the same moment may leave a row or two above the bound
//! until the next put.

use deadpool_postgres::{Object, Pool};
use tokio_postgres::types::ToSql;

use super::{pool_error, storage};
use crate::context::BoxFuture;
use crate::runtime::store::integrity::Key;
use crate::runtime::store::results::{ResultRow, now_ms};
use crate::runtime::store::{KeptResult, ResultError, ResultLimits, ResultStore, StoreError, StorePart};

const COLUMNS: &str = "call_id, owner, result_text, result_json, created_at_ms, expires_at_ms, tag";

/// What the tags of these rows are computed over first.
const LABEL: &str = "postgres kept result v1";

/// The kept results of one instance's store, within `limits`.
pub(super) struct PgResults {
    pub(super) pool: Pool,
    pub(super) key: Key,
    pub(super) limits: ResultLimits,
}

/// Reads a row selected with [`COLUMNS`]; a column of an unexpected type reads as `None` (and
/// fails the tag).
fn read(r: &tokio_postgres::Row) -> ResultRow {
    ResultRow {
        call_id: r.try_get(0).unwrap_or_default(),
        owner: r.try_get(1).ok().flatten(),
        text: r.try_get(2).ok().flatten(),
        json: r.try_get(3).ok().flatten(),
        created_at_ms: r.try_get(4).ok().flatten(),
        expires_at_ms: r.try_get(5).ok().flatten(),
        tag: r.try_get(6).ok().flatten(),
    }
}

impl PgResults {
    async fn client(&self) -> Result<Object, StoreError> {
        self.pool.get().await.map_err(|e| pool_error(StorePart::Results, e))
    }

    /// Writes `row` and trims the table (as of `now`) in one statement. The `DELETE` sees the table as it was
    /// before the statement (PostgreSQL's rule for data-modifying `WITH`), so it keeps the
    /// `max_count - 1` newest other rows beside the new one.
    async fn keep(&self, row: &ResultRow, now: i64) -> Result<(), StoreError> {
        let sql = format!(
            "WITH kept AS (INSERT INTO toolsmith_results ({COLUMNS}) VALUES ($1, $2, $3, $4, $5, $6, $7) \
             ON CONFLICT (call_id) DO UPDATE SET owner = EXCLUDED.owner, result_text = EXCLUDED.result_text, \
             result_json = EXCLUDED.result_json, created_at_ms = EXCLUDED.created_at_ms, \
             expires_at_ms = EXCLUDED.expires_at_ms, tag = EXCLUDED.tag, seq = DEFAULT RETURNING call_id) \
             DELETE FROM toolsmith_results WHERE call_id <> $1 AND (expires_at_ms IS NULL OR expires_at_ms <= $8 \
             OR seq <= (SELECT seq FROM toolsmith_results WHERE call_id <> $1 ORDER BY seq DESC OFFSET $9 LIMIT 1))"
        );
        let others = i64::try_from(self.limits.max_count.saturating_sub(1)).unwrap_or(i64::MAX);
        let values: [&(dyn ToSql + Sync); 9] = [
            &row.call_id,
            &row.owner,
            &row.text,
            &row.json,
            &row.created_at_ms,
            &row.expires_at_ms,
            &row.tag,
            &now,
            &others,
        ];
        let client = self.client().await?;
        client
            .execute(&sql, &values)
            .await
            .map_err(storage(StorePart::Results, "cannot keep a result"))
            .map(drop)
    }

    async fn row(&self, call_id: &str) -> Result<Option<ResultRow>, StoreError> {
        let client = self.client().await?;
        let sql = format!("SELECT {COLUMNS} FROM toolsmith_results WHERE call_id = $1");
        let row = client.query_opt(&sql, &[&call_id]).await;
        Ok(row
            .map_err(storage(StorePart::Results, "cannot read a kept result"))?
            .as_ref()
            .map(read))
    }
}

impl ResultStore for PgResults {
    fn put(&self, call_id: String, result: KeptResult) -> BoxFuture<'_, ()> {
        Box::pin(async move {
            if !self.limits.admits(result.size()) {
                return;
            }
            let now = now_ms();
            let row = ResultRow::new(LABEL, call_id, result, now, &self.limits, &self.key);
            if let Err(error) = self.keep(&row, now).await {
                tracing::warn!(%error, "a cut call's full result could not be kept; its link will not resolve");
            }
        })
    }

    fn get<'a>(&'a self, call_id: &'a str, owner: &'a str) -> BoxFuture<'a, Result<KeptResult, ResultError>> {
        Box::pin(async move {
            let row = self.row(call_id).await;
            let row = row.map_err(|e| ResultError::Unavailable(call_id.to_owned(), e.to_string()))?;
            let row = row.ok_or_else(|| ResultError::NotFound(call_id.to_owned()))?;
            row.read(LABEL, owner, now_ms(), &self.limits, &self.key)
        })
    }

    fn expire(&self, before_ms: u64) -> BoxFuture<'_, Result<u64, StoreError>> {
        let before = i64::try_from(before_ms).unwrap_or(i64::MAX);
        Box::pin(async move {
            let client = self.client().await?;
            let sql = "DELETE FROM toolsmith_results WHERE expires_at_ms IS NULL OR expires_at_ms <= $1 \
                       OR created_at_ms IS NULL OR created_at_ms < $2";
            let removed = client.execute(sql, &[&now_ms(), &before]).await;
            removed.map_err(storage(StorePart::Results, "cannot expire kept results"))
        })
    }

    fn count(&self) -> BoxFuture<'_, Result<u64, StoreError>> {
        Box::pin(async move {
            let client = self.client().await?;
            let sql = "SELECT COUNT(*) FROM toolsmith_results WHERE expires_at_ms > $1";
            let row = client.query_one(sql, &[&now_ms()]).await;
            let n: i64 = row.map_err(storage(StorePart::Results, "cannot count kept results"))?.get(0);
            Ok(n.max(0) as u64)
        })
    }
}
