// `suspend = T` (Serialize + Deserialize: suspended calls are stored and read back) and `resume = U`
// put their schemas in the spec; a resume transform receives `&U` and a suspend transform `&T`.
// The `#[ctx]` parameter names the same types, `ToolContext<C, T, U>` (an alias works too), so
// `cx.suspend` takes a `T` and `cx.resume_data()` gives a `U`: a call suspends with a typed
// payload and continues with typed resume data, through the runtime.
use tool_core::prelude::*;
use tool_core::runtime::{ResumeOptions, Outcome, RunEventKind, Runtime};
use tool_core::spec::{TransformPhase, TransformTarget};

#[derive(Debug, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct AskUser {
    /// The question to put to the user
    pub question: String,
}

#[derive(Debug, PartialEq, Deserialize, JsonSchema)]
pub struct Answer {
    /// Whether the user confirmed
    pub confirmed: bool,
}

fn show_question(ask: &AskUser) -> Value {
    json!(ask.question)
}

fn show_answer(answer: &Answer) -> Value {
    json!(if answer.confirmed { "confirmed" } else { "declined" })
}

/// Book a flight, asking the user to confirm
#[tool(suspend = AskUser, resume = Answer, transform(display(suspend = show_question, resume = show_answer)))]
pub async fn book_flight(flight: String, #[ctx] cx: ToolContext<RequestContext, AskUser, Answer>) -> Result<String, ToolError> {
    // The agent's view of the call is typed alike.
    let answer: Option<Answer> = cx.agent().resume_data()?;
    assert_eq!(answer, cx.resume_data()?);
    match answer {
        None => Err(cx.suspend(AskUser {
            question: format!("Book {flight}?"),
        })),
        Some(Answer { confirmed: true }) => Ok(format!("booked {flight}")),
        Some(Answer { confirmed: false }) => Ok(format!("kept {flight} unbooked")),
    }
}

#[derive(Deserialize, JsonSchema)]
pub struct Tenant {
    /// The tenant's id
    pub tenant: String,
}

/// The context of a tool with a request-context type and both payload types.
type SeatCx = ToolContext<Tenant, AskUser, Answer>;

/// Pick a seat for a tenant, once the user confirms (context and payloads typed, through an alias)
#[tool(context = Tenant, suspend = AskUser, resume = Answer)]
pub async fn pick_seat(seat: String, #[ctx] cx: SeatCx) -> Result<String, ToolError> {
    let tenant = &cx.request_context().tenant;
    match cx.resume_data()? {
        None => Err(cx.agent().suspend(AskUser {
            question: format!("Seat {seat} for {tenant}?"),
        })),
        Some(Answer { confirmed }) => Ok(format!("{tenant}: {seat} {confirmed}")),
    }
}

/// Wait for a go-ahead with an untyped payload, resume typed (only `resume` is declared)
#[tool(resume = Answer)]
pub async fn wait_for_go(#[ctx] cx: ToolContext<RequestContext, Value, Answer>) -> Result<bool, ToolError> {
    match cx.resume_data()? {
        None => Err(cx.suspend(json!({"waiting": true}))),
        Some(answer) => Ok(answer.confirmed),
    }
}

/// A tool with no payload types: its context stays untyped
#[tool]
pub async fn plain(#[ctx] cx: ToolContext) -> Result<(), ToolError> {
    match cx.resume_data()? {
        None => Err(cx.suspend(json!({"any": "json"}))),
        Some(_) => Ok(()),
    }
}

