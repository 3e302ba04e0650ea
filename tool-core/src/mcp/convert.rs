//! Typed conversions of tool-core's values into `rmcp`'s protocol types.
//!
//! Owns how a [`ToolSpec`] becomes a `tools/list` entry ([`tool`]), the copy of a
//! [`ModelOutput`]'s blocks into `rmcp`'s ([`content`]; which block each part becomes is decided
//! once, by the dialect layer's `McpBlock`, for this server and for JSON tool results alike) and how a [`ToolOutput`] becomes a `tools/call` result
//! ([`call_result`]). Each value is built field by field in `rmcp`'s own types, never written as
//! JSON and parsed back; the one JSON step left is a tool's own MCP block
//! (`ContentPart::Custom` with an `mcp` object), which arrives as JSON. It holds no state and
//! does not decide which tools are listed or when (`listing`), nor how a run ends (`call`).

use std::sync::Arc;

use rmcp::model::{
    CallToolResult, ContentBlock, Icon, JsonObject, MetaObject, Resource, ResourceContents, Tool as McpTool, ToolAnnotations,
};
use serde_json::Value;

use super::results::result_uri;
use crate::catalog::pass::{self, PassError, Rewritten};
use crate::dialect::Dialect;
use crate::dialect::mcp_block::{Contents, McpBlock};
use crate::model_output::{ContentPart, ModelOutput};
use crate::spec::ToolSpec;
use crate::tool::ToolOutput;

/// Why a tool cannot be listed over MCP.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub(super) enum NotListable {
    /// Its input (or object output) schema is not one MCP takes.
    #[error(transparent)]
    Schema(#[from] PassError),
    /// Its `_meta` is not an object.
    #[error("tool `{tool}`: `mcp(meta = ...)` must be a JSON object (MCP's `_meta` is one), found `{found}`")]
    Meta {
        /// The tool id.
        tool: String,
        /// The meta given.
        found: String,
    },
    /// An `x-mcp-header` annotation clients would refuse the tool for (SEP-2243).
    #[error("tool `{tool}`: the `x-mcp-header` of `{property}` {rule}")]
    Header {
        /// The tool id.
        tool: String,
        /// The annotated property's path (`a.b`).
        property: String,
        /// What is wrong, worded as a fix.
        rule: String,
    },
}

/// The `tools/list` entry of a tool listed under `name`: its schemas as the tool declares them
/// (an input schema with an object root, an output schema only when it is an object: MCP's
/// `structuredContent` is one), its title, annotations and `_meta`.
pub(super) fn tool(spec: &ToolSpec, name: &str) -> Result<McpTool, NotListable> {
    let input = schema(spec, &spec.schemas.input)?;
    check_headers(spec, &input)?;
    let output = spec
        .schemas
        .output
        .as_ref()
        .filter(|s| s.get("type").and_then(Value::as_str) == Some("object"))
        .map(|s| schema(spec, s))
        .transpose()?;
    let mut tool = McpTool::new_with_raw(name.to_owned(), Some(spec.description.clone().into()), input);
    tool.title = spec.title.clone().or_else(|| spec.presentation.mcp.title.clone());
    tool.output_schema = output;
    tool.annotations = annotations(spec);
    tool.icons = icons(&spec.presentation.mcp.icons);
    tool.meta = match spec.mcp_meta() {
        None => None,
        Some(Value::Object(meta)) => Some(MetaObject(meta)),
        Some(other) => {
            return Err(NotListable::Meta {
                tool: spec.id.clone(),
                found: other.to_string(),
            });
        }
    };
    Ok(tool)
}

/// The `x-mcp-header` annotations of an input schema as SEP-2243 has them (what MCP clients
/// check before they call, refusing the whole tool otherwise): on properties reached from the
/// root through `properties` alone, each an HTTP token unique without regard to case, on a
/// `string`, `integer` or `boolean` property (one type, so not an `Option`: an absent argument
/// has no header to send).
fn check_headers(spec: &ToolSpec, input: &JsonObject) -> Result<(), NotListable> {
    let mut seen = Vec::new();
    let mut path = Vec::new();
    headers_under(spec, input.get("properties"), &mut path, &mut seen)
}

