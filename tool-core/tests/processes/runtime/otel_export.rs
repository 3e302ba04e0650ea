//! OpenTelemetry export, end to end: a real `toolsmith call` and a real `toolsmith serve --http`
//! (this test binary as the command line, `support/child_cli.rs`) export their spans over
//! OTLP/HTTP to a receiver this test starts (axum, decoding `ExportTraceServiceRequest` with
//! `opentelemetry-proto`). The tests read what arrived: the GenAI names and attributes of the
//! call span, its phases as children, the parent an MCP request's `traceparent` gives, the
//! error status of a failing call, that a planted secret never leaves the process (recording
//! on or off), and that nothing is exported when the variables do not ask for it.

use crate::support::child_cli;

use std::io::{BufRead, BufReader, Read, Write};
use std::net::SocketAddr;
use std::process::Command;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use opentelemetry_proto::tonic::collector::trace::v1::{ExportTraceServiceRequest, ExportTraceServiceResponse};
use opentelemetry_proto::tonic::common::v1::KeyValue;
use opentelemetry_proto::tonic::common::v1::any_value::Value as AnyValue;
use opentelemetry_proto::tonic::trace::v1::span::SpanKind;
use opentelemetry_proto::tonic::trace::v1::status::StatusCode;
use prost::Message;
use serde_json::{Value, json};
use tool_core::prelude::*;

/// Planted in arguments (under a secret-named key) and in the request context: never exported.
const CANARY: &str = "canary-7c1e0b9d-do-not-export";
/// A plain argument: exported when recording is on.
const MARKER: &str = "visible-marker-42";

/// Echoes its text (and its key, which the result's redaction hides), inside a span of its own
#[tool(id = "otel-echo")]
async fn echo(
    /// What to echo
    text: String,
    /// A key the tool is given
    api_key: String,
    #[ctx] cx: ToolContext,
) -> Result<Value, ToolError> {
    let work = async { json!({"echo": text, "api_key": api_key}) };
    Ok(cx.observe().span("echo-work", work, &[("step", json!("echo"))]).await)
}

/// Always fails
#[tool(id = "otel-fail")]
async fn fail(
    /// Ignored
    text: String,
) -> Result<String, ToolError> {
    Err(ToolError::new(format!("it failed on purpose ({} chars)", text.len())))
}

/// Pays, once approved
#[tool(id = "otel-pay", require_approval)]
async fn pay(
    /// How much
    amount: u32,
) -> String {
    format!("paid {amount}")
}

/// One span as the receiver got it.
#[derive(Debug, Clone)]
struct Got {
    name: String,
    trace_id: Vec<u8>,
    span_id: Vec<u8>,
    parent: Vec<u8>,
    kind: i32,
    status: i32,
    attributes: Vec<KeyValue>,
    service: Option<String>,
}

impl Got {
    fn attr(&self, key: &str) -> Option<String> {
        string_of(&self.attributes, key)
    }
}

fn string_of(attributes: &[KeyValue], key: &str) -> Option<String> {
    attributes
        .iter()
        .find(|kv| kv.key == key)
        .and_then(|kv| match kv.value.as_ref()?.value.as_ref()? {
            AnyValue::StringValue(s) => Some(s.clone()),
            other => Some(format!("{other:?}")),
        })
}

/// What the receiver got: every request's raw bytes and the spans in them.
#[derive(Default)]
struct Received {
    bodies: Vec<Vec<u8>>,
    spans: Vec<Got>,
}

/// An OTLP/HTTP receiver on a port of its own (`/v1/traces`, protobuf), on a thread of its own.
struct Receiver {
    addr: SocketAddr,
    got: Arc<Mutex<Received>>,
}

impl Receiver {
    fn start() -> Receiver {
        let got = Arc::new(Mutex::new(Received::default()));
        let (tx, rx) = std::sync::mpsc::channel();
        let shared = got.clone();
        std::thread::spawn(move || {
            let rt = tokio::runtime::Builder::new_current_thread().enable_all().build().unwrap();
            rt.block_on(async move {
                let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
                tx.send(listener.local_addr().unwrap()).unwrap();
                let app = axum::Router::new()
                    .route("/v1/traces", axum::routing::post(receive))
                    .with_state(shared);
                axum::serve(listener, app).await.unwrap();
            });
        });
        Receiver {
            addr: rx.recv().expect("the receiver starts"),
            got,
        }
    }

