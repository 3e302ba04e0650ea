//! The `toolsmith` command line plus three tools whose only effect is one row in a PostgreSQL
//! table per run: what the several-instances chaos test (`tests/python/test_chaos.py`) counts
//! to tell "ran once" from "ran twice" or "never ran".
//!
//! ```text
//! toolsmith_ledger --store postgres://… serve --http 127.0.0.1:0 --stateless \
//!     --context '{"ledger_url": "postgres://…", "ledger_table": "ledger"}'
//! toolsmith_ledger call ledger_rows '{}' --context '{"ledger_url": "postgres://…", "ledger_table": "ledger"}'
//! ```
//!
//! - `ledger_approve` needs approval, then appends its key;
//! - `ledger_suspend` suspends on its first run and appends its key when resumed;
//! - `ledger_task` runs in the background (durable with `serve --store`, retried up to 4 times),
//!   sleeps `sleep_ms`, then appends its key, or fails without an effect when `fail` is set;
//! - `ledger_rows` creates the table when missing and lists its rows.
//!
//! The three appending tools are `idempotent = "recover"`: they run once per call over a
//! receipt, and a run that takes over an interrupted one (its process died between the insert
//! and the receipt) looks its row up by key first, as the guide's exactly-once section asks of
//! such a tool. The database and table come from the request context, never from the model.

// Linking the library keeps its `#[tool]` registrations in the binary, like `toolsmith`'s.
extern crate examples;

use std::process::ExitCode;
use std::time::Duration;

use tool_core::prelude::*;

/// Where the ledger is (the request context: `serve --context`, `call --context`).
#[derive(Debug, Clone, Deserialize, Serialize, JsonSchema)]
pub struct LedgerContext {
    /// A PostgreSQL URL (`postgres://user@host/db`, `?options=-c search_path=…` allowed).
    pub ledger_url: String,
    /// The table: letters, digits and `_`, at most 63 characters.
    pub ledger_table: String,
}

/// One ledger entry to append.
#[derive(Debug, Clone, Deserialize, Serialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct Entry {
    /// The entry's key: 1 to 64 letters, digits, `_` or `-`.
    pub key: String,
}

/// What an append did.
#[derive(Debug, Clone, Serialize, JsonSchema)]
pub struct Appended {
    /// The key appended.
    pub key: String,
    /// `false` when a run after an interruption found the row its earlier run had written.
    pub inserted: bool,
}

fn checked_key(key: &str) -> Result<(), ToolError> {
    let ok = (1..=64).contains(&key.len()) && key.chars().all(|c| c.is_ascii_alphanumeric() || c == '_' || c == '-');
    if ok {
        Ok(())
    } else {
        Err(ToolError::with_kind(
            tool_core::ErrorKind::InputRejected,
            "`key` must be 1 to 64 letters, digits, `_` or `-`.",
        ))
    }
}

fn checked_table(table: &str) -> Result<&str, ToolError> {
    let ok = (1..=63).contains(&table.len())
        && !table.starts_with(|c: char| c.is_ascii_digit())
        && table.chars().all(|c| c.is_ascii_alphanumeric() || c == '_');
    if ok {
        Ok(table)
    } else {
        Err(ToolError::new(
            "The request context's `ledger_table` must be letters, digits and `_` (not starting with a digit), at most 63.",
        ))
    }
}

/// A connection to the ledger's database (its driver task runs until the client is dropped).
async fn connect(cx: &LedgerContext) -> Result<tokio_postgres::Client, ToolError> {
    let connecting = tokio_postgres::connect(&cx.ledger_url, tokio_postgres::NoTls);
    let (client, connection) = tokio::time::timeout(Duration::from_secs(10), connecting)
        .await
        .map_err(|_| ToolError::new("The ledger's database did not answer within 10 s."))?
        .map_err(|e| ToolError::new(format!("Cannot reach the ledger's database: {e}")))?;
    tokio::spawn(async move {
        if let Err(e) = connection.await {
            eprintln!("toolsmith_ledger: the ledger connection ended: {e}");
        }
    });
    Ok(client)
}

