//! `toolsmith audit list`: the store's audit trail — who decided what on which call, tool or
//! task, and when (never argument values) — as a table or one JSON object per row; a row
//! edited in the database is listed as damaged, with why. Nothing here writes a row: the
//! runtime and the other commands append them (see `runtime::audit`).

use std::io::Write;
use std::process::ExitCode;

use clap::Subcommand;
use serde_json::{Value, json};

use super::CliError;
use crate::runtime::{AuditAction, AuditEntry, AuditFilter, AuditRecord, StoreLocation, parse_retention};

/// The subcommands of `audit`.
#[derive(Debug, Subcommand)]
pub enum AuditCommand {
    /// List the audit trail, oldest first.
    ///
    /// List the audit trail, oldest first: every decision (approve, reject, edit, resume data
    /// supplied, a client-side result submitted, a token decision, a rerun, a task cancelled,
    /// a receipt cleared, a pin accepted, a call expired unanswered) with when, who (operator,
    /// `caller:<owner>`, application), the call, tool or task, and what; never argument values
    /// (an edit shows the digests of the old and new arguments). Rows are append-only: they
    /// cannot be edited through toolsmith, and a row edited in the database is listed as
    /// damaged, with why.
    List {
        /// Only rows made since then (`7d`, `12h`, or an RFC 3339 time).
        ///
        /// A duration ago (`7d`, `12h`, `30m`) or an RFC 3339 time (`2026-01-31T09:00:00Z`).
        #[arg(long, value_name = "DURATION_OR_RFC3339", value_parser = since_arg)]
        since: Option<u64>,
        /// Only rows about this call.
        #[arg(long, value_name = "CALL_ID")]
        call: Option<String>,
        /// Print one JSON object per row (a line each) instead of a table.
        #[arg(long)]
        json: bool,
    },
}

/// A `--since` value as milliseconds since the Unix epoch.
fn since_arg(text: &str) -> Result<u64, String> {
    if let Ok(ago) = parse_retention(text) {
        let now = crate::runtime::audit_now_ms();
        return Ok(now.saturating_sub(u64::try_from(ago.as_millis()).unwrap_or(u64::MAX)));
    }
    let at = chrono::DateTime::parse_from_rfc3339(text.trim())
        .map_err(|_| format!("`{text}` is neither a duration (7d, 12h, 30m) nor an RFC 3339 time (2026-01-31T09:00:00Z)"))?;
    Ok(u64::try_from(at.timestamp_millis()).unwrap_or(0))
}

/// Runs an `audit` subcommand against `--store` (the default SQLite file when absent).
pub(super) async fn run(command: AuditCommand, location: Option<&StoreLocation>, out: &mut dyn Write) -> Result<ExitCode, CliError> {
    let AuditCommand::List { since, call, json } = command;
    let opened = super::store::open(location).await?;
    let shown = location.map_or_else(|| "the default store".to_owned(), StoreLocation::shown);
    let audit = opened
        .pending
        .audit()
        .ok_or_else(|| CliError::Usage(format!("{shown} keeps no audit trail")))?;
    let filter = AuditFilter {
        since_ms: since,
        call_id: call,
    };
    let rows = audit.list(&filter).await?;
    let w = |out: &mut dyn Write, line: String| writeln!(out, "{line}").map_err(CliError::Output);
    if json {
        for row in &rows {
            w(out, row_json(row).to_string())?;
        }
        return Ok(ExitCode::SUCCESS);
    }
    w(
        out,
        format!(
            "{:24}  {:28}  {:13}  {:26}  {:20}  DETAIL",
            "TIME", "ACTOR", "ACTION", "CALL", "TOOL"
        ),
    )?;
    for row in &rows {
        let line = match row {
            AuditEntry::Recorded(r) => {
                let (call, tool) = (r.call_id.as_deref().unwrap_or("-"), r.tool.as_deref().unwrap_or("-"));
                let (at, actor, action) = (time(r.at_ms), r.actor.to_string(), r.action.name());
                format!("{at:24}  {actor:28}  {action:13}  {call:26}  {tool:20}  {}", detail(r))
                    .trim_end()
                    .to_owned()
            }
            AuditEntry::Damaged { id, reason } => format!("{:24}  {:28}  {:13}  {id:26}  {:20}  {reason}", "?", "?", "DAMAGED", "?"),
        };
        w(out, line)?;
    }
    Ok(ExitCode::SUCCESS)
}

/// A row as `--json` prints it: the record with its time in RFC 3339, or a damaged row's id
/// and why.
fn row_json(row: &AuditEntry) -> Value {
    match row {
        AuditEntry::Recorded(r) => {
            let mut value = serde_json::to_value(r).unwrap_or_default();
            value["at"] = json!(time(r.at_ms));
            value
        }
        AuditEntry::Damaged { id, reason } => json!({"id": id, "damaged": true, "reason": reason}),
    }
}

/// What a table row shows after the tool: the action's own fields and the flags.
fn detail(r: &AuditRecord) -> String {
    let mut parts = match &r.action {
        AuditAction::Edit { args_before, args_after } => vec![format!("args {args_before} -> {args_after}")],
        AuditAction::CancelTask { task_id } => vec![format!("task {task_id}")],
        AuditAction::ClearReceipt { key_digest } => vec![format!("key digest {key_digest}")],
        AuditAction::AcceptPin {
            provider,
            connection,
            fingerprint,
        } => vec![format!("{provider} ({connection}) {fingerprint}")],
        _ => Vec::new(),
    };
    if r.token {
        parts.push("by token".into());
    }
    if r.rerun {
        parts.push("rerun".into());
    }
    parts.join(", ")
}

/// Milliseconds since the Unix epoch as RFC 3339 (UTC, milliseconds).
fn time(ms: u64) -> String {
    let at = chrono::DateTime::from_timestamp_millis(i64::try_from(ms).unwrap_or(i64::MAX));
    at.map_or_else(|| ms.to_string(), |t| t.to_rfc3339_opts(chrono::SecondsFormat::Millis, true))
}
