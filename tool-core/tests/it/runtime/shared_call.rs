//! One call is described once: its hooks and its body see the very `CallData` the caller
//! sent (one shared value, not copies of its fields or of the conversation).

use std::sync::{Arc, Mutex};

use serde_json::json;
use tool_core::prelude::*;
use tool_core::runtime::Runtime;

/// Where each step saw the call's data, and the messages it saw there.
static SEEN: Mutex<Vec<(&'static str, usize, usize)>> = Mutex::new(Vec::new());
/// Where each call of a streamed response saw the conversation.
static STREAMED: Mutex<Vec<(String, usize)>> = Mutex::new(Vec::new());

/// Notes where it sees the conversation
#[tool(id = "shared-note")]
pub async fn shared_note(#[ctx] cx: ToolContext) -> String {
    let call = cx.call();
    let at = call.data.messages.as_ptr() as usize;
    STREAMED.lock().unwrap().push((call.tool_call_id.clone(), at));
    format!("{} messages", call.data.messages.len())
}

fn record(step: &'static str, call: &ToolCallInfo) {
    let at = Arc::as_ptr(&call.data) as usize;
    SEEN.lock().unwrap().push((step, at, call.data.messages.len()));
}

fn available(call: &ToolCallInfo, _input: &InputOf<shared_echo>) {
    record("on_input_available", call);
}

fn output(call: &ToolCallInfo, _out: &String) {
    record("on_output", call);
}

/// Echoes its word
#[tool(id = "shared-echo", on_input_available = available, on_output = output)]
pub async fn shared_echo(
    /// A word
    word: String,
    #[ctx] cx: ToolContext,
) -> String {
    record("execute", cx.call());
    word
}

#[tokio::test]
async fn hooks_and_body_share_the_calls_one_data() {
    let runtime = Runtime::new(Registry::from_iter([shared_echo::tool()]));
    let messages: Vec<Value> = (0..100)
        .map(|i| json!({"role": "user", "content": format!("message {i}")}))
        .collect();
    let options = CallOptions::default().id("call_shared").messages(messages);
    let run = runtime.call("shared-echo", json!({"word": "hi"}), options).finish().await;
    match &run.outcome {
        tool_core::runtime::Outcome::Done(output) => assert_eq!(output.value(), json!("hi")),
        other => panic!("the call did not run: {other:?}"),
    }
    let seen = SEEN.lock().unwrap().clone();
    let steps: Vec<_> = seen.iter().map(|(step, ..)| *step).collect();
    assert_eq!(steps, ["on_input_available", "execute", "on_output"]);
    assert!(
        seen.iter().all(|(_, at, _)| *at == seen[0].1),
        "one shared CallData, not copies: {seen:?}"
    );
    assert!(seen.iter().all(|(.., n)| *n == 100), "every step sees the conversation: {seen:?}");
}

#[tokio::test]
async fn the_calls_of_a_streamed_response_share_its_conversation() {
    let messages: Vec<Value> = (0..50).map(|i| json!({"role": "user", "content": i})).collect();
    let got = tool_core::testing::ScriptedStream::anthropic()
        .tool_call_pieces("toolu_1", "shared-note", &["{}"])
        .tool_call_pieces("toolu_2", "shared-note", &["{}"])
        .replay()
        .tools([shared_note::tool()])
        .options(CallOptions::default().messages(messages))
        .await;
    assert_eq!(got.result_of("toolu_1"), json!("50 messages"));
    assert_eq!(got.result_of("toolu_2"), json!("50 messages"));
    let seen = STREAMED.lock().unwrap().clone();
    assert_eq!(seen.len(), 2, "{seen:?}");
    assert_eq!(seen[0].1, seen[1].1, "both calls read the one conversation, not copies: {seen:?}");
}
