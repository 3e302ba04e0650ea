//! The fan-out end to end: a pinned Arcade connection resolved into callable tools, and tool
//! definitions fetched together and reused for a while.

use super::*;

#[tokio::test]
async fn the_fan_out_resolves_a_pinned_arcade_connection_into_callable_tools() {
    let (fake, arcade) = setup().await;
    let flow = arcade
        .authorize(authorize_opts("Github", "alice", Some("Github.GetRepository")))
        .await
        .unwrap();
    fake.complete(&flow.auth_id);
    assert_eq!(arcade.get_auth_status(&flow.auth_id).await.unwrap(), AuthStatus::Completed);
    let listed = arcade.list_connections(connections_of("Github", Some(&["alice"]))).await.unwrap();
    assert_eq!(listed.items.len(), 1);
    assert_eq!(listed.items[0].status, ConnectionStatus::Active);
    let pinned = listed.items[0].connection_id.clone();

    let mut selection = ProviderSelection::default();
    selection.tools.insert(
        "Github.GetRepository".into(),
        ToolMeta {
            toolkit: Some("Github".into()),
            description: Some("Read one of Alice's repositories".into()),
            ..ToolMeta::default()
        },
    );
    selection.tools.insert("Math.Add".into(), ToolMeta::default());
    selection.connections.insert(
        "Github".into(),
        vec![PinnedConnection {
            kind: ConnectionKind::Author,
            toolkit: "Github".into(),
            connection_id: pinned.clone(),
            label: None,
            scope: None,
        }],
    );
    let mut providers = ProviderRegistry::new();
    providers.add(arcade.clone());
    let options = FanOutOptions {
        request_context: context_of("carol"),
        author_id: Some("alice".into()),
        shared_fallback: None,
    };
    let registry = Registry::new();
    let (inserted, skipped) = providers
        .resolve_selection_into(&registry, &BTreeMap::from([("arcade".to_owned(), selection)]), &options)
        .await;
    assert!(skipped.is_empty(), "{skipped:?}");
    assert_eq!(inserted, ["Github.GetRepository", "Math.Add"]);
    assert_eq!(
        registry.get("Github.GetRepository").unwrap().spec().description,
        "Read one of Alice's repositories"
    );

    let out = registry
        .call("Github.GetRepository", json!({"owner": "octo", "repo": "hello"}), ctx("mallory"))
        .await
        .unwrap();
    assert_eq!(out.value(), json!({"full_name": "octo/hello", "user": "alice"}));
    let out = registry.call("Math.Add", json!({"a": 1, "b": 2}), ctx("mallory")).await.unwrap();
    assert_eq!(out.value(), json!(3));
    let users: Vec<(String, String)> = fake.seen(|s| s.executions.iter().map(|e| (e.0.clone(), e.1.clone())).collect());
    assert_eq!(
        users,
        [
            ("Github.GetRepository".to_owned(), "alice".to_owned()),
            ("Math.Add".to_owned(), "carol".to_owned())
        ],
        "the pinned author connection runs as the author; the unpinned toolkit in the caller's bucket"
    );

    let (_, skipped) = providers
        .resolve_selection_into(
            &Registry::new(),
            &BTreeMap::from([(
                "arcade".to_owned(),
                ProviderSelection {
                    tools: BTreeMap::from([("Math.Add".to_owned(), ToolMeta::default())]),
                    connections: BTreeMap::new(),
                },
            )]),
            &FanOutOptions::default(),
        )
        .await;
    assert!(skipped.len() == 1 && skipped[0].reason.contains("resource id"), "{skipped:?}");
    let _ = Scope::CallerSupplied;
}

#[tokio::test]
async fn definitions_are_fetched_together_and_reused_for_a_while() {
    let (fake, arcade) = setup().await;
    let slugs: Vec<String> = ["Math.Add", "Math.Divide", "Github.GetRepository", "Slack.SendMessage"]
        .map(String::from)
        .to_vec();
    let resolve = |arcade: ArcadeToolProvider| {
        let slugs = slugs.clone();
        async move { arcade.resolve_tools(slugs, ResolveOptions::default()).await.unwrap() }
    };
    let description = |tools: &tool_core::provider::ResolvedTools| tools["Math.Add"].spec().description.clone();
    let fetches = || fake.seen(|s| s.definition_fetches.len());

    // A slow platform: the four definitions are asked for at once, not one after another.
    fake.misbehave(|m| m.slow = Some(Duration::from_millis(150)));
    let first = resolve(arcade.clone()).await;
    fake.misbehave(|m| m.slow = None);
    assert_eq!(first.len(), 4);
    assert_eq!(fetches(), 4);
    assert!(fake.seen(|s| s.max_in_flight) >= 2, "definitions were fetched one at a time");

    // Resolving again within the time-to-live costs no request, and the tools still run.
    fake.describe("Math.Add", "Adds, now with new words");
    let again = resolve(arcade.clone()).await;
    assert_eq!(fetches(), 4, "a fresh definition is fetched again");
    assert_eq!(description(&again), description(&first));
    let registry = Registry::from_iter(again.into_values());
    let out = registry.call("Math.Add", json!({"a": 2, "b": 3}), ctx("user-1")).await.unwrap();
    assert_eq!(out.value(), json!(5));

    // A zero time-to-live fetches every time (and sees the change).
    let uncached = resolve(arcade.clone().definition_cache_ttl(Duration::ZERO)).await;
    assert_eq!(fetches(), 8);
    assert_eq!(description(&uncached), "Adds, now with new words");

    // Past the time-to-live a definition is fetched again.
    let short = arcade.clone().definition_cache_ttl(Duration::from_millis(200));
    resolve(short.clone()).await;
    let before = fetches();
    tokio::time::sleep(Duration::from_millis(300)).await;
    let later = resolve(short).await;
    assert_eq!(fetches(), before + 4);
    assert_eq!(description(&later), "Adds, now with new words");

    // Absent tools and failures are not remembered.
    let (fake, arcade) = setup().await;
    for _ in 0..2 {
        let none = arcade
            .resolve_tools(vec!["Math.Nope".into()], ResolveOptions::default())
            .await
            .unwrap();
        assert!(none.is_empty());
    }
    fake.misbehave(|m| m.fail_500 = true);
    assert!(arcade.get_tool_schema("Math.Add").await.is_err());
    fake.misbehave(|m| m.fail_500 = false);
    assert!(arcade.get_tool_schema("Math.Add").await.unwrap().is_some());
    assert_eq!(
        fake.seen(|s| s.definition_fetches.clone()),
        ["Math.Nope", "Math.Nope", "Math.Add"],
        "the 500 answer was given before the handler (no fetch recorded) and the next one fetched"
    );
}
