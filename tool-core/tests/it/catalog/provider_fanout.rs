//! The stored-selection fan-out (`ProviderRegistry::resolve_selection`): one
//! `resolve_tools_vnext` call per pinned connection, the reference's `__<LABEL>` names and
//! routing hints, the user bucket handed to each call, caller-supplied bootstrap of unpinned
//! toolkits, slugs grouped by the provider's naming convention, and failures that never drop
//! siblings. The provider here is a recording stand-in with a naming convention of its own
//! (`toolkit.tool`): the thing under test is the fan-out, not a platform (the Composio and
//! Arcade conventions are tested in tool-providers).

use std::collections::BTreeMap;
use std::sync::{Arc, Mutex};

use serde_json::{Map, Value, json};
use tool_core::provider::{
    Capabilities, ConnectionKind, FanOutOptions, ListResult, ListToolsOptions, PinnedConnection, ProviderError, ProviderInfo,
    ProviderRegistry, ProviderSelection, ResolveOptions, ResolveToolsOptions, ResolvedTools, Scope, ToolInfo, ToolMeta, ToolProvider,
};
use tool_core::tool::BoxFuture;
use tool_core::{CallOptions, DynamicTool, Registry};

#[derive(Clone)]
struct Recording {
    info: ProviderInfo,
    scope: Scope,
    multiple: bool,
    asked: Arc<Mutex<Vec<ResolveToolsOptions>>>,
    fail_connection: Option<String>,
}

impl Recording {
    fn new(id: &str, scope: Scope, multiple: bool) -> Self {
        Recording {
            info: ProviderInfo {
                id: id.into(),
                name: id.into(),
                description: None,
            },
            scope,
            multiple,
            asked: Arc::default(),
            fail_connection: None,
        }
    }
}

impl ToolProvider for Recording {
    fn info(&self) -> &ProviderInfo {
        &self.info
    }
    fn capabilities(&self) -> Capabilities {
        Capabilities {
            multiple_connections_per_toolkit: self.multiple,
            ..Capabilities::default()
        }
    }
    fn default_scope(&self) -> Scope {
        self.scope
    }
    /// The stand-in's convention: `toolkit.tool`.
    fn toolkit_of_slug(&self, slug: &str) -> Option<String> {
        slug.split_once('.').map(|(toolkit, _)| toolkit.to_owned())
    }
    fn list_tools(&self, _: ListToolsOptions) -> BoxFuture<'_, Result<ListResult<ToolInfo>, ProviderError>> {
        Box::pin(async { Ok(ListResult::empty()) })
    }
    fn resolve_tools(&self, _: Vec<String>, _: ResolveOptions) -> BoxFuture<'_, Result<ResolvedTools, ProviderError>> {
        Box::pin(async { Ok(ResolvedTools::new()) })
    }
    fn resolve_tools_vnext(&self, options: ResolveToolsOptions) -> BoxFuture<'_, Result<ResolvedTools, ProviderError>> {
        self.asked.lock().unwrap().push(options.clone());
        let fail = self.fail_connection.as_deref() == Some(options.connection_id.as_str());
        Box::pin(async move {
            if fail {
                return Err(ProviderError::Config(format!("connection {} is broken", options.connection_id)));
            }
            let mut out = ResolvedTools::new();
            for slug in &options.tool_slugs {
                let connection = options.connection_id.clone();
                let owner = options.author_id.clone();
                let description = options
                    .tool_meta
                    .get(slug)
                    .and_then(|m| m.description.clone())
                    .unwrap_or_else(|| format!("Runs {slug}"));
                let tool = DynamicTool::builder(slug.clone(), description)
                    .input_schema(json!({"type": "object", "properties": {"n": {"type": "integer"}}, "required": ["n"]}))
                    .handler(move |input, _cx| {
                        let connection = connection.clone();
                        let owner = owner.clone();
                        async move { Ok(json!({"connection": connection, "owner": owner, "input": input})) }
                    })
                    .unwrap();
                out.insert(slug.clone(), tool.into_tool());
            }
            Ok(out)
        })
    }
}

fn pin(toolkit: &str, id: &str, label: Option<&str>, scope: Option<Scope>) -> PinnedConnection {
    PinnedConnection {
        kind: ConnectionKind::Author,
        toolkit: toolkit.into(),
        connection_id: id.into(),
        label: label.map(str::to_owned),
        scope,
    }
}

