//! The commands that read the tools and the store: `list`, `schema`, `pending`.
//! Printing only; nothing here runs a tool.

use std::io::Write;
use std::process::ExitCode;
use std::time::Duration;

use serde_json::{Value, json};

use super::{CliError, pretty, title_of};
use crate::registry::Registry;
use crate::runtime::{Answer, CallState, Decision, PendingKind, Runtime, StoredCall};

/// `list`: id, title and description of every tool (a table, or JSON).
pub(super) fn list(registry: &Registry, json: bool, out: &mut dyn Write) -> Result<ExitCode, CliError> {
    let tools = registry.tools();
    if json {
        let list: Vec<Value> = tools
            .iter()
            .map(|t| {
                let s = t.spec();
                json!({"id": s.id, "title": s.title.as_ref().or(s.presentation.mcp.title.as_ref()), "description": s.description})
            })
            .collect();
        writeln!(out, "{}", pretty(&Value::Array(list))).map_err(CliError::Output)?;
    } else {
        let width = tools.iter().map(|t| t.spec().id.len()).max().unwrap_or(2).max(2);
        let twidth = tools.iter().map(|t| title_of(t.spec()).len()).max().unwrap_or(5).max(5);
        writeln!(out, "{:width$}  {:twidth$}  DESCRIPTION", "ID", "TITLE").map_err(CliError::Output)?;
        for t in &tools {
            let s = t.spec();
            let first_line = s.description.lines().next().unwrap_or_default();
            writeln!(out, "{:width$}  {:twidth$}  {first_line}", s.id, title_of(s)).map_err(CliError::Output)?;
        }
    }
    Ok(ExitCode::SUCCESS)
}

/// `schema`: a tool's schemas.
pub(super) fn schema(registry: &Registry, id: &str, out: &mut dyn Write) -> Result<ExitCode, CliError> {
    let tool = registry
        .get(id)
        .ok_or_else(|| CliError::NotFound(registry.unknown(id).message().to_owned()))?;
    let s = tool.spec();
    let mut v = json!({"id": s.id, "input": s.schemas.input, "output": s.schemas.output});
    for (k, schema) in [
        ("suspend", &s.schemas.suspend),
        ("resume", &s.schemas.resume),
        ("context", &s.schemas.request_context),
    ] {
        if let Some(schema) = schema {
            v[k] = schema.clone();
        }
    }
    writeln!(out, "{}", pretty(&v)).map_err(CliError::Output)?;
    Ok(ExitCode::SUCCESS)
}

/// `pending`: every stored call with its state (arguments and request context redacted):
/// waiting, running, interrupted (with its owner and start), and damaged rows (with their id and
/// why). A damaged row never breaks the listing.
pub(super) async fn pending(runtime: &Runtime, json: bool, token: Option<u64>, out: &mut dyn Write) -> Result<ExitCode, CliError> {
    let entries = runtime.pending_entries().await?;
    let mut tokens = Vec::with_capacity(entries.len());
    for entry in &entries {
        tokens.push(match token {
            Some(seconds) => approve_token(runtime, entry, seconds).await?,
            None => None,
        });
    }
    if json {
        let list = entries.iter().zip(&tokens).map(|(entry, token)| {
            let mut v = entry_json(entry);
            if let Some(token) = token {
                v["approve_token"] = json!(token);
            }
            v
        });
        writeln!(out, "{}", pretty(&Value::Array(list.collect()))).map_err(CliError::Output)?;
        return Ok(ExitCode::SUCCESS);
    }
    writeln!(
        out,
        "{:24}  {:11}  {:10}  {:20}  ARGS OR DETAIL",
        "CALL ID", "STATE", "WAITS FOR", "TOOL"
    )
    .map_err(CliError::Output)?;
    for (entry, token) in entries.iter().zip(&tokens) {
        let (id, state, kind, tool, detail) = match entry {
            StoredCall::Call { call, state } => {
                let detail = match state {
                    CallState::Waiting => crate::call::quote(&call.args),
                    CallState::Running(claim) => format!("run by {claim}"),
                    CallState::Interrupted(claim) => {
                        format!("{claim}, ended mid-run: the tool may have had its effect; rerun with --rerun or decline it")
                    }
                };
                (
                    call.tool_call_id.as_str(),
                    state.as_str(),
                    call.kind.as_str(),
                    call.tool_name.as_str(),
                    detail,
                )
            }
            StoredCall::Damaged {
                tool_call_id,
                tool_name,
                reason,
            } => (
                tool_call_id.as_str(),
                "damaged",
                "-",
                tool_name.as_deref().unwrap_or("?"),
                format!("skipped: {reason}"),
            ),
        };
        writeln!(out, "{id:24}  {state:11}  {kind:10}  {tool:20}  {detail}").map_err(CliError::Output)?;
        if let Some(token) = token {
            writeln!(out, "  approve token: {token}").map_err(CliError::Output)?;
        }
    }
    Ok(ExitCode::SUCCESS)
}

/// `pending --token`: a signed token approving `entry` (valid `seconds`) when it is a call
/// waiting for approval; `None` for any other row. A runtime without a decision key is an
/// error saying how to give it one.
async fn approve_token(runtime: &Runtime, entry: &StoredCall, seconds: u64) -> Result<Option<String>, CliError> {
    let StoredCall::Call {
        call,
        state: CallState::Waiting,
    } = entry
    else {
        return Ok(None);
    };
    if call.kind != PendingKind::Approval {
        return Ok(None);
    }
    let binding = match runtime.binding(&call.tool_call_id).await {
        Ok(binding) => binding,
        // Its tool is not in this registry (or the call was just resolved): no token for it.
        Err(e) => {
            eprintln!("no approve token for `{}`: {e}", call.tool_call_id);
            return Ok(None);
        }
    };
    let decision = Decision::new(binding, Answer::Approve);
    let token = runtime.sign_decision(&decision, Duration::from_secs(seconds));
    Ok(Some(token?))
}

/// One listed row as JSON: the call (its context redacted: it may hold credentials) with its
/// `state` and claim, or a damaged row's id, tool and reason.
fn entry_json(entry: &StoredCall) -> Value {
    match entry {
        StoredCall::Call { call, state } => {
            // The stored arguments and request context may hold credentials: list them redacted.
            let mut v = serde_json::to_value(call).unwrap_or_default();
            v["args"] = crate::call::redact(&v["args"]);
            v["context"] = crate::call::redact(&v["context"]);
            v["state"] = json!(state.as_str());
            if let Some(claim) = state.claim() {
                v["owner_pid"] = json!(claim.owner_pid);
                v["claimed_at_ms"] = json!(claim.claimed_at_ms);
            }
            v
        }
        StoredCall::Damaged {
            tool_call_id,
            tool_name,
            reason,
        } => {
            json!({"tool_call_id": tool_call_id, "tool_name": tool_name, "state": "damaged", "reason": reason})
        }
    }
}
