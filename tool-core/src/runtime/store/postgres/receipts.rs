//! Receipts in PostgreSQL: one row per idempotency key (by its digest) in `toolsmith_receipts`.
//! A claim is one `INSERT … ON CONFLICT DO NOTHING`; taking over an interrupted claim and every
//! later change is one `UPDATE … WHERE tag = <the tag read>`, so of concurrent instances exactly
//! one wins. A running receipt whose instance's lease lapsed reads as interrupted. Every row
//! carries an integrity tag over all its columns (the key every instance shares).

use deadpool_postgres::{Object, Pool};
use serde_json::Value;
use tokio_postgres::types::ToSql;

use super::{now_ms, pool_error, storage};
use crate::idempotency::key_digest;
use crate::runtime::state::Claim;
use crate::runtime::store::integrity::Key;
use crate::runtime::store::receipts::{self, Began, ReceiptClaim, ReceiptEntry, ReceiptStore, RowView, Stored, check_row, damaged};
use crate::runtime::store::{StoreError, StorePart};

const COLUMNS: &str =
    "key_digest, tool_name, args_digest, state, owner_instance, owner_pid, claimed_at_ms, result_json, finished_at_ms, tag";

/// The receipts of one instance's store (see [`PostgresStore`](super::PostgresStore)).
pub(super) struct PgReceipts {
    pub(super) pool: Pool,
    pub(super) key: Key,
    pub(super) instance: String,
}

#[derive(Debug, Clone, Default)]
struct Row {
    digest: String,
    tool_name: Option<String>,
    args_digest: Option<String>,
    state: Option<String>,
    owner_instance: Option<String>,
    owner_pid: Option<i64>,
    claimed_at_ms: Option<i64>,
    result_json: Option<String>,
    finished_at_ms: Option<i64>,
    tag: Option<Vec<u8>>,
}

impl Row {
    fn read(r: &tokio_postgres::Row) -> (Row, bool) {
        let row = Row {
            digest: r.try_get(0).unwrap_or_default(),
            tool_name: r.try_get(1).ok().flatten(),
            args_digest: r.try_get(2).ok().flatten(),
            state: r.try_get(3).ok().flatten(),
            owner_instance: r.try_get(4).ok().flatten(),
            owner_pid: r.try_get(5).ok().flatten(),
            claimed_at_ms: r.try_get(6).ok().flatten(),
            result_json: r.try_get(7).ok().flatten(),
            finished_at_ms: r.try_get(8).ok().flatten(),
            tag: r.try_get(9).ok().flatten(),
        };
        let alive = r.try_get::<_, Option<bool>>(10).ok().flatten().unwrap_or(false);
        (row, alive)
    }

    fn fields(&self) -> Vec<Option<Vec<u8>>> {
        let n = |v: Option<i64>| v.map(|v| v.to_string().into_bytes());
        let t = |v: &Option<String>| v.as_ref().map(|v| v.as_bytes().to_vec());
        vec![
            Some(b"postgres receipt v1".to_vec()),
            Some(self.digest.as_bytes().to_vec()),
            t(&self.tool_name),
            t(&self.args_digest),
            t(&self.state),
            t(&self.owner_instance),
            n(self.owner_pid),
            n(self.claimed_at_ms),
            t(&self.result_json),
            n(self.finished_at_ms),
        ]
    }

    fn tagged(mut self, key: &Key) -> Row {
        let fields = self.fields();
        self.tag = Some(key.tag(&fields.iter().map(|f| f.as_deref()).collect::<Vec<_>>()));
        self
    }

    fn check(&self, key: &Key, alive: bool) -> Result<Stored, String> {
        let fields = self.fields();
        check_row(
            RowView {
                fields: &fields,
                tag: self.tag.as_deref(),
                state: self.state.as_deref(),
                owner_pid: self.owner_pid,
                claimed_at_ms: self.claimed_at_ms,
                result_json: self.result_json.as_deref(),
                owner_alive: &|| alive,
            },
            key,
        )
    }

