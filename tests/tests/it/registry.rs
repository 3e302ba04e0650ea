//! The registry and the call path, through the public API, with tools from two crates.

extern crate examples;
extern crate toolsmith_tests;

use std::time::Duration;

use serde_json::{Value, json};
use tool_core::prelude::*;
use tool_core::{CallArgs, CancellationToken, ErrorKind, Limits, RegistryProblem};

fn registry() -> &'static Registry {
    Registry::global()
}

async fn call(id: &str, args: impl Into<CallArgs<'static>>) -> Result<tool_core::ToolOutput, ToolError> {
    registry().call(id, args, CallOptions::default()).await
}

#[test]
fn tools_from_two_crates_are_collected_without_a_list() {
    let ids = registry().ids();
    for id in ["test-weather", "test-add", "test-search"] {
        assert!(ids.contains(&id.to_string()), "{id} missing from {ids:?}");
    }
    let crates: std::collections::BTreeSet<String> = registry().tools().iter().map(|t| t.spec().source.crate_name.clone()).collect();
    assert!(crates.contains("toolsmith-tests") && crates.contains("examples"), "{crates:?}");
    assert!(ids.contains(&"weather-tool".to_string()), "{ids:?}");
}

#[test]
fn schemas_follow_the_types() {
    let spec = registry().get("test-weather").unwrap().spec().clone();
    assert!(spec.policy.strict);
    assert_eq!(spec.description, "Get the current weather for a location (test crate copy)");
    assert_eq!(spec.schemas.input["type"], "object");
    assert_eq!(spec.schemas.input["required"], json!(["location"]));
    assert_eq!(
        spec.schemas.input["properties"]["location"]["description"],
        "City name or coordinates"
    );
    let out = spec.schemas.output.unwrap();
    assert_eq!(out["required"], json!(["location", "temperature_celsius", "conditions"]));

    let add = registry().get("test-add").unwrap().spec().clone();
    assert_eq!(add.schemas.input["required"], json!(["a", "b"]));
    assert_eq!(add.schemas.input["properties"]["b"]["description"], "The second addend");
    assert_eq!(add.schemas.output.unwrap()["type"], "number");

    let unit = registry().get("test-unit").unwrap().spec().clone();
    assert_eq!(unit.schemas.output, None);
    assert_eq!(unit.schemas.input["type"], "object");
    assert_eq!(unit.schemas.input["additionalProperties"], false);

    let tenant = registry().get("test-tenant").unwrap().spec().clone();
    let ctx = tenant.schemas.request_context.unwrap();
    assert_eq!(ctx["required"], json!(["tenant", "api_key", "max_rows"]));
}

#[test]
fn schemas_are_generated_once() {
    let a = registry().get("test-add").unwrap();
    let b = toolsmith_tests::add::tool().unwrap();
    assert!(std::ptr::eq(a.spec(), b.spec()), "the registry and tool() share one spec");
}