/// Appends `key` once: a run told it follows an interrupted one looks the row up first. Over
/// any suspend/resume types `S`, `R`: `ledger_suspend`'s context names its own.
async fn append<S, R>(cx: &ToolContext<LedgerContext, S, R>, key: String) -> Result<Appended, ToolError> {
    checked_key(&key)?;
    let table = checked_table(&cx.request_context().ledger_table)?;
    let client = connect(cx.request_context()).await?;
    let failed = |e: tokio_postgres::Error| ToolError::new(format!("The ledger write failed: {e}"));
    let after_interruption = cx.idempotency_key().after_interruption();
    if after_interruption {
        let found = client
            .query_one(&format!("SELECT count(*) FROM {table} WHERE key = $1"), &[&key])
            .await
            .map_err(failed)?;
        if found.get::<_, i64>(0) > 0 {
            return Ok(Appended { key, inserted: false });
        }
    }
    let insert = format!("INSERT INTO {table} (key, call_id, pid) VALUES ($1, $2, $3)");
    let pid = i64::from(std::process::id());
    client.execute(&insert, &[&key, &cx.tool_call_id(), &pid]).await.map_err(failed)?;
    Ok(Appended { key, inserted: true })
}

/// Appends a key to the ledger, once a person approved it
#[tool(id = "ledger_approve", context = LedgerContext, require_approval, idempotent = "recover")]
pub async fn ledger_approve(entry: Entry, #[ctx] cx: ToolContext<LedgerContext>) -> Result<Appended, ToolError> {
    append(&cx, entry.key).await
}

/// Why a `ledger_suspend` call waits.
#[derive(Debug, Clone, Serialize, Deserialize, JsonSchema)]
pub struct Hold {
    /// The key that will be appended.
    pub key: String,
}

/// The data a `ledger_suspend` call resumes with.
#[derive(Debug, Clone, Serialize, Deserialize, JsonSchema)]
pub struct Go {
    /// Append the key (`false`: end without an effect).
    pub go: bool,
}

/// Waits for resume data, then appends a key to the ledger
#[tool(id = "ledger_suspend", context = LedgerContext, suspend = Hold, resume = Go, idempotent = "recover")]
pub async fn ledger_suspend(entry: Entry, #[ctx] cx: ToolContext<LedgerContext, Hold, Go>) -> Result<Appended, ToolError> {
    checked_key(&entry.key)?;
    match cx.resume_data()? {
        None => Err(cx.suspend(Hold { key: entry.key })),
        Some(Go { go: false }) => Err(ToolError::new("Resumed with `go: false`; nothing was appended.")),
        Some(Go { go: true }) => append(&cx, entry.key).await,
    }
}

/// A background entry: sleep, then append (or fail without an effect).
#[derive(Debug, Clone, Deserialize, Serialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct TaskEntry {
    /// The entry's key: 1 to 64 letters, digits, `_` or `-`.
    pub key: String,
    /// Milliseconds to sleep before appending (at most 5000; default 0).
    pub sleep_ms: Option<u64>,
    /// Fail every attempt, appending nothing (default `false`).
    pub fail: Option<bool>,
}

/// Appends a key to the ledger in the background (retried up to 4 times)
#[tool(
    id = "ledger_task",
    context = LedgerContext,
    idempotent = "recover",
    background(enabled = true, max_retries = 4)
)]
pub async fn ledger_task(entry: TaskEntry, #[ctx] cx: ToolContext<LedgerContext>) -> Result<Appended, ToolError> {
    checked_key(&entry.key)?;
    tokio::time::sleep(Duration::from_millis(entry.sleep_ms.unwrap_or(0).min(5000))).await;
    if entry.fail == Some(true) {
        return Err(ToolError::new(format!("`{}` fails on purpose; nothing was appended.", entry.key)));
    }
    append(&cx, entry.key).await
}

/// One ledger row.
#[derive(Debug, Clone, Serialize, JsonSchema)]
pub struct Row {
    /// The key appended.
    pub key: String,
    /// The call that appended it.
    pub call_id: String,
    /// The process that appended it.
    pub pid: i64,
}

/// Creates the ledger table when missing and lists its rows, oldest first
#[tool(id = "ledger_rows", context = LedgerContext)]
pub async fn ledger_rows(#[ctx] cx: ToolContext<LedgerContext>) -> Result<Vec<Row>, ToolError> {
    let table = checked_table(&cx.request_context().ledger_table)?;
    let client = connect(cx.request_context()).await?;
    let failed = |e: tokio_postgres::Error| ToolError::new(format!("The ledger read failed: {e}"));
    let create = format!(
        "CREATE TABLE IF NOT EXISTS {table} (n bigserial PRIMARY KEY, key text NOT NULL, call_id text NOT NULL, pid bigint NOT NULL)"
    );
    client.batch_execute(&create).await.map_err(failed)?;
    let rows = client
        .query(&format!("SELECT key, call_id, pid FROM {table} ORDER BY n"), &[])
        .await
        .map_err(failed)?;
    Ok(rows
        .iter()
        .map(|r| Row {
            key: r.get(0),
            call_id: r.get(1),
            pid: r.get(2),
        })
        .collect())
}

fn main() -> ExitCode {
    tool_providers::cli::run()
}
