//! Tool search end to end, per dialect, across an approval and a resume on another instance,
//! against every backend ([`CASES`]: memory, a SQLite file, PostgreSQL). The model's responses
//! are the test kit's [`ScriptedStream`]s (OpenAI Chat, OpenAI Responses, Anthropic) fed to
//! instance A's [`Runtime::stream`]; Gemini, which has no streamed format here, drives the same
//! runtime call by call. The model searches (the generated `search_tools`, run by the runtime,
//! or OpenAI Responses' client-executed `tool_search`, answered with the catalog's
//! `tool_search_output`), the catalog loads what it found into the next request's tools, the
//! model calls a found tool that needs approval, A stores the waiting call, and instance B
//! (another runtime over the same store) approves it: the call runs there with its hook and
//! `to_model_output`, and B reads back the same loaded set. The catalog's deferral rule
//! (`defer_all_except`) is the one the runtime checks (`CallOptions::deferral`).

use std::sync::{Arc, Mutex};

use tool_core::catalog::{Catalog, LoadedTools, SEARCH_TOOL, ToolSearchMode};
use tool_core::prelude::*;
use tool_core::runtime::{Outcome, ResumeOptions, Run, Runtime};
use tool_core::testing::ScriptedStream;
use tool_core::{Dialect, ErrorKind};

use super::{Backend, Case};

/// What `e2e_refund`'s `on_output` hook saw, by order.
static HOOKED: Mutex<Vec<String>> = Mutex::new(Vec::new());

#[allow(clippy::ptr_arg)] // `on_output` takes `fn(&ToolCallInfo, &Output)`.
fn hooked(_call: &ToolCallInfo, out: &String) {
    HOOKED.lock().unwrap_or_else(|p| p.into_inner()).push(out.clone());
}

fn receipt(out: &String) -> ModelOutput {
    ModelOutput::text(format!("receipt: {out}"))
}

/// Refund an order to the customer's card (a person approves)
#[tool(id = "e2e_refund", require_approval, on_output = hooked, to_model_output = receipt)]
async fn refund(
    /// The order to refund
    order: String,
) -> String {
    format!("refunded {order}")
}

/// Translate a text into another language
#[tool(id = "e2e_translate")]
async fn translate(
    /// The text
    text: String,
) -> String {
    text
}

/// The time now
#[tool(id = "e2e_now")]
async fn now() -> String {
    "noon".into()
}

/// The cases every backend passes: one per dialect.
pub const CASES: &[(&str, Case)] = &[
    ("tool_search_end_to_end_openai_chat", |b| {
        Box::pin(end_to_end(b, Dialect::OpenAiChat))
    }),
    ("tool_search_end_to_end_openai_responses", |b| {
        Box::pin(end_to_end(b, Dialect::OpenAiResponses))
    }),
    ("tool_search_end_to_end_anthropic", |b| Box::pin(end_to_end(b, Dialect::Anthropic))),
    ("tool_search_end_to_end_gemini", |b| {
        Box::pin(end_to_end(b, Dialect::GeminiJsonSchema))
    }),
];

/// Every tool name an exported tool list carries, whatever its shape.
fn names_in(document: &Value) -> Vec<String> {
    let mut names = Vec::new();
    let mut stack = vec![document];
    while let Some(value) = stack.pop() {
        match value {
            Value::Object(map) => {
                if let Some(Value::String(name)) = map.get("name") {
                    names.push(name.clone());
                }
                stack.extend(map.values());
            }
            Value::Array(items) => stack.extend(items),
            _ => {}
        }
    }
    names.sort();
    names
}

/// One model response (one tool call) on `runtime`: streamed where the dialect streams, a call
/// of the runtime otherwise.
async fn respond(runtime: &Runtime, dialect: Dialect, (id, name, args): (&str, &str, Value), options: CallOptions) -> Run {
    if dialect == Dialect::GeminiJsonSchema {
        return runtime.call(name, args, options.id(id)).finish().await;
    }
    let script = ScriptedStream::new(dialect).tool_call(id, name, args).chunk_size(7);
    let (mut run, events) = runtime.stream(dialect, options);
    for chunk in script.sse_bytes().chunks(16) {
        run.push(chunk).expect("the scripted response decodes");
    }
    run.finish().expect("the scripted response ends");
    events.finish().await
}

fn backend_name(b: &Backend) -> &'static str {
    match b {
        Backend::Memory(_) => "memory",
        Backend::Sqlite(_) => "sqlite",
        Backend::Postgres { .. } => "postgres",
    }
}