pub fn main() {
    tokio::runtime::Runtime::new().unwrap().block_on(async {
        let registry = Registry::from_module(module_path!()).unwrap();
        let tool = registry.get("book-flight").unwrap();
        let spec = tool.spec();
        let suspend = spec.schemas.suspend.clone().expect("suspend schema");
        assert_eq!(suspend["properties"]["question"]["description"], "The question to put to the user");
        let resume = spec.schemas.resume.clone().expect("resume schema");
        assert_eq!(resume["required"], json!(["confirmed"]));
        assert!(spec.schemas.request_context.is_none());

        assert_eq!(
            tool.transform(TransformTarget::Display, TransformPhase::Resume, &json!({"confirmed": true})),
            Some(Ok(json!("confirmed")))
        );
        assert!(spec.has_transform(TransformTarget::Display, TransformPhase::Suspend));

        // Without `suspend`/`resume` there are no payload schemas.
        assert!(registry.get("plain").unwrap().spec().schemas.suspend.is_none());
        assert!(registry.get("plain").unwrap().spec().schemas.resume.is_none());
        assert!(registry.get("wait-for-go").unwrap().spec().schemas.suspend.is_none());
        assert!(registry.get("wait-for-go").unwrap().spec().schemas.resume.is_some());

        let runtime = Runtime::new(registry);

        // The call suspends with its typed payload, as JSON on the wire (and its display view
        // through the typed suspend transform).
        let run = runtime.call("book-flight", json!({"flight": "AF12"}), CallOptions::default()).finish().await;
        let Outcome::Suspended(waiting) = run.outcome else { panic!("{:?}", run.outcome) };
        assert_eq!(waiting.call.suspend_payload, Some(json!({"question": "Book AF12?"})));
        let suspended = run.events.last().unwrap();
        let Some(RunEventKind::ToolCallSuspended { suspend_payload, .. }) = suspended.display.as_ref().map(|e| &e.kind) else {
            panic!("{suspended:?}")
        };
        assert_eq!(suspend_payload, &json!("Book AF12?"));

        // Resumed with data of its `resume` type, it reads it typed and finishes.
        let run = runtime.resume(waiting.id(), json!({"confirmed": true}), ResumeOptions::default()).await.unwrap().finish().await;
        let Outcome::Done(out) = run.outcome else { panic!("{:?}", run.outcome) };
        assert_eq!(out.value(), json!("booked AF12"));

        // Declined, the same way.
        let run = runtime.call("book-flight", json!({"flight": "LH3"}), CallOptions::default()).finish().await;
        let Outcome::Suspended(waiting) = run.outcome else { panic!("{:?}", run.outcome) };
        let run = runtime.resume(waiting.id(), json!({"confirmed": false}), ResumeOptions::default()).await.unwrap().finish().await;
        let Outcome::Done(out) = run.outcome else { panic!("{:?}", run.outcome) };
        assert_eq!(out.value(), json!("kept LH3 unbooked"));

        // A typed request context beside typed payloads.
        let options = CallOptions::with_context(json!({"tenant": "acme"}));
        let run = runtime.call("pick-seat", json!({"seat": "4A"}), options).finish().await;
        let Outcome::Suspended(waiting) = run.outcome else { panic!("{:?}", run.outcome) };
        assert_eq!(waiting.call.suspend_payload, Some(json!({"question": "Seat 4A for acme?"})));
        let run = runtime.resume(waiting.id(), json!({"confirmed": true}), ResumeOptions::default()).await.unwrap().finish().await;
        let Outcome::Done(out) = run.outcome else { panic!("{:?}", run.outcome) };
        assert_eq!(out.value(), json!("acme: 4A true"));

        // An untyped payload and typed resume data.
        let run = runtime.call("wait-for-go", json!({}), CallOptions::default()).finish().await;
        let Outcome::Suspended(waiting) = run.outcome else { panic!("{:?}", run.outcome) };
        assert_eq!(waiting.call.suspend_payload, Some(json!({"waiting": true})));
        let run = runtime.resume(waiting.id(), json!({"confirmed": true}), ResumeOptions::default()).await.unwrap().finish().await;
        let Outcome::Done(out) = run.outcome else { panic!("{:?}", run.outcome) };
        assert_eq!(out.value(), json!(true));

        // Untyped both ways: any JSON.
        let run = runtime.call("plain", json!({}), CallOptions::default()).finish().await;
        let Outcome::Suspended(waiting) = run.outcome else { panic!("{:?}", run.outcome) };
        assert_eq!(waiting.call.suspend_payload, Some(json!({"any": "json"})));
        let run = runtime.resume(waiting.id(), json!([1, 2]), ResumeOptions::default()).await.unwrap().finish().await;
        assert!(matches!(run.outcome, Outcome::Done(_)), "{:?}", run.outcome);
    });
}
