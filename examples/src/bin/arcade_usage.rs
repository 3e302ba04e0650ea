//! The seed's Arcade usage, runnable: an `ArcadeToolProvider` built from `ARCADE_API_KEY` (and
//! the seed's `baseURL` as `--base-url`), registered as the `arcade` tool provider; one of its
//! tools resolved and called for a caller.
//!
//! ```text
//! ARCADE_API_KEY=… cargo run -p examples --bin arcade_usage [-- --base-url URL]
//! ```

use examples::provider_demo::{api_key, base_url, run};
use serde_json::json;
use tool_core::provider::{ProviderRegistry, ResolveOptions};
use tool_core::{CallOptions, Registry};
use tool_providers::ArcadeToolProvider;

fn main() -> std::process::ExitCode {
    run(async {
        // toolProviders: { arcade: new ArcadeToolProvider({ apiKey: process.env.ARCADE_API_KEY! }) }
        let mut arcade = ArcadeToolProvider::new(api_key("ARCADE_API_KEY")?);
        if let Some(url) = base_url()? {
            arcade = arcade.base_url(url);
        }
        let mut providers = ProviderRegistry::new();
        providers.add(arcade);
        let provider = providers.get("arcade").ok_or("the arcade provider is registered")?;
        let toolkits = provider.list_toolkits().await.map_err(|e| e.to_string())?;
        let names: Vec<&str> = toolkits.data.iter().map(|t| t.slug.as_str()).collect();
        println!("arcade toolkits: {}", names.join(", "));

        let registry = Registry::new();
        providers
            .resolve_into(&registry, "arcade", vec!["Math.Add".into()], ResolveOptions::default())
            .await
            .map_err(|e| e.to_string())?;
        let spec = registry.get("Math.Add").ok_or("Math.Add is resolved")?.spec().clone();
        println!("Math.Add: {}", spec.description);
        // Calls run as the caller's resource id (the seed: resourceId, else userId).
        let caller = CallOptions::with_context(json!({"mastra__resourceId": "sdk-user"}));
        let out = registry
            .call("Math.Add", json!({"a": 2, "b": 3}), caller)
            .await
            .map_err(|e| e.to_string())?;
        println!("Math.Add(2, 3) for sdk-user = {}", out.value());
        Ok(())
    })
}
