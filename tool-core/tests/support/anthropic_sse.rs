//! A hand-made Anthropic Messages stream (server-sent events) for the stream tests.

use serde_json::json;

/// An Anthropic Messages stream with the given tool_use blocks (id, name, input pieces).
pub fn anthropic_sse(blocks: &[(&str, &str, &[&str])]) -> String {
    let mut s = String::from("event: message_start\ndata: {\"type\":\"message_start\",\"message\":{\"id\":\"msg_1\",\"type\":\"message\",\"role\":\"assistant\",\"content\":[],\"model\":\"claude\",\"stop_reason\":null,\"usage\":{\"input_tokens\":1,\"output_tokens\":1}}}\n\n");
    for (i, (id, name, pieces)) in blocks.iter().enumerate() {
        let start =
            json!({"type": "content_block_start", "index": i, "content_block": {"type": "tool_use", "id": id, "name": name, "input": {}}});
        s += &format!("event: content_block_start\ndata: {start}\n\n");
        for p in *pieces {
            let d = json!({"type": "content_block_delta", "index": i, "delta": {"type": "input_json_delta", "partial_json": p}});
            s += &format!("event: content_block_delta\ndata: {d}\n\n");
        }
        s += &format!(
            "event: content_block_stop\ndata: {}\n\n",
            json!({"type": "content_block_stop", "index": i})
        );
    }
    s += "event: message_stop\ndata: {\"type\":\"message_stop\"}\n\n";
    s
}
