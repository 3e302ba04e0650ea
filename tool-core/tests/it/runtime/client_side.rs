//! Client-side tools (no body: the application answers their calls): the `#[tool]` form
//! without a body, `DynamicToolBuilder::client_side`, the runtime's `AwaitingResult` outcome and
//! `submit_result`, the stored call another runtime answers, streams, catalogs and checks.

use std::sync::Mutex;

use tool_core::testing::ScriptedStream;

use tool_core::catalog::Catalog;
use tool_core::catalog::toolsmith::dispatcher;
use tool_core::check::CheckOptions;
use tool_core::prelude::*;
use tool_core::runtime::{Outcome, PendingKind, ResumeOptions, RunEventKind as K, Runtime, RuntimeError, SqliteStore};
use tool_core::{Dialect, ErrorKind};

/// Where to show the map.
#[derive(Debug, Serialize, Deserialize, JsonSchema)]
pub struct MapInput {
    /// The place to center the map on.
    pub place: String,
    /// Zoom level, 1 (world) to 20 (building).
    #[schemars(range(min = 1, max = 20))]
    pub zoom: u8,
}

/// What the browser showed.
#[derive(Debug, Serialize, Deserialize, JsonSchema)]
pub struct MapShown {
    /// Whether the map is on screen.
    pub shown: bool,
    /// The map's viewport as the browser reports it.
    pub viewport: String,
}

static OUTPUTS: Mutex<Vec<String>> = Mutex::new(Vec::new());

fn seen_output(call: &ToolCallInfo, out: &MapShown) {
    OUTPUTS
        .lock()
        .unwrap()
        .push(format!("{} {} {}", call.tool_name, call.tool_call_id, out.viewport));
}

fn map_for_model(out: &MapShown) -> ModelOutput {
    ModelOutput::Text(format!("The user sees the map ({})", out.viewport))
}

/// Shows a map in the user's browser
#[tool(id = "cs-show-map", on_output = seen_output, to_model_output = map_for_model)]
fn show_map(input: MapInput) -> MapShown;

/// Asks the user to confirm a payment in the app
#[tool(id = "cs-confirm-payment", require_approval)]
fn confirm_payment(
    /// Amount in cents
    amount: u32,
) -> bool;

fn runtime() -> Runtime {
    Runtime::new(Registry::from_iter([show_map::tool(), confirm_payment::tool()]))
}

#[tokio::test]
async fn a_call_waits_for_its_result_which_is_checked_and_completes_it_once() {
    let runtime = runtime();
    let run = runtime
        .call(
            "cs-show-map",
            json!({"place": "Lisbon", "zoom": 12}),
            CallOptions::default().id("call_map"),
        )
        .finish()
        .await;
    let kinds: Vec<&str> = run.events.iter().map(|e| e.raw.type_name()).collect();
    assert_eq!(kinds, ["tool-call", "tool-call-awaiting-result"]);
    let Outcome::AwaitingResult(waiting) = run.outcome else {
        panic!("{:?}", run.outcome)
    };
    assert_eq!(waiting.id(), "call_map");
    let K::ToolCallAwaitingResult { args, output_schema } = &waiting.event.raw.kind else {
        panic!("{:?}", waiting.event.raw.kind)
    };
    assert_eq!(args, &json!({"place": "Lisbon", "zoom": 12}));
    assert_eq!(output_schema.as_ref(), show_map::tool().unwrap().spec().schemas.output.as_ref());
    let pending = runtime.pending().await.unwrap();
    assert_eq!(pending.len(), 1);
    assert_eq!((pending[0].kind, pending[0].kind.as_str()), (PendingKind::ClientResult, "result"));

    // A value that does not match the output schema is refused, listing what is wrong; the call
    // keeps waiting.
    let refused = runtime
        .submit_result("call_map", json!({"shown": "yes"}))
        .await
        .err()
        .expect("refused");
    let RuntimeError::InvalidResult(error) = &refused else {
        panic!("{refused:?}")
    };
    assert_eq!(error.kind(), ErrorKind::InvalidOutput);
    let paths: Vec<&str> = error.issues().iter().map(|i| i.path.as_str()).collect();
    assert!(paths.contains(&"/shown"), "{paths:?}");
    assert!(error.message().contains("viewport"), "{}", error.message());
    assert_eq!(
        runtime.pending().await.unwrap().len(),
        1,
        "a refused result leaves the call waiting"
    );
    assert!(OUTPUTS.lock().unwrap().is_empty(), "on_output runs on an accepted result only");

    // Resume and approve do not answer it.
    assert!(matches!(
        runtime.resume("call_map", json!({}), ResumeOptions::default()).await,
        Err(RuntimeError::WrongKind { .. })
    ));
    assert!(matches!(
        runtime.approve("call_map", ResumeOptions::default()).await,
        Err(RuntimeError::WrongKind { .. })
    ));

    let run = runtime
        .submit_result("call_map", json!({"shown": true, "viewport": "38.7,-9.1 z12"}))
        .await
        .unwrap()
        .finish()
        .await;
    let Outcome::Done(output) = run.outcome else {
        panic!("{:?}", run.outcome)
    };
    assert_eq!(output.value(), json!({"shown": true, "viewport": "38.7,-9.1 z12"}));
    assert_eq!(
        output.for_model(),
        ModelOutput::Text("The user sees the map (38.7,-9.1 z12)".into())
    );
    let kinds: Vec<&str> = run.events.iter().map(|e| e.raw.type_name()).collect();
    assert_eq!(kinds, ["tool-result"]);
    assert_eq!(*OUTPUTS.lock().unwrap(), ["cs-show-map call_map 38.7,-9.1 z12"]);
    assert!(runtime.pending().await.unwrap().is_empty());

    // Completed once.
    let again = runtime.submit_result("call_map", json!({"shown": true, "viewport": "x"})).await;
    assert!(
        matches!(again.err(), Some(RuntimeError::UnknownCall(_))),
        "a second submit is refused"
    );
}

