//! The SSE layer on every fixture: the same events in every chunk size.

use super::*;

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
