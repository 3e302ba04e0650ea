use std::sync::Arc;

use serde_json::json;

use super::*;
use crate::dialect::Dialect;

const HINT: &str = "Read the full result elsewhere.";

fn text_of(out: &ModelOutput) -> &str {
    match out {
        ModelOutput::Text(t) | ModelOutput::ErrorText(t) => t,
        other => panic!("not text: {other:?}"),
    }
}

/// The marker of a cut output, and what is kept around it.
fn around(text: &str) -> (&str, &str, &str) {
    let start = text.find("\n[… ").expect("a marker");
    let end = text[start + 1..].find("]\n").expect("the marker's end") + start + 1;
    (&text[..start], &text[start + 1..=end], &text[end + 2..])
}

#[test]
fn two_megabytes_of_text_keep_head_and_tail_within_budget() {
    let body: String = (0..200_000).map(|i| format!("line {i:06}\n")).collect::<String>();
    assert!(body.len() >= 2_000_000);
    let budget = OutputBudget::parse("16KiB").unwrap();
    let cut = ModelOutput::text(body.clone()).bounded(&budget, HINT).expect("over budget");
    let (head, marker, tail) = around(text_of(&cut.output));
    assert!(head.len() + tail.len() <= 16 * 1024, "kept {}", head.len() + tail.len());
    assert!(head.len() + tail.len() > 16 * 1024 - 8, "the budget is used");
    assert!(body.starts_with(head) && body.ends_with(tail));
    assert_eq!(cut.total, body.len());
    assert_eq!(cut.omitted, body.len() - head.len() - tail.len());
    assert!(
        marker.contains(&format!("{} of {} bytes left out here", cut.omitted, cut.total)),
        "{marker}"
    );
    assert!(marker.contains(HINT));
}

#[test]
fn a_cut_never_splits_a_character() {
    // 3-byte characters: no budget of 1..=40 bytes lands on a boundary every time.
    let body = "漢字かな".repeat(50);
    for max in 1..=40 {
        let cut = ModelOutput::text(body.clone()).bounded(&OutputBudget::bytes(max), HINT).unwrap();
        let (head, _, tail) = around(text_of(&cut.output));
        assert!(head.len() + tail.len() <= max);
        assert!(body.starts_with(head) && body.ends_with(tail));
        assert_eq!(head.len() % 3, 0);
        assert_eq!(tail.len() % 3, 0);
    }
    let emoji = "a🦀".repeat(1000);
    let cut = ModelOutput::ErrorText(emoji.clone())
        .bounded(&OutputBudget::bytes(101), HINT)
        .unwrap();
    assert!(cut.output.is_error(), "an error stays an error");
    let (head, _, tail) = around(text_of(&cut.output));
    assert!(emoji.starts_with(head) && emoji.ends_with(tail));
}

#[test]
fn json_over_budget_becomes_text_and_json_within_stays_json() {
    let value = json!({"rows": (0..5000).map(|i| json!({"id": i, "name": format!("row {i}")})).collect::<Vec<_>>()});
    let out = ModelOutput::json(value.clone());
    let budget = OutputBudget::bytes(4096);
    let cut = out.bounded(&budget, HINT).unwrap();
    let ModelOutput::Text(text) = &cut.output else {
        panic!("JSON cut is text: {:?}", cut.output)
    };
    let (head, _, tail) = around(text);
    let whole = value.to_string();
    assert!(whole.starts_with(head) && whole.ends_with(tail));
    assert!(
        serde_json::from_str::<serde_json::Value>(head).is_err(),
        "a head of JSON is not claimed as JSON"
    );
    assert!(ModelOutput::json(json!({"ok": true})).bounded(&budget, HINT).is_none());
    // Every format writes text for it; none writes a cut as a JSON value.
    let chat = cut.output.to_tool_result(Dialect::OpenAiChat, "c").unwrap();
    assert!(chat["content"].as_str().unwrap().len() < 4096 + 200);
}