fn headers_under<'a>(
    spec: &ToolSpec,
    properties: Option<&'a Value>,
    path: &mut Vec<&'a str>,
    seen: &mut Vec<String>,
) -> Result<(), NotListable> {
    let Some(Value::Object(properties)) = properties else {
        return Ok(());
    };
    for (name, property) in properties {
        path.push(name);
        if let Some(header) = property.get("x-mcp-header") {
            let refuse = |rule: String| NotListable::Header {
                tool: spec.id.clone(),
                property: path.join("."),
                rule,
            };
            let header = header.as_str().filter(|h| !h.is_empty() && h.chars().all(is_token_char));
            let Some(header) = header else {
                return Err(refuse("must be a non-empty HTTP token (ASCII letters, digits, `-`, …)".into()));
            };
            if seen.contains(&header.to_ascii_lowercase()) {
                return Err(refuse(format!("`{header}` names the header of another property too")));
            }
            seen.push(header.to_ascii_lowercase());
            if !matches!(property.get("type").and_then(Value::as_str), Some("string" | "integer" | "boolean")) {
                return Err(refuse(format!(
                    "needs a `string`, `integer` or `boolean` property (not optional), found type {}",
                    property.get("type").map_or_else(|| "none".to_owned(), Value::to_string)
                )));
            }
        }
        headers_under(spec, property.get("properties"), path, seen)?;
        path.pop();
    }
    Ok(())
}

/// RFC 9110 §5.6.2 `tchar`.
fn is_token_char(c: char) -> bool {
    c.is_ascii_alphanumeric() || "!#$%&'*+-.^_`|~".contains(c)
}

/// A schema as MCP takes it: checked by the MCP pass (an object root), kept verbatim (MCP
/// schemas are JSON Schema 2020-12 and keep their `$schema`).
fn schema(spec: &ToolSpec, schema: &Value) -> Result<Arc<JsonObject>, PassError> {
    let rewritten = match pass::rewrite_mcp(&spec.id, schema)? {
        Rewritten::Unchanged => None,
        Rewritten::New(v) => Some(v),
    };
    match rewritten.as_ref().unwrap_or(schema) {
        Value::Object(map) => Ok(Arc::new(map.clone())),
        _ => Err(PassError {
            tool: spec.id.clone(),
            dialect: Dialect::Mcp,
            path: String::new(),
            rule: "the schema must be a JSON object".into(),
        }),
    }
}

/// The tool's icons as MCP lists them (SEP-973), each with the media type its address names
/// ([`crate::spec::icon_media_type`]), `None` when it has none.
fn icons(srcs: &[String]) -> Option<Vec<Icon>> {
    (!srcs.is_empty()).then(|| {
        srcs.iter()
            .map(|src| {
                let mut icon = Icon::new(src.clone());
                icon.mime_type = crate::spec::icon_media_type(src).map(str::to_owned);
                icon
            })
            .collect()
    })
}

/// The hints the author set (`mcp(...)`), or `None` when none is.
fn annotations(spec: &ToolSpec) -> Option<ToolAnnotations> {
    let m = &spec.presentation.mcp;
    let any = m.title.is_some()
        || m.read_only_hint.is_some()
        || m.destructive_hint.is_some()
        || m.idempotent_hint.is_some()
        || m.open_world_hint.is_some();
    any.then(|| {
        ToolAnnotations::from_raw(
            m.title.clone(),
            m.read_only_hint,
            m.destructive_hint,
            m.idempotent_hint,
            m.open_world_hint,
        )
    })
}

/// The content blocks of what the model sees: text for text and JSON, a block per part for
/// multimodal content (media MCP cannot carry inline become links or text stand-ins). Fails
/// only on a tool's own MCP block that is not one.
pub(super) fn content(output: &ModelOutput) -> Result<Vec<ContentBlock>, serde_json::Error> {
    match output {
        ModelOutput::Content(parts) => parts.iter().map(part).collect(),
        other => Ok(vec![ContentBlock::text(other.to_text())]),
    }
}

/// The `rmcp` block of a part, copied field by field from [`McpBlock::of`] (which decides
/// what each part becomes).
fn part(part: &ContentPart) -> Result<ContentBlock, serde_json::Error> {
    Ok(match McpBlock::of(part) {
        McpBlock::Text { text } => ContentBlock::text(text.into_owned()),
        McpBlock::Image { data, mime_type } => ContentBlock::image(data.to_owned(), mime_type.to_owned()),
        McpBlock::Audio { data, mime_type } => ContentBlock::audio(data.to_owned(), mime_type.to_owned()),
        McpBlock::ResourceLink {
            uri,
            name,
            mime_type,
            title,
            description,
        } => {
            let mut link = Resource::new(uri.to_owned(), name.to_owned());
            link.mime_type = mime_type.map(str::to_owned);
            link.title = title.map(str::to_owned);
            link.description = description.map(str::to_owned);
            ContentBlock::resource_link(link)
        }
        McpBlock::Resource { resource } => {
            let uri = resource.uri.into_owned();
            let mime_type = resource.mime_type.map(str::to_owned);
            ContentBlock::resource(match resource.contents {
                Contents::Text(text) => ResourceContents::TextResourceContents {
                    uri,
                    mime_type,
                    text: text.to_owned(),
                    meta: None,
                },
                Contents::Blob(blob) => ResourceContents::BlobResourceContents {
                    uri,
                    mime_type,
                    blob: blob.to_owned(),
                    meta: None,
                },
            })
        }
        // A tool's own MCP block arrives as JSON, so it is read as one.
        McpBlock::Raw(block) => serde_json::from_value(block.clone())?,
    })
}

