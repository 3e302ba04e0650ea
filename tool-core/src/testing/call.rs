//! One tool call in a test, in one line: [`call`] builds it, `.await` runs it through a
//! [`Runtime`] and gives back everything the call did as a [`Called`].
//!
//! Owns [`Call`] (what to call, with what, on which clock) and [`Called`] (the run's events
//! and outcome, the writer's chunks, the logs and spans, the MCP progress and log
//! notifications, the hooks, the elapsed time), and the shared [`Observers`] that the stream
//! replay uses as well. The call goes through the runtime's own path (validation, hooks,
//! approval, execution, views): nothing is simulated but the MCP client, which answers from a
//! script.

use std::future::{Future, IntoFuture};
use std::pin::Pin;
use std::sync::Arc;
use std::time::Duration;

use serde_json::Value;

use super::capture::{Capture, Log, SpanRecord};
use super::client::{Answers, McpLog, Progress, ScriptedClient};
use super::hooks::{HookCall, HookLog};
use crate::ModelOutput;
use crate::call::{CallArgs, CallOptions};
use crate::context::{Elicitation, Workflow};
use crate::error::ToolError;
use crate::registry::{IntoTool, Registry};
use crate::runtime::{Event, EventStream, Outcome, ResumeOptions, Run, RunEventKind, Runtime, RuntimeBuilder, Waiting};
use crate::tool::{Tool, ToolOutput};

type Configure = Box<dyn FnOnce(RuntimeBuilder) -> RuntimeBuilder>;

/// What watches a test's calls: the log capture, the hook recorder and the scripted client.
#[derive(Clone, Default)]
pub(crate) struct Observers {
    pub(crate) capture: Capture,
    pub(crate) hooks: HookLog,
    pub(crate) client: ScriptedClient,
}

impl Observers {
    /// Runs `fut` with the capture as the thread's default subscriber: on a current-thread
    /// runtime that includes the tasks it spawns.
    pub(crate) async fn watch<F: Future>(&self, fut: F) -> F::Output {
        let _guard = tracing::dispatcher::set_default(&self.capture.dispatch());
        fut.await
    }
}

/// Starts a test call of `tool` (its `tool()` function, a [`DynamicTool`](crate::DynamicTool),
/// an `Arc<dyn Tool>`). Set what it needs, then `.await` it.
///
/// ```
/// use tool_core::prelude::*;
/// use tool_core::testing;
///
/// /// Greets someone
/// #[tool]
/// async fn greet(#[ctx] cx: ToolContext, name: String) -> String {
///     cx.writer().write(json!({"step": "greeting"}));
///     let tenant: String = cx.request_context().get("tenant").unwrap_or_default();
///     format!("hello {name} from {tenant}")
/// }
///
/// # tokio::runtime::Builder::new_current_thread().enable_all().build().unwrap().block_on(async {
/// let got = testing::call(greet::tool()).context(json!({"tenant": "acme"})).args(json!({"name": "Ada"})).await;
/// assert_eq!(got.output(), json!("hello Ada from acme"));
/// assert_eq!(got.chunks(), [json!({"step": "greeting"})]);
/// # });
/// ```
pub fn call(tool: impl IntoTool) -> Call {
    Call {
        tool: tool.into_tool().map_err(|e| e.0),
        args: CallArgs::Value(Value::Object(Default::default())),
        options: CallOptions::default(),
        answers: Answers::default(),
        mcp: true,
        fake_clock: false,
        configure: None,
    }
}

/// A test call being set up (see [`call`]).
#[must_use = "a call does nothing until it is awaited"]
pub struct Call {
    tool: Result<Arc<dyn Tool>, String>,
    args: CallArgs<'static>,
    options: CallOptions,
    answers: Answers,
    mcp: bool,
    fake_clock: bool,
    configure: Option<Configure>,
}

impl Call {
    /// The arguments: a JSON value, or text as a model wrote it (default `{}`).
    pub fn args(mut self, args: impl Into<CallArgs<'static>>) -> Self {
        self.args = args.into();
        self
    }

    /// The request context (a JSON object).
    pub fn context(mut self, context: Value) -> Self {
        self.options = self.options.context(context);
        self
    }

    /// Every other call option (id, thread, resource, messages, cancellation, …); the kit's
    /// client and writer take the place of the ones given.
    pub fn options(mut self, edit: impl FnOnce(CallOptions) -> CallOptions) -> Self {
        self.options = edit(self.options);
        self
    }

    /// The call id (default: generated).
    pub fn id(mut self, id: &str) -> Self {
        self.options = self.options.id(id);
        self
    }

