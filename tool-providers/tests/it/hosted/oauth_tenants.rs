//! Tenants isolated by their real identity: Toolsmith's MCP server as an OAuth resource server
//! in front of a Composio tool in caller-supplied scope. Two users, each with their own access
//! token from a local authorization server, call the same tool; the Composio fake sees each
//! call run as that user (the token's subject), with no code of the application's in between,
//! and never sees a token.

use crate::support;
use crate::support::auth_server;

use std::sync::Arc;
use std::time::Duration;

use auth_server::AuthServer;
use serde_json::{Value, json};
use support::composio_fake::ComposioFake;
use tool_core::mcp::http::HttpOptions;
use tool_core::mcp::oauth::{OAuthConfig, ResourceServer};
use tool_core::mcp::{McpConfig, McpServer};
use tool_core::provider::{ResolveOptions, Scope, ToolProvider};
use tool_core::runtime::Runtime;
use tool_core::{CancellationToken, Registry};
use tool_providers::ComposioToolProvider;

const KEY: &str = "ck_test_key";
const RESOURCE: &str = "https://mcp.example.com/mcp";

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn each_token_subject_is_its_own_composio_user_and_no_token_reaches_composio() {
    let auth = AuthServer::start().await;
    let fake = ComposioFake::start(KEY).await;
    fake.add_account("alice", "gmail", "ACTIVE");
    fake.add_account("bob", "gmail", "ACTIVE");
    let composio = ComposioToolProvider::new(KEY)
        .base_url(&fake.url)
        .timeout(Duration::from_secs(5))
        .default_scope(Scope::CallerSupplied);
    let registry = Registry::new();
    let tools = composio
        .resolve_tools(vec!["GMAIL_SEND_EMAIL".into()], ResolveOptions::default())
        .await
        .unwrap();
    for (_, tool) in tools {
        registry.insert(tool).unwrap();
    }

    let mut config = OAuthConfig::new(&auth.issuer, RESOURCE);
    config.required_scopes = vec!["mcp".into()];
    let options = HttpOptions {
        oauth: Some(Arc::new(ResourceServer::new(config).unwrap())),
        stateless: true,
        json_response: true,
        ..HttpOptions::default()
    };
    // The operator's context names a user; the token's subject must win over it.
    let mcp_config = McpConfig {
        context: Some(json!({"mastra__resourceId": "operator"})),
        ..McpConfig::default()
    };
    let server = McpServer::new(Runtime::new(registry), mcp_config);
    let (tx, rx) = tokio::sync::oneshot::channel();
    tokio::spawn(tool_core::mcp::http::serve(
        server,
        "127.0.0.1:0".parse().unwrap(),
        options,
        CancellationToken::new(),
        |a| {
            let _ = tx.send(a);
        },
    ));
    let url = format!("http://{}/mcp", rx.await.unwrap());

    let mut tokens = Vec::new();
    for who in ["alice", "bob"] {
        let token = auth.mint("k1", &auth.claims(RESOURCE, who, "mcp"));
        let call = json!({"jsonrpc": "2.0", "id": 1, "method": "tools/call",
                          "params": {"name": "GMAIL_SEND_EMAIL", "arguments": {"recipient_email": "x@example.com", "body": "hi"}}});
        let r = reqwest::Client::new()
            .post(&url)
            .bearer_auth(&token)
            .header("Accept", "application/json, text/event-stream")
            .header("MCP-Protocol-Version", "2025-11-25")
            .json(&call)
            .send()
            .await
            .unwrap();
        assert_eq!(r.status(), 200);
        let body: Value = r.json().await.unwrap();
        let text = body["result"]["content"][0]["text"].as_str().unwrap_or_default().to_owned();
        assert!(text.contains(&format!("\"sent_by\":\"{who}\"")) || text.contains(who), "{body}");
        tokens.push(token);
    }
    let (users, executions, headers) = fake.seen(|s| {
        let users: Vec<Option<String>> = s.executions.iter().map(|e| e.user_id.clone()).collect();
        (users, format!("{:?}", s.executions), s.headers.join("\n"))
    });
    assert_eq!(
        users,
        [Some("alice".to_owned()), Some("bob".to_owned())],
        "each call ran as its token's subject"
    );
    for token in &tokens {
        for part in token.split('.') {
            assert!(
                !headers.contains(part) && !executions.contains(part),
                "Composio saw the access token"
            );
        }
    }
    assert!(!headers.to_ascii_lowercase().contains("authorization: bearer"), "{headers}");
}
