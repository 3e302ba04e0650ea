//! MCP tasks: the `io.modelcontextprotocol/tasks` extension (SEP-2663, 2026-07-28), as `rmcp`
//! implements it.
//!
//! A `tools/call` of a tool that opted into the background (`background(enabled)`), from a
//! client that declared the extension in the request's capabilities, to a runtime with a task
//! store, is answered at once with a task handle (`resultType: "task"`); the call runs as a
//! durable task of the runtime's [`TaskStore`](crate::runtime::TaskStore), so any instance on the
//! store answers `tasks/get`, `tasks/update` and `tasks/cancel` for it, after the request that
//! started it is long gone. Owns the task handle (its id, `task_<call id>`, is the task's id in
//! the store and names the call while it waits for approval), who owns a task, and the mapping
//! of where the call is to the extension's `Task`:
//!
//! | where the call is | status |
//! |---|---|
//! | waiting for approval (the runtime's pending store) | `input_required`, the approval form as `inputRequests.approval` |
//! | waiting for resume data (its tool suspended itself; the pending store) | `input_required`, a form per part not answered yet (`inputRequests.<part>`), or `inputRequests.resume` for the whole |
//! | queued or running (the task store) | `working` |
//! | completed, or failed (a tool error; a declined approval) | `completed`, the `CallToolResult` (`isError` for a failure) |
//! | failed by a panic of the tool (a protocol-level failure) | `failed`, a JSON-RPC error |
//! | cancelled (running, queued or waiting) | `cancelled` |
//!
//! A task belongs to who started it (the token's subject, else the bearer token, else the
//! session, else nobody): anyone else — another subject, the static-token holder, a request
//! with no caller for a caller's task and a caller for a task nobody owned — is told exactly
//! what an unknown task id is told, and the refusal is logged. Running calls is `call`'s, the approval form and applying
//! an answer are `ask`'s, the queue is the runtime's.

use rmcp::model::{
    CallToolResponse, ClientCapabilities, CreateTaskResult, DetailedTask, ElicitRequest, ElicitRequestParams, ElicitResult,
    ElicitationAction, ErrorCode, InputRequest, InputRequests, InputResponses, JsonObject, TASKS_EXTENSION_ID, Task, TaskPayload,
    TaskStatus,
};
use rmcp::service::{RequestContext, RoleServer};
use rmcp::{ErrorData, ServerHandler};
use serde_json::{Value, json};

use super::call::{ToolRef, error_result};
use super::server::{McpServer, modern};
use super::{ask, convert, identity};
use crate::context::CallEnv;
use crate::runtime::{EventStream, Outcome, Parted, PendingCall, PendingKind, RunEventKind, TaskRecord, TaskState};
use crate::spec::{BackgroundOverride, BackgroundSpec, TaskSupport};
use crate::tool::Tool;

/// How often a client is told to poll `tasks/get`, in milliseconds.
const POLL_INTERVAL_MS: u64 = 500;

/// The form key of an approval (as in `ask`'s input-required results).
const APPROVAL: &str = "approval";

/// The form key of resume data asked whole (as in `ask`'s input-required results).
const RESUME: &str = "resume";

/// The task id of call `call_id`.
pub(super) fn task_id_of(call_id: &str) -> String {
    format!("task_{call_id}")
}

/// The call id of task `task_id` (`None`: not a task handle of this server).
fn call_id_of(task_id: &str) -> Option<&str> {
    task_id.strip_prefix("task_").filter(|c| c.starts_with("mcp_"))
}

/// Where a task's call is now.
enum Found {
    /// In the task store: queued, running or ended.
    Stored(Box<TaskRecord>),
    /// In the runtime's pending store, waiting for approval.
    Waiting(Box<PendingCall>),
}

fn iso(ms: u64) -> String {
    let ms = i64::try_from(ms).unwrap_or(i64::MAX);
    let at = chrono::DateTime::from_timestamp_millis(ms).unwrap_or_default();
    at.to_rfc3339_opts(chrono::SecondsFormat::Millis, true)
}