#[tokio::test]
async fn the_call_is_validated_and_gated_before_it_waits() {
    let runtime = runtime();
    let run = runtime
        .call("cs-show-map", json!({"place": "Lisbon", "zoom": 99}), CallOptions::default())
        .finish()
        .await;
    let Outcome::Failed(error) = run.outcome else {
        panic!("{:?}", run.outcome)
    };
    assert_eq!(error.kind(), ErrorKind::InvalidInput);
    assert!(runtime.pending().await.unwrap().is_empty(), "an invalid call never waits");

    // Approval first, then the wait for the result.
    let run = runtime
        .call("cs-confirm-payment", json!({"amount": 1200}), CallOptions::default())
        .finish()
        .await;
    let Outcome::AwaitingApproval(waiting) = run.outcome else {
        panic!("{:?}", run.outcome)
    };
    let approved = runtime
        .approve(waiting.id(), ResumeOptions::default())
        .await
        .unwrap()
        .finish()
        .await;
    let kinds: Vec<&str> = approved.events.iter().map(|e| e.raw.type_name()).collect();
    assert_eq!(kinds, ["tool-call-resumed", "tool-call-awaiting-result"]);
    let Outcome::AwaitingResult(waiting) = approved.outcome else {
        panic!("{:?}", approved.outcome)
    };
    assert_eq!(runtime.pending().await.unwrap()[0].kind, PendingKind::ClientResult);
    let done = runtime.submit_result(waiting.id(), json!(true)).await.unwrap().finish().await;
    assert!(
        matches!(&done.outcome, Outcome::Done(o) if o.value() == json!(true)),
        "{:?}",
        done.outcome
    );
}

#[tokio::test]
async fn a_plain_registry_call_is_a_clear_error() {
    let registry = Registry::from_iter([show_map::tool()]);
    let error = registry
        .call("cs-show-map", json!({"place": "Oslo", "zoom": 3}), CallOptions::default())
        .await
        .unwrap_err();
    assert!(error.message().contains("has no body"), "{}", error.message());
    assert!(error.message().contains("submit_result"), "{}", error.message());
    assert_eq!(error.tool(), Some("cs-show-map"));
    // Validation still comes first.
    let invalid = registry
        .call("cs-show-map", json!({"place": 1}), CallOptions::default())
        .await
        .unwrap_err();
    assert_eq!(invalid.kind(), ErrorKind::InvalidInput);
}

fn dynamic_location() -> DynamicTool {
    DynamicTool::builder("cs-location", "Gets the user's location from the browser")
        .input_schema(json!({"type": "object", "properties": {"accuracy": {"enum": ["city", "exact"]}}, "required": ["accuracy"]}))
        .output_schema(
            json!({"type": "object", "properties": {"lat": {"type": "number"}, "lon": {"type": "number"}}, "required": ["lat", "lon"]}),
        )
        .client_side()
        .unwrap()
}

