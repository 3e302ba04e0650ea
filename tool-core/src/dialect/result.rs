//! Tool results as each dialect takes them: a [`ModelOutput`] written into the message, item or
//! block that answers a tool call.
//!
//! Owns the tool-result shapes (OpenAI Chat and Responses, Anthropic, MCP, Gemini) and how each
//! carries the content parts. What the model sees is decided before, by the tool's `to_model_output`
//! ([`model_output`](crate::model_output)); what an MCP server adds around it
//! (`structuredContent`) is the server's.

use serde_json::{Value, json};

use super::Dialect;
use super::mcp_block::McpBlock;
use crate::model_output::{ContentPart, ModelOutput, ResourceContents};

/// The result shapes written here, one per dialect that has one.
pub(super) enum Shape {
    /// OpenAI Chat: a `{role: "tool"}` message.
    ToolMessage,
    /// OpenAI Responses: a `function_call_output` item.
    FunctionCallOutput,
    /// Anthropic Messages: a `tool_result` content block.
    ToolResultBlock,
    /// MCP: a `tools/call` result.
    CallToolResult,
    /// Gemini: a `functionResponse` part (it names the function, so it is written only when
    /// the function's name is given).
    FunctionResponse,
}

impl Shape {
    pub(super) fn of(dialect: Dialect) -> Option<Shape> {
        match dialect {
            Dialect::OpenAiChat => Some(Shape::ToolMessage),
            Dialect::OpenAiResponses => Some(Shape::FunctionCallOutput),
            Dialect::Anthropic => Some(Shape::ToolResultBlock),
            Dialect::Mcp => Some(Shape::CallToolResult),
            // A `functionResponse` names the function, which a call id does not give.
            Dialect::GeminiOpenApi | Dialect::GeminiJsonSchema => None,
        }
    }
}

/// The function a result answers: its call id and the name the model called it by.
struct Answering<'a> {
    call_id: &'a str,
    name: Option<&'a str>,
}

impl ModelOutput {
    /// The tool-result message or block a dialect takes for this output; `None` for a dialect
    /// without one here (Gemini: see [`Dialect::supports_tool_results`]).
    ///
    /// - OpenAI Chat: `{role: "tool", tool_call_id, content}` (text; the chat API has no media in
    ///   tool messages, so media parts appear as `[image: url]` stand-ins).
    /// - OpenAI Responses: `{type: "function_call_output", call_id, output}` (text, or
    ///   `input_text` / `input_image` / `input_file` parts).
    /// - Anthropic: `{type: "tool_result", tool_use_id, content, is_error?}` with `text`, `image`
    ///   and `document` blocks (base64, URL or file sources).
    /// - MCP: a `tools/call` result `{content, isError?}` with `text`, `image`, `audio`,
    ///   `resource_link` and `resource` blocks (`structuredContent` is added by the server from
    ///   the raw output).
    ///
    /// ```
    /// use tool_core::{ContentPart, ModelOutput};
    /// use tool_core::Dialect;
    /// let out = ModelOutput::content([ContentPart::text("Radar:"), ContentPart::image_url("https://x/r.png")]);
    /// let block = out.to_tool_result(Dialect::Anthropic, "toolu_1").unwrap();
    /// assert_eq!(block["content"][1]["source"], serde_json::json!({"type": "url", "url": "https://x/r.png"}));
    /// let msg = out.to_tool_result(Dialect::OpenAiChat, "call_1").unwrap();
    /// assert_eq!(msg["content"], "Radar:\n[image: https://x/r.png]");
    /// ```
    pub fn to_tool_result(&self, dialect: Dialect, tool_call_id: &str) -> Option<Value> {
        let answering = Answering {
            call_id: tool_call_id,
            name: None,
        };
        Some(self.result_in(Shape::of(dialect)?, &answering))
    }

