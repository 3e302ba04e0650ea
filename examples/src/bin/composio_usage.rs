//! The seed's Composio usage, runnable: a `ComposioToolProvider` built from `COMPOSIO_API_KEY`
//! and registered as the `composio` tool provider, then asked what it offers.
//!
//! ```text
//! COMPOSIO_API_KEY=… cargo run -p examples --bin composio_usage [-- --base-url URL]
//! ```

use examples::provider_demo::{api_key, base_url, run};
use tool_core::provider::{ListToolsOptions, ProviderRegistry};
use tool_providers::ComposioToolProvider;

fn main() -> std::process::ExitCode {
    run(async {
        // toolProviders: { composio: new ComposioToolProvider({ apiKey: process.env.COMPOSIO_API_KEY! }) }
        let mut composio = ComposioToolProvider::new(api_key("COMPOSIO_API_KEY")?);
        if let Some(url) = base_url()? {
            composio = composio.base_url(url);
        }
        let mut providers = ProviderRegistry::new();
        providers.add(composio);
        let provider = providers.get("composio").ok_or("the composio provider is registered")?;

        let toolkits = provider.list_toolkits().await.map_err(|e| e.to_string())?;
        let slugs: Vec<&str> = toolkits.data.iter().map(|t| t.slug.as_str()).collect();
        println!("composio toolkits: {}", slugs.join(", "));
        let github = ListToolsOptions {
            toolkit: Some("github".into()),
            ..ListToolsOptions::default()
        };
        for tool in provider.list_tools(github).await.map_err(|e| e.to_string())?.data {
            println!("  {} — {}", tool.slug, tool.description.unwrap_or_default());
        }
        Ok(())
    })
}
