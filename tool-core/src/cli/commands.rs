//! The commands that read the tools and the store: `list`, `schema`, `catalog`, `pending`.
//! Printing only; nothing here runs a tool.

use std::io::Write;
use std::process::ExitCode;

use serde_json::{json, Value};

use super::{pretty, title_of, CatalogCommand};
use crate::catalog::{Catalog, Strictness};
use crate::registry::Registry;
use crate::runtime::Runtime;

fn io(e: std::io::Error) -> String {
    format!("cannot write the output: {e}")
}

/// `list`: id, title and description of every tool (a table, or JSON).
pub(super) fn list(registry: &Registry, json: bool, out: &mut dyn Write) -> Result<ExitCode, String> {
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
    Ok(ExitCode::SUCCESS)
}

/// `schema`: a tool's schemas.
pub(super) fn schema(registry: &Registry, id: &str, out: &mut dyn Write) -> Result<ExitCode, String> {
    let tool = registry.get(id).ok_or_else(|| registry.unknown(id).message().to_owned())?;
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
    Ok(ExitCode::SUCCESS)
}

/// `catalog`: the tools in a provider's format (warnings to standard error).
pub(super) fn catalog(registry: &Registry, catalog: CatalogCommand, out: &mut dyn Write) -> Result<ExitCode, String> {
    let CatalogCommand {
        format,
        strict,
        tags,
        gemini_schema,
        name,
        catalog_version,
        out: file,
    } = catalog;
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
    Ok(ExitCode::SUCCESS)
}

/// `pending`: the calls waiting in the store (their arguments and request context redacted).
pub(super) fn pending(runtime: &Runtime, json: bool, out: &mut dyn Write) -> Result<ExitCode, String> {
    let pending = runtime.pending().map_err(|e| e.to_string())?;
    if json {
        // The stored arguments and request context may hold credentials: list them redacted.
        let list: Vec<Value> = pending
            .iter()
            .map(|p| {
                let mut v = serde_json::to_value(p).unwrap_or_default();
                v["args"] = crate::call::redact(&v["args"]);
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
    Ok(ExitCode::SUCCESS)
}
