//! The SQLite task queue ([`SqliteStore`] as a [`TaskStore`]): the `tasks` table of the store
//! file (schema version 4). A claim is one `UPDATE … WHERE task_id = (SELECT … LIMIT 1)
//! RETURNING` inside an immediate transaction, so SQLite's writer lock makes it exclusive across
//! every process on the file; leases run on the host's clock (a SQLite file has one host).

use std::time::Duration;

use rusqlite::TransactionBehavior::Immediate;
use rusqlite::types::Value as Sql;
use rusqlite::{Connection, OptionalExtension, params};

use super::{Db, OrStorage, SqliteStore, now_ms};
use crate::error::ToolError;
use crate::runtime::store::tasks::row::{TASK_COLUMNS, TaskRow, encode, outcome};
use crate::runtime::store::tasks::{abandoned_error, cancelled_error, damaged_error};
use crate::runtime::store::{ClaimedTask, NewTask, StoreError, StorePart, TaskCounts, TaskLease, TaskRecord, TaskState, TaskStore};
use crate::tool::ToolOutput;

/// The table of schema version 4.
pub(super) const SCHEMA_V4: &str = "CREATE TABLE IF NOT EXISTS tasks (
    task_id TEXT PRIMARY KEY NOT NULL, tool_name TEXT, task_json TEXT, created_at_ms INTEGER, task_tag BLOB,
    max_retries INTEGER NOT NULL DEFAULT 0, state TEXT NOT NULL, attempts INTEGER NOT NULL DEFAULT 0,
    lease_owner TEXT, lease_expires_at_ms INTEGER, output_json TEXT, error_json TEXT, outcome_tag BLOB, updated_at_ms INTEGER);
CREATE INDEX IF NOT EXISTS tasks_claimable ON tasks (created_at_ms, task_id) WHERE state IN ('queued', 'running');
CREATE INDEX IF NOT EXISTS tasks_by_state ON tasks (state, created_at_ms);";

/// The condition of a write by the current lease: `?1` id, `?2` owner, `?3` attempt.
const LEASED: &str = "task_id = ?1 AND state = 'running' AND lease_owner = ?2 AND attempts = ?3";

fn millis(d: Duration) -> i64 {
    i64::try_from(d.as_millis()).unwrap_or(i64::MAX)
}

/// Reads a row selected with [`TASK_COLUMNS`]; never fails on what the columns hold.
fn read(r: &rusqlite::Row<'_>) -> rusqlite::Result<TaskRow> {
    let value = |i: usize| r.get::<_, Sql>(i);
    let text = |v: Sql| match v {
        Sql::Text(t) => Some(t),
        _ => None,
    };
    let int = |v: Sql| match v {
        Sql::Integer(i) => Some(i),
        _ => None,
    };
    let blob = |v: Sql| match v {
        Sql::Blob(b) => Some(b),
        _ => None,
    };
    Ok(TaskRow {
        task_id: text(value(0)?).unwrap_or_else(|| "<unreadable id>".to_owned()),
        tool_name: text(value(1)?),
        task_json: text(value(2)?),
        created_at_ms: int(value(3)?),
        task_tag: blob(value(4)?),
        max_retries: int(value(5)?),
        state: text(value(6)?),
        attempts: int(value(7)?),
        lease_owner: text(value(8)?),
        lease_expires_at_ms: int(value(9)?),
        output_json: text(value(10)?),
        error_json: text(value(11)?),
        outcome_tag: blob(value(12)?),
        updated_at_ms: int(value(13)?),
    })
}

/// Ends a task as failed with `error`, if the condition (after `task_id = ?1`) holds.
fn end_failed(conn: &Connection, db: &Db, id: &str, error: &ToolError, lease: Option<&TaskLease>) -> rusqlite::Result<usize> {
    let (_, error_json, tag) = outcome(id, TaskState::Failed, None, Some(error), &db.key);
    let now = now_ms();
    match lease {
        Some(l) => conn.execute(
            &format!("UPDATE tasks SET state = 'failed', output_json = NULL, error_json = ?4, outcome_tag = ?5, updated_at_ms = ?6 WHERE {LEASED}"),
            params![id, l.owner, l.attempt, error_json, tag, now],
        ),
        None => conn.execute(
            "UPDATE tasks SET state = 'failed', output_json = NULL, error_json = ?2, outcome_tag = ?3, updated_at_ms = ?4 WHERE task_id = ?1",
            params![id, error_json, tag, now],
        ),
    }
}