    /// The call's timeout; with [`fake_clock`](Self::fake_clock) it fires without waiting.
    pub fn timeout(mut self, timeout: Duration) -> Self {
        self.options = self.options.timeout(timeout);
        self
    }

    /// The workflow the call runs in.
    pub fn workflow(mut self, workflow: Workflow) -> Self {
        self.options = self.options.workflow(workflow);
        self
    }

    /// Runs the call on Tokio's paused clock: time jumps ahead whenever every task waits, so a
    /// timeout or a `sleep` of an hour ends at once, and [`Called::elapsed`] is exact. Needs a
    /// current-thread runtime (`#[tokio::test]`'s default) whose clock is not already paused
    /// (with `#[tokio::test(start_paused = true)]`, leave this out: the clock is fake already).
    pub fn fake_clock(mut self) -> Self {
        self.fake_clock = true;
        self
    }

    /// The answer the client gives to the next elicitation (answers are used in order).
    pub fn elicit(mut self, answer: Elicitation) -> Self {
        self.answers.elicitations.push_back(answer);
        self
    }

    /// The result the client gives to the next sampling request.
    pub fn sample(mut self, result: Value) -> Self {
        self.answers.samples.push_back(result);
        self
    }

    /// Calls without an MCP client (`cx.mcp()` is `None`), as a direct or CLI call would.
    pub fn without_mcp(mut self) -> Self {
        self.mcp = false;
        self
    }

    /// Configures the runtime the call runs in (approval for all, transform policy, store…).
    pub fn runtime(mut self, configure: impl FnOnce(RuntimeBuilder) -> RuntimeBuilder + 'static) -> Self {
        self.configure = Some(Box::new(configure));
        self
    }

    async fn run(self) -> Called {
        let tool = self.tool.unwrap_or_else(|e| panic!("testing::call: the tool is not valid: {e}"));
        let id = tool.spec().id.clone();
        let observers = Observers {
            client: ScriptedClient::new(self.answers),
            ..Observers::default()
        };
        let registry = Registry::new();
        if let Err(e) = registry.insert(observers.hooks.wrap(tool)) {
            panic!("testing::call: the tool is not valid: {e}");
        }
        let builder = Runtime::builder(registry);
        let runtime = match self.configure {
            Some(configure) => configure(builder),
            None => builder,
        }
        .build();
        let mut options = self.options;
        if self.mcp {
            options.env.mcp = Some(Arc::new(observers.client.clone()));
        }
        let clock = FakeClock::start(self.fake_clock);
        let (sink, stream) = crate::runtime::Sink::channel();
        let run = observers.watch(async {
            runtime.run_new(&sink, &id, self.args, options).await;
            drop(sink);
            stream.finish().await
        });
        let run = run.await;
        Called {
            run,
            elapsed: clock.stop(),
            runtime,
            observers,
        }
    }
}

impl IntoFuture for Call {
    type Output = Called;
    type IntoFuture = Pin<Box<dyn Future<Output = Called>>>;

    fn into_future(self) -> Self::IntoFuture {
        Box::pin(self.run())
    }
}

/// Tokio's clock, paused for one call when asked; the elapsed (virtual) time either way.
struct FakeClock {
    start: tokio::time::Instant,
    paused: bool,
}

impl FakeClock {
    fn start(pause: bool) -> FakeClock {
        if pause {
            let flavor = tokio::runtime::Handle::current().runtime_flavor();
            assert!(
                flavor == tokio::runtime::RuntimeFlavor::CurrentThread,
                "testing: the fake clock needs a current-thread runtime (`#[tokio::test]`), not {flavor:?}"
            );
            tokio::time::pause();
        }
        FakeClock {
            start: tokio::time::Instant::now(),
            paused: pause,
        }
    }

    fn stop(self) -> Duration {
        let elapsed = self.start.elapsed();
        if self.paused {
            tokio::time::resume();
        }
        elapsed
    }
}

/// Everything a test call did. The accessors that expect an outcome (`output`, `error`,
/// `waiting`) fail the test with the outcome there was when it is another.
pub struct Called {
    /// The run: its events in order and the outcome it ended with.
    pub run: Run,
    elapsed: Duration,
    runtime: Runtime,
    observers: Observers,
}

impl std::fmt::Debug for Called {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Called")
            .field("outcome", &self.run.outcome)
            .field("events", &self.run.events.len())
            .finish_non_exhaustive()
    }
}

impl Called {
    /// How the call ended.
    pub fn outcome(&self) -> &Outcome {
        &self.run.outcome
    }

