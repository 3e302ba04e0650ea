//! `toolsmith check`: every linked tool tested against its own schemas
//! ([`Registry::check`](crate::registry::Registry::check)).

use std::io::Write;
use std::process::ExitCode;
use std::time::Duration;

use clap::Args;
use serde_json::{Map, Value};

use super::{CliError, pretty};
use crate::check::{CheckOptions, render_table};
use crate::registry::Registry;

/// The arguments of `check`.
#[derive(Debug, Args)]
pub struct CheckCommand {
    /// Only these tools (all when none is given).
    ids: Vec<String>,
    /// Valid inputs generated per tool (deliberate mistakes come on top).
    #[arg(long, default_value_t = 64)]
    cases: usize,
    /// The seed of the generated inputs (the same seed repeats them).
    #[arg(long, default_value_t = CheckOptions::default().seed)]
    seed: u64,
    /// Also run tools with side effects (give them a sandbox with --context).
    ///
    /// By default a tool runs only when it declares `read_only_hint` and is not destructive; with
    /// this flag, tools that need approval, are destructive or declare no hint run too, with the
    /// request context their schema requires given by --context (their sandbox), never a made-up
    /// one.
    #[arg(long)]
    include_side_effects: bool,
    /// Seconds one call may take before it counts as hanging.
    #[arg(long, value_name = "SECONDS", default_value_t = 10)]
    timeout: u64,
    /// A JSON object merged over each generated request context.
    #[arg(value_name = "JSON", long)]
    context: Option<String>,
    /// Print the report as JSON (for CI).
    #[arg(long)]
    json: bool,
}

/// `check`: runs the checks, prints the table (or JSON); fails when a tool failed or an id is
/// unknown.
pub(super) async fn check(registry: &Registry, command: CheckCommand, out: &mut dyn Write) -> Result<ExitCode, CliError> {
    if let Some(unknown) = command.ids.iter().find(|id| registry.get(id).is_none()) {
        return Err(CliError::NotFound(format!(
            "no tool `{unknown}` is linked into this binary (see `{} list`)",
            super::bin_name()
        )));
    }
    let context = match &command.context {
        None => Map::new(),
        Some(text) => match serde_json::from_str::<Value>(text) {
            Ok(Value::Object(map)) => map,
            Ok(_) => return Err(CliError::Usage("--context must be a JSON object".into())),
            Err(e) => {
                return Err(CliError::Json {
                    what: "--context",
                    source: crate::json::TextError::Syntax(e),
                });
            }
        },
    };
    let options = CheckOptions {
        ids: command.ids,
        cases: command.cases,
        seed: command.seed,
        include_side_effects: command.include_side_effects,
        timeout: Duration::from_secs(command.timeout.max(1)),
        context,
    };
    let report = registry.check(&options).await;
    let text = if command.json {
        super::help::as_run(&pretty(&serde_json::to_value(&report)?))
    } else {
        // Each failure's `repeat:` command names the binary as it is run.
        super::help::as_run(&render_table(&report))
    };
    writeln!(out, "{}", text.trim_end()).map_err(CliError::Output)?;
    Ok(if report.passed() { ExitCode::SUCCESS } else { ExitCode::FAILURE })
}