    fn endpoint(&self) -> String {
        format!("http://{}", self.addr)
    }

    fn spans(&self) -> Vec<Got> {
        self.got.lock().unwrap().spans.clone()
    }

    fn requests(&self) -> usize {
        self.got.lock().unwrap().bodies.len()
    }

    /// Whether `needle` occurs anywhere in what was received (the raw protobuf bytes).
    fn saw(&self, needle: &str) -> bool {
        let got = self.got.lock().unwrap();
        got.bodies.iter().any(|b| b.windows(needle.len()).any(|w| w == needle.as_bytes()))
    }

    /// Waits until a span named `name` arrived (a server exports on its batch schedule).
    fn wait_for(&self, name: &str) -> Vec<Got> {
        self.wait_until(&format!("a span `{name}`"), |spans| spans.iter().any(|s| s.name == name))
    }

    /// Waits until the spans that arrived satisfy `done` (described by `what`): a server
    /// exports in batches, and the spans of one call may come in more than one.
    fn wait_until(&self, what: &str, done: impl Fn(&[Got]) -> bool) -> Vec<Got> {
        let started = Instant::now();
        loop {
            let spans = self.spans();
            if done(&spans) {
                return spans;
            }
            assert!(
                started.elapsed() < Duration::from_secs(30),
                "{what} did not arrive within 30 s; got {:?}",
                spans.iter().map(|s| &s.name).collect::<Vec<_>>()
            );
            std::thread::sleep(Duration::from_millis(20));
        }
    }
}

/// Whether `spans` hold the call span `call` and, in its trace, each of `phases`.
fn has_call_with(spans: &[Got], call: &str, trace: Option<&str>, phases: &[&str]) -> bool {
    let in_trace = |s: &&Got| trace.is_none_or(|t| hex(&s.trace_id) == t);
    let Some(found) = spans.iter().filter(in_trace).find(|s| s.name == call) else {
        return false;
    };
    phases
        .iter()
        .all(|phase| spans.iter().any(|s| s.name == *phase && s.trace_id == found.trace_id))
}

async fn receive(axum::extract::State(got): axum::extract::State<Arc<Mutex<Received>>>, body: axum::body::Bytes) -> Vec<u8> {
    let request = ExportTraceServiceRequest::decode(body.as_ref()).expect("an ExportTraceServiceRequest");
    let mut got = got.lock().unwrap();
    got.bodies.push(body.to_vec());
    for resource_spans in request.resource_spans {
        let service = resource_spans
            .resource
            .as_ref()
            .and_then(|r| string_of(&r.attributes, "service.name"));
        for scope in resource_spans.scope_spans {
            for span in scope.spans {
                got.spans.push(Got {
                    name: span.name,
                    trace_id: span.trace_id,
                    span_id: span.span_id,
                    parent: span.parent_span_id,
                    kind: span.kind,
                    status: span.status.map_or(0, |s| s.code),
                    attributes: span.attributes,
                    service: service.clone(),
                });
            }
        }
    }
    ExportTraceServiceResponse::default().encode_to_vec()
}

/// `toolsmith ARGS` with the OTLP variables pointing at `receiver` (and `extra` set), every
/// other `OTEL_*` variable of the test's own environment removed.
fn toolsmith(args: &[&str], receiver: Option<&Receiver>, extra: &[(&str, &str)]) -> Command {
    let mut command = child_cli::toolsmith(args);
    for (key, _) in std::env::vars() {
        if key.starts_with("OTEL_") {
            command.env_remove(key);
        }
    }
    if let Some(r) = receiver {
        command.env("OTEL_EXPORTER_OTLP_ENDPOINT", r.endpoint());
        command.env("OTEL_EXPORTER_OTLP_PROTOCOL", "http/protobuf");
    }
    command.envs(extra.iter().copied());
    command
}

/// Runs a command to its end (bounded) and returns whether it succeeded, its stdout and stderr.
fn finish(mut command: Command) -> (bool, String, String) {
    let mut child = command
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .expect("the child starts");
    let started = Instant::now();
    while child.try_wait().expect("the child can be waited for").is_none() {
        if started.elapsed() > Duration::from_secs(60) {
            let _ = child.kill();
            panic!("the child did not end within 60 s");
        }
        std::thread::sleep(Duration::from_millis(5));
    }
    let out = child.wait_with_output().expect("the child's output");
    let text = |b: &[u8]| String::from_utf8_lossy(b).into_owned();
    (out.status.success(), text(&out.stdout), text(&out.stderr))
}