async fn end_to_end(b: Backend, dialect: Dialect) {
    let tools = || Registry::from_iter([refund::tool(), translate::tool(), now::tool()]);
    // Only `e2e_now` loads up front: the rule, not the tools, says so.
    let catalog = Arc::new(Catalog::new("agent", "1.0.0", tools()).defer_all_except(["e2e_now"]));
    let mode = match dialect {
        Dialect::OpenAiResponses => ToolSearchMode::Client,
        _ => ToolSearchMode::Generated,
    };
    let instance = |store| {
        let registry = tools();
        registry.insert(catalog.search_tool(dialect)).unwrap();
        Runtime::builder(registry).shared_store(store).build()
    };
    let (a, other) = (instance(b.open().await), instance(b.open().await));
    let options = |loaded: &LoadedTools| {
        CallOptions::default()
            .loaded_tools(loaded.clone())
            .deferral(catalog.deferral().clone())
    };
    let mut loaded = LoadedTools::default();

    // The first request: what loads up front and the search tool, not the deferred tools.
    let first = names_in(&catalog.export_deferred(dialect, mode, &loaded).unwrap().document());
    if mode == ToolSearchMode::Generated {
        assert_eq!(first, ["e2e_now", SEARCH_TOOL], "{dialect}");
    }
    // Not found yet: refused, though the tool itself declares no deferral.
    let refused = respond(
        &a,
        dialect,
        ("call_early", "e2e_refund", json!({"order": "early"})),
        options(&loaded),
    )
    .await;
    let Outcome::Failed(error) = refused.outcome else {
        panic!("{dialect}: {:?}", refused.outcome)
    };
    assert_eq!(error.kind(), ErrorKind::UnknownTool, "{dialect}");

    // The model searches; the answer loads what it found.
    let query = json!({"query": "refund an order to the card", "limit": 1});
    if mode == ToolSearchMode::Client {
        let output = catalog.tool_search_output("ts_1", &query, &mut loaded).unwrap();
        assert_eq!(output["type"], "tool_search_output");
        assert_eq!(names_in(&output["tools"]), ["e2e_refund"], "{output}");
        // The next request lets the model call it, and only it of the deferred ones.
        let choice = catalog.allowed_tools(dialect, &loaded).unwrap();
        assert_eq!(names_in(&choice["tools"]), ["e2e_now", "e2e_refund"], "{choice}");
    } else {
        let searched = respond(&a, dialect, ("call_search", SEARCH_TOOL, query), options(&loaded)).await;
        let Outcome::Done(answer) = searched.outcome else {
            panic!("{dialect}: {:?}", searched.outcome)
        };
        loaded.record(&answer.value());
        let next = names_in(&catalog.export_deferred(dialect, mode, &loaded).unwrap().document());
        assert_eq!(next, ["e2e_now", "e2e_refund", SEARCH_TOOL], "{dialect}: the next request's tools");
    }
    assert_eq!(loaded.iter().collect::<Vec<_>>(), ["e2e_refund"], "{dialect}");

    // The model calls the found tool: it waits for approval on A, stored with the set.
    let order = format!("{dialect}-{}", backend_name(&b));
    let call_id = format!("call_refund_{dialect}");
    let waiting = respond(&a, dialect, (&call_id, "e2e_refund", json!({ "order": order })), options(&loaded)).await;
    let Outcome::AwaitingApproval(waiting) = waiting.outcome else {
        panic!("{dialect}: {:?}", waiting.outcome)
    };
    assert_eq!(waiting.id(), call_id);
    assert!(
        !HOOKED.lock().unwrap().contains(&format!("refunded {order}")),
        "ran before approval"
    );

    // B approves and runs it: its hook and `to_model_output`, and A's loaded set read back.
    let listed = other.pending().await.unwrap();
    let stored = listed.iter().find(|p| p.tool_call_id == call_id).expect("B lists it");
    assert_eq!(stored.data.loaded_tools.as_ref(), Some(&loaded));
    let stream = other.approve(&call_id, ResumeOptions::default()).await.unwrap();
    assert_eq!(stream.loaded_tools(), Some(&loaded), "{dialect}: B hands back A's set");
    let Outcome::Done(output) = stream.finish().await.outcome else {
        panic!("{dialect}: not run on B")
    };
    assert_eq!(output.value(), json!(format!("refunded {order}")));
    assert_eq!(output.for_model(), ModelOutput::text(format!("receipt: refunded {order}")));
    assert!(
        HOOKED.lock().unwrap().contains(&format!("refunded {order}")),
        "{dialect}: the on_output hook ran"
    );
}
