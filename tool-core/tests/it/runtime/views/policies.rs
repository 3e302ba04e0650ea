//! Runtime transform policies: a policy's value wins over the tool's, one that yields nothing or
//! panics shows placeholders, and `RedactSecrets` hides secret keys, unknown tools' arguments and
//! unparsable arguments.

use super::*;

/// A policy for tests: configures the listed (target, phase) pairs and answers with `answer`.
struct TestPolicy {
    phases: Vec<(TransformTarget, TransformPhase)>,
    answer: fn(TransformPhase, &Value) -> Option<Result<Value, String>>,
    configures_panics: bool,
}

impl TransformPolicy for TestPolicy {
    fn configures(&self, _: &ToolSpec, target: TransformTarget, phase: TransformPhase) -> bool {
        if self.configures_panics {
            panic!("the policy's configures panics");
        }
        self.phases.contains(&(target, phase))
    }

    fn transform(
        &self,
        _: &ToolSpec,
        _: TransformTarget,
        phase: TransformPhase,
        payload: &Value,
    ) -> Option<Result<Value, tool_core::ToolError>> {
        (self.answer)(phase, payload).map(|r| r.map_err(tool_core::ToolError::new))
    }
}

#[tokio::test]
async fn a_policy_value_wins_over_the_tool_and_none_falls_back_to_it() {
    let policy = TestPolicy {
        phases: [every_phase(T::Display), every_phase(T::Transcript)].concat(),
        // Only display input and output get a policy value; everything else is left to the tool.
        answer: |phase, _| match phase {
            P::Input => Some(Ok(json!("policy input"))),
            P::Output => Some(Ok(json!("policy output"))),
            _ => None,
        },
        configures_panics: false,
    };
    let runtime = Runtime::builder(Registry::from_iter([pay::tool()]))
        .transform_policy(policy)
        .build();
    let card = "4000002222222222";
    let events = call(&runtime, "views-pay", "pol-1", json!({"card_number": card, "amount_cents": 1})).await;
    assert_eq!(kinds(&events), ["tool-call", "tool-result"]);
    assert_both(&events[0], "args", json!("policy input"));
    assert_both(&events[1], "result", json!("policy output"));
    // The policy yields nothing for approvals and errors: the tool's transforms show.
    let events = call(&runtime, "views-pay", "pol-2", json!({"card_number": card, "amount_cents": 20_000})).await;
    assert_eq!(
        field(&events[1], T::Display, "args"),
        json!({"question": "Charge 20000 cents to •••• 2222?"})
    );
    assert_eq!(field(&events[1], T::Transcript, "args"), json!({"approval_for_cents": 20_000}));
    let events = call(
        &runtime,
        "views-pay",
        "pol-3",
        json!({"card_number": card, "amount_cents": 3, "memo": "decline"}),
    )
    .await;
    assert_eq!(
        field(&events[1], T::Display, "error"),
        json!({"toast": "Payment failed", "kind": "execution"})
    );
    assert_eq!(field(&events[1], T::Transcript, "error"), json!("Payment failed"));
    assert_eq!(paid_with(card), [1, 3], "execute receives raw values whatever the policy");
}

