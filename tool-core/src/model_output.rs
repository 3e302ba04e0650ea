//! What the model sees of a tool's result, as opposed to what the application receives.
//!
//! Owns [`ModelOutput`] and [`ContentPart`], the provider-neutral shapes a `to_model_output`
//! function returns. Mapping them onto each provider's tool-result format belongs to the
//! catalog/runtime layer, not here.

use serde::{Deserialize, Serialize};

/// The value a model receives for a tool result.
///
/// Serialises as `{"type": "text" | "json" | "error-text" | "error-json" | "content", "value": …}`.
///
/// ```
/// use tool_core::{ModelOutput, ContentPart};
///
/// let out = ModelOutput::content([
///     ContentPart::text("Seattle: 21°C and sunny"),
///     ContentPart::image_url("https://example.com/radar.png"),
/// ]);
/// let json = serde_json::to_value(&out).unwrap();
/// assert_eq!(json["type"], "content");
/// assert_eq!(json["value"][1]["type"], "image-url");
/// ```
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "type", content = "value", rename_all = "kebab-case")]
pub enum ModelOutput {
    /// Plain text.
    Text(String),
    /// Any JSON value.
    Json(serde_json::Value),
    /// An error, as text.
    ErrorText(String),
    /// An error, as JSON.
    ErrorJson(serde_json::Value),
    /// Multimodal content parts.
    Content(Vec<ContentPart>),
}

impl ModelOutput {
    /// Text output.
    pub fn text(text: impl Into<String>) -> Self {
        ModelOutput::Text(text.into())
    }

    /// JSON output.
    pub fn json(value: serde_json::Value) -> Self {
        ModelOutput::Json(value)
    }

    /// Content-part output.
    pub fn content(parts: impl IntoIterator<Item = ContentPart>) -> Self {
        ModelOutput::Content(parts.into_iter().collect())
    }
}

/// One part of a multimodal [`ModelOutput::Content`].
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "type", rename_all = "kebab-case")]
pub enum ContentPart {
    /// Text.
    Text {
        /// The text.
        text: String,
    },
    /// An image by URL.
    ImageUrl {
        /// The image URL.
        url: String,
    },
    /// Inline image bytes, base64-encoded.
    ImageData {
        /// Base64 data.
        data: String,
        /// IANA media type, e.g. `image/png`.
        #[serde(rename = "mediaType")]
        media_type: String,
    },
    /// A file by URL.
    FileUrl {
        /// The file URL.
        url: String,
        /// IANA media type, when known.
        #[serde(rename = "mediaType", default, skip_serializing_if = "Option::is_none")]
        media_type: Option<String>,
    },
    /// Inline file bytes, base64-encoded.
    FileData {
        /// Base64 data.
        data: String,
        /// IANA media type.
        #[serde(rename = "mediaType")]
        media_type: String,
        /// File name, when known.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        filename: Option<String>,
    },
    /// A file already uploaded to the provider.
    FileId {
        /// Provider file id.
        #[serde(rename = "fileId")]
        file_id: String,
    },
    /// An image already uploaded to the provider.
    ImageFileId {
        /// Provider file id.
        #[serde(rename = "fileId")]
        file_id: String,
    },
    /// Inline audio bytes, base64-encoded.
    AudioData {
        /// Base64 data.
        data: String,
        /// IANA media type, e.g. `audio/wav`.
        #[serde(rename = "mediaType")]
        media_type: String,
    },
    /// A resource by URI that the caller may fetch, not its contents (an MCP `resource_link`).
    ResourceLink {
        /// The resource's URI.
        uri: String,
        /// Its programmatic name.
        name: String,
        /// IANA media type, when known.
        #[serde(rename = "mediaType", default, skip_serializing_if = "Option::is_none")]
        media_type: Option<String>,
        /// A human-readable title, when given.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        title: Option<String>,
        /// What it is, when told.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        description: Option<String>,
    },
    /// A resource's contents, inline (an MCP embedded `resource`): text, or base64 bytes.
    Resource {
        /// The resource's URI.
        uri: String,
        /// IANA media type, when known.
        #[serde(rename = "mediaType", default, skip_serializing_if = "Option::is_none")]
        media_type: Option<String>,
        /// The contents, as text or as base64 bytes.
        #[serde(flatten)]
        contents: ResourceContents,
    },
    /// A provider-specific part, passed through as is.
    Custom {
        /// Provider-specific options.
        #[serde(rename = "providerOptions", default)]
        provider_options: serde_json::Value,
    },
}

/// The contents of a [`ContentPart::Resource`]: `{"text": …}` or `{"blob": …}`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum ResourceContents {
    /// Text.
    Text(String),
    /// Base64 bytes.
    Blob(String),
}

