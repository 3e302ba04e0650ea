//! `catalog`: the tools in a provider's format, plain or for tool search (deferred tools, a
//! search tool, namespaces), or the `allowed_tools` tool_choice of such a request.
//!
//! Owns [`CatalogCommand`] and its arguments. Printing only: the catalog decides the layout.

use std::io::Write;
use std::process::ExitCode;

use clap::ValueEnum;

use super::{CliError, DialectArg, GeminiSchema, pretty};
use crate::catalog::{Catalog, LoadedTools, Strictness, ToolSearchMode};
use crate::dialect::Dialect;
use crate::registry::Registry;

/// The arguments of `catalog`.
#[derive(Debug, clap::Args)]
pub struct CatalogCommand {
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
    /// Export for tool search: deferred tools and a search tool.
    ///
    /// The deferred tools as the format carries them, and a search tool: `native`, the
    /// provider's own where it has one; `client`, the provider's format, searched by the
    /// application; `generated`, the generated `search_tools` everywhere.
    #[arg(long, value_enum)]
    tool_search: Option<ToolSearchArg>,
    /// Defer every tool but these ids (comma-separated; `""` defers all).
    ///
    /// Whatever the tools declare (`#[tool(defer_loading)]`).
    #[arg(long, value_name = "IDS", value_delimiter = ',')]
    defer_all_except: Option<Vec<String>>,
    /// Put the tools carrying TAG in NAMESPACE (repeatable; the first that applies wins).
    #[arg(long = "namespace", value_name = "TAG=NAMESPACE")]
    namespaces: Vec<String>,
    /// The ids loaded by earlier searches of the conversation (comma-separated).
    #[arg(long, value_name = "IDS", value_delimiter = ',')]
    loaded: Vec<String>,
    /// Print the `allowed_tools` tool_choice instead of the tool list.
    ///
    /// The tools loaded up front and the --loaded ones; openai and openai-responses only.
    #[arg(long, conflicts_with = "tool_search")]
    allowed_tools: bool,
    /// With --tool-search client: print the answer to a search for QUERY instead of the list.
    ///
    /// OpenAI Responses: the `tool_search_output` input item; Anthropic: the `tool_result`
    /// block with one `tool_reference` per tool found.
    #[arg(long, value_name = "QUERY")]
    answer_search: Option<String>,
    /// Mark the last tool as a cache breakpoint (Anthropic's `cache_control`).
    #[arg(long)]
    cache_tools: bool,
    /// The catalog's name (recorded in the `toolsmith` format).
    #[arg(long, default_value = "default")]
    name: String,
    /// The catalog's version (recorded in the `toolsmith` format).
    #[arg(long = "catalog-version", default_value = "0.0.0")]
    catalog_version: String,
    /// Write to this file instead of standard output.
    #[arg(long)]
    out: Option<std::path::PathBuf>,
}

/// `catalog --tool-search`: which tool search the export uses.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
enum ToolSearchArg {
    /// The provider's own (OpenAI Responses, Anthropic), the generated one elsewhere.
    Native,
    /// The provider's format, with the search run by the application.
    Client,
    /// The generated `search_tools` tool in every format.
    Generated,
}

impl From<ToolSearchArg> for ToolSearchMode {
    fn from(arg: ToolSearchArg) -> Self {
        match arg {
            ToolSearchArg::Native => ToolSearchMode::Native,
            ToolSearchArg::Client => ToolSearchMode::Client,
            ToolSearchArg::Generated => ToolSearchMode::Generated,
        }
    }
}

