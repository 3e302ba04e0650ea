//! The fan-out over two labelled Gmail connections, and callers isolated by resource id.

use super::*;

#[tokio::test]
async fn fan_out_with_two_labelled_gmail_connections() {
    let (fake, composio) = setup().await;
    let work = fake.add_account("author-1", "gmail", "ACTIVE");
    let personal = fake.add_account("author-1", "gmail", "ACTIVE");
    let mut providers = ProviderRegistry::new();
    providers.add(composio.user_id("author-1"));
    let pin = |id: &str, label: &str| PinnedConnection {
        kind: Default::default(),
        toolkit: "gmail".into(),
        connection_id: id.into(),
        label: Some(label.into()),
        scope: None,
    };
    let selection = BTreeMap::from([(
        "composio".to_owned(),
        ProviderSelection {
            tools: BTreeMap::from([(
                "GMAIL_SEND_EMAIL".to_owned(),
                ToolMeta {
                    toolkit: Some("gmail".into()),
                    description: Some("Send mail for the team".into()),
                    ..ToolMeta::default()
                },
            )]),
            connections: BTreeMap::from([("gmail".to_owned(), vec![pin(&work, "Work"), pin(&personal, "Personal")])]),
        },
    )]);
    let options = FanOutOptions {
        author_id: Some("author-1".into()),
        ..Default::default()
    };
    let registry = Registry::new();
    let (ids, skipped) = providers.resolve_selection_into(&registry, &selection, &options).await;
    assert!(skipped.is_empty(), "{skipped:?}");
    assert_eq!(ids, ["GMAIL_SEND_EMAIL__PERSONAL", "GMAIL_SEND_EMAIL__WORK"]);
    let definition_fetches = || {
        fake.seen(|s| {
            s.requests
                .iter()
                .filter(|r| r.starts_with("GET ") && r.ends_with("/tools/GMAIL_SEND_EMAIL"))
                .count()
        })
    };
    assert_eq!(definition_fetches(), 1, "one definition serves both connections");
    let spec = registry.get("GMAIL_SEND_EMAIL__WORK").unwrap().spec().clone();
    assert!(spec.description.starts_with("Send mail for the team") && spec.description.contains("Routes through connection: Work"));
    for (id, account) in [("GMAIL_SEND_EMAIL__WORK", &work), ("GMAIL_SEND_EMAIL__PERSONAL", &personal)] {
        registry
            .call(id, json!({"recipient_email": "a@b.c", "body": "hi"}), CallOptions::default())
            .await
            .unwrap();
        let e = fake.seen(|s| s.executions.last().cloned().unwrap());
        assert_eq!(
            (e.user_id.as_deref(), e.connected_account_id.as_deref()),
            (Some("author-1"), Some(account.as_str()))
        );
    }

    // An author-bound connection pinned to another user's account is refused at resolution;
    // its sibling still resolves.
    let bobs = fake.add_account("bob", "gmail", "ACTIVE");
    let slack = fake.add_account("author-1", "slack", "ACTIVE");
    let mut selection = selection;
    selection.get_mut("composio").unwrap().connections = BTreeMap::from([(
        "gmail".to_owned(),
        vec![pin(&bobs, "Bob"), pin(&work, "Work"), pin(&slack, "Slack")],
    )]);
    let registry = Registry::new();
    let (ids, skipped) = providers.resolve_selection_into(&registry, &selection, &options).await;
    assert_eq!(ids, ["GMAIL_SEND_EMAIL__WORK"]);
    assert_eq!(definition_fetches(), 1, "resolving again within the time-to-live fetches nothing");
    let why: Vec<(Option<&str>, &str)> = skipped.iter().map(|s| (s.connection_id.as_deref(), s.reason.as_str())).collect();
    assert_eq!(why.len(), 2, "{skipped:?}");
    assert!(why.contains(&(
        Some(bobs.as_str()),
        &*format!("Composio tools cannot be bound to user `author-1` through this connection: the connected account `{bobs}` belongs to another user")
    )), "{skipped:?}");
    assert!(
        why.iter()
            .any(|(c, e)| *c == Some(slack.as_str()) && e.contains("belongs to the toolkit `slack`, not `gmail`")),
        "{skipped:?}"
    );
}

