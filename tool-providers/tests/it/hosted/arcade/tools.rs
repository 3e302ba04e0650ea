//! The legacy methods: offset pagination, allow lists, toolkits, schemas under every name form,
//! calls through the registry, tool errors, authorization required, and callers isolated by
//! resource id.

use super::*;

#[tokio::test]
async fn list_tools_follows_offset_pagination() {
    let (fake, arcade) = setup().await;
    assert_eq!(arcade.info().id, "arcade");
    assert_eq!(arcade.default_scope(), Scope::CallerSupplied);
    let first = arcade.list_tools(opts(None, None, 1, 2)).await.unwrap();
    let slugs: Vec<_> = first.data.iter().map(|t| t.slug.as_str()).collect();
    assert_eq!(slugs, ["Math.Add", "Math.Divide"]);
    assert_eq!(first.data[0].toolkit.as_deref(), Some("Math"));
    assert_eq!(first.data[0].name, "Add");
    let p = first.pagination.unwrap();
    assert_eq!((p.total, p.page, p.per_page, p.has_more), (Some(5), Some(1), Some(2), true));
    let last = arcade.list_tools(opts(None, None, 3, 2)).await.unwrap();
    assert_eq!(last.data.iter().map(|t| t.slug.as_str()).collect::<Vec<_>>(), ["Slack.SendMessage"]);
    assert!(!last.pagination.unwrap().has_more);

    let math = arcade.list_tools(opts(Some("math"), None, 1, 500)).await.unwrap();
    assert_eq!(math.data.len(), 2, "toolkit filter; per_page capped at 100 (the fake refuses more)");
    let searched = arcade.list_tools(opts(None, Some("repository"), 1, 10)).await.unwrap();
    assert_eq!(
        searched.data.iter().map(|t| t.slug.as_str()).collect::<Vec<_>>(),
        ["Github.GetRepository"]
    );
    assert!(
        fake.seen(|s| s.auth_headers.iter().all(|h| h == KEY)),
        "the raw key, as the SDKs send it"
    );
}

#[tokio::test]
async fn allow_lists_filter_and_a_disallowed_toolkit_costs_no_request() {
    let (fake, arcade) = setup().await;
    let arcade = arcade.allowed_toolkits(["Math", "Git*"]).allowed_tools("Math", ["Add"]);
    let before = fake.seen(|s| s.requests);
    let none = arcade.list_tools(opts(Some("Slack"), None, 1, 10)).await.unwrap();
    assert!(none.data.is_empty());
    assert_eq!(fake.seen(|s| s.requests), before, "no HTTP for a disallowed toolkit");
    let all = arcade.list_tools(opts(None, None, 1, 10)).await.unwrap();
    assert_eq!(
        all.data.iter().map(|t| t.slug.as_str()).collect::<Vec<_>>(),
        ["Math.Add", "Github.GetRepository"]
    );
    let kits = arcade.list_toolkits().await.unwrap();
    assert_eq!(kits.data.iter().map(|t| t.slug.as_str()).collect::<Vec<_>>(), ["Github", "Math"]);
    assert!(arcade.get_tool_schema("Math.Divide").await.unwrap().is_none());
    assert!(
        arcade
            .resolve_tools(vec!["Slack.SendMessage".into()], ResolveOptions::default())
            .await
            .unwrap()
            .is_empty()
    );
}

#[tokio::test]
async fn toolkits_are_derived_from_the_tools() {
    let (_fake, arcade) = setup().await;
    let kits = arcade.list_toolkits().await.unwrap();
    assert_eq!(
        kits.data.iter().map(|t| t.slug.as_str()).collect::<Vec<_>>(),
        ["Github", "Gmail", "Math", "Slack"]
    );
    assert_eq!(kits.data[2].description.as_deref(), Some("The Math toolkit"));
    assert!(!kits.pagination.unwrap().has_more);
}

#[tokio::test]
async fn schemas_are_built_from_value_schema_under_every_name_form() {
    let (_fake, arcade) = setup().await;
    let expected = json!({
        "type": "object",
        "properties": {
            "owner": {"type": "string", "description": "The owner"},
            "repo": {"type": "string", "description": "The repository"},
            "include": {"type": "array", "items": {"type": "string", "enum": ["issues", "pulls"]}, "description": "Extra sections"},
            "archived": {"type": "boolean", "description": "Include archived"},
            "filters": {"type": "object", "description": "Filters"},
        },
        "required": ["owner", "repo"],
    });
    for name in ["Github.GetRepository", "Github.GetRepository@1.0.0", "Github_GetRepository"] {
        assert_eq!(arcade.get_tool_schema(name).await.unwrap(), Some(expected.clone()), "{name}");
    }
    let slack = arcade.get_tool_schema("Slack.SendMessage").await.unwrap().unwrap();
    assert_eq!(slack["properties"]["priority"], json!({"type": "string", "enum": ["low", "high"]}));
    assert_eq!(arcade.get_tool_schema("Math.Nope").await.unwrap(), None, "404 is no schema");
    assert_eq!(arcade.get_tool_schema("not-a-name").await.unwrap(), None);
}

