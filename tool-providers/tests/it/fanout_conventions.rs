//! The providers' naming conventions as the fan-out (`ProviderRegistry::resolve_selection`)
//! uses them: a selected slug whose meta names no toolkit is grouped by the provider's own
//! rule (Composio's `UPPER_SNAKE` slugs, Arcade's `Toolkit.Tool` names). The provider under
//! the fan-out records what it is asked and takes its naming from a real provider, so the
//! thing under test is the convention, not a platform.

use std::collections::BTreeMap;
use std::sync::{Arc, Mutex};

use serde_json::{Map, Value, json};
use tool_core::DynamicTool;
use tool_core::provider::{
    Capabilities, ConnectionKind, FanOutOptions, ListResult, ListToolsOptions, PinnedConnection, ProviderError, ProviderInfo,
    ProviderRegistry, ProviderSelection, ResolveOptions, ResolveToolsOptions, ResolvedTools, Scope, ToolInfo, ToolMeta, ToolProvider,
};
use tool_core::tool::BoxFuture;
use tool_providers::{ArcadeToolProvider, ComposioToolProvider};

type Asked = Arc<Mutex<Vec<ResolveToolsOptions>>>;

/// Records `resolve_tools_vnext` and answers a tool per slug; names like `naming`.
struct Recording<P> {
    naming: P,
    asked: Asked,
}

impl<P: ToolProvider> ToolProvider for Recording<P> {
    fn info(&self) -> &ProviderInfo {
        self.naming.info()
    }
    fn capabilities(&self) -> Capabilities {
        Capabilities {
            multiple_connections_per_toolkit: true,
            ..Capabilities::default()
        }
    }
    fn default_scope(&self) -> Scope {
        Scope::CallerSupplied
    }
    fn toolkit_of_slug(&self, slug: &str) -> Option<String> {
        self.naming.toolkit_of_slug(slug)
    }
    fn slug_belongs_to(&self, slug: &str, toolkit: &str) -> bool {
        self.naming.slug_belongs_to(slug, toolkit)
    }
    fn list_tools(&self, _: ListToolsOptions) -> BoxFuture<'_, Result<ListResult<ToolInfo>, ProviderError>> {
        Box::pin(async { Ok(ListResult::empty()) })
    }
    fn resolve_tools(&self, _: Vec<String>, _: ResolveOptions) -> BoxFuture<'_, Result<ResolvedTools, ProviderError>> {
        Box::pin(async { Ok(ResolvedTools::new()) })
    }
    fn resolve_tools_vnext(&self, options: ResolveToolsOptions) -> BoxFuture<'_, Result<ResolvedTools, ProviderError>> {
        self.asked.lock().unwrap().push(options.clone());
        Box::pin(async move {
            let mut out = ResolvedTools::new();
            for slug in &options.tool_slugs {
                let tool = DynamicTool::builder(slug.clone(), format!("Runs {slug}"))
                    .handler(|input, _cx| async move { Ok(input) })
                    .unwrap();
                out.insert(slug.clone(), tool.into_tool());
            }
            Ok(out)
        })
    }
}

fn one_provider<P: ToolProvider>(naming: P) -> (ProviderRegistry, Asked) {
    let asked = Asked::default();
    let mut providers = ProviderRegistry::new();
    providers.add(Recording {
        naming,
        asked: asked.clone(),
    });
    (providers, asked)
}

fn pin(toolkit: &str, id: &str, label: &str) -> PinnedConnection {
    PinnedConnection {
        kind: ConnectionKind::Author,
        toolkit: toolkit.into(),
        connection_id: id.into(),
        label: Some(label.into()),
        scope: None,
    }
}

