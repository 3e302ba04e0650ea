//! Connections: authorize, their statuses, fields, listing and revocation, and the
//! connection-management tools (manage, then wait for connections).

use super::*;

#[tokio::test]
async fn authorize_statuses_fields_listing_and_revoke() {
    let (fake, composio) = setup().await;
    let composio = composio.user_id("author-1");
    // A custom OAuth config: `POST /connected_accounts`.
    let auth = composio
        .authorize(AuthorizeOptions {
            toolkit: "github".into(),
            connection_id: "alice".into(),
            ..Default::default()
        })
        .await
        .unwrap();
    assert!(auth.url.starts_with("https://connect.composio.example/authorize/ca_"), "{auth:?}");
    let created = fake.seen(|s| s.created[0].clone());
    assert_eq!(
        created,
        json!({"auth_config": {"id": "ac_github"}, "connection": {"user_id": "alice"}})
    );
    assert_eq!(composio.get_auth_status(&auth.auth_id).await.unwrap(), AuthStatus::Pending);
    fake.complete(&auth.auth_id);
    assert_eq!(composio.get_auth_status(&auth.auth_id).await.unwrap(), AuthStatus::Completed);
    for (status, expected) in [
        ("FAILED", AuthStatus::Failed),
        ("EXPIRED", AuthStatus::Failed),
        ("INITIALIZING", AuthStatus::Pending),
    ] {
        fake.set_status(&auth.auth_id, status);
        assert_eq!(composio.get_auth_status(&auth.auth_id).await.unwrap(), expected, "{status}");
    }
    assert_eq!(composio.get_auth_status("ca_gone").await.unwrap(), AuthStatus::Failed);

    // Re-authorizing keeps the id.
    let again = composio
        .authorize(AuthorizeOptions {
            toolkit: "github".into(),
            connection_id: auth.auth_id.clone(),
            ..Default::default()
        })
        .await
        .unwrap();
    assert_eq!(again.auth_id, auth.auth_id);
    assert!(fake.seen(|s| s.requests.iter().any(|r| r.ends_with("/refresh"))));

    // A Composio-managed OAuth config: a Connect link.
    let gmail = composio
        .authorize(AuthorizeOptions {
            toolkit: "gmail".into(),
            connection_id: "alice".into(),
            ..Default::default()
        })
        .await
        .unwrap();
    assert!(gmail.url.contains("/link/lt_"), "{gmail:?}");
    assert_eq!(fake.seen(|s| s.links.clone()), [("ac_gmail".to_owned(), "alice".to_owned())]);

    // Fields, then an API-key connection with its config in the state.
    let fields = composio.list_connection_fields("zendesk").await.unwrap();
    assert_eq!(slugs(&fields, |f| &f.name), ["subdomain", "generic_api_key", "page_size"]);
    assert_eq!((fields[0].display_name.as_str(), fields[0].required), ("Your Subdomain", true));
    assert_eq!(
        (fields[2].field_type, fields[2].required, fields[2].default.as_deref()),
        (FieldType::Number, false, Some("50"))
    );
    assert!(composio.list_connection_fields("github").await.unwrap().is_empty());
    let mut config = Map::new();
    config.insert("subdomain".into(), json!("acme"));
    config.insert("generic_api_key".into(), json!("zk_1"));
    let zen = composio
        .authorize(AuthorizeOptions {
            toolkit: "zendesk".into(),
            connection_id: "alice".into(),
            config,
            ..Default::default()
        })
        .await
        .unwrap();
    assert_eq!(zen.url, "", "no redirect for an API key");
    assert_eq!(composio.get_auth_status(&zen.auth_id).await.unwrap(), AuthStatus::Completed);
    assert_eq!(
        fake.seen(|s| s.created[1]["connection"]["state"].clone()),
        json!({"authScheme": "API_KEY", "val": {"status": "INITIALIZING", "subdomain": "acme", "generic_api_key": "zk_1"}})
    );

    // Zero or two enabled auth configs.
    for (toolkit, needle) in [
        ("notion", "no enabled auth config"),
        ("slack", "(ac_slack_a, ac_slack_b); exactly one must be enabled"),
    ] {
        let e = composio
            .authorize(AuthorizeOptions {
                toolkit: toolkit.into(),
                connection_id: "alice".into(),
                ..Default::default()
            })
            .await
            .unwrap_err();
        assert!(matches!(&e, ProviderError::Config(m) if m.contains(needle)), "{e}");
        assert!(composio.list_connection_fields(toolkit).await.is_err());
    }

    // Listing: owners, pages, statuses.
    let failed = fake.add_account("alice", "github", "EXPIRED");
    let disabled = fake.add_account("alice", "github", "ACTIVE");
    fake.set_disabled(&disabled, true);
    fake.add_account("bob", "github", "ACTIVE");
    fake.set_status(&auth.auth_id, "ACTIVE");
    let list = |user_ids: Option<Vec<&str>>, user_id: Option<&str>, page: u32, per_page: u32| ListConnectionsOptions {
        toolkit: "github".into(),
        user_ids: user_ids.map(|v| v.into_iter().map(str::to_owned).collect()),
        user_id: user_id.map(str::to_owned),
        page: Some(page),
        per_page: Some(per_page),
    };
    let alice = composio.list_connections(list(None, Some("alice"), 1, 2)).await.unwrap();
    assert_eq!(alice.items.len(), 2);
    assert_eq!(
        (alice.items[0].connection_id.as_str(), alice.items[0].status),
        (auth.auth_id.as_str(), ConnectionStatus::Active)
    );
    assert_eq!(alice.items[0].author_id.as_deref(), Some("alice"));
    assert_eq!(alice.items[1].status, ConnectionStatus::Failed);
    assert_eq!((alice.pagination.total, alice.pagination.has_more), (Some(3), true));
    let page2 = composio.list_connections(list(None, Some("alice"), 2, 2)).await.unwrap();
    assert_eq!(
        page2.items.iter().map(|c| (c.connection_id.clone(), c.status)).collect::<Vec<_>>(),
        [(disabled.clone(), ConnectionStatus::Inactive)]
    );
    let before = fake.seen(|s| s.count);
    assert!(
        composio
            .list_connections(list(Some(vec![]), None, 1, 10))
            .await
            .unwrap()
            .items
            .is_empty()
    );
    assert_eq!(fake.seen(|s| s.count), before, "an empty user list costs no request");
    let configured = composio.list_connections(list(None, None, 1, 500)).await.unwrap();
    assert!(
        configured.items.is_empty(),
        "no owners: the configured user only (author-1 has none)"
    );
    assert!(fake.seen(|s| s.requests.last().unwrap().contains("user_ids=author-1") && s.requests.last().unwrap().contains("limit=200")));
    let nobody = ComposioToolProvider::new(KEY).base_url(&fake.url);
    assert!(matches!(
        nobody.list_connections(list(None, None, 1, 10)).await,
        Err(ProviderError::Config(_))
    ));

    // Batch status.
    let status = composio
        .get_connection_status(vec![
            ConnectionRef {
                connection_id: auth.auth_id.clone(),
                toolkit: "github".into(),
            },
            ConnectionRef {
                connection_id: failed.clone(),
                toolkit: "github".into(),
            },
            ConnectionRef {
                connection_id: disabled.clone(),
                toolkit: "github".into(),
            },
            ConnectionRef {
                connection_id: "ca_missing".into(),
                toolkit: "github".into(),
            },
        ])
        .await
        .unwrap();
    assert_eq!(status.len(), 4, "every asked id answered");
    let connected: BTreeMap<_, _> = status.iter().map(|(k, v)| (k.clone(), v.connected)).collect();
    assert!(connected[&auth.auth_id], "ACTIVE and enabled");
    assert!(!connected[&failed] && !connected[&disabled] && !connected["ca_missing"]);

    // Revoke, twice.
    composio.revoke_connection(&failed).await.unwrap();
    composio.revoke_connection(&failed).await.unwrap();
    assert_eq!(fake.seen(|s| s.deleted.clone()), [failed]);
    let h = composio.get_health().await.unwrap();
    assert!(h.ok && h.message.is_none());
}