    /// The tool result a dialect takes for this output, answering the call `tool_call_id` of
    /// the function the model called `tool_name`: what [`to_tool_result`](Self::to_tool_result)
    /// writes, and for Gemini (which names the function it answers) a `functionResponse` part
    /// `{functionResponse: {id, name, response: {output} | {error}, parts?}}`, to send in a
    /// `{role: "user", parts: [...]}` content. Images and PDFs given as data go in its `parts`
    /// as `inlineData`; the text (and stand-ins) of the other parts is its `output`.
    ///
    /// ```
    /// use tool_core::ModelOutput;
    /// use tool_core::Dialect;
    /// let out = ModelOutput::ErrorText("not approved: it is production".into());
    /// let part = out.to_tool_result_named(Dialect::GeminiJsonSchema, "call_1", "delete_repo");
    /// assert_eq!(
    ///     part,
    ///     serde_json::json!({"functionResponse": {"id": "call_1", "name": "delete_repo", "response": {"error": "not approved: it is production"}}})
    /// );
    /// ```
    pub fn to_tool_result_named(&self, dialect: Dialect, tool_call_id: &str, tool_name: &str) -> Value {
        let shape = Shape::of(dialect).unwrap_or(Shape::FunctionResponse);
        let answering = Answering {
            call_id: tool_call_id,
            name: Some(tool_name),
        };
        self.result_in(shape, &answering)
    }

    fn result_in(&self, shape: Shape, answering: &Answering<'_>) -> Value {
        let tool_call_id = answering.call_id;
        let error = self.is_error();
        match shape {
            Shape::ToolMessage => json!({"role": "tool", "tool_call_id": tool_call_id, "content": self.to_text()}),
            Shape::FunctionCallOutput => {
                let output = match self {
                    ModelOutput::Content(parts) => json!(parts.iter().map(openai_responses).collect::<Vec<_>>()),
                    other => json!(other.to_text()),
                };
                json!({"type": "function_call_output", "call_id": tool_call_id, "output": output})
            }
            Shape::ToolResultBlock => {
                let content = match self {
                    ModelOutput::Content(parts) => json!(parts.iter().map(anthropic).collect::<Vec<_>>()),
                    other => json!(other.to_text()),
                };
                let mut block = json!({"type": "tool_result", "tool_use_id": tool_call_id, "content": content});
                if error {
                    block["is_error"] = json!(true);
                }
                block
            }
            Shape::CallToolResult => {
                let content = match self {
                    ModelOutput::Content(parts) => parts.iter().map(|p| McpBlock::of(p).to_json()).collect::<Vec<_>>(),
                    other => vec![json!({"type": "text", "text": other.to_text()})],
                };
                let mut result = json!({ "content": content });
                if error {
                    result["isError"] = json!(true);
                }
                result
            }
            Shape::FunctionResponse => gemini(self, answering),
        }
    }
}

/// A Gemini `functionResponse` part: `{output}` or `{error}` as the `response` (the keys the
/// API reads), media in `parts`.
fn gemini(output: &ModelOutput, answering: &Answering<'_>) -> Value {
    let (response, media) = match output {
        ModelOutput::Text(text) => (json!({"output": text}), Vec::new()),
        ModelOutput::Json(value) => (json!({"output": value}), Vec::new()),
        ModelOutput::ErrorText(text) => (json!({"error": text}), Vec::new()),
        ModelOutput::ErrorJson(value) => (json!({"error": value}), Vec::new()),
        ModelOutput::Content(parts) => {
            let (mut media, mut text) = (Vec::new(), Vec::new());
            for part in parts {
                match gemini_media(part) {
                    Some(inline) => media.push(inline),
                    None => text.push(gemini_text(part)),
                }
            }
            (json!({"output": text.join("\n")}), media)
        }
    };
    let mut answer = json!({"id": answering.call_id, "name": answering.name.unwrap_or_default(), "response": response});
    if !media.is_empty() {
        answer["parts"] = Value::Array(media);
    }
    json!({ "functionResponse": answer })
}

