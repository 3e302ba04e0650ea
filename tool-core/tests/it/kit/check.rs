//! `Registry::check` and `toolsmith check` against tools broken on purpose, one way each: the
//! check must name each failure with its kind, shrink the input that shows it, and leave good
//! tools and tools with side effects alone.

use std::process::ExitCode;
use std::time::Duration;

use schemars::JsonSchema;
use serde::Deserialize;
use serde_json::{Value, json};
use tool_core::ErrorKind;
use tool_core::check::{CheckOptions, CheckReport, FailureKind, ToolReport};
use tool_core::prelude::*;
use tool_core::tool::DynamicTool;

const N: Value = Value::Null;

fn object(props: Value, required: &[&str]) -> Value {
    json!({"type": "object", "properties": props, "required": required})
}

fn dynamic<F, Fut>(id: &str, schema: Value, handler: F) -> DynamicTool
where
    F: Fn(Value, ToolContext<RequestContext>) -> Fut + Send + Sync + 'static,
    Fut: std::future::Future<Output = Result<Value, ToolError>> + Send + 'static,
{
    DynamicTool::builder(id, format!("The {id} tool"))
        .input_schema(schema)
        .with_spec(|s| s.presentation.mcp.read_only_hint = Some(true))
        .handler(handler)
        .unwrap()
}

/// The schema says a string; the Rust type reads a number.
#[derive(Debug, Deserialize, JsonSchema)]
pub struct Mismatched {
    /// A count
    #[schemars(with = "String")]
    pub count: u32,
}

/// Counts, through a type whose schema does not match it.
#[tool(id = "mismatched", mcp(read_only_hint = true))]
pub async fn mismatched(input: Mismatched) -> Result<u32, ToolError> {
    Ok(input.count)
}

fn broken_tools() -> Vec<DynamicTool> {
    let n = || object(json!({"n": {"type": "integer", "minimum": 0, "maximum": 1000000}}), &["n"]);
    vec![
        // Its `$ref` points nowhere: the registry refuses every call of it.
        dynamic(
            "uncompilable",
            object(json!({"n": {"$ref": "#/$defs/none"}}), &["n"]),
            |_, _| async { Ok(json!(0)) },
        ),
        dynamic(
            "good",
            n(),
            |input, _| async move { Ok(json!(input["n"].as_i64().unwrap_or(0) / 2)) },
        ),
        DynamicTool::builder("strict-good", "A strict tool: unknown fields are mistakes, not inputs")
            .input_schema(n())
            .with_spec(|s| {
                s.presentation.mcp.read_only_hint = Some(true);
                s.policy.strict = true;
            })
            .handler(|input, _| async move { Ok(json!(input["n"].as_i64().unwrap_or(0))) })
            .unwrap(),
        dynamic("panicky", n(), |input, _| async move {
            let n = input["n"].as_i64().unwrap_or(0);
            assert!(n <= 100, "n is too big: {n}");
            Ok(json!(n))
        }),
        dynamic("sleepy", n(), |input, _| async move {
            if input["n"].as_i64().unwrap_or(0) > 10 {
                std::future::pending::<()>().await;
            }
            Ok(json!("woke"))
        }),
        dynamic("speechless", n(), |_, _| async move { Err(ToolError::new("")) }),
        DynamicTool::builder("bad-output", "Returns what its output schema refuses")
            .input_schema(n())
            .output_schema(object(json!({"x": {"type": "integer"}}), &["x"]))
            .with_spec(|s| s.presentation.mcp.read_only_hint = Some(true))
            .handler(|_, _| async move { Ok(json!({"y": 1})) })
            .unwrap(),
        DynamicTool::builder("leaky", "Quotes its API key in errors")
            .input_schema(n())
            .context_schema(object(
                json!({"apiKey": {"type": "string"}, "region": {"type": "string"}}),
                &["apiKey"],
            ))
            .with_spec(|s| s.presentation.mcp.read_only_hint = Some(true))
            .handler(|_, cx| async move {
                let key = cx.request_context().get::<Value>("apiKey").unwrap_or(N);
                Err(ToolError::new(format!("the service refused key {key}")))
            })
            .unwrap(),
        DynamicTool::builder("bad-example", "Its example fails")
            .input_schema(n())
            .with_spec(|s| {
                s.presentation.mcp.read_only_hint = Some(true);
                s.presentation.input_examples = vec![json!({"n": 7}), json!({"n": 8})];
            })
            .handler(|input, _| async move {
                match input["n"].as_i64() {
                    Some(n) if n % 2 == 1 => Err(ToolError::new("odd numbers are not supported")),
                    _ => Ok(json!("even")),
                }
            })
            .unwrap(),
        DynamicTool::builder("needs-approval", "Deletes things")
            .input_schema(n())
            .with_spec(|s| s.policy.require_approval = tool_core::spec::ApprovalRule::Always)
            .handler(|_, _| async move { panic!("must not run without --include-side-effects") })
            .unwrap(),
        DynamicTool::builder("destructive", "Deletes things")
            .input_schema(n())
            .with_spec(|s| s.presentation.mcp.destructive_hint = Some(true))
            .handler(|_, _| async move { panic!("must not run without --include-side-effects") })
            .unwrap(),
        DynamicTool::builder("writes", "Writes under its sandbox root")
            .input_schema(n())
            .context_schema(object(json!({"root": {"type": "string"}}), &["root"]))
            .handler(|_, cx| async move {
                let root = cx.request_context().get::<Value>("root").unwrap_or(N);
                if root != json!("/sandbox") {
                    panic!("ran outside the sandbox: {root}");
                }
                Ok(json!("written"))
            })
            .unwrap(),
    ]
}