#[tokio::test]
async fn manage_then_wait_for_connections() {
    let (fake, composio) = setup().await;
    let composio = composio
        .default_scope(Scope::CallerSupplied)
        .allowed_toolkits(["composio", "gmail", "github", "notion"])
        .wait_for_connections_timeout(Duration::from_secs(30));
    let registry = Arc::new(
        registry_with(
            &composio,
            &[MANAGE_CONNECTIONS, WAIT_FOR_CONNECTIONS, "GMAIL_SEND_EMAIL"],
            ResolveOptions::default(),
        )
        .await,
    );
    fake.add_account("carol", "github", "ACTIVE");
    let out = registry
        .call(
            MANAGE_CONNECTIONS,
            json!({"toolkits": ["Gmail", "github", "notion", "slack"]}),
            ctx("carol"),
        )
        .await
        .unwrap()
        .value();
    let r = &out["results"];
    assert_eq!(r["gmail"]["status"], "initiated");
    let url = r["gmail"]["redirect_url"].as_str().unwrap().to_owned();
    assert!(url.contains("/link/lt_"));
    assert_eq!(r["github"]["status"], "active");
    assert_eq!(r["notion"]["status"], "error");
    assert!(r["notion"]["message"].as_str().unwrap().contains("no enabled auth config"));
    assert_eq!(r["slack"]["status"], "not_allowed");
    assert!(out["message"].as_str().unwrap().contains(&url) && out["message"].as_str().unwrap().contains(WAIT_FOR_CONNECTIONS));
    assert_eq!(fake.seen(|s| s.links.clone()), [("ac_gmail".to_owned(), "carol".to_owned())]);
    let account = r["gmail"]["connected_account_id"].as_str().unwrap().to_owned();

    // WAIT polls until the account completes (completed from another task once WAIT has polled).
    let waiter = {
        let registry = registry.clone();
        tokio::spawn(async move {
            registry
                .call(WAIT_FOR_CONNECTIONS, json!({"toolkits": ["gmail", "github"]}), ctx("carol"))
                .await
        })
    };
    let polls = |fake: &ComposioFake| fake.seen(|s| s.requests.iter().filter(|r| r.contains("/connected_accounts?")).count());
    let start = polls(&fake);
    while polls(&fake) < start + 2 {
        tokio::task::yield_now().await;
        tokio::time::sleep(Duration::from_millis(5)).await;
    }
    fake.complete(&account);
    let done = waiter.await.unwrap().unwrap().value();
    assert_eq!(done["connected"], true);
    assert_eq!(done["timed_out"], false);
    assert_eq!(done["toolkits"], json!({"gmail": "active", "github": "active"}));

    let sent = registry
        .call("GMAIL_SEND_EMAIL", json!({"recipient_email": "x@y.z", "body": "hi"}), ctx("carol"))
        .await
        .unwrap();
    assert_eq!(sent.value()["sent_by"]["user"], "carol");

    // A wait that never completes ends, bounded, with timed_out.
    let out = registry
        .call(
            WAIT_FOR_CONNECTIONS,
            json!({"toolkits": ["notion"], "timeout_seconds": 0.1}),
            ctx("carol"),
        )
        .await
        .unwrap()
        .value();
    assert_eq!(
        (out["timed_out"].clone(), out["toolkits"]["notion"].clone()),
        (json!(true), json!("not_connected"))
    );
    let any = registry
        .call(
            WAIT_FOR_CONNECTIONS,
            json!({"toolkits": ["notion", "gmail"], "mode": "any", "timeout_seconds": 0}),
            ctx("carol"),
        )
        .await
        .unwrap()
        .value();
    assert_eq!(any["connected"], true);

    // Cancellation ends a wait.
    let token = CancellationToken::new();
    let cancelled = {
        let registry = registry.clone();
        let token = token.clone();
        tokio::spawn(async move {
            let mut options = ctx("carol");
            options.env.cancellation = Some(token);
            registry
                .call(
                    WAIT_FOR_CONNECTIONS,
                    json!({"toolkits": ["notion"], "timeout_seconds": 600}),
                    options,
                )
                .await
        })
    };
    let start = polls(&fake);
    while polls(&fake) == start {
        tokio::time::sleep(Duration::from_millis(5)).await;
    }
    token.cancel();
    assert_eq!(cancelled.await.unwrap().unwrap_err().kind(), ErrorKind::Aborted);

    // Re-initiating even when connected.
    let out = registry
        .call(
            MANAGE_CONNECTIONS,
            json!({"toolkits": ["github"], "reinitiate_all": true}),
            ctx("carol"),
        )
        .await
        .unwrap()
        .value();
    assert_eq!(out["results"]["github"]["status"], "initiated");
    let e = registry
        .call(MANAGE_CONNECTIONS, json!({"toolkits": []}), ctx("carol"))
        .await
        .unwrap_err();
    assert_eq!(e.kind(), ErrorKind::InvalidInput);
}