fn task(id: &str, status: TaskStatus, created_ms: u64, updated_ms: u64) -> Task {
    Task::new(id, status, iso(created_ms), iso(updated_ms)).with_poll_interval_ms(POLL_INTERVAL_MS)
}

fn no_task(id: &str) -> ErrorData {
    ErrorData::invalid_params(
        format!("There is no task `{id}` for this caller: it is unknown, or another caller started it."),
        Some(json!({"taskId": id})),
    )
}

fn store_error(id: &str, e: impl std::fmt::Display) -> ErrorData {
    ErrorData::internal_error(format!("The task `{id}` could not be read from the store: {e}"), None)
}

impl<E: ServerHandler + Clone> McpServer<E> {
    /// Whether this call is answered with a task handle: a 2026-07-28 request whose client
    /// declared the tasks extension, a tool that opted into the background, a task store.
    pub(super) fn runs_as_task(&self, tool: &ToolRef, ctx: &RequestContext<RoleServer>) -> bool {
        // The revision first: the capabilities are a copy, made only for a request that can
        // start a task.
        modern(ctx)
            && ctx.client_capabilities().is_some_and(|c| c.supports_tasks())
            && self.task_support(&tool.id) != TaskSupport::Forbidden
            && self.shared.runtime.has_task_store()
    }

    /// Whether the tool with this id gathers its input before it becomes a task
    /// (`background(asks_first)`): its first round runs in the request, its resumed run is
    /// the task.
    pub(super) fn asks_first(&self, id: &str) -> bool {
        let tool = self.registry().get(id);
        tool.is_some_and(|t| t.spec().policy.background.is_some_and(|b| b.asks_first))
    }

    /// How the tool with this id takes part in tasks (`Forbidden` for an unknown one).
    pub(super) fn task_support(&self, id: &str) -> TaskSupport {
        let tool = self.registry().get(id);
        BackgroundSpec::task_support(tool.as_ref().and_then(|t| t.spec().policy.background.as_ref()))
    }

    /// The refusal of a call of a task-required tool (`background(required)`) that cannot run
    /// as a task for this request, before the tool runs: on 2026-07-28, a client that did not
    /// declare the tasks extension gets a missing required client capability (`-32021`,
    /// SEP-2663 "Required Capabilities", naming the extension in `requiredCapabilities`); an
    /// older revision's client, which cannot start a task here, gets `-32601` (2025-11-25:
    /// "Servers MUST return a -32601 (Method not found) error if a client does not attempt
    /// to" invoke a `required` tool as a task); a server without a task store cannot run it.
    pub(super) fn refuse_foreground(
        &self,
        tool: &ToolRef,
        registered: Option<&dyn Tool>,
        ctx: &RequestContext<RoleServer>,
    ) -> Option<ErrorData> {
        let support = BackgroundSpec::task_support(registered.and_then(|t| t.spec().policy.background.as_ref()));
        if support != TaskSupport::Required || self.runs_as_task(tool, ctx) {
            return None;
        }
        let name = &tool.name;
        let data = Some(json!({"taskSupport": TaskSupport::Required.as_str()}));
        if !modern(ctx) {
            let message = format!(
                "The tool `{name}` runs only as a task, which this server starts for clients of MCP 2026-07-28 that declare the `{TASKS_EXTENSION_ID}` extension."
            );
            return Some(ErrorData::new(ErrorCode::METHOD_NOT_FOUND, message, data));
        }
        if !ctx.client_capabilities().is_some_and(|c| c.supports_tasks()) {
            let mut refused = ErrorData::missing_required_client_capability(ClientCapabilities::builder().enable_tasks().build());
            refused.message = format!(
                "The tool `{name}` runs only as a task: declare the `{TASKS_EXTENSION_ID}` extension in the request's client capabilities to call it."
            )
            .into();
            return Some(refused);
        }
        let message = format!("The tool `{name}` runs only as a task, and this server keeps no task store to run it in.");
        Some(ErrorData::internal_error(message, data))
    }

