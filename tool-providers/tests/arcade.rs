//! The Arcade provider through real HTTP against the local fake: every method, every name
//! form, every failure path, tenant isolation and secret redaction.

mod support {
    pub mod arcade_fake;
}

use std::io::Write;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use serde_json::{json, Value};
use support::arcade_fake::ArcadeFake;
use tool_core::provider::{ListToolsOptions, ProviderError, ResolveOptions, Scope, ToolProvider};
use tool_core::{CallOptions, ErrorKind, Registry};
use tool_providers::ArcadeToolProvider;

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
    assert!(arcade
        .resolve_tools(vec!["Slack.SendMessage".into()], ResolveOptions::default())
        .await
        .unwrap()
        .is_empty());
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
        assert_eq!(tool.spec().output_schema, Some(json!({"type": "integer"})));
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

#[derive(Clone, Default)]
struct Captured(Arc<Mutex<Vec<u8>>>);

impl Write for Captured {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        self.0.lock().unwrap().extend_from_slice(buf);
        Ok(buf.len())
    }
    fn flush(&mut self) -> std::io::Result<()> {
        Ok(())
    }
}

#[tokio::test]
async fn the_api_key_never_appears_in_debug_errors_or_logs() {
    let logs = Captured::default();
    let writer = logs.clone();
    let subscriber = tracing_subscriber::fmt()
        .with_max_level(tracing::Level::TRACE)
        .with_writer(move || writer.clone())
        .finish();
    let _guard = tracing::subscriber::set_default(subscriber);

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
    let unreachable = ArcadeToolProvider::new(KEY)
        .base_url("http://127.0.0.1:1")
        .timeout(Duration::from_millis(500));
    let e = unreachable.list_tools(ListToolsOptions::default()).await.unwrap_err();
    texts.push(format!("{e} {e:?}"));
    texts.push(format!("{:?}", unreachable.get_health().await.unwrap()));

    let logged = String::from_utf8(logs.0.lock().unwrap().clone()).unwrap();
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

/// Serves the fake for the official-SDK contract check (`arcadepy` pointed at it): writes the
/// URL to `$ARCADE_FAKE_URL_FILE` and serves for `$ARCADE_FAKE_SECS` seconds (default 60).
#[tokio::test]
#[ignore = "serves the fake for an SDK contract run; start it explicitly"]
async fn serve_the_fake_for_sdk_contract_runs() {
    let fake = ArcadeFake::start(KEY).await;
    fake.grant("sdk-user", "Github");
    if let Ok(path) = std::env::var("ARCADE_FAKE_URL_FILE") {
        std::fs::write(path, &fake.url).unwrap();
    }
    let secs = std::env::var("ARCADE_FAKE_SECS").ok().and_then(|s| s.parse().ok()).unwrap_or(60);
    tokio::time::sleep(Duration::from_secs(secs)).await;
}