#[tokio::test]
async fn plain_parameters_and_struct_inputs_are_called() {
    assert_eq!(call("test-add", r#"{"a": 2, "b": 3.5}"#).await.unwrap().value(), json!(5.5));
    let w = call("test-weather", json!({"location": "Oslo"})).await.unwrap();
    assert_eq!(
        w.value(),
        json!({"location": "Oslo", "temperature_celsius": 21.0, "conditions": "sunny"})
    );
    assert_eq!(call("test-unit", "").await.unwrap().value(), Value::Null);
}

#[tokio::test]
async fn an_error_returned_by_the_tool_is_a_value() {
    let e = call("test-weather", json!({"location": ""})).await.unwrap_err();
    assert_eq!(e.kind(), ErrorKind::Execution);
    assert_eq!(e.message(), "location must not be empty");
    assert_eq!(e.tool(), Some("test-weather"));
    let j = e.to_json();
    assert_eq!(j["error"], true);
    assert_eq!(j["kind"], "execution");
}

#[tokio::test]
async fn unknown_ids_list_the_available_ones_closest_first() {
    let e = call("test-wether", json!({})).await.unwrap_err();
    assert_eq!(e.kind(), ErrorKind::UnknownTool);
    let avail = e.details().unwrap()["available"].as_array().unwrap().clone();
    assert_eq!(avail[0], "test-weather");
    assert_eq!(avail.len(), registry().len());
    assert!(e.message().contains("`test-weather`, "), "{e}");
}

#[tokio::test]
async fn invalid_input_names_each_path_and_quotes_the_arguments() {
    let e = call("test-add", r#"{"a": "two", "c": 1}"#).await.unwrap_err();
    assert_eq!(e.kind(), ErrorKind::InvalidInput);
    let paths: Vec<&str> = e.issues().iter().map(|i| i.path.as_str()).collect();
    assert!(paths.contains(&"/a") && paths.contains(&""), "{paths:?}");
    assert!(e.message().contains("Tool `test-add`"), "{e}");
    assert!(e.message().contains(r#"Provided arguments: {"a":"two","c":1}"#), "{e}");
    assert!(e.message().contains("\"b\" is a required property"), "{e}");
}

#[tokio::test]
async fn quoted_arguments_are_truncated_to_200_characters() {
    let long = "x".repeat(500);
    let e = call("test-add", json!({"a": long})).await.unwrap_err();
    let quoted = e.message().split("Provided arguments: ").nth(1).unwrap();
    assert!(quoted.starts_with(r#"{"a":"xxxx"#));
    assert!(quoted.chars().count() < 260, "{quoted}");
    assert!(quoted.contains("characters in all"), "{quoted}");
}

#[tokio::test]
async fn forgiveness_missing_input_stringified_objects_and_null_optionals() {
    // Missing/null top-level input is `{}` (valid for a no-arg tool).
    assert!(call("test-unit", json!(null)).await.is_ok());
    // Object and array fields sent as JSON strings are parsed.
    let out = call(
        "test-search",
        json!({"query": "q", "filter": "{\"field\": \"city\", \"values\": [\"Oslo\"]}", "tags": "[\"a\",\"b\"]"}),
    )
    .await
    .unwrap();
    assert_eq!(out.value()["filter"], json!({"field": "city", "values": ["Oslo"]}));
    assert_eq!(out.value()["tags"], json!(["a", "b"]));
    // null for an optional field is absent (the serde default applies).
    let out = call("test-search", json!({"query": "q", "limit": null, "filter": null}))
        .await
        .unwrap();
    assert_eq!(out.value()["limit"], 10);
    assert_eq!(out.value()["filter"], Value::Null);
    // If forgiveness does not help, the original errors are reported.
    let e = call("test-search", json!({"query": null, "filter": "{not json"}))
        .await
        .unwrap_err();
    let paths: Vec<&str> = e.issues().iter().map(|i| i.path.as_str()).collect();
    assert!(paths.contains(&"/query") && paths.contains(&"/filter"), "{paths:?}");
    assert!(e.message().contains(r#""filter":"{not json""#), "{e}");
}

#[tokio::test]
async fn request_context_is_validated_and_secrets_redacted() {
    let good = CallOptions::with_context(json!({"tenant": "acme", "api_key": "sk-live-123456", "max_rows": 5}));
    let out = registry().call("test-tenant", "{}", good).await.unwrap();
    assert_eq!(out.value(), json!("acme (max 5) key-len 14"));

    let bad = CallOptions::with_context(json!({"tenant": 7, "api_key": 42, "password": "hunter2", "max_rows": "many"}));
    let e = registry().call("test-tenant", "{}", bad).await.unwrap_err();
    assert_eq!(e.kind(), ErrorKind::InvalidContext);
    let text = format!("{} {:?} {}", e, e, e.to_json());
    for secret in ["hunter2", "42"] {
        assert!(!text.contains(secret), "secret {secret} leaked: {text}");
    }
    assert!(text.contains("[REDACTED]"), "{text}");
    let paths: Vec<&str> = e.issues().iter().map(|i| i.path.as_str()).collect();
    assert!(
        paths.contains(&"/tenant") && paths.contains(&"/api_key") && paths.contains(&"/max_rows"),
        "{paths:?}"
    );

    let missing = registry().call("test-tenant", "{}", CallOptions::default()).await.unwrap_err();
    assert_eq!(missing.kind(), ErrorKind::InvalidContext);
    assert!(missing.message().contains("\"tenant\" is a required property"), "{missing}");
}

#[tokio::test]
async fn a_panic_is_caught_and_the_registry_stays_usable() {
    let e = call("test-panic", json!({"message": "kaput"})).await.unwrap_err();
    assert_eq!(e.kind(), ErrorKind::Panic);
    assert!(e.message().contains("boom: kaput"), "{e}");
    assert_eq!(call("test-add", json!({"a": 1, "b": 1})).await.unwrap().value(), json!(2.0));
}

#[tokio::test]
async fn cancellation_and_timeouts_end_as_aborted() {
    let token = CancellationToken::new();
    let options = CallOptions::default().cancellation(token.clone());
    let pending = tokio::spawn(async move { registry().call("test-slow", json!({"millis": 60_000}), options).await });
    tokio::time::sleep(Duration::from_millis(20)).await;
    token.cancel();
    let e = pending.await.unwrap().unwrap_err();
    assert!(e.is_aborted(), "{e:?}");

    let options = CallOptions::default().timeout(Duration::from_millis(30));
    let e = registry().call("test-slow", json!({"millis": 60_000}), options).await.unwrap_err();
    assert!(e.is_aborted() && e.message().contains("timed out"), "{e:?}");

    let done = registry()
        .call("test-slow", json!({"millis": 1}), CallOptions::default())
        .await
        .unwrap();
    assert_eq!(done.value(), json!("done"));
}

#[tokio::test]
async fn oversized_and_overdeep_input_is_refused_before_parsing() {
    let big = format!(r#"{{"a": 1, "b": 2, "pad": "{}"}}"#, "x".repeat(1 << 20));
    let e = call("test-add", big).await.unwrap_err();
    assert_eq!(e.kind(), ErrorKind::InputRejected);
    assert!(e.message().contains("limit of 1048576 bytes"), "{e}");

    let deep = format!("{}{}", "[".repeat(100), "]".repeat(100));
    let e = call("test-add", deep).await.unwrap_err();
    assert_eq!(e.kind(), ErrorKind::InputRejected);
    assert!(e.message().contains("limit is 64"), "{e}");

    // Invalid JSON text is an input error naming the problem, not a panic.
    let e = call("test-add", r#"{"a": 1,"#).await.unwrap_err();
    assert_eq!(e.kind(), ErrorKind::InvalidInput);
    assert!(e.message().contains("not valid JSON"), "{e}");

    // Limits are configurable.
    let small = Registry::from_iter([toolsmith_tests::add::tool()]).with_limits(Limits {
        max_input_bytes: 16,
        max_depth: 2,
    });
    let e = small
        .call("test-add", r#"{"a": 1, "b": 2222222}"#, CallOptions::default())
        .await
        .unwrap_err();
    assert_eq!(e.kind(), ErrorKind::InputRejected);
}

#[tokio::test]
async fn output_is_validated_against_the_output_schema() {
    let liar = DynamicTool::builder("liar", "Claims to return a number")
        .output_schema(json!({"type": "number"}))
        .handler(|_, _| async { Ok(json!("not a number")) })
        .unwrap();
    let r = Registry::from_iter([liar]);
    let e = r.call("liar", "{}", CallOptions::default()).await.unwrap_err();
    assert_eq!(e.kind(), ErrorKind::InvalidOutput);
    assert!(e.message().contains("does not match its output schema"), "{e}");
}

#[tokio::test]
async fn dynamic_tools_are_ordinary_tools() {
    let r = Registry::from_iter([toolsmith_tests::add::tool()]);
    let greet = DynamicTool::builder("remote.greet", "Greets someone")
        .input_schema(json!({"type": "object", "properties": {"name": {"type": "string"}}, "required": ["name"]}))
        .handler(|input, cx| async move {
            Ok(json!(format!(
                "hello {} ({})",
                input["name"].as_str().unwrap_or("?"),
                cx.tool_call_id()
            )))
        })
        .unwrap();
    r.insert(greet).unwrap();
    assert_eq!(r.ids(), vec!["remote.greet".to_string(), "test-add".to_string()]);
    let options = CallOptions::default().id("call_1");
    assert_eq!(
        r.call("remote.greet", json!({"name": "Ann"}), options).await.unwrap().value(),
        json!("hello Ann (call_1)")
    );
    let e = r.call("remote.greet", json!({}), CallOptions::default()).await.unwrap_err();
    assert_eq!(e.kind(), ErrorKind::InvalidInput);
    assert!(r.remove("remote.greet").is_some());
    assert_eq!(
        r.call("remote.greet", json!({"name": "Ann"}), CallOptions::default())
            .await
            .unwrap_err()
            .kind(),
        ErrorKind::UnknownTool
    );

    let bad_root = DynamicTool::builder("x", "d")
        .input_schema(json!({"type": "string"}))
        .handler(|_, _| async { Ok(Value::Null) });
    assert!(bad_root.unwrap_err().to_string().contains("type `string`"));
    let bad_id = DynamicTool::builder("has space", "d").handler(|_, _| async { Ok(Value::Null) });
    assert!(bad_id.unwrap_err().to_string().contains("not valid"));
}

#[test]
fn duplicate_ids_in_an_explicit_set_name_both_definitions() {
    let err = Registry::try_from_tools([toolsmith_tests::add::tool(), toolsmith_tests::add::tool()]).unwrap_err();
    match &err.0[..] {
        [RegistryProblem::DuplicateId { id, first, second }] => {
            assert_eq!(id, "test-add");
            assert_eq!(first.file, "tests/src/lib.rs");
            assert_eq!(second.file, "tests/src/lib.rs");
        }
        other => panic!("{other:?}"),
    }
    let dynamic = DynamicTool::builder("test-add", "imposter")
        .handler(|_, _| async { Ok(Value::Null) })
        .unwrap();
    let r = Registry::from_iter([toolsmith_tests::add::tool()]);
    let e = r.insert(dynamic).unwrap_err();
    assert!(
        e.to_string().contains("tests/src/lib.rs") && e.to_string().contains("<defined at run time>"),
        "{e}"
    );
}

#[tokio::test]
async fn a_tool_that_needs_approval_never_runs_from_a_plain_call() {
    let e = call("test-delete", json!({"id": "r1"})).await.unwrap_err();
    assert_eq!(e.kind(), ErrorKind::ApprovalRequired);
    assert!(e.message().contains("was not run"), "{e}");
    assert_eq!(call("test-transfer", json!({"amount": 10.0})).await.unwrap().value(), json!(10.0));
    assert_eq!(
        call("test-transfer", json!({"amount": 5000.0})).await.unwrap_err().kind(),
        ErrorKind::ApprovalRequired
    );
    // A predicate that panics fails closed.
    assert_eq!(
        call("test-transfer", json!({"amount": -1.0})).await.unwrap_err().kind(),
        ErrorKind::ApprovalRequired
    );
}

#[tokio::test]
async fn forgiveness_reaches_inside_optional_structs() {
    // `filter` is an `Option<Filter>` (an `anyOf` in the schema): errors inside it are reported
    // at `/filter`, yet a null or a stringified array inside it is still repaired.
    let out = call(
        "test-search",
        json!({"query": "q", "filter": {"field": "city", "values": "[\"Oslo\"]"}, "tags": null}),
    )
    .await
    .unwrap();
    assert_eq!(out.value()["filter"], json!({"field": "city", "values": ["Oslo"]}));
    assert_eq!(out.value()["tags"], Value::Null);
}