fn registry() -> Registry {
    let registry = Registry::try_from_tools(broken_tools()).unwrap();
    registry.insert(mismatched::tool()).unwrap();
    registry
}

fn options() -> CheckOptions {
    CheckOptions {
        cases: 48,
        timeout: Duration::from_secs(1),
        ..CheckOptions::default()
    }
}

fn tool<'a>(report: &'a CheckReport, id: &str) -> &'a ToolReport {
    report
        .tools
        .iter()
        .find(|t| t.id == id)
        .unwrap_or_else(|| panic!("{id} is in the report"))
}

fn kinds(report: &ToolReport) -> Vec<FailureKind> {
    report.failures.iter().map(|f| f.kind).collect()
}

#[tokio::test]
async fn each_broken_tool_fails_with_its_kind_and_good_ones_pass() {
    let report = registry().check(&options()).await;
    assert!(!report.passed());
    for id in ["good", "strict-good"] {
        let good = tool(&report, id);
        assert!(good.failures.is_empty() && good.skipped.is_none(), "{good:?}");
    }
    let good = tool(&report, "good");
    assert!(good.cases > 48, "valid inputs and mistakes ran: {}", good.cases);
    for (id, kind) in [
        ("panicky", FailureKind::Panicked),
        ("sleepy", FailureKind::Hung),
        ("speechless", FailureKind::UnreadableError),
        ("bad-output", FailureKind::InvalidOutput),
        ("leaky", FailureKind::SecretInError),
        ("bad-example", FailureKind::ExampleFailed),
        ("mismatched", FailureKind::ValidInputRefused),
        ("uncompilable", FailureKind::SchemaDoesNotCompile),
    ] {
        assert!(
            kinds(tool(&report, id)).contains(&kind),
            "{id}: {kind:?} in {:?}",
            tool(&report, id).failures
        );
    }
    let example = &tool(&report, "bad-example").failures[0];
    assert_eq!((example.case.as_str(), &example.input), ("input_examples[0]", &json!({"n": 7})));
}

