//! The PostgreSQL task queue ([`PostgresStore`] as a [`TaskStore`]): one table every instance
//! shares. Claiming is one `UPDATE … FROM (SELECT … FOR UPDATE SKIP LOCKED)`, so concurrent
//! claimers never wait on each other and never take the same task; leases and their expiry are
//! on the database's clock (instances' clocks may disagree); every write of a running task is
//! conditioned on its lease (owner and attempt), so a stale owner's write matches nothing.

use std::time::Duration;

use tokio_postgres::Row as PgRow;

use super::{PostgresStore, storage};
use crate::error::ToolError;
use crate::runtime::store::tasks::row::{TASK_COLUMNS, TaskRow, encode, outcome};
use crate::runtime::store::tasks::{abandoned_error, cancelled_error, damaged_error};
use crate::runtime::store::{ClaimedTask, NewTask, StoreError, StorePart, TaskCounts, TaskLease, TaskRecord, TaskState, TaskStore};
use crate::tool::ToolOutput;

/// The database's clock, in milliseconds since the Unix epoch.
const NOW: &str = "(extract(epoch from clock_timestamp()) * 1000)::bigint";

/// The condition of a write by the current lease: `$1` id, `$2` owner, `$3` attempt.
const LEASED: &str = "task_id = $1 AND state = 'running' AND lease_owner = $2 AND attempts = $3";

/// A running task's lease ran out and its owner is gone: no live instance is the owner's
/// (`INSTANCE/random`, see `TaskStore::owner_prefix`; an owner without an instance is gone).
/// An instance cut off from the database stops renewing both its task leases and its own; until
/// its own runs out too it may hold the attempt's end in memory, so the task is left to it.
const ABANDONED: &str = "toolsmith_tasks.state = 'running' AND toolsmith_tasks.lease_expires_at_ms < (extract(epoch from clock_timestamp()) * 1000)::bigint \
    AND NOT EXISTS (SELECT 1 FROM toolsmith_instances i WHERE i.id = split_part(toolsmith_tasks.lease_owner, '/', 1) \
        AND strpos(toolsmith_tasks.lease_owner, '/') > 0 AND i.heartbeat_at + i.lease_ms * interval '1 millisecond' > now())";

fn millis(d: Duration) -> i64 {
    i64::try_from(d.as_millis()).unwrap_or(i64::MAX)
}

/// Reads a row selected with [`TASK_COLUMNS`].
fn read(r: &PgRow) -> TaskRow {
    let text = |i: usize| r.try_get::<_, Option<String>>(i).ok().flatten();
    let int = |i: usize| r.try_get::<_, Option<i64>>(i).ok().flatten();
    let bytes = |i: usize| r.try_get::<_, Option<Vec<u8>>>(i).ok().flatten();
    TaskRow {
        task_id: text(0).unwrap_or_else(|| "<unreadable id>".to_owned()),
        tool_name: text(1),
        task_json: text(2),
        created_at_ms: int(3),
        task_tag: bytes(4),
        max_retries: int(5),
        state: text(6),
        attempts: int(7),
        lease_owner: text(8),
        lease_expires_at_ms: int(9),
        output_json: text(10),
        error_json: text(11),
        outcome_tag: bytes(12),
        updated_at_ms: int(13),
    }
}

impl PostgresStore {
    /// Ends running tasks whose lease expired with no retries left (failed, saying why).
    async fn fail_abandoned(&self) -> Result<(), StoreError> {
        const WHAT: &str = "cannot end abandoned tasks";
        let mut client = self.client(StorePart::Tasks).await?;
        // Most claims find none: one read, and a transaction only when there are some.
        let any = format!("SELECT EXISTS (SELECT 1 FROM toolsmith_tasks WHERE {ABANDONED} AND attempts > max_retries)");
        let any: bool = client.query_one(&any, &[]).await.map_err(storage(StorePart::Tasks, WHAT))?.get(0);
        if !any {
            return Ok(());
        }
        let tx = client.transaction().await.map_err(storage(StorePart::Tasks, WHAT))?;
        let select = format!(
            "SELECT task_id, tool_name, attempts, max_retries FROM toolsmith_tasks \
             WHERE {ABANDONED} AND attempts > max_retries \
             LIMIT 16 FOR UPDATE SKIP LOCKED"
        );
        let rows = tx.query(&select, &[]).await.map_err(storage(StorePart::Tasks, WHAT))?;
        for row in rows {
            let id: String = row.get(0);
            let tool: Option<String> = row.get(1);
            let count = |i: usize| u32::try_from(row.get::<_, i64>(i)).unwrap_or(u32::MAX);
            let error = abandoned_error(tool.as_deref().unwrap_or("?"), count(2), count(3));
            let (_, error_json, tag) = outcome(&id, TaskState::Failed, None, Some(&error), &self.key);
            let update = format!(
                "UPDATE toolsmith_tasks SET state = 'failed', output_json = NULL, error_json = $2, outcome_tag = $3, \
                 updated_at_ms = {NOW} WHERE task_id = $1"
            );
            tx.execute(&update, &[&id, &error_json, &tag])
                .await
                .map_err(storage(StorePart::Tasks, WHAT))?;
            tracing::warn!(task_id = %id, "a background task's instance stopped renewing its lease and no retries are left; it failed");
        }
        tx.commit().await.map_err(storage(StorePart::Tasks, WHAT))
    }

