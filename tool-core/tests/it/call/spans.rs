//! The spans of a call, recorded in process by a real `tracing` subscriber: the GenAI call span
//! (`execute_tool {tool}`) with its phases as children, for a plain `Registry::call` and for a
//! runtime call that waits for approval and is approved later; a failure's type and status;
//! and recorded content taken from the transcript view, never the raw arguments.
//! (`otel_export.rs` exports the same spans from real `toolsmith` processes.)

use std::collections::BTreeMap;
use std::sync::{Arc, Mutex};

use serde_json::{Value, json};
use tool_core::call::trace::set_record_content;
use tool_core::prelude::*;
use tool_core::runtime::{Outcome, ResumeOptions, Runtime, TransformPolicy};
use tool_core::spec::{ToolSpec, TransformPhase, TransformTarget};
use tracing::Subscriber;
use tracing::field::{Field, Visit};
use tracing::span::{Attributes, Id, Record};
use tracing_subscriber::layer::{Context, Layer, SubscriberExt};
use tracing_subscriber::registry::LookupSpan;

/// A recorded span: its name, its parent's name and its fields (recorded later ones too).
#[derive(Debug, Clone, Default)]
struct Recorded {
    id: u64,
    name: String,
    parent: Option<u64>,
    fields: BTreeMap<String, String>,
}

struct Fields<'a>(&'a mut BTreeMap<String, String>);

impl Visit for Fields<'_> {
    fn record_debug(&mut self, field: &Field, value: &dyn std::fmt::Debug) {
        self.0
            .insert(field.name().to_owned(), format!("{value:?}").trim_matches('"').to_owned());
    }
    fn record_str(&mut self, field: &Field, value: &str) {
        self.0.insert(field.name().to_owned(), value.to_owned());
    }
}

#[derive(Clone, Default)]
struct Recorder(Arc<Mutex<Vec<Recorded>>>);

impl<S: Subscriber + for<'a> LookupSpan<'a>> Layer<S> for Recorder {
    fn on_new_span(&self, attrs: &Attributes<'_>, id: &Id, ctx: Context<'_, S>) {
        let mut fields = BTreeMap::new();
        attrs.record(&mut Fields(&mut fields));
        let parent = ctx.span_scope(id).and_then(|mut scope| scope.nth(1)).map(|p| p.id().into_u64());
        self.0.lock().unwrap().push(Recorded {
            id: id.into_u64(),
            name: attrs.metadata().name().to_owned(),
            parent,
            fields,
        });
    }

    fn on_record(&self, id: &Id, values: &Record<'_>, _ctx: Context<'_, S>) {
        let mut spans = self.0.lock().unwrap();
        if let Some(span) = spans.iter_mut().rev().find(|s| s.id == id.into_u64()) {
            values.record(&mut Fields(&mut span.fields));
        }
    }
}

impl Recorder {
    fn spans(&self) -> Vec<Recorded> {
        self.0.lock().unwrap().clone()
    }
}

/// The spans named `name`.
fn named<'a>(spans: &'a [Recorded], name: &str) -> Vec<&'a Recorded> {
    spans.iter().filter(|s| s.name == name).collect()
}

fn one<'a>(spans: &'a [Recorded], name: &str) -> &'a Recorded {
    let found = named(spans, name);
    assert_eq!(found.len(), 1, "expected one `{name}`: {spans:#?}");
    found[0]
}

fn assert_child(child: &Recorded, parent: &Recorded) {
    assert_eq!(
        child.parent,
        Some(parent.id),
        "`{}` is not a child of `{}`",
        child.name,
        parent.name
    );
}

/// Counts rows in a child span
#[tool(id = "span-rows")]
async fn rows(
    /// The table
    table: String,
    #[ctx] cx: ToolContext,
) -> Result<u32, ToolError> {
    let work = async { table.len() as u32 };
    Ok(cx.observe().span("count-rows", work, &[]).await)
}

/// Deletes a table, with approval
#[tool(id = "span-drop", require_approval)]
async fn drop_table(
    /// The table
    table: String,
) -> Result<String, ToolError> {
    Ok(format!("dropped {table}"))
}

fn subscriber(recorder: &Recorder) -> impl Subscriber + Send + Sync + use<> {
    tracing_subscriber::registry().with(recorder.clone())
}