#[tokio::test]
async fn a_policy_that_configures_a_phase_but_yields_nothing_shows_placeholders() {
    let policy = TestPolicy {
        phases: vec![(T::Display, P::Input), (T::Display, P::Output), (T::Transcript, P::Output)],
        answer: |_, _| None,
        configures_panics: false,
    };
    let runtime = Runtime::builder(Registry::from_iter([plain::tool()]))
        .transform_policy(policy)
        .build();
    let tool = "views-plain";
    let events = streamed(&runtime, "empty-stream", tool, &[r#"{"secret": "pw"#, r#"1", "action": "ok"}"#]).await;
    assert_eq!(
        kinds(&events),
        ["input-streaming-start", "input-delta", "input-delta", "tool-call", "tool-result"]
    );
    for e in &events[1..3] {
        assert_eq!(e.display, None, "the display hides the input: no deltas");
        assert_eq!(e.transcript.as_ref(), Some(&e.raw.shown()));
    }
    assert_eq!(field(&events[3], T::Display, "args"), placeholder(P::Input));
    assert_eq!(events[3].transcript.as_ref(), Some(&events[3].raw.shown()));
    for t in BOTH {
        assert_eq!(field(&events[4], t, "result"), placeholder(P::Output), "{t:?}");
        assert!(!payload(view(&events[4], t)).contains_key("model_output"), "{t:?}");
    }
    // Approval falls back on the (placeholder) input; errors on the error placeholder.
    let events = call(&runtime, tool, "empty-approve", json!({"secret": "pw2", "action": "approve"})).await;
    assert_eq!(field(&events[1], T::Display, "args"), placeholder(P::Input));
    // The transcript hides nothing, but a waiting call's secrets are redacted as in errors.
    assert_eq!(
        field(&events[1], T::Transcript, "args"),
        json!({"secret": "[REDACTED]", "action": "approve"})
    );
    let events = call(&runtime, tool, "empty-fail", json!({"secret": "pw3", "action": "fail"})).await;
    assert_both(&events[1], "error", placeholder(P::Error));
}

#[tokio::test]
async fn a_panicking_policy_never_shows_raw_payloads() {
    for configures_panics in [false, true] {
        let policy = TestPolicy {
            phases: [every_phase(T::Display), every_phase(T::Transcript)].concat(),
            answer: |_, _| panic!("the policy's transform panics"),
            configures_panics,
        };
        let runtime = Runtime::builder(Registry::from_iter([plain::tool(), pay::tool()]))
            .transform_policy(policy)
            .build();
        let id = |s: &str| format!("panicky-{configures_panics}-{s}");
        let events = streamed(
            &runtime,
            &id("stream"),
            "views-plain",
            &[r#"{"secret": "pw"#, r#"1", "action": "ok"}"#],
        )
        .await;
        assert_eq!(
            kinds(&events),
            ["input-streaming-start", "input-delta", "input-delta", "tool-call", "tool-result"]
        );
        for e in &events[1..3] {
            assert_eq!((&e.display, &e.transcript), (&None, &None));
        }
        assert_placeholders(&events[3], &[("args", P::Input)]);
        assert_placeholders(&events[4], &[("result", P::Output)]);
        let events = call(
            &runtime,
            "views-plain",
            &id("approve"),
            json!({"secret": "pw2", "action": "approve"}),
        )
        .await;
        assert_placeholders(&events[1], &[("args", P::Approval)]);
        let events = call(&runtime, "views-plain", &id("fail"), json!({"secret": "pw3", "action": "fail"})).await;
        assert_placeholders(&events[1], &[("error", P::Error)]);
        let events = call(
            &runtime,
            "views-plain",
            &id("suspend"),
            json!({"secret": "pw4", "action": "suspend"}),
        )
        .await;
        assert_placeholders(&events[1], &[("suspend_payload", P::Suspend), ("args", P::Input)]);

        // A tool with its own transforms: the policy yields nothing, so the tool's value shows.
        let card = if configures_panics {
            "4000003333333333"
        } else {
            "4000004444444444"
        };
        let events = call(&runtime, "views-pay", &id("pay"), json!({"card_number": card, "amount_cents": 9})).await;
        assert_eq!(field(&events[0], T::Display, "args")["amount_cents"], 9);
        assert_eq!(field(&events[0], T::Transcript, "args"), json!({"amount_cents": 9}));
        assert_eq!(field(&events[1], T::Transcript, "result"), json!("Paid 9 cents"));
    }
}

// ---------------------------------------------------------------------------------------------
// RedactSecrets
// ---------------------------------------------------------------------------------------------

/// A session.
#[derive(Debug, Serialize, JsonSchema)]
pub struct Session {
    /// Who logged in.
    pub user: String,
    /// The session token.
    pub token: String,
}

fn login_needs_approval(i: &InputOf<login>, _: &RequestContext) -> bool {
    i.user == "root"
}

/// Logs a user in
#[tool(id = "views-login", require_approval = login_needs_approval)]
async fn login(
    /// The user
    user: String,
    /// The password
    password: String,
) -> Result<Session, ToolError> {
    if password.is_empty() {
        return Err(ToolError::with_details(
            "empty password",
            json!({"user": user, "password": password}),
        ));
    }
    Ok(Session {
        token: format!("tok-{user}-{}", password.len()),
        user,
    })
}

#[tokio::test]
async fn redact_secrets_hides_secret_keys_in_both_views_and_drops_deltas() {
    let runtime = Runtime::builder(Registry::from_iter([login::tool()]))
        .transform_policy(RedactSecrets)
        .build();
    let events = streamed(
        &runtime,
        "redact-1",
        "views-login",
        &[r#"{"user": "ann", "pass"#, r#"word": "hunter2"}"#],
    )
    .await;
    assert_eq!(
        kinds(&events),
        ["input-streaming-start", "input-delta", "input-delta", "tool-call", "tool-result"]
    );
    assert_raw(&events[0]);
    for e in &events[1..3] {
        assert_eq!((&e.display, &e.transcript), (&None, &None), "deltas cannot be redacted: dropped");
    }
    assert_eq!(raw_field(&events[3], "args"), json!({"user": "ann", "password": "hunter2"}));
    assert_eq!(raw_field(&events[4], "result"), json!({"user": "ann", "token": "tok-ann-7"}));
    assert_both(&events[3], "args", json!({"user": "ann", "password": "[REDACTED]"}));
    assert_both(&events[4], "result", json!({"user": "ann", "token": "[REDACTED]"}));

    let events = call(&runtime, "views-login", "redact-2", json!({"user": "root", "password": "toor"})).await;
    assert_eq!(kinds(&events), ["tool-call", "tool-call-approval"]);
    assert_both(&events[1], "args", json!({"user": "root", "password": "[REDACTED]"}));

    let events = call(&runtime, "views-login", "redact-3", json!({"user": "bob", "password": ""})).await;
    assert_eq!(kinds(&events), ["tool-call", "tool-error"]);
    for t in BOTH {
        assert_eq!(
            field(&events[1], t, "error")["details"],
            json!({"user": "bob", "password": "[REDACTED]"}),
            "{t:?}"
        );
    }
}

#[tokio::test]
async fn redact_secrets_covers_calls_to_unknown_tools_and_unparsable_arguments() {
    let runtime = Runtime::builder(Registry::from_iter([login::tool()]))
        .transform_policy(RedactSecrets)
        .build();
    // The model names a tool this runtime does not have: its arguments are still redacted.
    let events = call(
        &runtime,
        "views-no-such-tool",
        "redact-unknown",
        json!({"user": "ann", "password": "hunter2"}),
    )
    .await;
    assert_eq!(kinds(&events), ["tool-call", "tool-error"]);
    assert_eq!(raw_field(&events[0], "args")["password"], "hunter2");
    assert_both(&events[0], "args", json!({"user": "ann", "password": "[REDACTED]"}));
    for t in BOTH {
        assert_eq!(
            field(&events[1], t, "error")["kind"],
            raw_field(&events[1], "error")["kind"],
            "{t:?}"
        );
    }
    let events = streamed(
        &runtime,
        "redact-unknown-stream",
        "views-no-such-tool",
        &[r#"{"password": "#, r#""hunter2"}"#],
    )
    .await;
    assert_eq!(
        kinds(&events),
        ["input-streaming-start", "input-delta", "input-delta", "tool-call", "tool-error"]
    );
    for e in &events {
        for t in BOTH {
            let shown = e.view(t).map(|v| serde_json::to_string(v).unwrap()).unwrap_or_default();
            assert!(!shown.contains("hunter2"), "{t:?}: {shown}");
        }
    }
    // Arguments that are not JSON cannot be redacted: the views show the placeholder.
    let events = call(
        &runtime,
        "views-login",
        "redact-text",
        r#"{"user": "ann", "password": "hunter2""#.to_owned(),
    )
    .await;
    assert_eq!(kinds(&events), ["tool-call", "tool-error"]);
    assert_eq!(raw_field(&events[0], "args"), json!(r#"{"user": "ann", "password": "hunter2""#));
    assert_both(&events[0], "args", placeholder(P::Input));
}

#[tokio::test]
async fn redact_secrets_hides_unparsable_arguments_in_errors_too() {
    let runtime = Runtime::builder(Registry::from_iter([login::tool()]))
        .transform_policy(RedactSecrets)
        .build();
    let events = call(
        &runtime,
        "views-login",
        "redact-text-error",
        r#"{"user": "ann", "password": "hunter2""#.to_owned(),
    )
    .await;
    assert_eq!(kinds(&events), ["tool-call", "tool-error"]);
    for t in BOTH {
        let shown = serde_json::to_string(&field(&events[1], t, "error")).unwrap();
        assert!(!shown.contains("hunter2"), "{t:?}: {shown}");
    }
}
