//! Approval, suspension and resume through the runtime, and what a tool's context carries.

use std::sync::atomic::{AtomicU32, Ordering};
use std::sync::{Arc, Mutex};

use tool_core::ErrorKind;
use tool_core::context::{Elicitation, McpHandle, Workflow};
use tool_core::prelude::*;
use tool_core::runtime::{Outcome, PendingKind, ResumeOptions, RunEventKind as K, Runtime, RuntimeError, ShownEvent, ShownOutput};
use tool_core::tool::BoxFuture;

static TRANSFERS: AtomicU32 = AtomicU32::new(0);

/// Sends money (a person approves every transfer)
#[tool(id = "pend-transfer", require_approval)]
async fn transfer(
    /// Amount in cents
    amount: u32,
) -> String {
    TRANSFERS.fetch_add(1, Ordering::SeqCst);
    format!("sent {amount}")
}

/// Archives a mailbox (approved first; may run in the background)
#[tool(id = "pend-archive", require_approval, background)]
async fn archive(
    /// The mailbox
    mailbox: String,
) -> String {
    format!("archived {mailbox}")
}

fn exploding_rule(_: &InputOf<guarded>, _: &RequestContext) -> bool {
    panic!("the approval rule has a bug")
}

/// A tool whose approval rule panics
#[tool(id = "pend-guarded", require_approval = exploding_rule)]
async fn guarded(
    /// Anything
    x: u32,
) -> u32 {
    x
}

/// A question for the user.
#[derive(Debug, Serialize, Deserialize, JsonSchema)]
pub struct Question {
    /// What to ask.
    pub question: String,
}

/// The user's answer.
#[derive(Debug, Serialize, Deserialize, JsonSchema)]
pub struct Answer {
    /// The answer.
    pub answer: u32,
}

/// Asks the user a question, then adds one to the answer
#[tool(id = "pend-ask", suspend = Question, resume = Answer)]
async fn ask(
    /// The question
    question: String,
    #[ctx] cx: ToolContext<RequestContext, Question, Answer>,
) -> Result<u32, ToolError> {
    match cx.resume_data()? {
        Some(a) => Ok(a.answer + 1),
        None => Err(cx.suspend(Question { question })),
    }
}

/// A question whose schema calls its number a string: its payloads break the schema.
#[derive(Debug, Serialize, Deserialize, JsonSchema)]
pub struct OddQuestion {
    /// Said to be a string.
    #[schemars(with = "String")]
    pub question: u32,
}

/// Suspends with a payload that breaks its own suspend schema
#[tool(id = "pend-bad-suspend", suspend = OddQuestion, resume = Answer)]
async fn bad_suspend(#[ctx] cx: ToolContext<RequestContext, OddQuestion, Answer>) -> Result<u32, ToolError> {
    Err(cx.suspend(OddQuestion { question: 42 }))
}

/// Reads everything the context offers
#[tool(id = "pend-context")]
async fn context_probe(#[ctx] cx: ToolContext) -> Result<Value, ToolError> {
    let agent = cx.agent();
    cx.writer().write(json!({"progress": 0.5}));
    if let Some(wf) = cx.workflow() {
        let step = wf.state()["step"].as_u64().unwrap_or(0);
        wf.set_state(json!({"step": step + 1}));
    }
    cx.observe().log(LogLevel::Info, "probing", Some(&json!({"k": 1})));
    let answer = match cx.mcp() {
        Some(mcp) => {
            mcp.progress(1.0, Some(2.0), Some("half".into()));
            match mcp.elicit("Your name?".into(), json!({"type": "object"})).await? {
                Elicitation::Accept { content } => content["name"].clone(),
                other => json!(format!("{other:?}")),
            }
        }
        None => Value::Null,
    };
    Ok(json!({
        "tool_call_id": agent.tool_call_id(),
        "thread_id": agent.thread_id(),
        "resource_id": agent.resource_id(),
        "messages": agent.messages().len(),
        "elicited": answer,
    }))
}

