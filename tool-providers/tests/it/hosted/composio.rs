//! The Composio provider through real HTTP against the local fake: every method, cursor
//! pagination, both API prefixes, every failure path, the connection-management tools, the
//! fan-out, tenant isolation and secret redaction.

use crate::support;

use std::collections::BTreeMap;
use std::sync::Arc;
use std::time::Duration;

use serde_json::{Map, Value, json};
use support::composio_fake::{ComposioFake, Misbehave};
use tool_core::provider::{
    AuthStatus, AuthorizeOptions, ConnectionRef, ConnectionStatus, FanOutOptions, FieldType, ListConnectionsOptions, ListToolsOptions,
    PinnedConnection, ProviderError, ProviderRegistry, ProviderSelection, ResolveOptions, ResolveToolsOptions, Scope, ToolMeta,
    ToolProvider,
};
use tool_core::{CallOptions, CancellationToken, ErrorKind, Registry};
use tool_providers::ComposioToolProvider;
use tool_providers::composio::{ApiVersion, MANAGE_CONNECTIONS, WAIT_FOR_CONNECTIONS};

const KEY: &str = "ak_CANARY_9a8b7c6d5e4f3a2b1c0d9e8f7a6b5c4d";

async fn setup() -> (ComposioFake, ComposioToolProvider) {
    let fake = ComposioFake::start(KEY).await;
    let composio = ComposioToolProvider::new(KEY)
        .base_url(&fake.url)
        .timeout(Duration::from_secs(5))
        .retries(2, Duration::from_secs(2))
        .poll_interval(Duration::from_millis(20));
    (fake, composio)
}

fn opts(toolkit: Option<&str>, search: Option<&str>, page: u32, per_page: u32) -> ListToolsOptions {
    ListToolsOptions {
        toolkit: toolkit.map(str::to_owned),
        search: search.map(str::to_owned),
        page: Some(page),
        per_page: Some(per_page),
    }
}

fn ctx(resource: &str) -> CallOptions {
    CallOptions::with_context(json!({"mastra__resourceId": resource}))
}

fn slugs<T>(items: &[T], f: impl Fn(&T) -> &str) -> Vec<String> {
    items.iter().map(|t| f(t).to_owned()).collect()
}

async fn registry_with(composio: &ComposioToolProvider, slugs: &[&str], options: ResolveOptions) -> Registry {
    let tools = composio
        .resolve_tools(slugs.iter().map(|s| s.to_string()).collect(), options)
        .await
        .unwrap();
    let registry = Registry::new();
    for (_, tool) in tools {
        registry.insert(tool).unwrap();
    }
    registry
}

fn as_user(user: &str) -> ResolveOptions {
    ResolveOptions {
        user_id: Some(user.into()),
        request_context: Map::new(),
    }
}

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