    /// Who owns the tasks this request starts: the token's subject, else the session (as for
    /// kept results, [`result_owner`](Self::result_owner); `None`: nobody, the task id alone is
    /// the key).
    fn task_owner(&self, ctx: &RequestContext<RoleServer>) -> Option<String> {
        match identity::of(ctx) {
            Some(caller) => Some(caller.owner()),
            None => self.result_owner(ctx),
        }
    }

    /// The background override that makes call `call_id` the task its handle names, owned by
    /// this request's caller. The call goes to the queue at once (no wait for its result).
    pub(super) fn task_override(&self, call_id: &str, ctx: &RequestContext<RoleServer>) -> BackgroundOverride {
        BackgroundOverride {
            enabled: Some(true),
            wait_timeout_ms: Some(0),
            task_id: Some(task_id_of(call_id)),
            task_owner: self.task_owner(ctx),
            ..Default::default()
        }
    }

    /// Answers a call started as a task with its handle once the call is queued (`working`) or
    /// waits for approval (`input_required`); a call that ended before either (invalid
    /// arguments, a refusal) is answered as usual.
    pub(super) async fn task_handle(
        &self,
        tool: &ToolRef,
        mut events: EventStream,
        task_id: &str,
        ctx: &RequestContext<RoleServer>,
        continuation: &CallEnv,
    ) -> CallToolResponse {
        if let Err(outcome) = queued(&mut events).await {
            return self.answer(tool, outcome, ctx, 0, continuation).await;
        }
        // The handle is the task as stored (the times `tasks/get` will show).
        match self.get_task(task_id, ctx).await {
            Ok(detailed) => CreateTaskResult::new(detailed.task).into(),
            Err(e) => error_result(format!(
                "Tool `{}` was started as the task `{task_id}`, which cannot be read back: {}",
                tool.name, e.message
            )),
        }
    }

    /// Finds task `id` for this request's caller.
    async fn find(&self, id: &str, ctx: &RequestContext<RoleServer>) -> Result<Found, ErrorData> {
        let call_id = call_id_of(id).ok_or_else(|| no_task(id))?;
        let runtime = &self.shared.runtime;
        // The task store first: an approved call enters it before it leaves the pending store.
        let mut found = runtime
            .task(id)
            .await
            .map_err(|e| store_error(id, e))?
            .map(|r| Found::Stored(Box::new(r)));
        if found.is_none() {
            found = runtime
                .pending_call(call_id)
                .await
                .map_err(|e| store_error(id, e))?
                .map(|c| Found::Waiting(Box::new(c)));
        }
        if found.is_none() {
            found = runtime
                .task(id)
                .await
                .map_err(|e| store_error(id, e))?
                .map(|r| Found::Stored(Box::new(r)));
        }
        let data = match &found {
            Some(Found::Stored(record)) => &record.task.data,
            Some(Found::Waiting(call)) => &call.data,
            None => return Err(no_task(id)),
        };
        let handle = data.background.as_ref().filter(|b| b.task_id.as_deref() == Some(id));
        let Some(handle) = handle else { return Err(no_task(id)) };
        // The owner must match exactly: a task nobody owned is no one's to read either (it was
        // started by a request with no caller, which no later request can prove it is).
        if handle.task_owner != self.task_owner(ctx) {
            identity::refused_as_unknown("task");
            return Err(no_task(id));
        }
        found.ok_or_else(|| no_task(id))
    }

    /// `tasks/get`: where the task is, with its result once it ended.
    pub(super) async fn get_task(&self, id: &str, ctx: &RequestContext<RoleServer>) -> Result<DetailedTask, ErrorData> {
        Ok(match self.find(id, ctx).await? {
            Found::Waiting(call) => self.waiting_task(id, &call),
            Found::Stored(record) => self.stored_task(id, *record),
        })
    }

