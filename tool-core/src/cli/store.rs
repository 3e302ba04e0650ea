//! `toolsmith store`: operating the store itself — `migrate` its schema, `status` (calls,
//! background tasks and receipts by state, the oldest waiting call, the kept results), `expire`;
//! and where the global options put the store and the pins (`GlobalArgs::store_location`,
//! `pin_location`, `pin_store`).

use std::io::Write;
use std::process::ExitCode;

use clap::Subcommand;
use serde_json::json;

use super::{CliError, pretty};
use crate::runtime::{
    Actor, OpenedStore, PostgresOptions, PostgresStore, ReceiptCounts, ResultLimits, SqliteStore, StoreLocation, StoreStatus, TaskCounts,
    expire_stores, open_stores,
};

/// The subcommands of `store`.
#[derive(Debug, Subcommand)]
pub enum StoreCommand {
    /// Apply the schema migrations the store lacks.
    ///
    /// Apply the schema migrations the store lacks (a re-run changes nothing; a database
    /// whose schema is newer than this build is refused). A SQLite file is migrated whenever
    /// it is opened; PostgreSQL on each instance's start too, so this is for migrating ahead
    /// of a rollout.
    Migrate,
    /// Count what the store holds, by state.
    ///
    /// Count the stored calls by state (waiting, running, interrupted, damaged), show the
    /// oldest waiting call, count the background tasks and the receipts of idempotent calls by
    /// state, and the full results of cut calls kept for their callers.
    Status {
        /// Print JSON instead of text.
        #[arg(long)]
        json: bool,
    },
    /// Remove what is older than a retention, without running it.
    ///
    /// Expire what is older than a retention: waiting and interrupted calls created before
    /// it (removed without running), background tasks that ended before it (with their
    /// results), receipts of idempotent calls recorded before it, kept results past their time
    /// to live or kept before it, audit rows made before it, and bus messages nobody took
    /// (each expired call is then recorded in the audit trail as expired by the operator).
    /// Calls being run, queued or running tasks, and running or interrupted receipts are kept.
    /// `serve --retention` does this periodically.
    Expire {
        /// The retention: `7d`, `12h`, `30m`, `90s`, `500ms`.
        #[arg(long, value_name = "DURATION", value_parser = crate::runtime::parse_retention)]
        older_than: std::time::Duration,
        /// Print JSON instead of text.
        #[arg(long)]
        json: bool,
    },
}

/// Runs a `store` subcommand against `--store` (the default SQLite file when absent).
pub(super) async fn run(command: StoreCommand, location: Option<&StoreLocation>, out: &mut dyn Write) -> Result<ExitCode, CliError> {
    let shown = location.map_or_else(|| "the default store".to_owned(), StoreLocation::shown);
    let flag = location.map_or_else(|| "the default store".to_owned(), super::store_flag);
    let failed = |source| CliError::StoreAt {
        flag: flag.clone(),
        source,
    };
    match command {
        StoreCommand::Migrate => {
            if let Some(StoreLocation::Postgres(url)) = location {
                let done = PostgresStore::migrate(url, &PostgresOptions::default()).await;
                let done = done.map_err(failed)?;
                let what = if done.from == done.to {
                    format!("{shown}: the schema is at version {}; nothing to do", done.to)
                } else {
                    format!("{shown}: migrated the schema from version {} to {}", done.from, done.to)
                };
                writeln!(out, "{what}").map_err(CliError::Output)?;
            } else {
                open(location).await?;
                writeln!(out, "{shown}: the schema is current (a SQLite file is migrated when opened)").map_err(CliError::Output)?;
            }
        }
        StoreCommand::Status { json } => {
            let store = open(location).await?;
            let entries = store.pending.entries().await.map_err(failed)?;
            let tasks = store.tasks.count_tasks().await.map_err(failed)?;
            let kept = counts(&store).await.map_err(failed)?;
            status((&StoreStatus::of(&entries), &tasks), kept, json, out)?;
        }
        StoreCommand::Expire { older_than, json } => {
            let store = open(location).await?;
            let (receipts, audit) = (store.pending.receipts(), store.pending.audit());
            let kinds = (Some(&*store.tasks), receipts.as_deref());
            let audit = audit.as_deref().map(|a| (a, &Actor::Operator));
            let expired = expire_stores(&*store.pending, kinds, audit, older_than).await.map_err(failed)?;
            let (tasks, receipts, results, audit) = (expired.tasks, expired.receipts, expired.results, expired.audit);
            let expired = expired.calls;
            if json {
                let calls: Vec<_> = expired
                    .iter()
                    .map(|c| json!({"id": c.tool_call_id, "tool": c.tool_name, "waited_for": c.kind.waits_for(), "created_at_ms": c.created_at_ms}))
                    .collect();
                let value = json!({"expired": calls, "tasks": tasks, "receipts": receipts, "results": results, "audit": audit});
                writeln!(out, "{value}").map_err(CliError::Output)?;
            } else {
                for c in &expired {
                    writeln!(
                        out,
                        "expired {} ({}, waited for {}; not run)",
                        c.tool_call_id,
                        c.tool_name,
                        c.kind.waits_for()
                    )
                    .map_err(CliError::Output)?;
                }
                writeln!(
                    out,
                    "{shown}: expired {} call(s), {tasks} ended task(s), {receipts} receipt(s), {results} kept result(s), {audit} audit row(s)",
                    expired.len()
                )
                .map_err(CliError::Output)?;
            }
        }
    }
    Ok(ExitCode::SUCCESS)
}

