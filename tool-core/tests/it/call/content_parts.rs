//! Every content part kind in every tool-result format: for each `ContentPart` variant (an
//! exhaustive `match` below makes a new variant fail to compile until it has a row), the exact
//! block or stand-in OpenAI Chat, OpenAI Responses, Anthropic and MCP get, and Gemini's
//! `functionResponse` (which names the function, so only `to_tool_result_named` writes it). Rows follow each provider's published content types (PROTOCOLS.md): Chat tool
//! messages carry text only; Responses `input_text`/`input_image`/`input_file`; Anthropic
//! `text`/`image` (base64 PNG/JPEG/GIF/WebP, URL, file) and `document` (PDF as base64 or URL,
//! plain text as text, file); MCP `text`/`image`/`audio`/`resource_link`/`resource`.

use serde_json::{Value, json};
use tool_core::Dialect;
use tool_core::{ContentPart, ModelOutput, ResourceContents};

/// A name per variant; a new variant is a compile error here until the table has it.
fn kind(part: &ContentPart) -> &'static str {
    match part {
        ContentPart::Text { .. } => "text",
        ContentPart::ImageUrl { .. } => "image-url",
        ContentPart::ImageData { .. } => "image-data",
        ContentPart::FileUrl { .. } => "file-url",
        ContentPart::FileData { .. } => "file-data",
        ContentPart::FileId { .. } => "file-id",
        ContentPart::ImageFileId { .. } => "image-file-id",
        ContentPart::AudioData { .. } => "audio-data",
        ContentPart::ResourceLink { .. } => "resource-link",
        ContentPart::Resource { .. } => "resource",
        ContentPart::Custom { .. } => "custom",
    }
}

/// One part and what each format makes of it: (Chat's text, Responses' item, Anthropic's block,
/// MCP's block).
struct Row {
    part: ContentPart,
    chat: &'static str,
    responses: Value,
    anthropic: Value,
    mcp: Value,
}

fn text(t: &str) -> (Value, Value, Value) {
    (
        json!({"type": "input_text", "text": t}),
        json!({"type": "text", "text": t}),
        json!({"type": "text", "text": t}),
    )
}