#[tokio::test]
async fn http_failures_are_provider_errors() {
    let (fake, composio) = setup().await;
    let wrong = ComposioToolProvider::new("ak_wrong").base_url(&fake.url);
    match wrong.list_toolkits().await.unwrap_err() {
        ProviderError::Api { status: 401, message, .. } => assert!(message.contains("Unauthorized: Invalid API key"), "{message}"),
        e => panic!("{e:?}"),
    }
    let h = wrong.get_health().await.unwrap();
    assert!(!h.ok && h.message.unwrap().contains("401"));

    fake.misbehave(|m| m.rate_limit_once = true);
    assert_eq!(composio.list_toolkits().await.unwrap().data.len(), 7);
    assert_eq!(fake.seen(|s| s.count), 4, "two 401s, one 429, one retry");
    fake.misbehave(|m| m.rate_limit_always = true);
    let quick = composio.clone().retries(2, Duration::from_millis(20));
    assert!(matches!(quick.list_toolkits().await, Err(ProviderError::Api { status: 429, .. })));
    assert_eq!(fake.seen(|s| s.count), 7, "1 + 2 retries");

    let reset = |f: fn(&mut Misbehave)| {
        fake.misbehave(|m| *m = Misbehave::default());
        fake.misbehave(f);
    };
    reset(|m| m.fail_500 = true);
    assert!(matches!(
        composio.list_tools(opts(None, None, 1, 5)).await,
        Err(ProviderError::Api { status: 500, .. })
    ));
    let h = composio.get_health().await.unwrap();
    assert!(!h.ok && h.message.unwrap().contains("500"));

    reset(|m| m.slow = Some(Duration::from_secs(3)));
    let e = composio
        .clone()
        .timeout(Duration::from_millis(200))
        .list_toolkits()
        .await
        .unwrap_err();
    assert!(
        matches!(&e, ProviderError::Transport { message, .. } if message.contains("timed out")),
        "{e:?}"
    );

    reset(|m| m.malformed = true);
    let e = composio.get_tool_schema("GITHUB_CREATE_ISSUE").await.unwrap_err();
    assert!(
        matches!(&e, ProviderError::Transport { message, .. } if message.contains("malformed JSON")),
        "{e:?}"
    );

    reset(|m| m.endless = true);
    let before = fake.seen(|s| s.count);
    let e = composio.clone().max_pages(5).list_toolkits().await.unwrap_err();
    assert!(e.to_string().contains("did not end after 5 pages"), "{e}");
    assert_eq!(fake.seen(|s| s.count) - before, 5);
    let e = composio.clone().max_pages(5).list_tools(opts(None, None, 6, 10)).await.unwrap_err();
    assert!(
        matches!(e, ProviderError::Config(_)),
        "a page beyond the cap is refused before any request"
    );

    reset(|m| m.oversized = true);
    let e = composio.list_toolkits().await.unwrap_err();
    assert!(e.to_string().contains("larger than the 8388608 byte limit"), "{e}");
    fake.misbehave(|m| *m = Misbehave::default());
    let e = composio.clone().max_response_bytes(512).list_toolkits().await.unwrap_err();
    assert!(e.to_string().contains("512 byte limit"), "{e}");

    let unreachable = ComposioToolProvider::new(KEY)
        .base_url("http://127.0.0.1:1")
        .timeout(Duration::from_millis(500));
    let h = unreachable.get_health().await.unwrap();
    assert!(!h.ok && h.message.is_some());
}

#[tokio::test]
async fn the_api_key_never_appears_in_debug_errors_or_logs() {
    let logs = support::logs::capture();

    let (fake, composio) = setup().await;
    let composio = composio.user_id("u").allowed_toolkits(["composio", "gmail", "github"]);
    let mut texts = vec![format!("{composio:?}")];
    let registry = registry_with(
        &composio,
        &["GMAIL_SEND_EMAIL", "GITHUB_CREATE_ISSUE", MANAGE_CONNECTIONS],
        ResolveOptions::default(),
    )
    .await;
    for (tool, args) in [
        ("GMAIL_SEND_EMAIL", json!({"recipient_email": "a@b.c", "body": KEY})),
        ("GITHUB_CREATE_ISSUE", json!({"owner": "o", "repo": "r", "title": "t"})),
    ] {
        let e = registry.call(tool, args, ctx("alice")).await.unwrap_err();
        texts.push(format!("{e} {e:?} {}", e.to_json()));
    }
    let out = registry
        .call(MANAGE_CONNECTIONS, json!({"toolkits": ["gmail"]}), ctx("alice"))
        .await
        .unwrap();
    texts.push(out.value().to_string());
    for bad in [
        (|m: &mut Misbehave| m.fail_500 = true) as fn(&mut _),
        |m| m.malformed = true,
        |m| m.oversized = true,
        |m| m.rate_limit_always = true,
    ] {
        fake.misbehave(|m| *m = Misbehave::default());
        fake.misbehave(bad);
        let e = composio
            .clone()
            .retries(1, Duration::from_millis(10))
            .list_toolkits()
            .await
            .unwrap_err();
        texts.push(format!("{e} {e:?}"));
    }
    fake.misbehave(|m| *m = Misbehave::default());
    let wrong = ComposioToolProvider::new(format!("{KEY}x")).base_url(&fake.url);
    texts.push(format!("{:?}", wrong.list_toolkits().await.unwrap_err()));
    let unreachable = ComposioToolProvider::new(KEY)
        .base_url("http://127.0.0.1:1")
        .timeout(Duration::from_millis(500));
    texts.push(format!("{:?}", unreachable.list_toolkits().await.unwrap_err()));
    texts.push(format!("{:?}", unreachable.get_health().await.unwrap()));

    let logged = logs.text();
    assert!(
        logged.contains("provider request") && logged.contains("composio"),
        "logs were captured: {logged}"
    );
    texts.push(logged);
    for text in &texts {
        assert!(!text.contains(KEY) && !text.contains("CANARY"), "the key leaked: {text}");
    }
    let _ = Value::Null;
}