impl Db {
    fn enqueue_task(&self, task: &NewTask) -> Result<(), StoreError> {
        let (json, tag) = encode(task, &self.key).map_err(|e| StoreError::storage_of(StorePart::Tasks, e))?;
        let created = i64::try_from(task.created_at_ms).unwrap_or(i64::MAX);
        let insert = "INSERT INTO tasks (task_id, tool_name, task_json, created_at_ms, task_tag, max_retries, state, attempts, updated_at_ms) \
                      VALUES (?1, ?2, ?3, ?4, ?5, ?6, 'queued', 0, ?7)";
        let values = params![task.task_id, task.tool_name, json, created, tag, task.max_retries, now_ms()];
        match self.conn().execute(insert, values) {
            Ok(_) => Ok(()),
            Err(rusqlite::Error::SqliteFailure(e, _)) if e.extended_code == rusqlite::ffi::SQLITE_CONSTRAINT_PRIMARYKEY => Err(
                StoreError::storage_of(StorePart::Tasks, format!("a task with the id `{}` is already stored", task.task_id)),
            ),
            Err(e) => Err(StoreError::storage_of(StorePart::Tasks, format!("cannot enqueue a task: {e}"))),
        }
    }

    fn enqueue_ended_task(&self, task: &NewTask, state: TaskState, error: &ToolError) -> Result<(), StoreError> {
        let (json, tag) = encode(task, &self.key).map_err(|e| StoreError::storage_of(StorePart::Tasks, e))?;
        let (_, error_json, outcome_tag) = outcome(&task.task_id, state, None, Some(error), &self.key);
        let created = i64::try_from(task.created_at_ms).unwrap_or(i64::MAX);
        let insert = "INSERT INTO tasks (task_id, tool_name, task_json, created_at_ms, task_tag, max_retries, state, attempts, \
                      error_json, outcome_tag, updated_at_ms) VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, 0, ?8, ?9, ?10)";
        let values = params![
            task.task_id,
            task.tool_name,
            json,
            created,
            tag,
            task.max_retries,
            state.as_str(),
            error_json,
            outcome_tag,
            now_ms()
        ];
        match self.conn().execute(insert, values) {
            Ok(_) => Ok(()),
            Err(rusqlite::Error::SqliteFailure(e, _)) if e.extended_code == rusqlite::ffi::SQLITE_CONSTRAINT_PRIMARYKEY => Err(
                StoreError::storage_of(StorePart::Tasks, format!("a task with the id `{}` is already stored", task.task_id)),
            ),
            Err(e) => Err(StoreError::storage_of(
                StorePart::Tasks,
                format!("cannot record an ended task: {e}"),
            )),
        }
    }