    /// Ends a claimed task whose row fails its checks (never run).
    async fn fail_damaged(&self, lease: &TaskLease, reason: &str) -> Result<(), StoreError> {
        tracing::warn!(task_id = %lease.task_id, %reason, "a stored background task is damaged; it was not run");
        self.fail_task(lease, &damaged_error(reason), false).await.map(drop)
    }
}

#[async_trait::async_trait]
impl TaskStore for PostgresStore {
    fn owner_prefix(&self) -> Option<String> {
        Some(self.instance_id().to_owned())
    }

    async fn enqueue_task(&self, task: &NewTask) -> Result<(), StoreError> {
        let (json, tag) = encode(task, &self.key).map_err(|e| StoreError::storage_of(StorePart::Tasks, e))?;
        let insert = format!(
            "INSERT INTO toolsmith_tasks (task_id, tool_name, task_json, created_at_ms, task_tag, max_retries, state, attempts, updated_at_ms) \
             VALUES ($1, $2, $3, $4, $5, $6, 'queued', 0, {NOW})"
        );
        let created = i64::try_from(task.created_at_ms).unwrap_or(i64::MAX);
        let retries = i64::from(task.max_retries);
        let client = self.client(StorePart::Tasks).await?;
        let values: [&(dyn tokio_postgres::types::ToSql + Sync); 6] = [&task.task_id, &task.tool_name, &json, &created, &tag, &retries];
        match client.execute(&insert, &values).await {
            Ok(_) => Ok(()),
            Err(e) if e.code() == Some(&tokio_postgres::error::SqlState::UNIQUE_VIOLATION) => Err(StoreError::storage_of(
                StorePart::Tasks,
                format!("a task with the id `{}` is already stored", task.task_id),
            )),
            Err(e) => Err(storage(StorePart::Tasks, "cannot enqueue a task")(e)),
        }
    }

    async fn enqueue_ended_task(&self, task: &NewTask, state: TaskState, error: &ToolError) -> Result<(), StoreError> {
        let (json, tag) = encode(task, &self.key).map_err(|e| StoreError::storage_of(StorePart::Tasks, e))?;
        let (_, error_json, outcome_tag) = outcome(&task.task_id, state, None, Some(error), &self.key);
        let insert = format!(
            "INSERT INTO toolsmith_tasks (task_id, tool_name, task_json, created_at_ms, task_tag, max_retries, state, attempts, \
             error_json, outcome_tag, updated_at_ms) VALUES ($1, $2, $3, $4, $5, $6, $7, 0, $8, $9, {NOW})"
        );
        let created = i64::try_from(task.created_at_ms).unwrap_or(i64::MAX);
        let retries = i64::from(task.max_retries);
        let client = self.client(StorePart::Tasks).await?;
        let values: [&(dyn tokio_postgres::types::ToSql + Sync); 9] = [
            &task.task_id,
            &task.tool_name,
            &json,
            &created,
            &tag,
            &retries,
            &state.as_str(),
            &error_json,
            &outcome_tag,
        ];
        match client.execute(&insert, &values).await {
            Ok(_) => Ok(()),
            Err(e) if e.code() == Some(&tokio_postgres::error::SqlState::UNIQUE_VIOLATION) => Err(StoreError::storage_of(
                StorePart::Tasks,
                format!("a task with the id `{}` is already stored", task.task_id),
            )),
            Err(e) => Err(storage(StorePart::Tasks, "cannot record an ended task")(e)),
        }
    }

