//! Canaries: a secret planted in a transformed tool's payloads reaches no view and no log line
//! (a property test over streamed, failing, panicking and approved calls).

use super::*;

/// What the canary tools return: the secret itself among other things.
#[derive(Debug, Serialize, JsonSchema)]
pub struct Statement {
    /// The secret.
    pub secret: String,
    /// The amount.
    pub amount: u32,
    /// A note quoting the secret.
    pub note: String,
}

fn canary_input(i: &InputOf<canary>) -> Value {
    json!({"amount": i.amount, "action": i.action, "secret_len": i.secret.len()})
}
fn canary_delta(delta: &str) -> Value {
    json!({"received": delta.len()})
}
fn canary_output(s: &Statement) -> Value {
    json!({"amount": s.amount})
}
fn canary_display_error(e: &ToolError) -> Value {
    let paths: Vec<&str> = e.issues().iter().map(|i| i.path.as_str()).collect();
    json!({"toast": "The statement failed", "kind": e.kind().as_str(), "paths": paths})
}
fn canary_transcript_error(e: &ToolError) -> Value {
    json!(format!("failed ({})", e.kind().as_str()))
}
fn canary_approval(i: &InputOf<canary>) -> Value {
    json!(format!("Allow a statement of {}?", i.amount))
}
fn canary_suspend(a: &Ask) -> Value {
    json!({"question_len": a.question.len()})
}
fn canary_resume(r: &Reply) -> Value {
    json!({"answer": r.answer})
}
fn canary_model_output(s: &Statement) -> ModelOutput {
    ModelOutput::Text(s.note.clone())
}

/// What the canary tools do with their secret.
async fn statement(secret: String, amount: u32, action: String, cx: AskCx) -> Result<Statement, ToolError> {
    tracing::info!(amount, action = %action, "views canary tool ran");
    let note = format!("statement for {secret}");
    match action.as_str() {
        "fail" => Err(ToolError::new(format!("the ledger refused {secret}"))),
        "fail-details" => Err(ToolError::with_details("the ledger refused", json!({"secret": secret}))),
        "panic" => panic!("the ledger crashed on {secret}"),
        "suspend" => match cx.resume_data()? {
            Some(_) => Ok(Statement { secret, amount, note }),
            None => Err(cx.suspend(Ask {
                question: format!("Really print {secret}?"),
            })),
        },
        _ => Ok(Statement { secret, amount, note }),
    }
}

/// Prints a statement (every phase of both views has its own transform)
#[tool(
    id = "views-canary",
    suspend = Ask,
    resume = Reply,
    require_approval = act_needs_approval,
    to_model_output = canary_model_output,
    transform(
        display(input = canary_input, input_delta = canary_delta, output = canary_output, error = canary_display_error,
                approval = canary_approval, suspend = canary_suspend, resume = canary_resume),
        transcript(input = canary_input, output = canary_output, error = canary_transcript_error,
                   approval = canary_approval, suspend = canary_suspend, resume = canary_resume),
    )
)]
pub(super) async fn canary(
    /// The secret
    secret: String,
    /// An amount
    amount: u32,
    /// What to do
    action: String,
    #[ctx] cx: AskCx,
) -> Result<Statement, ToolError> {
    statement(secret, amount, action, cx).await
}

fn canary_min_input(i: &InputOf<canary_min>) -> Value {
    json!({"amount": i.amount, "action": i.action})
}

/// Prints a statement (input and output transforms only: the rest falls back)
#[tool(
    id = "views-canary-min",
    suspend = Ask,
    resume = Reply,
    require_approval = act_needs_approval,
    to_model_output = canary_model_output,
    transform(display(input = canary_min_input, output = canary_output), transcript(input = canary_min_input, output = canary_output))
)]
pub(super) async fn canary_min(
    /// The secret
    secret: String,
    /// An amount
    amount: u32,
    /// What to do
    action: String,
    #[ctx] cx: AskCx,
) -> Result<Statement, ToolError> {
    statement(secret, amount, action, cx).await
}

has_action!(canary, canary_min);

