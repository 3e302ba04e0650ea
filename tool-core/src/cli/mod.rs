//! The `toolsmith` command line, for any binary that links tools.
//!
//! Owns argument parsing (clap) and printing. `main` of a user binary is just
//! `fn main() -> std::process::ExitCode { tool_core::cli::run() }`; every command works on the
//! tools linked into *that* binary.

mod audit;
mod catalog;
mod check;
mod commands;
mod deploy;
mod error;
mod execution;
mod help;
mod lazy;
mod log;
pub use log::LoggingGuard;
mod pins;
mod receipts;
mod run;
mod serve;
mod store;
mod tasks;

pub use catalog::CatalogCommand;
pub use error::CliError;
pub use help::{Shell, bin_name, reference};
pub use log::LogFormat;

use std::io::Write;
use std::process::ExitCode;

use std::path::PathBuf;
use std::sync::{Arc, OnceLock};

use lazy::{LazyAudit, LazyReceipts, LazyStore};

use clap::builder::{PossibleValuesParser, TypedValueParser};
use clap::{CommandFactory, Parser, Subcommand, ValueEnum};
use serde_json::Value;

use crate::budget::OutputBudget;
use crate::dialect::Dialect;
use crate::registry::Registry;
use crate::runtime::{RegistryRef, Runtime, RuntimeError, StoreError, StoreLocation};

/// Who the command line acts as, told in its help.
const OPERATOR: &str = "This command line is the operator's: it lists, reads and decides every caller's waiting calls, \
background tasks, receipts and kept results, whoever made them (`pending`, `call ID --approve`, `resume`, `tasks`, \
`receipts`). Over MCP a caller sees, answers and cancels only its own.";

/// The `toolsmith` command line.
#[derive(Debug, Parser)]
#[command(
    name = "toolsmith",
    about = "List, inspect, export and call the tools linked into this binary",
    after_help = OPERATOR,
    version
)]
pub struct Cli {
    #[command(flatten)]
    global: GlobalArgs,
    #[command(subcommand)]
    command: Command,
}

/// The options every command takes (before or after it). A command line that extends this one
/// with commands of its own flattens these and [`Command`] and builds a [`Cli`] with
/// [`Cli::new`].
#[derive(Debug, Clone, clap::Args)]
pub struct GlobalArgs {
    /// Store of waiting calls, tasks and receipts: a SQLite file or a postgres:// URL.
    ///
    /// `postgres://USER@HOST/DB`: a PostgreSQL database shared by several instances, its schema
    /// migrated on first use, rows tagged with the key in `$TOOLSMITH_STORE_KEY` (the same on every
    /// instance). Or a SQLite file (`FILE` or `sqlite:FILE`; its directory must exist; rows tagged
    /// with the key in `$TOOLSMITH_STORE_KEY`, else in the file next to it with `.key` appended).
    /// Default: `$TOOLSMITH_DATA_DIR/pending.sqlite3`, else `pending.sqlite3` in the user's data
    /// directory under `toolsmith/`, created on demand. Also read from `$TOOLSMITH_STORE`, so a
    /// password in the URL need not show in the process list.
    #[arg(long, global = true, env = "TOOLSMITH_STORE", hide_env_values = true, value_name = "URL_OR_FILE", value_parser = |s: &str| Ok::<_, String>(StoreLocation::parse(s)), help_heading = "Storage")]
    store: Option<StoreLocation>,
    /// Where imported remote tools are pinned: a SQLite file or a postgres:// URL.
    ///
    /// MCP servers, Composio and Arcade tools are pinned by their definition; a pinned tool whose
    /// definition changes is not called until `pins accept`. A PostgreSQL URL keeps them in its
    /// `toolsmith_pins` table. Default: next to a SQLite `--store` (`NAME.pins.sqlite3`), in a
    /// PostgreSQL `--store`'s database; without either, pins last for the process only. Also read
    /// from `$TOOLSMITH_PINS`.
    #[arg(long, global = true, env = "TOOLSMITH_PINS", hide_env_values = true, value_name = "URL_OR_FILE", value_parser = |s: &str| Ok::<_, String>(StoreLocation::parse(s)), help_heading = "Storage")]
    pins: Option<StoreLocation>,
    /// How log lines (on standard error; what is logged follows `RUST_LOG`) are written.
    #[arg(value_name = "FORMAT", long, global = true, value_enum, default_value_t = LogFormat::Text, help_heading = "Logging")]
    log_format: LogFormat,
}

