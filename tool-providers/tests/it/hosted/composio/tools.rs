//! Listing and running tools: metadata, toolkits and cursor-paginated tools, allow lists, both
//! API prefixes and their schemas, and resolved tools executed through the registry.

use super::*;

#[tokio::test]
async fn metadata_toolkits_and_cursor_paginated_tools() {
    let (fake, composio) = setup().await;
    assert_eq!(composio.info().id, "composio");
    assert_eq!(
        ToolProvider::default_scope(&composio),
        Scope::PerAuthor,
        "the builder `default_scope(Scope)` shadows the trait method"
    );
    let caps = composio.capabilities();
    assert!(caps.multiple_connections_per_toolkit && caps.batch_connection_status && caps.reauthorize_reuses_connection_id);
    assert_eq!(caps.supports_revoke, Some(true));

    let kits = composio.list_toolkits().await.unwrap();
    assert_eq!(
        slugs(&kits.data, |t| &t.slug),
        ["github", "gmail", "slack", "zendesk", "notion", "hackernews", "composio"]
    );
    assert_eq!(kits.data[0].name, "GitHub");
    assert_eq!(kits.data[0].description.as_deref(), Some("Code hosting"));
    assert_eq!(composio.list_toolkits_vnext().await.unwrap(), kits);

    let first = composio.list_tools(opts(None, None, 1, 3)).await.unwrap();
    assert_eq!(
        slugs(&first.data, |t| &t.slug),
        ["GITHUB_CREATE_ISSUE", "GITHUB_GET_REPO", "GMAIL_SEND_EMAIL"]
    );
    assert_eq!(first.data[0].toolkit.as_deref(), Some("github"));
    let p = first.pagination.unwrap();
    assert_eq!((p.total, p.page, p.per_page, p.has_more), (Some(8), Some(1), Some(3), true));
    let third = composio.list_tools_vnext(opts(None, None, 3, 3)).await.unwrap();
    assert_eq!(
        slugs(&third.data, |t| &t.slug),
        ["COMPOSIO_MANAGE_CONNECTIONS", "COMPOSIO_WAIT_FOR_CONNECTIONS"]
    );
    assert!(!third.pagination.as_ref().unwrap().has_more);
    let beyond = composio.list_tools(opts(None, None, 9, 3)).await.unwrap();
    assert!(beyond.data.is_empty() && !beyond.pagination.unwrap().has_more);
    let walked: Vec<String> = fake.seen(|s| {
        s.requests
            .iter()
            .filter(|r| r.starts_with("GET /api/v3.1/tools?"))
            .cloned()
            .collect()
    });
    assert!(
        walked.iter().any(|r| r.contains("cursor=cur_6")),
        "page 3 was reached by walking the cursors: {walked:?}"
    );

    let gmail = composio.list_tools(opts(Some("Gmail"), Some("send"), 1, 10)).await.unwrap();
    assert_eq!(slugs(&gmail.data, |t| &t.slug), ["GMAIL_SEND_EMAIL"]);
    let last = fake.seen(|s| s.requests.last().cloned().unwrap());
    assert!(last.contains("toolkit_slug=gmail") && last.contains("query=send"), "{last}");
}

#[tokio::test]
async fn allow_lists_filter_and_a_disallowed_toolkit_costs_no_request() {
    let (fake, composio) = setup().await;
    let composio = composio
        .allowed_toolkits(["git*", "gmail"])
        .allowed_tools("github", ["GITHUB_CREATE_*"]);
    let before = fake.seen(|s| s.count);
    let none = composio.list_tools(opts(Some("slack"), None, 1, 10)).await.unwrap();
    assert!(none.data.is_empty());
    let none = composio
        .list_connections(ListConnectionsOptions {
            toolkit: "slack".into(),
            user_id: Some("u".into()),
            ..Default::default()
        })
        .await
        .unwrap();
    assert!(none.items.is_empty());
    assert_eq!(fake.seen(|s| s.count), before, "no HTTP for a disallowed toolkit");

    let all = composio.list_tools(opts(None, None, 1, 10)).await.unwrap();
    assert_eq!(
        slugs(&all.data, |t| &t.slug),
        ["GITHUB_CREATE_ISSUE", "GMAIL_SEND_EMAIL", "GMAIL_FETCH_EMAILS"]
    );
    assert_eq!(all.pagination.unwrap().total, Some(3));
    let page2 = composio.list_tools(opts(None, None, 2, 2)).await.unwrap();
    assert_eq!(slugs(&page2.data, |t| &t.slug), ["GMAIL_FETCH_EMAILS"]);
    let kits = composio.list_toolkits().await.unwrap();
    assert_eq!(slugs(&kits.data, |t| &t.slug), ["github", "gmail"]);
    assert!(composio.get_tool_schema("GITHUB_GET_REPO").await.unwrap().is_none());
    assert!(composio.get_tool_schema("SLACK_SEND_MESSAGE").await.unwrap().is_none());
    let tools = composio
        .resolve_tools(
            vec!["SLACK_SEND_MESSAGE".into(), "GITHUB_CREATE_ISSUE".into(), MANAGE_CONNECTIONS.into()],
            as_user("u"),
        )
        .await
        .unwrap();
    assert_eq!(
        tools.keys().collect::<Vec<_>>(),
        ["GITHUB_CREATE_ISSUE"],
        "the connection tools need `composio` allowed"
    );
    let with_meta = composio.clone().allowed_toolkits(["composio", "gmail"]);
    let tools = with_meta
        .resolve_tools(vec![MANAGE_CONNECTIONS.into(), WAIT_FOR_CONNECTIONS.into()], as_user("u"))
        .await
        .unwrap();
    assert_eq!(tools.len(), 2);
    assert!(with_meta.get_tool_schema(MANAGE_CONNECTIONS).await.unwrap().is_some());
    assert!(matches!(
        with_meta.authorize(AuthorizeOptions { toolkit: "github".into(), connection_id: "u".into(), ..Default::default() }).await,
        Err(ProviderError::Config(m)) if m.contains("not in this provider's allowed toolkits")
    ));
}