#[tokio::test]
async fn a_registry_call_is_an_execute_tool_span_with_its_phases() {
    let recorder = Recorder::default();
    let _guard = tracing::subscriber::set_default(subscriber(&recorder));
    let registry = Registry::from_iter([rows::tool()]);
    let out = registry
        .call("span-rows", json!({"table": "orders"}), CallOptions::default().id("call-7"))
        .await
        .unwrap();
    assert_eq!(out.value(), json!(6));

    let spans = recorder.spans();
    let call = one(&spans, "execute_tool");
    assert_eq!(call.parent, None);
    let field = |k: &str| call.fields.get(k).map(String::as_str);
    assert_eq!(field("otel.name"), Some("execute_tool span-rows"));
    assert_eq!(field("gen_ai.operation.name"), Some("execute_tool"));
    assert_eq!(field("gen_ai.tool.name"), Some("span-rows"));
    assert_eq!(field("gen_ai.tool.call.id"), Some("call-7"));
    assert_eq!(field("gen_ai.tool.type"), Some("function"));
    assert_eq!(field("gen_ai.tool.description"), Some("Counts rows in a child span"));
    assert_eq!(field("error.type"), None);
    for phase in ["tool.validate", "tool.execute", "tool.validate_output"] {
        assert_child(one(&spans, phase), call);
    }
    assert_child(one(&spans, "tool.span"), one(&spans, "tool.execute"));

    // A call that does not validate: its type and an error status, and it never ran.
    let err = registry
        .call("span-rows", json!({"table": 5}), CallOptions::default())
        .await
        .unwrap_err();
    let spans = recorder.spans();
    let failed = named(&spans, "execute_tool")[1];
    assert_eq!(failed.fields.get("error.type").map(String::as_str), Some(err.kind().as_str()));
    assert_eq!(failed.fields.get("otel.status_code").map(String::as_str), Some("ERROR"));
    assert_eq!(named(&spans, "tool.execute").len(), 1, "a call that did not validate ran");

    // An unknown tool still gets its span (without a description), failed.
    registry.call("span-none", json!({}), CallOptions::default()).await.unwrap_err();
    let spans = recorder.spans();
    let unknown = named(&spans, "execute_tool")[2];
    assert_eq!(unknown.fields.get("error.type").map(String::as_str), Some("unknown_tool"));
    assert!(!unknown.fields.contains_key("gen_ai.tool.description"));
}

#[tokio::test]
async fn an_approved_call_has_an_approval_span_then_a_span_of_its_own() {
    let recorder = Recorder::default();
    let _guard = tracing::subscriber::set_default(subscriber(&recorder));
    let runtime = Runtime::new(Registry::from_iter([drop_table::tool()]));
    let run = runtime.call("span-drop", json!({"table": "t"}), CallOptions::default().id("call-9"));
    let outcome = run.finish().await.outcome;
    assert!(matches!(outcome, Outcome::AwaitingApproval(_)), "{outcome:?}");
    let spans = recorder.spans();
    let first = one(&spans, "execute_tool");
    assert_child(one(&spans, "tool.approval"), first);
    assert!(named(&spans, "tool.execute").is_empty(), "a call waiting for approval ran");

    let approved = runtime
        .approve("call-9", ResumeOptions::default())
        .await
        .unwrap()
        .finish()
        .await
        .outcome;
    assert!(matches!(approved, Outcome::Done(_)), "{approved:?}");
    let spans = recorder.spans();
    let calls = named(&spans, "execute_tool");
    assert_eq!(calls.len(), 2, "{spans:#?}");
    let second = calls[1];
    assert_eq!(second.fields.get("gen_ai.tool.call.id").map(String::as_str), Some("call-9"));
    assert_child(one(&spans, "tool.execute"), second);
}

/// Shows every transcript input as a fixed value (and leaves the display view alone).
struct TranscriptStandIn;

impl TransformPolicy for TranscriptStandIn {
    fn configures(&self, _: &ToolSpec, target: TransformTarget, phase: TransformPhase) -> bool {
        target == TransformTarget::Transcript && phase == TransformPhase::Input
    }
    fn transform(&self, _: &ToolSpec, _: TransformTarget, _: TransformPhase, _: &Value) -> Option<Result<Value, tool_core::ToolError>> {
        Some(Ok(json!({"shown": "stand-in", "password": "policy-secret"})))
    }
}

#[tokio::test]
async fn recorded_arguments_are_the_redacted_transcript_view() {
    let recorder = Recorder::default();
    let _guard = tracing::subscriber::set_default(subscriber(&recorder));
    // The only test of this binary that records content (the switch is process-wide).
    set_record_content(true);
    let runtime = Runtime::builder(Registry::from_iter([rows::tool()]))
        .transform_policy(TranscriptStandIn)
        .build();
    let outcome = runtime
        .call("span-rows", json!({"table": "raw-table-name"}), CallOptions::default())
        .finish()
        .await
        .outcome;
    assert!(matches!(outcome, Outcome::Done(_)), "{outcome:?}");
    let spans = recorder.spans();
    let call = one(&spans, "execute_tool");
    let args: Value = serde_json::from_str(&call.fields["gen_ai.tool.call.arguments"]).unwrap();
    assert_eq!(args, json!({"shown": "stand-in", "password": "[REDACTED]"}));
    assert_eq!(call.fields.get("gen_ai.tool.call.result").map(String::as_str), Some("14"));
    assert!(!format!("{spans:?}").contains("raw-table-name"), "the raw arguments were recorded");
}