#[tokio::test]
async fn a_failure_is_shrunk_to_the_edge_that_shows_it() {
    let report = registry()
        .check(&CheckOptions {
            ids: vec!["panicky".into()],
            ..options()
        })
        .await;
    assert_eq!(report.tools.len(), 1);
    let failure = &tool(&report, "panicky").failures[0];
    assert_eq!(failure.input, json!({"n": 101}), "the smallest n that panics");
    assert_eq!(failure.case, "valid input");
    assert!(failure.detail.starts_with("panic"), "{}", failure.detail);
    let command = failure.command("panicky");
    assert!(
        command.starts_with(r#"toolsmith call 'panicky' '{"n":101}' --context '"#),
        "{command}"
    );
}

#[tokio::test]
async fn tools_with_side_effects_are_skipped_unless_asked_and_then_need_their_sandbox() {
    let report = registry().check(&options()).await;
    for id in ["needs-approval", "destructive", "writes"] {
        let skipped = tool(&report, id);
        assert!(skipped.skipped.is_some() && skipped.cases == 0, "{skipped:?}");
    }
    let with_effects = CheckOptions {
        ids: vec!["writes".into()],
        include_side_effects: true,
        ..options()
    };
    let report = registry().check(&with_effects).await;
    let why = tool(&report, "writes").skipped.clone().unwrap_or_default();
    assert!(why.contains("`root`") && why.contains("--context"), "{why}");
    let mut sandboxed = with_effects;
    sandboxed.context.insert("root".into(), json!("/sandbox"));
    let report = registry().check(&sandboxed).await;
    let writes = tool(&report, "writes");
    assert!(
        writes.skipped.is_none() && writes.failures.is_empty() && writes.cases > 0,
        "{writes:?}"
    );
}

#[tokio::test]
async fn the_same_seed_makes_the_same_report() {
    let a = serde_json::to_value(registry().check(&options()).await).unwrap();
    let b = serde_json::to_value(registry().check(&options()).await).unwrap();
    assert_eq!(a, b);
}

#[derive(Debug, Deserialize, JsonSchema)]
pub struct Small {
    pub n: u32,
    pub m: Option<i8>,
}

/// Echoes n
#[tool(id = "small", mcp(read_only_hint = true))]
async fn small(input: Small) -> Result<u32, ToolError> {
    Ok(input.n)
}

#[tokio::test]
async fn an_unsized_integer_schema_refuses_what_its_type_cannot_hold() {
    // Once a cause of `valid_input_refused`: schemars writes no maximum for `u32`.
    let schema = tool_core::schema::receive_schema::<Small>();
    assert_eq!(schema["properties"]["n"]["maximum"], json!(u32::MAX));
    assert_eq!(schema["properties"]["m"]["minimum"], json!(i8::MIN));
    let registry = Registry::new();
    registry.insert(small::tool()).unwrap();
    let err = registry
        .call("small", r#"{"n": 4294967296}"#, CallOptions::default())
        .await
        .unwrap_err();
    assert_eq!(err.kind(), ErrorKind::InvalidInput);
    assert!(err.message().contains("4294967295"), "the error names the bound: {}", err.message());
}

#[tokio::test]
async fn the_command_prints_a_table_fails_and_names_the_command_to_repeat() {
    let cli = tool_core::cli::Cli::try_parse_args(["toolsmith", "check", "panicky", "good", "--cases", "24", "--timeout", "1"]).unwrap();
    let mut out = Vec::new();
    let code = tool_core::cli::execute(cli, registry(), &mut out).await.unwrap();
    let text = String::from_utf8(out).unwrap();
    assert_eq!(code, ExitCode::FAILURE, "{text}");
    assert!(text.lines().any(|l| l.starts_with("good") && l.contains(" ok")), "{text}");
    assert!(
        text.lines()
            .any(|l| l.starts_with("panicky") && l.contains("FAILED") && l.contains("panicked")),
        "{text}"
    );
    assert!(text.contains(r#"repeat: toolsmith call 'panicky' '{"n":101}'"#), "{text}");

    // A schema that does not compile fails the check, with the compiler's words.
    let cli = tool_core::cli::Cli::try_parse_args(["toolsmith", "check", "uncompilable"]).unwrap();
    let mut out = Vec::new();
    let code = tool_core::cli::execute(cli, registry(), &mut out).await.unwrap();
    let text = String::from_utf8(out).unwrap();
    assert_eq!(code, ExitCode::FAILURE, "{text}");
    assert!(
        text.lines()
            .any(|l| l.starts_with("uncompilable") && l.contains("FAILED") && l.contains("schema_does_not_compile")),
        "{text}"
    );
    assert!(
        text.contains("the input schema does not compile") && text.contains("/$defs/none"),
        "{text}"
    );

    let cli = tool_core::cli::Cli::try_parse_args(["toolsmith", "check", "good", "--json"]).unwrap();
    let mut out = Vec::new();
    let code = tool_core::cli::execute(cli, registry(), &mut out).await.unwrap();
    assert_eq!(code, ExitCode::SUCCESS);
    let report: Value = serde_json::from_slice(&out).unwrap();
    assert_eq!(report["tools"][0]["id"], "good");
    assert_eq!(report["tools"][0]["failures"], json!([]));

    let cli = tool_core::cli::Cli::try_parse_args(["toolsmith", "check", "nope"]).unwrap();
    let err = tool_core::cli::execute(cli, registry(), &mut Vec::new()).await.unwrap_err();
    assert!(matches!(err, tool_core::cli::CliError::NotFound(_)), "{err:?}");
    assert!(err.to_string().contains("no tool `nope`"), "{err}");
}
