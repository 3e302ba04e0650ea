//! `toolsmith tasks`: the durable background tasks of the store — `list` them, `get` one (its
//! state, attempts, lease, and its result or error, from any host), `cancel` one — and the
//! task options of `serve`.

use std::io::Write;
use std::process::ExitCode;
use std::sync::Arc;
use std::time::Duration;

use clap::Subcommand;
use serde_json::{Value, json};

use super::{CliError, pretty};
use crate::runtime::{Actor, OpenedStore, PostgresOptions, PostgresStore, StoreLocation, TaskOptions, TaskRecord, TaskState, open_stores};

/// The subcommands of `tasks`.
#[derive(Debug, Subcommand)]
pub enum TasksCommand {
    /// List background tasks, newest first: id, state, attempts, tool, lease owner.
    List {
        /// Only tasks in this state.
        #[arg(long, value_parser = ["queued", "running", "completed", "failed", "cancelled"])]
        state: Option<String>,
        /// At most this many.
        #[arg(long, default_value_t = 100)]
        limit: usize,
        /// Print JSON instead of a table.
        #[arg(long)]
        json: bool,
    },
    /// Show one task: its state, attempts, lease, and its result or error.
    Get {
        /// The task id (`task_…`, from the placeholder result).
        id: String,
        /// Print JSON instead of text.
        #[arg(long)]
        json: bool,
    },
    /// Cancel a queued or running task (the instance running it stops at its next renewal).
    Cancel {
        /// The task id.
        id: String,
    },
}

/// The options of `serve` for background tasks (flattened into its arguments).
#[derive(Debug, Clone, clap::Args)]
#[command(next_help_heading = "Background tasks")]
pub(super) struct TaskArgs {
    /// Seconds a claimed background task stays this instance's without renewal.
    ///
    /// Renewed every third of it; a task whose instance died is taken over by another this long
    /// after. Background tasks are durable when `--store` is given.
    #[arg(long, value_name = "SECONDS", default_value_t = 30.0, value_parser = super::serve::seconds)]
    task_lease: f64,
    /// PostgreSQL: seconds this instance's lease outlives its last heartbeat.
    ///
    /// Renewed every third of it: a call or receipt a dead instance was running shows as
    /// interrupted this long after it died.
    #[arg(long, value_name = "SECONDS", default_value_t = 30.0, value_parser = super::serve::seconds)]
    instance_lease: f64,
}

impl TaskArgs {
    /// The runtime's task options.
    pub(super) fn options(&self) -> TaskOptions {
        TaskOptions::default().lease(Duration::from_secs_f64(self.task_lease))
    }

    /// Opens the store of a `serve` instance at `location` (`--instance-lease` applied to a
    /// PostgreSQL store).
    pub(super) async fn open_instance(&self, location: &StoreLocation) -> Result<OpenedStore, CliError> {
        let failed = |source| CliError::StoreAt {
            flag: super::store_flag(location),
            source,
        };
        match location {
            StoreLocation::Postgres(url) => {
                let options = PostgresOptions::default().lease(Duration::from_secs_f64(self.instance_lease));
                let store = Arc::new(PostgresStore::connect_with(url, options).await.map_err(failed)?);
                Ok(OpenedStore {
                    pending: store.clone(),
                    tasks: store,
                })
            }
            StoreLocation::Sqlite(_) => open_stores(location).await.map_err(failed),
        }
    }
}

/// Runs a `tasks` subcommand against `--store` (the default SQLite file when absent); a
/// cancellation is recorded in the store's audit trail as the operator's.
pub(super) async fn run(command: TasksCommand, location: Option<&StoreLocation>, out: &mut dyn Write) -> Result<ExitCode, CliError> {
    let opened = super::store::open(location).await?;
    let store = &opened.tasks;
    match command {
        TasksCommand::List { state, limit, json } => {
            let state = state.as_deref().and_then(TaskState::parse);
            let tasks = store.list_tasks(state, limit).await?;
            if json {
                let list: Vec<Value> = tasks.iter().map(task_json).collect();
                return writeln!(out, "{}", pretty(&Value::Array(list)))
                    .map_err(CliError::Output)
                    .map(|()| ExitCode::SUCCESS);
            }
            writeln!(out, "{:28}  {:9}  {:8}  {:20}  LEASE OWNER", "TASK ID", "STATE", "ATTEMPTS", "TOOL").map_err(CliError::Output)?;
            for t in &tasks {
                let attempts = format!("{}/{}", t.attempts, t.task.max_retries + 1);
                let owner = t.lease_owner.as_deref().unwrap_or("-");
                let (id, state, tool) = (&t.task.task_id, t.state.as_str(), &t.task.tool_name);
                writeln!(out, "{id:28}  {state:9}  {attempts:8}  {tool:20}  {owner}").map_err(CliError::Output)?;
            }
        }
        TasksCommand::Get { id, json } => {
            let Some(task) = store.get_task(&id).await? else {
                return Err(CliError::NotFound(format!("no background task has the id `{id}`")));
            };
            if json {
                writeln!(out, "{}", pretty(&task_json(&task))).map_err(CliError::Output)?;
            } else {
                describe(&task, out)?;
            }
        }
        TasksCommand::Cancel { id } => {
            if !store.cancel_task(&id).await? {
                return Err(CliError::NotFound(format!(
                    "no queued or running background task has the id `{id}`"
                )));
            }
            if let Some(audit) = opened.pending.audit() {
                crate::runtime::task_cancelled(&*audit, &**store, &id, Actor::Operator).await;
            }
            writeln!(out, "cancelled {id}").map_err(CliError::Output)?;
        }
    }
    Ok(ExitCode::SUCCESS)
}

/// A task as text.
fn describe(t: &TaskRecord, out: &mut dyn Write) -> Result<(), CliError> {
    let call = t.task.data.tool_call_id.as_deref().unwrap_or("-");
    let lines = [
        format!("task      {}", t.task.task_id),
        format!("tool      {} (call {call})", t.task.tool_name),
        format!("state     {}", t.state),
        format!("attempts  {} of at most {}", t.attempts, t.task.max_retries + 1),
        format!("lease     {}", t.lease_owner.as_deref().unwrap_or("-")),
    ];
    for line in lines {
        writeln!(out, "{line}").map_err(CliError::Output)?;
    }
    if let Some(output) = &t.output {
        writeln!(out, "result    {}", output.value()).map_err(CliError::Output)?;
    }
    if let Some(error) = &t.error {
        writeln!(out, "error     {}", error.message()).map_err(CliError::Output)?;
    }
    Ok(())
}

/// A task as JSON: its arguments and request context redacted (they may hold credentials).
pub(super) fn task_json(t: &TaskRecord) -> Value {
    json!({
        "task_id": t.task.task_id,
        "tool": t.task.tool_name,
        "tool_call_id": t.task.data.tool_call_id,
        "args": crate::call::redact(&t.task.args),
        "context": crate::call::redact(t.task.data.context.as_ref().unwrap_or(&Value::Null)),
        "state": t.state.as_str(),
        "attempts": t.attempts,
        "max_retries": t.task.max_retries,
        "lease_owner": t.lease_owner,
        "lease_expires_at_ms": t.lease_expires_at_ms,
        "created_at_ms": t.task.created_at_ms,
        "updated_at_ms": t.updated_at_ms,
        "output": t.output,
        "error": t.error,
    })
}