/// The commands (`list`, `schema`, `catalog`, `call`, `resume`, `serve`, `check`, `pending`, the
/// store's, `completions`, `man`).
#[derive(Debug, Subcommand)]
pub enum Command {
    /// List the tools: id, title, description.
    #[command(after_long_help = help::examples::LIST)]
    List {
        /// Print JSON instead of a table.
        #[arg(long)]
        json: bool,
    },
    /// Print a tool's input and output schemas (and suspend, resume, context when set).
    #[command(after_long_help = help::examples::SCHEMA)]
    Schema {
        /// The tool id.
        id: String,
    },
    /// Export the tool catalog in a provider's format (warnings go to standard error).
    #[command(after_long_help = help::examples::CATALOG)]
    Catalog(CatalogCommand),
    /// Call a tool, or decide, complete or replay a pending call.
    ///
    /// Call a tool with JSON arguments and print its result; or approve or decline a pending
    /// call (`call CALL_ID --approve`, `call CALL_ID --decline REASON`); or complete a
    /// client-side tool's call with its result (`call CALL_ID --result 'JSON'`); or replay a
    /// captured model stream (`call --stream FILE.sse --format anthropic`).
    ///
    /// A call that needs approval, suspends or is client-side prints its event and waits in
    /// the store (see `pending`).
    #[command(after_long_help = help::examples::CALL)]
    Call(CallCommand),
    /// Resume a suspended call with data matching its resume schema.
    ///
    /// Resume a suspended call with data matching its resume schema (or answer an approval
    /// with `{"approved": true}` / `{"approved": false, "reason": "…"}`).
    #[command(after_long_help = help::examples::RESUME)]
    Resume {
        /// The pending call's id.
        id: String,
        /// The resume data, as JSON text.
        data: String,
        /// Print every event (display view) as JSON lines instead of the result.
        #[arg(long)]
        events: bool,
        /// Resume it even if an earlier run was interrupted.
        ///
        /// Its process died mid-run, so the tool may already have had its effect: resuming it is an
        /// explicit decision, logged.
        #[arg(long)]
        rerun: bool,
    },
    /// Serve the tools over MCP: `--stdio`, or Streamable HTTP at `http://ADDR/mcp`.
    #[command(after_long_help = help::examples::SERVE)]
    Serve(ServeCommand),
    /// Test every tool against its own schemas with generated inputs.
    ///
    /// Test every tool (or the given ones) against its own schemas: generated valid inputs
    /// and deliberate mistakes, called through the registry; a failure is printed as a ready
    /// `toolsmith call` command.
    #[command(after_long_help = help::examples::CHECK)]
    Check(check::CheckCommand),
    /// List the stored calls: waiting, running, interrupted, damaged.
    ///
    /// List the stored calls of every caller: waiting (for approval, resume data or a
    /// client-side tool's result), running, interrupted
    /// (their process died mid-run: rerun or decline them explicitly), and damaged rows
    /// (skipped, with their id and why).
    #[command(after_long_help = help::examples::PENDING)]
    Pending {
        /// Print JSON instead of a table.
        #[arg(long)]
        json: bool,
        /// Also print a signed approve token for each waiting approval (valid SECONDS).
        ///
        /// Each token (valid SECONDS, default 900) decides its call on any instance with the same
        /// key: `toolsmith call --token TOKEN`, or an MCP client's `tools/call` of the tool with
        /// the token in `_meta["io.toolsmith/decision"]`.
        #[arg(long, value_name = "SECONDS", num_args = 0..=1, default_missing_value = "900")]
        token: Option<u64>,
    },
    /// Operate the store: migrate, status, expire.
    ///
    /// `migrate` its schema, show its `status` (counts by state, the oldest waiting call), or
    /// `expire` what is older than a retention.
    #[command(subcommand, after_long_help = help::examples::STORE)]
    Store(store::StoreCommand),
    /// List, read and cancel the store's durable background tasks.
    ///
    /// The store's durable background tasks (queued by `serve --store`): `list`, `get ID`
    /// (its state, attempts, and its result or error, from any host), `cancel ID`.
    #[command(subcommand, after_long_help = help::examples::TASKS)]
    Tasks(tasks::TasksCommand),
    /// Review pinned remote tools: list, diff, accept.
    ///
    /// Review pinned remote tools: `list`, `diff PROVIDER TOOL`, `accept PROVIDER TOOL`.
    #[command(subcommand, after_long_help = help::examples::PINS)]
    Pins(pins::PinsCommand),
    /// List and clear the receipts of idempotent tools.
    ///
    /// The receipts of tools declared `idempotent`: `list` (key digest, tool, state, age),
    /// `clear KEY` (or `--digest D`) to let its call run once more.
    #[command(subcommand, after_long_help = help::examples::RECEIPTS)]
    Receipts(receipts::ReceiptsCommand),
    /// List the audit trail of every decision.
    ///
    /// The audit trail of every decision (approve, reject, edit, resume, result, token, rerun,
    /// task cancelled, receipt cleared, pin accepted, call expired): `list` with who, when,
    /// which call or tool, and what; never argument values. Rows cannot be edited.
    #[command(subcommand, after_long_help = help::examples::AUDIT)]
    Audit(audit::AuditCommand),
    /// Print a shell completion script (bash, zsh or fish) for this binary.
    ///
    /// The script completes every command and option of this binary as it is run (its file
    /// name), including the options a command line that extends this one adds. Write it where
    /// the shell loads completions from.
    #[command(after_long_help = help::examples::COMPLETIONS)]
    Completions {
        /// The shell.
        #[arg(value_enum)]
        shell: Shell,
    },
    /// Print the man page (roff) of this binary.
    #[command(after_long_help = help::examples::MAN)]
    Man,
}