fn echo_args() -> String {
    json!({"text": MARKER, "api_key": CANARY}).to_string()
}

fn context() -> String {
    json!({"tenant": CANARY}).to_string()
}

/// The one span named `name` (a failure lists what arrived).
fn one<'a>(spans: &'a [Got], name: &str) -> &'a Got {
    let found: Vec<&Got> = spans.iter().filter(|s| s.name == name).collect();
    assert_eq!(
        found.len(),
        1,
        "expected one `{name}`, got {:?}",
        spans.iter().map(|s| &s.name).collect::<Vec<_>>()
    );
    found[0]
}

/// Asserts `child` is a child of `parent` in the same trace.
fn assert_child(child: &Got, parent: &Got) {
    assert_eq!(
        child.trace_id, parent.trace_id,
        "`{}` is in another trace than `{}`",
        child.name, parent.name
    );
    assert_eq!(child.parent, parent.span_id, "`{}` is not a child of `{}`", child.name, parent.name);
}

/// The call span's GenAI attributes and its phases as children.
fn assert_call_span(spans: &[Got], tool: &str, description: &str) -> Got {
    let call = one(spans, &format!("execute_tool {tool}")).clone();
    assert_eq!(call.attr("gen_ai.operation.name").as_deref(), Some("execute_tool"));
    assert_eq!(call.attr("gen_ai.tool.name").as_deref(), Some(tool));
    assert_eq!(call.attr("gen_ai.tool.type").as_deref(), Some("function"));
    assert_eq!(call.attr("gen_ai.tool.description").as_deref(), Some(description));
    let id = call.attr("gen_ai.tool.call.id").unwrap_or_default();
    assert!(!id.is_empty(), "the call span has no gen_ai.tool.call.id: {call:?}");
    assert_eq!(call.kind, SpanKind::Internal as i32, "{call:?}");
    assert_child(one(spans, "tool.validate"), &call);
    assert_child(one(spans, "tool.execute"), &call);
    call
}

fn call_is_exported_with_its_phases_and_without_secrets() {
    let receiver = Receiver::start();
    let args = echo_args();
    let ctx = context();
    let command = toolsmith(
        &["call", "otel-echo", &args, "--context", &ctx],
        Some(&receiver),
        &[("OTEL_SERVICE_NAME", "otel-export-test")],
    );
    let (ok, stdout, stderr) = finish(command);
    assert!(ok, "the call failed: {stdout} {stderr}");
    assert!(stdout.contains(MARKER), "{stdout}");
    // The process has exited: its spans were flushed before it did.
    let spans = receiver.spans();
    let call = assert_call_span(
        &spans,
        "otel-echo",
        "Echoes its text (and its key, which the result's redaction hides), inside a span of its own",
    );
    assert_eq!(call.service.as_deref(), Some("otel-export-test"));
    assert_ne!(call.status, StatusCode::Error as i32, "{call:?}");
    assert!(call.attr("error.type").is_none(), "{call:?}");
    let output = one(&spans, "tool.validate_output");
    assert_child(output, &call);
    // The tool's own span (`cx.observe().span`) is a child of the execution.
    let work = one(&spans, "echo-work");
    assert_child(work, one(&spans, "tool.execute"));
    // Recording is off by default: no arguments or result, and no secret anywhere.
    assert!(call.attr("gen_ai.tool.call.arguments").is_none(), "{call:?}");
    assert!(call.attr("gen_ai.tool.call.result").is_none(), "{call:?}");
    assert!(!receiver.saw(CANARY), "the canary was exported");
    assert!(!receiver.saw(MARKER), "arguments were exported with recording off");
}

