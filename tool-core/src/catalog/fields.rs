//! The per-tool fields that only some providers' formats carry: Anthropic's
//! `eager_input_streaming`, Anthropic's and OpenAI Responses' `allowed_callers`, Gemini's
//! `behavior`.
//!
//! Owns which dialect sends which of them, in which spelling, the tool a request needs beside
//! them for programmatic callers, and the warning for each one a dialect cannot carry (never
//! dropped silently; for MCP, only what its clients would lose, see [`mcp_loss`]). Must not lay out entries (that is
//! `format`'s).

use serde_json::{Value, json};

use crate::dialect::Dialect;
use crate::spec::ToolSpec;

/// The code execution tool version Anthropic's `allowed_callers` names for a tool declared
/// callable by `programmatic` callers (the version Anthropic's programmatic tool calling
/// documents).
pub(crate) const ANTHROPIC_CODE_EXECUTION: &str = "code_execution_20250825";

/// The code execution versions the tools' `allowed_callers` name (`programmatic` is
/// [`ANTHROPIC_CODE_EXECUTION`]), each once, sorted: empty when no tool allows code callers.
pub(crate) fn code_versions<'a>(specs: impl IntoIterator<Item = &'a ToolSpec>) -> Vec<String> {
    let mut versions: Vec<String> = Vec::new();
    for spec in specs {
        for caller in &spec.presentation.allowed_callers {
            let version = match caller.as_str() {
                "direct" => continue,
                "programmatic" => ANTHROPIC_CODE_EXECUTION,
                other => other,
            };
            if !versions.iter().any(|v| v == version) {
                versions.push(version.to_owned());
            }
        }
    }
    versions.sort_unstable();
    versions
}

/// The tool a request must also carry for the tools that code may call (`versions`, from
/// [`code_versions`]), once per export: Anthropic's code execution tool (`{type:
/// "code_execution_20250825", name: "code_execution"}`, the newest version when several are
/// named: the request takes one, and a warning says so), OpenAI Responses' `{type:
/// "programmatic_tool_calling"}`. `None` when no tool allows code callers or the dialect has
/// no programmatic calling (its export warns per tool).
pub(crate) fn programmatic_tool(dialect: Dialect, versions: &[String], warnings: &mut Vec<String>) -> Option<Value> {
    let newest = versions.last()?;
    match dialect {
        Dialect::Anthropic => {
            if versions.len() > 1 {
                warnings.push(format!(
                    "the tools name several code execution versions ({}): Anthropic takes one code execution tool, `{newest}` is sent",
                    versions.join(", ")
                ));
            }
            Some(json!({"type": newest, "name": "code_execution"}))
        }
        Dialect::OpenAiResponses => Some(json!({"type": "programmatic_tool_calling"})),
        _ => None,
    }
}

/// Whether MCP loses something that matters when it lists `spec`'s tool, and what: a tool only
/// code may call (`allowed_callers` without `direct`) is one an MCP client's model calls
/// directly. The other provider-only fields (`eager_input_streaming`, Gemini's `behavior`,
/// a code caller beside `direct`) shape the request the client builds for its own provider,
/// which MCP leaves to the client: nothing is lost, nothing is said.
pub(crate) fn mcp_loss(spec: &ToolSpec) -> Option<String> {
    let callers = &spec.presentation.allowed_callers;
    (!callers.is_empty() && !callers.iter().any(|c| c == "direct")).then(|| {
        format!(
            "tool `{}`: `allowed_callers` has no `direct` (only code may call it), but MCP clients call their tools directly: listed anyway",
            spec.id
        )
    })
}

/// The fields of `spec` that `dialect` carries beside the common ones, in order, and a warning
/// in `warnings` for each set field it cannot carry.
pub(crate) fn extra(dialect: Dialect, spec: &ToolSpec, warnings: &mut Vec<String>) -> Vec<(&'static str, Value)> {
    let p = &spec.presentation;
    let mut out = Vec::new();
    if dialect == Dialect::Mcp {
        warnings.extend(mcp_loss(spec));
        return out;
    }
    let mut unsent = |field: &str, whose: &str| {
        warnings.push(format!(
            "tool `{}`: {} cannot carry `{field}` ({whose}): not sent",
            spec.id,
            dialect.as_str()
        ));
    };
    if let Some(eager) = p.eager_input_streaming {
        match dialect {
            Dialect::Anthropic => out.push(("eager_input_streaming", json!(eager))),
            _ => unsent("eager_input_streaming", "Anthropic's"),
        }
    }
    if !p.allowed_callers.is_empty() {
        match dialect {
            Dialect::Anthropic => out.push(("allowed_callers", json!(anthropic_callers(&p.allowed_callers)))),
            Dialect::OpenAiResponses => out.push(("allowed_callers", json!(openai_callers(&p.allowed_callers)))),
            _ => unsent("allowed_callers", "Anthropic's and OpenAI Responses'"),
        }
    }
    if let Some(behavior) = p.behavior {
        match dialect {
            Dialect::GeminiOpenApi | Dialect::GeminiJsonSchema => out.push(("behavior", json!(behavior.gemini()))),
            _ => unsent("behavior", "Gemini's"),
        }
    }
    out
}

/// Anthropic's callers: `direct` and code execution versions as declared, `programmatic` as
/// [`ANTHROPIC_CODE_EXECUTION`]; each once.
fn anthropic_callers(callers: &[String]) -> Vec<&str> {
    let mut out: Vec<&str> = Vec::with_capacity(callers.len());
    for c in callers {
        let c = if c == "programmatic" {
            ANTHROPIC_CODE_EXECUTION
        } else {
            c.as_str()
        };
        if !out.contains(&c) {
            out.push(c);
        }
    }
    out
}

/// OpenAI's callers: `direct`, and `programmatic` for code (any code execution version); each
/// once.
fn openai_callers(callers: &[String]) -> Vec<&str> {
    let mut out: Vec<&str> = Vec::with_capacity(2);
    for c in callers {
        let c = if c == "direct" { "direct" } else { "programmatic" };
        if !out.contains(&c) {
            out.push(c);
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn callers_are_spelt_per_provider() {
        let callers = ["direct".to_owned(), "programmatic".to_owned(), "code_execution_20260120".to_owned()];
        assert_eq!(
            anthropic_callers(&callers),
            ["direct", ANTHROPIC_CODE_EXECUTION, "code_execution_20260120"]
        );
        assert_eq!(openai_callers(&callers), ["direct", "programmatic"]);
    }
}
