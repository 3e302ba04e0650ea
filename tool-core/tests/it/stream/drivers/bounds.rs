//! Memory bounds: a large stream keeps only the open inputs, an oversized event fails instead
//! of growing the buffer.

use super::*;

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