#[tokio::test]
async fn resolved_tools_run_through_the_registry_and_return_output_value() {
    let (fake, arcade) = setup().await;
    let arcade = arcade.user_id("configured-user");
    let tools = arcade
        .resolve_tools(
            vec!["Math.Add".into(), "Math.Add@1.0.0".into(), "Math_Add".into(), "Math.Missing".into()],
            ResolveOptions::default(),
        )
        .await
        .unwrap();
    assert_eq!(
        tools.keys().collect::<Vec<_>>(),
        ["Math.Add", "Math.Add@1.0.0", "Math_Add"],
        "unknown slugs left out"
    );
    for tool in tools.values() {
        assert_eq!(tool.spec().id, "Math.Add");
        assert_eq!(tool.spec().schemas.output, Some(json!({"type": "integer"})));
    }
    let registry = Registry::new();
    registry.insert(tools["Math.Add@1.0.0"].clone()).unwrap();
    let out = registry
        .call("Math.Add", json!({"a": 2, "b": 3}), CallOptions::default())
        .await
        .unwrap();
    assert_eq!(out.value(), json!(5), "output.value, not the envelope");
    assert_eq!(
        fake.seen(|s| s.executions.clone()),
        [("Math.Add".to_owned(), "configured-user".to_owned(), Some("1.0.0".to_owned()))]
    );

    let bad = registry
        .call("Math.Add", json!({"a": "two", "b": 3}), CallOptions::default())
        .await
        .unwrap_err();
    assert_eq!(bad.kind(), ErrorKind::InvalidInput, "{bad}");
    let missing = registry
        .call("Math.Add", json!({"a": 2}), CallOptions::default())
        .await
        .unwrap_err();
    assert_eq!(missing.kind(), ErrorKind::InvalidInput, "{missing}");
    assert_eq!(fake.seen(|s| s.executions.len()), 1, "invalid input never reaches Arcade");
}

#[tokio::test]
async fn tool_errors_reach_the_model_with_their_message() {
    let (_fake, arcade) = setup().await;
    let registry = registry_with(&arcade.allow_shared_user(true), &["Math.Divide"]).await;
    let e = registry
        .call("Math.Divide", json!({"a": 1, "b": 0}), CallOptions::default())
        .await
        .unwrap_err();
    assert_eq!(e.kind(), ErrorKind::Execution);
    assert!(
        e.message().contains("Cannot divide by zero") && e.message().contains("non-zero divisor"),
        "{e}"
    );
    assert_eq!(e.details().unwrap()["kind"], json!("TOOL_RUNTIME_FATAL"));
    let ok = registry
        .call("Math.Divide", json!({"a": 1, "b": 4}), CallOptions::default())
        .await
        .unwrap();
    assert_eq!(ok.value(), json!(0.25));
}

#[tokio::test]
async fn authorization_required_returns_the_url_then_runs_once_granted() {
    let (fake, arcade) = setup().await;
    let registry = registry_with(&arcade, &["Github.GetRepository", "Gmail_ListEmails"]).await;
    let args = json!({"owner": "octo", "repo": "hello"});
    let e = registry.call("Github.GetRepository", args.clone(), ctx("alice")).await.unwrap_err();
    assert!(
        e.message().contains("https://github.example/login/oauth/authorize?state=alice"),
        "{e}"
    );
    assert!(e.message().contains("Ask the user to open"), "{e}");
    assert_eq!(e.details().unwrap()["authorization_id"], json!("ac_alice"));
    assert_eq!(
        fake.seen(|s| s.authorizations.clone()),
        [("Github.GetRepository".to_owned(), "alice".to_owned())]
    );

    fake.grant("alice", "Github");
    let out = registry.call("Github.GetRepository", args, ctx("alice")).await.unwrap();
    assert_eq!(out.value(), json!({"full_name": "octo/hello", "user": "alice"}));

    let gmail = registry.call("Gmail.ListEmails", json!({}), ctx("bob")).await.unwrap_err();
    assert!(gmail.message().contains("https://accounts.example/authorize?user=bob"), "{gmail}");
}

#[tokio::test]
async fn callers_are_isolated_by_resource_id() {
    let (fake, arcade) = setup().await;
    let registry = registry_with(&arcade, &["Slack.SendMessage"]).await;
    for who in ["alice", "bob"] {
        let out = registry
            .call("Slack.SendMessage", json!({"channel": "general"}), ctx(who))
            .await
            .unwrap();
        assert_eq!(out.value(), json!("sent to general"));
    }
    let users: Vec<String> = fake.seen(|s| s.executions.iter().map(|e| e.1.clone()).collect());
    assert_eq!(users, ["alice", "bob"]);

    let e = registry
        .call("Slack.SendMessage", json!({"channel": "general"}), CallOptions::default())
        .await
        .unwrap_err();
    assert!(e.message().contains("not isolated"), "{e}");
    assert_eq!(fake.seen(|s| s.executions.len()), 2, "an unisolated caller never executes");

    let shared = registry_with(&arcade.clone().allow_shared_user(true), &["Slack.SendMessage"]).await;
    shared
        .call("Slack.SendMessage", json!({"channel": "c"}), CallOptions::default())
        .await
        .unwrap();
    let configured = registry_with(&arcade.clone().user_id("svc").allow_shared_user(true), &["Slack.SendMessage"]).await;
    configured
        .call("Slack.SendMessage", json!({"channel": "c"}), CallOptions::default())
        .await
        .unwrap();
    configured
        .call("Slack.SendMessage", json!({"channel": "c"}), ctx("carol"))
        .await
        .unwrap();
    let users: Vec<String> = fake.seen(|s| s.executions.iter().map(|e| e.1.clone()).collect());
    assert_eq!(
        users,
        ["alice", "bob", "default", "svc", "carol"],
        "resource id, then user id, then `default` if allowed"
    );
}