fn meta(toolkit: &str) -> ToolMeta {
    ToolMeta {
        toolkit: Some(toolkit.into()),
        description: None,
        ..ToolMeta::default()
    }
}

fn ctx(resource: &str) -> Map<String, Value> {
    json!({"mastra__resourceId": resource}).as_object().unwrap().clone()
}

type Asked = Arc<Mutex<Vec<ResolveToolsOptions>>>;

/// A registry holding one recording provider, and what that provider is asked.
fn one_provider(provider: Recording) -> (ProviderRegistry, Asked) {
    let asked = provider.asked.clone();
    let mut providers = ProviderRegistry::new();
    providers.add(provider);
    (providers, asked)
}

/// One provider's stored selection: the slugs (with their meta) and the pins, grouped by
/// their toolkit.
fn selection(provider: &str, tools: &[(&str, ToolMeta)], pins: Vec<PinnedConnection>) -> BTreeMap<String, ProviderSelection> {
    let mut connections: BTreeMap<String, Vec<PinnedConnection>> = BTreeMap::new();
    for p in pins {
        connections.entry(p.toolkit.clone()).or_default().push(p);
    }
    let tools = tools.iter().map(|(slug, meta)| ((*slug).to_owned(), meta.clone())).collect();
    BTreeMap::from([(provider.to_owned(), ProviderSelection { tools, connections })])
}

#[tokio::test]
async fn several_connections_rename_tools_per_label_and_route_each_call() {
    let (providers, asked) = one_provider(Recording::new("composio", Scope::PerAuthor, true));
    let selection = selection(
        "composio",
        &[("GMAIL_SEND_EMAIL", meta("gmail")), ("SLACK_SEND", meta("slack"))],
        vec![
            pin("gmail", "ca_work", Some("Work mail"), None),
            pin("gmail", "ca_home", Some("home"), None),
            pin("slack", "ca_slack", None, None),
        ],
    );
    let options = FanOutOptions {
        author_id: Some("author-1".into()),
        ..Default::default()
    };
    let out = providers.resolve_selection(&selection, &options).await;
    assert!(out.skipped.is_empty(), "{:?}", out.skipped);
    let ids: Vec<_> = out.tools.keys().cloned().collect();
    assert_eq!(ids, ["GMAIL_SEND_EMAIL__HOME", "GMAIL_SEND_EMAIL__WORK_MAIL", "SLACK_SEND"]);
    let work = &out.tools["GMAIL_SEND_EMAIL__WORK_MAIL"];
    assert_eq!(work.spec().id, "GMAIL_SEND_EMAIL__WORK_MAIL");
    assert_eq!(
        work.spec().description,
        "Runs GMAIL_SEND_EMAIL\n\nRoutes through connection: Work mail"
    );
    assert_eq!(
        out.tools["SLACK_SEND"].spec().description,
        "Runs SLACK_SEND",
        "one connection: no hint"
    );

    let asked = asked.lock().unwrap().clone();
    assert_eq!(asked.len(), 3, "one call per connection");
    for a in &asked {
        assert_eq!(
            a.author_id.as_deref(),
            Some("author-1"),
            "per-author connections use the author's bucket"
        );
        assert_eq!(a.kind, Some(ConnectionKind::Author));
    }
    let gmail: Vec<_> = asked.iter().filter(|a| a.toolkit.as_deref() == Some("gmail")).collect();
    assert_eq!(gmail.len(), 2);
    assert!(
        gmail.iter().all(|a| a.tool_slugs == ["GMAIL_SEND_EMAIL"]),
        "only the toolkit's slugs"
    );

    // Through a registry: each renamed tool runs over its own connection, with validation first.
    let registry = Registry::new();
    let (inserted, skipped) = providers.resolve_selection_into(&registry, &selection, &options).await;
    assert_eq!(inserted.len(), 3);
    assert!(skipped.is_empty());
    for (id, connection) in [("GMAIL_SEND_EMAIL__WORK_MAIL", "ca_work"), ("GMAIL_SEND_EMAIL__HOME", "ca_home")] {
        let out = registry.call(id, json!({"n": 1}), CallOptions::default()).await.unwrap();
        assert_eq!(out.value()["connection"], connection);
    }
    let bad = registry
        .call("GMAIL_SEND_EMAIL__HOME", json!({"n": "one"}), CallOptions::default())
        .await
        .unwrap_err();
    assert_eq!(bad.kind(), tool_core::ErrorKind::InvalidInput);
    // A second fan-out into the same registry replaces nothing.
    let (again, skipped) = providers.resolve_selection_into(&registry, &selection, &options).await;
    assert!(again.is_empty());
    assert_eq!(skipped.len(), 3, "{skipped:?}");
}

