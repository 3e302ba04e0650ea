//! What the `display` and `transcript` views of a run show: the tool's transforms (and the
//! runtime's policy, first), their fallbacks, fail-closed placeholders, and a property test that
//! a secret planted in a transformed tool's payloads reaches no view and no log line.

use std::fmt::Write as _;
use std::sync::{Arc, Mutex};

use proptest::prelude::*;
use proptest::test_runner::Config;
use serde_json::json;
use tool_core::Dialect;
use tool_core::prelude::*;
use tool_core::runtime::{
    Answer, Decision, DecisionKey, Event, EventStream, RedactSecrets, ResumeOptions, RunEventKind, Runtime, ShownEvent, TransformPolicy,
    placeholder,
};
use tool_core::spec::{ToolSpec, TransformPhase, TransformTarget};
use tool_core::testing::ScriptedStream;
use tool_core::tool::{BoxFuture, ToolInput, ToolOutput};

use TransformPhase as P;
use TransformTarget as T;

// ---------------------------------------------------------------------------------------------
// Helpers
// ---------------------------------------------------------------------------------------------

/// Streams one call whose input arrives in `pieces` and collects every event of the run.
async fn streamed(runtime: &Runtime, id: &str, tool: &str, pieces: &[&str]) -> Vec<Event> {
    let (mut run, events) = runtime.stream(Dialect::Anthropic, CallOptions::default());
    run.push(&ScriptedStream::anthropic().tool_call_pieces(id, tool, pieces).sse_bytes())
        .unwrap();
    run.finish().unwrap();
    events.collect().await
}

/// Calls a tool with a fixed call id and collects the run.
async fn call(runtime: &Runtime, tool: &str, id: &str, args: impl Into<tool_core::call::CallArgs<'static>>) -> Vec<Event> {
    let options = CallOptions::default().id(id.to_owned());
    runtime.call(tool, args, options).collect().await
}

async fn collect(stream: Result<EventStream, tool_core::runtime::RuntimeError>) -> Vec<Event> {
    stream.expect("the call is pending").collect().await
}

fn kinds(events: &[Event]) -> Vec<&'static str> {
    events.iter().map(|e| e.raw.type_name()).collect()
}

/// The payload fields of an event, by name (`args`, `delta`, `result`, `model_output`, …).
fn payload(e: &impl serde::Serialize) -> serde_json::Map<String, Value> {
    let Value::Object(mut all) = serde_json::to_value(e).unwrap() else {
        unreachable!()
    };
    for k in ["type", "tool_call_id", "tool_name", "task_id", "resume_schema"] {
        all.remove(k);
    }
    all
}

/// The event in a view, which must exist and must be the same event (kind, call, tool, resume
/// schema) as the raw one: only the payload may differ.
fn view(e: &Event, target: TransformTarget) -> &ShownEvent {
    let v = e.view(target).unwrap_or_else(|| panic!("{target:?} drops {:?}", e.raw));
    let frame = |e: Value| {
        let Value::Object(mut all) = e else { unreachable!() };
        all.retain(|k, _| ["type", "tool_call_id", "tool_name", "task_id", "resume_schema"].contains(&k.as_str()));
        all
    };
    let (shown, raw) = (serde_json::to_value(v).unwrap(), serde_json::to_value(&e.raw).unwrap());
    assert_eq!(frame(shown), frame(raw), "{target:?} changed more than the payload");
    v
}

/// One payload field of an event in a view.
fn field(e: &Event, target: TransformTarget, name: &str) -> Value {
    payload(view(e, target))
        .remove(name)
        .unwrap_or_else(|| panic!("no `{name}` in {target:?} of {:?}", e.raw))
}

fn raw_field(e: &Event, name: &str) -> Value {
    payload(&e.raw).remove(name).unwrap_or_else(|| panic!("no `{name}` in {:?}", e.raw))
}

/// Asserts that both views show exactly the raw event.
fn assert_raw(e: &Event) {
    assert_eq!(e.display.as_ref(), Some(&e.raw.shown()), "display");
    assert_eq!(e.transcript.as_ref(), Some(&e.raw.shown()), "transcript");
}

const BOTH: [TransformTarget; 2] = [T::Display, T::Transcript];

/// Asserts that both views show `expected` as the event's `name`.
fn assert_both(e: &Event, name: &str, expected: Value) {
    for t in BOTH {
        assert_eq!(field(e, t, name), expected, "{name} in {t:?}");
    }
}

fn mask(card: &str) -> String {
    format!("•••• {}", &card[card.len().saturating_sub(4)..])
}

// ---------------------------------------------------------------------------------------------
// 1. A payment tool with every transform
// ---------------------------------------------------------------------------------------------

/// What `views-pay` was called with, as `execute` saw it.
static PAID: Mutex<Vec<(String, u32)>> = Mutex::new(Vec::new());

/// A payment receipt.
#[derive(Debug, Serialize, JsonSchema)]
pub struct Receipt {
    /// The card charged.
    pub card_number: String,
    /// The amount charged.
    pub amount_cents: u32,
}

fn pay_display_input(i: &InputOf<pay>) -> Value {
    json!({"card": mask(&i.card_number), "amount_cents": i.amount_cents})
}
fn pay_transcript_input(i: &InputOf<pay>) -> Value {
    json!({"amount_cents": i.amount_cents})
}
fn pay_display_output(r: &Receipt) -> Value {
    json!({"paid_cents": r.amount_cents, "card": mask(&r.card_number)})
}
fn pay_transcript_output(r: &Receipt) -> Value {
    json!(format!("Paid {} cents", r.amount_cents))
}
fn pay_display_error(e: &ToolError) -> Value {
    json!({"toast": "Payment failed", "kind": e.kind().as_str()})
}
fn pay_transcript_error(_: &ToolError) -> Value {
    json!("Payment failed")
}
fn pay_display_approval(i: &InputOf<pay>) -> Value {
    json!({"question": format!("Charge {} cents to {}?", i.amount_cents, mask(&i.card_number))})
}
fn pay_transcript_approval(i: &InputOf<pay>) -> Value {
    json!({"approval_for_cents": i.amount_cents})
}
fn pay_needs_approval(i: &InputOf<pay>, _: &RequestContext) -> bool {
    i.amount_cents >= 10_000
}
fn pay_model_output(r: &Receipt) -> ModelOutput {
    ModelOutput::Text(format!("Charged card {}", r.card_number))
}