fn parts() -> Vec<ContentPart> {
    vec![
        ContentPart::text("Intro: ".repeat(100)),
        ContentPart::ImageData {
            data: "A".repeat(300_000),
            media_type: "image/png".into(),
        },
        ContentPart::image_url("https://example.com/radar.png"),
        ContentPart::Resource {
            uri: "test://log".into(),
            media_type: Some("text/plain".into()),
            contents: ResourceContents::Text("ü".repeat(500_000)),
        },
        ContentPart::Custom {
            provider_options: json!({"anthropic": {"type": "text", "text": "x".repeat(2000)}}),
        },
        ContentPart::text("Outro."),
    ]
}

#[test]
fn content_keeps_whole_parts_from_both_ends_and_cuts_text_at_the_edge() {
    let budget = OutputBudget::bytes(8192);
    let cut = ModelOutput::content(parts()).bounded(&budget, HINT).unwrap();
    let ModelOutput::Content(kept) = &cut.output else { panic!() };
    // The intro fits whole; the image does not fit and cannot be cut, so the head stops there.
    assert_eq!(kept[0], parts()[0]);
    let marker = kept
        .iter()
        .position(|p| matches!(p, ContentPart::Text { text } if text.starts_with("[… ")))
        .unwrap();
    let ContentPart::Text { text: m } = &kept[marker] else {
        unreachable!()
    };
    assert!(m.contains("content parts"), "{m}");
    assert_eq!(kept.last(), Some(&ContentPart::text("Outro.")));
    // The resource's text is cut from its end, as a resource still, between characters.
    let resource = kept.iter().find_map(|p| match p {
        ContentPart::Resource {
            contents: ResourceContents::Text(t),
            uri,
            ..
        } => Some((uri, t)),
        _ => None,
    });
    let (uri, text) = resource.expect("the text resource's tail is kept");
    assert_eq!(uri, "test://log");
    assert!(text.chars().all(|c| c == 'ü'));
    assert!(
        !kept.iter().any(|p| matches!(p, ContentPart::ImageData { .. })),
        "inline media is never cut, only left out"
    );
    let size: usize = kept.iter().filter(|p| *p != &kept[marker]).map(|p| payload(p).len()).sum();
    assert!(size <= 8192, "kept {size}");
    // Each format writes the cut content, and every JSON it writes is JSON.
    for dialect in [Dialect::OpenAiChat, Dialect::OpenAiResponses, Dialect::Anthropic, Dialect::Mcp] {
        let result = cut.output.to_tool_result(dialect, "c").unwrap();
        let written = result.to_string();
        assert!(written.len() < 8192 * 3, "{dialect:?} wrote {}", written.len());
        assert!(written.contains("left out here"), "{dialect:?} carries the marker");
        serde_json::from_str::<serde_json::Value>(&written).unwrap();
    }
}

#[test]
fn parse_sizes_and_refuse_nonsense() {
    assert_eq!(OutputBudget::parse("16KiB").unwrap().max(), 16 * 1024);
    assert_eq!(OutputBudget::parse("64kB").unwrap().max(), 64_000);
    assert_eq!(OutputBudget::parse("20000").unwrap().max(), 20_000);
    assert!(OutputBudget::parse("0").unwrap_err().to_string().contains("at least one byte"));
    assert!(
        OutputBudget::parse("16 bananas")
            .unwrap_err()
            .to_string()
            .contains("such as `16KiB`")
    );
}

/// Words as tokens: enough to show the cut follows the tokenizer, not bytes.
#[derive(Debug)]
struct Words;
impl Tokenizer for Words {
    fn count(&self, text: &str) -> usize {
        text.split_whitespace().count()
    }
}

#[test]
fn a_tokenizer_counts_instead_of_bytes() {
    let body = "word ".repeat(10_000);
    let budget = OutputBudget::tokens(100, Arc::new(Words));
    let cut = ModelOutput::text(body.clone()).bounded(&budget, HINT).unwrap();
    let (head, marker, tail) = around(text_of(&cut.output));
    assert!(Words.count(head) + Words.count(tail) <= 100);
    assert!(Words.count(head) + Words.count(tail) >= 98);
    assert_eq!(cut.total, 10_000);
    assert!(marker.contains("tokens left out"), "{marker}");
    assert!(ModelOutput::text("a b c").bounded(&budget, HINT).is_none());
    assert_eq!(
        OutputBudget::resolve(Some(5), Some(&budget)).unwrap().unit(),
        "tokens",
        "a tool's maximum is in the registry's unit"
    );
}