#[tokio::test]
async fn labels_must_tell_connections_apart_and_the_provider_must_allow_several() {
    let mut providers = ProviderRegistry::new();
    providers.add(Recording::new("multi", Scope::PerAuthor, true));
    providers.add(Recording::new("single", Scope::PerAuthor, false));
    let sel = |provider: &str, pins: Vec<PinnedConnection>| selection(provider, &[("gmail.send", ToolMeta::default())], pins);
    let options = FanOutOptions {
        author_id: Some("a".into()),
        ..Default::default()
    };
    for (pins, why) in [
        (
            vec![pin("gmail", "c1", Some("Work"), None), pin("gmail", "c2", None, None)],
            "needs a label",
        ),
        (
            vec![pin("gmail", "c1", Some("Work"), None), pin("gmail", "c2", Some("WORK"), None)],
            "share the label",
        ),
        (
            vec![pin("gmail", "c1", Some("Work!"), None), pin("gmail", "c2", Some("b"), None)],
            "at most 32",
        ),
    ] {
        let out = providers.resolve_selection(&sel("multi", pins), &options).await;
        assert!(out.tools.is_empty());
        assert!(out.skipped[0].reason.contains(why), "{:?}", out.skipped);
    }
    let out = providers
        .resolve_selection(
            &sel(
                "single",
                vec![pin("gmail", "c1", Some("a"), None), pin("gmail", "c2", Some("b"), None)],
            ),
            &options,
        )
        .await;
    assert!(out.tools.is_empty());
    assert!(out.skipped[0].reason.contains("one connection per toolkit"), "{:?}", out.skipped);
    // The provider's naming convention groups `gmail.send` under `gmail` when no meta names it.
    let out = providers
        .resolve_selection(&sel("single", vec![pin("gmail", "c1", None, None)]), &options)
        .await;
    assert_eq!(out.tools.keys().collect::<Vec<_>>(), ["gmail.send"]);
}

#[tokio::test]
async fn buckets_follow_kind_and_scope_and_never_share_a_tenant_by_accident() {
    let (providers, asked) = one_provider(Recording::new("p", Scope::PerAuthor, true));
    let mut invoker = pin("t4", "c4", Some("d"), None);
    invoker.kind = ConnectionKind::Invoker;
    let selection = selection(
        "p",
        &[("A", meta("t1")), ("B", meta("t2")), ("C", meta("t3")), ("D", meta("t4"))],
        vec![
            pin("t1", "c1", None, Some(Scope::Shared)),
            pin("t2", "c2", None, Some(Scope::CallerSupplied)),
            pin("t3", "c3", None, Some(Scope::PerAuthor)),
            invoker,
        ],
    );
    let with_caller = FanOutOptions {
        request_context: ctx("tenant-9"),
        author_id: Some("author".into()),
        shared_fallback: None,
    };
    let out = providers.resolve_selection(&selection, &with_caller).await;
    assert_eq!(out.tools.len(), 4, "{:?}", out.skipped);
    let by_connection: BTreeMap<_, _> = asked
        .lock()
        .unwrap()
        .iter()
        .map(|a| (a.connection_id.clone(), a.author_id.clone()))
        .collect();
    assert_eq!(by_connection["c1"].as_deref(), Some("shared"));
    assert_eq!(by_connection["c2"].as_deref(), Some("tenant-9"));
    assert_eq!(by_connection["c3"].as_deref(), Some("author"));
    assert_eq!(by_connection["c4"], None, "invoker connections carry no bucket");

    // No resource id: the caller-supplied connection is skipped, its siblings resolve.
    asked.lock().unwrap().clear();
    let anonymous = FanOutOptions {
        author_id: Some("author".into()),
        ..Default::default()
    };
    let out = providers.resolve_selection(&selection, &anonymous).await;
    assert_eq!(out.tools.keys().collect::<Vec<_>>(), ["A", "C", "D"]);
    assert_eq!(out.skipped.len(), 1);
    assert_eq!(out.skipped[0].connection_id.as_deref(), Some("c2"));
    assert!(out.skipped[0].reason.contains("resource id"), "{:?}", out.skipped);
    assert!(
        asked.lock().unwrap().iter().all(|a| a.connection_id != "c2"),
        "never asked the provider"
    );
    // An explicit shared fallback is the only way such a caller gets a bucket.
    let shared = FanOutOptions {
        shared_fallback: Some("default".into()),
        ..anonymous
    };
    assert_eq!(providers.resolve_selection(&selection, &shared).await.tools.len(), 4);
}