impl ContentPart {
    /// A text part.
    pub fn text(text: impl Into<String>) -> Self {
        ContentPart::Text { text: text.into() }
    }

    /// An image-by-URL part.
    pub fn image_url(url: impl Into<String>) -> Self {
        ContentPart::ImageUrl { url: url.into() }
    }
}

/// Where a tool result goes back to the model.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ResultTarget {
    /// OpenAI Chat Completions: a `{role: "tool"}` message.
    OpenAiChat,
    /// OpenAI Responses: a `function_call_output` item.
    OpenAiResponses,
    /// Anthropic Messages: a `tool_result` content block.
    Anthropic,
    /// MCP: a `tools/call` result.
    Mcp,
}

/// A resource link's name: the last path segment of its URL (the URL itself if it has none).
pub(crate) fn link_name(url: &str) -> &str {
    let path = url.split(['?', '#']).next().unwrap_or(url);
    path.rsplit('/').find(|s| !s.is_empty() && !s.contains(':')).unwrap_or(url)
}

fn json_text(value: &serde_json::Value) -> String {
    match value {
        serde_json::Value::String(s) => s.clone(),
        other => other.to_string(),
    }
}

impl ContentPart {
    /// A text stand-in for targets that cannot carry this part (names what it was).
    pub(crate) fn as_text(&self) -> String {
        match self {
            ContentPart::Text { text } => text.clone(),
            ContentPart::ImageUrl { url } => format!("[image: {url}]"),
            ContentPart::ImageData { media_type, .. } => format!("[image: {media_type}, inline]"),
            ContentPart::FileUrl { url, .. } => format!("[file: {url}]"),
            ContentPart::FileData { media_type, filename, .. } => {
                format!("[file: {}, {media_type}]", filename.as_deref().unwrap_or("inline"))
            }
            ContentPart::FileId { file_id } => format!("[file: {file_id}]"),
            ContentPart::ImageFileId { file_id } => format!("[image: {file_id}]"),
            ContentPart::AudioData { media_type, .. } => format!("[audio: {media_type}, inline]"),
            ContentPart::ResourceLink { uri, .. } => format!("[resource: {uri}]"),
            ContentPart::Resource {
                contents: ResourceContents::Text(text),
                ..
            } => text.clone(),
            ContentPart::Resource { uri, media_type, .. } => {
                format!(
                    "[resource: {uri}, {}, inline]",
                    media_type.as_deref().unwrap_or("application/octet-stream")
                )
            }
            ContentPart::Custom { provider_options } => provider_options.to_string(),
        }
    }

    fn openai_responses(&self) -> serde_json::Value {
        use serde_json::json;
        match self {
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
            ContentPart::AudioData { .. }
            | ContentPart::ResourceLink { .. }
            | ContentPart::Resource { .. }
            | ContentPart::Custom { .. } => {
                json!({"type": "input_text", "text": self.as_text()})
            }
        }
    }

    fn anthropic(&self) -> serde_json::Value {
        use serde_json::json;
        match self {
            ContentPart::Text { text } => json!({"type": "text", "text": text}),
            ContentPart::ImageUrl { url } => json!({"type": "image", "source": {"type": "url", "url": url}}),
            ContentPart::ImageData { data, media_type } => {
                json!({"type": "image", "source": {"type": "base64", "media_type": media_type, "data": data}})
            }
            ContentPart::ImageFileId { file_id } => json!({"type": "image", "source": {"type": "file", "file_id": file_id}}),
            ContentPart::FileUrl { url, .. } => json!({"type": "document", "source": {"type": "url", "url": url}}),
            ContentPart::FileData { data, media_type, .. } if media_type == "text/plain" => {
                json!({"type": "document", "source": {"type": "text", "media_type": "text/plain", "data": data}})
            }
            ContentPart::FileData { data, media_type, .. } => {
                json!({"type": "document", "source": {"type": "base64", "media_type": media_type, "data": data}})
            }
            ContentPart::FileId { file_id } => json!({"type": "document", "source": {"type": "file", "file_id": file_id}}),
            ContentPart::Resource {
                media_type: Some(media_type),
                contents: ResourceContents::Blob(data),
                ..
            } if media_type.starts_with("image/") => {
                json!({"type": "image", "source": {"type": "base64", "media_type": media_type, "data": data}})
            }
            ContentPart::AudioData { .. } | ContentPart::ResourceLink { .. } | ContentPart::Resource { .. } => {
                json!({"type": "text", "text": self.as_text()})
            }
            ContentPart::Custom { provider_options } => provider_options
                .get("anthropic")
                .cloned()
                .unwrap_or_else(|| json!({"type": "text", "text": self.as_text()})),
        }
    }

