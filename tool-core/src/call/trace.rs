//! The spans of a call, named the way the OpenTelemetry GenAI semantic conventions name tool
//! execution.
//!
//! Owns the call's span (`call_span`: `execute_tool {gen_ai.tool.name}`, with
//! `gen_ai.operation.name`, `gen_ai.tool.name`, `gen_ai.tool.call.id`, `gen_ai.tool.type` and
//! `gen_ai.tool.description`), the spans of its phases (validation, approval wait, execution,
//! output validation), how a failure is recorded (`error.type`, an error status) and the opt-in
//! recording of arguments and results ([`set_record_content`]). Plain `tracing` spans: whoever
//! installs a subscriber decides where they go (the `otel` feature exports them over OTLP).
//! Recorded content is what the caller hands in, already shown through the transcript view; this
//! module redacts secret-named keys on top, so a value under such a key is never recorded.

use std::sync::atomic::{AtomicU8, Ordering};

#[cfg(feature = "runtime")]
use serde_json::Value;
use tracing::Span;
use tracing::field::Empty;

use crate::error::ToolError;
use crate::spec::ToolSpec;

/// The name of a call's span in `tracing` (its OpenTelemetry name is `execute_tool {tool}`).
pub const CALL_SPAN: &str = "execute_tool";

/// The environment variable that switches on recording arguments and results (`true` or `1`),
/// the one OpenTelemetry's GenAI instrumentations read.
pub const RECORD_CONTENT_ENV: &str = "OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT";

/// 0: not decided yet (read the environment), 1: off, 2: on.
static RECORD_CONTENT: AtomicU8 = AtomicU8::new(0);

/// Switches recording of arguments (`gen_ai.tool.call.arguments`) and results
/// (`gen_ai.tool.call.result`) on call spans on or off, overriding
/// [`RECORD_CONTENT_ENV`]. Off by default. What is recorded is the transcript view of the
/// payload (its transforms and the runtime's transform policy applied) with every
/// secret-named key redacted; the request context is never recorded.
pub fn set_record_content(on: bool) {
    RECORD_CONTENT.store(if on { 2 } else { 1 }, Ordering::Relaxed);
}

/// Whether arguments and results are recorded on call spans.
pub fn records_content() -> bool {
    match RECORD_CONTENT.load(Ordering::Relaxed) {
        0 => {
            let on = std::env::var(RECORD_CONTENT_ENV).is_ok_and(|v| matches!(v.trim().to_ascii_lowercase().as_str(), "true" | "1"));
            // A concurrent `set_record_content` wins over the environment.
            let _ = RECORD_CONTENT.compare_exchange(0, if on { 2 } else { 1 }, Ordering::Relaxed, Ordering::Relaxed);
            RECORD_CONTENT.load(Ordering::Relaxed) == 2
        }
        v => v == 2,
    }
}

/// The span of one call of tool `name` with id `call_id` (a child of the current span). The
/// tool's description and type are added when `spec` is known (an unknown tool has none); a
/// caller that must look the tool up first passes `None` and calls `describe` when the span
/// is enabled.
pub(crate) fn call_span(name: &str, call_id: &str, spec: Option<&ToolSpec>) -> Span {
    let span = tracing::info_span!(
        CALL_SPAN,
        otel.name = %format!("{CALL_SPAN} {name}"),
        gen_ai.operation.name = CALL_SPAN,
        gen_ai.tool.name = name,
        gen_ai.tool.call.id = call_id,
        gen_ai.tool.type = Empty,
        gen_ai.tool.description = Empty,
        gen_ai.tool.call.arguments = Empty,
        gen_ai.tool.call.result = Empty,
        error.type = Empty,
        otel.status_code = Empty,
    );
    if let Some(spec) = spec {
        describe(&span, spec);
    }
    span
}

/// Adds the tool's type and description to its call span.
pub(crate) fn describe(span: &Span, spec: &ToolSpec) {
    if span.is_disabled() {
        return;
    }
    // Every call here is a function the model asked for and the application runs (the
    // convention's `function`, what function-calling instrumentations record); `extension`
    // (agent-side calls of external APIs) would fit provider tools, which the registry does not
    // tell apart yet.
    span.record("gen_ai.tool.type", "function");
    if !spec.description.is_empty() {
        span.record("gen_ai.tool.description", spec.description.as_str());
    }
}

/// The span of a call continued later (approved, declined or resumed): the current span when
/// the continuation happens within the call's own span (an MCP request that asked its client
/// in-band), else a new call span.
#[cfg(feature = "runtime")]
pub(crate) fn continued_span(name: &str, call_id: &str, spec: Option<&ToolSpec>) -> Span {
    let current = Span::current();
    match current.metadata().map(|m| m.name()) {
        Some(CALL_SPAN | "tool.approval") => current,
        _ => call_span(name, call_id, spec),
    }
}

/// Validating a call's arguments and request context.
pub(crate) fn validation_span() -> Span {
    tracing::info_span!("tool.validate")
}

/// Waiting for a person's approval (recording the waiting call, or asking the client in-band).
#[cfg(feature = "runtime")]
pub(crate) fn approval_span() -> Span {
    tracing::info_span!("tool.approval")
}

/// Running the tool's body.
pub(crate) fn execution_span() -> Span {
    tracing::info_span!("tool.execute")
}

/// Validating what the body returned (an output, or a suspension's payload).
pub(crate) fn output_span() -> Span {
    tracing::info_span!("tool.validate_output")
}

/// Marks `span` as failed with `error`: `error.type` is the error's kind and the status is an
/// error. The message is not recorded (a tool's message may quote what it was sent).
pub(crate) fn record_error(span: &Span, error: &ToolError) {
    span.record("error.type", error.kind().as_str());
    span.record("otel.status_code", "ERROR");
}

/// Records a call's arguments, as the transcript view shows them, when recording is on.
#[cfg(feature = "runtime")]
pub(crate) fn record_arguments(span: &Span, shown: Option<&Value>) {
    record(span, "gen_ai.tool.call.arguments", shown);
}

/// Records a call's result, as the transcript view shows it, when recording is on.
#[cfg(feature = "runtime")]
pub(crate) fn record_result(span: &Span, shown: Option<&Value>) {
    record(span, "gen_ai.tool.call.result", shown);
}

/// Whether `span` records arguments and results (it is enabled, and recording is on).
#[cfg(feature = "runtime")]
pub(crate) fn records(span: &Span) -> bool {
    !span.is_disabled() && records_content()
}

#[cfg(feature = "runtime")]
fn record(span: &Span, field: &str, shown: Option<&Value>) {
    if !records(span) {
        return;
    }
    if let Some(value) = shown {
        span.record(field, super::redact(value).to_string().as_str());
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn content_recording_follows_the_setter() {
        set_record_content(true);
        assert!(records_content());
        set_record_content(false);
        assert!(!records_content());
    }
}