/// The arguments of `call`.
#[derive(Debug, clap::Args)]
pub struct CallCommand {
    /// The tool id (or, with --approve/--decline/--result, the pending call's id).
    #[arg(required_unless_present = "stream")]
    id: Option<String>,
    /// The arguments, as JSON text.
    #[arg(default_value = "{}")]
    args: String,
    /// Approve the pending call ID and run it.
    #[arg(long, conflicts_with_all = ["decline", "stream"])]
    approve: bool,
    /// With --approve: run it even if an earlier run was interrupted.
    ///
    /// Its process died mid-run, so the tool may already have had its effect: running it again is
    /// an explicit decision, logged.
    #[arg(long, requires = "approve")]
    rerun: bool,
    /// Decline the pending call ID with this reason (the tool never runs).
    #[arg(long, value_name = "REASON", conflicts_with = "stream")]
    decline: Option<String>,
    /// Complete a client-side tool's pending call ID with this result.
    ///
    /// A client-side tool has no body: the application answers its calls. The result is JSON text
    /// matching its output schema.
    #[arg(long, value_name = "JSON", conflicts_with_all = ["approve", "decline", "stream"])]
    result: Option<String>,
    /// Approve the pending call ID with these arguments instead (an edit).
    ///
    /// JSON text, validated like the model's arguments; the call runs with them.
    #[arg(long, value_name = "JSON", conflicts_with_all = ["approve", "decline", "result", "stream"])]
    edit: Option<String>,
    /// Print a signed decision token instead of deciding (valid SECONDS).
    ///
    /// With --approve, --decline or --edit. The token is bound to the call (valid SECONDS, default
    /// 900); `--token` applies it on any instance with the same key (`TOOLSMITH_DECISION_KEY`, or
    /// derived from `TOOLSMITH_STORE_KEY`).
    #[arg(long, value_name = "SECONDS", num_args = 0..=1, default_missing_value = "900", conflicts_with_all = ["rerun", "stream"])]
    sign: Option<u64>,
    /// Decide a pending call with a signed decision token (from --sign).
    #[arg(long, value_name = "TOKEN", conflicts_with_all = ["approve", "decline", "result", "edit", "stream"])]
    token: Option<String>,
    /// Replay a captured model stream (server-sent events) and run its calls.
    ///
    /// The captured response goes through the tools' hooks; every display event is printed as a
    /// JSON line.
    #[arg(long, value_name = "FILE.sse", requires = "format")]
    stream: Option<PathBuf>,
    /// The provider format of --stream.
    #[arg(long, value_parser = DialectArg::parser(Dialect::supports_streaming))]
    format: Option<DialectArg>,
    /// Print every event of the call (display view) as JSON lines instead of the result.
    #[arg(long)]
    events: bool,
    /// The request context, as a JSON object.
    #[arg(value_name = "JSON", long)]
    context: Option<String>,
    /// Print the model output (from `to_model_output`) alongside the raw value.
    #[arg(long)]
    model_output: bool,
    /// Print the tool-result message this provider takes.
    ///
    /// Instead of the raw value: errors included, as the model would see them.
    #[arg(long = "as", value_parser = DialectArg::parser(Dialect::supports_tool_results))]
    result_as: Option<DialectArg>,
    /// The most the model sees of a result (`16KiB`) for tools that set none.
    ///
    /// `16KiB`, `64kB` or bytes. Over it, --as and --model-output show the result's head and tail
    /// with a marker.
    #[arg(long, value_name = "SIZE", value_parser = budget_arg)]
    max_model_output: Option<OutputBudget>,
}