    fn mcp(&self) -> serde_json::Value {
        use serde_json::json;
        match self {
            ContentPart::Text { text } => json!({"type": "text", "text": text}),
            ContentPart::ImageData { data, media_type } if media_type.starts_with("audio/") => {
                json!({"type": "audio", "data": data, "mimeType": media_type})
            }
            ContentPart::ImageData { data, media_type } => json!({"type": "image", "data": data, "mimeType": media_type}),
            ContentPart::AudioData { data, media_type } => json!({"type": "audio", "data": data, "mimeType": media_type}),
            ContentPart::ResourceLink {
                uri,
                name,
                media_type,
                title,
                description,
            } => {
                let mut link = json!({"type": "resource_link", "uri": uri, "name": name});
                for (key, value) in [("mimeType", media_type), ("title", title), ("description", description)] {
                    if let Some(v) = value {
                        link[key] = json!(v);
                    }
                }
                link
            }
            ContentPart::Resource { uri, media_type, contents } => {
                let mut resource = json!({"uri": uri});
                if let Some(m) = media_type {
                    resource["mimeType"] = json!(m);
                }
                match contents {
                    ResourceContents::Text(text) => resource["text"] = json!(text),
                    ResourceContents::Blob(blob) => resource["blob"] = json!(blob),
                }
                json!({"type": "resource", "resource": resource})
            }
            ContentPart::ImageUrl { url } => json!({"type": "resource_link", "uri": url, "name": link_name(url)}),
            ContentPart::FileUrl { url, media_type } => {
                let mut link = json!({"type": "resource_link", "uri": url, "name": link_name(url)});
                if let Some(m) = media_type {
                    link["mimeType"] = json!(m);
                }
                link
            }
            ContentPart::FileData {
                data,
                media_type,
                filename,
            } => json!({
                "type": "resource",
                "resource": {"uri": format!("file:///{}", filename.as_deref().unwrap_or("inline")), "mimeType": media_type, "blob": data}
            }),
            // An MCP block given as is (`{"mcp": {"type": "resource", ...}}`), e.g. an embedded
            // text resource.
            ContentPart::Custom { provider_options } if provider_options.get("mcp").is_some_and(serde_json::Value::is_object) => {
                provider_options["mcp"].clone()
            }
            ContentPart::FileId { .. } | ContentPart::ImageFileId { .. } | ContentPart::Custom { .. } => {
                json!({"type": "text", "text": self.as_text()})
            }
        }
    }
}

impl ModelOutput {
    /// Whether this output reports an error.
    pub fn is_error(&self) -> bool {
        matches!(self, ModelOutput::ErrorText(_) | ModelOutput::ErrorJson(_))
    }

    /// The output as plain text (JSON as its text, parts as text with stand-ins for media).
    pub fn to_text(&self) -> String {
        match self {
            ModelOutput::Text(t) | ModelOutput::ErrorText(t) => t.clone(),
            ModelOutput::Json(v) | ModelOutput::ErrorJson(v) => json_text(v),
            ModelOutput::Content(parts) => parts.iter().map(ContentPart::as_text).collect::<Vec<_>>().join("\n"),
        }
    }

