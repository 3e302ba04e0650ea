//! `toolsmith receipts`: the store's receipts of tools declared `idempotent` — `list` them (the
//! digest of each key, the tool, the state, the age; never a key or a result), `clear` one so
//! its call may run once more (after checking that an interrupted run's effect did not happen),
//! which the store's audit trail records as the operator's.

use std::io::Write;
use std::process::ExitCode;

use clap::Subcommand;
use serde_json::{Value, json};

use super::{CliError, pretty};
use crate::idempotency::key_digest;
use crate::runtime::{Actor, AuditAction, AuditRecord, ReceiptEntry, ReceiptState, ReceiptStore, StoreLocation};

/// The subcommands of `receipts`.
#[derive(Debug, Subcommand)]
pub enum ReceiptsCommand {
    /// List the receipts, oldest first.
    ///
    /// List the receipts, oldest first: the digest of each key, the tool, the state (running,
    /// interrupted, done, damaged) and its age.
    List {
        /// Print JSON instead of a table.
        #[arg(long)]
        json: bool,
    },
    /// Forget one receipt, so its call may run once more.
    ///
    /// Forget one receipt, whatever its state, so its call may run once more: check first that
    /// an interrupted run's effect did not happen.
    Clear {
        /// The call's idempotency key (as the error of its call or `cx.idempotency_key()` gave it).
        #[arg(required_unless_present = "digest", conflicts_with = "digest")]
        key: Option<String>,
        /// The digest of the key instead, as `receipts list` shows it.
        #[arg(long, value_name = "DIGEST")]
        digest: Option<String>,
    },
}

/// Runs a `receipts` subcommand against `--store` (the default SQLite file when absent).
pub(super) async fn run(command: ReceiptsCommand, location: Option<&StoreLocation>, out: &mut dyn Write) -> Result<ExitCode, CliError> {
    let opened = super::store::open(location).await?;
    let shown = location.map_or_else(|| "the default store".to_owned(), StoreLocation::shown);
    let receipts = opened
        .pending
        .receipts()
        .ok_or_else(|| CliError::Usage(format!("{shown} keeps no receipts")))?;
    match command {
        ReceiptsCommand::List { json } => list(&*receipts, json, out).await,
        ReceiptsCommand::Clear { key, digest } => {
            let digest = match (key, digest) {
                (Some(key), _) => key_digest(&key),
                (None, Some(digest)) => digest.trim().to_ascii_lowercase(),
                (None, None) => return Err(CliError::Usage("give the idempotency key, or --digest DIGEST".into())),
            };
            let tool = receipts
                .list()
                .await?
                .into_iter()
                .find(|r| r.key_digest == digest)
                .map(|r| r.tool_name);
            if !receipts.remove_digest(&digest).await? {
                return Err(CliError::NotFound(format!("{shown} has no receipt with the key digest {digest}")));
            }
            if let Some(audit) = opened.pending.audit() {
                let mut row = AuditRecord::new(
                    Actor::Operator,
                    AuditAction::ClearReceipt {
                        key_digest: digest.clone(),
                    },
                );
                row.tool = tool;
                crate::runtime::audit_record(&*audit, row).await;
            }
            writeln!(out, "cleared the receipt {digest}: its call runs once more when called").map_err(CliError::Output)?;
            Ok(ExitCode::SUCCESS)
        }
    }
}

async fn list(receipts: &dyn ReceiptStore, json: bool, out: &mut dyn Write) -> Result<ExitCode, CliError> {
    let listed = receipts.list().await?;
    let now = std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH);
    let now_ms = now.map_or(0, |d| u64::try_from(d.as_millis()).unwrap_or(u64::MAX));
    let age = |r: &ReceiptEntry| r.since_ms.map(|t| now_ms.saturating_sub(t) / 1000);
    if json {
        let rows: Vec<Value> = listed
            .iter()
            .map(|r| {
                let mut row = json!({"key_digest": r.key_digest, "tool_name": r.tool_name, "state": r.state.as_str(), "since_ms": r.since_ms, "age_s": age(r)});
                if let ReceiptState::Damaged(why) = &r.state {
                    row["reason"] = json!(why);
                }
                row
            })
            .collect();
        writeln!(out, "{}", pretty(&Value::Array(rows))).map_err(CliError::Output)?;
        return Ok(ExitCode::SUCCESS);
    }
    writeln!(out, "{:64}  {:11}  {:>8}  TOOL", "KEY DIGEST", "STATE", "AGE").map_err(CliError::Output)?;
    for r in &listed {
        let age = age(r).map_or_else(|| "-".to_owned(), |s| format!("{s} s"));
        let (digest, state, tool) = (&r.key_digest, r.state.as_str(), &r.tool_name);
        let why = match &r.state {
            ReceiptState::Damaged(why) => format!(" ({why})"),
            _ => String::new(),
        };
        writeln!(out, "{digest:64}  {state:11}  {age:>8}  {tool}{why}").map_err(CliError::Output)?;
    }
    Ok(ExitCode::SUCCESS)
}
