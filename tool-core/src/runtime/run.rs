//! A call as a run: validated, shown, hooked, gated, executed, reported.
//!
//! Owns the steps every run shares: starting a new call ([`Runtime::run_new`]), executing a
//! prepared one (in the background when the tool opted in), turning how it ended into its
//! last events and its [`Outcome`], and recording a call that waits (for approval, resume data,
//! or, for a client-side tool, its result). Approving, resuming and submitting a result are
//! `decide`; the views are `views`.

use std::sync::Arc;
use std::time::{SystemTime, UNIX_EPOCH};

use serde_json::Value;
use tracing::Instrument;

use super::binding::Binding;
use super::events::{CallRef, Event, RunEventKind};
use super::outcome::{Outcome, Sink, Waiting};
use super::pending::{PendingCall, PendingKind};
use super::state::Claim;
use super::views::Viewer;
use super::{Runtime, approval_resume_schema, background, log_hook, tasks};
use crate::call::{CallArgs, CallOptions, Finished, new_call_id, trace};
use crate::context::{CallData, CallEnv, ToolCallInfo, Writer};
use crate::error::{ErrorKind, ToolError};
use crate::registry::OwnedPrepared;
use crate::tool::{InputHook, Tool};

fn now_ms() -> u64 {
    SystemTime::now().duration_since(UNIX_EPOCH).map_or(0, |d| d.as_millis() as u64)
}

impl Runtime {
    /// Validates, shows the call, fires `on_input_available`, asks for approval or runs it.
    pub(crate) async fn run_new(&self, sink: &Sink, tool_name: &str, args: CallArgs<'static>, options: CallOptions) {
        let CallOptions { mut data, mut env } = options;
        // One copy of the id, the call's; the hook below takes another only when it runs.
        let call = CallRef::new(data.tool_call_id.get_or_insert_with(new_call_id).clone(), tool_name);
        // The tool is looked up before it is prepared only by a conversation that searches for
        // its deferred tools; any other call's one lookup is `prepare`'s.
        let unloaded = data.loaded_tools.as_ref().and_then(|loaded| {
            let t = self.inner.registry.get(tool_name)?;
            let deferred = data
                .deferral
                .as_ref()
                .map_or(t.spec().presentation.defer_loading, |d| d.defers(t.spec()));
            // The conversation has not found this one.
            (deferred && !loaded.contains(&t.spec().id)).then(|| crate::catalog::not_loaded(tool_name))
        });
        let prepared = match unloaded {
            Some(error) => Err(error),
            None => self
                .inner
                .registry
                .prepare(tool_name, &args, data.context.clone())
                .and_then(|p| p.into_owning()),
        };
        let prepared = match prepared {
            // Arguments valid as given are moved into the call, not copied.
            Ok(p) => p.with(args),
            Err(error) => {
                let tool = self.inner.registry.get(tool_name);
                let viewer = self.viewer(tool.as_deref());
                let args = match args {
                    CallArgs::Value(v) => v,
                    // Text that is not JSON, or repeats a key, is shown as the text it is.
                    CallArgs::Text(t) => crate::json::parse_unique(t.as_bytes()).unwrap_or(Value::String(t.into_owned())),
                };
                sink.send(viewer.event(call.event(RunEventKind::ToolCall { args })));
                return fail(sink, &viewer, &call, error);
            }
        };
        let tool = prepared.tool().clone();
        let viewer = self.viewer(Some(&*tool));
        if shows(sink) {
            let shown = viewer.event(call.event(RunEventKind::ToolCall {
                args: prepared.args().into_owned(),
            }));
            trace::record_arguments(&tracing::Span::current(), transcript_payload(&shown));
            sink.send(shown);
        }
        // What the call is, shared from here on by its hooks, its run and its report.
        let data = Arc::new(data);
        // The hooks and the tool share the call's one cancellation token and writer.
        let cancellation = env.cancellation.get_or_insert_with(Default::default).clone();
        // A reader that takes the outcome alone (an MCP request) drops every event: the tool's
        // writer then has nobody to write to, and says so (`Writer::is_connected`).
        env.writer = if sink.reads_events() {
            self.writer(sink, &call, &tool)
        } else {
            Writer::default()
        };
        if tool.spec().behaviour.hooks.on_input_available {
            let info = ToolCallInfo::new(tool_name, call.tool_call_id.clone(), data.clone(), env.clone(), cancellation);
            let args = prepared.args();
            log_hook(tool_name, "on_input_available", tool.input_hook(InputHook::Available(&args), &info));
        }
        if self.inner.approve_all || prepared.needs_approval(data.caller.as_deref()) {
            let waiting = Box::pin(self.wait(sink, &viewer, &call, &prepared, &data, Wait::Approval));
            return waiting.instrument(trace::approval_span()).await;
        }
        self.execute(sink, &prepared, &call, (data, env), None, (true, Origin::Fresh)).await;
    }

