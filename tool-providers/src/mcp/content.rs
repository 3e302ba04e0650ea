//! A remote `tools/call` result as our output: `rmcp`'s typed [`CallToolResult`] read once, at
//! the tool boundary, into the value the application receives and the content parts the model
//! sees.
//!
//! The value: `structuredContent` when present, else the text when every block is text, else
//! the blocks as JSON (as before). The model output: every block as a [`ContentPart`] —
//! text, images, audio, resource links and embedded resources — whenever a block is not text
//! (so none is dropped, even beside `structuredContent`). Owns only this mapping.

use rmcp::model::{CallToolResult, ContentBlock, ResourceContents};
use serde_json::{Value, json};
use tool_core::{ContentPart, ModelOutput};

/// What a successful remote call came to.
#[derive(Debug, Clone, PartialEq)]
pub(super) struct Outcome {
    /// What the application receives.
    pub(super) value: Value,
    /// What the model sees, when the content is more than text.
    pub(super) model_output: Option<ModelOutput>,
}

/// The text of an all-text, non-empty content (blocks joined by newlines).
pub(super) fn all_text(content: &[ContentBlock]) -> Option<String> {
    let texts: Option<Vec<&str>> = content.iter().map(|b| b.as_text().map(|t| t.text.as_str())).collect();
    texts.filter(|t| !t.is_empty()).map(|t| t.join("\n"))
}

/// A successful (not `isError`) result as our output.
pub(super) fn outcome(result: CallToolResult) -> Outcome {
    let text = all_text(&result.content);
    let model_output = text
        .is_none()
        .then(|| result.content.iter().map(part).collect::<Vec<_>>())
        .filter(|parts| !parts.is_empty())
        .map(ModelOutput::Content);
    let value = match (result.structured_content, text) {
        (Some(structured), _) => structured,
        (None, Some(text)) => Value::String(text),
        (None, None) => serde_json::to_value(&result.content).unwrap_or(Value::Null),
    };
    Outcome { value, model_output }
}

/// One MCP content block as a content part (a kind this client does not know yet is passed
/// on as is, for MCP targets, in a custom part).
pub(super) fn part(block: &ContentBlock) -> ContentPart {
    match block {
        ContentBlock::Text(t) => ContentPart::text(t.text.clone()),
        ContentBlock::Image(i) => ContentPart::ImageData {
            data: i.data.clone(),
            media_type: i.mime_type.clone(),
        },
        ContentBlock::Audio(a) => ContentPart::AudioData {
            data: a.data.clone(),
            media_type: a.mime_type.clone(),
        },
        ContentBlock::ResourceLink(r) => ContentPart::ResourceLink {
            uri: r.uri.clone(),
            name: r.name.clone(),
            media_type: r.mime_type.clone(),
            title: r.title.clone(),
            description: r.description.clone(),
        },
        ContentBlock::Resource(e) => match &e.resource {
            ResourceContents::TextResourceContents { uri, mime_type, text, .. } => ContentPart::Resource {
                uri: uri.clone(),
                media_type: mime_type.clone(),
                contents: tool_core::ResourceContents::Text(text.clone()),
            },
            ResourceContents::BlobResourceContents { uri, mime_type, blob, .. } => ContentPart::Resource {
                uri: uri.clone(),
                media_type: mime_type.clone(),
                contents: tool_core::ResourceContents::Blob(blob.clone()),
            },
            _ => passed_on(block),
        },
        _ => passed_on(block),
    }
}

/// A block passed on as is, for MCP targets.
fn passed_on(block: &ContentBlock) -> ContentPart {
    ContentPart::Custom {
        provider_options: json!({"mcp": block}),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn result(v: Value) -> CallToolResult {
        serde_json::from_value(v).unwrap()
    }

    #[test]
    fn text_only_content_is_the_text_and_needs_no_parts() {
        let out = outcome(result(
            json!({"content": [{"type": "text", "text": "a"}, {"type": "text", "text": "b"}]}),
        ));
        assert_eq!(
            out,
            Outcome {
                value: json!("a\nb"),
                model_output: None
            }
        );
        let structured = outcome(result(
            json!({"content": [{"type": "text", "text": "{}"}], "structuredContent": {"n": 1}}),
        ));
        assert_eq!(structured.value, json!({"n": 1}));
        assert_eq!(structured.model_output, None);
        let empty = outcome(result(json!({"content": []})));
        assert_eq!(
            empty,
            Outcome {
                value: json!([]),
                model_output: None
            }
        );
    }

    #[test]
    fn every_kind_of_block_becomes_a_part() {
        let out = outcome(result(json!({"content": [
            {"type": "text", "text": "a"},
            {"type": "image", "data": "AA==", "mimeType": "image/png"},
            {"type": "audio", "data": "UklG", "mimeType": "audio/wav"},
            {"type": "resource_link", "uri": "file:///r.pdf", "name": "r", "mimeType": "application/pdf"},
            {"type": "resource", "resource": {"uri": "test://t", "mimeType": "text/plain", "text": "hello"}},
            {"type": "resource", "resource": {"uri": "test://b", "blob": "AQI="}}
        ], "structuredContent": {"kept": true}})));
        assert_eq!(out.value, json!({"kept": true}), "structured content stays the value");
        let Some(ModelOutput::Content(parts)) = out.model_output else {
            panic!("{out:?}")
        };
        assert_eq!(parts.len(), 6, "no block is dropped");
        assert_eq!(parts[0], ContentPart::text("a"));
        assert_eq!(
            parts[1],
            ContentPart::ImageData {
                data: "AA==".into(),
                media_type: "image/png".into()
            }
        );
        assert!(matches!(&parts[2], ContentPart::AudioData { media_type, .. } if media_type == "audio/wav"));
        assert!(matches!(&parts[3], ContentPart::ResourceLink { uri, name, .. } if uri == "file:///r.pdf" && name == "r"));
        assert!(matches!(&parts[4], ContentPart::Resource { contents: tool_core::ResourceContents::Text(t), .. } if t == "hello"));
        assert!(matches!(&parts[5], ContentPart::Resource { contents: tool_core::ResourceContents::Blob(b), .. } if b == "AQI="));
    }
}