    fn claim_task(&self, owner: &str, lease: Duration) -> Result<Option<ClaimedTask>, StoreError> {
        const FAILED: &str = "cannot claim a task";
        let mut conn = self.conn();
        let tx = conn.transaction_with_behavior(Immediate).or_storage(StorePart::Tasks, FAILED)?;
        let now = now_ms();
        // Expired leases whose owner process still lives (cut off from the file: a full disk, a
        // read-only mount) are left to it; see `TaskStore::owner_prefix`.
        let expired: Vec<Expired> = {
            let select = "SELECT task_id, tool_name, attempts, max_retries, lease_owner FROM tasks \
                          WHERE state = 'running' AND lease_expires_at_ms < ?1";
            let mut stmt = tx.prepare(select).or_storage(StorePart::Tasks, FAILED)?;
            let rows = stmt.query_map([now], |r| Ok((r.get(0)?, r.get(1).ok(), r.get(2)?, r.get(3)?, r.get(4).ok())));
            rows.and_then(Iterator::collect).or_storage(StorePart::Tasks, FAILED)?
        };
        let (alive, gone): (Vec<_>, Vec<_>) = expired.into_iter().partition(|t| t.4.as_deref().is_some_and(owner_lives));
        let alive: Vec<String> = alive.into_iter().map(|t| t.0).collect();
        let abandoned = gone.into_iter().filter(|t| t.2 > t.3);
        for (id, tool, attempts, max_retries, _) in abandoned {
            let count = |n: i64| u32::try_from(n).unwrap_or(u32::MAX);
            let error = abandoned_error(tool.as_deref().unwrap_or("?"), count(attempts), count(max_retries));
            end_failed(&tx, self, &id, &error, None).or_storage(StorePart::Tasks, FAILED)?;
            tracing::warn!(task_id = %id, "a background task's process stopped renewing its lease and no retries are left; it failed");
        }
        let claim = format!(
            "UPDATE tasks SET state = 'running', attempts = attempts + 1, lease_owner = ?1, lease_expires_at_ms = ?2 + ?3, updated_at_ms = ?2 \
             WHERE task_id = (SELECT task_id FROM tasks \
                 WHERE (state = 'queued' OR (state = 'running' AND lease_expires_at_ms < ?2)) AND attempts <= max_retries \
                 AND task_id NOT IN (SELECT value FROM json_each(?4)) \
                 ORDER BY created_at_ms, task_id LIMIT 1) \
             RETURNING {TASK_COLUMNS}"
        );
        let alive_json = serde_json::to_string(&alive).unwrap_or_else(|_| "[]".into());
        let mut claimed = None;
        // A damaged row is ended (never run) and the next one claimed.
        for _ in 0..8 {
            let row = tx
                .query_row(&claim, params![owner, now, millis(lease), alive_json], read)
                .optional();
            let Some(row) = row.or_storage(StorePart::Tasks, FAILED)? else {
                break;
            };
            let lease = row.lease(owner);
            match row.task(&self.key) {
                Ok(task) => {
                    claimed = Some(ClaimedTask { task, lease });
                    break;
                }
                Err(reason) => {
                    tracing::warn!(task_id = %lease.task_id, %reason, "a stored background task is damaged; it was not run");
                    end_failed(&tx, self, &lease.task_id, &damaged_error(&reason), Some(&lease)).or_storage(StorePart::Tasks, FAILED)?;
                }
            }
        }
        tx.commit().or_storage(StorePart::Tasks, FAILED)?;
        Ok(claimed)
    }

    fn renew_task(&self, lease: &TaskLease, lease_for: Duration) -> Result<bool, StoreError> {
        let sql = format!("UPDATE tasks SET lease_expires_at_ms = ?4 WHERE {LEASED}");
        let until = now_ms().saturating_add(millis(lease_for));
        let renewed = self.conn().execute(&sql, params![lease.task_id, lease.owner, lease.attempt, until]);
        Ok(renewed.or_storage(StorePart::Tasks, "cannot renew a task's lease")? == 1)
    }

    fn complete_task(&self, lease: &TaskLease, output: &ToolOutput) -> Result<bool, StoreError> {
        let (output_json, _, tag) = outcome(&lease.task_id, TaskState::Completed, Some(output), None, &self.key);
        let sql = format!(
            "UPDATE tasks SET state = 'completed', output_json = ?4, error_json = NULL, outcome_tag = ?5, updated_at_ms = ?6 WHERE {LEASED}"
        );
        let values = params![lease.task_id, lease.owner, lease.attempt, output_json, tag, now_ms()];
        Ok(self
            .conn()
            .execute(&sql, values)
            .or_storage(StorePart::Tasks, "cannot record a task's output")?
            == 1)
    }

