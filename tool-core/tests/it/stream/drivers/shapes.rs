//! Small stream shapes on every driver, and the events' serialised form (kebab-case tags).

use super::*;

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