/// Opens the store (the default SQLite file when no location is given).
pub(super) async fn open(location: Option<&StoreLocation>) -> Result<OpenedStore, CliError> {
    match location {
        Some(location) => open_stores(location).await.map_err(|source| CliError::StoreAt {
            flag: super::store_flag(location),
            source,
        }),
        None => {
            let opened = tokio::task::spawn_blocking(SqliteStore::open_default).await?;
            let store = std::sync::Arc::new(opened.map_err(CliError::DefaultStore)?);
            Ok(OpenedStore {
                pending: store.clone(),
                tasks: store,
            })
        }
    }
}

/// The receipts by state and the kept results (not expired) of a store; zero for a store that
/// keeps neither.
async fn counts(store: &OpenedStore) -> Result<(ReceiptCounts, u64), crate::runtime::StoreError> {
    let receipts = match store.pending.receipts() {
        Some(receipts) => ReceiptCounts::of(&receipts.list().await?),
        None => ReceiptCounts::default(),
    };
    let results = match store.pending.results(ResultLimits::default()) {
        Some(results) => results.count().await?,
        None => 0,
    };
    Ok((receipts, results))
}

/// Prints a store's status: its calls, background tasks and receipts by state, and its kept
/// results.
fn status(
    (status, tasks): (&StoreStatus, &TaskCounts),
    (receipts, results): (ReceiptCounts, u64),
    json: bool,
    out: &mut dyn Write,
) -> Result<(), CliError> {
    let oldest = status.oldest_waiting.as_ref();
    if json {
        let oldest = oldest.map(
            |c| json!({"tool_call_id": c.tool_call_id, "tool": c.tool_name, "kind": c.kind.as_str(), "created_at_ms": c.created_at_ms}),
        );
        let value = json!({
            "waiting": status.waiting,
            "running": status.running,
            "interrupted": status.interrupted,
            "damaged": status.damaged,
            "oldest_waiting": oldest,
            "tasks": tasks,
            "receipts": receipts,
            "kept_results": results,
        });
        return writeln!(out, "{}", pretty(&value)).map_err(CliError::Output);
    }
    for (state, n) in [
        ("waiting", status.waiting),
        ("running", status.running),
        ("interrupted", status.interrupted),
        ("damaged", status.damaged),
    ] {
        writeln!(out, "{state:12} {n}").map_err(CliError::Output)?;
    }
    if let Some(call) = oldest {
        let now = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .unwrap_or_default();
        let ago = u64::try_from(now.as_millis())
            .unwrap_or(u64::MAX)
            .saturating_sub(call.created_at_ms)
            / 1000;
        let (id, tool, kind) = (&call.tool_call_id, &call.tool_name, call.kind.as_str());
        writeln!(out, "oldest waiting: {id} ({tool}, waits for {kind}, {ago} s)").map_err(CliError::Output)?;
    }
    let TaskCounts {
        queued,
        running,
        completed,
        failed,
        cancelled,
    } = tasks;
    writeln!(
        out,
        "tasks: {queued} queued, {running} running, {completed} completed, {failed} failed, {cancelled} cancelled"
    )
    .map_err(CliError::Output)?;
    let ReceiptCounts {
        running,
        interrupted,
        done,
        damaged,
    } = receipts;
    writeln!(
        out,
        "receipts: {running} running, {interrupted} interrupted, {done} done, {damaged} damaged"
    )
    .map_err(CliError::Output)?;
    writeln!(out, "kept results: {results}").map_err(CliError::Output)?;
    Ok(())
}

impl super::GlobalArgs {
    /// Where `--store` (or `TOOLSMITH_STORE`) puts the store; `None` for the default store.
    pub fn store_location(&self) -> Option<&StoreLocation> {
        self.store.as_ref()
    }

    /// The pin file: a SQLite `--pins`, else the one next to a SQLite `--store`; `None`
    /// otherwise (see [`pin_location`](Self::pin_location) for PostgreSQL).
    pub fn pin_file(&self) -> Option<std::path::PathBuf> {
        match self.pin_location()? {
            StoreLocation::Sqlite(file) => Some(file),
            StoreLocation::Postgres(_) => None,
        }
    }

    /// Where pins are kept: `--pins`, else next to a SQLite `--store` or in a PostgreSQL
    /// `--store`'s database; `None` without either.
    pub fn pin_location(&self) -> Option<StoreLocation> {
        self.pins.clone().or_else(|| match self.store.as_ref()? {
            StoreLocation::Sqlite(file) => Some(StoreLocation::Sqlite(crate::pins::SqlitePins::path_next_to(file))),
            StoreLocation::Postgres(url) => Some(StoreLocation::Postgres(url.clone())),
        })
    }

    /// The pin store [`pin_location`](Self::pin_location) names, opened (a PostgreSQL one
    /// connected and migrated); `None` without a location (pins then last for the process).
    pub async fn pin_store(&self) -> Result<Option<std::sync::Arc<dyn crate::pins::PinStore>>, CliError> {
        // An error names the option the location came from.
        let option = if self.pins.is_some() { "--pins" } else { "--store" };
        match self.pin_location() {
            Some(location) => super::pins::open(&location, option).await.map(Some),
            None => Ok(None),
        }
    }
}
