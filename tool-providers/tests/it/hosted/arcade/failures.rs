//! Failure paths and secrets: health, unauthorized keys, rate limits, an unreachable platform,
//! slow, malformed, endless and oversized answers, and the API key kept out of debug output,
//! errors and logs.

use super::*;

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
