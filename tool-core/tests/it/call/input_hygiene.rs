//! Input hygiene and secrets, at every entry point: a repeated key is refused wherever
//! arguments arrive as text (registry, streamed calls, the MCP server over HTTP and stdio); a
//! strict tool (or a `deny_unknown_fields` input) refuses unknown fields; every value quoted
//! in an error is bounded; waiting calls' arguments and request contexts are redacted the way
//! errors are, and only under secret-named keys.

use crate::support::http_server::{self, Served};

use std::net::SocketAddr;
use std::time::Duration;

use tokio::io::{AsyncBufReadExt, AsyncReadExt, AsyncWriteExt, BufReader};
use tool_core::Dialect;
use tool_core::ErrorKind;
use tool_core::mcp::http::HttpOptions;
use tool_core::mcp::{McpConfig, McpServer};
use tool_core::prelude::*;
use tool_core::runtime::{Outcome, ResumeOptions, RunEventKind, Runtime};
use tool_core::spec::TransformTarget;
use tool_core::testing::ScriptedStream;

/// How long a test waits for something that should come (a hang, not a slow machine).
const PATIENCE: Duration = Duration::from_secs(10);

// ---------------------------------------------------------------------------------------------
// Tools

/// Adds two numbers
#[tool(id = "hy-add")]
async fn add(
    /// The first addend
    a: f64,
    /// The second addend
    b: f64,
) -> f64 {
    a + b
}

/// A place.
#[derive(Debug, Deserialize, JsonSchema)]
pub struct Place {
    /// The city.
    pub city: String,
    /// The country, when it matters.
    pub country: Option<String>,
}

/// A trip.
#[derive(Debug, Deserialize, JsonSchema)]
pub struct Trip {
    /// Its name.
    pub name: String,
    /// Where it goes.
    pub to: Place,
    /// Where it stops on the way.
    pub stops: Vec<Place>,
}

fn describe(trip: Trip) -> String {
    let stops: Vec<String> = trip.stops.into_iter().map(|p| p.city).collect();
    format!("{} to {} via [{}]", trip.name, trip.to.city, stops.join(", "))
}

/// Plans a trip (lenient: unknown fields are ignored)
#[tool(id = "hy-trip")]
async fn trip(input: Trip) -> String {
    describe(input)
}

/// Plans a trip (strict: only the listed fields)
#[tool(id = "hy-trip-strict", strict)]
async fn trip_strict(input: Trip) -> String {
    describe(input)
}

/// Exactly one number, nothing else.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct Exact {
    /// The number.
    pub n: u32,
}

/// Echoes a number (its input denies unknown fields; the tool is not strict)
#[tool(id = "hy-exact")]
async fn exact(input: Exact) -> u32 {
    input.n
}

/// A shape.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(tag = "kind", rename_all = "lowercase")]
pub enum Shape {
    /// A circle.
    Circle {
        /// Radius.
        r: f64,
    },
    /// A square.
    Square {
        /// Side.
        side: f64,
    },
}

/// A labelled shape, its fields spread over the enum's variants.
#[derive(Debug, Deserialize, JsonSchema)]
pub struct Drawing {
    /// The label.
    pub label: String,
    /// The shape.
    #[serde(flatten)]
    pub shape: Shape,
}

/// Draws a shape (strict, with a flattened enum)
#[tool(id = "hy-draw", strict)]
async fn draw(input: Drawing) -> String {
    match input.shape {
        Shape::Circle { r } => format!("{}: circle {r}", input.label),
        Shape::Square { side } => format!("{}: square {side}", input.label),
    }
}

/// A number the schema calls a string: serde refuses what validation let through.
#[derive(Debug, Deserialize, JsonSchema)]
pub struct Mismatch {
    /// Said to be a string.
    #[schemars(with = "String")]
    pub n: u32,
}

/// Reads a number its schema calls a string
#[tool(id = "hy-mismatch")]
async fn mismatch(input: Mismatch) -> u32 {
    input.n
}

fn always(_: &InputOf<login>, _: &RequestContext) -> bool {
    true
}

/// Logs a user in (always asks for approval)
#[tool(id = "hy-login", require_approval = always)]
async fn login(
    /// The user
    user: String,
    /// The password
    password: String,
) -> String {
    format!("{user} in ({} characters)", password.len())
}

