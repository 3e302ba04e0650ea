//! What the `display` and `transcript` views of a run show: the tool's transforms (and the
//! runtime's policy, first), their fallbacks, fail-closed placeholders, and a property test that
//! a secret planted in a transformed tool's payloads reaches no view and no log line. This file
//! holds the helpers and tools the tests share; the tests are in `tool_transforms`,
//! `fail_closed`, `policies`, `canaries` and `leaks`.

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
// A payment tool with every transform (`tool_transforms` and `policies` call it)
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

// ---------------------------------------------------------------------------------------------
// The tools that ask, suspend and fail on request, and the placeholders' assertions
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

// `views-plain`, without transforms: `tool_transforms` and `policies` call it.
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

has_action!(plain);

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

fn every_phase(target: TransformTarget) -> Vec<(TransformTarget, TransformPhase)> {
    [P::Input, P::InputDelta, P::Output, P::Error, P::Approval, P::Suspend, P::Resume]
        .map(|p| (target, p))
        .to_vec()
}

// ---------------------------------------------------------------------------------------------
// Captured logs (`canaries` and `leaks`)
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

// The tests, by subject (declared after `has_action!`, which they use).
mod canaries;
mod fail_closed;
mod leaks;
mod policies;
mod tool_transforms;
