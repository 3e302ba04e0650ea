//! Asking the client's user about a waiting call: approval, and the data a suspended call
//! resumes with.
//!
//! Owns the approval and resume forms ([`approval_form`], [`flat_form`]), putting them to the
//! client (an elicitation request up to 2025-11-25, an input-required result on 2026-07-28,
//! or, when neither can reach a user, a result saying how to continue from the `toolsmith`
//! command line) and applying the answer to the runtime's waiting call. It does not keep runs
//! whose tool asked mid-call (`parked`) and does not map other outcomes (`call`).

use std::collections::BTreeMap;

use rmcp::ServerHandler;
use rmcp::model::{
    BooleanSchema, CallToolResponse, CallToolResult, ContentBlock, ElicitRequest, ElicitRequestParams, ElicitResult, ElicitationAction,
    ElicitationSchema, InputRequest, InputRequests, InputRequiredResult, InputResponses, PrimitiveSchemaDefinition, StringSchema,
};
use rmcp::service::{RequestContext, RoleServer};
use serde_json::{Value, json};

use super::call::{ToolRef, error_result};
use super::call_meta::DECISION_META;
use super::parked::no_waiting_call;
use super::server::{McpServer, SESSIONLESS, modern};
use crate::context::CallEnv;
use crate::runtime::{Answer, Decision, EventStream, PendingKind, ResumeOptions, RunEventKind, RuntimeError, Waiting};
use crate::spec::TransformPhase;

/// What came of asking the client's user.
enum Asked {
    /// The user answered.
    Answer(ElicitResult),
    /// The question went out as the call's answer (2026-07-28); the client calls again.
    Deferred(CallToolResponse),
    /// Nobody could be asked, and why.
    Cannot(String),
}

/// Why a call waiting for approval is declined when the request asking for it is cancelled.
pub(super) const CANCELLED: &str = "cancelled by the client";

/// Rounds of questions one call may ask within one request before it is left waiting.
const MAX_ROUNDS: u32 = 8;

/// The prefix of an approval form's edit fields (`edit.amount`).
const EDIT: &str = "edit.";

/// The approval form: approve or not, and why (told to the model on a decline); when the
/// tool's arguments are flat (scalars only), one optional field per argument to run it with
/// another value instead (an edit).
pub(super) fn approval_form(input_schema: Option<&Value>) -> ElicitationSchema {
    let approved = BooleanSchema::new().title("Approve").description("Let the tool run.");
    let reason = StringSchema::new()
        .title("Reason")
        .description("Why (told to the model when you decline).");
    let mut properties = BTreeMap::from([
        ("approved".to_owned(), PrimitiveSchemaDefinition::Boolean(approved)),
        ("reason".to_owned(), PrimitiveSchemaDefinition::String(reason)),
    ]);
    let flat = input_schema.and_then(flat_form).and_then(|f| serde_json::to_value(f).ok());
    for (name, field) in flat.as_ref().and_then(|f| f["properties"].as_object()).into_iter().flatten() {
        let mut field = field.clone();
        let said = field.get("description").and_then(Value::as_str).unwrap_or_default();
        field["description"] =
            json!(format!("{said} Set it to run the tool with this value instead; leave it empty to keep the one shown.").trim());
        field["title"] = json!(format!("{name} (edit)"));
        if let Some(o) = field.as_object_mut() {
            o.remove("default");
        }
        if let Ok(field) = serde_json::from_value::<PrimitiveSchemaDefinition>(field) {
            properties.insert(format!("{EDIT}{name}"), field);
        }
    }
    ElicitationSchema::new(properties).with_required(vec!["approved".to_owned()])
}

/// The arguments an approval form's answer edits (its non-empty `edit.*` fields), if any.
fn edits(content: Option<&Value>) -> serde_json::Map<String, Value> {
    let fields = content.and_then(Value::as_object).into_iter().flatten();
    fields
        .filter(|(_, v)| !(v.is_null() || v.as_str() == Some("")))
        .filter_map(|(k, v)| Some((k.strip_prefix(EDIT)?.to_owned(), v.clone())))
        .collect()
}

