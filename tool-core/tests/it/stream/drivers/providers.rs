//! The providers' fixtures: OpenAI Chat Completions (and compatible servers' quirks), the
//! Responses API and Anthropic, parallel and sequential calls with their expected arguments.

use super::*;

fn weather() -> Value {
    json!({"city": "Paris", "unit": "celsius", "days": 3})
}

fn search() -> Value {
    json!({"pattern": "C:\\Users\\*\\\"notes\".txt", "query": "café ☕ 🎉\nnext", "limit": 10})
}

#[test]
fn openai_chat_parallel_interleaved() {
    let out = decode_every_way(Dialect::OpenAiChat, "openai_chat_parallel.sse");
    assert_eq!(out.error, None);
    assert_eq!(skeleton(&out.events), expand("S0 D0 S1 D1 (D0 D1)x5 D1 D1 A0 A1"));
    check_calls(
        &out.events,
        &[
            call("call_7Hq2Wd0sMZbVx1", "get_weather", weather()),
            call("call_Rk4pL9zTn3YcQe", "search_files", search()),
        ],
    );
    // The deltas are the provider's pieces, escapes split as sent.
    let deltas: Vec<&str> = out
        .events
        .iter()
        .filter_map(|e| match e {
            ToolCallEvent::InputDelta { index: 1, delta, .. } => Some(delta.as_str()),
            _ => None,
        })
        .collect();
    assert_eq!(deltas[1], "tern\": \"C:\\");
    assert_eq!(deltas[3], "\"notes\\\".txt\", \"query\": \"caf\\u0");
    assert_eq!(deltas[5], "🎉\\");
}

#[test]
fn openai_chat_compatible_server_quirks() {
    // BOM, bare CR line endings, `data:` without a space, one chunk over two data lines, id/retry/
    // unknown fields, both calls at index 0 with their own ids, no finish_reason and no [DONE].
    let out = decode_every_way(Dialect::OpenAiChat, "openai_chat_compat.sse");
    assert_eq!(out.error, None);
    assert_eq!(skeleton(&out.events), expand("S0 D0 S1 D1x8 A0 A1"));
    check_calls(
        &out.events,
        &[call("call_a1", "get_weather", weather()), call("call_b2", "search_files", search())],
    );
}

#[test]
fn openai_responses_parallel_interleaved() {
    let out = decode_every_way(Dialect::OpenAiResponses, "openai_responses_parallel.sse");
    assert_eq!(out.error, None);
    assert_eq!(skeleton(&out.events), expand("S0 S1 (D0 D1)x6 D1 D1 A0 A1"));
    check_calls(
        &out.events,
        &[
            call("call_FzKqT1vW8xYb2N", "get_weather", weather()),
            call("call_Lm3nB7cD9eFg0H", "search_files", search()),
        ],
    );
}

#[test]
fn openai_responses_done_restates_arguments() {
    // `.done` extending the deltas sends the rest as a delta; `.done` contradicting them wins;
    // `output_item.done` with empty arguments completes a call with `{}`; unknown kinds ignored.
    let out = decode_every_way(Dialect::OpenAiResponses, "openai_responses_edge.sse");
    assert_eq!(out.error, None);
    assert_eq!(skeleton(&out.events), "S0 D0 D0 A0 S1 D1 A1 S2 D2 A2");
    check_calls(
        &out.events,
        &[
            call("call_tail", "get_weather", weather()),
            Expected {
                deltas_add_up: false,
                ..call("call_fixed", "lookup", json!({"id": 2}))
            },
            call("call_noargs", "current_time", json!({})),
        ],
    );
    assert!(out.events.contains(&ToolCallEvent::InputDelta {
        tool_call_id: "call_noargs".into(),
        index: 2,
        delta: "{}".into()
    }));
}

#[test]
fn anthropic_parallel_interleaved() {
    let out = decode_every_way(Dialect::Anthropic, "anthropic_parallel.sse");
    assert_eq!(out.error, None);
    assert_eq!(skeleton(&out.events), expand("S0 S1 (D1 D0)x6 D1 D1 A1 A0"));
    check_calls(
        &out.events,
        &[
            call("toolu_01T1x1fJ34qAmk2tNTrN7Up6", "get_weather", weather()),
            call("toolu_01A09q90qw90lq917835lq9", "search_files", search()),
        ],
    );
}

#[test]
fn anthropic_sequential_blocks() {
    // Thinking and server-tool blocks (with their own input_json_delta) are not tool calls; an
    // empty input becomes `{}`.
    let out = decode_every_way(Dialect::Anthropic, "anthropic_sequential.sse");
    assert_eq!(out.error, None);
    assert_eq!(skeleton(&out.events), expand("S0 D0 A0 S1 D1x8 A1"));
    check_calls(
        &out.events,
        &[
            call("toolu_01NRLabsLyVHZPKxbKvkfSMn", "current_time", json!({})),
            call("toolu_01Gq5LZ9kQ2vBf7nXc3HdT8w", "search_files", search()),
        ],
    );
}

#[test]
fn anthropic_unknown_events_ignored() {
    let out = decode_every_way(Dialect::Anthropic, "anthropic_unknown_events.sse");
    assert_eq!(out.error, None);
    assert_eq!(skeleton(&out.events), "S0 D0 A0");
    check_calls(&out.events, &[call("toolu_ok", "get_weather", weather())]);
}
