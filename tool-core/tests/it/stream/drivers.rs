//! The streaming drivers on real SSE bytes (tests/fixtures/sse, written by gen_fixtures.py there).
//!
//! Every fixture is fed whole, in every chunk size from 1 to 64 and in seeded random splits; all
//! must give the same events (and the same error), which are then checked against the expected
//! sequence and each call's expected arguments.

use serde_json::{Value, json};
use tool_core::Dialect;
use tool_core::stream::{StreamDecoder, StreamError, ToolCallEvent};

fn fixture(name: &str) -> Vec<u8> {
    let path = format!("{}/tests/fixtures/sse/{name}", env!("CARGO_MANIFEST_DIR"));
    std::fs::read(&path).unwrap_or_else(|e| panic!("{path}: {e}"))
}

#[derive(Debug, Clone, PartialEq)]
struct Outcome {
    events: Vec<ToolCallEvent>,
    error: Option<StreamError>,
}

/// Feeds `bytes` cut at `sizes` (cycled), then finishes; stops at the first error.
fn run(format: Dialect, bytes: &[u8], mut next_size: impl FnMut() -> usize) -> Outcome {
    let mut decoder = StreamDecoder::new(format);
    let mut events = Vec::new();
    let mut rest = bytes;
    while !rest.is_empty() {
        let (piece, tail) = rest.split_at(next_size().clamp(1, rest.len()));
        rest = tail;
        match decoder.push(piece) {
            Ok(more) => events.extend(more),
            Err(error) => {
                // Failed for good: the same error again, no events.
                assert_eq!(decoder.push(b"data: {}\n\n"), Err(error.clone()));
                return Outcome {
                    events,
                    error: Some(error),
                };
            }
        }
    }
    match decoder.finish() {
        Ok(more) => {
            events.extend(more);
            Outcome { events, error: None }
        }
        Err(error) => Outcome {
            events,
            error: Some(error),
        },
    }
}

/// SplitMix64: a deterministic source of split sizes.
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    }

    fn below(&mut self, n: u64) -> usize {
        (self.next() % n) as usize
    }
}

/// The outcome of `bytes`, checked to be the same for every chunking.
fn decode_every_way(format: Dialect, name: &str) -> Outcome {
    let bytes = fixture(name);
    let whole = run(format, &bytes, || usize::MAX);
    for size in 1..=64 {
        assert_eq!(run(format, &bytes, || size), whole, "{name}: chunks of {size} bytes");
    }
    let mut rng = Rng(0x5EED ^ bytes.len() as u64);
    for trial in 0..200 {
        // Mostly small pieces, sometimes large ones, sometimes empty pushes (size 0 → 1 byte here,
        // so also push empty slices explicitly below).
        let max = [2, 7, 33, 300, 4000][trial % 5];
        assert_eq!(
            run(format, &bytes, || 1 + rng.below(max)),
            whole,
            "{name}: random split, trial {trial}"
        );
    }
    // Empty pushes between bytes change nothing.
    let mut decoder = StreamDecoder::new(format);
    let mut events = Vec::new();
    let mut error = None;
    for byte in &bytes {
        let pushed = decoder.push(&[]).and_then(|mut e| {
            e.extend(decoder.push(std::slice::from_ref(byte))?);
            Ok(e)
        });
        match pushed {
            Ok(more) => events.extend(more),
            Err(e) => {
                error = Some(e);
                break;
            }
        }
    }
    if error.is_none() {
        match decoder.finish() {
            Ok(more) => events.extend(more),
            Err(e) => error = Some(e),
        }
    }
    assert_eq!(Outcome { events, error }, whole, "{name}: with empty pushes");
    whole
}

/// `S0 D0 A0 …`: kind and index of each event.
fn skeleton(events: &[ToolCallEvent]) -> String {
    let words: Vec<String> = events
        .iter()
        .map(|e| match e {
            ToolCallEvent::InputStart { index, .. } => format!("S{index}"),
            ToolCallEvent::InputDelta { index, .. } => format!("D{index}"),
            ToolCallEvent::InputAvailable { index, .. } => format!("A{index}"),
        })
        .collect();
    words.join(" ")
}