/// Charges a card (amounts from 100 dollars up need a person's approval)
#[tool(
    id = "views-pay",
    require_approval = pay_needs_approval,
    to_model_output = pay_model_output,
    transform(
        display(input = pay_display_input, output = pay_display_output, error = pay_display_error, approval = pay_display_approval),
        transcript(input = pay_transcript_input, output = pay_transcript_output, error = pay_transcript_error, approval = pay_transcript_approval),
    )
)]
async fn pay(
    /// The card number
    card_number: String,
    /// The amount in cents
    amount_cents: u32,
    /// `decline` makes the bank decline
    memo: Option<String>,
) -> Result<Receipt, ToolError> {
    PAID.lock().unwrap().push((card_number.clone(), amount_cents));
    if memo.as_deref() == Some("decline") {
        return Err(ToolError::new(format!("The bank declined card {card_number}")));
    }
    Ok(Receipt { card_number, amount_cents })
}

fn paid_with(card: &str) -> Vec<u32> {
    PAID.lock().unwrap().iter().filter(|(c, _)| c == card).map(|(_, a)| *a).collect()
}

#[tokio::test]
async fn views_show_the_transforms_and_raw_keeps_the_real_values() {
    let runtime = Runtime::new(Registry::from_iter([pay::tool()]));
    let card = "4000001111111111";

    // A charge that runs at once.
    let events = call(&runtime, "views-pay", "pay-1", json!({"card_number": card, "amount_cents": 500})).await;
    assert_eq!(kinds(&events), ["tool-call", "tool-result"]);
    let c = &events[0];
    assert_eq!(raw_field(c, "args"), json!({"card_number": card, "amount_cents": 500}));
    assert_eq!(field(c, T::Display, "args"), json!({"card": "•••• 1111", "amount_cents": 500}));
    assert_eq!(field(c, T::Transcript, "args"), json!({"amount_cents": 500}));
    let r = &events[1];
    assert_eq!(raw_field(r, "result"), json!({"card_number": card, "amount_cents": 500}));
    assert_eq!(
        raw_field(r, "model_output"),
        json!({"type": "text", "value": format!("Charged card {card}")})
    );
    assert_eq!(field(r, T::Display, "result"), json!({"paid_cents": 500, "card": "•••• 1111"}));
    assert_eq!(field(r, T::Transcript, "result"), json!("Paid 500 cents"));
    for t in BOTH {
        // The model output quotes the raw output: a view that rewrites the output drops it.
        assert!(!payload(view(r, t)).contains_key("model_output"), "{t:?}");
    }
    assert_eq!(paid_with(card), [500], "execute received the raw card number");

    // A charge that waits for approval: the views show the approval transforms.
    let events = call(&runtime, "views-pay", "pay-2", json!({"card_number": card, "amount_cents": 25_000})).await;
    assert_eq!(kinds(&events), ["tool-call", "tool-call-approval"]);
    let a = &events[1];
    assert_eq!(raw_field(a, "args"), json!({"card_number": card, "amount_cents": 25_000}));
    assert_eq!(
        field(a, T::Display, "args"),
        json!({"question": "Charge 25000 cents to •••• 1111?"})
    );
    assert_eq!(field(a, T::Transcript, "args"), json!({"approval_for_cents": 25_000}));
    assert_eq!(paid_with(card), [500], "nothing ran before the approval");

    let events = collect(runtime.approve("pay-2", ResumeOptions::default()).await).await;
    assert_eq!(kinds(&events), ["tool-call-resumed", "tool-result"]);
    // The decision is not a tool payload any view hides.
    assert_raw(&events[0]);
    assert_eq!(
        field(&events[1], T::Display, "result"),
        json!({"paid_cents": 25_000, "card": "•••• 1111"})
    );
    assert_eq!(field(&events[1], T::Transcript, "result"), json!("Paid 25000 cents"));
    assert_eq!(raw_field(&events[1], "result")["card_number"], card);
    assert_eq!(paid_with(card), [500, 25_000]);

    // A declined charge: the error transforms.
    let args = json!({"card_number": card, "amount_cents": 700, "memo": "decline"});
    let events = call(&runtime, "views-pay", "pay-3", args.clone()).await;
    assert_eq!(kinds(&events), ["tool-call", "tool-error"]);
    assert_eq!(raw_field(&events[0], "args"), args);
    let e = &events[1];
    assert_eq!(raw_field(e, "error")["message"], format!("The bank declined card {card}"));
    assert_eq!(
        field(e, T::Display, "error"),
        json!({"toast": "Payment failed", "kind": "execution"})
    );
    assert_eq!(field(e, T::Transcript, "error"), json!("Payment failed"));
    assert_eq!(paid_with(card), [500, 25_000, 700]);

    // Invalid arguments: the model's own arguments do not fit the input type, so the input
    // transform cannot run and the views show the placeholder; the error transform still runs.
    let events = call(&runtime, "views-pay", "pay-4", json!({"card_number": card, "amount_cents": "lots"})).await;
    assert_eq!(kinds(&events), ["tool-call", "tool-error"]);
    assert_eq!(raw_field(&events[0], "args"), json!({"card_number": card, "amount_cents": "lots"}));
    assert_both(&events[0], "args", placeholder(P::Input));
    assert_eq!(
        field(&events[1], T::Display, "error"),
        json!({"toast": "Payment failed", "kind": "invalid_input"})
    );
    assert_eq!(field(&events[1], T::Transcript, "error"), json!("Payment failed"));
    assert_eq!(paid_with(card), [500, 25_000, 700]);
}

// ---------------------------------------------------------------------------------------------
// 2. Fail-closed transforms
// ---------------------------------------------------------------------------------------------

/// A question for the user.
#[derive(Debug, Serialize, Deserialize, JsonSchema)]
pub struct Ask {
    /// What to ask.
    pub question: String,
}

/// The user's reply.
#[derive(Debug, Serialize, Deserialize, JsonSchema)]
pub struct Reply {
    /// The answer.
    pub answer: String,
}

fn yields_nothing<X: ?Sized>(_: &X) -> Option<Value> {
    None
}
fn fails<X: ?Sized>(_: &X) -> Result<Value, String> {
    Err("this transform fails".into())
}
fn explodes<X: ?Sized>(_: &X) -> Value {
    panic!("this transform panics")
}

fn act_needs_approval<I: HasAction>(i: &I, _: &RequestContext) -> bool {
    i.action() == "approve"
}

