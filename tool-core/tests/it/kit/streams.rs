//! Scripted provider streams: every dialect's decoder reads each scripted call back exactly
//! (any chunking of the input, any split of the bytes), every event has the shape of the same
//! kind of event in the recorded fixtures, and a replay runs the calls through the runtime.

use std::collections::{BTreeMap, BTreeSet};

use serde_json::{Value, json};
use tool_core::Dialect;
use tool_core::stream::sse::SseParser;
use tool_core::stream::{StreamDecoder, ToolCallEvent};
use tool_core::testing::{self, ScriptedStream};

const FIXTURES: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/fixtures/sse/");

const SEARCH: &str = r#"{"pattern": "C:\\Users\\*\\\"notes\".txt", "query": "café ☕ 🎉\nnext"}"#;

fn script(dialect: Dialect, chunk: usize, interleaved: bool) -> ScriptedStream {
    let s = ScriptedStream::new(dialect)
        .text("Checking.")
        .tool_call("call_a", "get_weather", json!({"city": "Paris", "days": 3}))
        .tool_call_text("call_b", "search_files", SEARCH)
        .tool_call("call_c", "current_time", json!({}))
        .chunk_size(chunk);
    if interleaved { s.interleaved() } else { s }
}

/// Decodes `bytes` fed `split` bytes at a time.
fn decode(dialect: Dialect, bytes: &[u8], split: usize) -> Vec<ToolCallEvent> {
    let mut decoder = StreamDecoder::new(dialect);
    let mut events = Vec::new();
    for chunk in bytes.chunks(split) {
        events.extend(decoder.push(chunk).unwrap());
    }
    events.extend(decoder.finish().unwrap());
    events
}