    async fn claim_task(&self, owner: &str, lease: Duration) -> Result<Option<ClaimedTask>, StoreError> {
        self.fail_abandoned().await?;
        let returning: Vec<String> = TASK_COLUMNS.split(", ").map(|c| format!("t.{c}")).collect();
        let claim = format!(
            "WITH next AS (SELECT task_id FROM toolsmith_tasks \
                 WHERE (state = 'queued' OR ({ABANDONED})) AND attempts <= max_retries \
                 ORDER BY created_at_ms, task_id LIMIT 1 FOR UPDATE SKIP LOCKED) \
             UPDATE toolsmith_tasks t SET state = 'running', attempts = t.attempts + 1, lease_owner = $1, \
                 lease_expires_at_ms = {NOW} + $2, updated_at_ms = {NOW} \
             FROM next WHERE t.task_id = next.task_id RETURNING {}",
            returning.join(", ")
        );
        let client = self.client(StorePart::Tasks).await?;
        // A damaged row is ended (never run) and the next one claimed.
        for _ in 0..8 {
            let row = client.query_opt(&claim, &[&owner, &millis(lease)]).await;
            let Some(row) = row.map_err(storage(StorePart::Tasks, "cannot claim a task"))? else {
                return Ok(None);
            };
            let row = read(&row);
            let lease = row.lease(owner);
            match row.task(&self.key) {
                Ok(task) => return Ok(Some(ClaimedTask { task, lease })),
                Err(reason) => self.fail_damaged(&lease, &reason).await?,
            }
        }
        Ok(None)
    }

    async fn renew_task(&self, lease: &TaskLease, lease_for: Duration) -> Result<bool, StoreError> {
        let sql = format!("UPDATE toolsmith_tasks SET lease_expires_at_ms = {NOW} + $4 WHERE {LEASED}");
        let client = self.client(StorePart::Tasks).await?;
        let attempt = i64::from(lease.attempt);
        let renewed = client
            .execute(&sql, &[&lease.task_id, &lease.owner, &attempt, &millis(lease_for)])
            .await;
        Ok(renewed.map_err(storage(StorePart::Tasks, "cannot renew a task's lease"))? == 1)
    }

    async fn complete_task(&self, lease: &TaskLease, output: &ToolOutput) -> Result<bool, StoreError> {
        let (output_json, _, tag) = outcome(&lease.task_id, TaskState::Completed, Some(output), None, &self.key);
        let sql = format!(
            "UPDATE toolsmith_tasks SET state = 'completed', output_json = $4, error_json = NULL, outcome_tag = $5, \
             updated_at_ms = {NOW} WHERE {LEASED}"
        );
        let client = self.client(StorePart::Tasks).await?;
        let attempt = i64::from(lease.attempt);
        let done = client
            .execute(&sql, &[&lease.task_id, &lease.owner, &attempt, &output_json, &tag])
            .await;
        Ok(done.map_err(storage(StorePart::Tasks, "cannot record a task's output"))? == 1)
    }

    async fn suspend_task(&self, lease: &TaskLease) -> Result<bool, StoreError> {
        let sql = format!("DELETE FROM toolsmith_tasks WHERE {LEASED}");
        let client = self.client(StorePart::Tasks).await?;
        let attempt = i64::from(lease.attempt);
        let removed = client.execute(&sql, &[&lease.task_id, &lease.owner, &attempt]).await;
        Ok(removed.map_err(storage(StorePart::Tasks, "cannot take a suspended task out of the queue"))? == 1)
    }