/// Reports progress, then runs until the runtime cancels it (a person approves it first)
#[tool(id = "pend-long", require_approval)]
async fn long_job(#[ctx] cx: ToolContext) -> Result<String, ToolError> {
    match cx.mcp() {
        Some(mcp) => mcp.progress(1.0, None, Some("started".into())),
        None => return Ok("no MCP client".into()),
    }
    std::future::pending::<()>().await;
    Ok("never".into())
}

fn runtime() -> Runtime {
    Runtime::new(Registry::from_iter([
        long_job::tool(),
        transfer::tool(),
        guarded::tool(),
        ask::tool(),
        bad_suspend::tool(),
        context_probe::tool(),
        archive::tool(),
    ]))
}

fn raw(events: Vec<tool_core::runtime::Event>) -> Vec<ShownEvent> {
    events.into_iter().map(|e| e.raw.shown()).collect()
}

fn kinds(events: &[ShownEvent]) -> Vec<&'static str> {
    events.iter().map(ShownEvent::type_name).collect()
}

#[tokio::test]
async fn approval_is_bound_to_one_call_and_used_once() {
    let rt = runtime();
    let before = TRANSFERS.load(Ordering::SeqCst);
    // Nothing the model writes in its arguments approves a call.
    let events = raw(rt
        .call("pend-transfer", json!({"amount": 500, "approved": true}), CallOptions::default())
        .collect()
        .await);
    assert_eq!(kinds(&events), ["tool-call", "tool-call-approval"]);
    let K::ToolCallApproval { args, resume_schema } = &events[1].kind else {
        unreachable!()
    };
    let tool_call_id = &events[1].call.tool_call_id;
    assert_eq!(args["amount"], 500);
    assert_eq!(resume_schema["required"], json!(["approved"]));
    assert_eq!(TRANSFERS.load(Ordering::SeqCst), before, "not run before approval");
    let pending = rt.pending().await.unwrap();
    assert_eq!(pending.len(), 1);
    assert_eq!(
        (pending[0].kind, pending[0].tool_call_id.as_str()),
        (PendingKind::Approval, tool_call_id.as_str())
    );

    assert!(matches!(
        rt.approve("call_someone_else", ResumeOptions::default()).await,
        Err(RuntimeError::UnknownCall(_))
    ));
    let events = raw(rt.approve(tool_call_id, ResumeOptions::default()).await.unwrap().collect().await);
    assert_eq!(kinds(&events), ["tool-call-resumed", "tool-result"]);
    assert!(matches!(&events[1].kind, K::ToolResult { output: ShownOutput { result, .. } } if result == "sent 500"));
    assert_eq!(TRANSFERS.load(Ordering::SeqCst), before + 1);
    assert!(rt.pending().await.unwrap().is_empty());
    // Stale: the approval was used.
    assert!(matches!(
        rt.approve(tool_call_id, ResumeOptions::default()).await,
        Err(RuntimeError::UnknownCall(_))
    ));
    assert!(matches!(rt.decline(tool_call_id, "late").await, Err(RuntimeError::UnknownCall(_))));
}

#[tokio::test]
async fn a_decline_never_runs_the_tool_and_tells_the_model_why() {
    let rt = runtime();
    let before = TRANSFERS.load(Ordering::SeqCst);
    let options = CallOptions::default().id("call_decline");
    let events = raw(rt.call("pend-transfer", json!({"amount": 9}), options).collect().await);
    assert_eq!(kinds(&events), ["tool-call", "tool-call-approval"]);
    let events = raw(rt.decline("call_decline", "too much").await.unwrap().collect().await);
    assert_eq!(kinds(&events), ["tool-call-resumed", "tool-result"]);
    let K::ToolResult {
        output: ShownOutput { result, model_output },
    } = &events[1].kind
    else {
        unreachable!()
    };
    assert_eq!(result["approved"], false);
    assert_eq!(result["reason"], "too much");
    assert_eq!(
        model_output,
        &Some(ModelOutput::Text("Tool call was not approved by the user. Reason: too much".into()))
    );
    assert_eq!(TRANSFERS.load(Ordering::SeqCst), before);
    assert!(rt.pending().await.unwrap().is_empty());
}