    fn waiting_task(&self, id: &str, call: &PendingCall) -> DetailedTask {
        let base = task(id, TaskStatus::InputRequired, call.created_at_ms, call.created_at_ms);
        if call.kind == PendingKind::Suspended
            && let Some(input_requests) = resume_requests(call)
        {
            let base = base
                .with_status_message("Waiting for the user's input: answer with `tasks/update` (one request at a time, or all at once).");
            return DetailedTask::new(base, TaskPayload::InputRequired { input_requests });
        }
        if call.kind != PendingKind::Approval {
            let message = format!("The call waits for {}.", call.kind.waits_for());
            return DetailedTask::new(base.with_status_message(message), TaskPayload::Working);
        }
        let tool = self.registry().get(&call.tool_name);
        let form = ask::approval_form(tool.as_ref().map(|t| &t.spec().schemas.input));
        let args = crate::call::quote(&call.args);
        let params = ElicitRequestParams::FormElicitationParams {
            meta: None,
            message: format!("Allow the tool `{}` to run with these arguments?\n{args}", call.tool_name),
            requested_schema: form,
        };
        let mut input_requests = InputRequests::new();
        input_requests.insert(APPROVAL.to_owned(), InputRequest::Elicitation(ElicitRequest::new(params)));
        let base = base.with_status_message("Waiting for the user's approval: answer with `tasks/update`.");
        DetailedTask::new(base, TaskPayload::InputRequired { input_requests })
    }

    fn stored_task(&self, id: &str, record: TaskRecord) -> DetailedTask {
        let base = |status| task(id, status, record.task.created_at_ms, record.updated_at_ms);
        let result = |r: rmcp::model::CallToolResult| match serde_json::to_value(r) {
            Ok(Value::Object(object)) => object,
            _ => JsonObject::new(),
        };
        let failed = |text: String| result(rmcp::model::CallToolResult::error(vec![rmcp::model::ContentBlock::text(text)]));
        match record.state {
            TaskState::Queued | TaskState::Running => {
                let message = match record.state {
                    TaskState::Queued if record.attempts > 0 => format!("Queued again after attempt {} failed.", record.attempts),
                    TaskState::Queued => "Queued.".to_owned(),
                    _ => format!("Running (attempt {}).", record.attempts),
                };
                DetailedTask::new(base(TaskStatus::Working).with_status_message(message), TaskPayload::Working)
            }
            TaskState::Completed => {
                let has_schema = self
                    .registry()
                    .get(&record.task.tool_name)
                    .is_some_and(|t| t.spec().schemas.output.is_some());
                let converted = record.output.as_ref().map(|o| convert::call_result(o, has_schema, false));
                let result = match converted {
                    Some(Ok((r, _))) => result(r),
                    Some(Err(e)) => failed(format!("The task's output cannot be carried by MCP: {e}")),
                    None => failed("The task completed without an output.".to_owned()),
                };
                DetailedTask::new(base(TaskStatus::Completed), TaskPayload::Completed { result })
            }
            // A tool that panicked did not report an error, it broke: a protocol-level failure
            // (`failed`, with a JSON-RPC error); any other failure is the tool's error result.
            TaskState::Failed if record.error.as_ref().is_some_and(|e| e.kind() == crate::error::ErrorKind::Panic) => {
                let message = record.error.as_ref().map_or("", |e| e.message());
                let error = match serde_json::to_value(ErrorData::internal_error(format!("The tool failed: {message}"), None)) {
                    Ok(Value::Object(error)) => error,
                    _ => JsonObject::new(),
                };
                DetailedTask::new(base(TaskStatus::Failed), TaskPayload::Failed { error })
            }
            TaskState::Failed => {
                let text = record
                    .error
                    .map_or_else(|| "The task failed.".to_owned(), |e| e.message().to_owned());
                DetailedTask::new(base(TaskStatus::Completed), TaskPayload::Completed { result: failed(text) })
            }
            TaskState::Cancelled => DetailedTask::new(base(TaskStatus::Cancelled), TaskPayload::Cancelled),
        }
    }