/// A resume schema as an elicitation form: an object whose properties are all strings,
/// numbers, integers, booleans or enums (what MCP forms can show). `None` otherwise.
pub(super) fn flat_form(schema: &Value) -> Option<ElicitationSchema> {
    let props = schema.get("properties")?.as_object()?;
    let mut out = serde_json::Map::new();
    for (k, p) in props {
        let mut p = p.clone();
        // schemars writes optional fields as `type: [T, "null"]`; a form field is just T.
        if let Some(types) = p.get("type").and_then(Value::as_array) {
            let non_null: Vec<&Value> = types.iter().filter(|t| *t != "null").collect();
            if non_null.len() != 1 {
                return None;
            }
            p["type"] = non_null[0].clone();
        }
        let ty = p.get("type").and_then(Value::as_str)?;
        if !matches!(ty, "string" | "number" | "integer" | "boolean") {
            return None;
        }
        if let Some(obj) = p.as_object_mut() {
            obj.retain(|k, _| {
                matches!(
                    k.as_str(),
                    "type" | "title" | "description" | "enum" | "default" | "minimum" | "maximum" | "format"
                )
            });
        }
        out.insert(k.clone(), p);
    }
    let mut form = json!({"type": "object", "properties": out});
    if let Some(req) = schema.get("required") {
        form["required"] = req.clone();
    }
    // The resume schema is the tool's JSON Schema: what is left of it is read as a form once.
    serde_json::from_value(form).ok()
}

/// Why the user's answer to an approval form declines the call (`None`: it approves it); a
/// decline without a reason says how the user answered.
pub(super) fn declined(answer: &ElicitResult) -> Option<String> {
    let field = |k: &str| answer.content.as_ref().and_then(|c| c.get(k));
    if answer.action == ElicitationAction::Accept && field("approved").and_then(Value::as_bool) == Some(true) {
        return None;
    }
    let reason = field("reason").and_then(Value::as_str).map(str::to_owned);
    Some(reason.unwrap_or_else(|| match answer.action {
        ElicitationAction::Cancel => "the user dismissed the request".into(),
        _ => "the user declined".into(),
    }))
}

impl<E: ServerHandler + Clone> McpServer<E> {
    /// Asks the client's user to approve a waiting call, and goes on as they answered.
    pub(super) async fn ask_approval(
        &self,
        tool: &ToolRef,
        waiting: &Waiting,
        ctx: &RequestContext<RoleServer>,
        round: u32,
        continuation: &CallEnv,
    ) -> CallToolResponse {
        let (name, id) = (&tool.name, waiting.id());
        let args = match waiting.display().map(|e| &e.kind) {
            Some(RunEventKind::ToolCallApproval { args, .. }) => crate::call::quote(args),
            _ => crate::runtime::placeholder(TransformPhase::Approval).to_string(),
        };
        let message = format!("Allow the tool `{name}` to run with these arguments?\n{args}");
        let input_schema = self.shared.runtime.registry().get(&tool.id).map(|t| t.spec().schemas.input.clone());
        let form = approval_form(input_schema.as_ref());
        let not_asked = |why: &str| {
            error_result(format!(
                "Tool `{name}` requires approval before it runs; it was not run ({why}). The call waits as `{id}`: a person can approve it with `{cmd} call {id} --approve` or decline it with `{cmd} call {id} --decline REASON` (`{cmd} pending` lists waiting calls; `{cmd} pending --token` prints a signed approval a client sends back in a call of this tool as `_meta[\"{DECISION_META}\"]`).",
                cmd = crate::error::operator(),
            ))
        };
        // Cancelling the request (or ending its session) while the user is asked declines the
        // call: nobody is left to answer for it, and it must not run later by surprise.
        let state = self.waiting_state(id, tool, super::identity::owner_of(ctx).as_deref());
        let asked = tokio::select! {
            biased;
            () = ctx.ct.cancelled() => Asked::Cannot(CANCELLED.into()),
            asked = self.elicit(ctx, "approval", &state, &message, form) => asked,
        };
        // The question may also fail because the session ended: its requests are cancelled first.
        if ctx.ct.is_cancelled() {
            return self.decline_cancelled(id, ctx).await;
        }
        match asked {
            Asked::Answer(answer) => match self.decide(id, &answer, self.options(ctx, continuation.clone())).await {
                Ok(s) => Box::pin(self.conclude(tool, s, ctx, round + 1, continuation)).await,
                Err(e) => error_result(format!("The approval of `{id}` could not be applied: {e}")),
            },
            Asked::Deferred(r) => r,
            Asked::Cannot(why) => not_asked(&why),
        }
    }

