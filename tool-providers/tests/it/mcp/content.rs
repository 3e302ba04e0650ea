//! What a remote MCP tool's content becomes through `McpToolProvider`: images, audio,
//! resource links and embedded resources reach the caller as content parts of the model
//! output (none dropped, even beside `structuredContent`), while the value stays what it was.
//! Two real servers: Toolsmith's own, served in-process over Streamable HTTP, and a bare
//! JSON-RPC server in standard-library Python over stdio (`${TOOLSMITH_PY:-python3}`).

use crate::support::toolsmith_server;

use std::sync::Arc;

use serde_json::{Map, Value, json};
use tool_core::Dialect;
use tool_core::context::ToolCallInfo;
use tool_core::mcp::{McpConfig, McpServer};
use tool_core::provider::{ResolveOptions, ToolProvider};
use tool_core::runtime::Runtime;
use tool_core::spec::ToolSpec;
use tool_core::tool::{BoxFuture, ToolInput, ToolOutput};
use tool_core::{CallOptions, Registry, Tool, ToolError};
use tool_core::{ContentPart, ModelOutput, ResourceContents};
use tool_providers::mcp::McpToolProvider;

/// A 1×1 PNG.
const PNG: &str = "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8/5+hHgAHggJ/PchI7wAAAABJRU5ErkJggg==";

/// What the remote tools show the model: every kind of MCP content.
fn parts() -> Vec<ContentPart> {
    vec![
        ContentPart::text("Radar for Seattle"),
        ContentPart::ImageData {
            data: PNG.into(),
            media_type: "image/png".into(),
        },
        ContentPart::ResourceLink {
            uri: "file:///reports/seattle.pdf".into(),
            name: "seattle-report".into(),
            media_type: Some("application/pdf".into()),
            title: Some("Seattle report".into()),
            description: Some("The full forecast".into()),
        },
        ContentPart::AudioData {
            data: "UklGRiQAAABXQVZF".into(),
            media_type: "audio/wav".into(),
        },
        ContentPart::Resource {
            uri: "test://notes".into(),
            media_type: Some("text/plain".into()),
            contents: ResourceContents::Text("Bring an umbrella.".into()),
        },
    ]
}

/// A remote tool whose model output is [`parts`]; with an output schema the server also sends
/// its value as `structuredContent`.
struct Radar(ToolSpec);

impl Radar {
    fn tool(id: &str, structured: bool) -> Arc<dyn Tool> {
        let mut spec = ToolSpec::new(id, "Shows the weather radar", json!({"type": "object"}));
        if structured {
            spec.schemas.output = Some(json!({"type": "object", "properties": {"caption": {"type": "string"}}}));
        }
        Arc::new(Radar(spec))
    }
}

impl Tool for Radar {
    fn spec(&self) -> &ToolSpec {
        &self.0
    }