/// Every run of one canary case: events (per flow) for both tools.
async fn canary_flows(runtime: &Runtime, secret: &str, cuts: (usize, usize), streamed_action: &str) -> Vec<(String, Vec<Event>)> {
    let mut flows = Vec::new();
    for tool in ["views-canary", "views-canary-min"] {
        let args = |action: &str| json!({"secret": secret, "amount": 12, "action": action});
        let name = |flow: &str| format!("{tool}/{flow}");
        for action in ["ok", "fail", "fail-details", "panic"] {
            flows.push((
                name(action),
                runtime.call(tool, args(action), CallOptions::default()).collect().await,
            ));
        }
        // Invalid arguments: the canary is fine, another argument is not (as a value and as text).
        let wrong = json!({"secret": secret, "amount": "twelve", "action": "ok"});
        flows.push((
            name("invalid"),
            runtime.call(tool, wrong.clone(), CallOptions::default()).collect().await,
        ));
        flows.push((
            name("invalid-text"),
            runtime.call(tool, wrong.to_string(), CallOptions::default()).collect().await,
        ));
        // Arguments that are not even JSON (cut short): the views get their text, untransformable.
        let text = args("ok").to_string();
        flows.push((
            name("not-json"),
            runtime
                .call(tool, text[..text.len() - 1].to_owned(), CallOptions::default())
                .collect()
                .await,
        ));
        let missing = json!({"secret": secret, "action": "ok"});
        flows.push((name("missing"), runtime.call(tool, missing, CallOptions::default()).collect().await));

        // Approval, approved and declined.
        for (flow, approve) in [("approved", true), ("declined", false)] {
            let mut events = runtime.call(tool, args("approve"), CallOptions::default()).collect().await;
            let id = events.last().map(|e| e.raw.tool_call_id().to_owned()).unwrap();
            assert_eq!(events.last().unwrap().raw.type_name(), "tool-call-approval", "{tool}");
            let next = if approve {
                runtime.approve(&id, ResumeOptions::default()).await
            } else {
                runtime.decline(&id, "not today").await
            };
            events.extend(collect(next).await);
            flows.push((name(flow), events));
        }

        // Suspended (the payload quotes the secret) and resumed.
        if tool == "views-canary" {
            let mut events = runtime.call(tool, args("suspend"), CallOptions::default()).collect().await;
            let id = events.last().map(|e| e.raw.tool_call_id().to_owned()).unwrap();
            assert_eq!(events.last().unwrap().raw.type_name(), "tool-call-suspended");
            events.extend(collect(runtime.resume(&id, json!({"answer": "yes"}), ResumeOptions::default()).await).await);
            flows.push((name("suspended"), events));
        }

        // Streamed input, the secret split across deltas.
        let text = args(streamed_action).to_string();
        let at = text.find(secret).unwrap();
        let (a, b) = (at + cuts.0, at + cuts.1);
        let id = format!("{tool}-stream");
        flows.push((
            name("streamed"),
            streamed(runtime, &id, tool, &[&text[..a], &text[a..b], &text[b..]]).await,
        ));
    }
    flows
}

fn canary_config() -> Config {
    Config {
        cases: 32,
        failure_persistence: None,
        ..Config::default()
    }
}

proptest! {
    #![proptest_config(canary_config())]

    #[test]
    fn canaries_reach_no_view_and_no_log(
        tail in "[A-Za-z0-9]{12}",
        cuts in (1usize..9).prop_flat_map(|a| (Just(a), a + 1..19)),
        streamed_action in prop::sample::select(vec!["ok", "fail", "panic", "approve"]),
    ) {
        let secret = format!("CANARY-{tail}");
        let logs = Logs::default();
        let flows = tracing::subscriber::with_default(logs.clone(), || {
            let rt = tokio::runtime::Builder::new_current_thread().enable_all().build().unwrap();
            rt.block_on(async {
                let runtime = Runtime::new(Registry::from_iter([canary::tool(), canary_min::tool()]));
                canary_flows(&runtime, &secret, cuts, streamed_action).await
            })
        });

        let text_deltas = |views: &mut dyn Iterator<Item = Option<&ShownEvent>>| -> String {
            views
                .filter_map(|e| match e {
                    Some(ShownEvent {
                        kind: RunEventKind::InputDelta { delta },
                        ..
                    }) => delta.as_str().map(str::to_owned),
                    _ => None,
                })
                .collect()
        };
        for (flow, events) in &flows {
            // The canary was really planted: the raw events carry it.
            let raw = serde_json::to_string(&events.iter().map(|e| &e.raw).collect::<Vec<_>>()).unwrap();
            prop_assert!(raw.contains(&secret), "{flow}: {raw}");
            for t in BOTH {
                for e in events {
                    let shown = serde_json::to_string(&e.view(t)).unwrap();
                    prop_assert!(!shown.contains(&secret), "{flow}: {t:?} shows the canary: {shown}");
                }
                // Nor may it show when the view's text deltas are put back together.
                let joined = text_deltas(&mut events.iter().map(|e| e.view(t)));
                prop_assert!(!joined.contains(&secret), "{flow}: {t:?} deltas spell the canary: {joined}");
            }
        }
        for (flow, events) in flows.iter().filter(|(f, _)| f.ends_with("streamed")) {
            // The raw deltas spell the canary, and none of them holds it whole.
            let deltas: Vec<&Event> = events.iter().filter(|e| e.raw.type_name() == "input-delta").collect();
            prop_assert_eq!(deltas.len(), 3, "{}", flow);
            let raw: Vec<ShownEvent> = deltas.iter().map(|e| e.raw.shown()).collect();
            prop_assert!(text_deltas(&mut raw.iter().map(Some)).contains(&secret), "{}", flow);
            for e in deltas {
                prop_assert!(!serde_json::to_string(&e.raw).unwrap().contains(&secret), "{}", flow);
            }
        }
        let text = logs.text();
        prop_assert!(text.contains("views canary tool ran"), "the subscriber captured the tool's own log: {text}");
        prop_assert!(!text.contains(&secret), "a log line has the canary: {text}");
    }
}