/// Expands `(D0 D1)x3` and `D1x2` shorthand.
fn expand(pattern: &str) -> String {
    let mut out = Vec::new();
    let mut rest = pattern.trim();
    while !rest.is_empty() {
        let (group, after): (Vec<&str>, &str) = if let Some(inner) = rest.strip_prefix('(') {
            let close = inner.find(')').unwrap();
            (inner[..close].split_whitespace().collect(), &inner[close + 1..])
        } else {
            let end = rest.find(' ').unwrap_or(rest.len());
            let word = &rest[..end];
            match word.split_once('x') {
                Some((w, n)) if !w.is_empty() => {
                    out.extend(std::iter::repeat_n(w.to_owned(), n.parse().unwrap()));
                    rest = rest[end..].trim_start();
                    continue;
                }
                _ => (vec![word], &rest[end..]),
            }
        };
        let (times, after) = match after.strip_prefix('x') {
            Some(a) => {
                let end = a.find(' ').unwrap_or(a.len());
                (a[..end].parse().unwrap(), &a[end..])
            }
            None => (1, after),
        };
        for _ in 0..times {
            out.extend(group.iter().map(|w| w.to_string()));
        }
        rest = after.trim_start();
    }
    out.join(" ")
}

struct Expected {
    id: &'static str,
    name: &'static str,
    args: Value,
    /// The deltas add up to the final input (false only where the provider restated it differently).
    deltas_add_up: bool,
}

fn call(id: &'static str, name: &'static str, args: Value) -> Expected {
    Expected {
        id,
        name,
        args,
        deltas_add_up: true,
    }
}

/// Checks the lifecycle of every call and its input.
fn check_calls(events: &[ToolCallEvent], expected: &[Expected]) {
    for (index, want) in expected.iter().enumerate() {
        let mine: Vec<&ToolCallEvent> = events.iter().filter(|e| e.index() == index).collect();
        assert!(mine.iter().all(|e| e.tool_call_id() == want.id), "call {index}: ids {mine:?}");
        assert_eq!(
            mine.first(),
            Some(&&ToolCallEvent::InputStart {
                tool_call_id: want.id.into(),
                tool_name: want.name.into(),
                index
            }),
            "call {index} starts first"
        );
        let Some(ToolCallEvent::InputAvailable { tool_name, input, .. }) = mine.last() else {
            panic!("call {index} does not end with InputAvailable: {mine:?}");
        };
        assert_eq!(tool_name, want.name);
        let middle = &mine[1..mine.len() - 1];
        let mut concatenated = String::new();
        for e in middle {
            let ToolCallEvent::InputDelta { delta, .. } = e else {
                panic!("call {index}: {e:?} between start and end")
            };
            assert!(!delta.is_empty(), "call {index}: empty delta");
            concatenated.push_str(delta);
        }
        if want.deltas_add_up {
            assert_eq!(&concatenated, input, "call {index}: deltas vs input");
        }
        let parsed: Value = serde_json::from_str(input).unwrap_or_else(|e| panic!("call {index}: input {input:?}: {e}"));
        assert_eq!(parsed, want.args, "call {index}: arguments");
    }
    let indices: std::collections::BTreeSet<usize> = events.iter().map(ToolCallEvent::index).collect();
    assert_eq!(indices.len(), expected.len(), "number of calls");
}

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

fn error_message(out: &Outcome) -> &str {
    &out.error.as_ref().expect("an error").message
}