    fn execute(&self, _: ToolInput<'_>, _: Arc<Map<String, Value>>, _: ToolCallInfo) -> BoxFuture<'static, Result<ToolOutput, ToolError>> {
        let out = ToolOutput::new(json!({"caption": "Radar for Seattle"})).with_model_output(ModelOutput::content(parts()));
        Box::pin(std::future::ready(Ok(out)))
    }
}

/// Toolsmith's MCP server with `radar` and `radar_structured`, on 127.0.0.1:0.
async fn toolsmith_server() -> String {
    let registry = Registry::from_iter([Radar::tool("radar", false), Radar::tool("radar_structured", true)]);
    let server = McpServer::new(Runtime::new(registry), McpConfig::default());
    toolsmith_server::serve(server).await
}

/// The provider's tools, resolved into a registry.
async fn resolved(provider: &McpToolProvider, slugs: &[&str]) -> Registry {
    provider.connect().await.unwrap();
    let tools = provider
        .resolve_tools(slugs.iter().map(|s| s.to_string()).collect(), ResolveOptions::default())
        .await
        .unwrap();
    assert_eq!(tools.len(), slugs.len());
    Registry::from_iter(tools.into_values())
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn every_kind_of_content_reaches_the_caller_as_content_parts() {
    let provider = McpToolProvider::http("remote", toolsmith_server().await);
    let registry = resolved(&provider, &["radar", "radar_structured"]).await;

    let out = registry.call("radar", json!({}), CallOptions::default()).await.unwrap();
    assert_eq!(
        out.model_output(),
        Some(&ModelOutput::content(parts())),
        "the image, the resource link, the audio and the embedded resource reach the caller as they left the server"
    );
    assert_eq!(out.value()[1]["type"], "image", "the value is still the blocks");
    assert_eq!(out.value()[2]["type"], "resource_link");
    // Passed on to an MCP client (a gateway), the parts are the server's blocks again.
    let again = out.for_model().to_tool_result(Dialect::Mcp, "").expect("MCP has a result shape");
    assert_eq!(again["content"][1], json!({"type": "image", "data": PNG, "mimeType": "image/png"}));
    assert_eq!(
        again["content"][2],
        json!({"type": "resource_link", "uri": "file:///reports/seattle.pdf", "name": "seattle-report",
               "mimeType": "application/pdf", "title": "Seattle report", "description": "The full forecast"})
    );

    // Beside structured content the value is the structure, and the media are not dropped.
    let out = registry.call("radar_structured", json!({}), CallOptions::default()).await.unwrap();
    assert_eq!(out.value(), json!({"caption": "Radar for Seattle"}));
    let Some(ModelOutput::Content(got)) = out.model_output() else {
        panic!("no content parts: {:?}", out.model_output())
    };
    assert_eq!(got[..parts().len()], parts()[..]);
    provider.close().await;
}

/// A bare JSON-RPC MCP server (standard library Python only) whose `snapshot` tool answers
/// text, an image and a resource link, as any server might.
const MEDIA_SERVER: &str = r#"
import json, sys
for line in sys.stdin:
    msg = json.loads(line)
    if "id" not in msg or "method" not in msg:
        continue
    method = msg["method"]
    if method == "initialize":
        result = {"protocolVersion": "2025-06-18", "capabilities": {"tools": {}}, "serverInfo": {"name": "media", "version": "1"}}
    elif method == "tools/list":
        result = {"tools": [{"name": "snapshot", "description": "A camera snapshot", "inputSchema": {"type": "object"}}]}
    elif method == "tools/call":
        result = {"content": [
            {"type": "text", "text": "Front door"},
            {"type": "image", "data": sys.argv[1], "mimeType": "image/png"},
            {"type": "resource_link", "uri": "https://cams.example/front/latest.mp4", "name": "latest.mp4", "mimeType": "video/mp4"}]}
    elif method == "ping":
        result = {}
    else:
        print(json.dumps({"jsonrpc": "2.0", "id": msg["id"], "error": {"code": -32601, "message": method}}), flush=True)
        continue
    print(json.dumps({"jsonrpc": "2.0", "id": msg["id"], "result": result}), flush=True)
"#;

#[tokio::test(flavor = "multi_thread")]
async fn an_image_and_a_resource_link_from_another_server_reach_the_caller() {
    let python = std::env::var("TOOLSMITH_PY").unwrap_or_else(|_| "python3".into());
    let provider = McpToolProvider::stdio("media", python, ["-c", MEDIA_SERVER, PNG]);
    let registry = resolved(&provider, &["snapshot"]).await;
    let out = registry.call("snapshot", json!({}), CallOptions::default()).await.unwrap();
    assert_eq!(
        out.model_output(),
        Some(&ModelOutput::content([
            ContentPart::text("Front door"),
            ContentPart::ImageData {
                data: PNG.into(),
                media_type: "image/png".into(),
            },
            ContentPart::ResourceLink {
                uri: "https://cams.example/front/latest.mp4".into(),
                name: "latest.mp4".into(),
                media_type: Some("video/mp4".into()),
                title: None,
                description: None,
            },
        ]))
    );
    // A model provider that cannot take the link still learns of it.
    let anthropic = out
        .for_model()
        .to_tool_result(Dialect::Anthropic, "toolu_1")
        .expect("Anthropic has a result shape");
    assert_eq!(anthropic["content"][1]["source"]["type"], "base64");
    assert_eq!(
        anthropic["content"][2],
        json!({"type": "text", "text": "[resource: https://cams.example/front/latest.mp4]"})
    );
    provider.close().await;
}
