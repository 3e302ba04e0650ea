//! The Arcade provider through real HTTP against the local fake: every method (legacy and
//! VNext), every name form, every failure path, the auth-status long poll, connections,
//! tenant isolation, the fan-out end to end and secret redaction.

use crate::support;

use std::time::{Duration, Instant};

use serde_json::{Value, json};
use std::collections::BTreeMap;
use support::arcade_fake::ArcadeFake;

use tool_core::provider::{
    AuthStatus, AuthorizeOptions, ConnectionKind, ConnectionRef, ConnectionStatus, FanOutOptions, ListConnectionsOptions, ListToolsOptions,
    PinnedConnection, ProviderError, ProviderRegistry, ProviderSelection, ResolveOptions, ResolveToolsOptions, Scope, ToolMeta,
    ToolProvider,
};
use tool_core::{CallOptions, ErrorKind, Registry};
use tool_providers::ArcadeToolProvider;
use tool_providers::arcade::ALREADY_AUTHORIZED_ID;

const KEY: &str = "arc_CANARY_5f1e2d3c4b5a69788796a5b4c3d2e1f0";

async fn setup() -> (ArcadeFake, ArcadeToolProvider) {
    let fake = ArcadeFake::start(KEY).await;
    let arcade = ArcadeToolProvider::new(KEY)
        .base_url(&fake.url)
        .timeout(Duration::from_secs(5))
        .retries(2, Duration::from_secs(2));
    (fake, arcade)
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

async fn registry_with(arcade: &ArcadeToolProvider, slugs: &[&str]) -> Registry {
    let tools = arcade
        .resolve_tools(slugs.iter().map(|s| s.to_string()).collect(), ResolveOptions::default())
        .await
        .unwrap();
    let registry = Registry::new();
    for (_, tool) in tools {
        registry.insert(tool).unwrap();
    }
    registry
}

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

#[tokio::test]
async fn health_reports_and_failures_stay_bounded() {
    let (fake, arcade) = setup().await;
    let h = arcade.get_health().await.unwrap();
    assert!(h.ok && h.message.is_none());
    fake.misbehave(|m| m.fail_500 = true);
    let h = arcade.get_health().await.unwrap();
    assert!(!h.ok && h.message.unwrap().contains("500"));
    match arcade.list_tools(opts(None, None, 1, 5)).await.unwrap_err() {
        ProviderError::Api { status: 500, message, .. } => assert!(message.contains("internal_error"), "{message}"),
        e => panic!("{e:?}"),
    }
}

#[tokio::test]
async fn unauthorized_keys_are_api_errors_and_both_header_forms_are_accepted_by_the_fake() {
    let (fake, _) = setup().await;
    let wrong = ArcadeToolProvider::new("arc_wrong").base_url(&fake.url);
    match wrong.list_tools(ListToolsOptions::default()).await.unwrap_err() {
        ProviderError::Api { status: 401, message, .. } => assert!(message.contains("unauthorized"), "{message}"),
        e => panic!("{e:?}"),
    }
    let client = reqwest::Client::new();
    let url = format!("{}/v1/health", fake.url);
    for (header, status) in [(Some(KEY.to_owned()), 200), (Some(format!("Bearer {KEY}")), 200), (None, 401)] {
        let mut req = client.get(&url);
        if let Some(h) = header {
            req = req.header("authorization", h);
        }
        assert_eq!(req.send().await.unwrap().status().as_u16(), status);
    }
}

#[tokio::test]
async fn rate_limits_are_retried_honouring_retry_after_then_given_up() {
    let (fake, arcade) = setup().await;
    fake.misbehave(|m| m.rate_limit_once = true);
    let started = Instant::now();
    let ok = arcade.list_tools(opts(None, None, 1, 5)).await.unwrap();
    assert_eq!(ok.data.len(), 5);
    assert!(started.elapsed() >= Duration::from_millis(900), "waited for Retry-After: 1");
    assert_eq!(fake.seen(|s| s.requests), 2);

    fake.misbehave(|m| m.rate_limit_always = true);
    let arcade = arcade.retries(2, Duration::from_millis(50));
    match arcade.list_tools(opts(None, None, 1, 5)).await.unwrap_err() {
        ProviderError::Api { status: 429, .. } => {}
        e => panic!("{e:?}"),
    }
    assert_eq!(fake.seen(|s| s.requests), 5, "1 + 2 retries, then the 429 is returned");
}

/// An error and its causes, each one's words joined by `: ` (what a log of `source()` shows).
fn chain(e: &dyn std::error::Error) -> String {
    std::iter::successors(Some(e), |e| e.source())
        .map(ToString::to_string)
        .collect::<Vec<_>>()
        .join(": ")
}

#[tokio::test]
async fn an_unreachable_platform_keeps_the_http_error_as_the_source_without_secrets() {
    // A port nobody listens on: the connection is refused. The key is in the base URL's
    // credentials too, where a URL in a message would show it.
    let port = std::net::TcpListener::bind("127.0.0.1:0").unwrap().local_addr().unwrap().port();
    let arcade = ArcadeToolProvider::new(KEY)
        .base_url(format!("http://ann:{KEY}@127.0.0.1:{port}"))
        .retries(0, Duration::ZERO);
    let e = arcade.list_tools(opts(None, None, 1, 5)).await.unwrap_err();
    assert!(matches!(&e, ProviderError::Transport { .. }), "{e:?}");
    let source = std::error::Error::source(&e).expect("the HTTP error is the source");
    let http = source.downcast_ref::<reqwest::Error>().expect("a reqwest::Error");
    assert!(http.is_connect() && http.url().is_none(), "{http:?}");
    let chain = chain(&e);
    assert!(chain.starts_with(&e.to_string()), "{chain}");
    assert!(chain.to_lowercase().contains("connection refused"), "the cause is printed: {chain}");
    assert!(!chain.contains(KEY) && !format!("{e:?}").contains(KEY), "{chain}");
}

#[tokio::test]
async fn slow_malformed_endless_and_oversized_answers_are_bounded() {
    let (fake, arcade) = setup().await;
    fake.misbehave(|m| m.slow = Some(Duration::from_secs(3)));
    let slow = arcade.clone().timeout(Duration::from_millis(200));
    let started = Instant::now();
    let e = slow.list_tools(opts(None, None, 1, 5)).await.unwrap_err();
    assert!(
        matches!(&e, ProviderError::Transport { message, .. } if message.contains("timed out")),
        "{e:?}"
    );
    assert!(started.elapsed() < Duration::from_secs(2));

    fake.misbehave(|m| *m = Default::default());
    fake.misbehave(|m| m.malformed = true);
    let e = arcade.get_tool_schema("Math.Add").await.unwrap_err();
    assert!(
        matches!(&e, ProviderError::Transport { message, .. } if message.contains("malformed JSON")),
        "{e:?}"
    );

    fake.misbehave(|m| *m = Default::default());
    fake.misbehave(|m| m.endless = true);
    let capped = arcade.clone().max_pages(7);
    let before = fake.seen(|s| s.requests);
    let e = capped.list_toolkits().await.unwrap_err();
    assert!(e.to_string().contains("did not end after 7 pages"), "{e}");
    assert_eq!(fake.seen(|s| s.requests) - before, 7);

    fake.misbehave(|m| *m = Default::default());
    fake.misbehave(|m| m.oversized = true);
    let e = arcade.list_tools(opts(None, None, 1, 5)).await.unwrap_err();
    assert!(e.to_string().contains("larger than the 8388608 byte limit"), "{e}");
    let small = arcade.clone().max_response_bytes(1024);
    fake.misbehave(|m| *m = Default::default());
    let e = small.list_tools(opts(None, None, 1, 100)).await.unwrap_err();
    assert!(e.to_string().contains("1024 byte limit"), "{e}");
}

#[tokio::test]
async fn the_api_key_never_appears_in_debug_errors_or_logs() {
    let logs = support::logs::capture();

    let (fake, arcade) = setup().await;
    let mut texts = vec![format!("{arcade:?}"), format!("{:?}", arcade.clone().user_id("u"))];
    let registry = registry_with(&arcade, &["Github.GetRepository", "Math.Divide", "Nope.Tool"]).await;
    for (tool, args) in [
        ("Github.GetRepository", json!({"owner": "o", "repo": "r"})),
        ("Math.Divide", json!({"a": 1, "b": 0})),
    ] {
        let e = registry.call(tool, args, ctx("alice")).await.unwrap_err();
        texts.push(format!("{e} {e:?} {}", e.to_json()));
    }
    let e = registry
        .call("Math.Divide", json!({"a": 1, "b": 1}), CallOptions::default())
        .await
        .unwrap_err();
    texts.push(format!("{e:?}"));
    for bad in [
        (|m: &mut support::arcade_fake::Misbehave| m.fail_500 = true) as fn(&mut _),
        |m| m.malformed = true,
        |m| m.oversized = true,
        |m| m.rate_limit_always = true,
    ] {
        fake.misbehave(|m| *m = Default::default());
        fake.misbehave(bad);
        let e = arcade
            .clone()
            .retries(1, Duration::from_millis(10))
            .list_tools(opts(None, None, 1, 5))
            .await
            .unwrap_err();
        texts.push(format!("{e} {e:?}"));
    }
    fake.misbehave(|m| *m = Default::default());
    texts.push(format!("{:?}", arcade.clone().auth_status_wait(Duration::from_secs(5))));
    fake.add_connection("alice", "github", "active");
    let flow = arcade
        .authorize(authorize_opts("Github", "alice", Some("Github.GetRepository")))
        .await
        .unwrap();
    texts.push(format!("{flow:?}"));
    for bad in [
        (|m: &mut support::arcade_fake::Misbehave| m.fail_500 = true) as fn(&mut _),
        |m| m.malformed = true,
        |m| m.rate_limit_always = true,
        |m| m.slow = Some(Duration::from_secs(2)),
    ] {
        fake.misbehave(|m| *m = Default::default());
        fake.misbehave(bad);
        let quick = arcade
            .clone()
            .retries(1, Duration::from_millis(10))
            .timeout(Duration::from_millis(300));
        let errors = [
            quick
                .authorize(authorize_opts("Github", "alice", Some("Github.GetRepository")))
                .await
                .err(),
            quick.get_auth_status(&flow.auth_id).await.err(),
            quick.list_connections(connections_of("Github", Some(&["alice"]))).await.err(),
            quick
                .get_connection_status(vec![ConnectionRef {
                    connection_id: "alice".into(),
                    toolkit: "Github".into(),
                }])
                .await
                .err(),
            quick.revoke_connection("uc_0001").await.err(),
            quick.revoke_user_connection("alice", "uc_0001").await.err(),
        ];
        for e in errors {
            let e = e.expect("a misbehaving Arcade is an error");
            texts.push(format!("{e} {e:?}"));
        }
    }
    fake.misbehave(|m| *m = Default::default());
    let e = arcade.authorize(authorize_opts("Github", "alice", None)).await.unwrap_err();
    texts.push(format!("{e} {e:?}"));
    let unreachable = ArcadeToolProvider::new(KEY)
        .base_url("http://127.0.0.1:1")
        .timeout(Duration::from_millis(500));
    let e = unreachable.list_tools(ListToolsOptions::default()).await.unwrap_err();
    texts.push(format!("{e} {e:?}"));
    texts.push(format!("{:?}", unreachable.get_health().await.unwrap()));
    let e = unreachable.get_auth_status("ac_x").await.unwrap_err();
    texts.push(format!("{e} {e:?}"));
    let e = unreachable.revoke_connection("uc_x").await.unwrap_err();
    texts.push(format!("{e} {e:?}"));

    let logged = logs.text();
    assert!(
        logged.contains("provider request") && logged.contains("arcade"),
        "logs were captured: {logged}"
    );
    texts.push(logged);
    for text in &texts {
        assert!(!text.contains(KEY) && !text.contains("CANARY"), "the key leaked: {text}");
    }
    let _ = Value::Null;
}

fn authorize_opts(toolkit: &str, user: &str, tool: Option<&str>) -> AuthorizeOptions {
    AuthorizeOptions {
        toolkit: toolkit.into(),
        connection_id: user.into(),
        tool_name: tool.map(str::to_owned),
        ..Default::default()
    }
}

fn connections_of(toolkit: &str, users: Option<&[&str]>) -> ListConnectionsOptions {
    ListConnectionsOptions {
        toolkit: toolkit.into(),
        user_ids: users.map(|u| u.iter().map(|s| s.to_string()).collect()),
        ..Default::default()
    }
}

fn context_of(resource: &str) -> serde_json::Map<String, Value> {
    json!({"mastra__resourceId": resource}).as_object().unwrap().clone()
}

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

#[tokio::test]
async fn authorize_starts_a_per_tool_flow_for_exactly_the_user_asked() {
    let (fake, arcade) = setup().await;
    let before = fake.seen(|s| s.requests);
    for (options, hint) in [
        (authorize_opts("Github", "alice", None), "tool_name"),
        (
            authorize_opts("Github", "alice", Some("Slack.SendMessage")),
            "not a tool of toolkit",
        ),
        (authorize_opts("Github", "alice", Some("nodot")), "not an Arcade tool name"),
        (authorize_opts("Github", " ", Some("Github.GetRepository")), "connection_id"),
    ] {
        match arcade.authorize(options).await.unwrap_err() {
            ProviderError::Config(m) => assert!(m.contains(hint), "{m}"),
            e => panic!("{e:?}"),
        }
    }
    let e = arcade
        .clone()
        .allowed_toolkits(["Math"])
        .authorize(authorize_opts("Github", "alice", Some("Github.GetRepository")))
        .await
        .unwrap_err();
    assert!(e.to_string().contains("allow-lists"), "{e}");
    assert_eq!(fake.seen(|s| s.requests), before, "refused before any HTTP");

    let alice = arcade
        .authorize(authorize_opts("Github", "alice", Some("Github.GetRepository")))
        .await
        .unwrap();
    assert_eq!(alice.url, "https://github.example/login/oauth/authorize?state=alice");
    assert_eq!(alice.auth_id, "ac_alice");
    let bob = arcade
        .authorize(authorize_opts("github", "bob", Some("Github_GetRepository@1.0.0")))
        .await
        .unwrap();
    assert_eq!(bob.auth_id, "ac_bob");
    assert!(bob.url.ends_with("state=bob") && !bob.url.contains("alice"), "{bob:?}");
    assert_eq!(
        fake.seen(|s| s.authorizations.clone()),
        [
            ("Github.GetRepository".to_owned(), "alice".to_owned()),
            ("Github.GetRepository".to_owned(), "bob".to_owned())
        ]
    );
    assert_eq!(fake.flows()["ac_bob"].user, "bob");

    fake.grant("carol", "Github");
    let done = arcade
        .authorize(authorize_opts("Github", "carol", Some("Github.GetRepository")))
        .await
        .unwrap();
    assert_eq!(done.url, "", "already authorized: nothing to open");
    assert_eq!(arcade.get_auth_status(&done.auth_id).await.unwrap(), AuthStatus::Completed);
    assert_eq!(arcade.get_auth_status(ALREADY_AUTHORIZED_ID).await.unwrap(), AuthStatus::Completed);
}

#[tokio::test]
async fn auth_status_maps_arcade_statuses_and_unknown_flows() {
    let (fake, arcade) = setup().await;
    let a = arcade
        .authorize(authorize_opts("Github", "alice", Some("Github.GetRepository")))
        .await
        .unwrap();
    let b = arcade
        .authorize(authorize_opts("Gmail", "bob", Some("Gmail.ListEmails")))
        .await
        .unwrap();
    assert_eq!(b.auth_id, "ac_gmail_bob");
    assert_eq!(arcade.get_auth_status(&a.auth_id).await.unwrap(), AuthStatus::Pending);
    assert_eq!(
        fake.seen(|s| s.status_polls.clone()),
        [("ac_alice".to_owned(), None)],
        "no wait by default"
    );
    fake.complete(&a.auth_id);
    fake.fail(&b.auth_id);
    assert_eq!(arcade.get_auth_status(&a.auth_id).await.unwrap(), AuthStatus::Completed);
    assert_eq!(arcade.get_auth_status(&b.auth_id).await.unwrap(), AuthStatus::Failed);
    assert_eq!(
        arcade.get_auth_status("ac_nobody").await.unwrap(),
        AuthStatus::Failed,
        "a 404 flow is gone"
    );
    assert!(matches!(arcade.get_auth_status("  ").await, Err(ProviderError::Config(_))));

    let registry = registry_with(&arcade, &["Github.GetRepository"]).await;
    let out = registry
        .call("Github.GetRepository", json!({"owner": "o", "repo": "r"}), ctx("alice"))
        .await
        .unwrap();
    assert_eq!(out.value()["user"], json!("alice"), "a completed flow lets the tool run");
}

#[tokio::test]
async fn the_auth_status_long_poll_answers_on_completion_or_when_the_wait_ends() {
    let (fake, arcade) = setup().await;
    let flow = arcade
        .authorize(authorize_opts("Github", "alice", Some("Github.GetRepository")))
        .await
        .unwrap();
    let polling = arcade.clone().auth_status_wait(Duration::from_secs(45));
    let poll = tokio::spawn(async move { polling.get_auth_status(&flow.auth_id).await });
    // A guard against hanging, not a timing assertion: the poll must reach the fake with a wait.
    tokio::time::timeout(Duration::from_secs(30), fake.pollers_waiting(1))
        .await
        .expect("the status request never long-polled");
    fake.complete("ac_alice");
    assert_eq!(
        poll.await.unwrap().unwrap(),
        AuthStatus::Completed,
        "answered on completion, mid-wait"
    );
    assert_eq!(
        fake.seen(|s| s.status_polls.last().cloned()),
        Some(("ac_alice".to_owned(), Some(45)))
    );

    let bob = arcade
        .authorize(authorize_opts("Github", "bob", Some("Github.GetRepository")))
        .await
        .unwrap();
    let short = arcade
        .clone()
        .timeout(Duration::from_millis(500))
        .auth_status_wait(Duration::from_secs(1));
    assert_eq!(
        short.get_auth_status(&bob.auth_id).await.unwrap(),
        AuthStatus::Pending,
        "the wait ends: still pending (and the request timeout covered the wait)"
    );
    let capped = arcade.clone().auth_status_wait(Duration::from_secs(600));
    assert!(format!("{capped:?}").contains("auth_status_wait_secs: 59"), "{capped:?}");
}

#[tokio::test]
async fn auth_status_failure_paths_are_provider_errors() {
    let (fake, arcade) = setup().await;
    arcade
        .authorize(authorize_opts("Github", "alice", Some("Github.GetRepository")))
        .await
        .unwrap();
    let wrong = ArcadeToolProvider::new("arc_wrong").base_url(&fake.url);
    assert!(matches!(
        wrong.get_auth_status("ac_alice").await,
        Err(ProviderError::Api { status: 401, .. })
    ));
    fake.misbehave(|m| m.rate_limit_once = true);
    assert_eq!(
        arcade.get_auth_status("ac_alice").await.unwrap(),
        AuthStatus::Pending,
        "a 429 is retried"
    );
    fake.misbehave(|m| m.fail_500 = true);
    assert!(matches!(
        arcade.get_auth_status("ac_alice").await,
        Err(ProviderError::Api { status: 500, .. })
    ));
    fake.misbehave(|m| *m = Default::default());
    fake.misbehave(|m| m.malformed = true);
    let e = arcade.get_auth_status("ac_alice").await.unwrap_err();
    assert!(e.to_string().contains("malformed JSON"), "{e}");
    fake.misbehave(|m| *m = Default::default());
    fake.misbehave(|m| m.slow = Some(Duration::from_secs(3)));
    let e = arcade
        .clone()
        .timeout(Duration::from_millis(200))
        .get_auth_status("ac_alice")
        .await
        .unwrap_err();
    assert!(
        matches!(&e, ProviderError::Transport { message, .. } if message.contains("timed out")),
        "{e:?}"
    );
    fake.misbehave(|m| *m = Default::default());
    let e = arcade
        .authorize(authorize_opts("Github", "x", Some("Github.Nope")))
        .await
        .unwrap_err();
    assert!(matches!(e, ProviderError::Api { status: 404, .. }), "{e:?}");
}

/// alice: github active + github expired + google active; bob: github active.
fn seed_connections(fake: &ArcadeFake) -> [String; 4] {
    [
        fake.add_connection("alice", "github", "active"),
        fake.add_connection("alice", "github", "expired"),
        fake.add_connection("alice", "google", "active"),
        fake.add_connection("bob", "github", "active"),
    ]
}

#[tokio::test]
async fn connections_are_listed_per_toolkit_provider_and_user_with_pages() {
    let (fake, arcade) = setup().await;
    let [alice_gh, alice_old, _alice_google, bob_gh] = seed_connections(&fake);
    let alice = arcade.list_connections(connections_of("Github", Some(&["alice"]))).await.unwrap();
    let ids: Vec<_> = alice.items.iter().map(|c| c.connection_id.clone()).collect();
    assert_eq!(ids, [alice_gh.clone(), alice_old.clone()]);
    assert_eq!(alice.items[0].status, ConnectionStatus::Active);
    assert_eq!(alice.items[1].status, ConnectionStatus::Failed, "expired");
    assert!(alice.items.iter().all(|c| c.author_id.as_deref() == Some("alice")));
    assert_eq!(
        (alice.pagination.total, alice.pagination.page, alice.pagination.per_page),
        (Some(2), Some(1), Some(50))
    );
    let query = fake.seen(|s| s.connection_queries.last().cloned().unwrap());
    for pair in [
        ("provider_id", "github"),
        ("provider[id]", "github"),
        ("user_id", "alice"),
        ("user[id]", "alice"),
        ("offset", "0"),
    ] {
        assert!(query.contains(&(pair.0.to_owned(), pair.1.to_owned())), "{query:?}");
    }

    let page2 = arcade
        .list_connections(ListConnectionsOptions {
            page: Some(2),
            per_page: Some(1),
            ..connections_of("Github", Some(&["alice"]))
        })
        .await
        .unwrap();
    assert_eq!(page2.items.iter().map(|c| c.connection_id.clone()).collect::<Vec<_>>(), [alice_old]);
    assert!(!page2.pagination.has_more);
    let both = arcade
        .list_connections(connections_of("github", Some(&["alice", "bob"])))
        .await
        .unwrap();
    assert_eq!(both.items.len(), 3);
    assert!(both.items.iter().any(|c| c.connection_id == bob_gh));

    let queries = fake.seen(|s| s.connection_queries.len());
    let nobody = arcade.list_connections(connections_of("Github", None)).await.unwrap();
    assert!(
        nobody.items.is_empty(),
        "no owners and no configured user: nothing, never every user"
    );
    assert!(
        arcade
            .list_connections(connections_of("Github", Some(&[])))
            .await
            .unwrap()
            .items
            .is_empty()
    );
    for toolkit in ["Math", "Unknown"] {
        assert!(
            arcade
                .list_connections(connections_of(toolkit, Some(&["alice"])))
                .await
                .unwrap()
                .items
                .is_empty()
        );
    }
    assert_eq!(
        fake.seen(|s| s.connection_queries.len()),
        queries,
        "none of those asked Arcade for connections"
    );
    let configured = arcade.clone().user_id("bob");
    let bobs = configured.list_connections(connections_of("Github", None)).await.unwrap();
    assert_eq!(bobs.items.iter().map(|c| c.connection_id.clone()).collect::<Vec<_>>(), [bob_gh]);

    for n in 0..150 {
        fake.add_connection("many", "github", if n % 2 == 0 { "active" } else { "pending" });
    }
    let many = arcade
        .list_connections(ListConnectionsOptions {
            per_page: Some(500),
            ..connections_of("Github", Some(&["many"]))
        })
        .await
        .unwrap();
    assert_eq!((many.items.len(), many.pagination.per_page), (150, Some(200)));
    assert_eq!(many.items[1].status, ConnectionStatus::Pending);
    let offsets: Vec<String> = fake.seen(|s| {
        s.connection_queries
            .iter()
            .filter(|q| q.contains(&("user[id]".to_owned(), "many".to_owned())))
            .filter_map(|q| q.iter().find(|(k, _)| k == "offset").map(|(_, v)| v.clone()))
            .collect()
    });
    assert_eq!(offsets, ["0", "100"], "Arcade's offset pagination followed");
}

#[tokio::test]
async fn connection_status_is_batched_and_revocation_is_idempotent() {
    let (fake, arcade) = setup().await;
    let [alice_gh, alice_old, _, bob_gh] = seed_connections(&fake);
    let asked = |id: &str, toolkit: &str| ConnectionRef {
        connection_id: id.into(),
        toolkit: toolkit.into(),
    };
    arcade.list_connections(connections_of("Github", Some(&["alice"]))).await.unwrap();
    let queries = fake.seen(|s| s.connection_queries.len());
    let status = arcade
        .get_connection_status(vec![
            asked(&alice_gh, "Github"),
            asked(&alice_old, "Github"),
            asked("alice", "Github"),
            asked("nobody", "Github"),
            asked("anything", "Math"),
            asked(&bob_gh, "Nope"),
        ])
        .await
        .unwrap();
    let connected: Vec<(&str, bool)> = status.iter().map(|(k, v)| (k.as_str(), v.connected)).collect();
    let mut expected = vec![
        (alice_gh.as_str(), true),
        (alice_old.as_str(), false),
        ("alice", true),
        ("nobody", false),
        ("anything", true),
        (bob_gh.as_str(), false),
    ];
    expected.sort();
    assert_eq!(connected, expected);
    assert_eq!(
        fake.seen(|s| s.connection_queries.len()) - queries,
        1,
        "one listing for all github items"
    );

    arcade.revoke_connection(&alice_gh).await.unwrap();
    arcade.revoke_connection(&alice_gh).await.unwrap();
    assert_eq!(fake.seen(|s| s.deletions.clone()), [alice_gh.clone(), alice_gh.clone()]);
    assert!(fake.connections().iter().all(|c| c["id"] != json!(alice_gh)));
    assert!(matches!(arcade.revoke_connection(" ").await, Err(ProviderError::Config(_))));
    let status = arcade.get_connection_status(vec![asked(&alice_gh, "Github")]).await.unwrap();
    assert!(!status[&alice_gh].connected);

    fake.misbehave(|m| m.fail_500 = true);
    assert!(matches!(
        arcade.revoke_connection(&bob_gh).await,
        Err(ProviderError::Api { status: 500, .. })
    ));
    fake.misbehave(|m| *m = Default::default());
    assert!(fake.connections().iter().any(|c| c["id"] == json!(bob_gh)));
}

#[tokio::test]
async fn tenants_never_see_or_revoke_each_others_connections() {
    let (fake, arcade) = setup().await;
    let [alice_gh, _, _, bob_gh] = seed_connections(&fake);
    fake.misbehave(|m| m.ignore_user_filter = true);
    let alice = arcade.list_connections(connections_of("Github", Some(&["alice"]))).await.unwrap();
    assert_eq!(alice.items.len(), 2, "even when Arcade ignores the user filter");
    assert!(
        alice
            .items
            .iter()
            .all(|c| c.author_id.as_deref() == Some("alice") && c.connection_id != bob_gh)
    );
    fake.misbehave(|m| *m = Default::default());

    let e = arcade.revoke_user_connection("alice", &bob_gh).await.unwrap_err();
    assert!(
        matches!(&e, ProviderError::Config(m) if m.contains("not one of user `alice`")),
        "{e:?}"
    );
    assert!(fake.seen(|s| s.deletions.is_empty()), "nothing was deleted");
    arcade.revoke_user_connection("alice", &alice_gh).await.unwrap();
    assert_eq!(fake.seen(|s| s.deletions.clone()), [alice_gh]);
    let bob = arcade.list_connections(connections_of("Github", Some(&["bob"]))).await.unwrap();
    assert_eq!(bob.items.iter().map(|c| c.connection_id.clone()).collect::<Vec<_>>(), [bob_gh]);
}

#[tokio::test]
async fn connection_failure_paths_are_provider_errors() {
    let (fake, arcade) = setup().await;
    seed_connections(&fake);
    let list = || arcade.list_connections(connections_of("Github", Some(&["alice"])));
    assert_eq!(list().await.unwrap().items.len(), 2, "warms the toolkit → provider cache");
    let wrong = ArcadeToolProvider::new("arc_wrong").base_url(&fake.url);
    assert!(matches!(
        wrong.list_connections(connections_of("Github", Some(&["alice"]))).await,
        Err(ProviderError::Api { status: 401, .. })
    ));
    assert!(matches!(
        wrong.revoke_connection("uc_0001").await,
        Err(ProviderError::Api { status: 401, .. })
    ));
    fake.misbehave(|m| m.rate_limit_once = true);
    assert_eq!(list().await.unwrap().items.len(), 2, "a 429 is retried");
    fake.misbehave(|m| m.fail_500 = true);
    assert!(matches!(list().await, Err(ProviderError::Api { status: 500, .. })));
    fake.misbehave(|m| *m = Default::default());
    fake.misbehave(|m| m.malformed = true);
    assert!(list().await.unwrap_err().to_string().contains("malformed JSON"));
    fake.misbehave(|m| *m = Default::default());
    fake.misbehave(|m| m.slow = Some(Duration::from_secs(3)));
    let e = arcade
        .clone()
        .timeout(Duration::from_millis(200))
        .get_connection_status(vec![ConnectionRef {
            connection_id: "alice".into(),
            toolkit: "Github".into(),
        }])
        .await
        .unwrap_err();
    assert!(
        matches!(&e, ProviderError::Transport { message, .. } if message.contains("timed out")),
        "{e:?}"
    );
}

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