/// What the user is asked.
#[derive(Debug, Serialize, Deserialize, JsonSchema)]
pub struct Question {
    /// The question.
    pub question: String,
}

/// What the user answers.
#[derive(Debug, Deserialize, JsonSchema)]
pub struct Decision {
    /// Replace it.
    pub overwrite: bool,
}

/// Where the tool works, and with what.
#[derive(Debug, Clone, Deserialize, Serialize, JsonSchema)]
pub struct Workspace {
    /// The directory.
    pub root: String,
    /// The key of the storage service.
    pub api_key: String,
}

/// Asks before replacing a file (suspends, resumes with a decision)
#[tool(id = "hy-replace", context = Workspace, suspend = Question, resume = Decision)]
async fn replace(
    /// The file
    path: String,
    /// The access token of the file service
    access_token: String,
    #[ctx] cx: ToolContext<Workspace, Question, Decision>,
) -> Result<String, ToolError> {
    let _ = access_token;
    match cx.resume_data()? {
        Some(d) => Ok(format!("{}/{path}: overwrite {}", cx.request_context().root, d.overwrite)),
        None => Err(cx.suspend(Question {
            question: format!("Replace {path}?"),
        })),
    }
}

/// Resume data whose schema calls its number a string.
#[derive(Debug, Deserialize, JsonSchema)]
pub struct OddResume {
    /// Said to be a string.
    #[schemars(with = "String")]
    pub n: u32,
}

/// Suspends, then reads resume data its schema misdescribes
#[tool(id = "hy-odd-resume", suspend = Question, resume = OddResume)]
async fn odd_resume(#[ctx] cx: ToolContext<RequestContext, Question, OddResume>) -> Result<u32, ToolError> {
    match cx.resume_data()? {
        Some(r) => Ok(r.n),
        None => Err(cx.suspend(Question { question: "n?".into() })),
    }
}

/// An output whose flattened map may repeat a field.
#[derive(Debug, Serialize, JsonSchema)]
pub struct Tally {
    /// The total.
    pub total: u32,
    /// Counts by name.
    #[serde(flatten)]
    pub counts: std::collections::BTreeMap<String, u32>,
}

/// Counts, with a count named like the total
#[tool(id = "hy-tally")]
async fn tally() -> Tally {
    Tally {
        total: 1,
        counts: [("total".to_owned(), 2)].into(),
    }
}

fn registry() -> Registry {
    Registry::from_iter([
        add::tool(),
        trip::tool(),
        trip_strict::tool(),
        exact::tool(),
        draw::tool(),
        mismatch::tool(),
        login::tool(),
        replace::tool(),
        odd_resume::tool(),
        tally::tool(),
    ])
}

/// Calls a tool with argument text and expects a refusal.
async fn refused(registry: &Registry, tool: &str, args: &str) -> ToolError {
    match registry.call(tool, args, CallOptions::default()).await {
        Ok(out) => panic!("{tool} accepted {args}: {}", out.json),
        Err(e) => e,
    }
}

fn replace_context() -> CallOptions {
    CallOptions::with_context(json!({"root": "/srv/files", "api_key": "k-live-123"}))
}

// ---------------------------------------------------------------------------------------------
// 1. Repeated keys (I-JSON, RFC 7493)