    /// `tasks/update`: the user's answer to a task's approval form. Approved, the call is
    /// queued before this returns; declined, the task ends with the declined call's answer.
    pub(super) async fn update_task(
        &self,
        id: &str,
        responses: &InputResponses,
        ctx: &RequestContext<RoleServer>,
    ) -> Result<(), ErrorData> {
        let Found::Waiting(call) = self.find(id, ctx).await? else {
            return Err(ErrorData::invalid_params(format!("The task `{id}` waits for no input."), None));
        };
        if call.kind == PendingKind::Suspended {
            return self.update_suspended(id, &call, responses, ctx).await;
        }
        let answer = responses
            .get(APPROVAL)
            .and_then(|v| serde_json::from_value::<ElicitResult>(v.clone()).ok());
        // Responses to nothing this task asked are ignored (SEP-2322): the task still waits.
        let Some(answer) = answer else {
            if responses.contains_key(APPROVAL) {
                return Err(ErrorData::invalid_params(
                    format!("The answer for task `{id}` is not an elicitation result: `inputResponses.{APPROVAL}` must be one."),
                    None,
                ));
            }
            return Ok(());
        };
        if let Some(reason) = ask::declined(&answer).filter(|_| call.kind == PendingKind::Approval) {
            // The task ends as the declined call's answer: a tool error saying so.
            let error = crate::error::ToolError::new(Outcome::declined_text(&reason));
            self.end_waiting(&call, TaskState::Failed, &error).await?;
        }
        let mut events = self
            .apply(&call.tool_call_id, call.kind, answer, self.options(ctx, CallEnv::default()))
            .await
            .map_err(|e| ErrorData::invalid_params(format!("The answer for task `{id}` could not be used: {e}"), None))?;
        // Until the approved call is queued (a declined one just ends).
        let _ = queued(&mut events).await;
        Ok(())
    }

    /// `tasks/update` of a task whose tool suspended itself: the answers to its questions (one
    /// per part of its resume data, or the whole of it), kept with the waiting call until the
    /// last one is in (so any instance takes the rest); then the call is queued again with
    /// them before this returns. Answers that do not accept (declined, dismissed) leave their
    /// question open; answers to nothing asked are ignored (SEP-2322).
    async fn update_suspended(
        &self,
        id: &str,
        call: &PendingCall,
        responses: &InputResponses,
        ctx: &RequestContext<RoleServer>,
    ) -> Result<(), ErrorData> {
        let accepted = |key: &str| -> Result<Option<Value>, ErrorData> {
            let Some(given) = responses.get(key) else { return Ok(None) };
            let answer = serde_json::from_value::<ElicitResult>(given.clone()).map_err(|_| {
                ErrorData::invalid_params(
                    format!("The answer for task `{id}` is not an elicitation result: `inputResponses.{key}` must be one."),
                    None,
                )
            })?;
            Ok((answer.action == ElicitationAction::Accept).then(|| answer.content.unwrap_or_else(|| json!({}))))
        };
        let options = self.options(ctx, CallEnv::default());
        let unusable =
            |e: crate::runtime::RuntimeError| ErrorData::invalid_params(format!("The answer for task `{id}` could not be used: {e}"), None);
        let missing = call.missing_parts();
        let mut events = if missing.is_empty() {
            let Some(data) = accepted(RESUME)? else { return Ok(()) };
            self.shared
                .runtime
                .resume(&call.tool_call_id, data, options)
                .await
                .map_err(unusable)?
        } else {
            let mut given = serde_json::Map::new();
            for part in missing {
                if let Some(data) = accepted(&part)? {
                    given.insert(part, data);
                }
            }
            if given.is_empty() {
                return Ok(());
            }
            match self
                .shared
                .runtime
                .answer_part(&call.tool_call_id, given, options)
                .await
                .map_err(unusable)?
            {
                Parted::Waiting { .. } => return Ok(()),
                Parted::Resumed(events) => *events,
            }
        };
        // Until the resumed call is queued again.
        let _ = queued(&mut events).await;
        Ok(())
    }

