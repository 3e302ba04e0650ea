//! Known leaks outside the views: the decision key and a retried background task's error reach
//! no event, error or log line.

use super::*;

fn bg_error(_: &ToolError) -> Value {
    json!("The task failed")
}

/// Fails in the background, quoting its secret
#[tool(id = "views-bg", background(enabled = true, max_retries = 1), transform(display(error = bg_error), transcript(error = bg_error)))]
async fn bg(
    /// A secret
    secret: String,
) -> Result<String, ToolError> {
    Err(ToolError::new(format!("the task failed on {secret}")))
}

#[test]
fn the_decision_key_reaches_no_event_error_or_log_line() {
    const KEY: &str = "CANARY-decision-key-0123456789abcdef";
    let logs = Logs::default();
    let seen = tracing::subscriber::with_default(logs.clone(), || {
        let rt = tokio::runtime::Builder::new_current_thread().enable_all().build().unwrap();
        rt.block_on(async {
            let key = DecisionKey::from_bytes(KEY.as_bytes()).unwrap();
            let runtime = Runtime::builder(Registry::from_iter([pay::tool()]))
                .decision_key(key.clone())
                .build();
            let args = json!({"card_number": "4111", "amount_cents": 50_000});
            let run = runtime
                .call("views-pay", args, CallOptions::default().id("views-tok"))
                .finish()
                .await;
            let mut seen = format!("{runtime:?} {key:?} {:?}", run.outcome);
            let binding = runtime.binding("views-tok").await.unwrap();
            let approve = Decision::new(binding, Answer::Approve);
            let token = runtime.sign_decision(&approve, std::time::Duration::from_secs(60)).unwrap();
            let expired = key.sign(&approve, 1);
            let tampered = format!("{token}x");
            for bad in [expired.as_str(), tampered.as_str(), "tsd1.e30.AAAA", "junk"] {
                let err = runtime.decide_token(bad, Default::default()).await.err().unwrap();
                seen.push_str(&format!(" {err} {err:?}"));
            }
            let run = runtime.decide_token(&token, Default::default()).await.unwrap().finish().await;
            seen.push_str(&format!(" {:?} {token}", run.outcome));
            for e in &run.events {
                seen.push_str(&serde_json::to_string(&e.raw).unwrap());
            }
            seen
        })
    });
    assert!(seen.contains("tsd1."), "the flow ran: {seen}");
    assert!(!seen.contains(KEY), "the key shows: {seen}");
    let text = logs.text();
    assert!(!text.is_empty() && !text.contains(KEY), "a log line has the key: {text}");
}

#[test]
fn a_retried_background_error_is_not_logged() {
    let logs = Logs::default();
    let events = tracing::subscriber::with_default(logs.clone(), || {
        let rt = tokio::runtime::Builder::new_current_thread().enable_all().build().unwrap();
        rt.block_on(call(
            &Runtime::new(Registry::from_iter([bg::tool()])),
            "views-bg",
            "bg-1",
            json!({"secret": "CANARY-bg"}),
        ))
    });
    assert_eq!(events.last().map(|e| e.raw.type_name()), Some("background-task-failed"));
    let failed = events.last().unwrap();
    assert!(serde_json::to_string(&failed.raw).unwrap().contains("CANARY-bg"));
    for t in BOTH {
        assert_eq!(field(failed, t, "error"), json!("The task failed"), "the views are fine");
    }
    assert!(!logs.text().contains("CANARY-bg"), "{}", logs.text());
}