/// The catalog the arguments select and arrange.
fn arranged(registry: &Registry, c: &CatalogCommand) -> Result<Catalog, CliError> {
    let all = Catalog::new(&c.name, &c.catalog_version, Registry::try_from_tools(registry.tools())?);
    let mut catalog = if c.tags.is_empty() {
        all
    } else {
        let ids: Vec<String> = all
            .tools()
            .iter()
            .filter(|t| t.spec().presentation.tags.iter().any(|x| c.tags.contains(x)))
            .map(|t| t.spec().id.clone())
            .collect();
        all.only(ids.iter().map(String::as_str))
    };
    if let Some(core) = &c.defer_all_except {
        catalog = catalog.defer_all_except(core.iter().map(String::as_str).filter(|id| !id.is_empty()));
    }
    for rule in &c.namespaces {
        let Some((tag, namespace)) = rule.split_once('=') else {
            return Err(CliError::Usage(format!(
                "--namespace {rule}: write TAG=NAMESPACE, e.g. --namespace weather=forecasts"
            )));
        };
        catalog = catalog
            .namespace_by_tag(tag, namespace)
            .map_err(|e| CliError::Usage(format!("--namespace {rule}: {e}")))?;
    }
    if c.cache_tools {
        catalog = catalog.cache_tool_definitions();
    }
    Ok(catalog)
}

/// `catalog`: the tools in a provider's format (warnings to standard error).
pub(super) fn catalog(registry: &Registry, c: CatalogCommand, out: &mut dyn Write) -> Result<ExitCode, CliError> {
    let catalog = arranged(registry, &c)?;
    let mut loaded = LoadedTools::default();
    loaded.extend(c.loaded.iter().filter(|id| !id.is_empty()));
    let text = match c.format.dialect(c.gemini_schema) {
        None if c.tool_search.is_some() || c.allowed_tools => {
            return Err(CliError::Usage(
                "--tool-search and --allowed-tools need a provider's --format (not toolsmith)".to_owned(),
            ));
        }
        None => pretty(&catalog.to_toolsmith()),
        Some(dialect) if c.allowed_tools => {
            let Some(choice) = catalog.allowed_tools(dialect, &loaded) else {
                return Err(CliError::Usage(format!(
                    "--allowed-tools: {dialect} has no `allowed_tools` tool_choice (openai and openai-responses have)"
                )));
            };
            pretty(&choice)
        }
        Some(dialect) if c.answer_search.is_some() => pretty(&answer(&catalog, dialect, &c, &mut loaded)?),
        Some(dialect) => {
            let export = match c.tool_search {
                Some(mode) if !c.strict => catalog.export_deferred(dialect, mode.into(), &loaded)?,
                Some(_) => {
                    return Err(CliError::Usage(
                        "--tool-search exports the tools as declared: leave --strict out".to_owned(),
                    ));
                }
                None => catalog.export_with(dialect, if c.strict { Strictness::All } else { Strictness::AsDeclared })?,
            };
            for w in &export.warnings {
                eprintln!("warning: {w}");
            }
            serde_json::to_string_pretty(&export)?
        }
    };
    match c.out {
        Some(path) => std::fs::write(&path, text + "\n").map_err(|source| CliError::WriteFile { path, source })?,
        None => writeln!(out, "{text}").map_err(CliError::Output)?,
    }
    Ok(ExitCode::SUCCESS)
}

/// `--answer-search QUERY`: what the application sends back for a client-executed search.
fn answer(catalog: &Catalog, dialect: Dialect, c: &CatalogCommand, loaded: &mut LoadedTools) -> Result<serde_json::Value, CliError> {
    let query = serde_json::json!({"query": c.answer_search.as_deref().unwrap_or_default()});
    match (dialect, c.tool_search) {
        (Dialect::OpenAiResponses, Some(ToolSearchArg::Client)) => {
            catalog.tool_search_output("call_search_1", &query, loaded).map_err(CliError::Call)
        }
        (Dialect::Anthropic, Some(ToolSearchArg::Client)) => {
            let content = catalog.tool_references(&query, loaded).map_err(CliError::Call)?;
            Ok(serde_json::json!({"type": "tool_result", "tool_use_id": "toolu_search_1", "content": content}))
        }
        _ => Err(CliError::Usage(
            "--answer-search needs --tool-search client and --format openai-responses or anthropic".to_owned(),
        )),
    }
}
