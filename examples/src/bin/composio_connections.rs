//! The seed's Composio connection-management example, runnable: `allowedToolkits: ['composio',
//! 'gmail']` (so the chat tools `COMPOSIO_MANAGE_CONNECTIONS` and
//! `COMPOSIO_WAIT_FOR_CONNECTIONS` are available) and `defaultScope: 'caller-supplied'`
//! (connections belong to the caller's resource id). A caller without a Gmail connection is told
//! how to connect, and asks for the authorization link.
//!
//! ```text
//! COMPOSIO_API_KEY=… cargo run -p examples --bin composio_connections [-- --base-url URL]
//! ```

use examples::provider_demo::{api_key, base_url, run};
use serde_json::json;
use tool_core::provider::{ListToolsOptions, ProviderRegistry, ResolveOptions, Scope};
use tool_core::{CallOptions, Registry};
use tool_providers::ComposioToolProvider;

fn main() -> std::process::ExitCode {
    run(async {
        let mut composio = ComposioToolProvider::new(api_key("COMPOSIO_API_KEY")?)
            .allowed_toolkits(["composio", "gmail"])
            .default_scope(Scope::CallerSupplied);
        if let Some(url) = base_url()? {
            composio = composio.base_url(url);
        }
        let mut providers = ProviderRegistry::new();
        providers.add(composio);
        let provider = providers.get("composio").ok_or("the composio provider is registered")?;
        let tools = provider.list_tools(ListToolsOptions::default()).await.map_err(|e| e.to_string())?;
        let slugs: Vec<&str> = tools.data.iter().map(|t| t.slug.as_str()).collect();
        println!("allowed tools: {}", slugs.join(", "));

        let registry = Registry::new();
        let wanted = vec!["COMPOSIO_MANAGE_CONNECTIONS".to_owned(), "GMAIL_SEND_EMAIL".to_owned()];
        providers
            .resolve_into(&registry, "composio", wanted, ResolveOptions::default())
            .await
            .map_err(|e| e.to_string())?;
        // The caller, as an authenticated request would name it.
        let caller = || CallOptions::with_context(json!({"mastra__resourceId": "user-42"}));
        let email = json!({"recipient_email": "ann@example.com", "subject": "Hi", "body": "Hello"});
        match registry.call("GMAIL_SEND_EMAIL", email, caller()).await {
            Ok(out) => println!("GMAIL_SEND_EMAIL: {}", out.value()),
            Err(e) => println!("GMAIL_SEND_EMAIL for user-42: {}", e.message()),
        }
        let out = registry
            .call("COMPOSIO_MANAGE_CONNECTIONS", json!({"toolkits": ["gmail"]}), caller())
            .await
            .map_err(|e| e.to_string())?;
        println!("COMPOSIO_MANAGE_CONNECTIONS for user-42: {}", out.value());
        Ok(())
    })
}
