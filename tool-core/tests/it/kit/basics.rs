//! The test kit tested: a one-line call captures what the call did (and its accessors fail a
//! call that did something else), the fake clock ends a timeout at once, the MCP pair talks to
//! the real server, and snapshots fail on a changed schema. Scripted streams are checked in
//! `kit_streams.rs`.

use std::panic::{AssertUnwindSafe, catch_unwind};
use std::time::Duration;

use tool_core::ErrorKind;
use tool_core::context::Elicitation;
use tool_core::mcp::{McpConfig, McpServer};
use tool_core::prelude::*;
use tool_core::runtime::Runtime;
use tool_core::testing::{self, Hook, McpPair};

#[allow(clippy::ptr_arg)] // a hook takes the tool's output type
fn output_hook(_call: &ToolCallInfo, out: &String) -> Result<(), String> {
    if out.contains("fail") {
        return Err("on_output says no".into());
    }
    Ok(())
}

fn available(_call: &ToolCallInfo, _input: &InputOf<report>) {}

/// Writes a report, reporting progress to its MCP client
#[tool(id = "kit-report", on_input_available = available, on_output = output_hook)]
async fn report(
    #[ctx] cx: ToolContext,
    /// Title
    title: String,
) -> Result<String, ToolError> {
    let tenant: String = cx.request_context().get("tenant").unwrap_or_default();
    cx.writer().write(json!({"stage": "draft"}));
    if let Some(mcp) = cx.mcp() {
        mcp.progress(1.0, Some(2.0), Some("drafted".into()));
        mcp.progress(2.0, Some(2.0), None);
    }
    cx.observe().log(LogLevel::Info, "report written", Some(&json!({"title": title})));
    cx.writer().write(json!({"stage": "done"}));
    Ok(format!("{title} for {tenant}"))
}

