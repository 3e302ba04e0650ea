//! `toolsmith pins list|diff|accept`: reviewing the definitions of pinned remote tools.
//!
//! Owns the command's arguments and output over the pin store (`--pins FILE_OR_URL`, else the
//! one next to a SQLite `--store` or in a PostgreSQL `--store`'s database) and opening it. What a pin is and how a change is accepted are `provider::pins`'.
//! An accepted change is recorded as the operator's in the audit trail of `--store` (else of a
//! PostgreSQL `--pins` database, else of the default store); a store that cannot record it is
//! logged, and the pin stands.

use std::io::Write;
use std::process::ExitCode;
use std::sync::Arc;

use super::CliError;
use crate::pins::{self, Pin, PinStore, SqlitePins};
use crate::runtime::{Actor, AuditAction, AuditRecord, PostgresStore, StoreLocation};

/// The arguments of `pins`.
#[derive(Debug, clap::Subcommand)]
pub enum PinsCommand {
    /// List every pinned tool and whether it changed.
    ///
    /// Every pinned tool: provider, connection, tool, fingerprint, and whether a changed
    /// definition waits for review.
    List {
        /// Print JSON instead of a table.
        #[arg(long)]
        json: bool,
    },
    /// Show what a tool's changed definition changes.
    ///
    /// What a tool's changed definition changes: the parts, then the pinned and the new
    /// definition as JSON.
    Diff(Named),
    /// Accept a tool's changed definition: it becomes the pin, and calls go through again.
    Accept(Named),
}

/// One pinned tool.
#[derive(Debug, clap::Args)]
pub struct Named {
    /// The provider (`mcp`, `composio`, `arcade`).
    // Its own id: a command line that adds a global `--provider` flag must not take it.
    #[arg(id = "pinned_provider", value_name = "PROVIDER")]
    provider: String,
    /// The tool's id.
    tool: String,
    /// The connection (needed when the tool is pinned for several).
    #[arg(long)]
    connection: Option<String>,
}

fn json(v: &impl serde::Serialize) -> String {
    serde_json::to_string_pretty(v).unwrap_or_default()
}

/// Opens the pin store at `location` (given with `option`, `--pins` or `--store`, which errors
/// name): a SQLite file, or a PostgreSQL database (connected, its schema migrated, the
/// integrity key from `TOOLSMITH_STORE_KEY`).
pub(super) async fn open(location: &StoreLocation, option: &str) -> Result<Arc<dyn PinStore>, CliError> {
    let flag = match option {
        "--pins" => format!("--pins {}", location.shown()),
        _ => format!("the pins of {option} ({})", location.shown()),
    };
    match location {
        StoreLocation::Sqlite(file) => Ok(Arc::new(
            SqlitePins::open(file).map_err(|source| CliError::PinsAt { flag, source })?,
        )),
        StoreLocation::Postgres(url) => {
            let store = PostgresStore::connect(url)
                .await
                .map_err(|source| CliError::StoreAt { flag, source })?;
            Ok(Arc::new(store.pins()))
        }
    }
}

/// `pins`: `store` is the pin store (`None`: neither `--pins` nor `--store` was given);
/// `audit_at` the `--store` whose audit trail records an acceptance.
pub(super) async fn pins(
    (store, audit_at): (Option<Arc<dyn PinStore>>, Option<&StoreLocation>),
    command: PinsCommand,
    out: &mut dyn Write,
) -> Result<ExitCode, CliError> {
    let store = store.ok_or_else(|| {
        CliError::Usage(
            "`pins` needs the pin store: pass --pins FILE_OR_URL (or --store FILE_OR_URL, whose pins are next to it or in its database)"
                .to_owned(),
        )
    })?;
    let all = store.list().await?;
    let w = |out: &mut dyn Write, s: String| writeln!(out, "{s}").map_err(CliError::Output);
    match command {
        PinsCommand::List { json: true } => w(out, json(&all))?,
        PinsCommand::List { json: false } => {
            for pin in &all {
                let changed: Vec<&str> = pin.changes().into_iter().map(|c| c.as_str()).collect();
                let state = if changed.is_empty() {
                    "pinned".to_owned()
                } else {
                    format!("CHANGED ({})", changed.join(", "))
                };
                w(
                    out,
                    format!(
                        "{}\t{}\t{}\t{}\t{state}",
                        pin.key.provider, pin.key.connection, pin.key.tool, pin.pinned.fingerprint
                    ),
                )?;
            }
        }
        PinsCommand::Diff(named) => {
            let pin = find(&all, &named)?;
            let changed: Vec<&str> = pin.changes().into_iter().map(|c| c.as_str()).collect();
            let seen = pin.seen.as_ref().map(|s| &s.definition);
            w(
                out,
                json(&serde_json::json!({"key": pin.key, "changed": changed, "pinned": pin.pinned.definition, "seen": seen})),
            )?;
        }
        PinsCommand::Accept(named) => {
            let key = find(&all, &named)?.key.clone();
            let pin = pins::accept(&*store, key).await?;
            record_accepted(&pin, audit_at).await;
            w(
                out,
                format!(
                    "accepted {} of {} ({}): {}",
                    pin.key.tool, pin.key.provider, pin.key.connection, pin.pinned.fingerprint
                ),
            )?;
        }
    }
    Ok(ExitCode::SUCCESS)
}

/// Records an accepted pin in the audit trail of the store at `location`; one that cannot be
/// opened or written is logged (the pin stands).
async fn record_accepted(pin: &Pin, location: Option<&StoreLocation>) {
    let action = AuditAction::AcceptPin {
        provider: pin.key.provider.clone(),
        connection: pin.key.connection.clone(),
        fingerprint: pin.pinned.fingerprint.to_string(),
    };
    let mut row = AuditRecord::new(Actor::Operator, action);
    row.tool = Some(pin.key.tool.clone());
    match super::store::open(location).await.map(|s| s.pending.audit()) {
        Ok(Some(audit)) => crate::runtime::audit_record(&*audit, row).await,
        Ok(None) => {}
        Err(error) => tracing::warn!(tool = %pin.key.tool, %error, "the audit row of an accepted pin could not be written; the pin stands"),
    }
}

/// The one pin `named` names.
fn find<'a>(all: &'a [Pin], named: &Named) -> Result<&'a Pin, CliError> {
    let matching: Vec<&Pin> = all
        .iter()
        .filter(|p| p.key.provider == named.provider && p.key.tool == named.tool)
        .filter(|p| named.connection.as_ref().is_none_or(|c| &p.key.connection == c))
        .collect();
    match matching.as_slice() {
        [one] => Ok(one),
        [] => Err(CliError::NotFound(format!(
            "no tool `{}` of `{}` is pinned",
            named.tool, named.provider
        ))),
        several => Err(CliError::Usage(format!(
            "`{}` of `{}` is pinned for several connections ({}): name one with --connection",
            named.tool,
            named.provider,
            several.iter().map(|p| p.key.connection.as_str()).collect::<Vec<_>>().join(", ")
        ))),
    }
}
