//! The tools Toolsmith's own client tests call: `echo` (also the benchmark tool), `long_log`,
//! `overflow` (isolated in a child process), `slow` and `slow_task` (cancellation),
//! `approve_task` and `approve_me` (approval), `add_tool`/`remove_tool` (`list_changed`) and
//! `ask_twice` (two elicitations in one call).

use std::sync::Arc;
use std::time::Duration;

use tool_core::context::Elicitation;
use tool_core::prelude::*;

use super::{SERVED, client};

/// Returns the text it is given
#[tool(id = "echo", mcp(read_only_hint = true, idempotent_hint = true, open_world_hint = false))]
pub async fn echo(
    /// The text to return
    text: String,
) -> String {
    text
}

/// Returns `lines` numbered lines; the model sees at most 1 KiB of them (head and tail), and
/// the full text is a resource the calling session can read
#[tool(id = "long_log", max_model_output = "1KiB")]
pub async fn long_log(
    /// How many lines
    lines: usize,
) -> String {
    (0..lines).map(|i| format!("line {i}: ünïcödé\n")).collect()
}

/// Recurses until its stack is gone: it always runs in a child process of its own
/// (`isolate = "process"`), so the crash fails only the call and the server answers the next
#[tool(id = "overflow", isolate = "process")]
pub async fn overflow() -> u64 {
    #[allow(unconditional_recursion)]
    fn down(n: u64) -> u64 {
        let frame = std::hint::black_box([n; 512]);
        frame[(n % 512) as usize] + down(std::hint::black_box(n + 1))
    }
    down(0)
}

/// Sleeps (30 s unless told less) and ends early when the call is cancelled
#[tool(id = "slow")]
pub async fn slow(
    /// How long to sleep, in seconds (at most 30)
    seconds: Option<f64>,
    #[ctx] cx: ToolContext,
) -> Result<String, ToolError> {
    let seconds = seconds.unwrap_or(30.0).clamp(0.0, 30.0);
    tokio::select! {
        _ = tokio::time::sleep(Duration::from_secs_f64(seconds)) => Ok(format!("slept {seconds} s")),
        _ = cx.cancellation().cancelled() => {
            // Written at once (no await), so it lands before the runtime reports the abort.
            if let Some(path) = std::env::var_os("MCP_FIXTURE_CANCEL_LOG") {
                use std::io::Write;
                let line = format!("cancelled {}\n", cx.tool_call_id());
                let written = std::fs::OpenOptions::new().create(true).append(true).open(&path).and_then(|mut f| f.write_all(line.as_bytes()));
                if let Err(e) = written {
                    eprintln!("mcp_fixture: cannot append to {}: {e}", path.to_string_lossy());
                }
            }
            Err(ToolError::new("The call was cancelled."))
        }
    }
}

/// Sleeps like `slow`, as a durable background task (an MCP task, to a client that declared the
/// tasks extension, when the fixture has a `--store`)
#[tool(id = "slow_task", background(enabled = true))]
pub async fn slow_task(
    /// How long to sleep, in seconds (at most 30)
    seconds: Option<f64>,
    #[ctx] cx: ToolContext,
) -> Result<String, ToolError> {
    slow(seconds, cx).await
}

/// Runs as a durable background task only after a person approved it
#[tool(id = "approve_task", require_approval, background(enabled = true))]
pub async fn approve_task(
    /// Echoed back
    note: String,
) -> String {
    format!("approved: {note}")
}

pub(crate) const DYNAMIC: &str = "dynamic_echo";

pub(crate) fn served() -> Result<&'static Arc<Registry>, ToolError> {
    SERVED.get().ok_or_else(|| ToolError::new("No registry is being served."))
}

/// Adds the tool `dynamic_echo` to the served set (clients get `tools/list_changed`)
#[tool(id = "add_tool")]
pub async fn add_tool() -> Result<String, ToolError> {
    let registry = served()?;
    if registry.get(DYNAMIC).is_some() {
        return Ok(format!("`{DYNAMIC}` is already there"));
    }
    let tool = DynamicTool::builder(DYNAMIC, "Returns the text it is given (a tool added at run time)")
        .input_schema(json!({
            "type": "object",
            "properties": {"text": {"type": "string", "description": "The text to return"}},
            "required": ["text"]
        }))
        .handler(|input, _cx| async move { Ok(input["text"].clone()) })
        .map_err(|e| ToolError::new(e.to_string()))?;
    registry.insert(tool).map_err(|e| ToolError::new(e.to_string()))?;
    Ok(format!("added `{DYNAMIC}`"))
}

/// Removes the tool `dynamic_echo` from the served set (clients get `tools/list_changed`)
#[tool(id = "remove_tool")]
pub async fn remove_tool() -> Result<String, ToolError> {
    Ok(match served()?.remove(DYNAMIC) {
        Some(_) => format!("removed `{DYNAMIC}`"),
        None => format!("`{DYNAMIC}` was not there"),
    })
}

/// Asks the user two questions in turn, reporting progress between them, and answers with both
/// answers (on MCP 2026-07-28 each question is a round trip of its own)
#[tool(id = "ask_twice")]
pub async fn ask_twice(#[ctx] cx: ToolContext) -> Result<String, ToolError> {
    let mcp = client(&cx)?;
    let form = |field: &str| json!({"type": "object", "properties": {field: {"type": "string"}}, "required": [field]});
    let mut answers = Vec::new();
    for (n, field) in ["first", "second"].into_iter().enumerate() {
        if n > 0 {
            mcp.progress(n as f64, Some(2.0), Some(format!("asked {n} of 2")));
        }
        match mcp.elicit(format!("Question {}: your {field} answer?", n + 1), form(field)).await? {
            Elicitation::Accept { content } => answers.push(content[field].as_str().unwrap_or_default().to_owned()),
            other => return Ok(format!("stopped at question {}: {other:?}", n + 1)),
        }
    }
    Ok(format!("answers: {}", answers.join(", ")))
}

/// Runs only after a person approved it
#[tool(id = "approve_me", require_approval)]
pub async fn approve_me(#[ctx] cx: ToolContext) -> String {
    // Progress after approval reaches the request that approved the call.
    if let Some(mcp) = cx.mcp() {
        mcp.progress(1.0, Some(1.0), Some("approved".into()));
    }
    "approved and ran".into()
}
