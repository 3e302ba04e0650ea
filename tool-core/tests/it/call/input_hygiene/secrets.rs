//! Secrets: waiting calls' arguments and request contexts are redacted the way errors are, in
//! events, the CLI and resume errors, and only under secret-named keys.

use super::*;

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