    fn fail_task(&self, lease: &TaskLease, error: &ToolError, retry: bool) -> Result<Option<TaskState>, StoreError> {
        const FAILED: &str = "cannot record a task's failure";
        let conn = self.conn();
        if retry {
            let requeue = format!(
                "UPDATE tasks SET state = 'queued', lease_owner = NULL, lease_expires_at_ms = NULL, updated_at_ms = ?4 \
                 WHERE {LEASED} AND attempts <= max_retries"
            );
            let requeued = conn.execute(&requeue, params![lease.task_id, lease.owner, lease.attempt, now_ms()]);
            if requeued.or_storage(StorePart::Tasks, FAILED)? == 1 {
                return Ok(Some(TaskState::Queued));
            }
        }
        let failed = end_failed(&conn, self, &lease.task_id, error, Some(lease)).or_storage(StorePart::Tasks, FAILED)?;
        Ok((failed == 1).then_some(TaskState::Failed))
    }

    fn suspend_task(&self, lease: &TaskLease) -> Result<bool, StoreError> {
        let sql = format!("DELETE FROM tasks WHERE {LEASED}");
        let removed = self.conn().execute(&sql, params![lease.task_id, lease.owner, lease.attempt]);
        Ok(removed.or_storage(StorePart::Tasks, "cannot take a suspended task out of the queue")? == 1)
    }

    fn cancel_task(&self, task_id: &str) -> Result<bool, StoreError> {
        let (_, error_json, tag) = outcome(task_id, TaskState::Cancelled, None, Some(&cancelled_error()), &self.key);
        let sql = "UPDATE tasks SET state = 'cancelled', output_json = NULL, error_json = ?2, outcome_tag = ?3, updated_at_ms = ?4 \
                   WHERE task_id = ?1 AND state IN ('queued', 'running')";
        let cancelled = self.conn().execute(sql, params![task_id, error_json, tag, now_ms()]);
        Ok(cancelled.or_storage(StorePart::Tasks, "cannot cancel a task")? == 1)
    }

    fn get_task(&self, task_id: &str) -> Result<Option<TaskRecord>, StoreError> {
        let sql = format!("SELECT {TASK_COLUMNS} FROM tasks WHERE task_id = ?1");
        let row = self.conn().query_row(&sql, [task_id], read).optional();
        let Some(row) = row.or_storage(StorePart::Tasks, "cannot read a task")? else {
            return Ok(None);
        };
        let record = row.record(&self.key).map_err(|reason| StoreError::Damaged {
            id: task_id.to_owned(),
            reason,
        })?;
        Ok(Some(record))
    }

    fn list_tasks(&self, state: Option<TaskState>, limit: usize) -> Result<Vec<TaskRecord>, StoreError> {
        const FAILED: &str = "cannot list tasks";
        let limit = i64::try_from(limit).unwrap_or(i64::MAX);
        let conn = self.conn();
        let filter = if state.is_some() { "WHERE state = ?2" } else { "WHERE ?2 IS NULL" };
        let sql = format!("SELECT {TASK_COLUMNS} FROM tasks {filter} ORDER BY created_at_ms DESC, task_id DESC LIMIT ?1");
        let mut stmt = conn.prepare(&sql).or_storage(StorePart::Tasks, FAILED)?;
        let rows = stmt.query_map(params![limit, state.map(TaskState::as_str)], read);
        let rows: Vec<TaskRow> = rows.and_then(Iterator::collect).or_storage(StorePart::Tasks, FAILED)?;
        Ok(rows.iter().filter_map(|r| r.listed(&self.key)).collect())
    }

    fn count_tasks(&self) -> Result<TaskCounts, StoreError> {
        const FAILED: &str = "cannot count tasks";
        let conn = self.conn();
        let mut stmt = conn
            .prepare("SELECT state, count(*) FROM tasks GROUP BY state")
            .or_storage(StorePart::Tasks, FAILED)?;
        let rows = stmt.query_map([], |r| Ok((r.get::<_, String>(0)?, r.get::<_, i64>(1)?)));
        let rows: Vec<(String, i64)> = rows.and_then(Iterator::collect).or_storage(StorePart::Tasks, FAILED)?;
        let mut counts = TaskCounts::default();
        for (state, n) in rows {
            if let Some(state) = TaskState::parse(&state) {
                counts.add(state, u64::try_from(n).unwrap_or(0));
            }
        }
        Ok(counts)
    }
}