    /// Asks the client's user for the data a suspended call resumes with (when its resume
    /// schema is a flat form), and goes on with it.
    pub(super) async fn ask_resume(
        &self,
        tool: &ToolRef,
        waiting: &Waiting,
        ctx: &RequestContext<RoleServer>,
        round: u32,
        continuation: &CallEnv,
    ) -> CallToolResponse {
        let (name, id) = (&tool.name, waiting.id());
        let resume_schema = waiting.call.resume_schema.as_ref();
        let payload = match waiting.display().map(|e| &e.kind) {
            Some(RunEventKind::ToolCallSuspended { suspend_payload, .. }) => suspend_payload.to_string(),
            _ => crate::runtime::placeholder(TransformPhase::Suspend).to_string(),
        };
        let waiting = |why: &str| {
            let text = format!(
                "Tool `{name}` is waiting for input ({why}): {payload}. The call waits as `{id}`; continue it with `{cmd} resume {id} 'JSON'` (data matching its resume schema).",
                cmd = crate::error::operator(),
            );
            CallToolResult::success(vec![ContentBlock::text(text)]).into()
        };
        let Some(form) = resume_schema.and_then(flat_form) else {
            return waiting("its resume data is not a flat form a client can ask for");
        };
        if round >= MAX_ROUNDS {
            return waiting("it asked too many times in one call");
        }
        let message = format!("Tool `{name}` needs your input to continue:\n{payload}");
        // A cancelled request stops asking; the suspended call keeps waiting for its data.
        let state = self.waiting_state(id, tool, super::identity::owner_of(ctx).as_deref());
        let asked = tokio::select! {
            asked = self.elicit(ctx, "resume", &state, &message, form) => asked,
            () = ctx.ct.cancelled() => return waiting("the request was cancelled"),
        };
        match asked {
            Asked::Answer(answer) if answer.action == ElicitationAction::Accept => {
                let data = answer.content.unwrap_or(json!({}));
                match self.shared.runtime.resume(id, data, self.options(ctx, continuation.clone())).await {
                    Ok(s) => Box::pin(self.conclude(tool, s, ctx, round + 1, continuation)).await,
                    Err(e) => error_result(format!("The answer could not be used ({e}); the call still waits as `{id}`.")),
                }
            }
            Asked::Answer(_) => waiting("the user did not answer"),
            Asked::Deferred(r) => r,
            Asked::Cannot(why) => waiting(&why),
        }
    }

    /// Declines the call `id` whose request was cancelled while its user was asked for
    /// approval (the client sent `notifications/cancelled`, or its session ended).
    async fn decline_cancelled(&self, id: &str, ctx: &RequestContext<RoleServer>) -> CallToolResponse {
        let options = self.options(ctx, CallEnv::default());
        match self.shared.runtime.decline_with(id, CANCELLED, options).await {
            Ok(stream) => drop(stream.finish().await),
            // Already resolved (someone approved or declined it meanwhile): nothing to undo.
            Err(e) => tracing::info!(tool_call_id = id, error = %e, "a cancelled request's waiting call was not declined"),
        }
        error_result(format!("The call `{id}` was declined: {CANCELLED}."))
    }

