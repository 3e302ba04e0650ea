//! Tool search placement of imported tools: Composio and Arcade, against their local fakes,
//! defer every imported tool and put each in its toolkit's namespace when asked, and neither
//! by default; a catalog then exports them deferred and grouped.

use crate::support;

use std::time::Duration;

use support::arcade_fake::ArcadeFake;
use support::composio_fake::ComposioFake;
use tool_core::catalog::{Catalog, LoadedTools, ToolSearchMode};
use tool_core::provider::{ResolveOptions, ToolProvider};
use tool_core::{Dialect, Registry};
use tool_providers::{ArcadeToolProvider, ComposioToolProvider};

const COMPOSIO_KEY: &str = "ak_CANARY_placement_0000000000000000000";
const ARCADE_KEY: &str = "arc_CANARY_placement_000000000000000000";

async fn registry_of(provider: &dyn ToolProvider, slugs: &[&str]) -> Registry {
    let tools = provider
        .resolve_tools(slugs.iter().map(|s| s.to_string()).collect(), ResolveOptions::default())
        .await
        .unwrap();
    let registry = Registry::new();
    for (_, tool) in tools {
        let _ = registry.insert(tool);
    }
    registry
}

/// (id, deferred, namespace) of each tool of `registry`.
fn placements(registry: &Registry) -> Vec<(String, bool, Option<String>)> {
    let mut out: Vec<_> = registry
        .tools()
        .iter()
        .map(|t| {
            let p = &t.spec().presentation;
            (t.spec().id.clone(), p.defer_loading, p.namespace.clone())
        })
        .collect();
    out.sort();
    out
}

#[tokio::test]
async fn composio_tools_are_deferred_and_namespaced_by_toolkit() {
    let fake = ComposioFake::start(COMPOSIO_KEY).await;
    let provider = || {
        ComposioToolProvider::new(COMPOSIO_KEY)
            .base_url(&fake.url)
            .timeout(Duration::from_secs(5))
            .user_id("author-1")
    };
    let slugs = ["GITHUB_CREATE_ISSUE", "GMAIL_SEND_EMAIL"];

    let plain = registry_of(&provider(), &slugs).await;
    assert!(
        placements(&plain).iter().all(|(_, d, ns)| !d && ns.is_none()),
        "{:?}",
        placements(&plain)
    );

    let placed = registry_of(&provider().defer_loading().namespace_by_toolkit(), &slugs).await;
    assert_eq!(
        placements(&placed),
        [
            ("GITHUB_CREATE_ISSUE".to_owned(), true, Some("github".to_owned())),
            ("GMAIL_SEND_EMAIL".to_owned(), true, Some("gmail".to_owned())),
        ]
    );
    // Exported for OpenAI Responses: one namespace per toolkit, deferred inside.
    let catalog = Catalog::new("composio", "1.0.0", placed);
    let doc = catalog
        .export_deferred(Dialect::OpenAiResponses, ToolSearchMode::Native, &LoadedTools::default())
        .unwrap()
        .document();
    let groups: Vec<&str> = doc
        .as_array()
        .unwrap()
        .iter()
        .filter(|t| t["type"] == "namespace")
        .map(|t| t["name"].as_str().unwrap())
        .collect();
    assert_eq!(groups, ["github", "gmail"]);
    assert_eq!(doc[0]["tools"][0]["defer_loading"], true);
}

#[tokio::test]
async fn arcade_tools_are_deferred_and_namespaced_by_toolkit() {
    let fake = ArcadeFake::start(ARCADE_KEY).await;
    let provider = || {
        ArcadeToolProvider::new(ARCADE_KEY)
            .base_url(&fake.url)
            .timeout(Duration::from_secs(5))
            .user_id("u")
    };
    let slugs = ["Math.Add", "Github.GetRepository"];

    let plain = registry_of(&provider(), &slugs).await;
    assert!(
        placements(&plain).iter().all(|(_, d, ns)| !d && ns.is_none()),
        "{:?}",
        placements(&plain)
    );

    let only_deferred = registry_of(&provider().defer_loading(), &slugs).await;
    assert!(placements(&only_deferred).iter().all(|(_, d, ns)| *d && ns.is_none()));

    let placed = registry_of(&provider().defer_loading().namespace_by_toolkit(), &slugs).await;
    assert_eq!(
        placements(&placed),
        [
            ("Github.GetRepository".to_owned(), true, Some("github".to_owned())),
            ("Math.Add".to_owned(), true, Some("math".to_owned())),
        ]
    );
}
