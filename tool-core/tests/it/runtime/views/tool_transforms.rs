//! A tool's own transforms: a payment tool with every transform (the views show them, raw keeps
//! the real values) and the fallbacks of a tool that transforms only its input, only its output,
//! or nothing.

use super::*;

#[tokio::test]
async fn views_show_the_transforms_and_raw_keeps_the_real_values() {
    let runtime = Runtime::new(Registry::from_iter([pay::tool()]));
    let card = "4000001111111111";

    // A charge that runs at once.
    let events = call(&runtime, "views-pay", "pay-1", json!({"card_number": card, "amount_cents": 500})).await;
    assert_eq!(kinds(&events), ["tool-call", "tool-result"]);
    let c = &events[0];
    assert_eq!(raw_field(c, "args"), json!({"card_number": card, "amount_cents": 500}));
    assert_eq!(field(c, T::Display, "args"), json!({"card": "•••• 1111", "amount_cents": 500}));
    assert_eq!(field(c, T::Transcript, "args"), json!({"amount_cents": 500}));
    let r = &events[1];
    assert_eq!(raw_field(r, "result"), json!({"card_number": card, "amount_cents": 500}));
    assert_eq!(
        raw_field(r, "model_output"),
        json!({"type": "text", "value": format!("Charged card {card}")})
    );
    assert_eq!(field(r, T::Display, "result"), json!({"paid_cents": 500, "card": "•••• 1111"}));
    assert_eq!(field(r, T::Transcript, "result"), json!("Paid 500 cents"));
    for t in BOTH {
        // The model output quotes the raw output: a view that rewrites the output drops it.
        assert!(!payload(view(r, t)).contains_key("model_output"), "{t:?}");
    }
    assert_eq!(paid_with(card), [500], "execute received the raw card number");

    // A charge that waits for approval: the views show the approval transforms.
    let events = call(&runtime, "views-pay", "pay-2", json!({"card_number": card, "amount_cents": 25_000})).await;
    assert_eq!(kinds(&events), ["tool-call", "tool-call-approval"]);
    let a = &events[1];
    assert_eq!(raw_field(a, "args"), json!({"card_number": card, "amount_cents": 25_000}));
    assert_eq!(
        field(a, T::Display, "args"),
        json!({"question": "Charge 25000 cents to •••• 1111?"})
    );
    assert_eq!(field(a, T::Transcript, "args"), json!({"approval_for_cents": 25_000}));
    assert_eq!(paid_with(card), [500], "nothing ran before the approval");

    let events = collect(runtime.approve("pay-2", ResumeOptions::default()).await).await;
    assert_eq!(kinds(&events), ["tool-call-resumed", "tool-result"]);
    // The decision is not a tool payload any view hides.
    assert_raw(&events[0]);
    assert_eq!(
        field(&events[1], T::Display, "result"),
        json!({"paid_cents": 25_000, "card": "•••• 1111"})
    );
    assert_eq!(field(&events[1], T::Transcript, "result"), json!("Paid 25000 cents"));
    assert_eq!(raw_field(&events[1], "result")["card_number"], card);
    assert_eq!(paid_with(card), [500, 25_000]);

    // A declined charge: the error transforms.
    let args = json!({"card_number": card, "amount_cents": 700, "memo": "decline"});
    let events = call(&runtime, "views-pay", "pay-3", args.clone()).await;
    assert_eq!(kinds(&events), ["tool-call", "tool-error"]);
    assert_eq!(raw_field(&events[0], "args"), args);
    let e = &events[1];
    assert_eq!(raw_field(e, "error")["message"], format!("The bank declined card {card}"));
    assert_eq!(
        field(e, T::Display, "error"),
        json!({"toast": "Payment failed", "kind": "execution"})
    );
    assert_eq!(field(e, T::Transcript, "error"), json!("Payment failed"));
    assert_eq!(paid_with(card), [500, 25_000, 700]);

    // Invalid arguments: the model's own arguments do not fit the input type, so the input
    // transform cannot run and the views show the placeholder; the error transform still runs.
    let events = call(&runtime, "views-pay", "pay-4", json!({"card_number": card, "amount_cents": "lots"})).await;
    assert_eq!(kinds(&events), ["tool-call", "tool-error"]);
    assert_eq!(raw_field(&events[0], "args"), json!({"card_number": card, "amount_cents": "lots"}));
    assert_both(&events[0], "args", placeholder(P::Input));
    assert_eq!(
        field(&events[1], T::Display, "error"),
        json!({"toast": "Payment failed", "kind": "invalid_input"})
    );
    assert_eq!(field(&events[1], T::Transcript, "error"), json!("Payment failed"));
    assert_eq!(paid_with(card), [500, 25_000, 700]);
}