/// The `tools/call` result of a finished call: what the model sees as content, and, for a tool
/// with an output schema whose output is an object, that output as `structuredContent` (also
/// as a text block when the tool's own content stands in for it, so a client that reads only
/// content still gets it).
///
/// Within the call's budget ([`crate::budget`]): content over it keeps its head and tail with a
/// marker; `structuredContent` is never cut (a cut object would not match the schema), so one
/// larger than the budget is left out, and the content says so. When anything was cut or left
/// out and `link` is set, the content ends with a `resource_link` to
/// `toolsmith://results/<call-id>` and the full result comes back as a [`Overflow`] to keep.
pub(super) fn call_result(
    output: &ToolOutput,
    has_output_schema: bool,
    link: bool,
) -> Result<(CallToolResult, Option<Overflow>), serde_json::Error> {
    let parsed = output.value();
    let structured = has_output_schema && parsed.is_object();
    // The output is parsed once: without `to_model_output`, the model sees that same value
    // (kept beside it only when the structured content or a budget reads it again).
    let (mut model, value) = match output.model_output() {
        Some(model) => (model.clone(), parsed),
        None if structured || output.bound().is_some() => (ModelOutput::Json(parsed.clone()), parsed),
        None => (ModelOutput::Json(parsed), Value::Null),
    };
    let is_error = model.is_error();
    if structured && output.model_output().is_some() {
        model = with_json_block(model, &value);
    }
    let mut result = CallToolResult::default();
    let Some(bound) = output.bound() else {
        result.content = content(&model)?;
        result.is_error = is_error.then_some(true);
        result.structured_content = structured.then_some(value);
        return Ok((result, None));
    };
    let uri = result_uri(&bound.call_id);
    let hint = if link {
        format!("Read the resource `{uri}` (resources/read) for the full result.")
    } else {
        format!(
            "The application keeps the full result of call `{}`; call the tool again asking for less to see another part.",
            bound.call_id
        )
    };
    let json = structured.then(|| value.to_string());
    let dropped = json.as_deref().is_some_and(|j| !bound.budget.admits(j));
    let hint = if dropped {
        format!("structuredContent was left out: it is larger than the budget. {hint}")
    } else {
        hint
    };
    let cut = model.bounded(&bound.budget, &hint);
    let over = cut.is_some() || dropped;
    result.content = content(cut.as_ref().map_or(&model, |c| &c.output))?;
    if cut.is_none() && dropped {
        result.content.push(ContentBlock::text(format!("[{hint}]")));
    }
    result.is_error = is_error.then_some(true);
    result.structured_content = if dropped { None } else { structured.then_some(value.clone()) };
    if !(over && link) {
        return Ok((result, None));
    }
    let mut resource = Resource::new(uri, format!("result-{}", bound.call_id));
    resource.mime_type = Some("text/plain".into());
    resource.description = Some("The full result of this call (the model saw part of it)".into());
    result.content.push(ContentBlock::resource_link(resource));
    let overflow = Overflow {
        call_id: bound.call_id.clone(),
        text: output.full_model_output().to_text(),
        json: (output.model_output().is_some() || dropped).then(|| value.to_string()),
    };
    Ok((result, Some(overflow)))
}

/// A cut call's full result, to keep for its session (`results`).
#[derive(Debug)]
pub(super) struct Overflow {
    pub(super) call_id: String,
    pub(super) text: String,
    pub(super) json: Option<String>,
}