    /// The tool-result message or block a provider takes for this output.
    ///
    /// - OpenAI Chat: `{role: "tool", tool_call_id, content}` (text; the chat API has no media in
    ///   tool messages, so media parts appear as `[image: url]` stand-ins).
    ///
    /// Parts a target cannot carry (audio, resource links and non-image resource bytes outside
    /// MCP) become text stand-ins naming what they were; a text resource becomes its text.
    /// - OpenAI Responses: `{type: "function_call_output", call_id, output}` (text, or
    ///   `input_text` / `input_image` / `input_file` parts).
    /// - Anthropic: `{type: "tool_result", tool_use_id, content, is_error?}` with `text`, `image`
    ///   and `document` blocks (base64, URL or file sources).
    /// - MCP: a `tools/call` result `{content, isError?}` with `text`, `image`, `audio`,
    ///   `resource_link` and `resource` blocks (`structuredContent` is added by the server from
    ///   the raw output).
    ///
    /// ```
    /// use tool_core::model_output::{ContentPart, ModelOutput, ResultTarget};
    /// let out = ModelOutput::content([ContentPart::text("Radar:"), ContentPart::image_url("https://x/r.png")]);
    /// let block = out.to_tool_result(ResultTarget::Anthropic, "toolu_1");
    /// assert_eq!(block["content"][1]["source"], serde_json::json!({"type": "url", "url": "https://x/r.png"}));
    /// let msg = out.to_tool_result(ResultTarget::OpenAiChat, "call_1");
    /// assert_eq!(msg["content"], "Radar:\n[image: https://x/r.png]");
    /// ```
    pub fn to_tool_result(&self, target: ResultTarget, tool_call_id: &str) -> serde_json::Value {
        use serde_json::json;
        let error = self.is_error();
        match target {
            ResultTarget::OpenAiChat => json!({"role": "tool", "tool_call_id": tool_call_id, "content": self.to_text()}),
            ResultTarget::OpenAiResponses => {
                let output = match self {
                    ModelOutput::Content(parts) => json!(parts.iter().map(ContentPart::openai_responses).collect::<Vec<_>>()),
                    other => json!(other.to_text()),
                };
                json!({"type": "function_call_output", "call_id": tool_call_id, "output": output})
            }
            ResultTarget::Anthropic => {
                let content = match self {
                    ModelOutput::Content(parts) => json!(parts.iter().map(ContentPart::anthropic).collect::<Vec<_>>()),
                    other => json!(other.to_text()),
                };
                let mut block = json!({"type": "tool_result", "tool_use_id": tool_call_id, "content": content});
                if error {
                    block["is_error"] = json!(true);
                }
                block
            }
            ResultTarget::Mcp => {
                let content = match self {
                    ModelOutput::Content(parts) => parts.iter().map(ContentPart::mcp).collect::<Vec<_>>(),
                    other => vec![json!({"type": "text", "text": other.to_text()})],
                };
                let mut result = json!({ "content": content });
                if error {
                    result["isError"] = json!(true);
                }
                result
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

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
            out.to_tool_result(ResultTarget::OpenAiChat, "c"),
            json!({"role": "tool", "tool_call_id": "c", "content": "{\"a\":1}"})
        );
        assert_eq!(
            out.to_tool_result(ResultTarget::OpenAiResponses, "c"),
            json!({"type": "function_call_output", "call_id": "c", "output": "{\"a\":1}"})
        );
        let err = ModelOutput::ErrorText("boom".into());
        assert_eq!(
            err.to_tool_result(ResultTarget::Anthropic, "t"),
            json!({"type": "tool_result", "tool_use_id": "t", "content": "boom", "is_error": true})
        );
        assert_eq!(
            err.to_tool_result(ResultTarget::Mcp, "t"),
            json!({"content": [{"type": "text", "text": "boom"}], "isError": true})
        );
    }

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
        let m = out.to_tool_result(ResultTarget::Mcp, "c");
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
        let a = out.to_tool_result(ResultTarget::Anthropic, "t");
        assert_eq!(a["content"][0], json!({"type": "text", "text": "[audio: audio/wav, inline]"}));
        assert_eq!(a["content"][2], json!({"type": "text", "text": "the notes"}));
        assert_eq!(a["content"][3]["source"]["type"], "base64");
        let r = out.to_tool_result(ResultTarget::OpenAiResponses, "c");
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

    #[test]
    fn content_parts_per_target() {
        let out = all_parts();
        let a = out.to_tool_result(ResultTarget::Anthropic, "t");
        assert_eq!(a["content"][0], json!({"type": "text", "text": "Seattle: 21°C"}));
        assert_eq!(
            a["content"][2]["source"],
            json!({"type": "base64", "media_type": "image/png", "data": "iVBOR"})
        );
        assert_eq!(a["content"][3]["type"], "document");
        assert_eq!(a["content"][4]["source"], json!({"type": "file", "file_id": "file-1"}));
        assert!(a.get("is_error").is_none());

        let r = out.to_tool_result(ResultTarget::OpenAiResponses, "c");
        assert_eq!(
            r["output"][1],
            json!({"type": "input_image", "image_url": "https://example.com/radar.png", "detail": "auto"})
        );
        assert_eq!(r["output"][2]["image_url"], "data:image/png;base64,iVBOR");
        assert_eq!(r["output"][3]["filename"], "r.pdf");

        let m = out.to_tool_result(ResultTarget::Mcp, "c");
        assert_eq!(m["content"][2], json!({"type": "image", "data": "iVBOR", "mimeType": "image/png"}));
        assert_eq!(
            m["content"][1],
            json!({"type": "resource_link", "uri": "https://example.com/radar.png", "name": "radar.png"})
        );
        assert_eq!(m["content"][3]["resource"]["blob"], "JVBER");

        let c = out.to_tool_result(ResultTarget::OpenAiChat, "c");
        assert_eq!(
            c["content"],
            "Seattle: 21°C\n[image: https://example.com/radar.png]\n[image: image/png, inline]\n[file: r.pdf, application/pdf]\n[file: file-1]"
        );
    }
}