    /// Asks the client's user: a request on older revisions, an input-required result (the
    /// client answers and calls again, naming the waiting call) on 2026-07-28.
    /// `state` is what a 2026-07-28 client brings back with its answer ([`Self::waiting_state`]).
    async fn elicit(&self, ctx: &RequestContext<RoleServer>, key: &str, state: &str, message: &str, form: ElicitationSchema) -> Asked {
        if self.sessionless(ctx) {
            return Asked::Cannot(format!("{SESSIONLESS}, so the client's user cannot be asked"));
        }
        if ctx.client_capabilities().is_none_or(|c| c.elicitation.is_none()) {
            return Asked::Cannot("the client cannot ask its user: it did not declare elicitation".into());
        }
        let params = ElicitRequestParams::FormElicitationParams {
            meta: None,
            message: message.to_owned(),
            requested_schema: form,
        };
        if modern(ctx) {
            let mut requests = InputRequests::new();
            requests.insert(key.to_owned(), InputRequest::Elicitation(ElicitRequest::new(params)));
            return Asked::Deferred(InputRequiredResult::new(Some(requests), Some(state.to_owned())).into());
        }
        match ctx.peer.create_elicitation(params).await {
            Ok(answer) => Asked::Answer(answer),
            Err(e) => Asked::Cannot(format!("the client did not answer: {e}")),
        }
    }

    /// A 2026-07-28 client answers the approval or resume form of the runtime's waiting call
    /// `state`: the call goes on, reporting to (and cancellable by) this request.
    pub(super) async fn answer_waiting(
        &self,
        tool: &ToolRef,
        state: &str,
        responses: &InputResponses,
        ctx: &RequestContext<RoleServer>,
    ) -> CallToolResponse {
        let waiting = match self.shared.runtime.pending_call(state).await {
            Ok(Some(call)) => call,
            Ok(None) => return no_waiting_call(state, tool),
            Err(e) => return error_result(format!("The waiting call `{state}` could not be read: {e}")),
        };
        // Only whoever made the call may answer it: anyone else is told exactly what a caller
        // naming no waiting call is (no oracle of other callers' calls).
        if waiting.data.caller.as_deref().map(crate::Caller::owner) != super::identity::owner_of(ctx) {
            super::identity::refused_as_unknown("waiting call");
            return no_waiting_call(state, tool);
        }
        if waiting.tool_name != tool.id {
            return no_waiting_call(state, tool);
        }
        // The client's answers are opaque JSON in rmcp (`InputResponses`): read as what was asked.
        let answer = ["approval", "resume"]
            .into_iter()
            .find_map(|k| responses.get(k))
            .and_then(|v| serde_json::from_value::<ElicitResult>(v.clone()).ok());
        let Some(answer) = answer else {
            return error_result(format!(
                "The answer for the waiting call `{state}` is missing or not an elicitation result."
            ));
        };
        if waiting.kind == PendingKind::Suspended && answer.action != ElicitationAction::Accept {
            return CallToolResult::success(vec![ContentBlock::text(format!(
                "The user did not answer; the call still waits as `{state}`."
            ))])
            .into();
        }
        // The continued call reports to, and is cancelled by, this request.
        let slot = match self.take_slot(ctx, &"answer again") {
            Ok(slot) => slot,
            Err(refused) => return error_result(refused),
        };
        // A tool that gathers its input first goes on as a task once it has it (SEP-2663's
        // composition: the final round's answer is the task's handle).
        let as_task = waiting.kind == PendingKind::Suspended && self.asks_first(&tool.id) && self.runs_as_task(tool, ctx);
        let mut options = self.options(ctx, slot.continuation.clone());
        if as_task {
            options = options.background(self.task_override(&waiting.tool_call_id, ctx));
        }
        let stream = self.apply(state, waiting.kind, answer, options).await;
        match stream {
            Ok(s) if as_task => {
                let (continuation, task_id) = (slot.continuation.clone(), super::tasks::task_id_of(&waiting.tool_call_id));
                let response = Box::pin(self.task_handle(tool, s, &task_id, ctx, &continuation)).await;
                drop(continuation);
                slot.finish().await;
                response
            }
            Ok(s) => self.drive(tool, s, slot, ctx, 1).await,
            Err(e) => {
                slot.finish().await;
                error_result(format!("The answer could not be used: {e}"))
            }
        }
    }

    /// What a decision or resume data taken from this request goes on with: the call's
    /// continuation, and who decides (the request's caller, for the audit trail).
    pub(super) fn options(&self, ctx: &RequestContext<RoleServer>, continuation: CallEnv) -> ResumeOptions {
        ResumeOptions::default().env(continuation).by(super::identity::actor_of(ctx))
    }

