//! A remote tool's questions through `McpToolProvider`, against Toolsmith's own MCP server
//! served in-process over Streamable HTTP (reached at MCP 2026-07-28: a question travels in an
//! input-required result and the call is sent again with the answer) and the official Python
//! SDK's server over stdio (2025-11-25: a question is an `elicitation/create` request of the
//! server's own): it reaches the MCP client of the call when there is one (our own
//! elicitation flow, `McpHandle::ask`), else the form's defaults answer it, or it is declined.

use crate::support::toolsmith_server;

use std::sync::{Arc, Mutex};

use serde_json::{Map, Value, json};
use tool_core::context::{Elicitation, McpHandle};
use tool_core::mcp::{McpConfig, McpServer};
use tool_core::provider::{ResolveOptions, ToolProvider};
use tool_core::runtime::Runtime;
use tool_core::tool::BoxFuture;
use tool_core::{CallOptions, DynamicTool, LogLevel, Registry, ToolError};
use tool_providers::mcp::McpToolProvider;

/// The MCP client of a call: its user answers every form with `{"name": "Ada"}`; the
/// questions it was asked are kept.
#[derive(Default)]
pub(crate) struct Ada(pub(crate) Mutex<Vec<Value>>);

impl McpHandle for Ada {
    fn elicit(&self, _message: String, _schema: Value) -> BoxFuture<'_, Result<Elicitation, ToolError>> {
        Box::pin(std::future::ready(Err(ToolError::new("asked through `ask` in this test"))))
    }

    fn log(&self, _level: LogLevel, _data: Value) {}

    fn progress(&self, _progress: f64, _total: Option<f64>, _message: Option<String>) {}

    fn ask(&self, requests: Map<String, Value>) -> BoxFuture<'_, Result<Map<String, Value>, ToolError>> {
        Box::pin(async move {
            let mut answers = Map::new();
            for (key, request) in requests {
                self.0.lock().unwrap().push(request);
                answers.insert(key, json!({"action": "accept", "content": {"name": "Ada"}}));
            }
            Ok(answers)
        })
    }

    fn supports(&self, method: &str) -> bool {
        method == "elicitation/create"
    }
}

/// The remote tools: `greet` asks for a name (default `World`), `confirm` for a yes or no (no
/// default); each says what it got.
fn remote_tools() -> Registry {
    let ask = |name: &'static str, message: &'static str, schema: Value| {
        DynamicTool::builder(name, message)
            .handler(move |_, cx| {
                let schema = schema.clone();
                async move {
                    let mcp = cx.mcp().ok_or_else(|| ToolError::new("no MCP client"))?;
                    Ok(match mcp.elicit(message.to_owned(), schema).await? {
                        Elicitation::Accept { content } => json!(format!("accepted {content}")),
                        Elicitation::Decline => json!("declined"),
                        Elicitation::Cancel => json!("cancelled"),
                    })
                }
            })
            .unwrap()
    };
    Registry::from_iter([
        ask(
            "greet",
            "What is your name?",
            json!({"type": "object", "properties": {"name": {"type": "string", "default": "World"}}, "required": ["name"]}),
        ),
        ask(
            "confirm",
            "Go ahead?",
            json!({"type": "object", "properties": {"ok": {"type": "boolean"}}, "required": ["ok"]}),
        ),
    ])
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_remote_question_at_2026_07_28_reaches_the_caller_or_is_answered_with_the_defaults() {
    let server = McpServer::new(Runtime::new(remote_tools()), McpConfig::default());
    let url = toolsmith_server::serve(server).await;
    let provider = McpToolProvider::http("remote", url);
    provider.connect().await.unwrap();
    let version = provider.server_info().unwrap().protocol_version.clone();
    assert_eq!(version, rmcp::model::ProtocolVersion::V_2026_07_28, "the session is at 2026-07-28");
    let tools = provider
        .resolve_tools(vec!["greet".into(), "confirm".into()], ResolveOptions::default())
        .await
        .unwrap();
    let registry = Registry::from_iter(tools.into_values());

    // The call's MCP client is asked, and its user's answer reaches the remote tool.
    let ada = Arc::new(Ada::default());
    let out = registry
        .call("greet", json!({}), CallOptions::default().mcp(ada.clone()))
        .await
        .unwrap();
    assert_eq!(out.value(), json!(r#"accepted {"name":"Ada"}"#));
    let asked = ada.0.lock().unwrap().clone();
    assert_eq!(asked.len(), 1, "{asked:?}");
    assert_eq!(asked[0]["method"], "elicitation/create");
    assert_eq!(asked[0]["params"]["message"], "What is your name?");

    // No one to ask: the form's defaults answer, or it is declined when they do not fill it.
    let out = registry.call("greet", json!({}), CallOptions::default()).await.unwrap();
    assert_eq!(out.value(), json!(r#"accepted {"name":"World"}"#));
    let out = registry.call("confirm", json!({}), CallOptions::default()).await.unwrap();
    assert_eq!(out.value(), json!("declined"));
    provider.close().await;
}