#[test]
fn every_dialect_reads_back_each_scripted_call_for_any_chunking() {
    let expected = [
        ("call_a", "get_weather", r#"{"city":"Paris","days":3}"#),
        ("call_b", "search_files", SEARCH),
        ("call_c", "current_time", "{}"),
    ];
    for dialect in [Dialect::OpenAiChat, Dialect::OpenAiResponses, Dialect::Anthropic] {
        for (chunk, interleaved, split) in [(1, false, 1), (3, true, 7), (5, false, 4096), (usize::MAX, true, 2)] {
            let events = decode(dialect, &script(dialect, chunk, interleaved).sse_bytes(), split);
            for (index, (id, name, input)) in expected.iter().enumerate() {
                let of: Vec<&ToolCallEvent> = events.iter().filter(|e| e.tool_call_id() == *id).collect();
                let case = format!("{dialect:?} chunk {chunk} interleaved {interleaved}: {of:?}");
                let start = ToolCallEvent::InputStart {
                    tool_call_id: id.to_string(),
                    tool_name: name.to_string(),
                    index,
                };
                assert_eq!(of.first(), Some(&&start), "{case}");
                let deltas: Vec<&str> = of
                    .iter()
                    .filter_map(|e| match e {
                        ToolCallEvent::InputDelta { delta, .. } => Some(delta.as_str()),
                        _ => None,
                    })
                    .collect();
                assert_eq!(deltas.concat(), *input, "{case}");
                if *input != "{}" {
                    let pieces = input.chars().count().div_ceil(chunk.min(input.chars().count()));
                    assert_eq!(deltas.len(), pieces, "one delta per piece: {case}");
                }
                let available = ToolCallEvent::InputAvailable {
                    tool_call_id: id.to_string(),
                    tool_name: name.to_string(),
                    index,
                    input: input.to_string(),
                };
                assert_eq!(of.last(), Some(&&available), "{case}");
            }
        }
    }
}

#[test]
fn interleaving_alternates_the_calls_of_the_openai_dialects() {
    for dialect in [Dialect::OpenAiChat, Dialect::OpenAiResponses] {
        let events = decode(dialect, &script(dialect, 4, true).sse_bytes(), 4096);
        let order: Vec<&str> = events
            .iter()
            .filter(|e| matches!(e, ToolCallEvent::InputDelta { .. }))
            .map(ToolCallEvent::tool_call_id)
            .take(4)
            .collect();
        assert_eq!(order, ["call_a", "call_b", "call_c", "call_a"], "{dialect:?}");
    }
}

/// `(kind, data)` of every JSON event of an SSE text.
fn events(text: &str) -> Vec<(String, Value)> {
    let mut parser = SseParser::new();
    let mut out = Vec::new();
    parser
        .push(text.as_bytes(), |e| {
            if let Ok(data) = serde_json::from_str::<Value>(&e.data) {
                out.push((kind(&e.event, &data), data));
            }
            true
        })
        .unwrap();
    out
}

/// What kind of event it is: the SSE event name and `type`, with the type of the item, block
/// or delta it carries; for a Chat chunk, which delta fields it has.
fn kind(event: &str, data: &Value) -> String {
    let inner = ["item", "content_block", "delta", "part"]
        .iter()
        .filter_map(|k| data.get(k).and_then(|v| v.get("type")).and_then(Value::as_str))
        .collect::<Vec<_>>()
        .join(",");
    match data.get("object").and_then(Value::as_str) {
        Some("chat.completion.chunk") => {
            let choice = &data["choices"][0];
            let mut fields: Vec<String> = choice["delta"].as_object().map(|d| d.keys().cloned().collect()).unwrap_or_default();
            if let Some(call) = choice["delta"]["tool_calls"].get(0) {
                fields.push(if call.get("id").is_some() { "head".into() } else { "piece".into() });
            }
            if !choice["finish_reason"].is_null() {
                fields.push("finish".into());
            }
            format!("chunk {}", fields.join(","))
        }
        _ => format!("{event} {} {inner}", data["type"].as_str().unwrap_or_default()),
    }
}

/// Every path of keys in a JSON value (`choices[].delta.tool_calls[].id`, …).
fn paths(value: &Value, prefix: &str, out: &mut BTreeSet<String>) {
    match value {
        Value::Object(map) => {
            for (k, v) in map {
                let p = format!("{prefix}.{k}");
                out.insert(p.clone());
                paths(v, &p, out);
            }
        }
        Value::Array(items) => {
            for v in items {
                paths(v, &format!("{prefix}[]"), out);
            }
        }
        _ => {}
    }
}

#[test]
fn scripted_events_have_the_shape_of_recorded_ones() {
    let recorded = [
        (Dialect::OpenAiChat, &["openai_chat_parallel.sse"][..]),
        (Dialect::OpenAiResponses, &["openai_responses_parallel.sse"][..]),
        (Dialect::Anthropic, &["anthropic_parallel.sse", "anthropic_sequential.sse"][..]),
    ];
    for (dialect, files) in recorded {
        let mut known: BTreeMap<String, BTreeSet<String>> = BTreeMap::new();
        for file in files {
            let text = std::fs::read_to_string(format!("{FIXTURES}{file}")).unwrap();
            for (kind, data) in events(&text) {
                paths(&data, "", known.entry(kind).or_default());
            }
        }
        let scripted = script(dialect, 3, false).sse();
        let scripted_events = events(&scripted);
        assert!(scripted_events.len() > 10, "{dialect:?}: {scripted}");
        for (kind, data) in scripted_events {
            let recorded = known
                .get(&kind)
                .unwrap_or_else(|| panic!("{dialect:?}: no recorded event of kind `{kind}` ({data})"));
            let mut mine = BTreeSet::new();
            paths(&data, "", &mut mine);
            let extra: Vec<&String> = mine.difference(recorded).collect();
            assert!(
                extra.is_empty(),
                "{dialect:?} `{kind}` has fields no recorded one has: {extra:?} in {data}"
            );
        }
        if dialect != Dialect::OpenAiResponses {
            let end = if dialect == Dialect::OpenAiChat {
                "data: [DONE]\n\n"
            } else {
                "event: message_stop"
            };
            assert!(scripted.contains(end), "{dialect:?} ends as the provider does");
        }
    }
}

mod tools {
    use tool_core::prelude::*;

    /// Weather for a city
    #[tool(id = "kit-weather")]
    pub async fn weather(
        /// City
        city: String,
    ) -> String {
        format!("sunny in {city}")
    }
}

#[tokio::test]
async fn a_replay_runs_the_calls_and_shows_the_previews_on_the_way() {
    for dialect in [Dialect::OpenAiChat, Dialect::OpenAiResponses, Dialect::Anthropic] {
        let got = ScriptedStream::new(dialect)
            .tool_call("call_1", "kit-weather", json!({"city": "Paris"}))
            .tool_call_text("call_2", "kit-weather", r#"{"city": "#)
            .chunk_size(4)
            .replay()
            .tools([tools::weather::tool()])
            .byte_chunks(16)
            .await;
        assert_eq!(got.result_of("call_1"), json!("sunny in Paris"), "{dialect:?}");
        assert_eq!(got.error_of("call_2")["kind"], "invalid_input", "{dialect:?}");
        let previews = got.previews("call_1");
        let partial = |p: &Value| {
            p["city"]
                .as_str()
                .is_some_and(|c| !c.is_empty() && c.len() < 5 && "Paris".starts_with(c))
        };
        assert!(
            previews.iter().any(partial),
            "a partial city was previewed: {dialect:?}: {previews:?}"
        );
        assert_eq!(previews.last(), Some(&json!({"city": "Paris"})), "{dialect:?}");
        assert!(got.stream_error().is_none());
        // Replaying a recorded stream whose tools this process does not have: each call fails.
        let recorded = std::fs::read(format!("{FIXTURES}anthropic_sequential.sse")).unwrap();
        let got = testing::replay(Dialect::Anthropic, recorded).tools([tools::weather::tool()]).await;
        assert_eq!(got.call_ids(), ["toolu_01NRLabsLyVHZPKxbKvkfSMn", "toolu_01Gq5LZ9kQ2vBf7nXc3HdT8w"]);
        assert!(got.call_ids().iter().all(|id| got.error_of(id)["kind"] == "unknown_tool"));
        // The kit's accessor fails a call that did not end as asked.
        let wrong = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| got.result_of("toolu_01NRLabsLyVHZPKxbKvkfSMn")));
        assert!(wrong.is_err());
    }
}