    async fn fail_task(&self, lease: &TaskLease, error: &ToolError, retry: bool) -> Result<Option<TaskState>, StoreError> {
        const WHAT: &str = "cannot record a task's failure";
        let client = self.client(StorePart::Tasks).await?;
        let attempt = i64::from(lease.attempt);
        if retry {
            let requeue = format!(
                "UPDATE toolsmith_tasks SET state = 'queued', lease_owner = NULL, lease_expires_at_ms = NULL, \
                 updated_at_ms = {NOW} WHERE {LEASED} AND attempts <= max_retries"
            );
            let requeued = client.execute(&requeue, &[&lease.task_id, &lease.owner, &attempt]).await;
            if requeued.map_err(storage(StorePart::Tasks, WHAT))? == 1 {
                return Ok(Some(TaskState::Queued));
            }
        }
        let (_, error_json, tag) = outcome(&lease.task_id, TaskState::Failed, None, Some(error), &self.key);
        let fail = format!(
            "UPDATE toolsmith_tasks SET state = 'failed', output_json = NULL, error_json = $4, outcome_tag = $5, \
             updated_at_ms = {NOW} WHERE {LEASED}"
        );
        let failed = client
            .execute(&fail, &[&lease.task_id, &lease.owner, &attempt, &error_json, &tag])
            .await;
        Ok((failed.map_err(storage(StorePart::Tasks, WHAT))? == 1).then_some(TaskState::Failed))
    }

    async fn cancel_task(&self, task_id: &str) -> Result<bool, StoreError> {
        let (_, error_json, tag) = outcome(task_id, TaskState::Cancelled, None, Some(&cancelled_error()), &self.key);
        let sql = format!(
            "UPDATE toolsmith_tasks SET state = 'cancelled', output_json = NULL, error_json = $2, outcome_tag = $3, \
             updated_at_ms = {NOW} WHERE task_id = $1 AND state IN ('queued', 'running')"
        );
        let client = self.client(StorePart::Tasks).await?;
        let cancelled = client.execute(&sql, &[&task_id, &error_json, &tag]).await;
        Ok(cancelled.map_err(storage(StorePart::Tasks, "cannot cancel a task"))? == 1)
    }

    async fn get_task(&self, task_id: &str) -> Result<Option<TaskRecord>, StoreError> {
        let sql = format!("SELECT {TASK_COLUMNS} FROM toolsmith_tasks WHERE task_id = $1");
        let client = self.client(StorePart::Tasks).await?;
        let row = client
            .query_opt(&sql, &[&task_id])
            .await
            .map_err(storage(StorePart::Tasks, "cannot read a task"))?;
        let Some(row) = row else { return Ok(None) };
        let record = read(&row).record(&self.key).map_err(|reason| StoreError::Damaged {
            id: task_id.to_owned(),
            reason,
        })?;
        Ok(Some(record))
    }

    async fn list_tasks(&self, state: Option<TaskState>, limit: usize) -> Result<Vec<TaskRecord>, StoreError> {
        let limit = i64::try_from(limit).unwrap_or(i64::MAX);
        let client = self.client(StorePart::Tasks).await?;
        let order = "ORDER BY created_at_ms DESC, task_id DESC LIMIT";
        let rows = match state {
            Some(state) => {
                let sql = format!("SELECT {TASK_COLUMNS} FROM toolsmith_tasks WHERE state = $1 {order} $2");
                client.query(&sql, &[&state.as_str(), &limit]).await
            }
            None => {
                let sql = format!("SELECT {TASK_COLUMNS} FROM toolsmith_tasks {order} $1");
                client.query(&sql, &[&limit]).await
            }
        };
        let rows = rows.map_err(storage(StorePart::Tasks, "cannot list tasks"))?;
        Ok(rows.iter().filter_map(|r| read(r).listed(&self.key)).collect())
    }

    async fn expire_tasks(&self, before_ms: u64) -> Result<u64, StoreError> {
        let before = i64::try_from(before_ms).unwrap_or(i64::MAX);
        let client = self.client(StorePart::Tasks).await?;
        let delete = "DELETE FROM toolsmith_tasks WHERE state IN ('completed', 'failed', 'cancelled') AND updated_at_ms < $1";
        client
            .execute(delete, &[&before])
            .await
            .map_err(storage(StorePart::Tasks, "cannot expire tasks"))
    }
    async fn count_tasks(&self) -> Result<TaskCounts, StoreError> {
        let client = self.client(StorePart::Tasks).await?;
        let rows = client
            .query("SELECT state, count(*) FROM toolsmith_tasks GROUP BY state", &[])
            .await;
        let mut counts = TaskCounts::default();
        for row in rows.map_err(storage(StorePart::Tasks, "cannot count tasks"))? {
            let state: String = row.get(0);
            if let Some(state) = TaskState::parse(&state) {
                counts.add(state, u64::try_from(row.get::<_, i64>(1)).unwrap_or(0));
            }
        }
        Ok(counts)
    }
}