    /// The output, as JSON; fails the test unless the call succeeded.
    pub fn output(&self) -> Value {
        self.tool_output().value()
    }

    /// The output with what the model receives; fails the test unless the call succeeded.
    pub fn tool_output(&self) -> &ToolOutput {
        match &self.run.outcome {
            Outcome::Done(out) => out,
            other => panic!("expected the call to succeed, but it ended {}: {other:?}", other.name()),
        }
    }

    /// What the model receives for the output; fails the test unless the call succeeded.
    pub fn model_output(&self) -> ModelOutput {
        self.tool_output().for_model()
    }

    /// The error; fails the test unless the call failed (or was aborted or refused).
    pub fn error(&self) -> &ToolError {
        match &self.run.outcome {
            Outcome::Failed(e) => e,
            other => panic!("expected the call to fail, but it ended {}: {other:?}", other.name()),
        }
    }

    /// The waiting call; fails the test unless it waits for approval or resume data.
    pub fn waiting(&self) -> &Waiting {
        match &self.run.outcome {
            Outcome::AwaitingApproval(w) | Outcome::Suspended(w) => w,
            other => panic!("expected the call to wait, but it ended {}: {other:?}", other.name()),
        }
    }

    /// Every event, in order.
    pub fn events(&self) -> &[Event] {
        &self.run.events
    }

    /// The chunks the tool wrote through its writer, in order.
    pub fn chunks(&self) -> Vec<Value> {
        custom_chunks(&self.run.events)
    }

    /// The `tracing` events made during the call (the tool's `cx.observe().log`, its own
    /// `tracing` calls, the runtime's warnings), in order.
    pub fn logs(&self) -> Vec<Log> {
        self.observers.capture.captured().logs
    }

    /// The spans opened during the call (`cx.observe().span`), in order.
    pub fn spans(&self) -> Vec<SpanRecord> {
        self.observers.capture.captured().spans
    }

    /// The progress notifications the tool sent its MCP client.
    pub fn progress(&self) -> Vec<Progress> {
        self.observers.client.progress()
    }

    /// The log notifications the tool sent its MCP client.
    pub fn mcp_logs(&self) -> Vec<McpLog> {
        self.observers.client.logs()
    }

    /// The elicitations the tool asked its MCP client, `(message, schema)`.
    pub fn elicitations(&self) -> Vec<(String, Value)> {
        self.observers.client.asked()
    }

    /// The hooks that ran, with the body's start among them, in order.
    pub fn hooks(&self) -> Vec<HookCall> {
        self.observers.hooks.all()
    }

    /// How long the call took on Tokio's clock (exact on the fake clock).
    pub fn elapsed(&self) -> Duration {
        self.elapsed
    }

    /// The runtime the call ran in (its store holds a waiting call).
    pub fn runtime(&self) -> &Runtime {
        &self.runtime
    }

    /// Approves the waiting call and runs it; the result carries everything captured so far.
    pub async fn approve(self) -> Called {
        let id = self.waiting().id().to_owned();
        let env = self.env();
        let stream = self.runtime.approve(&id, ResumeOptions::default().env(env)).await;
        self.continued(stream).await
    }

    /// Declines the waiting call.
    pub async fn decline(self, reason: &str) -> Called {
        let id = self.waiting().id().to_owned();
        let stream = self.runtime.decline(&id, reason).await;
        self.continued(stream).await
    }

    /// Resumes the suspended call with `data`.
    pub async fn resume(self, data: Value) -> Called {
        let id = self.waiting().id().to_owned();
        let env = self.env();
        let stream = self.runtime.resume(&id, data, ResumeOptions::default().env(env)).await;
        self.continued(stream).await
    }

    fn env(&self) -> crate::context::CallEnv {
        crate::context::CallEnv {
            mcp: Some(Arc::new(self.observers.client.clone())),
            ..Default::default()
        }
    }

    async fn continued(self, stream: Result<EventStream, crate::runtime::RuntimeError>) -> Called {
        let stream = stream.unwrap_or_else(|e| panic!("the waiting call could not continue: {e}"));
        let run = self.observers.watch(stream.finish()).await;
        let mut events = self.run.events;
        events.extend(run.events);
        Called {
            run: Run {
                events,
                outcome: run.outcome,
            },
            ..self
        }
    }
}

/// The chunks written through a writer, in order, among `events`.
pub(crate) fn custom_chunks(events: &[Event]) -> Vec<Value> {
    events
        .iter()
        .filter_map(|e| match &e.raw.kind {
            RunEventKind::Custom { data } => Some(data.clone()),
            _ => None,
        })
        .collect()
}