#[tokio::test]
async fn a_dynamic_tool_without_a_handler_waits_and_is_answered_through_another_runtime() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("pending.sqlite3");
    let asking = Runtime::builder(Registry::try_from_tools([dynamic_location()]).unwrap())
        .store(SqliteStore::open(&path).unwrap())
        .build();
    let run = asking
        .call("cs-location", json!({"accuracy": "city"}), CallOptions::default())
        .finish()
        .await;
    let Outcome::AwaitingResult(waiting) = run.outcome else {
        panic!("{:?}", run.outcome)
    };
    drop(asking);

    // Another runtime over the same store (as another process would) answers it.
    let answering = Runtime::builder(Registry::try_from_tools([dynamic_location()]).unwrap())
        .store(SqliteStore::open(&path).unwrap())
        .build();
    let stored = answering.pending_call(waiting.id()).await.unwrap().unwrap();
    assert_eq!((stored.kind, stored.args), (PendingKind::ClientResult, json!({"accuracy": "city"})));
    let refused = answering
        .submit_result(waiting.id(), json!({"lat": 1}))
        .await
        .err()
        .expect("refused");
    assert!(refused.to_string().contains("lon"), "{refused}");
    let run = answering
        .submit_result(waiting.id(), json!({"lat": 59.9, "lon": 10.7}))
        .await
        .unwrap()
        .finish()
        .await;
    assert!(matches!(&run.outcome, Outcome::Done(o) if o.value() == json!({"lat": 59.9, "lon": 10.7})));
    assert!(answering.pending().await.unwrap().is_empty());
}

#[test]
fn a_client_side_dynamic_tool_refuses_what_needs_a_body() {
    let blocking = DynamicTool::builder("cs-bad", "Blocks").blocking().client_side().unwrap_err();
    assert!(blocking.0.contains("`blocking`"), "{}", blocking.0);
    let suspends = DynamicTool::builder("cs-bad", "Suspends")
        .with_spec(|s| s.schemas.resume = Some(json!({"type": "object"})))
        .client_side()
        .unwrap_err();
    assert!(suspends.0.contains("resume schema"), "{}", suspends.0);
    let no_description = DynamicTool::builder("cs-bad", " ").client_side().unwrap_err();
    assert!(no_description.0.contains("description"), "{}", no_description.0);
}

#[tokio::test]
async fn a_stream_ending_at_a_client_side_tool_ends_awaiting_its_result() {
    let sse = ScriptedStream::anthropic()
        .tool_call_pieces("toolu_map", "cs-show-map", &[r#"{"place": "Po"#, r#"rto", "zoom": 9}"#])
        .sse();
    let runtime = runtime();
    let (mut run, events) = runtime.stream(Dialect::Anthropic, CallOptions::default());
    run.push(sse.as_bytes()).unwrap();
    run.finish().unwrap();
    let run = events.finish().await;
    let kinds: Vec<&str> = run.events.iter().map(|e| e.raw.type_name()).collect();
    assert_eq!(kinds.last(), Some(&"tool-call-awaiting-result"), "{kinds:?}");
    let Outcome::AwaitingResult(waiting) = run.outcome else {
        panic!("{:?}", run.outcome)
    };
    assert_eq!(waiting.id(), "toolu_map");
    assert_eq!(waiting.call.args, json!({"place": "Porto", "zoom": 9}));
}

#[test]
fn catalogs_export_client_side_tools_like_any_other() {
    let with_handler = DynamicTool::builder("cs-location", "Gets the user's location from the browser")
        .input_schema(dynamic_location().spec().schemas.input.clone())
        .output_schema(dynamic_location().spec().schemas.output.clone().unwrap())
        .handler(|_, _| async move { Ok(json!({"lat": 0, "lon": 0})) })
        .unwrap();
    let client = Catalog::new("c", "1", Registry::try_from_tools([dynamic_location()]).unwrap());
    let server = Catalog::new("c", "1", Registry::try_from_tools([with_handler]).unwrap());
    let typed = Catalog::new("t", "1", Registry::from_iter([show_map::tool()]));
    for format in Dialect::ALL {
        let exported = client.export(format).unwrap().document();
        assert_eq!(exported, server.export(format).unwrap().document(), "{format:?}");
        assert!(exported.to_string().contains("cs-location"), "{format:?}: {exported}");
        let typed = typed.export(format).unwrap().document();
        assert!(typed.to_string().contains("place"), "{format:?}: {typed}");
    }
    // The toolsmith format says so, and a loaded catalog keeps the tool client-side.
    let doc = client.to_toolsmith();
    assert_eq!(doc["tools"][0]["clientSide"], json!(true));
    assert!(server.to_toolsmith()["tools"][0].get("clientSide").is_none());
    let never = dispatcher(|id, _, _| async move { Err(ToolError::new(format!("{id} was dispatched"))) });
    let loaded = Catalog::from_toolsmith(&doc, never).unwrap();
    assert!(loaded.tools()[0].spec().behaviour.client_side);
}

#[tokio::test]
async fn check_validates_a_client_side_tools_input_and_runs_nothing() {
    let registry = Registry::from_iter([show_map::tool(), confirm_payment::tool()]);
    let report = registry
        .check(&CheckOptions {
            cases: 16,
            ..CheckOptions::default()
        })
        .await;
    assert!(report.passed(), "{report:?}");
    for tool in &report.tools {
        assert_eq!(tool.skipped, None, "{}: not skipped for side effects: nothing runs", tool.id);
        assert!(tool.cases >= 16, "{}: {}", tool.id, tool.cases);
    }
}