/// A `--max-model-output` size.
fn budget_arg(text: &str) -> Result<OutputBudget, String> {
    OutputBudget::parse(text).map_err(|e| e.to_string())
}

/// The arguments of `serve`.
#[derive(Debug, clap::Args)]
pub struct ServeCommand {
    /// Serve on standard input and output.
    #[arg(long, conflicts_with = "http", required_unless_present = "http", help_heading = "Server")]
    stdio: bool,
    /// Serve Streamable HTTP on this address (path `/mcp`), e.g. `127.0.0.1:8931`.
    #[arg(long, value_name = "ADDR", help_heading = "Server")]
    http: Option<std::net::SocketAddr>,
    /// Require `Authorization: Bearer <token>`, the token read from this environment variable.
    #[arg(long, value_name = "VAR", help_heading = "Authorization")]
    auth_token_env: Option<String>,
    /// Accept this `Origin` too (local origins always are; `*` as the port matches any).
    #[arg(long = "allow-origin", value_name = "ORIGIN", help_heading = "Authorization")]
    allow_origins: Vec<String>,
    /// Accept this `Host` name too (local names always are).
    #[arg(long = "allow-host", value_name = "HOST", help_heading = "Authorization")]
    allow_hosts: Vec<String>,
    /// Calls that may run at once per session.
    ///
    /// With `--stateless`, per request: no limit across requests.
    #[arg(value_name = "N", long, default_value_t = 16, help_heading = "Server")]
    max_concurrent_calls: usize,
    /// Tools per `tools/list` page.
    #[arg(value_name = "N", long, default_value_t = 100, help_heading = "Server")]
    page_size: usize,
    /// Largest accepted HTTP request body, in bytes.
    #[arg(value_name = "BYTES", long, default_value_t = 4 << 20, help_heading = "HTTP limits")]
    max_body_bytes: usize,
    /// The request context every call gets, as a JSON object.
    #[arg(value_name = "JSON", long, help_heading = "Server")]
    context: Option<String>,
    /// Seconds a call that asked its client something waits for the answer.
    ///
    /// A tool that asks its client something mid-call (MCP 2026-07-28) waits this long for the
    /// client to come back with the answer.
    #[arg(long, default_value_t = 600, value_name = "SECONDS", help_heading = "Server")]
    input_timeout: u64,
    /// HTTP without sessions, for load-balanced or serverless deployments.
    ///
    /// No `Mcp-Session-Id`, each request served on its own, no GET stream. Clients before MCP
    /// 2026-07-28 then cannot be asked anything mid-call: approval and suspension answer with the
    /// waiting call's id (`toolsmith pending`), and a tool's elicitation or sampling fails.
    #[arg(long, conflicts_with = "stdio", help_heading = "Server")]
    stateless: bool,
    /// Answer single-message calls as `application/json` instead of SSE.
    ///
    /// A call that reports progress or logs first still streams. Requires `--stateless`.
    #[arg(long, requires = "stateless", help_heading = "Server")]
    json_response: bool,
    /// List deferred tools (`#[tool(defer_loading)]`) only once a `search_tools` call finds them.
    ///
    /// `tools/list` shows the other tools and `search_tools`; a search loads what it finds for
    /// the session (which hears `list_changed`). Without sessions, a request names the tools it
    /// loaded in `_meta["io.toolsmith/loaded"]`.
    #[arg(long, help_heading = "Server")]
    tool_search: bool,
    /// With --tool-search: defer every tool but these ids (comma-separated; `""` defers all).
    ///
    /// Whatever the tools declare (`#[tool(defer_loading)]`), as `catalog --defer-all-except`.
    #[arg(long, value_name = "IDS", value_delimiter = ',', requires = "tool_search", help_heading = "Server")]
    defer_all_except: Option<Vec<String>>,
    /// The most the model sees of a result (`16KiB`) for tools that set none.
    ///
    /// `16KiB`, `64kB` or bytes. Over it, the content keeps the result's head and tail and links
    /// the full result (`toolsmith://results/<call-id>`, readable by the calling session).
    #[arg(long, value_name = "SIZE", value_parser = budget_arg, help_heading = "Server")]
    max_model_output: Option<OutputBudget>,
    /// Expire stored calls, tasks and receipts older than this (`7d`, `12h`).
    ///
    /// Also kept results past their time to live; checked periodically. Expired calls are removed
    /// without running (each is logged); see `toolsmith store expire`. Default: kept until
    /// resolved.
    #[arg(long, value_name = "DURATION", value_parser = crate::runtime::parse_retention, help_heading = "Storage")]
    retention: Option<std::time::Duration>,
    #[command(flatten)]
    limits: Box<serve::LimitArgs>,
    #[command(flatten)]
    auth: Box<serve::AuthArgs>,
    #[command(flatten)]
    deploy: Box<deploy::DeployArgs>,
    #[command(flatten)]
    execution: execution::ExecutionArgs,
    #[command(flatten)]
    tasks: tasks::TaskArgs,
}