/// The model's output followed by the raw output as a JSON text block.
fn with_json_block(model: ModelOutput, value: &Value) -> ModelOutput {
    let mut parts = match model {
        ModelOutput::Content(parts) => parts,
        other => vec![ContentPart::text(other.to_text())],
    };
    parts.push(ContentPart::text(value.to_string()));
    ModelOutput::Content(parts)
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;
    use crate::catalog::Catalog;
    use crate::dialect::Dialect;
    use crate::spec::McpSpec;
    use crate::tool::Tool;
    use crate::{DynamicTool, Registry};

    fn shown(value: Value, model: ModelOutput) -> ToolOutput {
        ToolOutput::new(value).with_model_output(model)
    }

    fn tool_with(id: &str, edit: impl FnOnce(&mut ToolSpec)) -> DynamicTool {
        DynamicTool::builder(id, format!("The {id} tool"))
            .input_schema(json!({
                "$schema": "https://json-schema.org/draft/2020-12/schema",
                "type": "object",
                "properties": {"q": {"type": ["string", "null"]}, "n": {"type": "integer", "minimum": 1}},
                "required": ["n"]
            }))
            .with_spec(edit)
            .handler(|input, _| async move { Ok(input) })
            .unwrap()
    }

    fn specs() -> Registry {
        Registry::from_iter([
            tool_with("plain", |_| {}),
            tool_with("weather.forecast", |s| {
                s.title = Some("Forecast".into());
                s.schemas.output = Some(json!({"type": "object", "properties": {"t": {"type": "number"}}}));
            }),
            tool_with("files.delete", |s| {
                s.presentation.mcp = McpSpec {
                    title: Some("Delete a file".into()),
                    destructive_hint: Some(true),
                    idempotent_hint: Some(true),
                    meta: Some(json!({"ui": {"icon": "trash"}})),
                    icons: vec!["https://example.com/trash.svg".into(), "data:image/png;base64,AAAA".into()],
                    ..McpSpec::default()
                };
                // Not an object: not an MCP output schema.
                s.schemas.output = Some(json!({"type": "string"}));
            }),
            tool_with("slack/send@1.2", |s| s.presentation.mcp.read_only_hint = Some(false)),
        ])
    }

    #[test]
    fn listed_tools_are_what_the_catalog_exports_for_mcp() {
        let registry = specs();
        let catalog = Catalog::new("t", "1", Registry::try_from_tools(registry.tools()).unwrap());
        let exported = catalog.export(Dialect::Mcp).unwrap().document()["tools"].clone();
        let exported: Vec<McpTool> = serde_json::from_value(exported).unwrap();
        let typed: Vec<McpTool> = registry
            .tools()
            .iter()
            .map(|t| {
                let spec = t.spec();
                tool(spec, catalog.provider_name(Dialect::Mcp, &spec.id).unwrap()).unwrap()
            })
            .collect();
        assert_eq!(typed, exported);
        assert_eq!(serde_json::to_value(&typed).unwrap(), serde_json::to_value(&exported).unwrap());
    }

    #[test]
    fn header_annotations_clients_would_refuse_make_a_tool_unlistable() {
        let with = |props: Value| {
            let mut spec = tool_with("route", |_| {}).spec().clone();
            spec.schemas.input = json!({"type": "object", "properties": props});
            tool(&spec, "route")
        };
        let fine = with(json!({"region": {"type": "string", "x-mcp-header": "Region"}, "n": {"type": "integer", "x-mcp-header": "N"}}));
        assert!(fine.is_ok(), "{fine:?}");
        for (props, says) in [
            (json!({"r": {"type": ["string", "null"], "x-mcp-header": "Region"}}), "not optional"),
            (json!({"r": {"type": "number", "x-mcp-header": "Region"}}), "found type \"number\""),
            (json!({"r": {"type": "string", "x-mcp-header": "Ré gion"}}), "HTTP token"),
            (json!({"r": {"type": "string", "x-mcp-header": ""}}), "HTTP token"),
            (
                json!({"a": {"type": "string", "x-mcp-header": "Region"}, "b": {"type": "string", "x-mcp-header": "region"}}),
                "another property",
            ),
        ] {
            let err = with(props.clone()).unwrap_err();
            assert!(
                matches!(&err, NotListable::Header { .. }) && err.to_string().contains(says),
                "{props}: {err}"
            );
        }
    }

    #[test]
    fn tools_mcp_cannot_list_say_why() {
        let mut union = tool_with("pick", |_| {}).spec().clone();
        union.schemas.input = json!({"oneOf": [{"type": "string"}, {"type": "integer"}]});
        let err = tool(&union, "pick").unwrap_err();
        assert!(matches!(&err, NotListable::Schema(e) if e.tool == "pick"), "{err}");
        let meta = tool_with("m", |s| s.presentation.mcp.meta = Some(json!([1])));
        let err = tool(meta.spec(), "m").unwrap_err();
        assert_eq!(
            err.to_string(),
            "tool `m`: `mcp(meta = ...)` must be a JSON object (MCP's `_meta` is one), found `[1]`"
        );
    }

    fn every_part() -> ModelOutput {
        ModelOutput::content([
            ContentPart::text("Seattle: 21°C"),
            ContentPart::image_url("https://example.com/radar.png?x=1"),
            ContentPart::ImageData {
                data: "iVBOR".into(),
                media_type: "image/png".into(),
            },
            ContentPart::ImageData {
                data: "UklGR".into(),
                media_type: "audio/wav".into(),
            },
            ContentPart::FileUrl {
                url: "https://example.com/r.pdf".into(),
                media_type: Some("application/pdf".into()),
            },
            ContentPart::FileUrl {
                url: "https://example.com/".into(),
                media_type: None,
            },
            ContentPart::FileData {
                data: "JVBER".into(),
                media_type: "application/pdf".into(),
                filename: Some("r.pdf".into()),
            },
            ContentPart::FileData {
                data: "aGk=".into(),
                media_type: "text/plain".into(),
                filename: None,
            },
            ContentPart::FileId { file_id: "file-1".into() },
            ContentPart::ImageFileId { file_id: "file-2".into() },
            ContentPart::AudioData {
                data: "UklGR".into(),
                media_type: "audio/wav".into(),
            },
            ContentPart::ResourceLink {
                uri: "file:///r/report.pdf".into(),
                name: "report".into(),
                media_type: Some("application/pdf".into()),
                title: Some("Report".into()),
                description: Some("The quarter".into()),
            },
            ContentPart::ResourceLink {
                uri: "memo://2".into(),
                name: "memo".into(),
                media_type: None,
                title: None,
                description: None,
            },
            ContentPart::Resource {
                uri: "memo://3".into(),
                media_type: None,
                contents: crate::model_output::ResourceContents::Text("note".into()),
            },
            ContentPart::Resource {
                uri: "file:///b.bin".into(),
                media_type: Some("application/octet-stream".into()),
                contents: crate::model_output::ResourceContents::Blob("AAEC".into()),
            },
            ContentPart::Custom {
                provider_options: json!({"mcp": {"type": "resource", "resource": {"uri": "memo://1", "mimeType": "text/plain", "text": "hi"}}}),
            },
            ContentPart::Custom {
                provider_options: json!({"anthropic": {"type": "text", "text": "only there"}}),
            },
        ])
    }

    #[test]
    fn content_is_what_the_mcp_result_shape_says() {
        let outputs = [
            every_part(),
            ModelOutput::text("hello"),
            ModelOutput::json(json!({"a": [1, 2]})),
            ModelOutput::json(json!("just text")),
            ModelOutput::ErrorText("boom".into()),
            ModelOutput::ErrorJson(json!({"code": 7})),
        ];
        for output in outputs {
            let shape: CallToolResult = serde_json::from_value(output.to_tool_result(Dialect::Mcp, "").unwrap()).unwrap();
            assert_eq!(content(&output).unwrap(), shape.content, "{output:?}");
            let typed = call_result(&shown(json!(null), output.clone()), false, true).unwrap().0;
            assert_eq!(typed.is_error, shape.is_error, "{output:?}");
        }
    }

    #[test]
    fn a_custom_mcp_block_that_is_not_one_is_an_error() {
        let bad = ModelOutput::content([ContentPart::Custom {
            provider_options: json!({"mcp": {"type": "hologram"}}),
        }]);
        assert!(content(&bad).is_err());
    }

    #[test]
    fn object_outputs_of_tools_with_an_output_schema_are_structured() {
        let value = json!({"t": 21.5, "sky": "clear"});
        let raw = call_result(&ToolOutput::new(value.clone()), true, true).unwrap().0;
        assert_eq!(raw.structured_content.as_ref(), Some(&value));
        assert_eq!(raw.content, vec![ContentBlock::text(value.to_string())]);
        assert_eq!(raw.is_error, None);

        let shown = shown(value.clone(), ModelOutput::text("21.5 and clear"));
        let result = call_result(&shown, true, true).unwrap().0;
        assert_eq!(
            result.content,
            vec![ContentBlock::text("21.5 and clear"), ContentBlock::text(value.to_string())]
        );
        assert_eq!(result.structured_content, Some(value.clone()));

        assert_eq!(call_result(&shown, false, true).unwrap().0.structured_content, None);
        let text = call_result(&ToolOutput::new(json!("plain")), true, true).unwrap().0;
        assert_eq!((text.content, text.structured_content), (vec![ContentBlock::text("plain")], None));
    }
}
