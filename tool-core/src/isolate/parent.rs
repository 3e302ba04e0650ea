//! The parent side of process isolation: start a worker, hand it the call, forward what it
//! sends while it runs, and turn its answer (or its death) into the call's result. A cancelled
//! or timed-out call kills the worker (`SIGKILL`) and reaps it before the call ends; a call
//! dropped half-way kills it too (`kill_on_drop`).

use std::process::{ExitStatus, Stdio};
use std::sync::Arc;
use std::time::Duration;

use serde_json::value::RawValue;
use serde_json::{Map, Value};
use tokio::io::{AsyncBufReadExt, AsyncReadExt, AsyncWriteExt, BufReader};
use tokio::process::{Child, ChildStderr, ChildStdin, ChildStdout, Command};
use tokio_util::sync::CancellationToken;

use super::wire::{Message, Request};
use super::{ExecutionPolicy, ProcessLimits, WORKER_ENV};
use crate::context::ToolCallInfo;
use crate::error::ToolError;
use crate::tool::{Tool, ToolInput, ToolOutput};

/// How much of the worker's standard error is kept to tell why it died.
const STDERR_TAIL: usize = 16 << 10;

/// Runs one call in a worker process. A suspension comes back as the suspended error the body
/// returned (the call layer takes it out of the error path).
pub(crate) async fn run_in_child(
    policy: &ExecutionPolicy,
    tool: &Arc<dyn Tool>,
    input: ToolInput<'_>,
    context: &Map<String, Value>,
    call: &ToolCallInfo,
    (cancellation, timeout): (&CancellationToken, Option<Duration>),
) -> Result<ToolOutput, ToolError> {
    let id = tool.spec().id.as_str();
    let failed = |what: String| ToolError::new(format!("Tool `{id}` could not run in its own process: {what}"));
    if std::env::var_os(WORKER_ENV).is_some() {
        return Err(failed(
            "this process is a tool worker that did not enter worker mode (call `tool_core::isolate::worker_main()` first in `main`)"
                .into(),
        ));
    }
    let request = request(tool, input, context, call, policy.limits).map_err(|e| failed(format!("its call could not be encoded: {e}")))?;
    let command = policy
        .worker_command()
        .map_err(|e| failed(format!("this program's path is unknown: {e}")))?;
    let mut child = Command::new(&command.program)
        .args(&command.args)
        .env(WORKER_ENV, "1")
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .kill_on_drop(true)
        .spawn()
        .map_err(|e| failed(format!("{} could not be started: {e}", command.program.display())))?;
    let pipes = (child.stdin.take(), child.stdout.take(), child.stderr.take());
    let expiry = async {
        match timeout {
            Some(d) => tokio::time::sleep(d).await,
            None => std::future::pending().await,
        }
    };
    let exchanged = tokio::select! {
        biased;
        ex = exchange(&mut child, pipes, request, call) => ex,
        _ = cancellation.cancelled() => {
            let _ = child.kill().await;
            return Err(ToolError::aborted(format!("Tool `{id}` was cancelled; its process was killed")));
        }
        _ = expiry => {
            cancellation.cancel();
            let _ = child.kill().await;
            let ms = timeout.map_or(0, |d| d.as_millis());
            return Err(ToolError::aborted(format!("Tool `{id}` timed out after {ms} ms; its process was killed")));
        }
    };
    exchanged.into_result(id, &policy.limits)
}

/// The request's JSON text.
fn request(
    tool: &Arc<dyn Tool>,
    input: ToolInput<'_>,
    context: &Map<String, Value>,
    call: &ToolCallInfo,
    limits: ProcessLimits,
) -> serde_json::Result<Vec<u8>> {
    let spec = tool.spec();
    let input = match input {
        ToolInput::Text(t) | ToolInput::Decoded(t, _) => RawValue::from_string(t.to_owned())?,
        ToolInput::Value(v) => serde_json::value::to_raw_value(v)?,
    };
    serde_json::to_vec(&Request {
        tool: spec.id.clone(),
        source: format!("{}:{}", spec.source.file, spec.source.line),
        input,
        context: context.clone(),
        tool_call_id: call.tool_call_id.clone(),
        data: call.data.clone(),
        resume_data: call.resume_data.clone(),
        idempotency_key: call.idempotency_key.as_str().to_owned(),
        after_interruption: call.idempotency_key.after_interruption(),
        writer: call.writer.is_connected(),
        mcp: call.mcp.is_some(),
        limits,
    })
}