    /// The writer of a call: every chunk becomes a `custom` event of its run.
    pub(crate) fn writer(&self, sink: &Sink, call: &CallRef, tool: &std::sync::Arc<dyn Tool>) -> Writer {
        let (sink, tool, runtime, call) = (sink.clone(), tool.clone(), self.clone(), call.clone());
        Writer::new(move |data| {
            let chunk = call.event(RunEventKind::Custom { data });
            sink.send(runtime.viewer(Some(&*tool)).event(chunk));
        })
    }

    /// Runs a prepared call (in the background when the tool opted in and `may_background`)
    /// and reports how it ended. A client-side tool is not run: its call waits for its result.
    pub(crate) async fn execute(
        &self,
        sink: &Sink,
        prepared: &OwnedPrepared,
        call: &CallRef,
        (data, env): (Arc<CallData>, CallEnv),
        resume: Option<Value>,
        (may_background, origin): (bool, Origin),
    ) {
        let tool = prepared.tool().clone();
        // The rare branches are boxed, so their futures do not size every call's.
        if tool.spec().behaviour.client_side {
            return Box::pin(self.wait(sink, &self.viewer(Some(&*tool)), call, prepared, &data, Wait::Result)).await;
        }
        // A tool that asks first (`background(asks_first)`) runs its first round, which gathers
        // its input, in the foreground: only its resumed run goes to the background.
        let may_background = may_background && !(resume.is_none() && background::asks_first(tool.spec()));
        if let (true, Some(queue)) = (may_background, &self.inner.tasks) {
            if let Some(settings) = background::settings(tool.spec(), data.background.as_ref()) {
                return Box::pin(tasks::enqueue(self, queue, sink, (prepared, call, origin), data, settings, resume)).await;
            }
        } else if may_background
            && resume.is_none()
            && let Some(plan) = background::plan(&self.inner, tool.spec(), data.background.as_ref())
        {
            return Box::pin(background::run(self, sink, prepared, call, (data, env), plan)).await;
        }
        let ended = match super::once::attempt(&self.inner.receipts, prepared, &data, env, resume).await {
            super::once::Attempt::Ended(ended) => ended,
            // A call taken from the store whose body did not run (its receipt could not be
            // claimed now) waits again for a later decision, rather than being forgotten.
            super::once::Attempt::NotRun(error) if origin == Origin::Stored => {
                self.release(&call.tool_call_id).await;
                return fail(sink, &self.viewer(Some(&*tool)), call, error);
            }
            super::once::Attempt::NotRun(error) => Err(error),
        };
        self.report_from(origin, sink, &self.viewer(Some(&*tool)), prepared, call, &data, ended)
            .await;
    }

    /// Turns how a call ended into its last events and outcome; a suspension is recorded
    /// before it is announced, and a resolved call leaves the store.
    pub(crate) async fn report(
        &self,
        sink: &Sink,
        viewer: &Viewer<'_>,
        prepared: &OwnedPrepared,
        call: &CallRef,
        data: &CallData,
        ended: Result<Finished, ToolError>,
    ) {
        self.report_from(Origin::Stored, sink, viewer, prepared, call, data, ended).await
    }