/// A running task whose lease ran out: its id, tool, attempts, retries and lease owner.
type Expired = (String, Option<String>, i64, i64, Option<String>);

/// This process as a task lease's owner names it: `pid<PID>@<START>` (its start time tells it
/// from a later process given the same pid).
fn this_process() -> Option<String> {
    let pid = std::process::id();
    let (_, start) = super::owner::process_stat(pid)?;
    Some(format!("pid{pid}@{start}"))
}

/// Whether the process named by a lease owner (`pid<PID>@<START>/random`) is alive. An owner
/// in another form (an older build's, or a store without liveness) is taken for gone.
fn owner_lives(owner: &str) -> bool {
    let Some((prefix, _)) = owner.split_once('/') else { return false };
    let Some((pid, start)) = prefix.strip_prefix("pid").and_then(|p| p.split_once('@')) else {
        return false;
    };
    let Ok(pid) = pid.parse::<i64>() else { return false };
    super::owner::owner_alive(Some(pid), Some(start))
}

#[async_trait::async_trait]
impl TaskStore for SqliteStore {
    fn owner_prefix(&self) -> Option<String> {
        this_process()
    }

    async fn enqueue_task(&self, task: &NewTask) -> Result<(), StoreError> {
        let task = task.clone();
        self.blocking(move |db| db.enqueue_task(&task)).await
    }
    async fn enqueue_ended_task(&self, task: &NewTask, state: TaskState, error: &ToolError) -> Result<(), StoreError> {
        let (task, error) = (task.clone(), error.clone());
        self.blocking(move |db| db.enqueue_ended_task(&task, state, &error)).await
    }
    async fn claim_task(&self, owner: &str, lease: Duration) -> Result<Option<ClaimedTask>, StoreError> {
        let owner = owner.to_owned();
        self.blocking(move |db| db.claim_task(&owner, lease)).await
    }
    async fn renew_task(&self, lease: &TaskLease, lease_for: Duration) -> Result<bool, StoreError> {
        let lease = lease.clone();
        self.blocking(move |db| db.renew_task(&lease, lease_for)).await
    }
    async fn complete_task(&self, lease: &TaskLease, output: &ToolOutput) -> Result<bool, StoreError> {
        let (lease, output) = (lease.clone(), output.clone());
        self.blocking(move |db| db.complete_task(&lease, &output)).await
    }
    async fn fail_task(&self, lease: &TaskLease, error: &ToolError, retry: bool) -> Result<Option<TaskState>, StoreError> {
        let (lease, error) = (lease.clone(), error.clone());
        self.blocking(move |db| db.fail_task(&lease, &error, retry)).await
    }
    async fn suspend_task(&self, lease: &TaskLease) -> Result<bool, StoreError> {
        let lease = lease.clone();
        self.blocking(move |db| db.suspend_task(&lease)).await
    }
    async fn cancel_task(&self, task_id: &str) -> Result<bool, StoreError> {
        let id = task_id.to_owned();
        self.blocking(move |db| db.cancel_task(&id)).await
    }
    async fn get_task(&self, task_id: &str) -> Result<Option<TaskRecord>, StoreError> {
        let id = task_id.to_owned();
        self.blocking(move |db| db.get_task(&id)).await
    }
    async fn list_tasks(&self, state: Option<TaskState>, limit: usize) -> Result<Vec<TaskRecord>, StoreError> {
        self.blocking(move |db| db.list_tasks(state, limit)).await
    }
    async fn count_tasks(&self) -> Result<TaskCounts, StoreError> {
        self.blocking(Db::count_tasks).await
    }
    async fn expire_tasks(&self, before_ms: u64) -> Result<u64, StoreError> {
        let before = i64::try_from(before_ms).unwrap_or(i64::MAX);
        self.blocking(move |db| {
            let delete = "DELETE FROM tasks WHERE state IN ('completed', 'failed', 'cancelled') AND updated_at_ms < ?1";
            let removed = db.conn().execute(delete, [before]);
            removed.or_storage(StorePart::Tasks, "cannot expire tasks").map(|n| n as u64)
        })
        .await
    }
}