fn rows() -> Vec<Row> {
    let png = "https://x.example/r.png";
    let pdf = "https://x.example/r.pdf";
    let mut rows = vec![
        Row {
            part: ContentPart::text("hi"),
            chat: "hi",
            responses: text("hi").0,
            anthropic: text("hi").1,
            mcp: text("hi").2,
        },
        Row {
            part: ContentPart::image_url(png),
            chat: "[image: https://x.example/r.png]",
            responses: json!({"type": "input_image", "image_url": png, "detail": "auto"}),
            anthropic: json!({"type": "image", "source": {"type": "url", "url": png}}),
            mcp: json!({"type": "resource_link", "uri": png, "name": "r.png"}),
        },
        Row {
            part: ContentPart::ImageData {
                data: "iVBOR".into(),
                media_type: "image/png".into(),
            },
            chat: "[image: image/png, inline]",
            responses: json!({"type": "input_image", "image_url": "data:image/png;base64,iVBOR", "detail": "auto"}),
            anthropic: json!({"type": "image", "source": {"type": "base64", "media_type": "image/png", "data": "iVBOR"}}),
            mcp: json!({"type": "image", "data": "iVBOR", "mimeType": "image/png"}),
        },
        Row {
            part: ContentPart::ImageFileId {
                file_id: "file-img".into(),
            },
            chat: "[image: file-img]",
            responses: json!({"type": "input_image", "file_id": "file-img", "detail": "auto"}),
            anthropic: json!({"type": "image", "source": {"type": "file", "file_id": "file-img"}}),
            mcp: text("[image: file-img]").2,
        },
        Row {
            part: ContentPart::FileUrl {
                url: pdf.into(),
                media_type: Some("application/pdf".into()),
            },
            chat: "[file: https://x.example/r.pdf]",
            responses: json!({"type": "input_file", "file_url": pdf}),
            anthropic: json!({"type": "document", "source": {"type": "url", "url": pdf}}),
            mcp: json!({"type": "resource_link", "uri": pdf, "name": "r.pdf", "mimeType": "application/pdf"}),
        },
        Row {
            part: ContentPart::FileData {
                data: "JVBER".into(),
                media_type: "application/pdf".into(),
                filename: Some("r.pdf".into()),
            },
            chat: "[file: r.pdf, application/pdf]",
            responses: json!({"type": "input_file", "file_data": "data:application/pdf;base64,JVBER", "filename": "r.pdf"}),
            anthropic: json!({"type": "document", "source": {"type": "base64", "media_type": "application/pdf", "data": "JVBER"}}),
            mcp: json!({"type": "resource", "resource": {"uri": "file:///r.pdf", "mimeType": "application/pdf", "blob": "JVBER"}}),
        },
        // Plain text given as file data: Anthropic's text source takes the text itself, decoded.
        Row {
            part: ContentPart::FileData {
                data: "aGVsbG8gd29ybGQ=".into(),
                media_type: "text/plain".into(),
                filename: None,
            },
            chat: "[file: inline, text/plain]",
            responses: json!({"type": "input_file", "file_data": "data:text/plain;base64,aGVsbG8gd29ybGQ=", "filename": "file"}),
            anthropic: json!({"type": "document", "source": {"type": "text", "media_type": "text/plain", "data": "hello world"}}),
            mcp: json!({"type": "resource", "resource": {"uri": "file:///inline", "mimeType": "text/plain", "blob": "aGVsbG8gd29ybGQ="}}),
        },
        // An image given as file data is an image to Anthropic (documents are PDFs and text).
        Row {
            part: ContentPart::FileData {
                data: "R0lGOD".into(),
                media_type: "image/gif".into(),
                filename: Some("a.gif".into()),
            },
            chat: "[file: a.gif, image/gif]",
            responses: json!({"type": "input_file", "file_data": "data:image/gif;base64,R0lGOD", "filename": "a.gif"}),
            anthropic: json!({"type": "image", "source": {"type": "base64", "media_type": "image/gif", "data": "R0lGOD"}}),
            mcp: json!({"type": "resource", "resource": {"uri": "file:///a.gif", "mimeType": "image/gif", "blob": "R0lGOD"}}),
        },
        // A file type Anthropic takes neither as a document nor as an image: a stand-in.
        Row {
            part: ContentPart::FileData {
                data: "UEsDB".into(),
                media_type: "application/zip".into(),
                filename: Some("a.zip".into()),
            },
            chat: "[file: a.zip, application/zip]",
            responses: json!({"type": "input_file", "file_data": "data:application/zip;base64,UEsDB", "filename": "a.zip"}),
            anthropic: text("[file: a.zip, application/zip]").1,
            mcp: json!({"type": "resource", "resource": {"uri": "file:///a.zip", "mimeType": "application/zip", "blob": "UEsDB"}}),
        },
        Row {
            part: ContentPart::FileId { file_id: "file-1".into() },
            chat: "[file: file-1]",
            responses: json!({"type": "input_file", "file_id": "file-1"}),
            anthropic: json!({"type": "document", "source": {"type": "file", "file_id": "file-1"}}),
            mcp: text("[file: file-1]").2,
        },
        Row {
            part: ContentPart::AudioData {
                data: "UklG".into(),
                media_type: "audio/wav".into(),
            },
            chat: "[audio: audio/wav, inline]",
            responses: text("[audio: audio/wav, inline]").0,
            anthropic: text("[audio: audio/wav, inline]").1,
            mcp: json!({"type": "audio", "data": "UklG", "mimeType": "audio/wav"}),
        },
        Row {
            part: ContentPart::ResourceLink {
                uri: "test://notes".into(),
                name: "notes".into(),
                media_type: Some("text/plain".into()),
                title: Some("Notes".into()),
                description: None,
            },
            chat: "[resource: test://notes]",
            responses: text("[resource: test://notes]").0,
            anthropic: text("[resource: test://notes]").1,
            mcp: json!({"type": "resource_link", "uri": "test://notes", "name": "notes", "mimeType": "text/plain", "title": "Notes"}),
        },
        Row {
            part: ContentPart::Resource {
                uri: "test://notes".into(),
                media_type: Some("text/plain".into()),
                contents: ResourceContents::Text("the notes".into()),
            },
            chat: "the notes",
            responses: text("the notes").0,
            anthropic: text("the notes").1,
            mcp: json!({"type": "resource", "resource": {"uri": "test://notes", "mimeType": "text/plain", "text": "the notes"}}),
        },
        Row {
            part: ContentPart::Resource {
                uri: "test://img".into(),
                media_type: Some("image/png".into()),
                contents: ResourceContents::Blob("iVBOR".into()),
            },
            chat: "[resource: test://img, image/png, inline]",
            responses: json!({"type": "input_image", "image_url": "data:image/png;base64,iVBOR", "detail": "auto"}),
            anthropic: json!({"type": "image", "source": {"type": "base64", "media_type": "image/png", "data": "iVBOR"}}),
            mcp: json!({"type": "resource", "resource": {"uri": "test://img", "mimeType": "image/png", "blob": "iVBOR"}}),
        },
    ];
    let custom = json!({"anthropic": {"type": "text", "text": "for Claude"}, "mcp": {"type": "text", "text": "for MCP"}});
    let stand_in: &'static str = Box::leak(custom.to_string().into_boxed_str());
    rows.push(Row {
        part: ContentPart::Custom {
            provider_options: custom.clone(),
        },
        chat: stand_in,
        responses: text(stand_in).0,
        anthropic: json!({"type": "text", "text": "for Claude"}),
        mcp: json!({"type": "text", "text": "for MCP"}),
    });
    rows
}