    /// [`report`](Self::report) of a call from `origin`: a fresh call was never stored, so its
    /// end removes nothing from the store (no write per plain call, and a waiting call that
    /// happens to share its id is left alone).
    #[allow(clippy::too_many_arguments)]
    pub(crate) async fn report_from(
        &self,
        origin: Origin,
        sink: &Sink,
        viewer: &Viewer<'_>,
        prepared: &OwnedPrepared,
        call: &CallRef,
        data: &CallData,
        ended: Result<Finished, ToolError>,
    ) {
        // A resolved call leaves the store (a suspended one is stored again by `wait`).
        if origin == Origin::Stored && !matches!(ended, Ok(Finished::Suspended(_))) {
            self.forget(&call.tool_call_id).await;
        }
        match ended {
            Ok(Finished::Output(output)) => {
                if shows(sink) {
                    let shown = viewer.event(call.event(RunEventKind::ToolResult { output: output.clone() }));
                    trace::record_result(&tracing::Span::current(), transcript_payload(&shown));
                    sink.send(shown);
                }
                sink.end(Outcome::Done(output));
            }
            Ok(Finished::Suspended(s)) => self.wait(sink, viewer, call, prepared, data, Wait::Suspended(s.payload)).await,
            Err(error) => fail(sink, viewer, call, error),
        }
    }

    /// Records a call that waits (for approval, for resume data with a suspension's payload,
    /// or for its result), then announces it: what a user sees, survives.
    async fn wait(&self, sink: &Sink, viewer: &Viewer<'_>, call: &CallRef, prepared: &OwnedPrepared, data: &CallData, why: Wait) {
        let spec = prepared.tool().spec();
        let (kind, resume_schema, suspended) = match why {
            Wait::Approval => (PendingKind::Approval, Some(approval_resume_schema()), None),
            Wait::Suspended(payload) => (PendingKind::Suspended, spec.schemas.resume.clone(), Some(payload)),
            Wait::Result => (PendingKind::ClientResult, spec.schemas.output.clone(), None),
        };
        let pending = PendingCall {
            tool_call_id: call.tool_call_id.clone(),
            tool_name: call.tool_name.clone(),
            kind,
            args: prepared.args().into_owned(),
            data: CallData {
                tool_call_id: None,
                context: Some(Value::Object((*prepared.context).clone())),
                ..data.clone()
            },
            suspend_payload: suspended,
            resume_schema,
            created_at_ms: now_ms(),
            binding: (kind == PendingKind::Approval).then(|| {
                Binding::new(
                    &call.tool_call_id,
                    spec,
                    &prepared.args(),
                    data.caller.as_deref().map(crate::Caller::owner),
                )
            }),
            answers: Default::default(),
        };
        if let Err(e) = self.inner.store.save(&pending).await {
            let name = &call.tool_name;
            let error = match pending.kind {
                PendingKind::Approval => ToolError::with_kind(
                    ErrorKind::ApprovalRequired,
                    format!("Tool `{name}` requires approval, and the request could not be recorded ({e}); it was not run."),
                ),
                PendingKind::Suspended => ToolError::new(format!(
                    "Tool `{name}` suspended, but the suspension could not be recorded ({e}); call it again."
                )),
                PendingKind::ClientResult => ToolError::new(format!(
                    "Tool `{name}` is answered by the application, and its call could not be recorded to wait for the result ({e}); call it again."
                )),
            };
            return fail(sink, viewer, call, error.for_tool(name));
        }
        let args = pending.args.clone();
        let kind = match (pending.kind, &pending.suspend_payload) {
            (PendingKind::Approval, _) => RunEventKind::ToolCallApproval {
                args,
                resume_schema: approval_resume_schema(),
            },
            (PendingKind::Suspended, payload) => RunEventKind::ToolCallSuspended {
                suspend_payload: payload.clone().unwrap_or(Value::Null),
                args,
                resume_schema: pending.resume_schema.clone(),
            },
            (PendingKind::ClientResult, _) => RunEventKind::ToolCallAwaitingResult {
                args,
                output_schema: pending.resume_schema.clone(),
            },
        };
        let event = viewer.event(call.event(kind));
        sink.send(event.clone());
        let waiting = Box::new(Waiting { call: pending, event });
        sink.end(match waiting.call.kind {
            PendingKind::Approval => Outcome::AwaitingApproval(waiting),
            PendingKind::Suspended => Outcome::Suspended(waiting),
            PendingKind::ClientResult => Outcome::AwaitingResult(waiting),
        });
    }