fn recording_exports_the_redacted_transcript_only() {
    let receiver = Receiver::start();
    let args = echo_args();
    let ctx = context();
    let extra = [("OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT", "true")];
    let (ok, stdout, stderr) = finish(toolsmith(&["call", "otel-echo", &args, "--context", &ctx], Some(&receiver), &extra));
    assert!(ok, "the call failed: {stdout} {stderr}");
    let spans = receiver.spans();
    let call = assert_call_span(
        &spans,
        "otel-echo",
        "Echoes its text (and its key, which the result's redaction hides), inside a span of its own",
    );
    let recorded_args: Value = serde_json::from_str(&call.attr("gen_ai.tool.call.arguments").expect("arguments recorded")).unwrap();
    assert_eq!(recorded_args, json!({"text": MARKER, "api_key": "[REDACTED]"}));
    let result: Value = serde_json::from_str(&call.attr("gen_ai.tool.call.result").expect("result recorded")).unwrap();
    assert_eq!(result, json!({"echo": MARKER, "api_key": "[REDACTED]"}));
    assert!(!receiver.saw(CANARY), "the canary was exported with recording on");
    // The service name defaults to the command's.
    assert_eq!(call.service.as_deref(), Some("toolsmith"));
}

fn failing_call_has_an_error_status_and_type() {
    let receiver = Receiver::start();
    let args = json!({"text": MARKER}).to_string();
    let extra = [("OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT", "true")];
    let (ok, stdout, stderr) = finish(toolsmith(&["call", "otel-fail", &args], Some(&receiver), &extra));
    assert!(!ok, "a failing tool succeeded: {stdout}");
    assert!(stderr.contains("failed on purpose"), "{stderr}");
    let spans = receiver.spans();
    let call = assert_call_span(&spans, "otel-fail", "Always fails");
    assert_eq!(call.status, StatusCode::Error as i32, "{call:?}");
    assert_eq!(call.attr("error.type").as_deref(), Some("execution"), "{call:?}");
    // No output to validate; the arguments are recorded, the error's message is not.
    assert!(spans.iter().all(|s| s.name != "tool.validate_output"));
    assert_eq!(call.attr("gen_ai.tool.call.arguments"), Some(json!({"text": MARKER}).to_string()));
    assert!(!receiver.saw("failed on purpose"), "the error message was exported");

    // Arguments that do not validate fail in the validation phase.
    let receiver = Receiver::start();
    let (ok, _, _) = finish(toolsmith(&["call", "otel-fail", r#"{"text": 5}"#], Some(&receiver), &[]));
    assert!(!ok);
    let spans = receiver.spans();
    let call = one(&spans, "execute_tool otel-fail");
    assert_eq!(call.status, StatusCode::Error as i32, "{call:?}");
    assert_eq!(call.attr("error.type").as_deref(), Some("invalid_input"), "{call:?}");
    assert_child(one(&spans, "tool.validate"), call);
    assert!(spans.iter().all(|s| s.name != "tool.execute"), "a call that did not validate ran");
}

fn nothing_is_exported_unless_asked() {
    // No endpoint: no exporter, and the command works as always.
    let (ok, stdout, stderr) = finish(toolsmith(&["call", "otel-echo", &echo_args()], None, &[("OTEL_SERVICE_NAME", "x")]));
    assert!(ok, "{stdout} {stderr}");
    assert!(stdout.contains(MARKER), "{stdout}");
    assert!(!stderr.contains("warning"), "{stderr}");
    // An endpoint, but the SDK switched off, or no traces exporter: nothing arrives.
    for off in [("OTEL_SDK_DISABLED", "true"), ("OTEL_TRACES_EXPORTER", "none")] {
        let receiver = Receiver::start();
        let (ok, stdout, stderr) = finish(toolsmith(&["call", "otel-echo", &echo_args()], Some(&receiver), &[off]));
        assert!(ok, "{stdout} {stderr}");
        assert_eq!(receiver.requests(), 0, "spans were exported with {off:?}");
    }
    // A protocol this build cannot speak is said, and the command still works.
    let receiver = Receiver::start();
    let (ok, stdout, stderr) = finish(toolsmith(
        &["call", "otel-echo", &echo_args()],
        Some(&receiver),
        &[("OTEL_EXPORTER_OTLP_PROTOCOL", "grpc")],
    ));
    assert!(ok, "{stdout} {stderr}");
    assert!(stderr.contains("grpc") && stderr.contains("not exported"), "{stderr}");
    assert_eq!(receiver.requests(), 0);
    // So is an https endpoint (this build's exporter has no TLS).
    let endpoint = format!("https://{}", receiver.addr);
    let (ok, stdout, stderr) = finish(toolsmith(
        &["call", "otel-echo", &echo_args()],
        None,
        &[("OTEL_EXPORTER_OTLP_TRACES_ENDPOINT", endpoint.as_str())],
    ));
    assert!(ok, "{stdout} {stderr}");
    assert!(stderr.contains("https") && stderr.contains("not exported"), "{stderr}");
    assert_eq!(receiver.requests(), 0);
}

/// A JSON-RPC POST to `/mcp` (stateless, JSON answers) and its JSON answer.
fn post_mcp(addr: &str, message: &Value) -> Value {
    let body = message.to_string();
    let mut tcp = std::net::TcpStream::connect(addr).expect("the server accepts");
    let head = format!(
        "POST /mcp HTTP/1.1\r\nHost: {addr}\r\nAccept: application/json, text/event-stream\r\nContent-Type: application/json\r\nMCP-Protocol-Version: 2025-11-25\r\nContent-Length: {}\r\nConnection: close\r\n\r\n",
        body.len()
    );
    tcp.write_all(format!("{head}{body}").as_bytes()).unwrap();
    let mut answer = String::new();
    tcp.read_to_string(&mut answer).unwrap();
    let (head, body) = answer
        .split_once("\r\n\r\n")
        .unwrap_or_else(|| panic!("not an HTTP answer: {answer}"));
    assert!(head.starts_with("HTTP/1.1 200"), "{head}\n{body}");
    // A JSON body, or an event stream whose data lines carry the answer.
    let json = body
        .find('{')
        .map(|start| &body[start..body.rfind('}').map_or(body.len(), |e| e + 1)]);
    let text = json.unwrap_or_else(|| panic!("no JSON in the answer: {body}"));
    serde_json::from_str(text).unwrap_or_else(|e| panic!("not JSON ({e}): {text}"))
}

fn served_call_is_a_child_of_the_request_trace_context() {
    let receiver = Receiver::start();
    let mut child = toolsmith(
        &["serve", "--http", "127.0.0.1:0", "--stateless", "--json-response"],
        Some(&receiver),
        &[("OTEL_BSP_SCHEDULE_DELAY", "50")],
    )
    .stdout(std::process::Stdio::null())
    .stderr(std::process::Stdio::piped())
    .spawn()
    .expect("the server starts");
    let mut lines = BufReader::new(child.stderr.take().unwrap()).lines();
    let addr = loop {
        let line = lines
            .next()
            .and_then(Result::ok)
            .unwrap_or_else(|| panic!("the server ended before it served"));
        if let Some(url) = line.split("serving MCP on http://").nth(1) {
            break url.trim_end_matches("/mcp").to_owned();
        }
    };
    // Standard error keeps being read, so the server never blocks on it.
    std::thread::spawn(move || for _ in lines {});

    let trace_id = "4bf92f3577b34da6a3ce929d0e0e4736";
    let parent_id = "00f067aa0ba902b7";
    let params = json!({
        "name": "otel-echo",
        "arguments": {"text": MARKER, "api_key": CANARY},
        "_meta": {"traceparent": format!("00-{trace_id}-{parent_id}-01"), "tracestate": "vendor=value"},
    });
    let answer = post_mcp(&addr, &json!({"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": params}));
    assert!(answer.to_string().contains(MARKER), "{answer}");
    assert_ne!(answer["result"]["isError"], json!(true), "{answer}");
    // A call without trace context starts a trace of its own.
    let plain = json!({"name": "otel-fail", "arguments": {"text": "x"}});
    let answer = post_mcp(&addr, &json!({"jsonrpc": "2.0", "id": 2, "method": "tools/call", "params": plain}));
    assert_eq!(answer["result"]["isError"], json!(true), "{answer}");

    let spans = receiver.wait_until("both calls' spans and the echo's phases", |spans| {
        has_call_with(
            spans,
            "execute_tool otel-echo",
            None,
            &["tool.validate", "tool.execute", "tool.validate_output"],
        ) && has_call_with(spans, "execute_tool otel-fail", None, &[])
    });
    let _ = Command::new("kill").args(["-INT", &child.id().to_string()]).status();
    let _ = child.wait();

    let call = one(&spans, "execute_tool otel-echo");
    assert_eq!(hex(&call.trace_id), trace_id, "the call is not in the request's trace");
    assert_eq!(hex(&call.parent), parent_id, "the call's parent is not the request's span");
    let in_call: Vec<&Got> = spans.iter().filter(|s| s.trace_id == call.trace_id).collect();
    for phase in ["tool.validate", "tool.execute", "tool.validate_output"] {
        let span = in_call
            .iter()
            .find(|s| s.name == phase)
            .unwrap_or_else(|| panic!("no {phase} in the call's trace"));
        assert_child(span, call);
    }
    let failed = one(&spans, "execute_tool otel-fail");
    assert_ne!(failed.trace_id, call.trace_id);
    assert!(failed.parent.is_empty(), "a call without trace context has a parent: {failed:?}");
    assert_eq!(failed.status, StatusCode::Error as i32);
    assert!(!receiver.saw(CANARY), "the canary was exported");
}

/// A 2026-07-28 `tools/call` of `params` (plus the revision's `_meta` and `traceparent`) to a
/// stateless JSON server, and its JSON answer.
fn call_modern(addr: &str, mut params: Value, traceparent: &str) -> Value {
    params["_meta"] = json!({
        "io.modelcontextprotocol/protocolVersion": "2026-07-28",
        "io.modelcontextprotocol/clientCapabilities": {"elicitation": {}},
        "traceparent": traceparent,
    });
    let name = params["name"].as_str().unwrap().to_owned();
    let body = json!({"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": params}).to_string();
    let mut tcp = std::net::TcpStream::connect(addr).expect("the server accepts");
    let head = format!(
        "POST /mcp HTTP/1.1\r\nHost: {addr}\r\nAccept: application/json, text/event-stream\r\nContent-Type: application/json\r\nMCP-Protocol-Version: 2026-07-28\r\nMcp-Method: tools/call\r\nMcp-Name: {name}\r\nContent-Length: {}\r\nConnection: close\r\n\r\n",
        body.len()
    );
    tcp.write_all(format!("{head}{body}").as_bytes()).unwrap();
    let mut answer = String::new();
    tcp.read_to_string(&mut answer).unwrap();
    let (head, body) = answer
        .split_once("\r\n\r\n")
        .unwrap_or_else(|| panic!("not an HTTP answer: {answer}"));
    assert!(head.starts_with("HTTP/1.1 200"), "{head}\n{body}");
    serde_json::from_str(body).unwrap_or_else(|e| panic!("not JSON ({e}): {body}"))
}

fn a_continued_call_is_a_child_of_the_follow_up_trace_context() {
    let receiver = Receiver::start();
    // A store of its own: the waiting call never touches the user's default store.
    let dir = tempfile::tempdir().unwrap();
    let store = dir.path().join("pending.sqlite3");
    let mut child = toolsmith(
        &[
            "--store",
            store.to_str().unwrap(),
            "serve",
            "--http",
            "127.0.0.1:0",
            "--stateless",
            "--json-response",
        ],
        Some(&receiver),
        &[("OTEL_BSP_SCHEDULE_DELAY", "50")],
    )
    .stdout(std::process::Stdio::null())
    .stderr(std::process::Stdio::piped())
    .spawn()
    .expect("the server starts");
    let mut lines = BufReader::new(child.stderr.take().unwrap()).lines();
    let addr = loop {
        let line = lines
            .next()
            .and_then(Result::ok)
            .unwrap_or_else(|| panic!("the server ended before it served"));
        if let Some(url) = line.split("serving MCP on http://").nth(1) {
            break url.trim_end_matches("/mcp").to_owned();
        }
    };
    std::thread::spawn(move || for _ in lines {});

    // The first request asks for approval; the follow-up answers it, in a trace of its own.
    let (first_trace, follow_trace, follow_parent) = (
        "4bf92f3577b34da6a3ce929d0e0e4736",
        "0af7651916cd43dd8448eb211c80319c",
        "b7ad6b7169203331",
    );
    let asked = call_modern(
        &addr,
        json!({"name": "otel-pay", "arguments": {"amount": 3}}),
        &format!("00-{first_trace}-00f067aa0ba902b7-01"),
    );
    let state = asked["result"]["requestState"]
        .as_str()
        .unwrap_or_else(|| panic!("no request state: {asked}"));
    let answer = json!({"action": "accept", "content": {"approved": true}});
    let params = json!({"name": "otel-pay", "arguments": {"amount": 3}, "requestState": state, "inputResponses": {"approval": answer}});
    let done = call_modern(&addr, params, &format!("00-{follow_trace}-{follow_parent}-01"));
    assert!(done.to_string().contains("paid 3"), "{done}");

    let spans = receiver.wait_until(
        "the call's span in each request's trace, and its execution in the follow-up's",
        |spans| {
            has_call_with(spans, "execute_tool otel-pay", Some(follow_trace), &["tool.execute"])
                && has_call_with(spans, "execute_tool otel-pay", Some(first_trace), &[])
        },
    );
    let continued = spans
        .iter()
        .find(|s| s.name == "execute_tool otel-pay" && hex(&s.trace_id) == follow_trace)
        .expect("waited for")
        .clone();
    let _ = Command::new("kill").args(["-INT", &child.id().to_string()]).status();
    let _ = child.wait();
    assert_eq!(
        hex(&continued.parent),
        follow_parent,
        "the continued call's parent is not the follow-up request's span"
    );
    let first = spans
        .iter()
        .find(|s| s.name == "execute_tool otel-pay" && hex(&s.trace_id) == first_trace);
    assert!(first.is_some(), "the first request's call span is in its trace");
    let execute = spans.iter().find(|s| s.name == "tool.execute" && s.trace_id == continued.trace_id);
    assert!(execute.is_some(), "the approved run executes in the follow-up's trace");
}

/// Signing a decision and deciding a call by its token export spans (the approved run's, with
/// recording on) but never the decision key, and no output shows it.
fn a_decision_by_token_exports_no_key() {
    const KEY: &str = "canary-decision-key-5a0c3e-do-not-export";
    let receiver = Receiver::start();
    let dir = tempfile::tempdir().unwrap();
    let store = dir.path().join("store.db");
    let store = store.to_str().unwrap();
    let keyed = [
        ("TOOLSMITH_DECISION_KEY", KEY),
        ("OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT", "true"),
    ];
    let run = |args: &[&str]| finish(toolsmith(args, Some(&receiver), &keyed));
    let asked = run(&["--store", store, "call", "otel-pay", r#"{"amount": 7}"#]);
    assert!(asked.0, "{} {}", asked.1, asked.2);
    let id = asked
        .2
        .split("toolsmith call ")
        .nth(1)
        .and_then(|t| t.split(' ').next())
        .unwrap()
        .to_owned();
    let signed = run(&["--store", store, "call", &id, "--approve", "--sign", "60"]);
    assert!(signed.0 && signed.1.starts_with("tsd1."), "{} {}", signed.1, signed.2);
    let listed = run(&["--store", store, "pending", "--token"]);
    assert!(listed.0 && listed.1.contains("approve token: tsd1."), "{} {}", listed.1, listed.2);
    let decided = run(&["--store", store, "call", &id, "--token", signed.1.trim()]);
    assert!(decided.0 && decided.1.contains("paid 7"), "{} {}", decided.1, decided.2);
    let forged = run(&["--store", store, "call", &id, "--token", "tsd1.e30.AAAA"]);
    assert!(!forged.0, "{}", forged.1);

    let spans = receiver.wait_for("tool.execute");
    assert!(spans.iter().any(|s| s.name == "execute_tool otel-pay"), "{spans:?}");
    assert!(!receiver.saw(KEY), "the decision key was exported");
    for (_, stdout, stderr) in [asked, signed, listed, decided, forged] {
        assert!(
            !stdout.contains(KEY) && !stderr.contains(KEY),
            "the key was printed: {stdout} {stderr}"
        );
    }
}

fn hex(bytes: &[u8]) -> String {
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}

/// This suite's tests, named `SUITE::TEST`.
pub fn trials(suite: &str) -> Vec<libtest_mimic::Trial> {
    child_cli::trials(
        suite,
        &[
            (
                "call_is_exported_with_its_phases_and_without_secrets",
                call_is_exported_with_its_phases_and_without_secrets,
            ),
            (
                "recording_exports_the_redacted_transcript_only",
                recording_exports_the_redacted_transcript_only,
            ),
            (
                "failing_call_has_an_error_status_and_type",
                failing_call_has_an_error_status_and_type,
            ),
            ("nothing_is_exported_unless_asked", nothing_is_exported_unless_asked),
            ("a_decision_by_token_exports_no_key", a_decision_by_token_exports_no_key),
            (
                "served_call_is_a_child_of_the_request_trace_context",
                served_call_is_a_child_of_the_request_trace_context,
            ),
            (
                "a_continued_call_is_a_child_of_the_follow_up_trace_context",
                a_continued_call_is_a_child_of_the_follow_up_trace_context,
            ),
        ],
    )
}