    fn values(&self) -> [&(dyn ToSql + Sync); 10] {
        [
            &self.digest,
            &self.tool_name,
            &self.args_digest,
            &self.state,
            &self.owner_instance,
            &self.owner_pid,
            &self.claimed_at_ms,
            &self.result_json,
            &self.finished_at_ms,
            &self.tag,
        ]
    }
}

impl PgReceipts {
    async fn client(&self) -> Result<Object, StoreError> {
        self.pool.get().await.map_err(|e| pool_error(StorePart::Receipts, e))
    }

    fn mine(&self, row: Row) -> Row {
        Row {
            state: Some("running".into()),
            owner_instance: Some(self.instance.clone()),
            owner_pid: Some(i64::from(std::process::id())),
            claimed_at_ms: Some(now_ms()),
            result_json: None,
            finished_at_ms: None,
            ..row
        }
        .tagged(&self.key)
    }

    async fn read(&self, client: &Object, digest: &str) -> Result<Option<(Row, bool)>, StoreError> {
        let alive = "COALESCE(i.heartbeat_at + i.lease_ms * interval '1 millisecond' > now(), false)";
        let sql = format!(
            "SELECT r.{}, {alive} FROM toolsmith_receipts r LEFT JOIN toolsmith_instances i ON i.id = r.owner_instance \
             WHERE r.key_digest = $1",
            COLUMNS.replace(", ", ", r.")
        );
        let row = client
            .query_opt(&sql, &[&digest])
            .await
            .map_err(storage(StorePart::Receipts, "cannot read a receipt"))?;
        Ok(row.as_ref().map(Row::read))
    }

    /// Replaces the row if its tag is still `old_tag`; whether it did.
    async fn replace(&self, client: &Object, row: &Row, old_tag: &[u8]) -> Result<bool, StoreError> {
        let sql = "UPDATE toolsmith_receipts SET tool_name = $2, args_digest = $3, state = $4, owner_instance = $5, \
                   owner_pid = $6, claimed_at_ms = $7, result_json = $8, finished_at_ms = $9, tag = $10 \
                   WHERE key_digest = $1 AND tag = $11";
        let mut values: Vec<&(dyn ToSql + Sync)> = row.values().to_vec();
        values.push(&old_tag);
        let n = client
            .execute(sql, &values)
            .await
            .map_err(storage(StorePart::Receipts, "cannot change a receipt"))?;
        Ok(n == 1)
    }

    /// Changes the row this instance holds for `key` (`None`: deletes it); another's is left.
    async fn change(&self, key: &str, change: impl FnOnce(Row) -> Option<Row>) -> Result<(), StoreError> {
        let digest = key_digest(key);
        let client = self.client().await?;
        let Some((row, alive)) = self.read(&client, &digest).await? else {
            return Ok(());
        };
        row.check(&self.key, alive).map_err(|reason| damaged(&digest, reason))?;
        if row.state.as_deref() != Some("running") || row.owner_instance.as_deref() != Some(self.instance.as_str()) {
            return Ok(());
        }
        let old_tag = row.tag.clone().unwrap_or_default();
        match change(row) {
            Some(next) => {
                self.replace(&client, &next.tagged(&self.key), &old_tag).await?;
            }
            None => {
                let sql = "DELETE FROM toolsmith_receipts WHERE key_digest = $1 AND tag = $2";
                client
                    .execute(sql, &[&digest, &old_tag])
                    .await
                    .map_err(storage(StorePart::Receipts, "cannot release a receipt"))?;
            }
        }
        Ok(())
    }
}

