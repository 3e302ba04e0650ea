//! The `toolsmith` command line, for any binary that links tools.
//!
//! Owns argument parsing (clap) and printing. `main` of a user binary is just
//! `fn main() -> std::process::ExitCode { tool_core::cli::run() }`; every command works on the
//! tools linked into *that* binary.

use std::io::Write;
use std::process::ExitCode;

use clap::{Parser, Subcommand, ValueEnum};
use serde_json::{json, Value};

use crate::call::CallOptions;
use crate::catalog::{Catalog, Format as CatalogFormat, Strictness};
use crate::model_output::{ModelOutput, ResultTarget};
use crate::registry::Registry;

/// The `toolsmith` command line.
#[derive(Debug, Parser)]
#[command(
    name = "toolsmith",
    about = "List, inspect, export and call the tools linked into this binary",
    version
)]
pub struct Cli {
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
        #[arg(long, value_enum, default_value_t = Format::Mcp)]
        format: Format,
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
    /// Call a tool with JSON arguments and print its result.
    Call {
        /// The tool id.
        id: String,
        /// The arguments, as JSON text.
        #[arg(default_value = "{}")]
        args: String,
        /// The request context, as a JSON object.
        #[arg(long)]
        context: Option<String>,
        /// Print the model output (from `to_model_output`) alongside the raw value.
        #[arg(long)]
        model_output: bool,
        /// Print the tool-result message a provider takes (errors included, as the model
        /// would see them) instead of the raw value.
        #[arg(long = "as", value_enum)]
        result_as: Option<ResultFormat>,
    },
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
enum ResultFormat {
    /// OpenAI Chat `{role: "tool"}` message.
    Openai,
    /// OpenAI Responses `function_call_output` item.
    OpenaiResponses,
    /// Anthropic `tool_result` block.
    Anthropic,
    /// MCP `tools/call` result.
    Mcp,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
enum Format {
    /// OpenAI Chat Completions `tools`.
    Openai,
    /// OpenAI Responses `tools`.
    OpenaiResponses,
    /// Anthropic Messages `tools`.
    Anthropic,
    /// Gemini `{functionDeclarations}`.
    Gemini,
    /// MCP `tools/list` result.
    Mcp,
    /// Toolsmith's own versioned catalog (every target, metadata, content hashes).
    Toolsmith,
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
    let cli = match Cli::try_parse_from(args) {
        Ok(c) => c,
        Err(e) => {
            let _ = e.print();
            return if e.use_stderr() { ExitCode::from(2) } else { ExitCode::SUCCESS };
        }
    };
    let registry = match Registry::try_global() {
        Ok(r) => r,
        Err(e) => {
            eprintln!("error: {e}");
            return ExitCode::from(2);
        }
    };
    let runtime = match tokio::runtime::Builder::new_multi_thread().enable_all().build() {
        Ok(rt) => rt,
        Err(e) => {
            eprintln!("error: cannot start the async runtime: {e}");
            return ExitCode::FAILURE;
        }
    };
    let (mut out, mut err) = (std::io::stdout().lock(), std::io::stderr().lock());
    match runtime.block_on(execute(cli, registry, &mut out)) {
        Ok(code) => code,
        Err(message) => {
            let _ = writeln!(err, "error: {message}");
            ExitCode::FAILURE
        }
    }
}

fn pretty(v: &Value) -> String {
    serde_json::to_string_pretty(v).unwrap_or_else(|_| v.to_string())
}

/// Runs a parsed command against a registry, writing results to `out`; errors are returned as
/// readable text.
pub async fn execute(cli: Cli, registry: &Registry, out: &mut dyn Write) -> Result<ExitCode, String> {
    let io = |e: std::io::Error| format!("cannot write the output: {e}");
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
            let text = match format {
                Format::Toolsmith => pretty(&catalog.to_toolsmith()),
                other => {
                    let format = match other {
                        Format::Openai => CatalogFormat::OpenAi,
                        Format::OpenaiResponses => CatalogFormat::OpenAiResponses,
                        Format::Anthropic => CatalogFormat::Anthropic,
                        Format::Gemini if gemini_schema == GeminiSchema::Openapi => CatalogFormat::GeminiOpenApi,
                        Format::Gemini => CatalogFormat::GeminiJsonSchema,
                        _ => CatalogFormat::Mcp,
                    };
                    let export = catalog.export_with(format, strictness).map_err(|e| e.to_string())?;
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
            context,
            model_output,
            result_as,
        } => {
            let context = context
                .map(|c| serde_json::from_str::<Value>(&c).map_err(|e| format!("--context is not valid JSON: {e}")))
                .transpose()?;
            let options = CallOptions {
                context,
                ..CallOptions::default()
            };
            let outcome = registry.call(&id, args, options).await;
            if let Some(format) = result_as {
                let target = match format {
                    ResultFormat::Openai => ResultTarget::OpenAiChat,
                    ResultFormat::OpenaiResponses => ResultTarget::OpenAiResponses,
                    ResultFormat::Anthropic => ResultTarget::Anthropic,
                    ResultFormat::Mcp => ResultTarget::Mcp,
                };
                let model_output = match &outcome {
                    Ok(result) => result.for_model(),
                    Err(e) => ModelOutput::ErrorText(e.message().to_owned()),
                };
                let mut message = model_output.to_tool_result(target, "call_cli");
                if let (ResultTarget::Mcp, Ok(result)) = (target, &outcome) {
                    // MCP carries the raw output as structuredContent when it is an object.
                    if result.value().is_object() {
                        message["structuredContent"] = result.value();
                    }
                }
                writeln!(out, "{}", pretty(&message)).map_err(io)?;
                return Ok(ExitCode::SUCCESS);
            }
            match outcome {
                Ok(result) if model_output => writeln!(
                    out,
                    "{}",
                    pretty(&json!({"value": result.value(), "modelOutput": result.for_model()}))
                )
                .map_err(io)?,
                Ok(result) => writeln!(out, "{}", pretty(&result.value())).map_err(io)?,
                Err(e) => return Err(e.message().to_owned()),
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