#[tokio::test]
async fn a_repeated_key_in_argument_text_is_refused_naming_the_key_and_its_path() {
    let registry = registry();
    let e = refused(&registry, "hy-add", r#"{"a": 1, "b": 2, "a": 40}"#).await;
    assert_eq!(e.kind(), ErrorKind::InvalidInput, "{e}");
    assert!(e.message().contains("`a`") && e.message().contains("top-level object"), "{e}");
    assert!(e.message().contains("RFC 7493"), "{e}");
    assert_eq!(e.issues()[0].path, "/a");

    let nested = r#"{"name": "n", "to": {"city": "Oslo", "country": "NO", "city": "Rome"}, "stops": []}"#;
    let e = refused(&registry, "hy-trip", nested).await;
    assert!(e.message().contains("`city`") && e.message().contains("`/to`"), "{e}");
    assert_eq!(e.issues()[0].path, "/to/city");

    let in_array = r#"{"name": "n", "to": {"city": "Oslo"}, "stops": [{"city": "A"}, {"city": "B", "city": "C"}]}"#;
    let e = refused(&registry, "hy-trip", in_array).await;
    assert!(e.message().contains("`/stops/1`"), "{e}");

    // A large object (past the one-by-one comparison) is checked too.
    let extras: Vec<String> = (0..40).map(|i| format!(r#""x{i}": {i}"#)).collect();
    let big = format!(
        r#"{{"name": "n", "to": {{"city": "Oslo"}}, "stops": [], {}, "x17": 0}}"#,
        extras.join(", ")
    );
    let e = refused(&registry, "hy-trip", &big).await;
    assert!(e.message().contains("`x17`"), "{e}");

    // The same arguments without the repeat are fine, as text and as a value.
    let ok = registry
        .call("hy-add", r#"{"a": 1, "b": 2}"#, CallOptions::default())
        .await
        .unwrap();
    assert_eq!(ok.value(), json!(3.0));
    let ok = registry
        .call(
            "hy-trip",
            r#"{"name": "n", "to": {"city": "Oslo"}, "stops": [{"city": "A"}]}"#,
            CallOptions::default(),
        )
        .await
        .unwrap();
    assert_eq!(ok.value(), json!("n to Oslo via [A]"));
}

#[tokio::test]
async fn an_object_sent_as_a_string_is_not_repaired_when_it_repeats_a_key() {
    let registry = registry();
    // Repaired as usual without the repeat...
    let fine = r#"{"name": "n", "to": "{\"city\": \"Oslo\"}", "stops": []}"#;
    let out = registry.call("hy-trip", fine, CallOptions::default()).await.unwrap();
    assert_eq!(out.value(), json!("n to Oslo via []"));
    // ...but a repeat inside it is not resolved by picking one.
    let repeated = r#"{"name": "n", "to": "{\"city\": \"Oslo\", \"city\": \"Rome\"}", "stops": []}"#;
    let e = refused(&registry, "hy-trip", repeated).await;
    assert_eq!(e.kind(), ErrorKind::InvalidInput, "{e}");
    assert!(!e.message().contains("Rome via"), "{e}");
}

#[tokio::test]
async fn streamed_calls_with_a_repeated_key_fail_with_the_key_named() {
    let runtime = Runtime::new(registry());
    let sse = ScriptedStream::anthropic().tool_call_pieces("toolu_1", "hy-add", &[r#"{"a": 1, "b": 2,"#, r#" "a": 5}"#]);
    let (mut run, events) = runtime.stream(Dialect::Anthropic, CallOptions::default());
    run.push(&sse.sse_bytes()).unwrap();
    run.finish().unwrap();
    let run = tokio::time::timeout(PATIENCE, events.finish()).await.expect("the run ends");
    match run.outcome {
        Outcome::Failed(e) => assert!(e.message().contains("`a`") && e.message().contains("RFC 7493"), "{e}"),
        other => panic!("{other:?}"),
    }

    // A server that puts the whole input in `content_block_start` (no deltas): its text is
    // kept as sent, so the repeat is still seen.
    let start = r#"{"type":"content_block_start","index":0,"content_block":{"type":"tool_use","id":"toolu_2","name":"hy-add","input":{"a":1,"b":2,"b":9}}}"#;
    let sse = format!(
        "event: content_block_start\ndata: {start}\n\nevent: content_block_stop\ndata: {}\n\nevent: message_stop\ndata: {{\"type\":\"message_stop\"}}\n\n",
        json!({"type": "content_block_stop", "index": 0})
    );
    let (mut run, events) = runtime.stream(Dialect::Anthropic, CallOptions::default());
    run.push(sse.as_bytes()).unwrap();
    run.finish().unwrap();
    let run = tokio::time::timeout(PATIENCE, events.finish()).await.expect("the run ends");
    match run.outcome {
        Outcome::Failed(e) => assert!(e.message().contains("`b`"), "{e}"),
        other => panic!("{other:?}"),
    }
    // The same start input without a repeat runs.
    let sse = sse.replace(r#","b":9"#, "");
    let (mut run, events) = runtime.stream(Dialect::Anthropic, CallOptions::default());
    run.push(sse.as_bytes()).unwrap();
    run.finish().unwrap();
    let run = tokio::time::timeout(PATIENCE, events.finish()).await.expect("the run ends");
    assert!(
        matches!(&run.outcome, Outcome::Done(out) if out.value() == json!(3.0)),
        "{:?}",
        run.outcome
    );
}

/// A running HTTP server, shut down on drop.
async fn start_http() -> Served {
    http_server::serve(
        McpServer::new(Runtime::new(registry()), McpConfig::default()),
        HttpOptions::default(),
    )
    .await
}

/// One POST to `/mcp` on its own connection: the status and the body.
async fn post(addr: SocketAddr, body: &str) -> (u16, String) {
    let mut stream = tokio::net::TcpStream::connect(addr).await.unwrap();
    let request = format!(
        "POST /mcp HTTP/1.1\r\nHost: {addr}\r\nAccept: application/json, text/event-stream\r\nContent-Type: application/json\r\nContent-Length: {}\r\nConnection: close\r\n\r\n{body}",
        body.len()
    );
    stream.write_all(request.as_bytes()).await.unwrap();
    let mut response = String::new();
    tokio::time::timeout(PATIENCE, stream.read_to_string(&mut response))
        .await
        .expect("the server answers")
        .unwrap();
    let status = response.split_whitespace().nth(1).and_then(|s| s.parse().ok()).unwrap_or(0);
    let body = response.split_once("\r\n\r\n").map(|(_, b)| b.to_owned()).unwrap_or_default();
    (status, body)
}

#[tokio::test]
async fn the_mcp_http_body_is_refused_when_it_repeats_a_key() {
    let server = start_http().await;
    let body =
        r#"{"jsonrpc": "2.0", "id": 41, "method": "tools/call", "params": {"name": "hy-add", "arguments": {"a": 1, "b": 2, "a": 3}}}"#;
    let (status, answer) = post(server.addr, body).await;
    assert_eq!(status, 400, "{answer}");
    let answer: Value = serde_json::from_str(&answer).unwrap();
    assert_eq!(answer["id"], 41, "{answer}");
    assert_eq!(answer["error"]["code"], -32600, "{answer}");
    let message = answer["error"]["message"].as_str().unwrap();
    assert!(message.contains("`a`") && message.contains("`/params/arguments`"), "{message}");
    // A repeat anywhere in the message counts (here, the method).
    let (status, answer) = post(
        server.addr,
        r#"{"jsonrpc": "2.0", "id": 1, "method": "ping", "method": "initialize"}"#,
    )
    .await;
    assert_eq!(status, 400, "{answer}");
    assert!(answer.contains("`method`"), "{answer}");
    // Text that is not JSON is still a parse error.
    let (status, answer) = post(server.addr, r#"{"jsonrpc": "#).await;
    assert_eq!(status, 400);
    assert!(answer.contains("-32700"), "{answer}");
    // A well-formed initialize still gets through.
    let init = json!({"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": {"protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": {"name": "hygiene", "version": "1"}}});
    let (status, answer) = post(server.addr, &init.to_string()).await;
    assert_eq!(status, 200, "{answer}");
    assert!(answer.contains("serverInfo"), "{answer}");
}

#[tokio::test]
async fn the_mcp_stdio_line_is_refused_when_it_repeats_a_key_and_the_session_goes_on() {
    let server = McpServer::new(Runtime::new(registry()), McpConfig::default());
    let (mut to_server, server_in) = tokio::io::duplex(1 << 16);
    let (server_out, from_server) = tokio::io::duplex(1 << 16);
    let task = tokio::spawn(tool_core::mcp::stdio::serve_io(server, server_in, server_out));
    let mut lines = BufReader::new(from_server).lines();
    let send = |v: String| {
        let mut line = v.into_bytes();
        line.push(b'\n');
        line
    };
    let init = json!({"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": {"protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": {"name": "hygiene", "version": "1"}}});
    to_server.write_all(&send(init.to_string())).await.unwrap();
    let first = tokio::time::timeout(PATIENCE, lines.next_line()).await.unwrap().unwrap().unwrap();
    assert!(first.contains("serverInfo"), "{first}");
    let initialized = json!({"jsonrpc": "2.0", "method": "notifications/initialized"});
    to_server.write_all(&send(initialized.to_string())).await.unwrap();

    let repeated =
        r#"{"jsonrpc": "2.0", "id": 5, "method": "tools/call", "params": {"name": "hy-add", "arguments": {"a": 1, "b": 2, "b": 3}}}"#;
    to_server.write_all(&send(repeated.to_owned())).await.unwrap();
    let line = tokio::time::timeout(PATIENCE, lines.next_line()).await.unwrap().unwrap().unwrap();
    let answer: Value = serde_json::from_str(&line).unwrap();
    assert_eq!(
        (answer["id"].clone(), answer["error"]["code"].clone()),
        (json!(5), json!(-32600)),
        "{answer}"
    );
    let message = answer["error"]["message"].as_str().unwrap();
    assert!(message.contains("`b`") && message.contains("`/params/arguments`"), "{message}");

    let fine = json!({"jsonrpc": "2.0", "id": 6, "method": "tools/call", "params": {"name": "hy-add", "arguments": {"a": 1, "b": 2}}});
    to_server.write_all(&send(fine.to_string())).await.unwrap();
    let line = tokio::time::timeout(PATIENCE, lines.next_line()).await.unwrap().unwrap().unwrap();
    let answer: Value = serde_json::from_str(&line).unwrap();
    assert_eq!(answer["id"], 6, "{answer}");
    assert_eq!(answer["result"]["content"][0]["text"], "3.0", "{answer}");
    drop(to_server);
    tokio::time::timeout(PATIENCE, task)
        .await
        .expect("the server ends")
        .unwrap()
        .unwrap();
}

#[tokio::test]
async fn a_tools_own_output_that_repeats_a_key_is_still_delivered() {
    // Repeated keys are refused in what arrives from outside; an output is the tool's own
    // serialisation, validated as `serde_json` reads it (as before).
    let out = registry().call("hy-tally", "{}", CallOptions::default()).await.unwrap();
    assert_eq!(out.json.get(), r#"{"total":1,"total":2}"#);
}

// ---------------------------------------------------------------------------------------------
// 2. Unknown fields

#[tokio::test]
async fn a_strict_tool_refuses_unknown_fields_at_every_depth_naming_them() {
    let registry = registry();
    let extra = r#"{"name": "n", "to": {"city": "Oslo"}, "stops": [], "budget": 100}"#;
    // The lenient tool ignores it (its schema allows more fields)...
    let out = registry.call("hy-trip", extra, CallOptions::default()).await.unwrap();
    assert_eq!(out.value(), json!("n to Oslo via []"));
    // ...the strict one, with the same schema, refuses it by name.
    let e = refused(&registry, "hy-trip-strict", extra).await;
    assert_eq!(e.kind(), ErrorKind::InvalidInput, "{e}");
    assert!(e.message().contains("unknown field `budget`"), "{e}");

    let nested = r#"{"name": "n", "to": {"city": "Oslo", "zip": "0150"}, "stops": [{"city": "A", "hotel": "H"}]}"#;
    let e = refused(&registry, "hy-trip-strict", nested).await;
    assert!(e.message().contains("`zip`") && e.message().contains("`hotel`"), "{e}");
    let paths: Vec<&str> = e.issues().iter().map(|i| i.path.as_str()).collect();
    assert!(paths.contains(&"/to") && paths.contains(&"/stops/0"), "{paths:?}");
    // As a value too (not only as text).
    let value = json!({"name": "n", "to": {"city": "Oslo"}, "stops": [], "budget": 1});
    let e = registry.call("hy-trip-strict", value, CallOptions::default()).await.unwrap_err();
    assert!(e.message().contains("`budget`"), "{e}");

    let fine = r#"{"name": "n", "to": {"city": "Oslo", "country": null}, "stops": [{"city": "A"}]}"#;
    let out = registry.call("hy-trip-strict", fine, CallOptions::default()).await.unwrap();
    assert_eq!(out.value(), json!("n to Oslo via [A]"));
}

#[tokio::test]
async fn a_strict_tool_with_a_flattened_enum_accepts_each_variants_fields_and_nothing_else() {
    let registry = registry();
    let circle = r#"{"label": "c", "kind": "circle", "r": 2}"#;
    assert_eq!(
        registry.call("hy-draw", circle, CallOptions::default()).await.unwrap().value(),
        json!("c: circle 2")
    );
    let square = r#"{"label": "s", "kind": "square", "side": 3}"#;
    assert_eq!(
        registry.call("hy-draw", square, CallOptions::default()).await.unwrap().value(),
        json!("s: square 3")
    );
    let e = refused(&registry, "hy-draw", r#"{"label": "c", "kind": "circle", "r": 2, "colour": "red"}"#).await;
    assert!(e.message().contains("`colour`"), "{e}");
}

#[tokio::test]
async fn deny_unknown_fields_on_an_input_type_is_honoured_with_the_field_named() {
    let registry = registry();
    let e = refused(&registry, "hy-exact", r#"{"n": 1, "m": 2}"#).await;
    assert_eq!(e.kind(), ErrorKind::InvalidInput, "{e}");
    assert!(e.message().contains("unknown field `m`"), "{e}");
    let out = registry.call("hy-exact", r#"{"n": 7}"#, CallOptions::default()).await.unwrap();
    assert_eq!(out.value(), json!(7));
}

// ---------------------------------------------------------------------------------------------
// 3. Bounded quotes

/// Asserts a message quotes at most a bounded part of a huge value, and says how long it was.
fn assert_bounded(message: &str, full: usize) {
    assert!(
        message.len() < 4_000,
        "{} bytes: {}",
        message.len(),
        &message[..400.min(message.len())]
    );
    assert!(message.contains(&format!("{full} characters in all")), "{message}");
}

#[tokio::test]
async fn a_validation_error_quotes_a_huge_argument_bounded() {
    let registry = registry();
    let huge = "x".repeat(900_000);
    let args = json!({"a": huge, "b": 1}).to_string();
    let e = refused(&registry, "hy-add", &args).await;
    // The string, with its quotes, is 900 002 characters.
    assert_bounded(e.message(), 900_002);
    for issue in e.issues() {
        assert!(issue.message.len() < 1_000, "{}", issue.message.len());
    }
    assert!(e.to_json().to_string().len() < 8_000);
    // The same through a runtime: the tool-call event shows the arguments, the error does not
    // repeat them in full.
    let run = Runtime::new(registry).call("hy-add", args, CallOptions::default()).finish().await;
    let Outcome::Failed(e) = run.outcome else {
        panic!("{:?}", run.outcome)
    };
    assert_bounded(e.message(), 900_002);
}

#[tokio::test]
async fn an_output_validation_error_quotes_a_huge_output_bounded() {
    let tool = DynamicTool::builder("hy-big-output", "Returns a huge value where a number belongs")
        .output_schema(json!({"type": "object", "properties": {"n": {"type": "number"}}}))
        .handler(|_, _| async { Ok(json!({"n": "y".repeat(900_000)})) })
        .unwrap();
    let registry = Registry::from_iter([tool]);
    let e = registry.call("hy-big-output", "{}", CallOptions::default()).await.unwrap_err();
    assert_eq!(e.kind(), ErrorKind::InvalidOutput, "{e}");
    assert_bounded(e.message(), 900_002);
}

#[tokio::test]
async fn a_decode_error_quotes_a_huge_argument_bounded() {
    let registry = registry();
    let args = json!({"n": "z".repeat(900_000)}).to_string();
    let e = refused(&registry, "hy-mismatch", &args).await;
    assert_bounded(e.message(), 900_000);
    // What serde said after the value is kept.
    assert!(e.message().contains("expected u32"), "{e}");
}

#[tokio::test]
async fn resume_data_the_tool_cannot_read_is_quoted_bounded() {
    let runtime = Runtime::new(registry());
    let run = runtime
        .call("hy-odd-resume", json!({}), CallOptions::default().id("hy-odd-1"))
        .finish()
        .await;
    assert!(matches!(run.outcome, Outcome::Suspended(_)), "{:?}", run.outcome);
    let run = runtime
        .resume("hy-odd-1", json!({"n": "q".repeat(900_000)}), ResumeOptions::default())
        .await
        .unwrap()
        .finish()
        .await;
    let Outcome::Failed(e) = run.outcome else {
        panic!("{:?}", run.outcome)
    };
    assert_bounded(e.message(), 900_000);
    assert!(e.message().contains("expected u32"), "{e}");
}

// ---------------------------------------------------------------------------------------------
// 4. Secrets

#[tokio::test]
async fn the_approval_event_shows_the_arguments_redacted_in_both_views() {
    let runtime = Runtime::new(registry());
    let run = runtime
        .call(
            "hy-login",
            json!({"user": "ann", "password": "hunter2"}),
            CallOptions::default().id("hy-login-1"),
        )
        .finish()
        .await;
    let Outcome::AwaitingApproval(waiting) = run.outcome else {
        panic!("{:?}", run.outcome)
    };
    for target in [TransformTarget::Display, TransformTarget::Transcript] {
        let shown = waiting.event.view(target).expect("the approval is shown");
        let RunEventKind::ToolCallApproval { args, .. } = &shown.kind else {
            panic!("{shown:?}")
        };
        assert_eq!(args, &json!({"user": "ann", "password": "[REDACTED]"}), "{target:?}");
    }
    // The raw event and the stored call keep the real arguments: approving runs with them.
    let RunEventKind::ToolCallApproval { args, .. } = &waiting.event.raw.kind else {
        panic!()
    };
    assert_eq!(args["password"], "hunter2");
    let approved = runtime
        .approve("hy-login-1", ResumeOptions::default())
        .await
        .unwrap()
        .finish()
        .await;
    assert!(
        matches!(&approved.outcome, Outcome::Done(out) if out.value() == json!("ann in (7 characters)")),
        "{:?}",
        approved.outcome
    );
}

/// Runs the command line in-process on `registry`: its result and what it printed.
async fn toolsmith(registry: &std::sync::Arc<Registry>, args: &[&str]) -> (Result<std::process::ExitCode, String>, String) {
    let cli = tool_core::cli::Cli::try_parse_args(std::iter::once("toolsmith").chain(args.iter().copied())).unwrap();
    let mut out = Vec::new();
    let result = tool_core::cli::execute(cli, registry.clone(), &mut out).await;
    (result.map_err(|e| e.to_string()), String::from_utf8(out).unwrap())
}

#[tokio::test]
async fn the_cli_shows_a_waiting_calls_arguments_redacted() {
    let dir = tempfile::tempdir().unwrap();
    let store = dir.path().join("pending.db");
    let store = store.to_str().unwrap();
    let registry = std::sync::Arc::new(registry());
    let args = r#"{"user": "ann", "password": "hunter2"}"#;
    let (result, printed) = toolsmith(&registry, &["--store", store, "call", "hy-login", args]).await;
    assert!(result.is_ok(), "{result:?}");
    assert!(printed.contains("tool-call-approval") && !printed.contains("hunter2"), "{printed}");
    let (result, printed) = toolsmith(&registry, &["--store", store, "pending", "--json"]).await;
    assert!(result.is_ok(), "{result:?}");
    let listed: Value = serde_json::from_str(&printed).unwrap();
    assert_eq!(listed[0]["args"], json!({"user": "ann", "password": "[REDACTED]"}), "{printed}");
    let (_, printed) = toolsmith(&registry, &["--store", store, "pending"]).await;
    assert!(printed.contains("hy-login") && !printed.contains("hunter2"), "{printed}");
    // The store keeps the real arguments: approving runs the call with them.
    let id = listed[0]["tool_call_id"].as_str().unwrap();
    let (result, printed) = toolsmith(&registry, &["--store", store, "call", id, "--approve"]).await;
    assert!(result.is_ok(), "{result:?}");
    assert!(printed.contains("ann in (7 characters)"), "{printed}");
}

#[tokio::test]
async fn a_suspended_call_shows_its_arguments_redacted_and_resume_errors_name_plain_values() {
    let runtime = Runtime::new(registry());
    let run = runtime
        .call(
            "hy-replace",
            json!({"path": "a.txt", "access_token": "tok-9"}),
            replace_context().id("hy-replace-1"),
        )
        .finish()
        .await;
    let Outcome::Suspended(waiting) = run.outcome else {
        panic!("{:?}", run.outcome)
    };
    let shown = waiting.display().expect("shown");
    let RunEventKind::ToolCallSuspended { args, .. } = &shown.kind else {
        panic!("{shown:?}")
    };
    assert_eq!(args, &json!({"path": "a.txt", "access_token": "[REDACTED]"}));

    // `overwrite` is not a secret: the resume error says what was wrong with its value.
    let refused = runtime
        .resume("hy-replace-1", json!({"overwrite": "yes"}), ResumeOptions::default())
        .await;
    let Err(tool_core::runtime::RuntimeError::InvalidResume(e)) = refused else {
        panic!("the resume data was taken")
    };
    assert!(e.message().contains(r#""yes" is not of type "boolean""#), "{e}");
    assert!(!e.message().contains("[REDACTED]"), "{e}");
    // The call still waits, and resumes with good data.
    let run = runtime
        .resume("hy-replace-1", json!({"overwrite": true}), ResumeOptions::default())
        .await
        .unwrap()
        .finish()
        .await;
    assert!(
        matches!(&run.outcome, Outcome::Done(out) if out.value() == json!("/srv/files/a.txt: overwrite true")),
        "{:?}",
        run.outcome
    );
}

#[tokio::test]
async fn context_errors_redact_secret_keys_only() {
    let registry = registry();
    let options = CallOptions::with_context(json!({"root": 13579, "api_key": 24680}));
    let e = registry
        .call("hy-replace", json!({"path": "a", "access_token": "t"}), options)
        .await
        .unwrap_err();
    assert_eq!(e.kind(), ErrorKind::InvalidContext, "{e}");
    // `root` is not a secret: its value is named...
    assert!(e.message().contains(r#"13579 is not of type "string""#), "{e}");
    // ...`api_key` is: its value appears nowhere.
    assert!(!e.message().contains("24680"), "{e}");
    assert!(e.message().contains("[REDACTED]"), "{e}");
    assert!(!e.to_json().to_string().contains("24680"));
}

#[tokio::test]
async fn a_request_context_that_is_not_an_object_is_never_echoed() {
    let registry = registry();
    for context in [json!("password=hunter2"), json!(["hunter2"]), json!(12345)] {
        let options = CallOptions::with_context(context.clone());
        let e = registry.call("hy-add", r#"{"a": 1, "b": 2}"#, options).await.unwrap_err();
        assert_eq!(e.kind(), ErrorKind::InvalidContext, "{e}");
        assert!(!e.message().contains("hunter2") && !e.message().contains("12345"), "{e}");
        assert!(e.message().contains("must be a JSON object"), "{e}");
        // Through a runtime, no event shows it either.
        let run = Runtime::new(self::registry())
            .call("hy-add", json!({"a": 1, "b": 2}), CallOptions::with_context(context))
            .finish()
            .await;
        for event in &run.events {
            let all = serde_json::to_string(&event.raw).unwrap();
            assert!(!all.contains("hunter2") && !all.contains("12345"), "{all}");
        }
    }
    let e = registry
        .call(
            "hy-add",
            r#"{"a": 1, "b": 2}"#,
            CallOptions::with_context(json!("password=hunter2")),
        )
        .await
        .unwrap_err();
    assert!(e.message().contains("a string (16 characters)"), "{e}");
}

#[tokio::test]
async fn ordinary_words_are_not_taken_for_secrets() {
    let tool = DynamicTool::builder("hy-words", "Takes ordinary fields")
        .input_schema(json!({
            "type": "object",
            "properties": {"author": {"type": "string"}, "max_tokens": {"type": "integer"}, "secret": {"type": "string"}},
            "required": ["author", "max_tokens", "secret"]
        }))
        .handler(|_, _| async { Ok(json!(null)) })
        .unwrap();
    let registry = Registry::from_iter([tool]);
    let args = r#"{"author": 42, "max_tokens": "many", "secret": 7}"#;
    let e = registry.call("hy-words", args, CallOptions::default()).await.unwrap_err();
    assert!(e.message().contains(r#"42 is not of type "string""#), "{e}");
    assert!(e.message().contains(r#""many" is not of type "integer""#), "{e}");
    assert!(
        e.message().contains(r#""author":42"#) && e.message().contains(r#""secret":"[REDACTED]""#),
        "{e}"
    );
    assert!(!e.message().contains("7 is not"), "{e}");
}