#[tokio::test]
async fn both_api_prefixes_and_schemas() {
    let (fake, composio) = setup().await;
    let v3 = composio.clone().api_version(ApiVersion::V3);
    let schema = v3.get_tool_schema("GITHUB_CREATE_ISSUE").await.unwrap().unwrap();
    assert_eq!(schema["required"], json!(["owner", "repo", "title"]));
    assert_eq!(schema["properties"]["title"]["type"], "string");
    assert_eq!(composio.get_tool_schema("GITHUB_CREATE_ISSUE").await.unwrap().unwrap(), schema);
    assert_eq!(composio.get_tool_schema("NOPE_TOOL").await.unwrap(), None, "404 is no schema");
    let paths = fake.seen(|s| s.requests.clone());
    assert_eq!(paths[0], "GET /api/v3/tools/GITHUB_CREATE_ISSUE");
    assert_eq!(paths[1], "GET /api/v3.1/tools/GITHUB_CREATE_ISSUE");
    assert_eq!(v3.list_toolkits().await.unwrap().data.len(), 7);
    assert!(fake.seen(|s| s.requests.last().unwrap().starts_with("GET /api/v3/toolkits")));
}

#[tokio::test]
async fn resolved_tools_execute_through_the_registry() {
    let (fake, composio) = setup().await;
    let composio = composio.user_id("author-1");
    let ca = fake.add_account("author-1", "github", "ACTIVE");
    let registry = registry_with(
        &composio,
        &["GITHUB_CREATE_ISSUE", "GMAIL_SEND_EMAIL", "HACKERNEWS_GET_FRONTPAGE", "NOPE_TOOL"],
        ResolveOptions::default(),
    )
    .await;
    assert_eq!(registry.len(), 3, "unknown slugs are left out");
    let issue = registry.get("GITHUB_CREATE_ISSUE").unwrap();
    assert_eq!(issue.spec().description, "Create an issue in a GitHub repository");
    assert_eq!(
        issue.spec().schemas.output,
        Some(json!({"type": "object", "properties": {"number": {"type": "integer"}, "url": {"type": "string"}}})),
        "the `data` schema of the wrapped output"
    );
    assert_eq!(
        registry.get("GMAIL_SEND_EMAIL").unwrap().spec().schemas.output,
        None,
        "union schemas are left out"
    );

    let out = registry
        .call(
            "GITHUB_CREATE_ISSUE",
            json!({"owner": "octo", "repo": "hello", "title": "Bug"}),
            CallOptions::default(),
        )
        .await
        .unwrap();
    assert_eq!(
        out.value(),
        json!({"number": 7, "url": "https://github.example/octo/hello/issues/7"}),
        "`data`, not the envelope"
    );
    let e = fake.seen(|s| s.executions[0].clone());
    assert_eq!(
        (
            e.slug.as_str(),
            e.user_id.as_deref(),
            e.connected_account_id.as_deref(),
            e.version.as_deref()
        ),
        ("GITHUB_CREATE_ISSUE", Some("author-1"), None, Some("20260101_00"))
    );
    let _ = ca;

    let failed = registry
        .call(
            "GITHUB_CREATE_ISSUE",
            json!({"owner": "o", "repo": "r", "title": "fail"}),
            CallOptions::default(),
        )
        .await
        .unwrap_err();
    assert_eq!(failed.kind(), ErrorKind::Execution);
    assert!(failed.message().contains("Validation Failed: the title is not allowed"), "{failed}");

    let missing = registry
        .call(
            "GMAIL_SEND_EMAIL",
            json!({"recipient_email": "a@b.c", "body": "hi"}),
            CallOptions::default(),
        )
        .await
        .unwrap_err();
    assert!(
        missing.message().contains("Connection required") && missing.message().contains("`gmail`"),
        "{missing}"
    );
    assert!(
        missing.message().contains("Call `COMPOSIO_MANAGE_CONNECTIONS`"),
        "no allow-list: the connection tool is offered: {missing}"
    );
    assert_eq!(missing.details().unwrap()["connection_required"], json!(true));

    let free = registry
        .call("HACKERNEWS_GET_FRONTPAGE", json!({}), CallOptions::default())
        .await
        .unwrap();
    assert_eq!(free.value()["stories"][0]["title"], "Hello");

    let executions = fake.seen(|s| s.executions.len());
    for bad in [json!({"owner": "o"}), json!({"owner": 1, "repo": "r", "title": "t"})] {
        let e = registry.call("GITHUB_CREATE_ISSUE", bad, CallOptions::default()).await.unwrap_err();
        assert_eq!(e.kind(), ErrorKind::InvalidInput, "{e}");
    }
    assert_eq!(
        fake.seen(|s| s.executions.len()),
        executions,
        "invalid input never reaches Composio"
    );

    let offered = composio.clone().allowed_toolkits(["gmail"]);
    let registry = registry_with(&offered, &["GMAIL_SEND_EMAIL"], as_user("someone")).await;
    let e = registry
        .call(
            "GMAIL_SEND_EMAIL",
            json!({"recipient_email": "a@b.c", "body": "hi"}),
            CallOptions::default(),
        )
        .await
        .unwrap_err();
    assert!(e.message().contains("authorizing it in the app"), "{e}");
}