#[test]
fn truncated_streams_fail_at_finish() {
    let out = decode_every_way(Dialect::Anthropic, "anthropic_truncated.sse");
    assert_eq!(skeleton(&out.events), "S0 D0 D0");
    assert_eq!(
        error_message(&out),
        "the stream ended before the input of tool call `toolu_cut` (get_weather) was complete"
    );

    let out = decode_every_way(Dialect::OpenAiChat, "openai_chat_truncated.sse");
    assert_eq!(skeleton(&out.events), "S0 D0");
    assert_eq!(
        error_message(&out),
        "line 5: the stream ended in the middle of an event (no closing blank line)"
    );
}

#[test]
fn malformed_json_names_the_line() {
    let out = decode_every_way(Dialect::OpenAiChat, "openai_chat_malformed.sse");
    assert_eq!(skeleton(&out.events), "S0 D0");
    let message = error_message(&out);
    assert!(
        message.starts_with("line 7: malformed JSON in the data of a `message` event (EOF while parsing an object"),
        "{message}"
    );
    assert!(message.contains(r#"{\"id\":\"chatcmpl-AjX9fQ2mZ8kD\""#), "{message}");

    // When the bad event comes in the same chunk as good ones, the good ones come first and the
    // error from the next call.
    let mut decoder = StreamDecoder::new(Dialect::OpenAiChat);
    let events = decoder.push(&fixture("openai_chat_malformed.sse")).unwrap();
    assert_eq!(skeleton(&events), "S0 D0");
    assert_eq!(decoder.finish().unwrap_err().message, message);
}

#[test]
fn provider_error_events() {
    let out = decode_every_way(Dialect::Anthropic, "anthropic_error.sse");
    assert_eq!(skeleton(&out.events), "S0 D0");
    assert_eq!(
        error_message(&out),
        "line 11: the provider sent an error: overloaded_error: Overloaded"
    );

    let out = decode_every_way(Dialect::OpenAiChat, "openai_chat_error.sse");
    assert_eq!(skeleton(&out.events), "S0");
    assert_eq!(
        error_message(&out),
        "line 3: the provider sent an error: server_error: The server had an error while processing your request. Sorry about that!"
    );

    let out = decode_every_way(Dialect::OpenAiResponses, "openai_responses_failed.sse");
    assert_eq!(skeleton(&out.events), "S0");
    assert_eq!(
        error_message(&out),
        "line 8: the provider sent `response.failed`: server_error: The model failed to generate a response."
    );
}

#[test]
fn small_shapes() {
    fn events(format: Dialect, body: &str) -> Outcome {
        run(format, body.as_bytes(), || 3)
    }
    // OpenAI chat: the first fragment carrying arguments gives start + delta; finish_reason closes.
    let out = events(
        Dialect::OpenAiChat,
        concat!(
            r#"data: {"choices":[{"index":0,"delta":{"tool_calls":[{"index":0,"id":"c1","type":"function","function":{"name":"f","arguments":"{\"a\":"}}]}}]}"#,
            "\n\n",
            r#"data: {"choices":[{"index":0,"delta":{"tool_calls":[{"index":0,"function":{"arguments":"1}"}}]},"finish_reason":"tool_calls"}]}"#,
            "\n\n",
        ),
    );
    assert_eq!(out.error, None);
    assert_eq!(
        out.events,
        vec![
            ToolCallEvent::InputStart {
                tool_call_id: "c1".into(),
                tool_name: "f".into(),
                index: 0
            },
            ToolCallEvent::InputDelta {
                tool_call_id: "c1".into(),
                index: 0,
                delta: "{\"a\":".into()
            },
            ToolCallEvent::InputDelta {
                tool_call_id: "c1".into(),
                index: 0,
                delta: "1}".into()
            },
            ToolCallEvent::InputAvailable {
                tool_call_id: "c1".into(),
                tool_name: "f".into(),
                index: 0,
                input: "{\"a\":1}".into()
            },
        ]
    );
    // Two choices (n = 2): calls tracked per choice, each closed by its own finish_reason.
    let out = events(
        Dialect::OpenAiChat,
        concat!(
            r#"data: {"choices":[{"index":0,"delta":{"tool_calls":[{"index":0,"id":"x","function":{"name":"f","arguments":""}}]}},{"index":1,"delta":{"tool_calls":[{"index":0,"id":"y","function":{"name":"g","arguments":"{}"}}]}}]}"#,
            "\n\n",
            r#"data: {"choices":[{"index":1,"delta":{},"finish_reason":"tool_calls"}]}"#,
            "\n\n",
            r#"data: {"choices":[{"index":0,"delta":{"tool_calls":[{"index":0,"function":{"arguments":"{}"}}]},"finish_reason":"tool_calls"}]}"#,
            "\n\ndata: [DONE]\n\n",
        ),
    );
    assert_eq!(out.error, None);
    assert_eq!(skeleton(&out.events), "S0 S1 D1 A1 D0 A0");
    // A start without a name is an error naming the line.
    let out = events(
        Dialect::OpenAiChat,
        "\ndata: {\"choices\":[{\"delta\":{\"tool_calls\":[{\"index\":0,\"id\":\"c\"}]}}]}\n\n",
    );
    assert_eq!(
        error_message(&out),
        "line 2: choice 0: tool call `c` at index 0 starts without a function name"
    );
    // Anthropic: a non-empty start input with no deltas is the input.
    let out = events(
        Dialect::Anthropic,
        concat!(
            "event: content_block_start\ndata: {\"type\":\"content_block_start\",\"index\":0,\"content_block\":{\"type\":\"tool_use\",\"id\":\"t\",\"name\":\"f\",\"input\":{\"q\":1}}}\n\n",
            "event: content_block_stop\ndata: {\"type\":\"content_block_stop\",\"index\":0}\n\n",
        ),
    );
    assert_eq!(
        out.events.last().unwrap(),
        &ToolCallEvent::InputAvailable {
            tool_call_id: "t".into(),
            tool_name: "f".into(),
            index: 0,
            input: "{\"q\":1}".into()
        }
    );
    // Anthropic: an `error` event whose data is not JSON still fails with its text.
    let out = events(Dialect::Anthropic, "event: error\ndata: upstream connect error\n\n");
    assert_eq!(
        error_message(&out),
        "line 2: the provider sent an error: \"upstream connect error\""
    );
    // Responses: an `error` event.
    let out = events(
        Dialect::OpenAiResponses,
        "event: error\ndata: {\"type\":\"error\",\"code\":\"rate_limit_exceeded\",\"message\":\"Slow down\",\"param\":null,\"sequence_number\":3}\n\n",
    );
    assert_eq!(
        error_message(&out),
        "line 2: the provider sent `error`: rate_limit_exceeded: Slow down"
    );
    // Responses: a delta for an item nobody started.
    let out = events(
        Dialect::OpenAiResponses,
        "data: {\"type\":\"response.function_call_arguments.delta\",\"item_id\":\"fc_x\",\"output_index\":0,\"delta\":\"{\"}\n\n",
    );
    assert!(error_message(&out).starts_with("line 1: a `response.function_call_arguments.delta` event refers to item `fc_x`"));
    // [DONE] closes the chat calls still open; for Responses a call still open there is truncated.
    let out = events(
        Dialect::OpenAiChat,
        "data: {\"choices\":[{\"index\":0,\"delta\":{\"tool_calls\":[{\"index\":0,\"id\":\"c\",\"function\":{\"name\":\"f\",\"arguments\":\"{}\"}}]}}]}\n\ndata: [DONE]\n\n",
    );
    assert_eq!((skeleton(&out.events), out.error), ("S0 D0 A0".to_owned(), None));
    let out = events(
        Dialect::OpenAiResponses,
        "data: {\"type\":\"response.output_item.added\",\"output_index\":0,\"item\":{\"type\":\"function_call\",\"id\":\"fc\",\"call_id\":\"c\",\"name\":\"f\",\"arguments\":\"\"}}\n\ndata: [DONE]\n\n",
    );
    assert_eq!(skeleton(&out.events), "S0");
    assert_eq!(
        error_message(&out),
        "the stream ended before the input of tool call `c` (f) was complete"
    );
    // Everything after [DONE] is ignored, even a cut-off event.
    let out = events(Dialect::OpenAiChat, "data: [DONE]\n\ndata: {not json\n\ndata: {\"cho");
    assert_eq!(
        out,
        Outcome {
            events: vec![],
            error: None
        }
    );
}

#[test]
fn events_serialize_with_kebab_case_tags() {
    let event = ToolCallEvent::InputDelta {
        tool_call_id: "c".into(),
        index: 1,
        delta: "{".into(),
    };
    assert_eq!(
        serde_json::to_value(&event).unwrap(),
        json!({"type": "input-delta", "tool_call_id": "c", "index": 1, "delta": "{"})
    );
    let event = ToolCallEvent::InputStart {
        tool_call_id: "c".into(),
        tool_name: "f".into(),
        index: 0,
    };
    assert_eq!(serde_json::to_value(&event).unwrap()["type"], "input-start");
    let event = ToolCallEvent::InputAvailable {
        tool_call_id: "c".into(),
        tool_name: "f".into(),
        index: 0,
        input: "{}".into(),
    };
    assert_eq!(serde_json::to_value(&event).unwrap()["type"], "input-available");
}

/// A stream with two calls whose arguments are each a string of about `half` bytes, in pieces.
fn large_stream(format: Dialect, half: usize) -> (Vec<u8>, [String; 2]) {
    let piece = "lorem ipsum \\\"dolor\\\" sit amet, café ☕ \\u00e9 \\\\ consectetur adipiscing elit ";
    let mut args = [String::from("{\"blob\": \""), String::from("{\"blob\": \"")];
    let mut body = String::new();
    let esc = |s: &str| serde_json::to_string(s).unwrap();
    match format {
        Dialect::OpenAiChat => {
            for (i, id) in ["call_0", "call_1"].iter().enumerate() {
                body += &format!(
                    "data: {{\"choices\":[{{\"index\":0,\"delta\":{{\"tool_calls\":[{{\"index\":{i},\"id\":\"{id}\",\"type\":\"function\",\"function\":{{\"name\":\"big\",\"arguments\":{}}}}}]}}}}]}}\n\n",
                    esc(&args[i])
                );
            }
        }
        Dialect::OpenAiResponses => {
            for (i, id) in ["call_0", "call_1"].iter().enumerate() {
                body += &format!(
                    "event: response.output_item.added\ndata: {{\"type\":\"response.output_item.added\",\"output_index\":{i},\"item\":{{\"type\":\"function_call\",\"id\":\"fc_{i}\",\"call_id\":\"{id}\",\"name\":\"big\",\"arguments\":\"\"}}}}\n\n"
                );
                body += &format!(
                    "event: response.function_call_arguments.delta\ndata: {{\"type\":\"response.function_call_arguments.delta\",\"item_id\":\"fc_{i}\",\"output_index\":{i},\"delta\":{}}}\n\n",
                    esc(&args[i])
                );
            }
        }
        Dialect::Anthropic => {
            for (i, id) in ["call_0", "call_1"].iter().enumerate() {
                body += &format!(
                    "event: content_block_start\ndata: {{\"type\":\"content_block_start\",\"index\":{i},\"content_block\":{{\"type\":\"tool_use\",\"id\":\"{id}\",\"name\":\"big\",\"input\":{{}}}}}}\n\n"
                );
                body += &format!(
                    "event: content_block_delta\ndata: {{\"type\":\"content_block_delta\",\"index\":{i},\"delta\":{{\"type\":\"input_json_delta\",\"partial_json\":{}}}}}\n\n",
                    esc(&args[i])
                );
            }
        }
        other => panic!("no stream is written for {other}"),
    }
    let mut n = 0;
    while args[1].len() < half {
        let i = n % 2;
        n += 1;
        if n % 50 == 0 {
            body += ": keep-alive\n\n";
        }
        args[i].push_str(piece);
        let delta = esc(piece);
        body += &match format {
            Dialect::OpenAiChat => format!(
                "data: {{\"choices\":[{{\"index\":0,\"delta\":{{\"tool_calls\":[{{\"index\":{i},\"function\":{{\"arguments\":{delta}}}}}]}}}}]}}\n\n"
            ),
            Dialect::OpenAiResponses => format!(
                "event: response.function_call_arguments.delta\ndata: {{\"type\":\"response.function_call_arguments.delta\",\"item_id\":\"fc_{i}\",\"output_index\":{i},\"delta\":{delta}}}\n\n"
            ),
            Dialect::Anthropic => format!(
                "event: content_block_delta\ndata: {{\"type\":\"content_block_delta\",\"index\":{i},\"delta\":{{\"type\":\"input_json_delta\",\"partial_json\":{delta}}}}}\n\n"
            ),
            other => panic!("no stream is written for {other}"),
        };
    }
    for (i, a) in args.iter_mut().enumerate() {
        a.push_str("\"}");
        body += &match format {
            Dialect::OpenAiChat => format!(
                "data: {{\"choices\":[{{\"index\":0,\"delta\":{{\"tool_calls\":[{{\"index\":{i},\"function\":{{\"arguments\":\"\\\"}}\"}}}}]}}}}]}}\n\n"
            ),
            Dialect::OpenAiResponses => format!(
                "event: response.function_call_arguments.delta\ndata: {{\"type\":\"response.function_call_arguments.delta\",\"item_id\":\"fc_{i}\",\"output_index\":{i},\"delta\":\"\\\"}}\"}}\n\nevent: response.function_call_arguments.done\ndata: {{\"type\":\"response.function_call_arguments.done\",\"item_id\":\"fc_{i}\",\"output_index\":{i},\"arguments\":{}}}\n\n",
                esc(a)
            ),
            Dialect::Anthropic => format!(
                "event: content_block_delta\ndata: {{\"type\":\"content_block_delta\",\"index\":{i},\"delta\":{{\"type\":\"input_json_delta\",\"partial_json\":\"\\\"}}\"}}}}\n\nevent: content_block_stop\ndata: {{\"type\":\"content_block_stop\",\"index\":{i}}}\n\n"
            ),
            other => panic!("no stream is written for {other}"),
        };
    }
    if format == Dialect::OpenAiChat {
        body += "data: {\"choices\":[{\"index\":0,\"delta\":{},\"finish_reason\":\"tool_calls\"}]}\n\ndata: [DONE]\n\n";
    }
    (body.into_bytes(), args)
}

#[test]
fn large_streams_keep_only_the_open_inputs() {
    for (format, chunk) in [(Dialect::OpenAiChat, 4096), (Dialect::OpenAiResponses, 1), (Dialect::Anthropic, 61)] {
        let (bytes, args) = large_stream(format, 2_500_000);
        assert!(bytes.len() > 5_000_000, "{format:?}: {} bytes", bytes.len());
        let mut decoder = StreamDecoder::new(format);
        let mut open_input = [0usize; 2];
        let mut inputs = [String::new(), String::new()];
        let mut available = Vec::new();
        let mut deltas = 0;
        let mut max_held = 0;
        for piece in bytes.chunks(chunk) {
            for event in decoder.push(piece).unwrap() {
                match event {
                    ToolCallEvent::InputStart { .. } => {}
                    ToolCallEvent::InputDelta { index, delta, .. } => {
                        deltas += 1;
                        open_input[index] += delta.len();
                        inputs[index].push_str(&delta);
                    }
                    ToolCallEvent::InputAvailable { index, input, .. } => {
                        open_input[index] = 0;
                        available.push((index, input));
                    }
                }
            }
            // Beyond the open calls' inputs, the decoder keeps at most one unfinished event.
            let held = decoder.buffered_bytes() - open_input.iter().sum::<usize>();
            max_held = max_held.max(held);
        }
        available.extend(decoder.finish().unwrap().into_iter().filter_map(|e| match e {
            ToolCallEvent::InputAvailable { index, input, .. } => Some((index, input)),
            _ => None,
        }));
        // The longest line is the bound (a Responses `.done` event restates a whole input).
        let longest_line = bytes.split(|&b| b == b'\n').map(<[u8]>::len).max().unwrap();
        assert!(
            max_held <= longest_line + 64,
            "{format:?}: held {max_held} bytes beyond the open inputs (longest line {longest_line})"
        );
        assert!(deltas > 50_000, "{format:?}: {deltas} deltas");
        assert_eq!(available.len(), 2, "{format:?}");
        for (index, input) in available {
            assert_eq!(input, args[index], "{format:?}: call {index}");
            assert_eq!(inputs[index], args[index], "{format:?}: deltas of call {index}");
            let value: Value = serde_json::from_str(&input).unwrap();
            assert!(
                value["blob"]
                    .as_str()
                    .unwrap()
                    .starts_with("lorem ipsum \"dolor\" sit amet, café ☕ é \\ consectetur")
            );
        }
    }
}

#[test]
fn oversized_event_fails_instead_of_growing() {
    let mut decoder = StreamDecoder::new(Dialect::OpenAiChat).with_max_event_bytes(1024);
    assert!(decoder.push(b"data: {\"choices\":[]}\n\n").unwrap().is_empty());
    let mut error = None;
    for _ in 0..100 {
        if let Err(e) = decoder.push(&[b'x'; 64]) {
            error = Some(e);
            break;
        }
    }
    assert_eq!(error.unwrap().message, "line 3: an SSE event is larger than the 1024 bytes allowed");
}

/// Every SSE event of a fixture, read with the given chunk size.
fn sse_events(bytes: &[u8], size: usize) -> Vec<tool_core::stream::sse::SseEvent> {
    let mut parser = tool_core::stream::sse::SseParser::new();
    let mut events = Vec::new();
    for piece in bytes.chunks(size) {
        parser
            .push(piece, |e| {
                events.push(e);
                true
            })
            .unwrap();
    }
    events
}

#[test]
fn sse_layer_on_every_fixture() {
    let dir = format!("{}/tests/fixtures/sse", env!("CARGO_MANIFEST_DIR"));
    let mut names: Vec<String> = std::fs::read_dir(&dir)
        .unwrap()
        .map(|e| e.unwrap().file_name().into_string().unwrap())
        .filter(|n| n.ends_with(".sse"))
        .collect();
    names.sort();
    assert_eq!(names.len(), 13);
    for name in names {
        let bytes = fixture(&name);
        let whole = sse_events(&bytes, bytes.len());
        assert!(!whole.is_empty(), "{name}");
        for size in 1..=64 {
            assert_eq!(sse_events(&bytes, size), whole, "{name}: chunks of {size}");
        }
        for event in &whole {
            // Named events (Responses, Anthropic) carry their name in the data's `type` as well.
            if event.event != "message" && event.data.starts_with('{') && !name.contains("malformed") {
                let data: Value = serde_json::from_str(&event.data).unwrap();
                assert_eq!(data["type"], event.event.as_str(), "{name}: line {}", event.line);
            }
        }
    }
    // CRLF and CR line endings read exactly like LF ones (same events, same line numbers).
    for name in ["openai_responses_parallel.sse", "openai_chat_compat.sse"] {
        let bytes = fixture(name);
        let as_lf = String::from_utf8(bytes.clone()).unwrap().replace("\r\n", "\n").replace('\r', "\n");
        assert_ne!(as_lf.as_bytes(), &bytes[..]);
        assert_eq!(sse_events(&bytes, 5), sse_events(as_lf.as_bytes(), 7), "{name}");
    }
}