/// What came back from a worker that ended by itself.
struct Exchanged {
    answer: Option<Message>,
    stderr: String,
    status: std::io::Result<ExitStatus>,
}

/// Feeds the request, reads the messages and the standard-error tail, then waits for the exit.
async fn exchange(
    child: &mut Child,
    (stdin, stdout, stderr): (Option<ChildStdin>, Option<ChildStdout>, Option<ChildStderr>),
    request: Vec<u8>,
    call: &ToolCallInfo,
) -> Exchanged {
    let feed = async move {
        if let Some(mut stdin) = stdin {
            // A worker that died early closed the pipe: its exit status tells why.
            let _ = stdin.write_all(&request).await;
            let _ = stdin.shutdown().await;
        }
    };
    let (_, answer, stderr) = tokio::join!(feed, messages(stdout, call), tail(stderr));
    let status = child.wait().await;
    Exchanged { answer, stderr, status }
}

/// Forwards chunks, logs and progress as they come; the answer, or `None` if the worker
/// closed its output without one.
async fn messages(stdout: Option<ChildStdout>, call: &ToolCallInfo) -> Option<Message> {
    let mut lines = BufReader::new(stdout?).lines();
    while let Ok(Some(line)) = lines.next_line().await {
        let message = match serde_json::from_str::<Message>(&line) {
            Ok(m) => m,
            Err(e) => {
                tracing::warn!(tool = %call.tool_name, error = %e, "a tool worker sent a line that is not a message");
                continue;
            }
        };
        match message {
            Message::Chunk(chunk) => {
                call.writer.write(chunk);
            }
            Message::Log { level, data } => {
                if let Some(mcp) = &call.mcp {
                    mcp.log(level, data);
                }
            }
            Message::Progress { progress, total, message } => {
                if let Some(mcp) = &call.mcp {
                    mcp.progress(progress, total, message);
                }
            }
            answer => return Some(answer),
        }
    }
    None
}

/// The last [`STDERR_TAIL`] bytes of the worker's standard error.
async fn tail(stderr: Option<ChildStderr>) -> String {
    let Some(mut stderr) = stderr else { return String::new() };
    let mut kept = Vec::new();
    let mut buf = [0u8; 4096];
    while let Ok(n) = stderr.read(&mut buf).await {
        if n == 0 {
            break;
        }
        kept.extend_from_slice(&buf[..n]);
        if kept.len() > 2 * STDERR_TAIL {
            kept.drain(..kept.len() - STDERR_TAIL);
        }
    }
    let start = kept.len().saturating_sub(STDERR_TAIL);
    String::from_utf8_lossy(&kept[start..]).into_owned()
}

impl Exchanged {
    /// The call's result: the worker's answer, or why it died.
    fn into_result(self, id: &str, limits: &ProcessLimits) -> Result<ToolOutput, ToolError> {
        match self.answer {
            Some(Message::Output(o)) => {
                let mut output = ToolOutput::from_json(o.json);
                output.set_model_output(o.model_output);
                output.set_display(o.display);
                output.set_transcript(o.transcript);
                Ok(output)
            }
            Some(Message::Suspended(payload)) => Err(ToolError::suspended(
                format!("Tool `{id}` is waiting for input and will continue when it is resumed."),
                payload,
            )),
            Some(Message::Failed(e)) => Err(e),
            _ => Err(self.death(id, limits)),
        }
    }

    /// The error of a worker that ended without answering.
    fn death(&self, id: &str, limits: &ProcessLimits) -> ToolError {
        let status = match &self.status {
            Ok(s) => *s,
            Err(e) => return ToolError::new(format!("Tool `{id}` failed: its process could not be watched: {e}")),
        };
        tracing::warn!(tool = id, %status, stderr = %self.stderr, "a tool's process died");
        let (phrase, details) = describe(status, &self.stderr, limits);
        ToolError::with_details(
            format!(
                "Tool `{id}` failed: the tool's process died: {phrase}. The call did not complete (nothing was retried); the server goes on."
            ),
            details,
        )
    }
}

#[cfg(unix)]
fn describe(status: ExitStatus, stderr: &str, limits: &ProcessLimits) -> (String, Value) {
    let death = super::death::diagnose(status, stderr, limits);
    let details = death.details();
    (death.phrase, details)
}

#[cfg(not(unix))]
fn describe(status: ExitStatus, _stderr: &str, _limits: &ProcessLimits) -> (String, Value) {
    (
        format!("it ended without answering ({status})"),
        serde_json::json!({"process": {"exit_code": status.code()}}),
    )
}