    /// Removes a resolved call from the pending store; when the store fails, the removal is kept
    /// and tried again until it goes through (`settle`), so the call is not listed `running`
    /// after it ended.
    pub(crate) async fn forget(&self, id: &str) {
        self.forget_claimed(id, None).await;
    }

    /// [`forget`](Self::forget), and with `Some(claim)` only while the call is still running
    /// under `claim`, the claim this runtime took: for a call handed to something that may store
    /// it again on another thread (a durable task whose tool suspends itself again saves a new
    /// waiting call under the same id), which the removal must leave alone.
    pub(crate) async fn forget_claimed(&self, id: &str, claim: Option<Claim>) {
        let (store, owned) = (self.inner.store.clone(), id.to_owned());
        // A claim this runtime held stays its own until the removal went through (or was given up).
        let held = super::decide::Held(id.to_owned());
        super::settle::settle("remove a resolved call", id, move || {
            let _held = &held;
            let (store, id) = (store.clone(), owned.clone());
            async move {
                let Some(claim) = claim else {
                    return store.remove(&id).await;
                };
                if !store.remove_claimed(&id, &claim).await? {
                    tracing::debug!(tool_call_id = %id, "a continued call was stored again since it was handed on; it is kept");
                }
                Ok(())
            }
        })
        .await;
    }
}

/// Where a call being run comes from.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Origin {
    /// Started now: it was never stored.
    Fresh,
    /// Continued from the store (approved, resumed), or not known to be fresh.
    Stored,
}

/// Why a call waits (see [`PendingKind`]).
enum Wait {
    /// For a person's approval.
    Approval,
    /// For resume data, with what the tool passed to `suspend`.
    Suspended(Value),
    /// For its result from the application (a client-side tool).
    Result,
}

/// Whether a call's `tool-call` and `tool-result` events are built: its reader reads events,
/// or its span records what their transcript view shows.
fn shows(sink: &Sink) -> bool {
    sink.reads_events() || trace::records(&tracing::Span::current())
}

/// What the transcript view of an event shows of its arguments or result (what a call's span
/// may record): never the raw payload.
fn transcript_payload(event: &Event) -> Option<&Value> {
    match &event.transcript.as_ref()?.kind {
        RunEventKind::ToolCall { args } => Some(args),
        RunEventKind::ToolResult { output } => Some(&output.result),
        _ => None,
    }
}

/// Ends a run with an error, logged at warn: the tool, the call id and the error's kind, and
/// the message only when this crate wrote it (unknown tool, approval, cancellation, timeout):
/// a tool's own message or a validation message may quote the arguments.
pub(crate) fn fail(sink: &Sink, viewer: &Viewer<'_>, call: &CallRef, error: ToolError) {
    trace::record_error(&tracing::Span::current(), &error);
    let (tool, id, kind) = (&call.tool_name, &call.tool_call_id, error.kind().as_str());
    match error.kind() {
        ErrorKind::Aborted => tracing::warn!(tool = %tool, tool_call_id = %id, kind, error = error.message(), "tool call interrupted"),
        ErrorKind::UnknownTool | ErrorKind::ApprovalRequired => {
            tracing::warn!(tool = %tool, tool_call_id = %id, kind, error = error.message(), "tool call failed")
        }
        _ => tracing::warn!(tool = %tool, tool_call_id = %id, kind, "tool call failed"),
    }
    sink.send(viewer.event(call.event(RunEventKind::ToolError { error: error.clone() })));
    sink.end(Outcome::Failed(error));
}
