//! OpenTelemetry export of the call spans (feature `otel`).
//!
//! Owns [`layer_from_env`]: a `tracing-subscriber` layer that exports spans over OTLP/HTTP
//! (protobuf) when the standard variables ask for it (`OTEL_EXPORTER_OTLP_ENDPOINT` or
//! `OTEL_EXPORTER_OTLP_TRACES_ENDPOINT`; `OTEL_SERVICE_NAME`, `OTEL_RESOURCE_ATTRIBUTES`,
//! `OTEL_EXPORTER_OTLP_HEADERS`, `OTEL_EXPORTER_OTLP_TIMEOUT`, `OTEL_BSP_*`, `OTEL_SDK_DISABLED`
//! and `OTEL_TRACES_EXPORTER=none` are honoured), its [`OtelGuard`] (dropping it flushes what
//! is left), and [`adopt_trace_context`]: a W3C `traceparent`/`tracestate` pair (what an MCP
//! request carries in `_meta`, SEP-414) made the parent of a span. The call path itself only
//! knows `tracing`: this module is the one place that names OpenTelemetry.
//!
//! The layer exports spans only (not log events, which may carry what a tool logged), and not
//! the spans of the protocol and HTTP libraries underneath (`rmcp` puts whole messages in its
//! own): the call spans of `call::trace` and a tool's own spans.

use std::collections::HashMap;

use opentelemetry::propagation::TextMapPropagator;
use opentelemetry::trace::{TraceContextExt, TracerProvider as _};
use opentelemetry_otlp::{Protocol, WithExportConfig};
use opentelemetry_sdk::Resource;
use opentelemetry_sdk::propagation::TraceContextPropagator;
use opentelemetry_sdk::trace::SdkTracerProvider;
use tracing_opentelemetry::OpenTelemetrySpanExt;
use tracing_subscriber::Layer;
use tracing_subscriber::filter::{FilterFn, Filtered};
use tracing_subscriber::registry::LookupSpan;

/// The service name when neither `OTEL_SERVICE_NAME` nor `OTEL_RESOURCE_ATTRIBUTES` names one.
pub const DEFAULT_SERVICE_NAME: &str = "toolsmith";

/// Targets whose spans are never exported: the libraries under the MCP server and the exporter.
const QUIET_TARGETS: [&str; 12] = [
    "rmcp",
    "hyper",
    "hyper_util",
    "h2",
    "tower",
    "axum",
    "reqwest",
    "opentelemetry",
    "opentelemetry_sdk",
    "opentelemetry_otlp",
    "opentelemetry_http",
    "tokio",
];

/// Whether `target` is `crate_name` or one of its modules.
fn within(target: &str, crate_name: &str) -> bool {
    target
        .strip_prefix(crate_name)
        .is_some_and(|rest| rest.is_empty() || rest.starts_with("::"))
}

/// Flushes and stops the exporter when dropped: keep it for as long as spans are made (a
/// command that exits right after its call still exports its span).
#[derive(Debug)]
pub struct OtelGuard {
    provider: SdkTracerProvider,
}

impl Drop for OtelGuard {
    fn drop(&mut self) {
        if let Err(e) = self.provider.shutdown() {
            eprintln!("warning: OpenTelemetry spans could not all be exported: {e}");
        }
    }
}

/// The export layer, filtered to what may leave the process.
pub type OtelLayer<S> = Filtered<tracing_opentelemetry::OpenTelemetryLayer<S, opentelemetry_sdk::trace::Tracer>, FilterFn, S>;

fn env(name: &str) -> Option<String> {
    std::env::var(name).ok().filter(|v| !v.trim().is_empty())
}

/// Whether the environment asks for trace export: an OTLP endpoint is set, and neither
/// `OTEL_SDK_DISABLED=true` nor `OTEL_TRACES_EXPORTER=none` turns it off.
pub fn export_requested() -> bool {
    let endpoint = env("OTEL_EXPORTER_OTLP_TRACES_ENDPOINT").or_else(|| env("OTEL_EXPORTER_OTLP_ENDPOINT"));
    let disabled = env("OTEL_SDK_DISABLED").is_some_and(|v| v.trim().eq_ignore_ascii_case("true"));
    let none = env("OTEL_TRACES_EXPORTER").is_some_and(|v| v.split(',').any(|e| e.trim().eq_ignore_ascii_case("none")));
    endpoint.is_some() && !disabled && !none
}

