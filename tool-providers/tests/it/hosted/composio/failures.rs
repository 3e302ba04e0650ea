//! Failure paths and secrets: HTTP failures are provider errors, and the API key never appears
//! in debug output, errors or logs.

use super::*;

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
