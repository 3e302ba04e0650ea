//! `cx.observe().span(...)`: the work runs inside a child span carrying the call's attributes
//! (tool, call id) and the ones given, recorded by a real `tracing` subscriber; what the work
//! logs is recorded inside that span.

use std::collections::BTreeMap;
use std::sync::{Arc, Mutex};

use serde_json::json;
use tool_core::prelude::*;
use tracing::field::{Field, Visit};
use tracing::span::{Attributes, Id};
use tracing::{Event, Subscriber};
use tracing_subscriber::layer::{Context, Layer, SubscriberExt};
use tracing_subscriber::registry::LookupSpan;

/// A recorded span: its name and fields.
#[derive(Debug, Clone, Default)]
struct Recorded {
    name: String,
    fields: BTreeMap<String, String>,
}

#[derive(Default)]
struct Fields(BTreeMap<String, String>);

impl Visit for Fields {
    fn record_debug(&mut self, field: &Field, value: &dyn std::fmt::Debug) {
        self.0
            .insert(field.name().to_owned(), format!("{value:?}").trim_matches('"').to_owned());
    }
    fn record_str(&mut self, field: &Field, value: &str) {
        self.0.insert(field.name().to_owned(), value.to_owned());
    }
}

/// An event's message and the name of the span it happened in.
type Logged = (String, Option<String>);

/// Records every new span, and for every event the span it happened in.
#[derive(Clone, Default)]
struct Recorder {
    spans: Arc<Mutex<Vec<Recorded>>>,
    events: Arc<Mutex<Vec<Logged>>>,
}

impl<S: Subscriber + for<'a> LookupSpan<'a>> Layer<S> for Recorder {
    fn on_new_span(&self, attrs: &Attributes<'_>, _id: &Id, _ctx: Context<'_, S>) {
        let mut fields = Fields::default();
        attrs.record(&mut fields);
        self.spans.lock().unwrap().push(Recorded {
            name: attrs.metadata().name().to_owned(),
            fields: fields.0,
        });
    }

    fn on_event(&self, event: &Event<'_>, ctx: Context<'_, S>) {
        let mut fields = Fields::default();
        event.record(&mut fields);
        let message = fields.0.remove("message").unwrap_or_default();
        let inside = ctx.event_span(event).map(|s| s.name().to_owned());
        self.events.lock().unwrap().push((message, inside));
    }
}

/// Counts rows in a child span
#[tool(id = "observed")]
async fn observed(#[ctx] cx: ToolContext) -> Result<u32, ToolError> {
    let work = async {
        tracing::info!("counting rows");
        3
    };
    Ok(cx.observe().span("count-rows", work, &[("table", json!("orders"))]).await)
}

#[tokio::test]
async fn a_child_span_carries_the_calls_attributes_and_holds_what_the_work_logs() {
    let recorder = Recorder::default();
    let subscriber = tracing_subscriber::registry().with(recorder.clone());
    let _guard = tracing::subscriber::set_default(subscriber);
    let registry = Registry::from_iter([observed::tool()]);
    let out = registry
        .call("observed", json!({}), CallOptions::default().id("call-42"))
        .await
        .unwrap();
    assert_eq!(out.value(), json!(3));

    let spans = recorder.spans.lock().unwrap().clone();
    let span = spans
        .iter()
        .find(|s| s.fields.get("otel.name").map(String::as_str) == Some("count-rows"))
        .unwrap_or_else(|| panic!("the child span is recorded: {spans:?}"));
    assert_eq!(span.name, "tool.span");
    assert_eq!(span.fields.get("tool").map(String::as_str), Some("observed"));
    assert_eq!(span.fields.get("tool_call_id").map(String::as_str), Some("call-42"));
    let attributes: serde_json::Value = serde_json::from_str(&span.fields["attributes"]).unwrap();
    assert_eq!(attributes, json!({"table": "orders"}));

    let events = recorder.events.lock().unwrap().clone();
    assert!(
        events.contains(&("counting rows".to_owned(), Some("tool.span".to_owned()))),
        "the work's log is inside the span: {events:?}"
    );
}