#[tokio::test]
async fn caller_supplied_providers_bootstrap_unpinned_toolkits_in_the_callers_bucket() {
    let (providers, asked) = one_provider(Recording::new("composio", Scope::CallerSupplied, true));
    let selection = selection(
        "composio",
        &[
            ("COMPOSIO_MANAGE_CONNECTIONS", meta("composio")),
            ("GMAIL_SEND_EMAIL", meta("gmail")),
        ],
        vec![pin("gmail", "ca_1", None, Some(Scope::CallerSupplied))],
    );
    for tenant in ["alice", "bob"] {
        asked.lock().unwrap().clear();
        let out = providers
            .resolve_selection(
                &selection,
                &FanOutOptions {
                    request_context: ctx(tenant),
                    ..Default::default()
                },
            )
            .await;
        assert_eq!(
            out.tools.keys().collect::<Vec<_>>(),
            ["COMPOSIO_MANAGE_CONNECTIONS", "GMAIL_SEND_EMAIL"]
        );
        let asked = asked.lock().unwrap().clone();
        let manage = asked.iter().find(|a| a.toolkit.as_deref() == Some("composio")).unwrap();
        assert_eq!(manage.connection_id, tenant, "the caller's own bucket");
        assert_eq!(manage.author_id.as_deref(), Some(tenant));
        assert_eq!(
            manage.tool_slugs,
            ["COMPOSIO_MANAGE_CONNECTIONS"],
            "pinned toolkits are not bootstrapped"
        );
        let out = out.tools["COMPOSIO_MANAGE_CONNECTIONS"].clone();
        let registry = Registry::new();
        registry.insert(out).unwrap();
        let v = registry
            .call("COMPOSIO_MANAGE_CONNECTIONS", json!({"n": 2}), CallOptions::default())
            .await
            .unwrap();
        assert_eq!(v.value()["owner"], tenant);
    }
    let out = providers.resolve_selection(&selection, &FanOutOptions::default()).await;
    assert!(out.tools.is_empty(), "no resource id: nothing resolves in anybody's bucket");
    assert_eq!(out.skipped.len(), 2, "{:?}", out.skipped);
}

#[tokio::test]
async fn one_failing_connection_or_provider_never_drops_the_others() {
    let mut p = Recording::new("p", Scope::PerAuthor, true);
    p.fail_connection = Some("broken".into());
    let (providers, _) = one_provider(p);
    let mut selection = selection(
        "p",
        &[("X", meta("t"))],
        vec![pin("t", "broken", Some("one"), None), pin("t", "fine", Some("two"), None)],
    );
    selection.insert("missing".to_owned(), ProviderSelection::default());
    let out = providers
        .resolve_selection(
            &selection,
            &FanOutOptions {
                author_id: Some("a".into()),
                ..Default::default()
            },
        )
        .await;
    assert_eq!(out.tools.keys().collect::<Vec<_>>(), ["X__TWO"]);
    let reasons: Vec<_> = out.skipped.iter().map(|s| s.reason.as_str()).collect();
    assert!(reasons.iter().any(|r| r.contains("connection broken is broken")), "{reasons:?}");
    assert!(
        reasons.iter().any(|r| r.contains("no tool provider has the id `missing`")),
        "{reasons:?}"
    );
}