/// A part Gemini gets as text: plain-text file data decoded, anything else as its text or
/// stand-in.
fn gemini_text(part: &ContentPart) -> String {
    match part {
        ContentPart::FileData { data, media_type, .. } if media_type == "text/plain" => plain_text(data).unwrap_or_else(|| part.as_text()),
        _ => part.as_text(),
    }
}

/// The media types Gemini takes inline in a function response (images and PDFs).
const GEMINI_MEDIA: [&str; 4] = ["image/png", "image/jpeg", "image/webp", "application/pdf"];

/// A content part as a Gemini `FunctionResponsePart` (`inlineData`), when it is media Gemini
/// takes there; anything else is named in the response's text.
fn gemini_media(part: &ContentPart) -> Option<Value> {
    let (media_type, data) = match part {
        ContentPart::ImageData { data, media_type } | ContentPart::FileData { data, media_type, .. } => (media_type, data),
        ContentPart::Resource {
            media_type: Some(media_type),
            contents: ResourceContents::Blob(data),
            ..
        } => (media_type, data),
        _ => return None,
    };
    GEMINI_MEDIA
        .contains(&media_type.as_str())
        .then(|| json!({"inlineData": {"mimeType": media_type, "data": data}}))
}

fn openai_responses(part: &ContentPart) -> Value {
    match part {
        ContentPart::Text { text } => json!({"type": "input_text", "text": text}),
        ContentPart::ImageUrl { url } => json!({"type": "input_image", "image_url": url, "detail": "auto"}),
        ContentPart::ImageData { data, media_type } => {
            json!({"type": "input_image", "image_url": format!("data:{media_type};base64,{data}"), "detail": "auto"})
        }
        ContentPart::ImageFileId { file_id } => json!({"type": "input_image", "file_id": file_id, "detail": "auto"}),
        ContentPart::FileUrl { url, .. } => json!({"type": "input_file", "file_url": url}),
        ContentPart::FileData {
            data,
            media_type,
            filename,
        } => json!({
            "type": "input_file",
            "file_data": format!("data:{media_type};base64,{data}"),
            "filename": filename.clone().unwrap_or_else(|| "file".into()),
        }),
        ContentPart::FileId { file_id } => json!({"type": "input_file", "file_id": file_id}),
        ContentPart::Resource {
            media_type: Some(media_type),
            contents: ResourceContents::Blob(data),
            ..
        } if media_type.starts_with("image/") => {
            json!({"type": "input_image", "image_url": format!("data:{media_type};base64,{data}"), "detail": "auto"})
        }
        ContentPart::AudioData { .. } | ContentPart::ResourceLink { .. } | ContentPart::Resource { .. } | ContentPart::Custom { .. } => {
            json!({"type": "input_text", "text": part.as_text()})
        }
    }
}

/// The image types Anthropic takes as base64 images.
const ANTHROPIC_IMAGES: [&str; 4] = ["image/jpeg", "image/png", "image/gif", "image/webp"];

/// Base64 data that decodes to UTF-8 text, decoded.
fn plain_text(data: &str) -> Option<String> {
    use base64::Engine as _;
    let bytes = base64::engine::general_purpose::STANDARD.decode(data.trim()).ok()?;
    String::from_utf8(bytes).ok()
}