#[async_trait::async_trait]
impl ReceiptStore for PgReceipts {
    async fn begin(&self, c: &ReceiptClaim, take_over: bool) -> Result<Began, StoreError> {
        let digest = key_digest(&c.key);
        let client = self.client().await?;
        let fresh = self.mine(Row {
            digest: digest.clone(),
            tool_name: Some(c.tool_name.clone()),
            args_digest: Some(c.args_digest.clone()),
            ..Row::default()
        });
        let insert = format!(
            "INSERT INTO toolsmith_receipts ({COLUMNS}) VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10) ON CONFLICT (key_digest) DO NOTHING"
        );
        let inserted = client
            .execute(&insert, &fresh.values())
            .await
            .map_err(storage(StorePart::Receipts, "cannot claim an idempotency key"))?;
        if inserted == 1 {
            return Ok(Began::Run(None));
        }
        let Some((row, alive)) = self.read(&client, &digest).await? else {
            // Released meanwhile: the next run claims it.
            return Ok(Began::Busy(Claim::default()));
        };
        let state = row.check(&self.key, alive).map_err(|reason| damaged(&digest, reason))?;
        if row.tool_name.as_deref() != Some(&c.tool_name) || row.args_digest.as_deref() != Some(&c.args_digest) {
            return Ok(Began::Mismatch);
        }
        match state {
            Stored::Done(result) => Ok(Began::Done(result)),
            Stored::Running(claim) => Ok(Began::Busy(claim)),
            Stored::Interrupted(claim) if !take_over => Ok(Began::Interrupted(claim)),
            Stored::Interrupted(claim) => {
                let old_tag = row.tag.clone().unwrap_or_default();
                if self.replace(&client, &self.mine(row), &old_tag).await? {
                    Ok(Began::Run(Some(claim)))
                } else {
                    Ok(Began::Busy(claim))
                }
            }
        }
    }

    async fn finish(&self, key: &str, result: &Value) -> Result<(), StoreError> {
        let json = result.to_string();
        self.change(key, |row| {
            Some(Row {
                state: Some("done".into()),
                result_json: Some(json),
                finished_at_ms: Some(now_ms()),
                ..row
            })
        })
        .await
    }

    async fn release(&self, key: &str) -> Result<(), StoreError> {
        self.change(key, |_| None).await
    }

    async fn interrupt(&self, key: &str) -> Result<(), StoreError> {
        self.change(key, |row| {
            Some(Row {
                state: Some("interrupted".into()),
                ..row
            })
        })
        .await
    }

    async fn remove_digest(&self, digest: &str) -> Result<bool, StoreError> {
        let client = self.client().await?;
        let sql = "DELETE FROM toolsmith_receipts WHERE key_digest = $1";
        let n = client
            .execute(sql, &[&digest])
            .await
            .map_err(storage(StorePart::Receipts, "cannot remove a receipt"))?;
        Ok(n > 0)
    }

    async fn list(&self) -> Result<Vec<ReceiptEntry>, StoreError> {
        let client = self.client().await?;
        let alive = "COALESCE(i.heartbeat_at + i.lease_ms * interval '1 millisecond' > now(), false)";
        let sql = format!(
            "SELECT r.{}, {alive} FROM toolsmith_receipts r LEFT JOIN toolsmith_instances i ON i.id = r.owner_instance \
             ORDER BY COALESCE(r.claimed_at_ms, 0), r.key_digest",
            COLUMNS.replace(", ", ", r.")
        );
        let rows = client
            .query(&sql, &[])
            .await
            .map_err(storage(StorePart::Receipts, "cannot list the receipts"))?;
        Ok(rows
            .iter()
            .map(|r| {
                let (row, alive) = Row::read(r);
                let checked = row.check(&self.key, alive);
                receipts::listed(
                    &row.digest,
                    row.tool_name.as_deref(),
                    checked,
                    (row.claimed_at_ms, row.finished_at_ms),
                )
            })
            .collect())
    }

    async fn expire(&self, before_ms: u64) -> Result<u64, StoreError> {
        let before = i64::try_from(before_ms).unwrap_or(i64::MAX);
        let client = self.client().await?;
        let sql = "DELETE FROM toolsmith_receipts WHERE state = 'done' AND finished_at_ms < $1";
        client
            .execute(sql, &[&before])
            .await
            .map_err(storage(StorePart::Receipts, "cannot expire receipts"))
    }
}
