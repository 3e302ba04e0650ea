//! How each content part reaches MCP: the one place that decides which `tools/call` content
//! block a [`ContentPart`] becomes.
//!
//! Owns [`McpBlock`], a borrowed view of an MCP content block, and [`McpBlock::of`], the
//! decision. Two writers read it and decide nothing: the JSON tool result of
//! [`ModelOutput::to_tool_result`](crate::model_output::ModelOutput::to_tool_result) (which the
//! lean core can write without the MCP server) serialises it, and the MCP server
//! (`mcp::convert`, feature `mcp`) copies it field by field into `rmcp`'s types.

use std::borrow::Cow;

use serde::Serialize;
use serde_json::Value;

use crate::model_output::{ContentPart, ResourceContents, link_name};

/// An MCP content block, borrowed from the part it shows. It serialises as MCP writes it
/// (`{"type": "image", "data": …, "mimeType": …}`).
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(tag = "type", rename_all = "snake_case")]
pub(crate) enum McpBlock<'a> {
    /// `{type: "text", text}`; also the stand-in for a part MCP cannot carry.
    Text {
        /// The text: the part's own, or a stand-in made for it (`[file: …]`).
        text: Cow<'a, str>,
    },
    /// `{type: "image", data, mimeType}` (base64).
    Image {
        /// Base64 bytes.
        data: &'a str,
        /// The media type.
        #[serde(rename = "mimeType")]
        mime_type: &'a str,
    },
    /// `{type: "audio", data, mimeType}` (base64).
    Audio {
        /// Base64 bytes.
        data: &'a str,
        /// The media type.
        #[serde(rename = "mimeType")]
        mime_type: &'a str,
    },
    /// `{type: "resource_link", uri, name, mimeType?, title?, description?}`.
    ResourceLink {
        /// Where the resource is.
        uri: &'a str,
        /// Its name.
        name: &'a str,
        /// Its media type, when known.
        #[serde(rename = "mimeType", skip_serializing_if = "Option::is_none")]
        mime_type: Option<&'a str>,
        /// A title for people.
        #[serde(skip_serializing_if = "Option::is_none")]
        title: Option<&'a str>,
        /// What it holds.
        #[serde(skip_serializing_if = "Option::is_none")]
        description: Option<&'a str>,
    },
    /// `{type: "resource", resource: {uri, mimeType?, text | blob}}`.
    Resource {
        /// The embedded resource.
        resource: Embedded<'a>,
    },
    /// A tool's own MCP block (`ContentPart::Custom` with an `mcp` object), as given.
    #[serde(untagged)]
    Raw(&'a Value),
}

/// The resource of a [`McpBlock::Resource`].
#[derive(Debug, Clone, PartialEq, Serialize)]
pub(crate) struct Embedded<'a> {
    /// Its URI (`file:///NAME` for inline file data).
    pub(crate) uri: Cow<'a, str>,
    /// Its media type, when known.
    #[serde(rename = "mimeType", skip_serializing_if = "Option::is_none")]
    pub(crate) mime_type: Option<&'a str>,
    /// Its contents: `text` or `blob`.
    #[serde(flatten)]
    pub(crate) contents: Contents<'a>,
}

