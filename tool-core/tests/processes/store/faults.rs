//! Store faults: a real `toolsmith serve --stateless --store postgres://…` whose connection to
//! PostgreSQL goes through a proxy (`support/pg_proxy.rs`) that cuts the database away the moment
//! a given statement passes, then gives it back; and the same server over a SQLite file on a
//! small file system of its own (a tmpfs mounted for the test) that is filled up, so the file
//! cannot be written, then freed. Each test drives one transition that used to leave work stuck,
//! and asserts that the call ends exactly once (its effects counted in a file the tool appends
//! to, not through the store), is never left `running`, and completes once the store is back,
//! without restarting anything. Waits are generous deadlines, never timings.
//!
//! This file holds the tools, the list of tests and the helpers they share; `setup` starts the
//! server and takes its store away, `postgres` and `sqlite` hold the tests.

use std::path::PathBuf;
use std::time::{Duration, Instant};

use serde_json::{Value, json};
use tool_core::prelude::*;

use crate::support::child_cli;
use crate::support::pg_proxy::{self, PgProxy};
use crate::support::postgres as pg;

mod postgres;
mod setup;
mod sqlite;

const STORE_KEY: &str = "store-faults-test-key-0123456789abcdef";
const LEDGER_ENV: &str = "TOOLSMITH_TEST_FAULT_LEDGER";
const MODERN: &str = "2026-07-28";
/// How long a test waits for the store's return to be noticed (the kept writes back off to
/// 10 s between tries).
const DEADLINE: Duration = Duration::from_secs(90);

/// Pays an amount once a person approves, exactly once per call (one line per payment in the
/// ledger file named by `TOOLSMITH_TEST_FAULT_LEDGER`)
#[tool(id = "fault-pay", require_approval, idempotent)]
async fn fault_pay(
    /// The amount
    amount: u32,
) -> Result<String, ToolError> {
    use std::io::Write;
    let path = std::env::var(LEDGER_ENV).map_err(|_| ToolError::new("no ledger"))?;
    let mut file = std::fs::OpenOptions::new()
        .create(true)
        .append(true)
        .open(path)
        .map_err(|e| ToolError::new(e.to_string()))?;
    writeln!(file, "paid {amount}").map_err(|e| ToolError::new(e.to_string()))?;
    Ok(format!("paid {amount}"))
}