/// A provider as the command line names it, for `catalog --format`, `call --stream --format`
/// and `call --as`; each option accepts the names whose dialect can do what it asks.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
enum DialectArg {
    /// OpenAI Chat Completions.
    Openai,
    /// OpenAI Responses.
    OpenaiResponses,
    /// Anthropic Messages.
    Anthropic,
    /// Gemini `{functionDeclarations}` (`--gemini-schema` picks the schema field).
    Gemini,
    /// MCP `tools/list` and `tools/call` results.
    Mcp,
    /// Toolsmith's own versioned catalog (every dialect, metadata, content hashes).
    Toolsmith,
}

impl DialectArg {
    /// The dialect named (Gemini's in the `gemini` flavour); `None` for `toolsmith`, which is
    /// no provider's.
    fn dialect(self, gemini: GeminiSchema) -> Option<Dialect> {
        match self {
            DialectArg::Openai => Some(Dialect::OpenAiChat),
            DialectArg::OpenaiResponses => Some(Dialect::OpenAiResponses),
            DialectArg::Anthropic => Some(Dialect::Anthropic),
            DialectArg::Gemini => Some(match gemini {
                GeminiSchema::Openapi => Dialect::GeminiOpenApi,
                GeminiSchema::JsonSchema => Dialect::GeminiJsonSchema,
            }),
            DialectArg::Mcp => Some(Dialect::Mcp),
            DialectArg::Toolsmith => None,
        }
    }

