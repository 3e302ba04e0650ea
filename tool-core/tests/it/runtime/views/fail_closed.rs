//! Fail-closed transforms: a transform that yields nothing, fails or panics (a `#[tool]`'s or a
//! hand-written tool's) shows a placeholder, never the raw payload.

use super::*;

fn yields_nothing<X: ?Sized>(_: &X) -> Option<Value> {
    None
}
fn fails<X: ?Sized>(_: &X) -> Result<Value, String> {
    Err("this transform fails".into())
}
fn explodes<X: ?Sized>(_: &X) -> Value {
    panic!("this transform panics")
}

/// Every display transform yields nothing, every transcript transform fails
#[tool(
    id = "views-none",
    suspend = Ask,
    resume = Reply,
    require_approval = act_needs_approval,
    transform(
        display(input = yields_nothing, input_delta = yields_nothing, output = yields_nothing, error = yields_nothing,
                approval = yields_nothing, suspend = yields_nothing, resume = yields_nothing),
        transcript(input = fails, input_delta = fails, output = fails, error = fails, approval = fails, suspend = fails, resume = fails),
    )
)]
pub(super) async fn none_tool(
    /// A secret
    secret: String,
    /// What to do
    action: String,
    #[ctx] cx: AskCx,
) -> Result<String, ToolError> {
    act(secret, action, cx).await
}

/// Every transform panics
#[tool(
    id = "views-panic",
    suspend = Ask,
    resume = Reply,
    require_approval = act_needs_approval,
    transform(
        display(input = explodes, input_delta = explodes, output = explodes, error = explodes,
                approval = explodes, suspend = explodes, resume = explodes),
        transcript(input = explodes, input_delta = explodes, output = explodes, error = explodes,
                   approval = explodes, suspend = explodes, resume = explodes),
    )
)]
pub(super) async fn panic_tool(
    /// A secret
    secret: String,
    /// What to do
    action: String,
    #[ctx] cx: AskCx,
) -> Result<String, ToolError> {
    act(secret, action, cx).await
}

has_action!(none_tool, panic_tool);

#[test]
fn placeholders_have_the_reference_wording() {
    let names = [
        (P::Input, "input"),
        (P::InputDelta, "inputDelta"),
        (P::Output, "output"),
        (P::Error, "error"),
        (P::Approval, "approval"),
        (P::Suspend, "suspend"),
        (P::Resume, "resume"),
    ];
    for (phase, name) in names {
        assert_eq!(placeholder(phase), json!({"message": format!("Tool {name} payload unavailable")}));
    }
}

