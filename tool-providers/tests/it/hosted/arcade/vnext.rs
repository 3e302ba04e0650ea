//! The VNext listings and `resolve_tools`: pages, allow lists, the user bucket and description
//! overrides.

use super::*;

#[tokio::test]
async fn vnext_listings_always_set_the_page_and_follow_the_allow_lists() {
    let (fake, arcade) = setup().await;
    let caps = arcade.capabilities();
    assert!(!caps.multiple_connections_per_toolkit && caps.batch_connection_status);
    assert!(!caps.reauthorize_reuses_connection_id);
    assert_eq!(caps.supports_revoke, Some(true));
    let all = arcade.list_tools_vnext(ListToolsOptions::default()).await.unwrap();
    assert_eq!(all.data.len(), 5);
    assert_eq!(all.pagination.unwrap().page, Some(1));
    let second = arcade.list_tools_vnext(opts(None, None, 2, 2)).await.unwrap();
    assert_eq!(second.data[0].slug, "Github.GetRepository");
    assert_eq!(second.pagination.unwrap().page, Some(2));

    let allowed = arcade.clone().allowed_toolkits(["Math"]);
    let before = fake.seen(|s| s.requests);
    let none = allowed.list_tools_vnext(opts(Some("Slack"), None, 3, 10)).await.unwrap();
    assert!(none.data.is_empty());
    assert_eq!(none.pagination.unwrap().page, Some(3), "the page is set even on an empty answer");
    assert_eq!(fake.seen(|s| s.requests), before, "no HTTP for a disallowed toolkit");
    let kits = allowed.list_toolkits_vnext().await.unwrap();
    assert_eq!(kits.data.iter().map(|k| k.slug.as_str()).collect::<Vec<_>>(), ["Math"]);
    assert_eq!(kits.pagination.unwrap().page, Some(1));
    assert!(
        arcade.list_connection_fields("Github").await.unwrap().is_empty(),
        "Arcade asks nothing up front"
    );
}

#[tokio::test]
async fn resolve_tools_vnext_binds_the_user_bucket_and_applies_description_overrides() {
    let (fake, arcade) = setup().await;
    let mut meta = BTreeMap::new();
    meta.insert(
        "Slack.SendMessage".to_owned(),
        ToolMeta {
            toolkit: Some("Slack".into()),
            description: Some("Post to the team's Slack".into()),
            ..ToolMeta::default()
        },
    );
    let asked = |author: Option<&str>, kind: Option<ConnectionKind>, context: serde_json::Map<String, Value>| ResolveToolsOptions {
        tool_slugs: vec!["Slack.SendMessage".into(), "Math_Add".into(), "Nope.Tool".into()],
        tool_meta: meta.clone(),
        connection_id: "uc_ignored".into(),
        author_id: author.map(str::to_owned),
        kind,
        toolkit: Some("Slack".into()),
        scope: None,
        request_context: context,
    };
    let tools = arcade
        .resolve_tools_vnext(asked(Some("alice"), None, context_of("bob")))
        .await
        .unwrap();
    assert_eq!(
        tools.keys().collect::<Vec<_>>(),
        ["Math_Add", "Slack.SendMessage"],
        "unknown slugs left out"
    );
    assert_eq!(tools["Slack.SendMessage"].spec().description, "Post to the team's Slack");
    assert_eq!(tools["Math_Add"].spec().description, "Add two integers");
    let registry = Registry::new();
    registry.insert(tools["Slack.SendMessage"].clone()).unwrap();
    registry
        .call("Slack.SendMessage", json!({"channel": "general"}), ctx("mallory"))
        .await
        .unwrap();
    let last_user = || fake.seen(|s| s.executions.last().unwrap().1.clone());
    assert_eq!(last_user(), "alice", "an author-bound tool runs as the author whoever calls it");

    for (author, kind, context, expected) in [
        (None, None, context_of("carol"), "carol"),
        (None, Some(ConnectionKind::Invoker), context_of("dave"), "dave"),
        (Some("erin"), Some(ConnectionKind::Invoker), context_of("dave"), "erin"),
    ] {
        let tools = arcade.resolve_tools_vnext(asked(author, kind, context)).await.unwrap();
        let registry = Registry::new();
        registry.insert(tools["Slack.SendMessage"].clone()).unwrap();
        registry
            .call("Slack.SendMessage", json!({"channel": "c"}), CallOptions::default())
            .await
            .unwrap();
        assert_eq!(last_user(), expected);
    }

    let executions = fake.seen(|s| s.executions.len());
    let Err(e) = arcade.resolve_tools_vnext(asked(None, None, Default::default())).await else {
        panic!("resolved without a bucket")
    };
    assert!(matches!(&e, ProviderError::Config(m) if m.contains("resource id")), "{e:?}");
    let Err(e) = arcade
        .clone()
        .user_id("svc")
        .resolve_tools_vnext(asked(None, Some(ConnectionKind::Author), Default::default()))
        .await
    else {
        panic!("the configured user was used as a fallback")
    };
    assert!(
        matches!(e, ProviderError::Config(_)),
        "the configured user is not a silent fallback: {e:?}"
    );
    let Err(e) = arcade
        .resolve_tools_vnext(asked(None, Some(ConnectionKind::Platform), context_of("x")))
        .await
    else {
        panic!("a platform connection resolved without a configured user")
    };
    assert!(e.to_string().contains("user_id"), "{e}");
    assert_eq!(fake.seen(|s| s.executions.len()), executions);

    for (provider, kind, expected) in [
        (arcade.clone().allow_shared_user(true), None, "default"),
        (arcade.clone().user_id("svc"), Some(ConnectionKind::Platform), "svc"),
    ] {
        let tools = provider.resolve_tools_vnext(asked(None, kind, Default::default())).await.unwrap();
        let registry = Registry::new();
        registry.insert(tools["Slack.SendMessage"].clone()).unwrap();
        registry
            .call("Slack.SendMessage", json!({"channel": "c"}), CallOptions::default())
            .await
            .unwrap();
        assert_eq!(last_user(), expected);
    }
    let pruned = arcade.clone().allowed_toolkits(["Math"]);
    let tools = pruned
        .resolve_tools_vnext(asked(Some("alice"), None, Default::default()))
        .await
        .unwrap();
    assert_eq!(tools.keys().collect::<Vec<_>>(), ["Math_Add"]);
}
