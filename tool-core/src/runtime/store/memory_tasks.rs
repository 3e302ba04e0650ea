//! The task queue in memory ([`MemoryStore`]): nothing survives the process. Leases expire on
//! this process's clock, so tests can take a task over within one process.

use std::collections::BTreeMap;
use std::sync::MutexGuard;
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use super::tasks::{abandoned_error, cancelled_error};
use super::{ClaimedTask, MemoryStore, NewTask, StoreError, StorePart, TaskCounts, TaskLease, TaskRecord, TaskState, TaskStore};
use crate::error::ToolError;
use crate::tool::ToolOutput;

fn now_ms() -> u64 {
    let since_epoch = SystemTime::now().duration_since(UNIX_EPOCH).unwrap_or_default();
    u64::try_from(since_epoch.as_millis()).unwrap_or(u64::MAX)
}

fn millis(d: Duration) -> u64 {
    u64::try_from(d.as_millis()).unwrap_or(u64::MAX)
}

impl MemoryStore {
    fn task_rows(&self) -> MutexGuard<'_, BTreeMap<String, TaskRecord>> {
        self.tasks.lock().unwrap_or_else(|p| p.into_inner())
    }
}

/// The record of the lease's attempt, when it is still the current one.
fn leased<'a>(tasks: &'a mut BTreeMap<String, TaskRecord>, lease: &TaskLease) -> Option<&'a mut TaskRecord> {
    tasks
        .get_mut(&lease.task_id)
        .filter(|r| r.state == TaskState::Running && r.lease_owner.as_deref() == Some(lease.owner.as_str()) && r.attempts == lease.attempt)
}

/// Ends a task in `state` with how it ended.
fn end(record: &mut TaskRecord, state: TaskState, output: Option<ToolOutput>, error: Option<ToolError>) {
    record.state = state;
    record.output = output;
    record.error = error;
    record.updated_at_ms = now_ms();
}

#[async_trait::async_trait]
impl TaskStore for MemoryStore {
    async fn enqueue_task(&self, task: &NewTask) -> Result<(), StoreError> {
        let mut tasks = self.task_rows();
        if tasks.contains_key(&task.task_id) {
            return Err(StoreError::storage_of(
                StorePart::Tasks,
                format!("a task with the id `{}` is already stored", task.task_id),
            ));
        }
        let record = TaskRecord {
            task: task.clone(),
            state: TaskState::Queued,
            attempts: 0,
            lease_owner: None,
            lease_expires_at_ms: None,
            output: None,
            error: None,
            updated_at_ms: now_ms(),
        };
        tasks.insert(task.task_id.clone(), record);
        Ok(())
    }

    async fn enqueue_ended_task(&self, task: &NewTask, state: TaskState, error: &ToolError) -> Result<(), StoreError> {
        self.enqueue_task(task).await?;
        if let Some(record) = self.task_rows().get_mut(&task.task_id) {
            end(record, state, None, Some(error.clone()));
        }
        Ok(())
    }

    async fn claim_task(&self, owner: &str, lease: Duration) -> Result<Option<ClaimedTask>, StoreError> {
        let now = now_ms();
        let mut tasks = self.task_rows();
        let expired = |r: &TaskRecord| r.state == TaskState::Running && r.lease_expires_at_ms.is_none_or(|at| at < now);
        for record in tasks.values_mut() {
            if expired(record) && record.attempts > record.task.max_retries {
                let error = abandoned_error(&record.task.tool_name, record.attempts, record.task.max_retries);
                end(record, TaskState::Failed, None, Some(error));
            }
        }
        let next = tasks
            .values_mut()
            .filter(|r| r.state == TaskState::Queued || expired(r))
            .min_by_key(|r| (r.task.created_at_ms, r.task.task_id.clone()));
        let Some(record) = next else { return Ok(None) };
        record.state = TaskState::Running;
        record.attempts += 1;
        record.lease_owner = Some(owner.to_owned());
        record.lease_expires_at_ms = Some(now.saturating_add(millis(lease)));
        record.updated_at_ms = now;
        let lease = TaskLease {
            task_id: record.task.task_id.clone(),
            owner: owner.to_owned(),
            attempt: record.attempts,
        };
        Ok(Some(ClaimedTask {
            task: record.task.clone(),
            lease,
        }))
    }

    async fn renew_task(&self, lease: &TaskLease, lease_for: Duration) -> Result<bool, StoreError> {
        let mut tasks = self.task_rows();
        let Some(record) = leased(&mut tasks, lease) else {
            return Ok(false);
        };
        record.lease_expires_at_ms = Some(now_ms().saturating_add(millis(lease_for)));
        Ok(true)
    }

    async fn complete_task(&self, lease: &TaskLease, output: &ToolOutput) -> Result<bool, StoreError> {
        let mut tasks = self.task_rows();
        let Some(record) = leased(&mut tasks, lease) else {
            return Ok(false);
        };
        end(record, TaskState::Completed, Some(output.clone()), None);
        Ok(true)
    }

    async fn fail_task(&self, lease: &TaskLease, error: &ToolError, retry: bool) -> Result<Option<TaskState>, StoreError> {
        let mut tasks = self.task_rows();
        let Some(record) = leased(&mut tasks, lease) else { return Ok(None) };
        if retry && record.attempts <= record.task.max_retries {
            record.state = TaskState::Queued;
            record.lease_owner = None;
            record.lease_expires_at_ms = None;
            record.updated_at_ms = now_ms();
        } else {
            end(record, TaskState::Failed, None, Some(error.clone()));
        }
        Ok(Some(record.state))
    }

    async fn suspend_task(&self, lease: &TaskLease) -> Result<bool, StoreError> {
        let mut tasks = self.task_rows();
        if leased(&mut tasks, lease).is_none() {
            return Ok(false);
        }
        Ok(tasks.remove(&lease.task_id).is_some())
    }

    async fn cancel_task(&self, task_id: &str) -> Result<bool, StoreError> {
        let mut tasks = self.task_rows();
        let Some(record) = tasks.get_mut(task_id).filter(|r| !r.state.is_final()) else {
            return Ok(false);
        };
        end(record, TaskState::Cancelled, None, Some(cancelled_error()));
        Ok(true)
    }

    async fn get_task(&self, task_id: &str) -> Result<Option<TaskRecord>, StoreError> {
        Ok(self.task_rows().get(task_id).cloned())
    }

    async fn list_tasks(&self, state: Option<TaskState>, limit: usize) -> Result<Vec<TaskRecord>, StoreError> {
        let tasks = self.task_rows();
        let mut listed: Vec<TaskRecord> = tasks.values().filter(|r| state.is_none_or(|s| r.state == s)).cloned().collect();
        listed.sort_by(|a, b| (b.task.created_at_ms, &b.task.task_id).cmp(&(a.task.created_at_ms, &a.task.task_id)));
        listed.truncate(limit);
        Ok(listed)
    }

    async fn expire_tasks(&self, before_ms: u64) -> Result<u64, StoreError> {
        let mut tasks = self.task_rows();
        let before = tasks.len();
        tasks.retain(|_, t| !(t.state.is_final() && t.updated_at_ms < before_ms));
        Ok((before - tasks.len()) as u64)
    }
    async fn count_tasks(&self) -> Result<TaskCounts, StoreError> {
        let mut counts = TaskCounts::default();
        for record in self.task_rows().values() {
            counts.add(record.state, 1);
        }
        Ok(counts)
    }
}