#[tokio::test]
async fn a_call_captures_output_chunks_logs_progress_and_hooks() {
    let got = testing::call(report::tool())
        .id("call-1")
        .context(json!({"tenant": "acme"}))
        .args(json!({"title": "Q3"}))
        .await;
    assert_eq!(got.output(), json!("Q3 for acme"));
    assert_eq!(got.chunks(), [json!({"stage": "draft"}), json!({"stage": "done"})]);
    let progress: Vec<(f64, Option<f64>, Option<String>)> = got.progress().into_iter().map(|p| (p.progress, p.total, p.message)).collect();
    assert_eq!(progress, [(1.0, Some(2.0), Some("drafted".into())), (2.0, Some(2.0), None)]);
    let log = got
        .logs()
        .into_iter()
        .find(|l| l.message == "report written")
        .expect("the log is captured");
    assert_eq!(
        (log.level.as_str(), log.field("tool"), log.field("tool_call_id")),
        ("INFO", Some("kit-report"), Some("call-1"))
    );
    assert_eq!(log.field("data"), Some(r#"{"title":"Q3"}"#));
    assert_eq!(
        got.mcp_logs()[0].data,
        json!({"message": "report written", "data": {"title": "Q3"}})
    );
    let hooks: Vec<Hook> = got.hooks().into_iter().map(|h| h.hook).collect();
    assert_eq!(
        hooks,
        [
            Hook::InputAvailable {
                input: json!({"title": "Q3"})
            },
            Hook::Execute {
                input: json!({"title": "Q3"})
            },
            Hook::Output {
                output: json!("Q3 for acme")
            },
        ]
    );
}

#[tokio::test]
async fn a_failing_on_output_hook_is_in_the_logs_and_the_call_still_succeeds() {
    let got = testing::call(report::tool()).args(json!({"title": "fail"})).await;
    assert_eq!(got.output(), json!("fail for "));
    let warning = got
        .logs()
        .into_iter()
        .find(|l| l.message == "on_output hook failed")
        .expect("the warning is captured");
    assert_eq!(warning.field("error"), Some("on_output says no"));
}

/// Sleeps for an hour
#[tool(id = "kit-sleepy")]
async fn sleepy() -> String {
    tokio::time::sleep(Duration::from_secs(3600)).await;
    "woke up".into()
}

#[tokio::test]
async fn the_fake_clock_ends_a_timeout_without_waiting_for_it() {
    let got = testing::call(sleepy::tool()).timeout(Duration::from_secs(5)).fake_clock().await;
    assert_eq!(got.error().kind(), ErrorKind::Aborted, "{:?}", got.error());
    // The clock's resolution is a millisecond: the timer fires in the millisecond after 5 s.
    let at_timeout = Duration::from_secs(5)..Duration::from_millis(5002);
    assert!(
        at_timeout.contains(&got.elapsed()),
        "the call ended at its timeout: {:?}",
        got.elapsed()
    );
    // Without a timeout the same tool runs its hour, on the fake clock too.
    let got = testing::call(sleepy::tool()).fake_clock().await;
    assert_eq!(got.output(), json!("woke up"));
    assert!(got.elapsed() >= Duration::from_secs(3600), "{:?}", got.elapsed());
}

#[tokio::test]
async fn the_accessors_fail_a_call_that_ended_otherwise() {
    let ok = testing::call(report::tool()).args(json!({"title": "Q3"})).await;
    let err = catch_unwind(AssertUnwindSafe(|| ok.error().clone())).unwrap_err();
    assert!(
        panic_text(&err).contains("expected the call to fail, but it ended done"),
        "{}",
        panic_text(&err)
    );
    assert!(catch_unwind(AssertUnwindSafe(|| ok.waiting().id().to_owned())).is_err());
    // A wrong output fails the assertion written with the kit.
    assert!(catch_unwind(AssertUnwindSafe(|| assert_eq!(ok.output(), json!("Q4 for ")))).is_err());

    let refused = testing::call(report::tool()).args(json!({"title": 3})).await;
    assert_eq!(refused.error().kind(), ErrorKind::InvalidInput);
    let err = catch_unwind(AssertUnwindSafe(|| refused.output())).unwrap_err();
    assert!(
        panic_text(&err).contains("expected the call to succeed, but it ended failed"),
        "{}",
        panic_text(&err)
    );
    assert!(
        refused.hooks().iter().all(|h| h.hook.name() != "execute"),
        "refused input never reaches the body"
    );
}

fn panic_text(payload: &Box<dyn std::any::Any + Send>) -> String {
    payload
        .downcast_ref::<String>()
        .cloned()
        .or_else(|| payload.downcast_ref::<&str>().map(|s| (*s).to_owned()))
        .unwrap_or_default()
}

/// Asks the user which format to use
#[tool(id = "kit-ask")]
async fn ask(#[ctx] cx: ToolContext) -> Result<String, ToolError> {
    let mcp = cx.mcp().ok_or_else(|| ToolError::new("no MCP client"))?;
    let schema = json!({"type": "object", "properties": {"format": {"type": "string"}}, "required": ["format"]});
    match mcp.elicit("Which format?".into(), schema).await? {
        Elicitation::Accept { content } => Ok(format!("format {}", content["format"].as_str().unwrap_or("?"))),
        Elicitation::Decline | Elicitation::Cancel => Ok("no format".into()),
    }
}

#[tokio::test]
async fn elicitations_are_answered_from_the_script_and_a_missing_answer_is_an_error() {
    let got = testing::call(ask::tool())
        .elicit(Elicitation::Accept {
            content: json!({"format": "pdf"}),
        })
        .await;
    assert_eq!(got.output(), json!("format pdf"));
    assert_eq!(got.elicitations()[0].0, "Which format?");
    let unanswered = testing::call(ask::tool()).await;
    assert!(
        unanswered.error().message().contains("no answer for this elicitation"),
        "{:?}",
        unanswered.error()
    );
    let direct = testing::call(ask::tool()).without_mcp().await;
    assert_eq!(direct.error().message(), "no MCP client");
}

/// Pays an invoice (a person approves)
#[tool(id = "kit-pay", require_approval)]
async fn pay(
    /// Cents
    cents: u32,
) -> String {
    format!("paid {cents}")
}

#[tokio::test]
async fn a_waiting_call_is_approved_or_declined_in_the_same_test() {
    let got = testing::call(pay::tool()).args(json!({"cents": 12})).await;
    assert_eq!(got.waiting().call.args, json!({"cents": 12}));
    assert!(got.hooks().is_empty(), "the body did not run before approval");
    let got = got.approve().await;
    assert_eq!(got.output(), json!("paid 12"));
    assert_eq!(got.hooks().iter().map(|h| h.hook.name()).collect::<Vec<_>>(), ["execute"]);

    let declined = testing::call(pay::tool()).args(json!({"cents": 7})).await.decline("too much").await;
    assert_eq!(declined.outcome().name(), "declined");
    assert!(declined.hooks().is_empty());
}

#[tokio::test]
async fn the_mcp_pair_lists_calls_answers_elicitations_and_collects_progress() {
    let registry = Registry::from_iter([report::tool(), pay::tool(), ask::tool()]);
    let server = McpServer::new(Runtime::new(registry), McpConfig::default());
    let mcp = McpPair::builder(server)
        .elicit(Elicitation::Accept {
            content: json!({"approved": true}),
        })
        .start()
        .await;
    assert_eq!(mcp.tool_names().await, ["kit-ask", "kit-pay", "kit-report"]);

    let call = mcp.call("kit-report", json!({"title": "Q3"})).await;
    assert_eq!(call.text(), "Q3 for ");
    let progress: Vec<f64> = call.progress.iter().map(|p| p.progress).collect();
    assert_eq!(progress, [1.0, 2.0]);

    // An approval goes to the client's user, who approves from the script.
    let paid = mcp.call("kit-pay", json!({"cents": 5})).await;
    assert_eq!(paid.text(), "paid 5");
    assert_eq!(mcp.elicitations().len(), 1, "one approval question");

    // The tool's own question: no answer left in the script, so the tool fails.
    let asked = mcp.call("kit-ask", json!({})).await;
    assert!(asked.is_error(), "{}", asked.result);
    mcp.elicit(Elicitation::Accept {
        content: json!({"format": "csv"}),
    });
    assert_eq!(mcp.call("kit-ask", json!({})).await.text(), "format csv");

    // A tool error fails `structured()`.
    let wrong = mcp.call("kit-report", json!({"title": 1})).await;
    assert!(wrong.is_error());
    assert!(catch_unwind(AssertUnwindSafe(|| wrong.structured())).is_err());
    mcp.close().await;
}

#[test]
fn a_schema_snapshot_fails_when_the_schema_changes() {
    tool_core::assert_tool_schema_snapshot!(report::tool());
    // The same snapshot, checked against another tool's schema, in a scratch directory so the
    // rejected `.snap.new` lands there.
    let dir = tempfile::tempdir().unwrap();
    let committed = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/it/kit/snapshots/it__kit__basics__schema_kit-report.snap");
    std::fs::copy(&committed, dir.path().join("it__kit__basics__schema_kit-report.snap")).unwrap();
    let mut settings = testing::insta::Settings::clone_current();
    settings.set_snapshot_path(dir.path());
    let changed = settings.bind(|| {
        catch_unwind(|| {
            tool_core::assert_tool_schema_snapshot!("schema_kit-report", pay::tool());
        })
    });
    // (Run with `INSTA_UPDATE=always`, insta rewrites the snapshot instead of failing.)
    let rewritten = std::fs::read_to_string(dir.path().join("it__kit__basics__schema_kit-report.snap")).unwrap()
        != std::fs::read_to_string(&committed).unwrap();
    assert!(changed.is_err() || rewritten, "a changed schema must fail the snapshot");
}
