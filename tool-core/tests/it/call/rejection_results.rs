//! A rejected call's result, in every provider format that takes tool results, is what the next
//! request to that provider accepts: the results are written to `tests/ts/fixtures/
//! result-<format>-rejected.json`, which `tests/ts/selftest.sh` type-checks against the
//! providers' SDK types. This test fails when the results and the fixtures part ways;
//! `TOOLSMITH_UPDATE_FIXTURES=1` rewrites the fixtures.

use std::path::PathBuf;

use tool_core::Dialect;
use tool_core::prelude::*;
use tool_core::runtime::{Answer, Decision, Outcome, ResumeOptions, RunEventKind, Runtime};

/// Deletes a repository (asks a person first)
#[tool(id = "reject-delete-repo", require_approval)]
async fn delete_repo(
    /// The repository
    name: String,
) -> String {
    format!("deleted {name}")
}

/// The fixture file's name for a format (as `tests/ts/gen.mjs` reads it).
fn fixture(dialect: Dialect) -> &'static str {
    match dialect {
        Dialect::OpenAiChat => "result-openai-rejected.json",
        Dialect::OpenAiResponses => "result-openai-responses-rejected.json",
        Dialect::Anthropic => "result-anthropic-rejected.json",
        Dialect::Mcp => "result-mcp-rejected.json",
        Dialect::GeminiOpenApi | Dialect::GeminiJsonSchema => "result-gemini-rejected.json",
    }
}

#[tokio::test]
async fn a_rejection_is_a_tool_result_every_provider_accepts() {
    let runtime = Runtime::new(Registry::from_iter([delete_repo::tool()]));
    let options = CallOptions::default().id("call_reject_1");
    let run = runtime.call("reject-delete-repo", json!({"name": "prod"}), options).finish().await;
    let Outcome::AwaitingApproval(w) = run.outcome else {
        panic!("{:?}", run.outcome)
    };
    let reject = Answer::Reject {
        reason: "It is the \"production\" repository.".into(),
    };
    let run = runtime
        .decide(Decision::new(w.call.binding.clone().unwrap(), reject), ResumeOptions::default())
        .await
        .unwrap()
        .finish()
        .await;
    assert!(matches!(run.outcome, Outcome::Declined { .. }), "{:?}", run.outcome);
    let Some(RunEventKind::ToolResult { output }) = run.events.last().map(|e| &e.raw.kind) else {
        panic!("{:?}", run.events)
    };

    let dir = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../tests/ts/fixtures");
    let dialects = [
        Dialect::OpenAiChat,
        Dialect::OpenAiResponses,
        Dialect::Anthropic,
        Dialect::Mcp,
        Dialect::GeminiJsonSchema,
    ];
    for dialect in dialects {
        // Gemini's `functionResponse` names the function answered.
        let mut message = output
            .for_model()
            .to_tool_result_named(dialect, "call_reject_1", "reject-delete-repo");
        let name = fixture(dialect);
        let text = serde_json::to_string(&message).unwrap();
        assert!(text.contains("not approved") && text.contains("production"), "{dialect:?}: {text}");
        assert!(
            !text.contains("is_error\":true") && !text.contains("isError\":true") && !text.contains("\"error\""),
            "a rejection is no error: {text}"
        );
        if dialect == Dialect::Mcp {
            message["structuredContent"] = output.value();
        }
        let written = serde_json::to_string_pretty(&json!([message])).unwrap() + "\n";
        let path = dir.join(name);
        if std::env::var_os("TOOLSMITH_UPDATE_FIXTURES").is_some() {
            std::fs::write(&path, &written).unwrap();
        }
        let stored = std::fs::read_to_string(&path).unwrap_or_default();
        assert_eq!(
            stored,
            written,
            "{} is stale: rerun with TOOLSMITH_UPDATE_FIXTURES=1",
            path.display()
        );
    }
}

/// A model's streamed call (each streaming provider's SSE, through the runtime's stream
/// driver) that waits for approval and is rejected: the result answers that very call id, in
/// the shape the fixtures above hold.
#[tokio::test]
async fn a_streamed_call_rejected_is_answered_under_its_own_id() {
    use tool_core::testing::ScriptedStream;
    let runtime = Runtime::new(Registry::from_iter([delete_repo::tool()]));
    let scripts = [
        (Dialect::OpenAiChat, ScriptedStream::openai_chat(), "tool_call_id"),
        (Dialect::OpenAiResponses, ScriptedStream::openai_responses(), "call_id"),
        (Dialect::Anthropic, ScriptedStream::anthropic(), "tool_use_id"),
    ];
    for (dialect, script, id_field) in scripts {
        let id = format!("call_streamed_{}", dialect.as_str());
        let (mut run, events) = runtime.stream(dialect, CallOptions::default());
        run.push(&script.tool_call(&id, "reject-delete-repo", json!({"name": "prod"})).sse_bytes())
            .unwrap();
        run.finish().unwrap();
        let events = events.collect().await;
        assert!(
            events
                .iter()
                .any(|e| e.raw.type_name() == "tool-call-approval" && e.raw.tool_call_id() == id),
            "{dialect:?}: {events:?}"
        );
        let reject = Answer::Reject {
            reason: "It is the \"production\" repository.".into(),
        };
        let binding = runtime.binding(&id).await.unwrap();
        let run = runtime
            .decide(Decision::new(binding, reject), ResumeOptions::default())
            .await
            .unwrap()
            .finish()
            .await;
        let Some(RunEventKind::ToolResult { output }) = run.events.last().map(|e| &e.raw.kind) else {
            panic!("{:?}", run.events)
        };
        let message = output.for_model().to_tool_result(dialect, &id).unwrap();
        assert_eq!(message[id_field], json!(id), "{dialect:?}: {message}");
        let path = PathBuf::from(env!("CARGO_MANIFEST_DIR"))
            .join("../tests/ts/fixtures")
            .join(fixture(dialect));
        let mut stored: serde_json::Value = serde_json::from_str(&std::fs::read_to_string(path).unwrap()).unwrap();
        stored[0][id_field] = json!(id);
        assert_eq!(stored[0], message, "{dialect:?}: the type-checked shape");
    }
}