#[tokio::test]
async fn approval_fails_closed_and_can_be_required_for_all() {
    let rt = runtime();
    let events = raw(rt.call("pend-guarded", json!({"x": 1}), CallOptions::default()).collect().await);
    assert_eq!(
        kinds(&events),
        ["tool-call", "tool-call-approval"],
        "a panicking rule means approval"
    );

    let strict = Runtime::builder(Registry::from_iter([ask::tool()]))
        .require_approval_for_all(true)
        .build();
    let events = raw(strict
        .call("pend-ask", json!({"question": "?"}), CallOptions::default())
        .collect()
        .await);
    assert_eq!(kinds(&events), ["tool-call", "tool-call-approval"]);
    // A decision sent through `resume` is checked against the decision schema.
    let id = events[1].tool_call_id().to_owned();
    let refused = strict
        .resume(&id, json!({"approved": "yes"}), ResumeOptions::default())
        .await
        .err()
        .unwrap();
    assert!(matches!(refused, RuntimeError::InvalidResume(_)), "{refused}");
    assert_eq!(
        strict.pending().await.unwrap().len(),
        1,
        "a refused decision keeps the call waiting"
    );
    let events = raw(strict
        .resume(&id, json!({"approved": true}), ResumeOptions::default())
        .await
        .unwrap()
        .collect()
        .await);
    // Approved, it runs, and suspends (it asks its question).
    assert_eq!(kinds(&events), ["tool-call-resumed", "tool-call-suspended"]);
    assert_eq!(strict.pending().await.unwrap()[0].kind, PendingKind::Suspended);
}

#[tokio::test]
async fn suspend_then_resume_with_validated_data() {
    let rt = runtime();
    let events = raw(rt
        .call("pend-ask", json!({"question": "How many?"}), CallOptions::default())
        .collect()
        .await);
    assert_eq!(kinds(&events), ["tool-call", "tool-call-suspended"]);
    let K::ToolCallSuspended {
        suspend_payload,
        args,
        resume_schema,
    } = &events[1].kind
    else {
        unreachable!()
    };
    let (tool_call_id, tool_name) = (&events[1].call.tool_call_id, &events[1].call.tool_name);
    assert_eq!(tool_name, "pend-ask");
    assert_eq!(suspend_payload, &json!({"question": "How many?"}));
    assert_eq!(args, &json!({"question": "How many?"}));
    assert_eq!(resume_schema.as_ref().unwrap()["required"], json!(["answer"]));

    // Approving is not resuming.
    assert!(matches!(
        rt.approve(tool_call_id, ResumeOptions::default()).await,
        Err(RuntimeError::WrongKind { .. })
    ));
    let bad = rt
        .resume(tool_call_id, json!({"answer": "forty-one"}), ResumeOptions::default())
        .await
        .err()
        .unwrap();
    let RuntimeError::InvalidResume(e) = &bad else { panic!("{bad}") };
    assert!(e.message().contains("/answer"), "{e}");
    assert_eq!(rt.pending().await.unwrap().len(), 1);

    let events = raw(rt
        .resume(tool_call_id, json!({"answer": 41}), ResumeOptions::default())
        .await
        .unwrap()
        .collect()
        .await);
    assert_eq!(kinds(&events), ["tool-call-resumed", "tool-result"]);
    assert!(matches!(&events[1].kind, K::ToolResult { output: ShownOutput { result, .. } } if result == 42));
    assert!(rt.pending().await.unwrap().is_empty());
    assert!(matches!(
        rt.resume(tool_call_id, json!({"answer": 1}), ResumeOptions::default()).await,
        Err(RuntimeError::UnknownCall(_))
    ));
}