    /// A parser of the names whose dialect has the capability `can`.
    fn parser(can: fn(Dialect) -> bool) -> impl TypedValueParser<Value = DialectArg> {
        let names = DialectArg::value_variants()
            .iter()
            .filter(|arg| arg.dialect(GeminiSchema::JsonSchema).is_some_and(can))
            .filter_map(ValueEnum::to_possible_value);
        PossibleValuesParser::new(names).try_map(|name| DialectArg::from_str(&name, false))
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
enum GeminiSchema {
    /// `parameters` (OpenAPI 3.0 subset).
    Openapi,
    /// `parametersJsonSchema` (JSON Schema).
    JsonSchema,
}

/// Parses the process arguments and runs against [`Registry::global`].
pub fn run() -> ExitCode {
    run_from(std::env::args_os())
}

/// Parses the given arguments (the first is the program name) and runs against
/// [`Registry::global`], writing to standard output and standard error.
pub fn run_from<I, T>(args: I) -> ExitCode
where
    I: IntoIterator<Item = T>,
    T: Into<std::ffi::OsString> + Clone,
{
    run_parsed(args, |cli: Cli, mut out| async move {
        match Registry::try_global() {
            Ok(registry) => execute(cli, RegistryRef::Static(registry), &mut out).await,
            Err(e) => {
                eprintln!("error: {e}");
                Ok(ExitCode::from(2))
            }
        }
    })
}

/// Parses the given arguments as `C` and runs `exec` on a multi-threaded Tokio runtime with
/// standard output: a bad command line prints clap's message and exits with 2 (help and
/// version exit with 0), an `Err` from `exec` is printed as `error: …` (its `Display`, e.g. a
/// [`CliError`]'s) and exits with 1. A
/// process started as a tool worker ([`crate::isolate::worker_main`]) runs its one call instead. What
/// [`run_from`] does for [`Cli`], for a command line that extends it (one that flattens
/// [`Cli`] and adds its own options, then calls [`execute`]).
pub fn run_parsed<C, I, T, F, Fut, E>(args: I, exec: F) -> ExitCode
where
    C: Parser,
    I: IntoIterator<Item = T>,
    T: Into<std::ffi::OsString> + Clone,
    F: FnOnce(C, std::io::Stdout) -> Fut,
    Fut: std::future::Future<Output = Result<ExitCode, E>>,
    E: std::fmt::Display,
{
    crate::isolate::worker_main();
    let args: Vec<std::ffi::OsString> = args.into_iter().map(Into::into).collect();
    help::set_bin_name(args.first().map(|a| a.as_os_str()));
    let mut command = C::command();
    let clap_failed = |e: clap::Error| {
        let _ = e.print();
        if e.use_stderr() { ExitCode::from(2) } else { ExitCode::SUCCESS }
    };
    let matches = match command.try_get_matches_from_mut(args) {
        Ok(matches) => matches,
        Err(e) => return clap_failed(e),
    };
    // Completions and the man page describe the whole command line `C`, with every option an
    // extending command line adds; they need no runtime, store or registry.
    let generated = match matches.subcommand() {
        Some(("completions", sub)) => {
            let shell = sub.get_one::<Shell>("shell").copied().unwrap_or(Shell::Bash);
            Some(help::completions(shell, &mut command, &mut std::io::stdout()))
        }
        Some(("man", _)) => Some(help::man(command.clone(), &mut std::io::stdout())),
        _ => None,
    };
    if let Some(written) = generated {
        return match written {
            Ok(()) => ExitCode::SUCCESS,
            Err(e) => {
                eprintln!("error: cannot write the output: {e}");
                ExitCode::FAILURE
            }
        };
    }
    let parsed = match C::from_arg_matches(&matches) {
        Ok(c) => c,
        Err(e) => return clap_failed(e.format(&mut command)),
    };
    let runtime = match tokio::runtime::Builder::new_multi_thread().enable_all().build() {
        Ok(rt) => rt,
        Err(e) => {
            eprintln!("error: cannot start the async runtime: {e}");
            return ExitCode::FAILURE;
        }
    };
    // Not locked for the whole command: `serve --stdio` writes through Tokio's stdout.
    let answer = runtime.block_on(exec(parsed, std::io::stdout()));
    // A blocking tool body that never checks for cancellation must not keep the process alive
    // once the command has its answer: wait for such leftovers a moment, then exit anyway.
    runtime.shutdown_timeout(std::time::Duration::from_secs(2));
    match answer {
        Ok(code) => code,
        Err(message) => {
            let _ = writeln!(std::io::stderr(), "error: {}", help::as_run(&message.to_string()));
            ExitCode::FAILURE
        }
    }
}

fn pretty(v: &Value) -> String {
    serde_json::to_string_pretty(v).unwrap_or_else(|_| v.to_string())
}

/// Runs a parsed command against a registry, writing results to `out`; an error says what
/// went wrong (its `Display` is the message `toolsmith` prints).
///
/// Installs the process's log subscriber first, unless one is installed already (see
/// [`LogFormat`]).
pub async fn execute(cli: Cli, registry: impl Into<RegistryRef>, out: &mut dyn Write) -> Result<ExitCode, CliError> {
    let _log = log::init(cli.global.log_format, matches!(cli.command, Command::Serve(_)));
    // `serve --store` is an instance: its store is opened now, and its background tasks are
    // durable (queued in the store, run by the instances' workers).
    let opened = match (&cli.command, &cli.global.store) {
        (Command::Serve(serve), Some(location)) => Some(serve.tasks.open_instance(location).await?),
        _ => None,
    };
    let mut builder = match &opened {
        Some(opened) => Runtime::builder(registry).shared_store(opened.pending.clone()),
        None => {
            let lazy = Arc::new(LazyStore {
                location: cli.global.store.clone(),
                store: tokio::sync::OnceCell::new(),
            });
            // The receipts are the store's too (an idempotent call run again by `--rerun` finds
            // the receipt its first run left in the file or database), opened with it; so is the
            // audit trail every decision made here is appended to.
            let receipts = Arc::new(LazyReceipts {
                store: lazy.clone(),
                memory: OnceLock::new(),
            });
            let audit = Arc::new(LazyAudit { store: lazy.clone() });
            Runtime::builder(registry)
                .shared_store(lazy)
                .receipt_store(receipts)
                .audit_store(audit)
        }
    };
    if let (Some(opened), Command::Serve(serve)) = (opened, &cli.command) {
        builder = builder.task_store(opened.tasks, serve.tasks.options());
    }
    let runtime = builder.build();
    // The store's label in its errors and in serve's log lines: the option that configured it.
    let store_flag = cli.global.store.as_ref().map(store_flag);
    if let (Some(flag), Command::Serve(_)) = (&store_flag, &cli.command) {
        crate::runtime::name_store(flag.clone());
    }
    let done = match cli.command {
        Command::List { json } => commands::list(runtime.registry(), json, out),
        Command::Schema { id } => commands::schema(runtime.registry(), &id, out),
        Command::Catalog(catalog) => catalog::catalog(runtime.registry(), catalog, out),
        Command::Call(call) => run::call(&runtime, call, out).await,
        Command::Resume { id, data, events, rerun } => run::resume(&runtime, (&id, &data), rerun, events, out).await,
        Command::Serve(serve) => serve::serve(&runtime, serve).await,
        Command::Pending { json, token } => commands::pending(&runtime, json, token, out).await,
        Command::Check(command) => check::check(runtime.registry(), command, out).await,
        Command::Store(command) => store::run(command, cli.global.store.as_ref(), out).await,
        Command::Tasks(command) => tasks::run(command, cli.global.store.as_ref(), out).await,
        Command::Pins(command) => {
            // An acceptance is recorded in `--store`'s audit trail, else in a PostgreSQL `--pins`
            // database's (its own store), else in the default store's.
            let pg_pins = cli.global.pins.clone().filter(|p| matches!(p, StoreLocation::Postgres(_)));
            let audit_at = cli.global.store.clone().or(pg_pins);
            pins::pins((cli.global.pin_store().await?, audit_at.as_ref()), command, out).await
        }
        Command::Receipts(command) => receipts::run(command, cli.global.store.as_ref(), out).await,
        Command::Audit(command) => audit::run(command, cli.global.store.as_ref(), out).await,
        // What `run_parsed` answers for the whole command line; here, for this one's.
        Command::Completions { shell } => {
            help::completions(shell, &mut Cli::command(), out).map_err(CliError::Output)?;
            Ok(ExitCode::SUCCESS)
        }
        Command::Man => {
            help::man(Cli::command(), out).map_err(CliError::Output)?;
            Ok(ExitCode::SUCCESS)
        }
    };
    // A store that failed while the command used it is named with the option that configured it.
    match (done, store_flag) {
        (Err(CliError::Store(source @ StoreError::Storage { .. })), Some(flag))
        | (Err(CliError::Runtime(RuntimeError::Store(source @ StoreError::Storage { .. }))), Some(flag)) => {
            Err(CliError::StoreAt { flag, source })
        }
        (done, _) => done,
    }
}

/// How the user configured `location`, for errors and logs: `--store <where>` or
/// `TOOLSMITH_STORE=<where>` (when the environment gave it), the password hidden.
pub(super) fn store_flag(location: &StoreLocation) -> String {
    let from_env = std::env::var("TOOLSMITH_STORE").is_ok_and(|v| StoreLocation::parse(&v) == *location);
    match from_env {
        true => format!("TOOLSMITH_STORE={}", location.shown()),
        false => format!("--store {}", location.shown()),
    }
}

/// The title shown in listings: the tool's title, else its MCP title, else `-`.
fn title_of(spec: &crate::ToolSpec) -> &str {
    spec.title.as_deref().or(spec.presentation.mcp.title.as_deref()).unwrap_or("-")
}

impl Cli {
    /// A command line from its parts (for a command line that extends this one).
    pub fn new(global: GlobalArgs, command: Command) -> Cli {
        Cli { global, command }
    }

    /// Parses arguments (the first is the program name).
    pub fn try_parse_args<I, T>(args: I) -> Result<Cli, clap::Error>
    where
        I: IntoIterator<Item = T>,
        T: Into<std::ffi::OsString> + Clone,
    {
        Cli::try_parse_from(args)
    }
}
