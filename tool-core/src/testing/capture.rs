//! Capturing what a call logs: every `tracing` event and span made while it runs.
//!
//! Owns [`Log`], [`SpanRecord`] and [`Captured`] (the records), and [`Capture`], a
//! `tracing-subscriber` layer whose dispatcher a test future runs under
//! ([`Capture::dispatch`]), so only what that future (and the tasks it polls itself) emits is
//! recorded, whatever global subscriber the process has. Work moved to other threads (a blocking
//! tool's body, a spawned task) logs to the process's own subscriber instead.

use std::collections::BTreeMap;
use std::sync::{Arc, Mutex};

use serde::Serialize;
use tracing::field::{Field, Visit};
use tracing::span::{Attributes, Id};
use tracing::{Event, Level, Subscriber};
use tracing_subscriber::layer::{Context, Layer, SubscriberExt};
use tracing_subscriber::registry::LookupSpan;

/// One `tracing` event.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Log {
    /// `ERROR`, `WARN`, `INFO`, `DEBUG` or `TRACE`.
    pub level: String,
    /// The module that logged it.
    pub target: String,
    /// The message.
    pub message: String,
    /// The other fields, as text (strings without their quotes).
    pub fields: BTreeMap<String, String>,
    /// The names of the spans it happened in, outermost first.
    pub spans: Vec<String>,
}

impl Log {
    /// Whether it was logged at `level`.
    pub fn is(&self, level: Level) -> bool {
        self.level == level.as_str()
    }

    /// One field, as text.
    pub fn field(&self, name: &str) -> Option<&str> {
        self.fields.get(name).map(String::as_str)
    }
}

/// One span that was opened.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct SpanRecord {
    /// Its name.
    pub name: String,
    /// Its fields, as text.
    pub fields: BTreeMap<String, String>,
    /// The names of its parents, outermost first.
    pub parents: Vec<String>,
}

impl SpanRecord {
    /// One field, as text.
    pub fn field(&self, name: &str) -> Option<&str> {
        self.fields.get(name).map(String::as_str)
    }
}

/// What was captured.
#[derive(Debug, Clone, Default, PartialEq, Serialize)]
pub struct Captured {
    /// Events, in order.
    pub logs: Vec<Log>,
    /// Spans, in the order they were opened.
    pub spans: Vec<SpanRecord>,
}

#[derive(Default)]
struct Fields(BTreeMap<String, String>);

impl Visit for Fields {
    fn record_debug(&mut self, field: &Field, value: &dyn std::fmt::Debug) {
        self.0.insert(field.name().to_owned(), format!("{value:?}"));
    }
    fn record_str(&mut self, field: &Field, value: &str) {
        self.0.insert(field.name().to_owned(), value.to_owned());
    }
}

/// The layer recording into a shared [`Captured`].
#[derive(Clone, Default)]
pub struct Capture(Arc<Mutex<Captured>>);

impl Capture {
    /// A dispatcher that records into this capture (and nowhere else).
    pub fn dispatch(&self) -> tracing::Dispatch {
        tracing::Dispatch::new(tracing_subscriber::registry().with(self.clone()))
    }

    /// What was captured so far.
    pub fn captured(&self) -> Captured {
        self.0.lock().unwrap_or_else(|p| p.into_inner()).clone()
    }
}

fn scope<S: Subscriber + for<'a> LookupSpan<'a>>(span: Option<tracing_subscriber::registry::SpanRef<'_, S>>) -> Vec<String> {
    span.map(|s| s.scope().from_root().map(|s| s.name().to_owned()).collect())
        .unwrap_or_default()
}

impl<S: Subscriber + for<'a> LookupSpan<'a>> Layer<S> for Capture {
    fn on_new_span(&self, attrs: &Attributes<'_>, id: &Id, ctx: Context<'_, S>) {
        let mut fields = Fields::default();
        attrs.record(&mut fields);
        let parents = scope(ctx.span(id).and_then(|s| s.parent()));
        self.0.lock().unwrap_or_else(|p| p.into_inner()).spans.push(SpanRecord {
            name: attrs.metadata().name().to_owned(),
            fields: fields.0,
            parents,
        });
    }

    fn on_event(&self, event: &Event<'_>, ctx: Context<'_, S>) {
        let mut fields = Fields::default();
        event.record(&mut fields);
        let message = fields.0.remove("message").unwrap_or_default();
        let meta = event.metadata();
        self.0.lock().unwrap_or_else(|p| p.into_inner()).logs.push(Log {
            level: meta.level().as_str().to_owned(),
            target: meta.target().to_owned(),
            message,
            fields: fields.0,
            spans: scope(ctx.event_span(event)),
        });
    }
}