fn selection(provider: &str, slugs: &[&str], pins: Vec<PinnedConnection>) -> BTreeMap<String, ProviderSelection> {
    let mut connections: BTreeMap<String, Vec<PinnedConnection>> = BTreeMap::new();
    for p in pins {
        connections.entry(p.toolkit.clone()).or_default().push(p);
    }
    let tools = slugs.iter().map(|slug| ((*slug).to_owned(), ToolMeta::default())).collect();
    BTreeMap::from([(provider.to_owned(), ProviderSelection { tools, connections })])
}

fn caller(resource: &str) -> FanOutOptions {
    let context: Map<String, Value> = json!({"mastra__resourceId": resource}).as_object().unwrap().clone();
    FanOutOptions {
        request_context: context,
        ..Default::default()
    }
}

/// The toolkits asked for and their slugs.
fn asked_toolkits(asked: &Asked) -> Vec<(String, Vec<String>)> {
    let asked = asked.lock().unwrap().clone();
    asked.iter().map(|a| (a.toolkit.clone().unwrap(), a.tool_slugs.clone())).collect()
}

#[tokio::test]
async fn composio_slugs_without_a_meta_toolkit_group_by_their_prefix() {
    let (providers, asked) = one_provider(ComposioToolProvider::new("k"));
    let selection = selection(
        "composio",
        &["GMAIL_SEND_EMAIL", "GMAILX_OTHER", "COMPOSIO_MANAGE_CONNECTIONS", "lowercase"],
        vec![pin("gmail", "ca_a", "A"), pin("gmail", "ca_b", "B")],
    );
    let out = providers.resolve_selection(&selection, &caller("u1")).await;
    assert!(out.skipped.is_empty(), "{:?}", out.skipped);
    assert_eq!(
        out.tools.keys().collect::<Vec<_>>(),
        [
            "COMPOSIO_MANAGE_CONNECTIONS",
            "GMAILX_OTHER",
            "GMAIL_SEND_EMAIL__A",
            "GMAIL_SEND_EMAIL__B"
        ],
        "`GMAIL_` claims GMAIL_SEND_EMAIL for the pinned toolkit; GMAILX_OTHER is its own toolkit; a slug with no toolkit is left out"
    );
    let toolkits = asked_toolkits(&asked);
    assert!(
        toolkits.contains(&("composio".into(), vec!["COMPOSIO_MANAGE_CONNECTIONS".into()])),
        "{toolkits:?}"
    );
    assert!(toolkits.contains(&("gmailx".into(), vec!["GMAILX_OTHER".into()])), "{toolkits:?}");
    assert_eq!(toolkits.iter().filter(|(t, _)| t == "gmail").count(), 2);
    assert!(toolkits.iter().all(|(_, slugs)| !slugs.contains(&"lowercase".to_owned())));
}

#[tokio::test]
async fn arcade_names_group_by_their_toolkit() {
    let (providers, asked) = one_provider(ArcadeToolProvider::new("k"));
    let selection = selection(
        "arcade",
        &["Github.GetRepository@1.2.0", "Github_ListIssues", "Math.Add", "Slack"],
        vec![pin("Github", "alice", "A"), pin("Github", "bob", "B")],
    );
    let out = providers.resolve_selection(&selection, &caller("u1")).await;
    assert!(out.skipped.is_empty(), "{:?}", out.skipped);
    assert_eq!(
        out.tools.keys().collect::<Vec<_>>(),
        [
            "Github.GetRepository@1.2.0__A",
            "Github.GetRepository@1.2.0__B",
            "Github_ListIssues__A",
            "Github_ListIssues__B",
            "Math.Add"
        ],
        "`Github.` and the model-safe `Github_` claim their tools for the pinned toolkit; Math.Add is its own toolkit; a name with no toolkit is left out"
    );
    let toolkits = asked_toolkits(&asked);
    assert!(toolkits.contains(&("Math".into(), vec!["Math.Add".into()])), "{toolkits:?}");
    assert_eq!(toolkits.iter().filter(|(t, _)| t == "Github").count(), 2);
    assert!(toolkits.iter().all(|(_, slugs)| !slugs.contains(&"Slack".to_owned())));
}