// ---------------------------------------------------------------------------------------------
// Fallbacks
// ---------------------------------------------------------------------------------------------

fn input_only_display(i: &InputOf<input_only>) -> Value {
    json!({"action": i.action})
}

/// Display transforms its input only
#[tool(id = "views-input-only", require_approval = act_needs_approval, suspend = Ask, resume = Reply, transform(display(input = input_only_display)))]
pub(super) async fn input_only(
    /// A secret
    secret: String,
    /// What to do
    action: String,
    #[ctx] cx: AskCx,
) -> Result<String, ToolError> {
    act(secret, action, cx).await
}

#[allow(clippy::ptr_arg)] // A transform takes `&Output`, here `&String`.
fn output_only_display(out: &String) -> Value {
    json!(out.len())
}

/// Display transforms its output only
#[tool(id = "views-output-only", require_approval = act_needs_approval, suspend = Ask, resume = Reply, transform(display(output = output_only_display)))]
pub(super) async fn output_only(
    /// A secret
    secret: String,
    /// What to do
    action: String,
    #[ctx] cx: AskCx,
) -> Result<String, ToolError> {
    act(secret, action, cx).await
}

has_action!(input_only, output_only);

#[tokio::test]
async fn a_view_that_hides_the_input_drops_deltas_and_reuses_the_input_transform() {
    let runtime = Runtime::new(Registry::from_iter([input_only::tool()]));
    let tool = "views-input-only";

    let events = streamed(&runtime, "io-stream", tool, &[r#"{"secret": "pw"#, r#"1", "action": "ok"}"#]).await;
    assert_eq!(
        kinds(&events),
        ["input-streaming-start", "input-delta", "input-delta", "tool-call", "tool-result"]
    );
    for e in &events[1..3] {
        assert_eq!(e.display, None, "no input_delta transform: the display drops deltas");
        assert_eq!(e.transcript.as_ref(), Some(&e.raw.shown()), "the transcript hides nothing");
    }
    assert_eq!(field(&events[3], T::Display, "args"), json!({"action": "ok"}));
    assert_eq!(field(&events[3], T::Transcript, "args"), json!({"secret": "pw1", "action": "ok"}));
    // The output is not hidden.
    assert_raw(&events[4]);

    // No approval transform: the approval shows the input transform's value.
    let events = call(&runtime, tool, "io-approve", json!({"secret": "pw2", "action": "approve"})).await;
    assert_eq!(kinds(&events), ["tool-call", "tool-call-approval"]);
    assert_eq!(field(&events[1], T::Display, "args"), json!({"action": "approve"}));
    // The transcript hides nothing, but a waiting call's secrets are redacted as in errors.
    assert_eq!(
        field(&events[1], T::Transcript, "args"),
        json!({"secret": "[REDACTED]", "action": "approve"})
    );
    assert_eq!(raw_field(&events[1], "args")["secret"], "pw2");

    // No error transform: errors quote the input, so the display shows the placeholder.
    for (id, args) in [
        ("io-fail", json!({"secret": "pw3", "action": "fail"})),
        ("io-invalid", json!({"secret": "pw4", "action": 5})),
    ] {
        let events = call(&runtime, tool, id, args).await;
        assert_eq!(kinds(&events), ["tool-call", "tool-error"], "{id}");
        assert_eq!(field(&events[1], T::Display, "error"), placeholder(P::Error), "{id}");
        assert_eq!(events[1].transcript.as_ref(), Some(&events[1].raw.shown()), "{id}");
    }

    // A suspended call's arguments are the input: the input transform (or its placeholder).
    let events = call(&runtime, tool, "io-suspend", json!({"secret": "pw5", "action": "suspend"})).await;
    assert_eq!(kinds(&events), ["tool-call", "tool-call-suspended"]);
    assert_eq!(field(&events[1], T::Display, "args"), json!({"action": "suspend"}));
}

#[tokio::test]
async fn a_view_that_hides_the_output_hides_errors_but_not_the_input() {
    let runtime = Runtime::new(Registry::from_iter([output_only::tool()]));
    let tool = "views-output-only";
    let events = streamed(&runtime, "oo-stream", tool, &[r#"{"secret": "pw"#, r#"1", "action": "ok"}"#]).await;
    assert_eq!(
        kinds(&events),
        ["input-streaming-start", "input-delta", "input-delta", "tool-call", "tool-result"]
    );
    for e in &events[..4] {
        assert_raw(e);
    }
    assert_eq!(field(&events[4], T::Display, "result"), json!("done with pw1".len()));
    assert_eq!(events[4].transcript.as_ref(), Some(&events[4].raw.shown()));

    let events = call(&runtime, tool, "oo-approve", json!({"secret": "pw2", "action": "approve"})).await;
    // The input is not hidden, but a waiting call's secrets are redacted as in errors.
    assert_both(&events[1], "args", json!({"secret": "[REDACTED]", "action": "approve"}));
    assert_eq!(raw_field(&events[1], "args")["secret"], "pw2");

    let events = call(&runtime, tool, "oo-fail", json!({"secret": "pw3", "action": "fail"})).await;
    assert_eq!(kinds(&events), ["tool-call", "tool-error"]);
    assert_eq!(field(&events[1], T::Display, "error"), placeholder(P::Error));
    assert_eq!(events[1].transcript.as_ref(), Some(&events[1].raw.shown()));
}

#[tokio::test]
async fn a_tool_without_transforms_shows_everything_raw() {
    let runtime = Runtime::new(Registry::from_iter([plain::tool()]));
    let tool = "views-plain";
    let mut all = streamed(&runtime, "pl-stream", tool, &[r#"{"secret": "pw"#, r#"1", "action": "ok"}"#]).await;
    assert_eq!(
        kinds(&all),
        ["input-streaming-start", "input-delta", "input-delta", "tool-call", "tool-result"]
    );
    assert_eq!(
        raw_field(&all[4], "model_output"),
        json!({"type": "text", "value": "model sees done with pw1"})
    );
    all.extend(call(&runtime, tool, "pl-fail", json!({"secret": "pw2", "action": "fail"})).await);
    all.extend(call(&runtime, tool, "pl-invalid", json!({"secret": "pw2", "action": []})).await);
    all.extend(call(&runtime, tool, "pl-approve", json!({"secret": "pw3", "action": "approve"})).await);
    all.extend(collect(runtime.decline("pl-approve", "not now").await).await);
    all.extend(call(&runtime, tool, "pl-suspend", json!({"secret": "pw4", "action": "suspend"})).await);
    all.extend(
        collect(
            runtime
                .resume("pl-suspend", json!({"answer": "yes"}), ResumeOptions::default())
                .await,
        )
        .await,
    );
    assert_eq!(all.len(), 5 + 2 + 2 + 2 + 2 + 2 + 2, "{:?}", kinds(&all));
    for e in &all {
        if matches!(e.raw.type_name(), "tool-call-approval" | "tool-call-suspended") {
            // A waiting call's arguments are put before a person: redacted as errors are
            // (only the secret-named key), everything else as it is.
            let mut expected = raw_field(e, "args");
            assert_ne!(expected["secret"], "[REDACTED]");
            expected["secret"] = json!("[REDACTED]");
            assert_both(e, "args", expected);
            for t in BOTH {
                let (mut shown, mut raw) = (payload(view(e, t)), payload(&e.raw));
                shown.remove("args");
                raw.remove("args");
                assert_eq!(shown, raw, "{t:?}");
            }
        } else {
            assert_raw(e);
        }
    }
}