/// Pays as a durable background task, exactly once per task: marks that it runs
/// (`<ledger>.running`), waits (at most a minute) for `<ledger>.go`, then pays
#[tool(id = "fault-task", idempotent, background(enabled = true))]
async fn fault_task(
    /// The amount
    amount: u32,
) -> Result<String, ToolError> {
    let ledger = std::env::var(LEDGER_ENV).map_err(|_| ToolError::new("no ledger"))?;
    std::fs::write(format!("{ledger}.running"), "").map_err(|e| ToolError::new(e.to_string()))?;
    let go = PathBuf::from(format!("{ledger}.go"));
    let until = Instant::now() + Duration::from_secs(60);
    while !go.exists() && Instant::now() < until {
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    fault_pay(amount).await
}

/// Pays an amount once a person approves, exactly once per call: marks that it runs
/// (`<ledger>.running`), waits (at most a minute) for `<ledger>.go`, then pays
#[tool(id = "fault-slow-pay", require_approval, idempotent)]
async fn fault_slow_pay(
    /// The amount
    amount: u32,
) -> Result<String, ToolError> {
    fault_task(amount).await
}

/// This suite's tests, named `SUITE::TEST`.
pub fn trials(suite: &str) -> Vec<libtest_mimic::Trial> {
    child_cli::trials(
        suite,
        &[
            (
                "an_approval_cut_before_its_receipt_is_released_and_runs_once_the_store_is_back",
                postgres::an_approval_cut_before_its_receipt_is_released_and_runs_once_the_store_is_back,
            ),
            (
                "a_run_that_ended_during_an_outage_is_recorded_once_the_store_is_back",
                postgres::a_run_that_ended_during_an_outage_is_recorded_once_the_store_is_back,
            ),
            (
                "a_task_that_completed_during_an_outage_ends_completed_once_the_store_is_back",
                postgres::a_task_that_completed_during_an_outage_ends_completed_once_the_store_is_back,
            ),
            (
                "a_task_whose_instance_lost_the_store_is_left_to_it_and_completes_once_it_is_back",
                postgres::a_task_whose_instance_lost_the_store_is_left_to_it_and_completes_once_it_is_back,
            ),
            (
                "sqlite_an_approval_while_the_disk_is_full_is_refused_unrun_and_runs_once_it_is_freed",
                sqlite::sqlite_an_approval_while_the_disk_is_full_is_refused_unrun_and_runs_once_it_is_freed,
            ),
            (
                "sqlite_a_run_that_ended_while_the_disk_was_full_is_recorded_once_it_is_freed",
                sqlite::sqlite_a_run_that_ended_while_the_disk_was_full_is_recorded_once_it_is_freed,
            ),
            (
                "sqlite_a_task_that_completed_while_the_disk_was_full_ends_completed_once_it_is_freed",
                sqlite::sqlite_a_task_that_completed_while_the_disk_was_full_ends_completed_once_it_is_freed,
            ),
        ],
    )
}

/// `toolsmith --store STORE serve --http … --stateless` with `extra` arguments, the ledger in
/// its environment.
fn serve_on(store: &str, ledger: &std::path::Path, extra: &[&str]) -> child_cli::ServedChild {
    let mut args = vec!["--store", store, "serve", "--http", "127.0.0.1:0", "--stateless", "--json-response"];
    args.extend_from_slice(extra);
    child_cli::ServedChild::start(
        child_cli::toolsmith(&args)
            .env("TOOLSMITH_STORE_KEY", STORE_KEY)
            .env(LEDGER_ENV, ledger),
    )
}

/// A 2026-07-28 request to the server at `url` (the client declares elicitation and the tasks
/// extension): its result.
async fn request_at(url: &str, method: &str, name: &str, mut params: Value) -> Value {
    params["_meta"] = json!({
        "io.modelcontextprotocol/protocolVersion": MODERN,
        "io.modelcontextprotocol/clientCapabilities": {"elicitation": {}, "extensions": {"io.modelcontextprotocol/tasks": {}}},
    });
    let r = reqwest::Client::new()
        .post(url)
        .header("Accept", "application/json, text/event-stream")
        .header("Content-Type", "application/json")
        .header("MCP-Protocol-Version", MODERN)
        .header("Mcp-Method", method)
        .header("Mcp-Name", name)
        .timeout(Duration::from_secs(60))
        .body(json!({"jsonrpc": "2.0", "id": 1, "method": method, "params": params}).to_string())
        .send()
        .await
        .expect("the server answers");
    let body: Value = r.json().await.expect("a JSON answer");
    body.get("result").cloned().unwrap_or_else(|| panic!("no result: {body}"))
}

/// `toolsmith --store STORE ARGS…` as the operator: its standard output as JSON (null when it
/// failed or printed none).
fn cli_json(store: &str, args: &[&str]) -> Value {
    let ran = cli(store, args);
    serde_json::from_str(&ran.stdout).unwrap_or(Value::Null)
}

/// `toolsmith --store STORE ARGS…` as the operator, to its end.
fn cli(store: &str, args: &[&str]) -> child_cli::Ran {
    let mut all = vec!["--store", store];
    all.extend_from_slice(args);
    child_cli::Ran::from(
        child_cli::toolsmith(&all)
            .env("TOOLSMITH_STORE_KEY", STORE_KEY)
            .output()
            .expect("the command line runs"),
    )
}

fn text(result: &Value) -> String {
    result["content"][0]["text"].as_str().unwrap_or_default().to_owned()
}

fn postgres_url() -> Option<String> {
    match pg::postgres() {
        pg::Postgres::Url(url) => Some(url),
        pg::Postgres::Skipped(why) => {
            eprintln!("{why}");
            None
        }
        pg::Postgres::Missing(why) => panic!("{why}"),
    }
}

/// Waits (bounded by [`DEADLINE`]) until `done` holds.
async fn eventually<F: Future<Output = bool>>(what: &str, mut done: impl FnMut() -> F) {
    let until = Instant::now() + DEADLINE;
    while !done().await {
        assert!(Instant::now() < until, "{what}: not within {} s", DEADLINE.as_secs());
        tokio::time::sleep(Duration::from_millis(250)).await;
    }
}

/// The last lines of a log, for a failure message (never the whole of it).
fn tail(logs: &str) -> String {
    let lines: Vec<&str> = logs.lines().collect();
    lines[lines.len().saturating_sub(20)..].join("\n")
}