/// The `action` argument of the test tools: `ok`, `fail`, `panic`, `approve`, `suspend`.
trait HasAction {
    fn action(&self) -> &str;
}

macro_rules! has_action {
    ($($tool:ident),*) => {$(
        impl HasAction for InputOf<$tool> {
            fn action(&self) -> &str {
                &self.action
            }
        }
    )*};
}

/// The context of the tools that suspend with an [`Ask`] and resume with a [`Reply`].
type AskCx = ToolContext<RequestContext, Ask, Reply>;

/// What the fail-closed tools do: succeed, fail, suspend until resumed.
async fn act(secret: String, action: String, cx: AskCx) -> Result<String, ToolError> {
    match action.as_str() {
        "fail" => Err(ToolError::new(format!("failed on {secret}"))),
        "panic" => panic!("panicked on {secret}"),
        "suspend" => match cx.resume_data()? {
            Some(r) => Ok(format!("{secret}: {}", r.answer)),
            None => Err(cx.suspend(Ask {
                question: format!("Go on with {secret}?"),
            })),
        },
        _ => Ok(format!("done with {secret}")),
    }
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
async fn none_tool(
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
async fn panic_tool(
    /// A secret
    secret: String,
    /// What to do
    action: String,
    #[ctx] cx: AskCx,
) -> Result<String, ToolError> {
    act(secret, action, cx).await
}

has_action!(none_tool, panic_tool, input_only, output_only, plain, canary, canary_min);

/// Asserts that both views show the event with each named payload replaced by its placeholder.
fn assert_placeholders(e: &Event, fields: &[(&str, TransformPhase)]) {
    for t in BOTH {
        let shown = payload(view(e, t));
        let mut expected = payload(&e.raw);
        expected.remove("model_output");
        for (name, phase) in fields {
            assert!(expected.contains_key(*name), "{name} in {:?}", e.raw);
            expected.insert((*name).to_owned(), placeholder(*phase));
        }
        assert_eq!(shown, expected, "{t:?} of {:?}", e.raw);
    }
}

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
// 3. Fallbacks
// ---------------------------------------------------------------------------------------------

fn input_only_display(i: &InputOf<input_only>) -> Value {
    json!({"action": i.action})
}

/// Display transforms its input only
#[tool(id = "views-input-only", require_approval = act_needs_approval, suspend = Ask, resume = Reply, transform(display(input = input_only_display)))]
async fn input_only(
    /// A secret
    secret: String,
    /// What to do
    action: String,
    #[ctx] cx: AskCx,
) -> Result<String, ToolError> {
    act(secret, action, cx).await
}

#[allow(clippy::ptr_arg)] // A transform takes `&Output`, here `&String`.
fn output_only_display(out: &String) -> Value {
    json!(out.len())
}

/// Display transforms its output only
#[tool(id = "views-output-only", require_approval = act_needs_approval, suspend = Ask, resume = Reply, transform(display(output = output_only_display)))]
async fn output_only(
    /// A secret
    secret: String,
    /// What to do
    action: String,
    #[ctx] cx: AskCx,
) -> Result<String, ToolError> {
    act(secret, action, cx).await
}

fn plain_model_output(out: &String) -> ModelOutput {
    ModelOutput::Text(format!("model sees {out}"))
}

/// No transforms at all
#[tool(id = "views-plain", require_approval = act_needs_approval, to_model_output = plain_model_output, suspend = Ask, resume = Reply)]
async fn plain(
    /// A secret
    secret: String,
    /// What to do
    action: String,
    #[ctx] cx: AskCx,
) -> Result<String, ToolError> {
    act(secret, action, cx).await
}

#[tokio::test]
async fn a_view_that_hides_the_input_drops_deltas_and_reuses_the_input_transform() {
    let runtime = Runtime::new(Registry::from_iter([input_only::tool()]));
    let tool = "views-input-only";

    let events = streamed(&runtime, "io-stream", tool, &[r#"{"secret": "pw"#, r#"1", "action": "ok"}"#]).await;
    assert_eq!(
        kinds(&events),
        ["input-streaming-start", "input-delta", "input-delta", "tool-call", "tool-result"]
    );
    for e in &events[1..3] {
        assert_eq!(e.display, None, "no input_delta transform: the display drops deltas");
        assert_eq!(e.transcript.as_ref(), Some(&e.raw.shown()), "the transcript hides nothing");
    }
    assert_eq!(field(&events[3], T::Display, "args"), json!({"action": "ok"}));
    assert_eq!(field(&events[3], T::Transcript, "args"), json!({"secret": "pw1", "action": "ok"}));
    // The output is not hidden.
    assert_raw(&events[4]);

    // No approval transform: the approval shows the input transform's value.
    let events = call(&runtime, tool, "io-approve", json!({"secret": "pw2", "action": "approve"})).await;
    assert_eq!(kinds(&events), ["tool-call", "tool-call-approval"]);
    assert_eq!(field(&events[1], T::Display, "args"), json!({"action": "approve"}));
    // The transcript hides nothing, but a waiting call's secrets are redacted as in errors.
    assert_eq!(
        field(&events[1], T::Transcript, "args"),
        json!({"secret": "[REDACTED]", "action": "approve"})
    );
    assert_eq!(raw_field(&events[1], "args")["secret"], "pw2");

    // No error transform: errors quote the input, so the display shows the placeholder.
    for (id, args) in [
        ("io-fail", json!({"secret": "pw3", "action": "fail"})),
        ("io-invalid", json!({"secret": "pw4", "action": 5})),
    ] {
        let events = call(&runtime, tool, id, args).await;
        assert_eq!(kinds(&events), ["tool-call", "tool-error"], "{id}");
        assert_eq!(field(&events[1], T::Display, "error"), placeholder(P::Error), "{id}");
        assert_eq!(events[1].transcript.as_ref(), Some(&events[1].raw.shown()), "{id}");
    }

    // A suspended call's arguments are the input: the input transform (or its placeholder).
    let events = call(&runtime, tool, "io-suspend", json!({"secret": "pw5", "action": "suspend"})).await;
    assert_eq!(kinds(&events), ["tool-call", "tool-call-suspended"]);
    assert_eq!(field(&events[1], T::Display, "args"), json!({"action": "suspend"}));
}

#[tokio::test]
async fn a_view_that_hides_the_output_hides_errors_but_not_the_input() {
    let runtime = Runtime::new(Registry::from_iter([output_only::tool()]));
    let tool = "views-output-only";
    let events = streamed(&runtime, "oo-stream", tool, &[r#"{"secret": "pw"#, r#"1", "action": "ok"}"#]).await;
    assert_eq!(
        kinds(&events),
        ["input-streaming-start", "input-delta", "input-delta", "tool-call", "tool-result"]
    );
    for e in &events[..4] {
        assert_raw(e);
    }
    assert_eq!(field(&events[4], T::Display, "result"), json!("done with pw1".len()));
    assert_eq!(events[4].transcript.as_ref(), Some(&events[4].raw.shown()));

    let events = call(&runtime, tool, "oo-approve", json!({"secret": "pw2", "action": "approve"})).await;
    // The input is not hidden, but a waiting call's secrets are redacted as in errors.
    assert_both(&events[1], "args", json!({"secret": "[REDACTED]", "action": "approve"}));
    assert_eq!(raw_field(&events[1], "args")["secret"], "pw2");

    let events = call(&runtime, tool, "oo-fail", json!({"secret": "pw3", "action": "fail"})).await;
    assert_eq!(kinds(&events), ["tool-call", "tool-error"]);
    assert_eq!(field(&events[1], T::Display, "error"), placeholder(P::Error));
    assert_eq!(events[1].transcript.as_ref(), Some(&events[1].raw.shown()));
}

#[tokio::test]
async fn a_tool_without_transforms_shows_everything_raw() {
    let runtime = Runtime::new(Registry::from_iter([plain::tool()]));
    let tool = "views-plain";
    let mut all = streamed(&runtime, "pl-stream", tool, &[r#"{"secret": "pw"#, r#"1", "action": "ok"}"#]).await;
    assert_eq!(
        kinds(&all),
        ["input-streaming-start", "input-delta", "input-delta", "tool-call", "tool-result"]
    );
    assert_eq!(
        raw_field(&all[4], "model_output"),
        json!({"type": "text", "value": "model sees done with pw1"})
    );
    all.extend(call(&runtime, tool, "pl-fail", json!({"secret": "pw2", "action": "fail"})).await);
    all.extend(call(&runtime, tool, "pl-invalid", json!({"secret": "pw2", "action": []})).await);
    all.extend(call(&runtime, tool, "pl-approve", json!({"secret": "pw3", "action": "approve"})).await);
    all.extend(collect(runtime.decline("pl-approve", "not now").await).await);
    all.extend(call(&runtime, tool, "pl-suspend", json!({"secret": "pw4", "action": "suspend"})).await);
    all.extend(
        collect(
            runtime
                .resume("pl-suspend", json!({"answer": "yes"}), ResumeOptions::default())
                .await,
        )
        .await,
    );
    assert_eq!(all.len(), 5 + 2 + 2 + 2 + 2 + 2 + 2, "{:?}", kinds(&all));
    for e in &all {
        if matches!(e.raw.type_name(), "tool-call-approval" | "tool-call-suspended") {
            // A waiting call's arguments are put before a person: redacted as errors are
            // (only the secret-named key), everything else as it is.
            let mut expected = raw_field(e, "args");
            assert_ne!(expected["secret"], "[REDACTED]");
            expected["secret"] = json!("[REDACTED]");
            assert_both(e, "args", expected);
            for t in BOTH {
                let (mut shown, mut raw) = (payload(view(e, t)), payload(&e.raw));
                shown.remove("args");
                raw.remove("args");
                assert_eq!(shown, raw, "{t:?}");
            }
        } else {
            assert_raw(e);
        }
    }
}

// ---------------------------------------------------------------------------------------------
// 4. Runtime policies
// ---------------------------------------------------------------------------------------------

/// A policy for tests: configures the listed (target, phase) pairs and answers with `answer`.
struct TestPolicy {
    phases: Vec<(TransformTarget, TransformPhase)>,
    answer: fn(TransformPhase, &Value) -> Option<Result<Value, String>>,
    configures_panics: bool,
}

impl TransformPolicy for TestPolicy {
    fn configures(&self, _: &ToolSpec, target: TransformTarget, phase: TransformPhase) -> bool {
        if self.configures_panics {
            panic!("the policy's configures panics");
        }
        self.phases.contains(&(target, phase))
    }

    fn transform(
        &self,
        _: &ToolSpec,
        _: TransformTarget,
        phase: TransformPhase,
        payload: &Value,
    ) -> Option<Result<Value, tool_core::ToolError>> {
        (self.answer)(phase, payload).map(|r| r.map_err(tool_core::ToolError::new))
    }
}

fn every_phase(target: TransformTarget) -> Vec<(TransformTarget, TransformPhase)> {
    [P::Input, P::InputDelta, P::Output, P::Error, P::Approval, P::Suspend, P::Resume]
        .map(|p| (target, p))
        .to_vec()
}

#[tokio::test]
async fn a_policy_value_wins_over_the_tool_and_none_falls_back_to_it() {
    let policy = TestPolicy {
        phases: [every_phase(T::Display), every_phase(T::Transcript)].concat(),
        // Only display input and output get a policy value; everything else is left to the tool.
        answer: |phase, _| match phase {
            P::Input => Some(Ok(json!("policy input"))),
            P::Output => Some(Ok(json!("policy output"))),
            _ => None,
        },
        configures_panics: false,
    };
    let runtime = Runtime::builder(Registry::from_iter([pay::tool()]))
        .transform_policy(policy)
        .build();
    let card = "4000002222222222";
    let events = call(&runtime, "views-pay", "pol-1", json!({"card_number": card, "amount_cents": 1})).await;
    assert_eq!(kinds(&events), ["tool-call", "tool-result"]);
    assert_both(&events[0], "args", json!("policy input"));
    assert_both(&events[1], "result", json!("policy output"));
    // The policy yields nothing for approvals and errors: the tool's transforms show.
    let events = call(&runtime, "views-pay", "pol-2", json!({"card_number": card, "amount_cents": 20_000})).await;
    assert_eq!(
        field(&events[1], T::Display, "args"),
        json!({"question": "Charge 20000 cents to •••• 2222?"})
    );
    assert_eq!(field(&events[1], T::Transcript, "args"), json!({"approval_for_cents": 20_000}));
    let events = call(
        &runtime,
        "views-pay",
        "pol-3",
        json!({"card_number": card, "amount_cents": 3, "memo": "decline"}),
    )
    .await;
    assert_eq!(
        field(&events[1], T::Display, "error"),
        json!({"toast": "Payment failed", "kind": "execution"})
    );
    assert_eq!(field(&events[1], T::Transcript, "error"), json!("Payment failed"));
    assert_eq!(paid_with(card), [1, 3], "execute receives raw values whatever the policy");
}

#[tokio::test]
async fn a_policy_that_configures_a_phase_but_yields_nothing_shows_placeholders() {
    let policy = TestPolicy {
        phases: vec![(T::Display, P::Input), (T::Display, P::Output), (T::Transcript, P::Output)],
        answer: |_, _| None,
        configures_panics: false,
    };
    let runtime = Runtime::builder(Registry::from_iter([plain::tool()]))
        .transform_policy(policy)
        .build();
    let tool = "views-plain";
    let events = streamed(&runtime, "empty-stream", tool, &[r#"{"secret": "pw"#, r#"1", "action": "ok"}"#]).await;
    assert_eq!(
        kinds(&events),
        ["input-streaming-start", "input-delta", "input-delta", "tool-call", "tool-result"]
    );
    for e in &events[1..3] {
        assert_eq!(e.display, None, "the display hides the input: no deltas");
        assert_eq!(e.transcript.as_ref(), Some(&e.raw.shown()));
    }
    assert_eq!(field(&events[3], T::Display, "args"), placeholder(P::Input));
    assert_eq!(events[3].transcript.as_ref(), Some(&events[3].raw.shown()));
    for t in BOTH {
        assert_eq!(field(&events[4], t, "result"), placeholder(P::Output), "{t:?}");
        assert!(!payload(view(&events[4], t)).contains_key("model_output"), "{t:?}");
    }
    // Approval falls back on the (placeholder) input; errors on the error placeholder.
    let events = call(&runtime, tool, "empty-approve", json!({"secret": "pw2", "action": "approve"})).await;
    assert_eq!(field(&events[1], T::Display, "args"), placeholder(P::Input));
    // The transcript hides nothing, but a waiting call's secrets are redacted as in errors.
    assert_eq!(
        field(&events[1], T::Transcript, "args"),
        json!({"secret": "[REDACTED]", "action": "approve"})
    );
    let events = call(&runtime, tool, "empty-fail", json!({"secret": "pw3", "action": "fail"})).await;
    assert_both(&events[1], "error", placeholder(P::Error));
}

#[tokio::test]
async fn a_panicking_policy_never_shows_raw_payloads() {
    for configures_panics in [false, true] {
        let policy = TestPolicy {
            phases: [every_phase(T::Display), every_phase(T::Transcript)].concat(),
            answer: |_, _| panic!("the policy's transform panics"),
            configures_panics,
        };
        let runtime = Runtime::builder(Registry::from_iter([plain::tool(), pay::tool()]))
            .transform_policy(policy)
            .build();
        let id = |s: &str| format!("panicky-{configures_panics}-{s}");
        let events = streamed(
            &runtime,
            &id("stream"),
            "views-plain",
            &[r#"{"secret": "pw"#, r#"1", "action": "ok"}"#],
        )
        .await;
        assert_eq!(
            kinds(&events),
            ["input-streaming-start", "input-delta", "input-delta", "tool-call", "tool-result"]
        );
        for e in &events[1..3] {
            assert_eq!((&e.display, &e.transcript), (&None, &None));
        }
        assert_placeholders(&events[3], &[("args", P::Input)]);
        assert_placeholders(&events[4], &[("result", P::Output)]);
        let events = call(
            &runtime,
            "views-plain",
            &id("approve"),
            json!({"secret": "pw2", "action": "approve"}),
        )
        .await;
        assert_placeholders(&events[1], &[("args", P::Approval)]);
        let events = call(&runtime, "views-plain", &id("fail"), json!({"secret": "pw3", "action": "fail"})).await;
        assert_placeholders(&events[1], &[("error", P::Error)]);
        let events = call(
            &runtime,
            "views-plain",
            &id("suspend"),
            json!({"secret": "pw4", "action": "suspend"}),
        )
        .await;
        assert_placeholders(&events[1], &[("suspend_payload", P::Suspend), ("args", P::Input)]);

        // A tool with its own transforms: the policy yields nothing, so the tool's value shows.
        let card = if configures_panics {
            "4000003333333333"
        } else {
            "4000004444444444"
        };
        let events = call(&runtime, "views-pay", &id("pay"), json!({"card_number": card, "amount_cents": 9})).await;
        assert_eq!(field(&events[0], T::Display, "args")["amount_cents"], 9);
        assert_eq!(field(&events[0], T::Transcript, "args"), json!({"amount_cents": 9}));
        assert_eq!(field(&events[1], T::Transcript, "result"), json!("Paid 9 cents"));
    }
}

// ---------------------------------------------------------------------------------------------
// RedactSecrets
// ---------------------------------------------------------------------------------------------

/// A session.
#[derive(Debug, Serialize, JsonSchema)]
pub struct Session {
    /// Who logged in.
    pub user: String,
    /// The session token.
    pub token: String,
}

fn login_needs_approval(i: &InputOf<login>, _: &RequestContext) -> bool {
    i.user == "root"
}

/// Logs a user in
#[tool(id = "views-login", require_approval = login_needs_approval)]
async fn login(
    /// The user
    user: String,
    /// The password
    password: String,
) -> Result<Session, ToolError> {
    if password.is_empty() {
        return Err(ToolError::with_details(
            "empty password",
            json!({"user": user, "password": password}),
        ));
    }
    Ok(Session {
        token: format!("tok-{user}-{}", password.len()),
        user,
    })
}

#[tokio::test]
async fn redact_secrets_hides_secret_keys_in_both_views_and_drops_deltas() {
    let runtime = Runtime::builder(Registry::from_iter([login::tool()]))
        .transform_policy(RedactSecrets)
        .build();
    let events = streamed(
        &runtime,
        "redact-1",
        "views-login",
        &[r#"{"user": "ann", "pass"#, r#"word": "hunter2"}"#],
    )
    .await;
    assert_eq!(
        kinds(&events),
        ["input-streaming-start", "input-delta", "input-delta", "tool-call", "tool-result"]
    );
    assert_raw(&events[0]);
    for e in &events[1..3] {
        assert_eq!((&e.display, &e.transcript), (&None, &None), "deltas cannot be redacted: dropped");
    }
    assert_eq!(raw_field(&events[3], "args"), json!({"user": "ann", "password": "hunter2"}));
    assert_eq!(raw_field(&events[4], "result"), json!({"user": "ann", "token": "tok-ann-7"}));
    assert_both(&events[3], "args", json!({"user": "ann", "password": "[REDACTED]"}));
    assert_both(&events[4], "result", json!({"user": "ann", "token": "[REDACTED]"}));

    let events = call(&runtime, "views-login", "redact-2", json!({"user": "root", "password": "toor"})).await;
    assert_eq!(kinds(&events), ["tool-call", "tool-call-approval"]);
    assert_both(&events[1], "args", json!({"user": "root", "password": "[REDACTED]"}));

    let events = call(&runtime, "views-login", "redact-3", json!({"user": "bob", "password": ""})).await;
    assert_eq!(kinds(&events), ["tool-call", "tool-error"]);
    for t in BOTH {
        assert_eq!(
            field(&events[1], t, "error")["details"],
            json!({"user": "bob", "password": "[REDACTED]"}),
            "{t:?}"
        );
    }
}

#[tokio::test]
async fn redact_secrets_covers_calls_to_unknown_tools_and_unparsable_arguments() {
    let runtime = Runtime::builder(Registry::from_iter([login::tool()]))
        .transform_policy(RedactSecrets)
        .build();
    // The model names a tool this runtime does not have: its arguments are still redacted.
    let events = call(
        &runtime,
        "views-no-such-tool",
        "redact-unknown",
        json!({"user": "ann", "password": "hunter2"}),
    )
    .await;
    assert_eq!(kinds(&events), ["tool-call", "tool-error"]);
    assert_eq!(raw_field(&events[0], "args")["password"], "hunter2");
    assert_both(&events[0], "args", json!({"user": "ann", "password": "[REDACTED]"}));
    for t in BOTH {
        assert_eq!(
            field(&events[1], t, "error")["kind"],
            raw_field(&events[1], "error")["kind"],
            "{t:?}"
        );
    }
    let events = streamed(
        &runtime,
        "redact-unknown-stream",
        "views-no-such-tool",
        &[r#"{"password": "#, r#""hunter2"}"#],
    )
    .await;
    assert_eq!(
        kinds(&events),
        ["input-streaming-start", "input-delta", "input-delta", "tool-call", "tool-error"]
    );
    for e in &events {
        for t in BOTH {
            let shown = e.view(t).map(|v| serde_json::to_string(v).unwrap()).unwrap_or_default();
            assert!(!shown.contains("hunter2"), "{t:?}: {shown}");
        }
    }
    // Arguments that are not JSON cannot be redacted: the views show the placeholder.
    let events = call(
        &runtime,
        "views-login",
        "redact-text",
        r#"{"user": "ann", "password": "hunter2""#.to_owned(),
    )
    .await;
    assert_eq!(kinds(&events), ["tool-call", "tool-error"]);
    assert_eq!(raw_field(&events[0], "args"), json!(r#"{"user": "ann", "password": "hunter2""#));
    assert_both(&events[0], "args", placeholder(P::Input));
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

// ---------------------------------------------------------------------------------------------
// 5. Canaries: a secret planted in a transformed tool's payloads reaches no view and no log
// ---------------------------------------------------------------------------------------------

/// A tracing subscriber that keeps every event and span field as a line of text.
#[derive(Clone, Default)]
struct Logs {
    lines: Arc<Mutex<Vec<String>>>,
    spans: Arc<std::sync::atomic::AtomicU64>,
}

struct Line(String);

impl tracing::field::Visit for Line {
    fn record_str(&mut self, field: &tracing::field::Field, value: &str) {
        let _ = write!(self.0, " {}={}", field.name(), value);
    }

    fn record_debug(&mut self, field: &tracing::field::Field, value: &dyn std::fmt::Debug) {
        let _ = write!(self.0, " {}={:?}", field.name(), value);
    }
}

impl Logs {
    fn push(&self, line: Line) {
        self.lines.lock().unwrap().push(line.0);
    }

    fn text(&self) -> String {
        self.lines.lock().unwrap().join("\n")
    }
}

impl tracing::Subscriber for Logs {
    fn register_callsite(&self, _: &'static tracing::Metadata<'static>) -> tracing::subscriber::Interest {
        tracing::subscriber::Interest::always()
    }

    fn enabled(&self, _: &tracing::Metadata<'_>) -> bool {
        true
    }

    fn max_level_hint(&self) -> Option<tracing::level_filters::LevelFilter> {
        Some(tracing::level_filters::LevelFilter::TRACE)
    }

    fn new_span(&self, span: &tracing::span::Attributes<'_>) -> tracing::span::Id {
        let mut line = Line(format!("span {} {}", span.metadata().target(), span.metadata().name()));
        span.record(&mut line);
        self.push(line);
        tracing::span::Id::from_u64(1 + self.spans.fetch_add(1, std::sync::atomic::Ordering::Relaxed))
    }

    fn record(&self, _: &tracing::span::Id, values: &tracing::span::Record<'_>) {
        let mut line = Line("record".into());
        values.record(&mut line);
        self.push(line);
    }

    fn record_follows_from(&self, _: &tracing::span::Id, _: &tracing::span::Id) {}

    fn event(&self, event: &tracing::Event<'_>) {
        let mut line = Line(format!("{} {}", event.metadata().level(), event.metadata().target()));
        event.record(&mut line);
        self.push(line);
    }

    fn enter(&self, _: &tracing::span::Id) {}

    fn exit(&self, _: &tracing::span::Id) {}
}

/// What the canary tools return: the secret itself among other things.
#[derive(Debug, Serialize, JsonSchema)]
pub struct Statement {
    /// The secret.
    pub secret: String,
    /// The amount.
    pub amount: u32,
    /// A note quoting the secret.
    pub note: String,
}

fn canary_input(i: &InputOf<canary>) -> Value {
    json!({"amount": i.amount, "action": i.action, "secret_len": i.secret.len()})
}
fn canary_delta(delta: &str) -> Value {
    json!({"received": delta.len()})
}
fn canary_output(s: &Statement) -> Value {
    json!({"amount": s.amount})
}
fn canary_display_error(e: &ToolError) -> Value {
    let paths: Vec<&str> = e.issues().iter().map(|i| i.path.as_str()).collect();
    json!({"toast": "The statement failed", "kind": e.kind().as_str(), "paths": paths})
}
fn canary_transcript_error(e: &ToolError) -> Value {
    json!(format!("failed ({})", e.kind().as_str()))
}
fn canary_approval(i: &InputOf<canary>) -> Value {
    json!(format!("Allow a statement of {}?", i.amount))
}
fn canary_suspend(a: &Ask) -> Value {
    json!({"question_len": a.question.len()})
}
fn canary_resume(r: &Reply) -> Value {
    json!({"answer": r.answer})
}
fn canary_model_output(s: &Statement) -> ModelOutput {
    ModelOutput::Text(s.note.clone())
}

/// What the canary tools do with their secret.
async fn statement(secret: String, amount: u32, action: String, cx: AskCx) -> Result<Statement, ToolError> {
    tracing::info!(amount, action = %action, "views canary tool ran");
    let note = format!("statement for {secret}");
    match action.as_str() {
        "fail" => Err(ToolError::new(format!("the ledger refused {secret}"))),
        "fail-details" => Err(ToolError::with_details("the ledger refused", json!({"secret": secret}))),
        "panic" => panic!("the ledger crashed on {secret}"),
        "suspend" => match cx.resume_data()? {
            Some(_) => Ok(Statement { secret, amount, note }),
            None => Err(cx.suspend(Ask {
                question: format!("Really print {secret}?"),
            })),
        },
        _ => Ok(Statement { secret, amount, note }),
    }
}

/// Prints a statement (every phase of both views has its own transform)
#[tool(
    id = "views-canary",
    suspend = Ask,
    resume = Reply,
    require_approval = act_needs_approval,
    to_model_output = canary_model_output,
    transform(
        display(input = canary_input, input_delta = canary_delta, output = canary_output, error = canary_display_error,
                approval = canary_approval, suspend = canary_suspend, resume = canary_resume),
        transcript(input = canary_input, output = canary_output, error = canary_transcript_error,
                   approval = canary_approval, suspend = canary_suspend, resume = canary_resume),
    )
)]
async fn canary(
    /// The secret
    secret: String,
    /// An amount
    amount: u32,
    /// What to do
    action: String,
    #[ctx] cx: AskCx,
) -> Result<Statement, ToolError> {
    statement(secret, amount, action, cx).await
}

fn canary_min_input(i: &InputOf<canary_min>) -> Value {
    json!({"amount": i.amount, "action": i.action})
}

/// Prints a statement (input and output transforms only: the rest falls back)
#[tool(
    id = "views-canary-min",
    suspend = Ask,
    resume = Reply,
    require_approval = act_needs_approval,
    to_model_output = canary_model_output,
    transform(display(input = canary_min_input, output = canary_output), transcript(input = canary_min_input, output = canary_output))
)]
async fn canary_min(
    /// The secret
    secret: String,
    /// An amount
    amount: u32,
    /// What to do
    action: String,
    #[ctx] cx: AskCx,
) -> Result<Statement, ToolError> {
    statement(secret, amount, action, cx).await
}

/// Every run of one canary case: events (per flow) for both tools.
async fn canary_flows(runtime: &Runtime, secret: &str, cuts: (usize, usize), streamed_action: &str) -> Vec<(String, Vec<Event>)> {
    let mut flows = Vec::new();
    for tool in ["views-canary", "views-canary-min"] {
        let args = |action: &str| json!({"secret": secret, "amount": 12, "action": action});
        let name = |flow: &str| format!("{tool}/{flow}");
        for action in ["ok", "fail", "fail-details", "panic"] {
            flows.push((
                name(action),
                runtime.call(tool, args(action), CallOptions::default()).collect().await,
            ));
        }
        // Invalid arguments: the canary is fine, another argument is not (as a value and as text).
        let wrong = json!({"secret": secret, "amount": "twelve", "action": "ok"});
        flows.push((
            name("invalid"),
            runtime.call(tool, wrong.clone(), CallOptions::default()).collect().await,
        ));
        flows.push((
            name("invalid-text"),
            runtime.call(tool, wrong.to_string(), CallOptions::default()).collect().await,
        ));
        // Arguments that are not even JSON (cut short): the views get their text, untransformable.
        let text = args("ok").to_string();
        flows.push((
            name("not-json"),
            runtime
                .call(tool, text[..text.len() - 1].to_owned(), CallOptions::default())
                .collect()
                .await,
        ));
        let missing = json!({"secret": secret, "action": "ok"});
        flows.push((name("missing"), runtime.call(tool, missing, CallOptions::default()).collect().await));

        // Approval, approved and declined.
        for (flow, approve) in [("approved", true), ("declined", false)] {
            let mut events = runtime.call(tool, args("approve"), CallOptions::default()).collect().await;
            let id = events.last().map(|e| e.raw.tool_call_id().to_owned()).unwrap();
            assert_eq!(events.last().unwrap().raw.type_name(), "tool-call-approval", "{tool}");
            let next = if approve {
                runtime.approve(&id, ResumeOptions::default()).await
            } else {
                runtime.decline(&id, "not today").await
            };
            events.extend(collect(next).await);
            flows.push((name(flow), events));
        }

        // Suspended (the payload quotes the secret) and resumed.
        if tool == "views-canary" {
            let mut events = runtime.call(tool, args("suspend"), CallOptions::default()).collect().await;
            let id = events.last().map(|e| e.raw.tool_call_id().to_owned()).unwrap();
            assert_eq!(events.last().unwrap().raw.type_name(), "tool-call-suspended");
            events.extend(collect(runtime.resume(&id, json!({"answer": "yes"}), ResumeOptions::default()).await).await);
            flows.push((name("suspended"), events));
        }

        // Streamed input, the secret split across deltas.
        let text = args(streamed_action).to_string();
        let at = text.find(secret).unwrap();
        let (a, b) = (at + cuts.0, at + cuts.1);
        let id = format!("{tool}-stream");
        flows.push((
            name("streamed"),
            streamed(runtime, &id, tool, &[&text[..a], &text[a..b], &text[b..]]).await,
        ));
    }
    flows
}

fn canary_config() -> Config {
    Config {
        cases: 32,
        failure_persistence: None,
        ..Config::default()
    }
}

proptest! {
    #![proptest_config(canary_config())]

    #[test]
    fn canaries_reach_no_view_and_no_log(
        tail in "[A-Za-z0-9]{12}",
        cuts in (1usize..9).prop_flat_map(|a| (Just(a), a + 1..19)),
        streamed_action in prop::sample::select(vec!["ok", "fail", "panic", "approve"]),
    ) {
        let secret = format!("CANARY-{tail}");
        let logs = Logs::default();
        let flows = tracing::subscriber::with_default(logs.clone(), || {
            let rt = tokio::runtime::Builder::new_current_thread().enable_all().build().unwrap();
            rt.block_on(async {
                let runtime = Runtime::new(Registry::from_iter([canary::tool(), canary_min::tool()]));
                canary_flows(&runtime, &secret, cuts, streamed_action).await
            })
        });

        let text_deltas = |views: &mut dyn Iterator<Item = Option<&ShownEvent>>| -> String {
            views
                .filter_map(|e| match e {
                    Some(ShownEvent {
                        kind: RunEventKind::InputDelta { delta },
                        ..
                    }) => delta.as_str().map(str::to_owned),
                    _ => None,
                })
                .collect()
        };
        for (flow, events) in &flows {
            // The canary was really planted: the raw events carry it.
            let raw = serde_json::to_string(&events.iter().map(|e| &e.raw).collect::<Vec<_>>()).unwrap();
            prop_assert!(raw.contains(&secret), "{flow}: {raw}");
            for t in BOTH {
                for e in events {
                    let shown = serde_json::to_string(&e.view(t)).unwrap();
                    prop_assert!(!shown.contains(&secret), "{flow}: {t:?} shows the canary: {shown}");
                }
                // Nor may it show when the view's text deltas are put back together.
                let joined = text_deltas(&mut events.iter().map(|e| e.view(t)));
                prop_assert!(!joined.contains(&secret), "{flow}: {t:?} deltas spell the canary: {joined}");
            }
        }
        for (flow, events) in flows.iter().filter(|(f, _)| f.ends_with("streamed")) {
            // The raw deltas spell the canary, and none of them holds it whole.
            let deltas: Vec<&Event> = events.iter().filter(|e| e.raw.type_name() == "input-delta").collect();
            prop_assert_eq!(deltas.len(), 3, "{}", flow);
            let raw: Vec<ShownEvent> = deltas.iter().map(|e| e.raw.shown()).collect();
            prop_assert!(text_deltas(&mut raw.iter().map(Some)).contains(&secret), "{}", flow);
            for e in deltas {
                prop_assert!(!serde_json::to_string(&e.raw).unwrap().contains(&secret), "{}", flow);
            }
        }
        let text = logs.text();
        prop_assert!(text.contains("views canary tool ran"), "the subscriber captured the tool's own log: {text}");
        prop_assert!(!text.contains(&secret), "a log line has the canary: {text}");
    }
}

// ---------------------------------------------------------------------------------------------
// Known leaks outside the views (reported; un-ignore once fixed)
// ---------------------------------------------------------------------------------------------

fn bg_error(_: &ToolError) -> Value {
    json!("The task failed")
}

/// Fails in the background, quoting its secret
#[tool(id = "views-bg", background(enabled = true, max_retries = 1), transform(display(error = bg_error), transcript(error = bg_error)))]
async fn bg(
    /// A secret
    secret: String,
) -> Result<String, ToolError> {
    Err(ToolError::new(format!("the task failed on {secret}")))
}

#[test]
fn the_decision_key_reaches_no_event_error_or_log_line() {
    const KEY: &str = "CANARY-decision-key-0123456789abcdef";
    let logs = Logs::default();
    let seen = tracing::subscriber::with_default(logs.clone(), || {
        let rt = tokio::runtime::Builder::new_current_thread().enable_all().build().unwrap();
        rt.block_on(async {
            let key = DecisionKey::from_bytes(KEY.as_bytes()).unwrap();
            let runtime = Runtime::builder(Registry::from_iter([pay::tool()]))
                .decision_key(key.clone())
                .build();
            let args = json!({"card_number": "4111", "amount_cents": 50_000});
            let run = runtime
                .call("views-pay", args, CallOptions::default().id("views-tok"))
                .finish()
                .await;
            let mut seen = format!("{runtime:?} {key:?} {:?}", run.outcome);
            let binding = runtime.binding("views-tok").await.unwrap();
            let approve = Decision::new(binding, Answer::Approve);
            let token = runtime.sign_decision(&approve, std::time::Duration::from_secs(60)).unwrap();
            let expired = key.sign(&approve, 1);
            let tampered = format!("{token}x");
            for bad in [expired.as_str(), tampered.as_str(), "tsd1.e30.AAAA", "junk"] {
                let err = runtime.decide_token(bad, Default::default()).await.err().unwrap();
                seen.push_str(&format!(" {err} {err:?}"));
            }
            let run = runtime.decide_token(&token, Default::default()).await.unwrap().finish().await;
            seen.push_str(&format!(" {:?} {token}", run.outcome));
            for e in &run.events {
                seen.push_str(&serde_json::to_string(&e.raw).unwrap());
            }
            seen
        })
    });
    assert!(seen.contains("tsd1."), "the flow ran: {seen}");
    assert!(!seen.contains(KEY), "the key shows: {seen}");
    let text = logs.text();
    assert!(!text.is_empty() && !text.contains(KEY), "a log line has the key: {text}");
}

#[test]
fn a_retried_background_error_is_not_logged() {
    let logs = Logs::default();
    let events = tracing::subscriber::with_default(logs.clone(), || {
        let rt = tokio::runtime::Builder::new_current_thread().enable_all().build().unwrap();
        rt.block_on(call(
            &Runtime::new(Registry::from_iter([bg::tool()])),
            "views-bg",
            "bg-1",
            json!({"secret": "CANARY-bg"}),
        ))
    });
    assert_eq!(events.last().map(|e| e.raw.type_name()), Some("background-task-failed"));
    let failed = events.last().unwrap();
    assert!(serde_json::to_string(&failed.raw).unwrap().contains("CANARY-bg"));
    for t in BOTH {
        assert_eq!(field(failed, t, "error"), json!("The task failed"), "the views are fine");
    }
    assert!(!logs.text().contains("CANARY-bg"), "{}", logs.text());
}

#[tokio::test]
async fn redact_secrets_hides_unparsable_arguments_in_errors_too() {
    let runtime = Runtime::builder(Registry::from_iter([login::tool()]))
        .transform_policy(RedactSecrets)
        .build();
    let events = call(
        &runtime,
        "views-login",
        "redact-text-error",
        r#"{"user": "ann", "password": "hunter2""#.to_owned(),
    )
    .await;
    assert_eq!(kinds(&events), ["tool-call", "tool-error"]);
    for t in BOTH {
        let shown = serde_json::to_string(&field(&events[1], t, "error")).unwrap();
        assert!(!shown.contains("hunter2"), "{t:?}: {shown}");
    }
}
