//! The worker: this binary started with [`WORKER_ARG`], running one call and exiting.

use std::io::{Read, Write};
use std::sync::{Arc, Mutex};

use serde_json::Value;

use super::wire::{Message, Output, Request};
use super::{ExecutionPolicy, WORKER_ARG};
use crate::call::{self, Finished};
use crate::context::{BoxFuture, CallEnv, Elicitation, LogLevel, McpHandle, Writer};
use crate::error::ToolError;
use crate::idempotency::IdempotencyKey;
use crate::registry::Registry;
use crate::tool::ToolInput;

/// Where the worker's messages go (its original standard output), shared by the writer's
/// chunks and the answer.
type Sink = Arc<Mutex<Box<dyn Write + Send>>>;

/// Call this first thing in `main` of any binary whose tools may run isolated: when the
/// process was started as a tool worker (its first argument is [`WORKER_ARG`]), it runs the
/// one call it is given on standard input and exits; otherwise it returns at once.
/// `tool_core::cli::run()` calls it for you.
///
/// ```text
/// fn main() {
///     tool_core::isolate::worker_main();
///     // … the program as usual
/// }
/// ```
pub fn worker_main() {
    if std::env::args_os().nth(1).is_some_and(|a| a == WORKER_ARG) {
        std::process::exit(serve());
    }
}

/// Runs the worker; the exit code (0 when an answer was sent, whatever it says).
fn serve() -> i32 {
    super::become_worker();
    let sink: Sink = match take_stdout() {
        Ok(out) => Arc::new(Mutex::new(out)),
        Err(e) => {
            eprintln!("toolsmith worker: cannot keep standard output: {e}");
            return 70;
        }
    };
    let answer = match read_request() {
        Ok(request) => run(request, &sink),
        Err(e) => Message::Failed(e),
    };
    if send(&sink, &answer) {
        0
    } else {
        eprintln!("toolsmith worker: cannot send the answer");
        74
    }
}

#[cfg(unix)]
fn take_stdout() -> std::io::Result<Box<dyn Write + Send>> {
    Ok(Box::new(super::rlimit::take_stdout()?))
}

#[cfg(not(unix))]
fn take_stdout() -> std::io::Result<Box<dyn Write + Send>> {
    Ok(Box::new(std::io::stdout()))
}

fn read_request() -> Result<Request, ToolError> {
    let mut text = String::new();
    std::io::stdin()
        .read_to_string(&mut text)
        .map_err(|e| ToolError::new(format!("the tool's process could not read its call: {e}")))?;
    serde_json::from_str(&text).map_err(|e| ToolError::new(format!("the tool's process could not read its call: {e}")))
}

/// Writes one message as a line; whether it was written.
fn send(sink: &Sink, message: &Message) -> bool {
    let Ok(mut line) = serde_json::to_vec(message) else { return false };
    line.push(b'\n');
    let mut out = sink.lock().unwrap_or_else(|p| p.into_inner());
    out.write_all(&line).and_then(|()| out.flush()).is_ok()
}

/// Sets the limits, then runs the body on a thread with the bounded stack.
fn run(request: Request, sink: &Sink) -> Message {
    #[cfg(unix)]
    if let Err(e) = super::rlimit::apply(&request.limits) {
        return Message::Failed(ToolError::new(format!("the tool's process could not set its limits: {e}")));
    }
    let stack = request.limits.stack_bytes;
    let sink = sink.clone();
    let spawned = std::thread::Builder::new()
        .name(format!("tool {}", request.tool))
        .stack_size(stack)
        .spawn(move || run_on_this_thread(request, sink));
    match spawned.map(|t| t.join()) {
        Ok(Ok(answer)) => answer,
        Ok(Err(_)) => Message::Failed(ToolError::new("the tool's thread panicked outside the tool")),
        Err(e) => Message::Failed(ToolError::new(format!("the tool's process could not start its thread: {e}"))),
    }
}

/// Finds the tool in this binary and runs it on a current-thread runtime.
fn run_on_this_thread(request: Request, sink: Sink) -> Message {
    let runtime = match tokio::runtime::Builder::new_current_thread().enable_all().build() {
        Ok(rt) => rt,
        Err(e) => return Message::Failed(ToolError::new(format!("the tool's process could not start a runtime: {e}"))),
    };
    // Only the called tool is built, from its own definition: the rest of the binary's tools
    // (even ids defined twice, which make the global registry unusable) are not this call's
    // concern, and their schemas need not be compiled for it.
    let tool = match Registry::linked_tool(&request.tool, &request.source) {
        Ok(tool) => tool,
        Err(e) => return Message::Failed(ToolError::new(format!("the tool's process {e}"))),
    };
    let env = CallEnv {
        writer: if request.writer { chunk_writer(&sink) } else { Writer::default() },
        mcp: request.mcp.then(|| Arc::new(ForwardedMcp { sink }) as Arc<dyn McpHandle>),
        idempotency: (!request.idempotency_key.is_empty()).then(|| match IdempotencyKey::new(request.idempotency_key) {
            key if request.after_interruption => key.interrupted_before(),
            key => key,
        }),
        ..CallEnv::default()
    };
    let data = request.data;
    let context = call::shared_context(request.context);
    let input = ToolInput::Text(request.input.get());
    let ran = runtime.block_on(call::run(
        &tool,
        input,
        context,
        (request.tool_call_id, &data),
        env,
        request.resume_data,
        &ExecutionPolicy::default(),
    ));
    // Whatever the body left running (a blocking task, a spawned one) must not hold the answer
    // back: the process exits right after sending it.
    runtime.shutdown_background();
    match ran {
        Ok(Finished::Output(out)) => Message::Output(Output {
            model_output: out.model_output().cloned(),
            display: out.display().cloned(),
            transcript: out.transcript().cloned(),
            json: out.json,
        }),
        Ok(Finished::Suspended(s)) => Message::Suspended(s.payload),
        Err(e) => Message::Failed(e),
    }
}

fn chunk_writer(sink: &Sink) -> Writer {
    let sink = sink.clone();
    Writer::new(move |chunk| {
        send(&sink, &Message::Chunk(chunk));
    })
}

/// The MCP client as a worker sees it: log and progress go to the parent, which forwards
/// them; elicitation and sampling need an answer back and are not offered.
struct ForwardedMcp {
    sink: Sink,
}

impl McpHandle for ForwardedMcp {
    fn elicit(&self, _message: String, _schema: Value) -> BoxFuture<'_, Result<Elicitation, ToolError>> {
        Box::pin(std::future::ready(Err(ToolError::new(
            "This tool runs in a child process, where asking the MCP client's user is not available.",
        ))))
    }

    fn log(&self, level: LogLevel, data: Value) {
        send(&self.sink, &Message::Log { level, data });
    }

    fn progress(&self, progress: f64, total: Option<f64>, message: Option<String>) {
        send(&self.sink, &Message::Progress { progress, total, message });
    }

    fn sample(&self, _request: Value) -> BoxFuture<'_, Result<Value, ToolError>> {
        Box::pin(std::future::ready(Err(ToolError::new(
            "This tool runs in a child process, where sampling the MCP client's model is not available.",
        ))))
    }
}
