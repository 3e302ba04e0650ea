//! Bounded quotes: every value quoted in a validation, output, decode or resume error is
//! bounded.

use super::*;

/// Asserts a message quotes at most a bounded part of a huge value, and says how long it was.
fn assert_bounded(message: &str, full: usize) {
    assert!(
        message.len() < 4_000,
        "{} bytes: {}",
        message.len(),
        &message[..400.min(message.len())]
    );
    assert!(message.contains(&format!("{full} characters in all")), "{message}");
}

#[tokio::test]
async fn a_validation_error_quotes_a_huge_argument_bounded() {
    let registry = registry();
    let huge = "x".repeat(900_000);
    let args = json!({"a": huge, "b": 1}).to_string();
    let e = refused(&registry, "hy-add", &args).await;
    // The string, with its quotes, is 900 002 characters.
    assert_bounded(e.message(), 900_002);
    for issue in e.issues() {
        assert!(issue.message.len() < 1_000, "{}", issue.message.len());
    }
    assert!(e.to_json().to_string().len() < 8_000);
    // The same through a runtime: the tool-call event shows the arguments, the error does not
    // repeat them in full.
    let run = Runtime::new(registry).call("hy-add", args, CallOptions::default()).finish().await;
    let Outcome::Failed(e) = run.outcome else {
        panic!("{:?}", run.outcome)
    };
    assert_bounded(e.message(), 900_002);
}

#[tokio::test]
async fn an_output_validation_error_quotes_a_huge_output_bounded() {
    let tool = DynamicTool::builder("hy-big-output", "Returns a huge value where a number belongs")
        .output_schema(json!({"type": "object", "properties": {"n": {"type": "number"}}}))
        .handler(|_, _| async { Ok(json!({"n": "y".repeat(900_000)})) })
        .unwrap();
    let registry = Registry::from_iter([tool]);
    let e = registry.call("hy-big-output", "{}", CallOptions::default()).await.unwrap_err();
    assert_eq!(e.kind(), ErrorKind::InvalidOutput, "{e}");
    assert_bounded(e.message(), 900_002);
}

#[tokio::test]
async fn a_decode_error_quotes_a_huge_argument_bounded() {
    let registry = registry();
    let args = json!({"n": "z".repeat(900_000)}).to_string();
    let e = refused(&registry, "hy-mismatch", &args).await;
    assert_bounded(e.message(), 900_000);
    // What serde said after the value is kept.
    assert!(e.message().contains("expected u32"), "{e}");
}

#[tokio::test]
async fn resume_data_the_tool_cannot_read_is_quoted_bounded() {
    let runtime = Runtime::new(registry());
    let run = runtime
        .call("hy-odd-resume", json!({}), CallOptions::default().id("hy-odd-1"))
        .finish()
        .await;
    assert!(matches!(run.outcome, Outcome::Suspended(_)), "{:?}", run.outcome);
    let run = runtime
        .resume("hy-odd-1", json!({"n": "q".repeat(900_000)}), ResumeOptions::default())
        .await
        .unwrap()
        .finish()
        .await;
    let Outcome::Failed(e) = run.outcome else {
        panic!("{:?}", run.outcome)
    };
    assert_bounded(e.message(), 900_000);
    assert!(e.message().contains("expected u32"), "{e}");
}