#[test]
fn stored_selections_read_mastras_shape() {
    let stored = json!({
        "tools": {"GMAIL_FETCH_EMAILS": {"toolkit": "gmail", "description": "Read mail"}},
        "connections": {"gmail": [{"kind": "author", "toolkit": "gmail", "connectionId": "ca_1", "label": "Work", "scope": "per-author"}]}
    });
    let sel: ProviderSelection = serde_json::from_value(stored.clone()).unwrap();
    assert_eq!(sel.connections["gmail"][0].connection_id, "ca_1");
    assert_eq!(sel.connections["gmail"][0].scope, Some(Scope::PerAuthor));
    assert_eq!(serde_json::to_value(&sel).unwrap(), stored);
}

#[tokio::test]
async fn slugs_without_a_meta_toolkit_group_by_the_providers_convention() {
    let (providers, asked) = one_provider(Recording::new("p", Scope::CallerSupplied, true));
    let none = ToolMeta::default;
    let selection = selection(
        "p",
        &[
            ("gmail.send", none()),
            ("gmailx.other", none()),
            ("meta.manage", none()),
            ("lowercase", none()),
        ],
        vec![pin("gmail", "ca_a", Some("A"), None), pin("gmail", "ca_b", Some("B"), None)],
    );
    let out = providers
        .resolve_selection(
            &selection,
            &FanOutOptions {
                request_context: ctx("u1"),
                ..Default::default()
            },
        )
        .await;
    assert!(out.skipped.is_empty(), "{:?}", out.skipped);
    assert_eq!(
        out.tools.keys().collect::<Vec<_>>(),
        ["gmail.send__A", "gmail.send__B", "gmailx.other", "meta.manage"],
        "the convention claims gmail.send for the pinned toolkit; gmailx.other is its own toolkit; a slug with no toolkit is left out"
    );
    let asked = asked.lock().unwrap().clone();
    let toolkits: Vec<_> = asked.iter().map(|a| (a.toolkit.clone().unwrap(), a.tool_slugs.clone())).collect();
    assert!(toolkits.contains(&("meta".into(), vec!["meta.manage".into()])), "{toolkits:?}");
    assert!(toolkits.contains(&("gmailx".into(), vec!["gmailx.other".into()])), "{toolkits:?}");
    assert_eq!(toolkits.iter().filter(|(t, _)| t == "gmail").count(), 2);
    assert!(toolkits.iter().all(|(_, slugs)| !slugs.contains(&"lowercase".to_owned())));
}

/// A provider with no naming convention: only meta toolkits group its slugs.
struct NoConvention(Recording);

impl ToolProvider for NoConvention {
    fn info(&self) -> &ProviderInfo {
        self.0.info()
    }
    fn default_scope(&self) -> Scope {
        self.0.default_scope()
    }
    fn list_tools(&self, options: ListToolsOptions) -> BoxFuture<'_, Result<ListResult<ToolInfo>, ProviderError>> {
        self.0.list_tools(options)
    }
    fn resolve_tools(&self, slugs: Vec<String>, options: ResolveOptions) -> BoxFuture<'_, Result<ResolvedTools, ProviderError>> {
        self.0.resolve_tools(slugs, options)
    }
    fn resolve_tools_vnext(&self, options: ResolveToolsOptions) -> BoxFuture<'_, Result<ResolvedTools, ProviderError>> {
        self.0.resolve_tools_vnext(options)
    }
}

#[tokio::test]
async fn without_a_naming_convention_only_meta_toolkits_group_slugs() {
    let recording = Recording::new("p", Scope::CallerSupplied, false);
    let asked = recording.asked.clone();
    let mut providers = ProviderRegistry::new();
    providers.add(NoConvention(recording));
    let selection = selection(
        "p",
        &[("gmail.send", ToolMeta::default()), ("GMAIL_FETCH", meta("gmail"))],
        vec![pin("gmail", "ca_1", None, None)],
    );
    let out = providers
        .resolve_selection(
            &selection,
            &FanOutOptions {
                request_context: ctx("u1"),
                ..Default::default()
            },
        )
        .await;
    assert_eq!(out.tools.keys().collect::<Vec<_>>(), ["GMAIL_FETCH"]);
    let asked = asked.lock().unwrap().clone();
    assert_eq!(asked.len(), 1, "{asked:?}");
    assert_eq!(asked[0].tool_slugs, ["GMAIL_FETCH"]);
}
