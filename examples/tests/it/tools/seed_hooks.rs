//! The seed's single-hook snippets (`examples::seed_hooks`), driven by a real provider stream:
//! an Anthropic Messages response (server-sent events, `fixtures/seed_hooks_anthropic.sse`)
//! calling each tool, fed through the runtime's stream driver in small chunks. Each hook must
//! receive what the seed says it does; what it received is read back from its log fields.

use std::collections::BTreeMap;
use std::sync::{Mutex, Once};

use serde_json::{Value, json};
use tool_core::Dialect;
use tool_core::prelude::*;
use tool_core::runtime::{Outcome, PendingKind, Runtime};
use tracing::field::{Field, Visit};
use tracing_subscriber::layer::{Context, SubscriberExt};

/// One logged event of `examples::seed_hooks`: its fields, the message included.
type Line = BTreeMap<String, String>;

static LINES: Mutex<Vec<Line>> = Mutex::new(Vec::new());

struct Fields(Line);

impl Visit for Fields {
    fn record_debug(&mut self, field: &Field, value: &dyn std::fmt::Debug) {
        self.0.insert(field.name().to_owned(), format!("{value:?}"));
    }

    fn record_str(&mut self, field: &Field, value: &str) {
        self.0.insert(field.name().to_owned(), value.to_owned());
    }
}

/// Keeps the events the seed-hook tools log.
struct Capture;

impl<S: tracing::Subscriber> tracing_subscriber::Layer<S> for Capture {
    fn on_event(&self, event: &tracing::Event<'_>, _: Context<'_, S>) {
        if event.metadata().target() != "examples::seed_hooks" {
            return;
        }
        let mut fields = Fields(Line::new());
        event.record(&mut fields);
        LINES.lock().unwrap().push(fields.0);
    }
}

fn capture() {
    static INSTALL: Once = Once::new();
    INSTALL.call_once(|| {
        let subscriber = tracing_subscriber::registry().with(Capture);
        tracing::subscriber::set_global_default(subscriber).expect("no other global subscriber in the test binary");
    });
}

/// The lines logged for one call.
fn lines_of(id: &str) -> Vec<Line> {
    let lines = LINES.lock().unwrap();
    lines
        .iter()
        .filter(|l| l.get("tool_call_id").map(String::as_str) == Some(id))
        .cloned()
        .collect()
}

const START: &str = "toolu_01StartA1b2C3d4E5f6G7h8";
const DELTA: &str = "toolu_01DeltaB2c3D4e5F6g7H8i9";
const AVAILABLE: &str = "toolu_01AvailC3d4E5f6G7h8I9j0";
const OUTPUT: &str = "toolu_01OutputD4e5F6g7H8i9J0k";

#[tokio::test]
async fn each_single_hook_snippet_receives_what_the_seed_says() {
    capture();
    let _ = examples::seed_hooks::example_output::tool();
    let path = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/fixtures/seed_hooks_anthropic.sse");
    let sse = std::fs::read(path).unwrap_or_else(|e| panic!("{path}: {e}"));
    let messages = vec![json!({"role": "user", "content": "Run each example tool."})];
    let messages_json = serde_json::to_string(&messages).unwrap();

    let runtime = Runtime::new(Registry::global());
    let (mut run, events) = runtime.stream(Dialect::Anthropic, CallOptions::default().messages(messages));
    for chunk in sse.chunks(11) {
        run.push(chunk).unwrap();
    }
    run.finish().unwrap();
    let run = events.finish().await;

    // onInputStart: toolCallId, messages, abortSignal; called once.
    let start = lines_of(START);
    assert_eq!(start.len(), 1, "{start:?}");
    assert_eq!(start[0]["message"], format!("Tool {START} input streaming started"));
    assert_eq!(start[0]["messages"], messages_json);
    assert_eq!(start[0]["aborted"], "false");

    // onInputDelta: each chunk of the input text as the stream brought it, with toolCallId and
    // messages.
    let delta = lines_of(DELTA);
    let chunks: Vec<&str> = delta.iter().map(|l| l["input_text_delta"].as_str()).collect();
    assert_eq!(chunks.concat(), "{}", "{chunks:?}");
    assert_eq!(chunks.iter().filter(|c| !c.is_empty()).collect::<Vec<_>>(), [&"{", &"}"]);
    for line in &delta {
        assert_eq!(line["message"], format!("Received input chunk: {}", line["input_text_delta"]));
        assert_eq!(line["messages"], messages_json);
    }

    // onInputAvailable: the complete, validated input, typed; once.
    let available = lines_of(AVAILABLE);
    assert_eq!(available.len(), 1, "{available:?}");
    assert_eq!(available[0]["input"], r#"{"location":"Seoul"}"#);
    assert_eq!(available[0]["message"], r#"Tool received complete input: {"location":"Seoul"}"#);
    assert_eq!(available[0]["messages"], messages_json);

    // onOutput: the output `{ result: 'Success' }`, toolCallId and toolName; once.
    let output = lines_of(OUTPUT);
    assert_eq!(output.len(), 1, "{output:?}");
    assert_eq!(output[0]["tool_name"], "example-output");
    assert_eq!(output[0]["output"], r#"{"result":"Success"}"#);
    assert_eq!(output[0]["message"], r#"example-output execution completed: {"result":"Success"}"#);

    // The tool with `execute` ran; the three without wait for the application's result.
    let result = run
        .events
        .iter()
        .find(|e| e.raw.tool_call_id() == OUTPUT && e.raw.type_name() == "tool-result")
        .expect("example-output has a result");
    assert_eq!(serde_json::to_value(&result.raw).unwrap()["result"], json!({"result": "Success"}));
    for id in [START, DELTA, AVAILABLE] {
        assert!(
            run.events
                .iter()
                .any(|e| e.raw.tool_call_id() == id && e.raw.type_name() == "tool-call-awaiting-result"),
            "{id} waits for its result"
        );
    }
    let mut waiting: Vec<(String, &str)> = runtime
        .pending()
        .await
        .unwrap()
        .into_iter()
        .map(|c| (c.tool_call_id, c.kind.as_str()))
        .collect();
    waiting.sort();
    let mut expected = vec![
        (START.to_owned(), "result"),
        (DELTA.to_owned(), "result"),
        (AVAILABLE.to_owned(), "result"),
    ];
    expected.sort();
    assert!(runtime.pending().await.unwrap().iter().all(|c| c.kind == PendingKind::ClientResult));
    assert_eq!(waiting, expected);

    // The application answers them (their output is `()`: `null`).
    for id in [START, DELTA, AVAILABLE] {
        let done = runtime.submit_result(id, Value::Null).await.unwrap().finish().await;
        assert!(matches!(&done.outcome, Outcome::Done(o) if o.is_null()), "{:?}", done.outcome);
    }
    assert!(runtime.pending().await.unwrap().is_empty());
}
