//! The `toolsmith` command line, for any binary that links tools.
//!
//! Owns argument parsing (clap) and printing. `main` of a user binary is just
//! `fn main() -> std::process::ExitCode { tool_core::cli::run() }`; every command works on the
//! tools linked into *that* binary.

use std::io::Write;
use std::process::ExitCode;

use std::path::PathBuf;
use std::sync::{Arc, OnceLock};

use clap::builder::{PossibleValuesParser, TypedValueParser};
use clap::{Parser, Subcommand, ValueEnum};
use serde_json::{json, Value};

use crate::call::CallOptions;
use crate::catalog::{Catalog, Strictness};
use crate::context::CallData;
use crate::dialect::Dialect;
use crate::error::ToolError;
use crate::model_output::ModelOutput;
use crate::registry::Registry;
use crate::runtime::{EventStream, Outcome, PendingCall, PendingStore, RegistryRef, Runtime, SqliteStore, StoreError, Waiting};
use crate::spec::TransformTarget;

/// The `toolsmith` command line.
#[derive(Debug, Parser)]
#[command(
    name = "toolsmith",
    about = "List, inspect, export and call the tools linked into this binary",
    version
)]
pub struct Cli {
    /// The SQLite file where calls waiting for approval or resume data are kept (default:
    /// `$TOOLSMITH_DATA_DIR/pending.sqlite3`, else `pending.sqlite3` in the user's data
    /// directory under `toolsmith/`).
    #[arg(long, global = true)]
    store: Option<PathBuf>,
    #[command(subcommand)]
    command: Command,
}

