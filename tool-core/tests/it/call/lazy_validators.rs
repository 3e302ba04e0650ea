//! A tool's schemas are compiled when a call of it first needs them (or when
//! `Registry::compile_schemas` is asked), not when it enters a registry; the second validator of
//! a schema (over values, beside the one over text as sent) only when a call first needs it.
//! What a schema that does not compile still meets is a refusal before its tool's first call
//! answers — the tool never runs — and what a call given values, or failing, still gets is the
//! full check with every failing path named.

use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};

use serde_json::{Value, json};
use tool_core::prelude::*;
use tool_core::{CallArgs, ErrorKind, RegistryProblem};

fn lookup() -> DynamicTool {
    DynamicTool::builder("lookup", "Looks up a record")
        .input_schema(json!({
            "type": "object",
            "properties": {"id": {"type": "string", "maxLength": 5}, "limit": {"type": "integer", "minimum": 1}},
            "required": ["id"]
        }))
        .output_schema(json!({"type": "object", "properties": {"id": {"type": "string"}}, "required": ["id"]}))
        .handler(|args, _| async move {
            // Returns what the output schema refuses when asked to.
            Ok(match args.get("id").and_then(|v| v.as_str()) {
                Some("bad") => json!({"name": "no id"}),
                _ => json!({"id": args["id"]}),
            })
        })
        .expect("a tool")
}

/// A tool with `schema` as its input schema that counts its runs.
fn counted(id: &str, schema: Value, runs: &Arc<AtomicUsize>) -> DynamicTool {
    let runs = runs.clone();
    DynamicTool::builder(id, "Counts its runs")
        .input_schema(schema)
        .handler(move |_, _| {
            runs.fetch_add(1, Ordering::SeqCst);
            async { Ok(json!("ran")) }
        })
        .expect("the builder checks only the schema's root")
}