#[test]
fn every_part_kind_has_a_row() {
    let covered: std::collections::BTreeSet<&str> = rows().iter().map(|r| kind(&r.part)).collect();
    assert_eq!(covered.len(), 11, "{covered:?}");
}

#[test]
fn every_part_in_every_result_format() {
    for row in rows() {
        let what = kind(&row.part);
        let out = ModelOutput::content([row.part.clone()]);
        let chat = out.to_tool_result(Dialect::OpenAiChat, "c").unwrap();
        assert_eq!(
            chat,
            json!({"role": "tool", "tool_call_id": "c", "content": row.chat}),
            "{what}: chat"
        );
        let responses = out.to_tool_result(Dialect::OpenAiResponses, "c").unwrap();
        assert_eq!(responses["output"], json!([row.responses]), "{what}: responses");
        let anthropic = out.to_tool_result(Dialect::Anthropic, "c").unwrap();
        assert_eq!(anthropic["content"], json!([row.anthropic]), "{what}: anthropic");
        let mcp = out.to_tool_result(Dialect::Mcp, "c").unwrap();
        assert_eq!(mcp, json!({"content": [row.mcp]}), "{what}: mcp");
        for gemini in [Dialect::GeminiOpenApi, Dialect::GeminiJsonSchema] {
            assert_eq!(
                out.to_tool_result(gemini, "c"),
                None,
                "{what}: Gemini names the function, not the call"
            );
        }
    }
}

/// Gemini answers a call with a `functionResponse` part naming the function: images and PDFs
/// given as data go inline in its `parts`, everything else is the text of `response.output`
/// (plain-text files decoded), errors are `response.error`. The results are written to
/// `tests/ts/fixtures/result-gemini.json`, which `tests/ts/selftest.sh` type-checks against
/// `@google/genai`'s `Part` and `Content` (`TOOLSMITH_UPDATE_FIXTURES=1` rewrites it).
#[test]
fn every_part_in_a_gemini_function_response() {
    let mut written = Vec::new();
    for (i, row) in rows().into_iter().enumerate() {
        let what = kind(&row.part);
        let id = format!("call_{i}");
        let part = ModelOutput::content([row.part.clone()]).to_tool_result_named(Dialect::GeminiJsonSchema, &id, "get_weather");
        let answer = &part["functionResponse"];
        assert_eq!((&answer["id"], &answer["name"]), (&json!(id), &json!("get_weather")), "{what}");
        let inline = match &row.part {
            ContentPart::ImageData { data, media_type } | ContentPart::FileData { data, media_type, .. } => Some((media_type, data)),
            ContentPart::Resource {
                media_type: Some(media_type),
                contents: ResourceContents::Blob(data),
                ..
            } => Some((media_type, data)),
            _ => None,
        }
        .filter(|(media_type, _)| ["image/png", "image/jpeg", "image/webp", "application/pdf"].contains(&media_type.as_str()));
        match inline {
            Some((media_type, data)) => {
                assert_eq!(
                    answer["parts"],
                    json!([{"inlineData": {"mimeType": media_type, "data": data}}]),
                    "{what}"
                );
                assert_eq!(answer["response"], json!({"output": ""}), "{what}");
            }
            None if row.chat == "[file: inline, text/plain]" => {
                assert_eq!(answer["response"], json!({"output": "hello world"}), "{what}: decoded");
            }
            None => {
                assert!(answer.get("parts").is_none(), "{what}: {part}");
                assert_eq!(answer["response"], json!({"output": row.chat}), "{what}");
            }
        }
        for other in [Dialect::OpenAiChat, Dialect::Anthropic, Dialect::Mcp] {
            let out = ModelOutput::content([row.part.clone()]);
            assert_eq!(
                Some(out.to_tool_result_named(other, &id, "get_weather")),
                out.to_tool_result(other, &id),
                "{what}"
            );
        }
        written.push(part);
    }
    let error = ModelOutput::ErrorText("No weather data for \"Nowhere\".".into());
    let error = error.to_tool_result_named(Dialect::GeminiOpenApi, "call_error", "get_weather");
    assert_eq!(
        error["functionResponse"]["response"],
        json!({"error": "No weather data for \"Nowhere\"."})
    );
    let value = ModelOutput::json(json!({"result": 212.0})).to_tool_result_named(Dialect::GeminiJsonSchema, "call_json", "convert_units");
    assert_eq!(value["functionResponse"]["response"], json!({"output": {"result": 212.0}}));
    written.extend([error, value]);

    let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../tests/ts/fixtures/result-gemini.json");
    let text = serde_json::to_string_pretty(&written).unwrap() + "\n";
    if std::env::var_os("TOOLSMITH_UPDATE_FIXTURES").is_some() {
        std::fs::write(&path, &text).unwrap();
    }
    let stored = std::fs::read_to_string(&path).unwrap_or_default();
    assert_eq!(stored, text, "{} is stale: rerun with TOOLSMITH_UPDATE_FIXTURES=1", path.display());
}