#[tokio::test]
async fn a_suspension_that_breaks_its_schema_is_an_output_error() {
    let rt = runtime();
    let events = raw(rt.call("pend-bad-suspend", json!({}), CallOptions::default()).collect().await);
    let K::ToolError { error } = &events[1].kind else {
        panic!("{events:?}")
    };
    assert_eq!(error["kind"], "invalid_output");
    assert!(error["message"].as_str().unwrap().contains("suspend schema"), "{error}");
    assert!(rt.pending().await.unwrap().is_empty());
    // A plain registry call cannot resume a suspension: it says so, with the payload.
    let err = rt
        .registry()
        .call("pend-ask", json!({"question": "?"}), CallOptions::default())
        .await
        .unwrap_err();
    assert_eq!(err.kind(), ErrorKind::Execution);
    assert!(
        err.message().contains("suspended") && err.message().contains("cannot be resumed"),
        "{err}"
    );
    assert_eq!(err.details(), Some(&json!({"question": "?"})));
    // The runtime's outcome says it is suspended, not failed.
    let run = rt.call("pend-ask", json!({"question": "?"}), CallOptions::default()).finish().await;
    let Outcome::Suspended(waiting) = run.outcome else {
        panic!("{:?}", run.outcome)
    };
    assert_eq!(waiting.call.suspend_payload, Some(json!({"question": "?"})));
}

struct FakeMcp {
    seen: Mutex<Vec<String>>,
}

impl McpHandle for FakeMcp {
    fn elicit(&self, message: String, _schema: Value) -> BoxFuture<'_, Result<Elicitation, ToolError>> {
        self.seen.lock().unwrap().push(format!("elicit {message}"));
        Box::pin(async {
            Ok(Elicitation::Accept {
                content: json!({"name": "Ada"}),
            })
        })
    }
    fn log(&self, level: LogLevel, data: Value) {
        self.seen.lock().unwrap().push(format!("log {level:?} {data}"));
    }
    fn progress(&self, progress: f64, total: Option<f64>, message: Option<String>) {
        self.seen.lock().unwrap().push(format!("progress {progress}/{total:?} {message:?}"));
    }
}

#[tokio::test]
async fn the_context_carries_agent_workflow_writer_and_mcp() {
    let rt = runtime();
    let mcp = Arc::new(FakeMcp {
        seen: Mutex::new(Vec::new()),
    });
    let workflow = Workflow::new(json!({"step": 1}));
    let options = CallOptions::default()
        .id("call_ctx")
        .thread("thread-1")
        .resource("user-7")
        .messages(vec![json!({"role": "user", "content": "hi"})])
        .workflow(workflow.clone())
        .mcp(mcp.clone());
    let events = raw(rt.call("pend-context", json!({}), options).collect().await);
    assert_eq!(kinds(&events), ["tool-call", "custom", "tool-result"]);
    assert!(matches!(&events[1].kind, K::Custom { data } if data == &json!({"progress": 0.5})));
    let K::ToolResult {
        output: ShownOutput { result, .. },
    } = &events[2].kind
    else {
        unreachable!()
    };
    assert_eq!(
        result,
        &json!({"tool_call_id": "call_ctx", "thread_id": "thread-1", "resource_id": "user-7", "messages": 1, "elicited": "Ada"})
    );
    assert_eq!(workflow.state(), json!({"step": 2}));
    let seen = mcp.seen.lock().unwrap().clone();
    assert_eq!(
        seen,
        [
            r#"log Info {"data":{"k":1},"message":"probing"}"#.to_owned(),
            "progress 1/Some(2.0) Some(\"half\")".to_owned(),
            "elicit Your name?".to_owned(),
        ]
    );
}