#[tokio::test]
async fn callers_are_isolated_by_resource_id() {
    let (fake, composio) = setup().await;
    let composio = composio
        .default_scope(Scope::CallerSupplied)
        .user_id("author-1")
        .allowed_toolkits(["composio", "gmail"]);
    let bobs = fake.add_account("bob", "gmail", "ACTIVE");
    fake.add_account("author-1", "gmail", "ACTIVE");
    let registry = registry_with(&composio, &["GMAIL_SEND_EMAIL", WAIT_FOR_CONNECTIONS], ResolveOptions::default()).await;
    let args = json!({"recipient_email": "a@b.c", "body": "hi"});

    let ok = registry.call("GMAIL_SEND_EMAIL", args.clone(), ctx("bob")).await.unwrap();
    assert_eq!(ok.value()["sent_by"], json!({"user": "bob", "account": bobs}));
    let e = registry.call("GMAIL_SEND_EMAIL", args.clone(), ctx("alice")).await.unwrap_err();
    assert!(
        e.message().contains("Connection required"),
        "alice never reaches bob's (or the author's) account: {e}"
    );
    let e = registry
        .call("GMAIL_SEND_EMAIL", args.clone(), CallOptions::default())
        .await
        .unwrap_err();
    assert!(e.message().contains("not identified"), "{e}");
    let users: Vec<Option<String>> = fake.seen(|s| s.executions.iter().map(|e| e.user_id.clone()).collect());
    assert_eq!(
        users,
        [Some("bob".to_owned()), Some("alice".to_owned())],
        "an unidentified caller never executes"
    );

    // A tool pinned to Bob's account runs for Bob; for Alice it is refused before any
    // execution (the account's owner is looked up once, then remembered).
    let executions = fake.seen(|s| s.executions.len());
    let pinned = composio
        .resolve_tools_vnext(ResolveToolsOptions {
            tool_slugs: vec!["GMAIL_SEND_EMAIL".into()],
            connection_id: bobs.clone(),
            kind: Some(tool_core::provider::ConnectionKind::Invoker),
            toolkit: Some("gmail".into()),
            ..Default::default()
        })
        .await
        .unwrap();
    let pinned = Registry::from_iter(pinned.into_values());
    let e = pinned.call("GMAIL_SEND_EMAIL", args.clone(), ctx("alice")).await.unwrap_err();
    assert!(e.message().contains("is not available to this user"), "{e}");
    assert!(!e.message().contains("bob"), "the owner is not revealed: {e}");
    assert_eq!(
        fake.seen(|s| s.executions.len()),
        executions,
        "nothing ran with Bob's account for Alice"
    );
    for _ in 0..2 {
        let ok = pinned.call("GMAIL_SEND_EMAIL", args.clone(), ctx("bob")).await.unwrap();
        assert_eq!(ok.value()["sent_by"], json!({"user": "bob", "account": bobs}));
    }
    let e = pinned.call("GMAIL_SEND_EMAIL", args.clone(), ctx("alice")).await.unwrap_err();
    assert!(e.message().contains("is not available to this user"), "{e}");
    let lookups = fake.seen(|s| {
        s.requests
            .iter()
            .filter(|r| r.starts_with("GET ") && r.ends_with(&format!("/connected_accounts/{bobs}")))
            .count()
    });
    assert_eq!(lookups, 1, "the owner of a pinned account is looked up once");
    assert_eq!(fake.seen(|s| s.executions.len()), executions + 2);

    // Alice cannot list or wait on Bob's connections.
    let out = registry
        .call(
            WAIT_FOR_CONNECTIONS,
            json!({"toolkits": ["gmail"], "timeout_seconds": 0}),
            ctx("alice"),
        )
        .await
        .unwrap();
    assert_eq!(out.value()["toolkits"]["gmail"], "not_connected");
    let listed = composio
        .list_connections(ListConnectionsOptions {
            toolkit: "gmail".into(),
            user_id: Some("alice".into()),
            ..Default::default()
        })
        .await
        .unwrap();
    assert!(listed.items.is_empty());
    assert!(fake.seen(|s| {
        s.requests
            .iter()
            .filter(|r| r.contains("/connected_accounts?"))
            .all(|r| !r.contains("bob"))
    }));

    // Sharing is an explicit opt-in.
    let shared = registry_with(
        &composio.clone().allow_shared_user(true),
        &["GMAIL_SEND_EMAIL"],
        ResolveOptions::default(),
    )
    .await;
    let e = shared.call("GMAIL_SEND_EMAIL", args, CallOptions::default()).await.unwrap_err();
    assert!(e.message().contains("Connection required"), "{e}");
    assert_eq!(
        fake.seen(|s| s.executions.last().unwrap().user_id.clone()),
        Some("default".to_owned())
    );
}