#[tokio::test]
async fn transforms_that_yield_nothing_fail_or_panic_show_placeholders() {
    let runtime = Runtime::new(Registry::from_iter([none_tool::tool(), panic_tool::tool()]));
    for tool in ["views-none", "views-panic"] {
        let secret = format!("s3cr3t-{tool}");
        let args = |action: &str| json!({"secret": secret, "action": action});

        let events = call(&runtime, tool, &format!("{tool}-ok"), args("ok")).await;
        assert_eq!(kinds(&events), ["tool-call", "tool-result"], "{tool}");
        assert_placeholders(&events[0], &[("args", P::Input)]);
        assert_placeholders(&events[1], &[("result", P::Output)]);
        assert_eq!(raw_field(&events[1], "result"), json!(format!("done with {secret}")));

        for action in ["fail", "panic"] {
            let events = call(&runtime, tool, &format!("{tool}-{action}"), args(action)).await;
            assert_eq!(kinds(&events), ["tool-call", "tool-error"], "{tool} {action}");
            assert_placeholders(&events[1], &[("error", P::Error)]);
            assert!(raw_field(&events[1], "error")["message"].as_str().unwrap().contains(&secret));
        }

        // Approval, then the decision (a resume payload the `Reply` transforms cannot read).
        let id = format!("{tool}-approve");
        let events = call(&runtime, tool, &id, args("approve")).await;
        assert_eq!(kinds(&events), ["tool-call", "tool-call-approval"], "{tool}");
        assert_placeholders(&events[1], &[("args", P::Approval)]);
        let events = collect(runtime.approve(&id, ResumeOptions::default()).await).await;
        assert_eq!(kinds(&events), ["tool-call-resumed", "tool-result"], "{tool}");
        assert_placeholders(&events[0], &[("resume_data", P::Resume)]);
        assert_placeholders(&events[1], &[("result", P::Output)]);

        // Suspension and resume.
        let id = format!("{tool}-suspend");
        let events = call(&runtime, tool, &id, args("suspend")).await;
        assert_eq!(kinds(&events), ["tool-call", "tool-call-suspended"], "{tool}");
        assert_placeholders(&events[1], &[("suspend_payload", P::Suspend), ("args", P::Input)]);
        assert_eq!(
            raw_field(&events[1], "suspend_payload"),
            json!({"question": format!("Go on with {secret}?")})
        );
        let events = collect(runtime.resume(&id, json!({"answer": "yes"}), ResumeOptions::default()).await).await;
        assert_eq!(kinds(&events), ["tool-call-resumed", "tool-result"], "{tool}");
        assert_placeholders(&events[0], &[("resume_data", P::Resume)]);
        assert_placeholders(&events[1], &[("result", P::Output)]);
        assert_eq!(raw_field(&events[1], "result"), json!(format!("{secret}: yes")));

        // Streamed input: the raw view has every delta, the views none.
        let events = streamed(
            &runtime,
            &format!("{tool}-stream"),
            tool,
            &[r#"{"secret": "s3"#, r#"cr3t", "action": "ok"}"#],
        )
        .await;
        assert_eq!(
            kinds(&events),
            ["input-streaming-start", "input-delta", "input-delta", "tool-call", "tool-result"],
            "{tool}"
        );
        assert_raw(&events[0]);
        for e in &events[1..3] {
            assert_eq!((&e.display, &e.transcript), (&None, &None), "{tool}: {:?}", e.raw);
        }
        assert_placeholders(&events[3], &[("args", P::Input)]);
    }
}

// ---------------------------------------------------------------------------------------------
// A hand-written tool whose transform panics
// ---------------------------------------------------------------------------------------------

struct HandWritten {
    spec: ToolSpec,
}

impl Tool for HandWritten {
    fn spec(&self) -> &ToolSpec {
        &self.spec
    }

    fn execute(
        &self,
        input: ToolInput<'_>,
        _: Arc<serde_json::Map<String, Value>>,
        _: ToolCallInfo,
    ) -> BoxFuture<'static, Result<ToolOutput, ToolError>> {
        let value = input.decode::<Value>().map_err(|e| ToolError::new(e.to_string()));
        Box::pin(async move { value.map(ToolOutput::new) })
    }

    fn transform(&self, _: TransformTarget, _: TransformPhase, _: &Value) -> Option<Result<Value, tool_core::ToolError>> {
        panic!("a hand-written transform panics")
    }
}

#[tokio::test]
async fn a_hand_written_tool_whose_transform_panics_shows_placeholders() {
    let mut spec = ToolSpec::new("views-hand-written", "Echoes its input", json!({"type": "object"}));
    spec.behaviour.transforms = [every_phase(T::Display), every_phase(T::Transcript)].concat();
    let tool: Arc<dyn Tool> = Arc::new(HandWritten { spec });
    let runtime = Runtime::new(Registry::from_iter([tool]));
    let events = call(&runtime, "views-hand-written", "hand-1", json!({"pin": "1234"})).await;
    assert_eq!(kinds(&events), ["tool-call", "tool-result"]);
    assert_placeholders(&events[0], &[("args", P::Input)]);
    assert_placeholders(&events[1], &[("result", P::Output)]);
}