    /// Records the task of the waiting call `call` as ended (before the call is resolved, so
    /// the task is never unknown in between).
    async fn end_waiting(&self, call: &PendingCall, state: TaskState, error: &crate::error::ToolError) -> Result<(), ErrorData> {
        let id = call.data.background.as_ref().and_then(|b| b.task_id.as_deref()).unwrap_or_default();
        let ended = self.shared.runtime.end_waiting_task(call, state, error).await;
        ended.map(drop).map_err(|e| {
            ErrorData::internal_error(
                format!("The task `{id}` could not be ended in the store ({e}); it still waits."),
                None,
            )
        })
    }

    /// `tasks/cancel`: a queued or running task ends cancelled (a running one is stopped); a
    /// task waiting for approval ends cancelled, its call declined; a task that already ended
    /// is acknowledged as it is (cancelling is idempotent, SEP-2663: only an unknown task id is
    /// an error).
    pub(super) async fn cancel_task(&self, id: &str, ctx: &RequestContext<RoleServer>) -> Result<(), ErrorData> {
        match self.find(id, ctx).await? {
            Found::Stored(record) if record.state.is_final() => Ok(()),
            Found::Stored(_) => {
                let options = self.options(ctx, CallEnv::default());
                self.shared
                    .runtime
                    .cancel_task_with(id, options)
                    .await
                    .map_err(|e| store_error(id, e))?;
                Ok(())
            }
            Found::Waiting(call) => {
                let error = crate::error::ToolError::with_kind(crate::error::ErrorKind::Aborted, "The task was cancelled.");
                self.end_waiting(&call, TaskState::Cancelled, &error).await?;
                if call.kind == PendingKind::Suspended {
                    // Nothing to decline: the suspended call is just given up.
                    self.shared.runtime.forget(&call.tool_call_id).await;
                    return Ok(());
                }
                let options = self.options(ctx, CallEnv::default());
                let declined = self
                    .shared
                    .runtime
                    .decline_with(&call.tool_call_id, "the task was cancelled", options)
                    .await;
                match declined {
                    Ok(stream) => drop(stream.finish().await),
                    Err(e) => tracing::info!(task_id = id, error = %e, "a cancelled task's waiting call was not declined"),
                }
                Ok(())
            }
        }
    }
}

/// The questions of a task whose tool suspended itself: one per part of its resume data not
/// answered yet (each part's form), or its resume data whole as one form (`resume`). `None`:
/// its resume data is not a form a client can ask for.
fn resume_requests(call: &PendingCall) -> Option<InputRequests> {
    let payload = call.suspend_payload.as_ref().map(Value::to_string).unwrap_or_default();
    let request = |key: &str, schema: &Value| {
        let form = ask::flat_form(schema)?;
        let params = ElicitRequestParams::FormElicitationParams {
            meta: None,
            message: format!("Tool `{}` needs your input to continue ({key}):\n{payload}", call.tool_name),
            requested_schema: form,
        };
        Some((key.to_owned(), InputRequest::Elicitation(ElicitRequest::new(params))))
    };
    let parts = call.parts();
    if parts.is_empty() {
        let whole = request(RESUME, call.resume_schema.as_ref()?)?;
        return Some(InputRequests::from_iter([whole]));
    }
    call.missing_parts()
        .iter()
        .map(|part| request(part, &call.part_schema(part)?))
        .collect()
}

/// Follows a run until its call is queued as a task (`working`) or waits for approval
/// (`input_required`); `Err` with the outcome when it ended otherwise.
async fn queued(events: &mut EventStream) -> Result<TaskStatus, Option<Outcome>> {
    while let Some(event) = events.next().await {
        if matches!(event.raw.kind, RunEventKind::BackgroundTaskStarted { .. }) {
            return Ok(TaskStatus::Working);
        }
    }
    match events.take_outcome() {
        Some(Outcome::AwaitingApproval(_)) => Ok(TaskStatus::InputRequired),
        other => Err(other),
    }
}