    /// Applies the user's answer to the waiting call `id`: approves or declines it, or resumes
    /// it with the data given.
    pub(super) async fn apply(
        &self,
        id: &str,
        kind: PendingKind,
        answer: ElicitResult,
        options: ResumeOptions,
    ) -> Result<EventStream, RuntimeError> {
        match kind {
            PendingKind::Approval => self.decide(id, &answer, options).await,
            PendingKind::Suspended => {
                let data = answer.content.unwrap_or(json!({}));
                self.shared.runtime.resume(id, data, options).await
            }
            // Never asked of a client: a client-side call's result comes from the application.
            PendingKind::ClientResult => Err(RuntimeError::WrongKind {
                id: id.to_owned(),
                waits: kind.waits_for(),
                asked: "an MCP client's answer",
            }),
        }
    }

    /// Approves or declines a waiting call as the user answered the approval form; a decline
    /// without a reason says how the user answered.
    async fn decide(&self, id: &str, answer: &ElicitResult, options: ResumeOptions) -> Result<EventStream, RuntimeError> {
        let runtime = &self.shared.runtime;
        let Some(reason) = declined(answer) else {
            let edits = edits(answer.content.as_ref());
            if edits.is_empty() {
                return runtime.approve(id, options).await;
            }
            // Bound to the call as stored now: its arguments with the user's edits over them.
            let binding = runtime.binding(id).await?;
            let call = runtime
                .pending_call(id)
                .await?
                .ok_or_else(|| RuntimeError::UnknownCall(id.to_owned()))?;
            let mut args = call.args;
            if let Some(args) = args.as_object_mut() {
                args.extend(edits);
            }
            let decision = Decision::new(binding, Answer::Edit { args });
            return runtime.decide(decision, options).await;
        };
        runtime.decline_with(id, &reason, options).await
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn flat_forms_accept_primitives_and_refuse_nesting() {
        let schema = json!({"type": "object", "properties": {
            "overwrite": {"type": "boolean", "description": "Replace it"},
            "note": {"type": ["string", "null"]}
        }, "required": ["overwrite"]});
        let form = serde_json::to_value(flat_form(&schema).unwrap()).unwrap();
        assert_eq!(form["properties"]["note"]["type"], "string");
        assert_eq!(form["required"], json!(["overwrite"]));
        let nested = json!({"type": "object", "properties": {"a": {"type": "object"}}});
        assert!(flat_form(&nested).is_none());
        assert!(flat_form(&json!({"type": "string"})).is_none());
    }

    #[test]
    fn the_approval_form_asks_whether_and_why() {
        let form = serde_json::to_value(approval_form(None)).unwrap();
        let expected = json!({
            "type": "object",
            "properties": {
                "approved": {"type": "boolean", "title": "Approve", "description": "Let the tool run."},
                "reason": {"type": "string", "title": "Reason", "description": "Why (told to the model when you decline)."}
            },
            "required": ["approved"]
        });
        assert_eq!(form, expected);
        let keys: Vec<&String> = form["properties"].as_object().unwrap().keys().collect();
        assert_eq!(keys, ["approved", "reason"]);

        // Flat arguments can be edited; nested ones cannot (the form is the plain one).
        let flat = json!({"type": "object", "properties": {"amount": {"type": "integer", "description": "Cents"}}, "required": ["amount"]});
        let form = serde_json::to_value(approval_form(Some(&flat))).unwrap();
        assert_eq!(form["properties"]["edit.amount"]["type"], "integer", "{form}");
        assert_eq!(form["properties"]["edit.amount"]["title"], "amount (edit)");
        assert_eq!(form["required"], json!(["approved"]), "edits are optional");
        let nested = json!({"type": "object", "properties": {"to": {"type": "object"}}});
        assert_eq!(serde_json::to_value(approval_form(Some(&nested))).unwrap(), expected);
        let answer = json!({"approved": true, "edit.amount": 45, "edit.note": "", "reason": "ok"});
        assert_eq!(edits(Some(&answer)), json!({"amount": 45}).as_object().unwrap().clone());
    }
}