#[tokio::test]
async fn a_schema_that_does_not_compile_refuses_every_call_of_its_tool_which_never_runs() {
    let runs = Arc::new(AtomicUsize::new(0));
    // A dangling `$ref` (valid against the meta-schema), and a keyword with a value of the
    // wrong type (invalid against it): neither compiles.
    let dangling = json!({"type": "object", "properties": {"a": {"$ref": "#/$defs/missing"}}});
    let malformed = json!({"type": "object", "properties": {"a": {"type": "string", "minLength": "three"}}});
    let registry = Registry::try_from_tools([
        counted("dangling", dangling, &runs),
        counted("malformed", malformed, &runs),
        counted("fine", json!({"type": "object", "properties": {"a": {"type": "string"}}}), &runs),
    ])
    .expect("entering a registry compiles nothing");
    for id in ["dangling", "malformed"] {
        // Text, a value, nothing at all: the first call and every later one are refused.
        for args in [
            CallArgs::from(r#"{"a": "x"}"#),
            CallArgs::from(json!({"a": "x"})),
            CallArgs::from(""),
        ] {
            let err = registry.call(id, args, CallOptions::default()).await.expect_err("refused");
            assert_eq!(err.kind(), ErrorKind::Execution, "{}", err.message());
            assert!(
                err.message().contains(&format!("Tool `{id}` cannot be called"))
                    && err.message().contains("the input schema does not compile")
                    && err.message().contains("it did not run"),
                "{}",
                err.message()
            );
        }
    }
    assert_eq!(runs.load(Ordering::SeqCst), 0, "a tool whose schema does not compile never runs");
    // The others are not held back by them.
    let out = registry
        .call("fine", json!({"a": "x"}), CallOptions::default())
        .await
        .expect("runs");
    assert_eq!(out.value(), json!("ran"));
    assert_eq!(runs.load(Ordering::SeqCst), 1);
}

#[test]
fn compile_schemas_names_every_tool_whose_schema_does_not_compile() {
    let runs = Arc::new(AtomicUsize::new(0));
    let fine = || counted("fine", json!({"type": "object", "properties": {"a": {"type": "string"}}}), &runs);
    assert_eq!(Registry::try_from_tools([fine()]).expect("a registry").compile_schemas(), Ok(()));
    let registry = Registry::try_from_tools([
        fine(),
        counted(
            "dangling",
            json!({"type": "object", "properties": {"a": {"$ref": "#/nowhere"}}}),
            &runs,
        ),
        counted(
            "bad_pattern",
            json!({"type": "object", "properties": {"a": {"type": "string", "pattern": "(unclosed"}}}),
            &runs,
        ),
    ])
    .expect("a registry");
    let err = registry.compile_schemas().expect_err("two tools do not compile");
    let ids: Vec<&str> = err
        .0
        .iter()
        .map(|p| match p {
            RegistryProblem::InvalidTool { id, message, .. } => {
                assert!(message.contains("the input schema does not compile"), "{message}");
                id.as_str()
            }
            other => panic!("{other}"),
        })
        .collect();
    assert_eq!(ids, ["bad_pattern", "dangling"]);
    // Asked again, the same answer (each tool compiled once).
    assert_eq!(registry.compile_schemas().expect_err("still").0.len(), 2);
}

#[tokio::test]
async fn every_schema_of_a_tool_is_compiled_before_its_first_call_answers() {
    // The input schema is fine; the output schema's `$ref` dangles: the call is refused before
    // the body runs, not after (its output would have been judged by a validator that is not there).
    let runs = Arc::new(AtomicUsize::new(0));
    let counter = runs.clone();
    let tool = DynamicTool::builder("half_broken", "Returns something")
        .input_schema(json!({"type": "object"}))
        .output_schema(json!({"$ref": "#/$defs/gone"}))
        .handler(move |_, _| {
            counter.fetch_add(1, Ordering::SeqCst);
            async { Ok(json!(1)) }
        })
        .expect("a tool");
    let registry = Registry::try_from_tools([tool]).expect("a registry");
    let err = registry
        .call("half_broken", json!({}), CallOptions::default())
        .await
        .expect_err("refused");
    assert!(err.message().contains("the output schema does not compile"), "{}", err.message());
    assert_eq!(runs.load(Ordering::SeqCst), 0);
}

#[tokio::test]
async fn values_are_checked_by_the_validator_compiled_when_first_needed() {
    let registry = Registry::try_from_tools([lookup()]).expect("a registry");
    let ok = registry.call("lookup", json!({"id": "a1"}), CallOptions::default()).await;
    assert_eq!(ok.expect("valid").value(), json!({"id": "a1"}));
    let err = registry
        .call("lookup", json!({"id": "far too long", "limit": 0}), CallOptions::default())
        .await
        .expect_err("invalid");
    let paths: Vec<&str> = err.issues().iter().map(|i| i.path.as_str()).collect();
    assert!(paths.contains(&"/id") && paths.contains(&"/limit"), "{paths:?}: {}", err.message());
    // Text takes the other validator, compiled with the tool: the same verdicts.
    let err = registry
        .call("lookup", r#"{"id": "far too long"}"#, CallOptions::default())
        .await
        .expect_err("invalid");
    assert!(err.message().contains("/id"), "{}", err.message());
}

#[tokio::test]
async fn an_output_the_schema_refuses_names_its_path() {
    let registry = Registry::try_from_tools([lookup()]).expect("a registry");
    let err = registry
        .call("lookup", json!({"id": "bad"}), CallOptions::default())
        .await
        .expect_err("the output is refused");
    assert_eq!(err.kind(), ErrorKind::InvalidOutput, "{}", err.message());
    assert!(err.message().contains("id"), "{}", err.message());
}

/// Adds two small numbers
#[tool(id = "lazy_add")]
async fn lazy_add(a: u8, b: u8) -> u16 {
    u16::from(a) + u16::from(b)
}

#[tokio::test]
async fn nothing_is_compiled_until_a_call_needs_it() {
    let registry = Registry::try_from_tools([lookup()]).expect("a registry");
    registry.insert(lazy_add::tool()).expect("added");
    assert_eq!(
        registry.schemas_compiled("lookup"),
        Some(false),
        "entering a registry compiles nothing"
    );
    assert_eq!(registry.schemas_compiled("lazy_add"), Some(false));
    // A typed tool whose types imply its schemas: its happy path needs no validator.
    let out = registry
        .call("lazy_add", r#"{"a": 2, "b": 3}"#, CallOptions::default())
        .await
        .expect("runs");
    assert_eq!(out.value(), json!(5));
    assert_eq!(registry.schemas_compiled("lazy_add"), Some(false));
    // Arguments given as a value (as an MCP request carries them) that decode: the same.
    let out = registry
        .call("lazy_add", json!({"a": 4, "b": 5}), CallOptions::default())
        .await
        .expect("runs");
    assert_eq!(out.value(), json!(9));
    assert_eq!(
        registry.schemas_compiled("lazy_add"),
        Some(false),
        "a value that decodes compiles nothing"
    );
    assert_eq!(
        registry.schemas_compiled("lookup"),
        Some(false),
        "one tool's call compiles no other's"
    );
    // Arguments its type refuses take the validator's path, which compiles, once.
    let err = registry
        .call("lazy_add", r#"{"a": 2, "b": 300}"#, CallOptions::default())
        .await
        .expect_err("out of range");
    assert_eq!(err.issues()[0].path, "/b", "{}", err.message());
    assert_eq!(registry.schemas_compiled("lazy_add"), Some(true));
    // A value its type refuses is refused by the validator, naming the path.
    let err = registry
        .call("lazy_add", json!({"a": 2, "b": 300}), CallOptions::default())
        .await
        .expect_err("out of range");
    assert_eq!(err.issues()[0].path, "/b", "{}", err.message());
    // A dynamic tool's first call compiles its schemas.
    registry
        .call("lookup", json!({"id": "a1"}), CallOptions::default())
        .await
        .expect("runs");
    assert_eq!(registry.schemas_compiled("lookup"), Some(true));
}

/// What decides whether a server starts building the compiler's one-time part as it starts
/// serving: a tool whose first call will compile its schemas.
#[tokio::test]
async fn a_server_warms_the_compiler_only_for_tools_that_compile_at_their_first_call() {
    // Types that imply every schema: no call on the happy path compiles anything.
    let implied = Registry::from_iter([lazy_add::tool()]);
    assert!(!implied.compiles_at_first_call());
    // A dynamic tool's schema is checked by its validator at its first call.
    let registry = Registry::try_from_tools([lookup()]).expect("a registry");
    assert!(registry.compiles_at_first_call());
    // Once compiled (by a call, or by being asked), nothing is left to warm.
    registry.compile_schemas().expect("compiles");
    assert!(!registry.compiles_at_first_call());
}
