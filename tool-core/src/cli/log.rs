//! Where the command line's logs go: `tracing-subscriber`, on standard error.
//!
//! Owns [`LogFormat`] (`--log-format`) and [`init`]. `RUST_LOG` picks what is logged (the
//! `tracing-subscriber` `EnvFilter` syntax, e.g. `warn` or `tool_core=debug`); without it,
//! `serve` logs warnings (refused requests, failing and interrupted calls) and every other
//! command only errors, since it prints its own. Logs never go to standard output: `serve
//! --stdio` speaks MCP there. `rmcp` logs whole messages (arguments included) at debug and
//! trace, so it is held at info when `RUST_LOG` asks for more, unless it names `rmcp`. Lines
//! are written by a thread of their own (`tracing-appender`): a standard error that is not
//! read drops lines (up to a bounded backlog) instead of stalling the server. Spans are exported
//! over OTLP beside the lines when the `OTEL_*` variables ask for it (`crate::otel`).

use std::io::IsTerminal;

use clap::ValueEnum;
use tracing_appender::non_blocking::{NonBlockingBuilder, WorkerGuard};
use tracing_subscriber::filter::LevelFilter;
use tracing_subscriber::layer::SubscriberExt;
use tracing_subscriber::util::SubscriberInitExt;
use tracing_subscriber::{EnvFilter, Layer};

/// How log lines are written.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, ValueEnum)]
pub enum LogFormat {
    /// Human-readable lines (coloured on a terminal).
    #[default]
    Text,
    /// One JSON object per line (`timestamp`, `level`, `fields`, `target`).
    Json,
}

/// The filter when `RUST_LOG` is not set (or not valid). A server also says (at info) when its
/// store is back after an outage, as it said (at warn) that the store failed.
fn default_filter(serving: bool) -> &'static str {
    if serving { "warn,tool_core::runtime::settle=info" } else { "error" }
}

/// Log lines waiting for standard error at most; past it lines are dropped.
const BACKLOG: usize = 16_384;

/// What keeps logging and span export going: dropping it writes out the log lines left and
/// flushes the spans not exported yet.
pub(super) struct LogGuard {
    _lines: WorkerGuard,
    _spans: Option<crate::otel::OtelGuard>,
}

/// Installs the process's log subscriber, once (later calls, or a subscriber the embedding
/// program installed first, leave it as it is), with span export over OTLP when the
/// `OTEL_*` variables ask for it (see [`crate::otel`]). `serving`: the command is `serve`.
/// Keep the guard while logging.
pub(super) fn init(format: LogFormat, serving: bool) -> Option<LogGuard> {
    let spec = std::env::var("RUST_LOG").unwrap_or_default();
    let mut filter = match spec.trim() {
        "" => EnvFilter::new(default_filter(serving)),
        spec => EnvFilter::try_new(spec).unwrap_or_else(|e| {
            eprintln!("warning: RUST_LOG={spec:?} is not a valid filter ({e}); logging at the default level");
            EnvFilter::new(default_filter(serving))
        }),
    };
    let verbose = filter.max_level_hint().is_none_or(|most| most > LevelFilter::INFO);
    if verbose
        && !spec.contains("rmcp")
        && let Ok(cap) = "rmcp=info".parse()
    {
        filter = filter.add_directive(cap);
    }
    let (writer, guard) = NonBlockingBuilder::default()
        .lossy(true)
        .buffered_lines_limit(BACKLOG)
        .thread_name("toolsmith-log")
        .finish(std::io::stderr());
    // A closed standard error loses the logs, nothing else (the default would report the
    // failed write with `eprintln!`, which panics when standard error is closed).
    let lines = tracing_subscriber::fmt::layer().with_writer(writer).log_internal_errors(false);
    let lines = match format {
        LogFormat::Text => lines.with_ansi(std::io::stderr().is_terminal()).boxed(),
        LogFormat::Json => lines.json().with_ansi(false).boxed(),
    };
    // Each layer has its own filter: `RUST_LOG` picks the lines, the export its own spans.
    let (spans, spans_guard) = match crate::otel::layer_from_env() {
        Ok(Some((layer, guard))) => (Some(layer), Some(guard)),
        Ok(None) => (None, None),
        Err(e) => {
            eprintln!("warning: {e}; spans are not exported");
            (None, None)
        }
    };
    let installed = tracing_subscriber::registry()
        .with(lines.with_filter(filter))
        .with(spans)
        .try_init();
    installed.is_ok().then_some(LogGuard {
        _lines: guard,
        _spans: spans_guard,
    })
}

/// Keeps the log subscriber [`GlobalArgs::init_logging`](super::GlobalArgs::init_logging) installed writing; dropping it flushes
/// the lines waiting.
#[must_use = "dropping the guard stops the log lines"]
pub struct LoggingGuard(#[allow(dead_code)] LogGuard);

impl std::fmt::Debug for LoggingGuard {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("LoggingGuard").finish_non_exhaustive()
    }
}

impl super::GlobalArgs {
    /// Installs the process's log subscriber now, as [`execute`](super::execute) does (once: later calls, and
    /// `execute`'s own, leave it as it is), for a command line that works before `execute`
    /// (connecting imported servers, logging in). `serving`: the command is `serve`. Keep the
    /// guard while logging.
    pub fn init_logging(&self, serving: bool) -> Option<LoggingGuard> {
        init(self.log_format, serving).map(LoggingGuard)
    }
}