/// Why spans cannot be exported as the environment asks.
#[derive(Debug, thiserror::Error)]
pub enum OtelError {
    /// A protocol other than http/protobuf.
    #[error("OTLP protocol `{0}` is not supported (this build exports http/protobuf)")]
    Protocol(String),
    /// An https endpoint.
    #[error("OTLP over https is not supported by this build (use an http:// endpoint, e.g. a local collector)")]
    Https,
    /// The exporter could not be built.
    #[error("the OTLP exporter could not be set up: {0}")]
    Exporter(#[source] opentelemetry_otlp::ExporterBuildError),
}

/// The export layer and its guard when the environment asks for export (see the module
/// documentation), `Ok(None)` when it does not, and an error saying what is wrong with the
/// settings otherwise (an unsupported protocol, an endpoint that is not a URL).
pub fn layer_from_env<S>() -> Result<Option<(OtelLayer<S>, OtelGuard)>, OtelError>
where
    S: tracing::Subscriber + for<'a> LookupSpan<'a>,
{
    if !export_requested() {
        return Ok(None);
    }
    let protocol = env("OTEL_EXPORTER_OTLP_TRACES_PROTOCOL").or_else(|| env("OTEL_EXPORTER_OTLP_PROTOCOL"));
    match protocol.as_deref().map(str::trim) {
        None | Some("http/protobuf") => {}
        Some(other) => {
            return Err(OtelError::Protocol(other.to_owned()));
        }
    }
    let endpoint = env("OTEL_EXPORTER_OTLP_TRACES_ENDPOINT").or_else(|| env("OTEL_EXPORTER_OTLP_ENDPOINT"));
    if endpoint.is_some_and(|e| e.trim().to_ascii_lowercase().starts_with("https:")) {
        // The exporter's HTTP client is built without TLS: say so rather than fail every export.
        return Err(OtelError::Https);
    }
    ensure_crypto_provider();
    let exporter = opentelemetry_otlp::SpanExporter::builder()
        .with_http()
        .with_protocol(Protocol::HttpBinary)
        .build()
        .map_err(OtelError::Exporter)?;
    let named = env("OTEL_SERVICE_NAME").is_some() || env("OTEL_RESOURCE_ATTRIBUTES").is_some_and(|a| a.contains("service.name="));
    let mut resource = Resource::builder();
    if !named {
        resource = resource.with_service_name(DEFAULT_SERVICE_NAME);
    }
    let provider = SdkTracerProvider::builder()
        .with_batch_exporter(exporter)
        .with_resource(resource.build())
        .build();
    let tracer = provider.tracer("tool-core");
    let filter = FilterFn::new(exported as fn(&tracing::Metadata<'_>) -> bool);
    let layer = tracing_opentelemetry::layer().with_tracer(tracer).with_filter(filter);
    Ok(Some((layer, OtelGuard { provider })))
}

/// What the export layer sees: spans at info or above, not from the libraries underneath.
fn exported(meta: &tracing::Metadata<'_>) -> bool {
    meta.is_span() && *meta.level() <= tracing::Level::INFO && !QUIET_TARGETS.iter().any(|t| within(meta.target(), t))
}

/// Makes the trace context in `traceparent` (and `tracestate`) the parent of `span`, which must
/// not have started yet (no child, never entered). A missing or malformed `traceparent` leaves
/// the span where it is; returns whether the parent was set.
pub fn adopt_trace_context(span: &tracing::Span, traceparent: Option<&str>, tracestate: Option<&str>) -> bool {
    let Some(traceparent) = traceparent else { return false };
    let mut carrier = HashMap::from([("traceparent".to_owned(), traceparent.to_owned())]);
    if let Some(state) = tracestate {
        carrier.insert("tracestate".to_owned(), state.to_owned());
    }
    let cx = TraceContextPropagator::new().extract(&carrier);
    if !cx.span().span_context().is_valid() {
        return false;
    }
    span.set_parent(cx).is_ok()
}

/// The exporter's HTTP client (reqwest 0.13) is built with rustls whenever another crate of the
/// binary turned reqwest's rustls feature on (tool-providers does, bringing no provider of its
/// own): building it then needs a process-wide crypto provider, and panics without one. Installs
/// ring's (already in the build) unless the application installed its own.
fn ensure_crypto_provider() {
    if rustls::crypto::CryptoProvider::get_default().is_none() {
        // Lost a race with another installer: theirs stays, which is as good.
        let _ = rustls::crypto::ring::default_provider().install_default();
    }
}
