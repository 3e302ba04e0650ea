//! Where the command line's logs go: `tracing-subscriber`, on standard error.
//!
//! Owns [`LogFormat`] (`--log-format`) and [`init`]. `RUST_LOG` picks what is logged (the
//! `tracing-subscriber` `EnvFilter` syntax, e.g. `warn` or `tool_core=debug`); without it,
//! `serve` logs warnings (refused requests, failing and interrupted calls) and every other
//! command only errors, since it prints its own. Logs never go to standard output: `serve
//! --stdio` speaks MCP there. `rmcp` logs whole messages (arguments included) at debug and
//! trace, so it is held at info when `RUST_LOG` asks for more, unless it names `rmcp`. Lines
//! are written by a thread of their own (`tracing-appender`): a standard error that is not
//! read drops lines (up to a bounded backlog) instead of stalling the server.

use std::io::IsTerminal;

use clap::ValueEnum;
use tracing_appender::non_blocking::{NonBlockingBuilder, WorkerGuard};
use tracing_subscriber::filter::LevelFilter;
use tracing_subscriber::EnvFilter;

/// How log lines are written.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, ValueEnum)]
pub enum LogFormat {
    /// Human-readable lines (coloured on a terminal).
    #[default]
    Text,
    /// One JSON object per line (`timestamp`, `level`, `fields`, `target`).
    Json,
}

/// The filter when `RUST_LOG` is not set (or not valid).
fn default_filter(serving: bool) -> &'static str {
    if serving {
        "warn"
    } else {
        "error"
    }
}

/// Log lines waiting for standard error at most; past it lines are dropped.
const BACKLOG: usize = 16_384;

/// Installs the process's log subscriber, once (later calls, or a subscriber the embedding
/// program installed first, leave it as it is). `serving`: the command is `serve`. Keep the
/// guard while logging: dropping it writes out what is left.
pub(super) fn init(format: LogFormat, serving: bool) -> Option<WorkerGuard> {
    let spec = std::env::var("RUST_LOG").unwrap_or_default();
    let mut filter = match spec.trim() {
        "" => EnvFilter::new(default_filter(serving)),
        spec => EnvFilter::try_new(spec).unwrap_or_else(|e| {
            eprintln!("warning: RUST_LOG={spec:?} is not a valid filter ({e}); logging at the default level");
            EnvFilter::new(default_filter(serving))
        }),
    };
    let verbose = filter.max_level_hint().is_none_or(|most| most > LevelFilter::INFO);
    if verbose && !spec.contains("rmcp") {
        if let Ok(cap) = "rmcp=info".parse() {
            filter = filter.add_directive(cap);
        }
    }
    let (writer, guard) = NonBlockingBuilder::default()
        .lossy(true)
        .buffered_lines_limit(BACKLOG)
        .thread_name("toolsmith-log")
        .finish(std::io::stderr());
    // A closed standard error loses the logs, nothing else (the default would report the
    // failed write with `eprintln!`, which panics when standard error is closed).
    let builder = tracing_subscriber::fmt()
        .with_env_filter(filter)
        .with_writer(writer)
        .log_internal_errors(false);
    let installed = match format {
        LogFormat::Text => builder.with_ansi(std::io::stderr().is_terminal()).try_init(),
        LogFormat::Json => builder.json().with_ansi(false).try_init(),
    };
    installed.is_ok().then_some(guard)
}