#[tokio::test]
async fn a_waiting_call_keeps_the_callers_background_override() {
    let rt = runtime();
    let options = CallOptions::default()
        .id("call_archive")
        .background(tool_core::spec::BackgroundOverride {
            enabled: Some(false),
            ..Default::default()
        });
    let events = raw(rt.call("pend-archive", json!({"mailbox": "inbox"}), options).collect().await);
    assert_eq!(kinds(&events), ["tool-call", "tool-call-approval"]);
    let events = raw(rt.approve("call_archive", ResumeOptions::default()).await.unwrap().collect().await);
    assert_eq!(
        kinds(&events),
        ["tool-call-resumed", "tool-result"],
        "runs in the foreground as asked"
    );
    assert!(matches!(&events[1].kind, K::ToolResult { output: ShownOutput { result, .. } } if result == "archived inbox"));

    // Without the override, the approved call goes to the background.
    let events = raw(rt
        .call("pend-archive", json!({"mailbox": "spam"}), CallOptions::default())
        .collect()
        .await);
    let id = events[1].tool_call_id().to_owned();
    let events = raw(rt.approve(&id, ResumeOptions::default()).await.unwrap().collect().await);
    assert_eq!(
        kinds(&events),
        [
            "tool-call-resumed",
            "tool-result",
            "background-task-started",
            "background-task-completed"
        ]
    );
    assert!(rt.pending().await.unwrap().is_empty());
}

#[tokio::test]
async fn a_continued_call_runs_with_the_continuing_requests_client_and_cancellation() {
    use tokio_util::sync::CancellationToken;
    use tool_core::CallEnv;
    let rt = runtime();
    for (id, how) in [("call_long_a", "approve"), ("call_long_r", "resume")] {
        let options = CallOptions::default().id(id);
        let events = raw(rt.call("pend-long", json!({}), options).collect().await);
        assert_eq!(kinds(&events), ["tool-call", "tool-call-approval"]);
        let mcp = Arc::new(FakeMcp {
            seen: Mutex::new(Vec::new()),
        });
        let cancel = CancellationToken::new();
        let continuation = CallEnv {
            cancellation: Some(cancel.clone()),
            mcp: Some(mcp.clone()),
            ..CallEnv::default()
        };
        let mut stream = match how {
            "approve" => rt.approve(id, ResumeOptions::default().env(continuation)).await.unwrap(),
            _ => rt
                .resume(id, json!({"approved": true}), ResumeOptions::default().env(continuation))
                .await
                .unwrap(),
        };
        assert_eq!(stream.next().await.unwrap().raw.type_name(), "tool-call-resumed");
        // The tool reached the continuing request's client ...
        while mcp.seen.lock().unwrap().is_empty() {
            tokio::task::yield_now().await;
        }
        assert_eq!(mcp.seen.lock().unwrap()[0], "progress 1/None Some(\"started\")");
        // ... and that request's cancellation ends it.
        cancel.cancel();
        let rest = raw(stream.collect().await);
        assert_eq!(kinds(&rest), ["tool-error"], "{rest:?}");
        let K::ToolError { error } = &rest[0].kind else { unreachable!() };
        assert_eq!(error["kind"], "aborted", "{error}");
    }
}

/// A call that starts and ends at once was never stored, so its end removes nothing: a waiting
/// call that happens to share its id (a client reusing ids) is still there to be decided.
#[tokio::test]
async fn a_fresh_call_leaves_the_store_alone() {
    let rt = runtime();
    let options = || CallOptions::default().id("call_shared_id");
    let run = rt.call("pend-transfer", json!({"amount": 5}), options()).finish().await;
    assert!(matches!(run.outcome, Outcome::AwaitingApproval(_)), "{:?}", run.outcome);
    let run = rt.call("pend-context", json!({}), options()).finish().await;
    assert!(matches!(run.outcome, Outcome::Done(_)), "{:?}", run.outcome);
    let waiting = rt.pending().await.unwrap();
    assert_eq!(waiting.len(), 1, "{waiting:?}");
    assert_eq!(waiting[0].tool_call_id, "call_shared_id");
    assert_eq!(waiting[0].tool_name, "pend-transfer");
}
