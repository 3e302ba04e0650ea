//! What the model sees of a tool's result, as opposed to what the application receives.
//!
//! Owns [`ModelOutput`] and [`ContentPart`], the provider-neutral shapes a `to_model_output`
//! function returns, and their plain-text reading. Mapping them onto each provider's tool-result
//! format belongs to the dialect layer ([`ModelOutput::to_tool_result`], in
//! [`dialect`](crate::dialect)), not here: this module must not name a provider.

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
    /// A text stand-in for dialects that cannot carry this part (names what it was).
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
}
