//! A tool's schemas are compiled once when it enters a registry, and the second validator of a
//! schema (over values, beside the one over text as sent) only when a call first needs it:
//! what a schema that does not compile still meets is a refusal before any call, and what a call
//! given values, or failing, still gets is the full check with every failing path named.

use serde_json::json;
use tool_core::ErrorKind;
use tool_core::prelude::*;

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

#[test]
fn a_schema_that_does_not_compile_is_refused_when_the_tool_is_registered() {
    // Valid against the meta-schema (the builder's check), but its `$ref` points nowhere.
    let tool = DynamicTool::builder("broken", "Has a dangling reference")
        .input_schema(json!({"type": "object", "properties": {"a": {"$ref": "#/$defs/missing"}}}))
        .handler(|_, _| async { Ok(json!(null)) })
        .expect("the meta-schema accepts it");
    let err = Registry::try_from_tools([tool]).expect_err("refused");
    assert!(err.to_string().contains("does not compile"), "{err}");
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