/// What an [`Embedded`] resource holds.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(rename_all = "lowercase")]
pub(crate) enum Contents<'a> {
    /// Text.
    Text(&'a str),
    /// Base64 bytes.
    Blob(&'a str),
}

impl<'a> McpBlock<'a> {
    /// The block a part becomes: each kind MCP has keeps its kind (audio given as image data
    /// is audio), URLs become resource links, inline files embedded resources, and what MCP
    /// cannot carry (provider file ids, other providers' custom parts) a text stand-in.
    pub(crate) fn of(part: &'a ContentPart) -> McpBlock<'a> {
        match part {
            ContentPart::Text { text } => McpBlock::Text { text: Cow::Borrowed(text) },
            ContentPart::ImageData { data, media_type } if media_type.starts_with("audio/") => McpBlock::Audio {
                data,
                mime_type: media_type,
            },
            ContentPart::ImageData { data, media_type } => McpBlock::Image {
                data,
                mime_type: media_type,
            },
            ContentPart::AudioData { data, media_type } => McpBlock::Audio {
                data,
                mime_type: media_type,
            },
            ContentPart::ResourceLink {
                uri,
                name,
                media_type,
                title,
                description,
            } => McpBlock::ResourceLink {
                uri,
                name,
                mime_type: media_type.as_deref(),
                title: title.as_deref(),
                description: description.as_deref(),
            },
            ContentPart::Resource { uri, media_type, contents } => McpBlock::Resource {
                resource: Embedded {
                    uri: Cow::Borrowed(uri),
                    mime_type: media_type.as_deref(),
                    contents: match contents {
                        ResourceContents::Text(text) => Contents::Text(text),
                        ResourceContents::Blob(blob) => Contents::Blob(blob),
                    },
                },
            },
            ContentPart::ImageUrl { url } => McpBlock::link(url, None),
            ContentPart::FileUrl { url, media_type } => McpBlock::link(url, media_type.as_deref()),
            ContentPart::FileData {
                data,
                media_type,
                filename,
            } => McpBlock::Resource {
                resource: Embedded {
                    uri: Cow::Owned(format!("file:///{}", filename.as_deref().unwrap_or("inline"))),
                    mime_type: Some(media_type),
                    contents: Contents::Blob(data),
                },
            },
            // An MCP block given as is (`{"mcp": {"type": "resource", ...}}`), e.g. an embedded
            // text resource.
            ContentPart::Custom { provider_options } if provider_options.get("mcp").is_some_and(Value::is_object) => {
                McpBlock::Raw(&provider_options["mcp"])
            }
            ContentPart::FileId { .. } | ContentPart::ImageFileId { .. } | ContentPart::Custom { .. } => McpBlock::Text {
                text: Cow::Owned(part.as_text()),
            },
        }
    }

    /// A link to a URL, named after its last path segment.
    fn link(url: &'a str, mime_type: Option<&'a str>) -> McpBlock<'a> {
        McpBlock::ResourceLink {
            uri: url,
            name: link_name(url),
            mime_type,
            title: None,
            description: None,
        }
    }

    /// The block as MCP's JSON.
    pub(crate) fn to_json(&self) -> Value {
        // Every field is a string or an object of strings: serialising cannot fail.
        serde_json::to_value(self).unwrap_or(Value::Null)
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    #[test]
    fn blocks_serialise_as_mcp_writes_them() {
        let audio = ContentPart::ImageData {
            data: "UklG".into(),
            media_type: "audio/wav".into(),
        };
        assert_eq!(
            McpBlock::of(&audio).to_json(),
            json!({"type": "audio", "data": "UklG", "mimeType": "audio/wav"})
        );
        let file = ContentPart::FileData {
            data: "JVBER".into(),
            media_type: "application/pdf".into(),
            filename: Some("r.pdf".into()),
        };
        assert_eq!(
            McpBlock::of(&file).to_json(),
            json!({"type": "resource", "resource": {"uri": "file:///r.pdf", "mimeType": "application/pdf", "blob": "JVBER"}})
        );
        let link = ContentPart::FileUrl {
            url: "https://example.com/a/r.pdf?x=1".into(),
            media_type: None,
        };
        assert_eq!(
            McpBlock::of(&link).to_json(),
            json!({"type": "resource_link", "uri": "https://example.com/a/r.pdf?x=1", "name": "r.pdf"})
        );
        let own = ContentPart::Custom {
            provider_options: json!({"mcp": {"type": "text", "text": "as given"}}),
        };
        assert_eq!(McpBlock::of(&own).to_json(), json!({"type": "text", "text": "as given"}));
        let id = ContentPart::FileId { file_id: "file-1".into() };
        assert_eq!(McpBlock::of(&id).to_json(), json!({"type": "text", "text": id.as_text()}));
    }
}
