//! A tool inside a workflow step: it reads and replaces the workflow's state, and suspends the
//! step (`Workflow::suspend`); the call ends suspended with the payload, the workflow is marked
//! for the engine that owns it, and resuming the call with data finishes it.

use serde_json::json;
use tool_core::context::{CallEnv, Workflow};
use tool_core::prelude::*;
use tool_core::runtime::{Outcome, ResumeOptions, Runtime};

/// What the step waits for.
#[derive(Debug, Serialize, Deserialize, JsonSchema)]
pub struct Need {
    /// Who must sign off.
    pub approver: String,
}

/// The sign-off.
#[derive(Debug, Serialize, Deserialize, JsonSchema)]
pub struct SignOff {
    /// Who signed.
    pub by: String,
}

/// Books an invoice; the step waits for finance's sign-off the first time
#[tool(id = "book-invoice", suspend = Need, resume = SignOff)]
async fn book_invoice(
    /// The invoice number
    number: u32,
    #[ctx] cx: ToolContext<RequestContext, Need, SignOff>,
) -> Result<String, ToolError> {
    let workflow = cx
        .workflow()
        .ok_or_else(|| ToolError::new("book-invoice runs inside a workflow step"))?;
    match cx.resume_data()? {
        None => {
            workflow.set_state(json!({"step": "waiting for finance", "invoice": number}));
            Err(workflow.suspend(
                "book-invoice",
                Need {
                    approver: "finance".into(),
                },
            ))
        }
        Some(sign_off) => {
            workflow.set_state(json!({"step": "booked", "invoice": number}));
            Ok(format!("invoice {number} booked, signed off by {}", sign_off.by))
        }
    }
}

#[tokio::test]
async fn a_tool_suspends_its_workflow_step_and_the_resumed_call_finishes_it() {
    let runtime = Runtime::new(Registry::from_iter([book_invoice::tool()]));
    let workflow = Workflow::new(json!({"step": "start"}));
    let options = CallOptions::default().id("inv-1").workflow(workflow.clone());
    let run = runtime.call("book-invoice", json!({"number": 7}), options).finish().await;
    let Outcome::Suspended(waiting) = run.outcome else {
        panic!("the call waits: {:?}", run.outcome)
    };
    assert_eq!(waiting.call.suspend_payload, Some(json!({"approver": "finance"})));
    assert_eq!(
        workflow.suspended(),
        Some(json!({"approver": "finance"})),
        "the engine sees the step wait"
    );
    assert_eq!(workflow.state(), json!({"step": "waiting for finance", "invoice": 7}));

    // The engine resumes the step: the call continues with the sign-off, in the same workflow.
    assert!(workflow.take_suspended().is_some());
    let env = CallEnv {
        workflow: Some(workflow.clone()),
        ..CallEnv::default()
    };
    let run = runtime
        .resume("inv-1", json!({"by": "Ann"}), ResumeOptions::default().env(env))
        .await
        .unwrap()
        .finish()
        .await;
    let Outcome::Done(output) = run.outcome else {
        panic!("the resumed call finishes: {:?}", run.outcome)
    };
    assert_eq!(output.value(), json!("invoice 7 booked, signed off by Ann"));
    assert_eq!(workflow.state(), json!({"step": "booked", "invoice": 7}));
    assert_eq!(workflow.suspended(), None);
}