fn anthropic(part: &ContentPart) -> Value {
    match part {
        ContentPart::Text { text } => json!({"type": "text", "text": text}),
        ContentPart::ImageUrl { url } => json!({"type": "image", "source": {"type": "url", "url": url}}),
        ContentPart::ImageData { data, media_type } => {
            json!({"type": "image", "source": {"type": "base64", "media_type": media_type, "data": data}})
        }
        ContentPart::ImageFileId { file_id } => json!({"type": "image", "source": {"type": "file", "file_id": file_id}}),
        ContentPart::FileUrl { url, .. } => json!({"type": "document", "source": {"type": "url", "url": url}}),
        // Documents are PDFs (base64) and plain text (the text itself); images given as file
        // data are images; any other file is named in text.
        ContentPart::FileData { data, media_type, .. } if media_type == "text/plain" => match plain_text(data) {
            Some(text) => json!({"type": "document", "source": {"type": "text", "media_type": "text/plain", "data": text}}),
            None => json!({"type": "text", "text": part.as_text()}),
        },
        ContentPart::FileData { data, media_type, .. } if media_type == "application/pdf" => {
            json!({"type": "document", "source": {"type": "base64", "media_type": media_type, "data": data}})
        }
        ContentPart::FileData { data, media_type, .. } if ANTHROPIC_IMAGES.contains(&media_type.as_str()) => {
            json!({"type": "image", "source": {"type": "base64", "media_type": media_type, "data": data}})
        }
        ContentPart::FileData { .. } => json!({"type": "text", "text": part.as_text()}),
        ContentPart::FileId { file_id } => json!({"type": "document", "source": {"type": "file", "file_id": file_id}}),
        ContentPart::Resource {
            media_type: Some(media_type),
            contents: ResourceContents::Blob(data),
            ..
        } if media_type.starts_with("image/") => {
            json!({"type": "image", "source": {"type": "base64", "media_type": media_type, "data": data}})
        }
        ContentPart::AudioData { .. } | ContentPart::ResourceLink { .. } | ContentPart::Resource { .. } => {
            json!({"type": "text", "text": part.as_text()})
        }
        ContentPart::Custom { provider_options } => provider_options
            .get("anthropic")
            .cloned()
            .unwrap_or_else(|| json!({"type": "text", "text": part.as_text()})),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn audio_and_resources_reach_mcp_as_blocks_and_others_as_text() {
        let out = ModelOutput::content([
            ContentPart::AudioData {
                data: "UklG".into(),
                media_type: "audio/wav".into(),
            },
            ContentPart::ResourceLink {
                uri: "file:///r/report.pdf".into(),
                name: "report".into(),
                media_type: Some("application/pdf".into()),
                title: Some("Report".into()),
                description: None,
            },
            ContentPart::Resource {
                uri: "test://notes".into(),
                media_type: Some("text/plain".into()),
                contents: ResourceContents::Text("the notes".into()),
            },
            ContentPart::Resource {
                uri: "test://dot.png".into(),
                media_type: Some("image/png".into()),
                contents: ResourceContents::Blob("iVBOR".into()),
            },
        ]);
        let m = out.to_tool_result(Dialect::Mcp, "c").unwrap();
        assert_eq!(m["content"][0], json!({"type": "audio", "data": "UklG", "mimeType": "audio/wav"}));
        assert_eq!(
            m["content"][1],
            json!({"type": "resource_link", "uri": "file:///r/report.pdf", "name": "report", "mimeType": "application/pdf", "title": "Report"})
        );
        assert_eq!(
            m["content"][2],
            json!({"type": "resource", "resource": {"uri": "test://notes", "mimeType": "text/plain", "text": "the notes"}})
        );
        assert_eq!(m["content"][3]["resource"]["blob"], "iVBOR");
        let a = out.to_tool_result(Dialect::Anthropic, "t").unwrap();
        assert_eq!(a["content"][0], json!({"type": "text", "text": "[audio: audio/wav, inline]"}));
        assert_eq!(a["content"][2], json!({"type": "text", "text": "the notes"}));
        assert_eq!(a["content"][3]["source"]["type"], "base64");
        let r = out.to_tool_result(Dialect::OpenAiResponses, "c").unwrap();
        assert_eq!(
            r["output"][1],
            json!({"type": "input_text", "text": "[resource: file:///r/report.pdf]"})
        );
        assert_eq!(r["output"][3]["image_url"], "data:image/png;base64,iVBOR");
        let wire = serde_json::to_value(&out).unwrap();
        assert_eq!(
            wire["value"][0],
            json!({"type": "audio-data", "data": "UklG", "mediaType": "audio/wav"})
        );
        assert_eq!(
            wire["value"][2],
            json!({"type": "resource", "uri": "test://notes", "mediaType": "text/plain", "text": "the notes"})
        );
        assert_eq!(
            serde_json::from_value::<ModelOutput>(wire).unwrap(),
            out,
            "the wire form reads back"
        );
    }

    fn all_parts() -> ModelOutput {
        ModelOutput::content([
            ContentPart::text("Seattle: 21°C"),
            ContentPart::image_url("https://example.com/radar.png"),
            ContentPart::ImageData {
                data: "iVBOR".into(),
                media_type: "image/png".into(),
            },
            ContentPart::FileData {
                data: "JVBER".into(),
                media_type: "application/pdf".into(),
                filename: Some("r.pdf".into()),
            },
            ContentPart::FileId { file_id: "file-1".into() },
        ])
    }

    #[test]
    fn text_and_json_outputs() {
        let out = ModelOutput::json(json!({"a": 1}));
        assert_eq!(
            out.to_tool_result(Dialect::OpenAiChat, "c"),
            Some(json!({"role": "tool", "tool_call_id": "c", "content": "{\"a\":1}"}))
        );
        assert_eq!(
            out.to_tool_result(Dialect::OpenAiResponses, "c"),
            Some(json!({"type": "function_call_output", "call_id": "c", "output": "{\"a\":1}"}))
        );
        let err = ModelOutput::ErrorText("boom".into());
        assert_eq!(
            err.to_tool_result(Dialect::Anthropic, "t"),
            Some(json!({"type": "tool_result", "tool_use_id": "t", "content": "boom", "is_error": true}))
        );
        assert_eq!(
            err.to_tool_result(Dialect::Mcp, "t"),
            Some(json!({"content": [{"type": "text", "text": "boom"}], "isError": true}))
        );
        for gemini in [Dialect::GeminiOpenApi, Dialect::GeminiJsonSchema] {
            assert_eq!(out.to_tool_result(gemini, "c"), None);
        }
    }

    #[test]
    fn content_parts_per_target() {
        let out = all_parts();
        let a = out.to_tool_result(Dialect::Anthropic, "t").unwrap();
        assert_eq!(a["content"][0], json!({"type": "text", "text": "Seattle: 21°C"}));
        assert_eq!(
            a["content"][2]["source"],
            json!({"type": "base64", "media_type": "image/png", "data": "iVBOR"})
        );
        assert_eq!(a["content"][3]["type"], "document");
        assert_eq!(a["content"][4]["source"], json!({"type": "file", "file_id": "file-1"}));
        assert!(a.get("is_error").is_none());

        let r = out.to_tool_result(Dialect::OpenAiResponses, "c").unwrap();
        assert_eq!(
            r["output"][1],
            json!({"type": "input_image", "image_url": "https://example.com/radar.png", "detail": "auto"})
        );
        assert_eq!(r["output"][2]["image_url"], "data:image/png;base64,iVBOR");
        assert_eq!(r["output"][3]["filename"], "r.pdf");

        let m = out.to_tool_result(Dialect::Mcp, "c").unwrap();
        assert_eq!(m["content"][2], json!({"type": "image", "data": "iVBOR", "mimeType": "image/png"}));
        assert_eq!(
            m["content"][1],
            json!({"type": "resource_link", "uri": "https://example.com/radar.png", "name": "radar.png"})
        );
        assert_eq!(m["content"][3]["resource"]["blob"], "JVBER");

        let c = out.to_tool_result(Dialect::OpenAiChat, "c").unwrap();
        assert_eq!(
            c["content"],
            "Seattle: 21°C\n[image: https://example.com/radar.png]\n[image: image/png, inline]\n[file: r.pdf, application/pdf]\n[file: file-1]"
        );
    }
}