#[derive(Debug, Subcommand)]
enum Command {
    /// List the tools: id, title, description.
    List {
        /// Print JSON instead of a table.
        #[arg(long)]
        json: bool,
    },
    /// Print a tool's input and output schemas (and suspend, resume, context when set).
    Schema {
        /// The tool id.
        id: String,
    },
    /// Export the tool catalog in a provider's format (warnings go to standard error).
    Catalog {
        /// The format.
        #[arg(long, value_enum, default_value_t = DialectArg::Mcp)]
        format: DialectArg,
        /// Export every tool strict (a tool that cannot be is an error, never a downgrade).
        #[arg(long)]
        strict: bool,
        /// Only tools with this tag (repeatable: a tool needs any of them).
        #[arg(long = "tag")]
        tags: Vec<String>,
        /// Gemini only: `parameters` in the OpenAPI 3.0 subset, or `parametersJsonSchema`.
        #[arg(long, value_enum, default_value_t = GeminiSchema::JsonSchema)]
        gemini_schema: GeminiSchema,
        /// The catalog's name (recorded in the `toolsmith` format).
        #[arg(long, default_value = "default")]
        name: String,
        /// The catalog's version (recorded in the `toolsmith` format).
        #[arg(long = "catalog-version", default_value = "0.0.0")]
        catalog_version: String,
        /// Write to this file instead of standard output.
        #[arg(long)]
        out: Option<std::path::PathBuf>,
    },
    /// Call a tool with JSON arguments and print its result; or approve or decline a pending
    /// call (`call CALL_ID --approve`, `call CALL_ID --decline REASON`); or replay a captured
    /// model stream (`call --stream FILE.sse --format anthropic`).
    ///
    /// A call that needs approval or suspends prints its event and waits in the store (see
    /// `pending`).
    Call {
        /// The tool id (or, with --approve/--decline, the pending call's id).
        #[arg(required_unless_present = "stream")]
        id: Option<String>,
        /// The arguments, as JSON text.
        #[arg(default_value = "{}")]
        args: String,
        /// Approve the pending call ID and run it.
        #[arg(long, conflicts_with_all = ["decline", "stream"])]
        approve: bool,
        /// Decline the pending call ID with this reason (the tool never runs).
        #[arg(long, value_name = "REASON", conflicts_with = "stream")]
        decline: Option<String>,
        /// Replay a captured model response (server-sent events) through the tools' hooks and
        /// run its calls, printing every display event as a JSON line.
        #[arg(long, value_name = "FILE.sse", requires = "format")]
        stream: Option<PathBuf>,
        /// The provider format of --stream.
        #[arg(long, value_parser = DialectArg::parser(Dialect::supports_streaming))]
        format: Option<DialectArg>,
        /// Print every event of the call (display view) as JSON lines instead of the result.
        #[arg(long)]
        events: bool,
        /// The request context, as a JSON object.
        #[arg(long)]
        context: Option<String>,
        /// Print the model output (from `to_model_output`) alongside the raw value.
        #[arg(long)]
        model_output: bool,
        /// Print the tool-result message a provider takes (errors included, as the model
        /// would see them) instead of the raw value.
        #[arg(long = "as", value_parser = DialectArg::parser(Dialect::supports_tool_results))]
        result_as: Option<DialectArg>,
    },
    /// Resume a suspended call with data matching its resume schema (or answer an approval
    /// with `{"approved": true}` / `{"approved": false, "reason": "…"}`).
    Resume {
        /// The pending call's id.
        id: String,
        /// The resume data, as JSON text.
        data: String,
        /// Print every event (display view) as JSON lines instead of the result.
        #[arg(long)]
        events: bool,
    },
    /// Serve the tools over MCP: `--stdio`, or Streamable HTTP at `http://ADDR/mcp`.
    Serve {
        /// Serve on standard input and output.
        #[arg(long, conflicts_with = "http", required_unless_present = "http")]
        stdio: bool,
        /// Serve Streamable HTTP on this address (path `/mcp`), e.g. `127.0.0.1:8931`.
        #[arg(long, value_name = "ADDR")]
        http: Option<std::net::SocketAddr>,
        /// Require `Authorization: Bearer <token>`, the token read from this environment variable.
        #[arg(long, value_name = "VAR")]
        auth_token_env: Option<String>,
        /// Accept this `Origin` too (local origins always are; `*` as the port matches any).
        #[arg(long = "allow-origin", value_name = "ORIGIN")]
        allow_origins: Vec<String>,
        /// Accept this `Host` name too (local names always are).
        #[arg(long = "allow-host", value_name = "HOST")]
        allow_hosts: Vec<String>,
        /// Calls that may run at once per session (with `--stateless`, per request: no limit
        /// across requests).
        #[arg(long, default_value_t = 16)]
        max_concurrent_calls: usize,
        /// Tools per `tools/list` page.
        #[arg(long, default_value_t = 100)]
        page_size: usize,
        /// Largest accepted HTTP request body, in bytes.
        #[arg(long, default_value_t = 4 << 20)]
        max_body_bytes: usize,
        /// The request context every call gets, as a JSON object.
        #[arg(long)]
        context: Option<String>,
        /// Seconds a call whose tool asked the client something mid-call (MCP 2026-07-28)
        /// waits for the client to come back with the answer.
        #[arg(long, default_value_t = 600, value_name = "SECONDS")]
        input_timeout: u64,
        /// HTTP without sessions, for load-balanced or serverless deployments: no
        /// `Mcp-Session-Id`, each request served on its own, no GET stream. Clients before
        /// MCP 2026-07-28 then cannot be asked anything mid-call: approval and suspension
        /// answer with the waiting call's id (`toolsmith pending`), and a tool's elicitation or
        /// sampling fails.
        #[arg(long, conflicts_with = "stdio")]
        stateless: bool,
        /// Answer a call whose first message is its result as `application/json` instead of
        /// an SSE stream (one that reports progress or logs first still streams). Requires
        /// `--stateless`.
        #[arg(long, requires = "stateless")]
        json_response: bool,
    },
    /// List the calls waiting for approval or resume data.
    Pending {
        /// Print JSON instead of a table.
        #[arg(long)]
        json: bool,
    },
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
/// version exit with 0), an `Err` from `exec` is printed as `error: …` and exits with 1. What
/// [`run_from`] does for [`Cli`], for a command line that extends it (one that flattens
/// [`Cli`] and adds its own options, then calls [`execute`]).
pub fn run_parsed<C, I, T, F, Fut>(args: I, exec: F) -> ExitCode
where
    C: Parser,
    I: IntoIterator<Item = T>,
    T: Into<std::ffi::OsString> + Clone,
    F: FnOnce(C, std::io::Stdout) -> Fut,
    Fut: std::future::Future<Output = Result<ExitCode, String>>,
{
    let parsed = match C::try_parse_from(args) {
        Ok(c) => c,
        Err(e) => {
            let _ = e.print();
            return if e.use_stderr() { ExitCode::from(2) } else { ExitCode::SUCCESS };
        }
    };
    let runtime = match tokio::runtime::Builder::new_multi_thread().enable_all().build() {
        Ok(rt) => rt,
        Err(e) => {
            eprintln!("error: cannot start the async runtime: {e}");
            return ExitCode::FAILURE;
        }
    };
    // Not locked for the whole command: `serve --stdio` writes through Tokio's stdout.
    match runtime.block_on(exec(parsed, std::io::stdout())) {
        Ok(code) => code,
        Err(message) => {
            let _ = writeln!(std::io::stderr(), "error: {message}");
            ExitCode::FAILURE
        }
    }
}

fn pretty(v: &Value) -> String {
    serde_json::to_string_pretty(v).unwrap_or_else(|_| v.to_string())
}

/// The pending-call store, opened on first use (plain calls never touch the disk).
struct LazyStore {
    path: Option<PathBuf>,
    store: OnceLock<Result<SqliteStore, String>>,
}

impl LazyStore {
    fn get(&self) -> Result<&SqliteStore, StoreError> {
        self.store
            .get_or_init(|| {
                let path = self
                    .path
                    .clone()
                    .or_else(SqliteStore::default_path)
                    .ok_or("no data directory is known; pass --store FILE or set TOOLSMITH_DATA_DIR")?;
                SqliteStore::open(&path).map_err(|e| format!("{}: {e}", path.display()))
            })
            .as_ref()
            .map_err(|e| StoreError::Storage(e.clone()))
    }
}

impl PendingStore for LazyStore {
    fn save(&self, call: &PendingCall) -> Result<(), StoreError> {
        self.get()?.save(call)
    }
    fn claim(&self, id: &str) -> Result<Option<PendingCall>, StoreError> {
        self.get()?.claim(id)
    }
    fn release(&self, id: &str) -> Result<(), StoreError> {
        self.get()?.release(id)
    }
    fn remove(&self, id: &str) -> Result<(), StoreError> {
        // Resolving a call that was never stored needs no store.
        match self.store.get() {
            None => Ok(()),
            Some(_) => self.get()?.remove(id),
        }
    }
    fn get(&self, id: &str) -> Result<Option<PendingCall>, StoreError> {
        LazyStore::get(self)?.get(id)
    }
    fn list(&self) -> Result<Vec<PendingCall>, StoreError> {
        self.get()?.list()
    }
}

/// Prints events as they come (with `--events`) and returns how the run ended: the result
/// (a background task's real one), the error, or the call it waits on.
async fn drain(mut events: EventStream, print: bool, out: &mut dyn Write) -> Result<Option<Outcome>, String> {
    while let Some(e) = events.next().await {
        if print {
            if let Some(view) = e.view(TransformTarget::Display) {
                writeln!(out, "{}", serde_json::to_string(view).unwrap_or_default())
                    .map_err(|e| format!("cannot write the output: {e}"))?;
            }
        }
    }
    Ok(events.take_outcome())
}

/// Prints what a call ended with, like a plain call would.
fn conclude(outcome: Option<Outcome>, model_output: bool, result_as: Option<DialectArg>, out: &mut dyn Write) -> Result<ExitCode, String> {
    let io = |e: std::io::Error| format!("cannot write the output: {e}");
    let waiting = |w: &Waiting, out: &mut dyn Write, hint: String| {
        let view = w.display().cloned().unwrap_or_else(|| w.event.raw.shown());
        writeln!(out, "{}", pretty(&serde_json::to_value(view).unwrap_or_default())).map_err(io)?;
        eprintln!("{hint}");
        Ok(ExitCode::SUCCESS)
    };
    let ended = match outcome.ok_or("the call ended without a result")? {
        Outcome::Done(output) => Ok(output),
        Outcome::Declined { reason } => Ok(Outcome::declined_output(&reason)),
        Outcome::Failed(error) => Err(error),
        Outcome::Backgrounded(task) => Err(ToolError::new(format!("background task {} ended without a result", task.task_id))),
        Outcome::AwaitingApproval(w) => {
            let id = w.id();
            let hint =
                format!("waiting for approval: `toolsmith call {id} --approve` runs it, `toolsmith call {id} --decline REASON` refuses it");
            return waiting(&w, out, hint);
        }
        Outcome::Suspended(w) => {
            let hint = format!(
                "suspended: `toolsmith resume {} 'JSON'` continues it with data matching its resume schema",
                w.id()
            );
            return waiting(&w, out, hint);
        }
    };
    if let Some(dialect) = result_as.and_then(|arg| arg.dialect(GeminiSchema::JsonSchema)) {
        let model = match &ended {
            Ok(output) => output.for_model(),
            Err(e) => ModelOutput::ErrorText(e.message().to_owned()),
        };
        let mut message = model
            .to_tool_result(dialect, "call_cli")
            .ok_or_else(|| format!("{dialect} tool results cannot be written"))?;
        if let (Dialect::Mcp, Ok(output)) = (dialect, &ended) {
            // MCP carries the raw output as structuredContent when it is an object.
            let result = output.value();
            if result.is_object() {
                message["structuredContent"] = result;
            }
        }
        writeln!(out, "{}", pretty(&message)).map_err(io)?;
        return Ok(ExitCode::SUCCESS);
    }
    match ended {
        Ok(output) if model_output => {
            let shown = json!({"value": output.value(), "modelOutput": output.for_model()});
            writeln!(out, "{}", pretty(&shown)).map_err(io)?
        }
        Ok(output) => writeln!(out, "{}", pretty(&output.value())).map_err(io)?,
        Err(e) => return Err(e.message().to_owned()),
    }
    Ok(ExitCode::SUCCESS)
}

/// Runs a parsed command against a registry, writing results to `out`; errors are returned as
/// readable text.
pub async fn execute(cli: Cli, registry: impl Into<RegistryRef>, out: &mut dyn Write) -> Result<ExitCode, String> {
    let io = |e: std::io::Error| format!("cannot write the output: {e}");
    let store: Arc<dyn PendingStore> = Arc::new(LazyStore {
        path: cli.store.clone(),
        store: OnceLock::new(),
    });
    let runtime = Runtime::builder(registry).shared_store(store).build();
    let registry = runtime.registry();
    match cli.command {
        Command::List { json } => {
            let tools = registry.tools();
            if json {
                let list: Vec<Value> = tools
                    .iter()
                    .map(|t| {
                        let s = t.spec();
                        json!({"id": s.id, "title": s.title.as_ref().or(s.mcp.title.as_ref()), "description": s.description})
                    })
                    .collect();
                writeln!(out, "{}", pretty(&Value::Array(list))).map_err(io)?;
            } else {
                let width = tools.iter().map(|t| t.spec().id.len()).max().unwrap_or(2).max(2);
                let twidth = tools.iter().map(|t| title_of(t.spec()).len()).max().unwrap_or(5).max(5);
                writeln!(out, "{:width$}  {:twidth$}  DESCRIPTION", "ID", "TITLE").map_err(io)?;
                for t in &tools {
                    let s = t.spec();
                    let first_line = s.description.lines().next().unwrap_or_default();
                    writeln!(out, "{:width$}  {:twidth$}  {first_line}", s.id, title_of(s)).map_err(io)?;
                }
            }
        }
        Command::Schema { id } => {
            let tool = registry.get(&id).ok_or_else(|| registry.unknown(&id).message().to_owned())?;
            let s = tool.spec();
            let mut v = json!({"id": s.id, "input": s.input_schema, "output": s.output_schema});
            for (k, schema) in [
                ("suspend", &s.suspend_schema),
                ("resume", &s.resume_schema),
                ("context", &s.request_context_schema),
            ] {
                if let Some(schema) = schema {
                    v[k] = schema.clone();
                }
            }
            writeln!(out, "{}", pretty(&v)).map_err(io)?;
        }
        Command::Catalog {
            format,
            strict,
            tags,
            gemini_schema,
            name,
            catalog_version,
            out: file,
        } => {
            let all = Catalog::new(
                &name,
                &catalog_version,
                Registry::try_from_tools(registry.tools()).map_err(|e| e.to_string())?,
            );
            let catalog = if tags.is_empty() {
                all
            } else {
                let ids: Vec<String> = all
                    .tools()
                    .iter()
                    .filter(|t| t.spec().tags.iter().any(|x| tags.contains(x)))
                    .map(|t| t.spec().id.clone())
                    .collect();
                all.only(ids.iter().map(String::as_str))
            };
            let strictness = if strict { Strictness::All } else { Strictness::AsDeclared };
            let text = match format.dialect(gemini_schema) {
                None => pretty(&catalog.to_toolsmith()),
                Some(dialect) => {
                    let export = catalog.export_with(dialect, strictness).map_err(|e| e.to_string())?;
                    for w in &export.warnings {
                        eprintln!("warning: {w}");
                    }
                    serde_json::to_string_pretty(&export).map_err(|e| e.to_string())?
                }
            };
            match file {
                Some(path) => std::fs::write(&path, text + "\n").map_err(|e| format!("cannot write {}: {e}", path.display()))?,
                None => writeln!(out, "{text}").map_err(io)?,
            }
        }
        Command::Call {
            id,
            args,
            approve,
            decline,
            stream,
            format,
            events,
            context,
            model_output,
            result_as,
        } => {
            let context = context
                .map(|c| serde_json::from_str::<Value>(&c).map_err(|e| format!("--context is not valid JSON: {e}")))
                .transpose()?;
            let options = CallOptions {
                data: CallData {
                    context,
                    ..CallData::default()
                },
                ..CallOptions::default()
            };
            if let Some(file) = stream {
                let bytes = std::fs::read(&file).map_err(|e| format!("cannot read {}: {e}", file.display()))?;
                let dialect = format
                    .and_then(|arg| arg.dialect(GeminiSchema::JsonSchema))
                    .ok_or("--stream needs --format")?;
                let (mut run, events) = runtime.stream(dialect, options);
                let fed = run.push(&bytes).and_then(|()| run.finish());
                let outcome = drain(events, true, out).await?;
                fed.map_err(|e| format!("the stream in {} is not usable: {e}", file.display()))?;
                return Ok(if matches!(outcome, Some(Outcome::Failed(_))) {
                    ExitCode::FAILURE
                } else {
                    ExitCode::SUCCESS
                });
            }
            let id = id.unwrap_or_default();
            let stream = if approve {
                runtime.approve(&id).await.map_err(|e| e.to_string())?
            } else if let Some(reason) = decline {
                runtime.decline(&id, &reason).await.map_err(|e| e.to_string())?
            } else {
                runtime.call(&id, args, options)
            };
            let last = drain(stream, events, out).await?;
            if events {
                return Ok(ExitCode::SUCCESS);
            }
            return conclude(last, model_output, result_as, out);
        }
        Command::Resume { id, data, events } => {
            let data = serde_json::from_str::<Value>(&data).map_err(|e| format!("the resume data is not valid JSON: {e}"))?;
            let stream = runtime.resume(&id, data).await.map_err(|e| e.to_string())?;
            let last = drain(stream, events, out).await?;
            if events {
                return Ok(ExitCode::SUCCESS);
            }
            return conclude(last, false, None, out);
        }
        Command::Serve {
            stdio,
            http,
            auth_token_env,
            allow_origins,
            allow_hosts,
            max_concurrent_calls,
            page_size,
            max_body_bytes,
            context,
            input_timeout,
            stateless,
            json_response,
        } => {
            let context = context
                .map(|c| serde_json::from_str::<Value>(&c).map_err(|e| format!("--context is not valid JSON: {e}")))
                .transpose()?;
            let config = crate::mcp::McpConfig {
                page_size,
                max_concurrent_calls,
                context,
                input_timeout: std::time::Duration::from_secs(input_timeout),
                ..crate::mcp::McpConfig::default()
            };
            let server = crate::mcp::McpServer::new(runtime.clone(), config);
            if stdio {
                crate::mcp::stdio::serve(server)
                    .await
                    .map_err(|e| format!("the stdio server stopped: {e}"))?;
                return Ok(ExitCode::SUCCESS);
            }
            let auth_token = match auth_token_env {
                None => None,
                Some(var) => match std::env::var(&var) {
                    Ok(t) if !t.trim().is_empty() => Some(t.trim().to_owned()),
                    _ => return Err(format!("--auth-token-env {var}: the variable is not set (or empty)")),
                },
            };
            let options = crate::mcp::http::HttpOptions {
                allowed_hosts: allow_hosts,
                allowed_origins: allow_origins,
                auth_token,
                max_body_bytes,
                stateless,
                json_response,
            };
            let addr = http.unwrap_or_else(|| std::net::SocketAddr::from(([127, 0, 0, 1], 8931)));
            let shutdown = tokio_util::sync::CancellationToken::new();
            let stop = shutdown.clone();
            tokio::spawn(async move {
                let _ = tokio::signal::ctrl_c().await;
                stop.cancel();
            });
            crate::mcp::http::serve(server, addr, options, shutdown, |bound| {
                eprintln!("serving MCP on http://{bound}/mcp")
            })
            .await
            .map_err(|e| format!("cannot serve on {addr}: {e}"))?;
        }
        Command::Pending { json } => {
            let pending = runtime.pending().map_err(|e| e.to_string())?;
            if json {
                // The stored request context may hold credentials: list it redacted.
                let list: Vec<Value> = pending
                    .iter()
                    .map(|p| {
                        let mut v = serde_json::to_value(p).unwrap_or_default();
                        v["context"] = crate::call::redact(&v["context"]);
                        v
                    })
                    .collect();
                writeln!(out, "{}", pretty(&Value::Array(list))).map_err(io)?;
            } else {
                writeln!(out, "{:24}  {:10}  {:20}  ARGS", "CALL ID", "WAITS FOR", "TOOL").map_err(io)?;
                for p in &pending {
                    let args = crate::call::quote(&p.args);
                    writeln!(out, "{:24}  {:10}  {:20}  {args}", p.tool_call_id, p.kind.as_str(), p.tool_name).map_err(io)?;
                }
            }
        }
    }
    Ok(ExitCode::SUCCESS)
}

/// The title shown in listings: the tool's title, else its MCP title, else `-`.
fn title_of(spec: &crate::ToolSpec) -> &str {
    spec.title.as_deref().or(spec.mcp.title.as_deref()).unwrap_or("-")
}

impl Cli {
    /// Parses arguments (the first is the program name).
    pub fn try_parse_args<I, T>(args: I) -> Result<Cli, clap::Error>
    where
        I: IntoIterator<Item = T>,
        T: Into<std::ffi::OsString> + Clone,
    {
        Cli::try_parse_from(args)
    }
}
