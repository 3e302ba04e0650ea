//! Per-tool authorization flows and their status: Arcade's statuses mapped, the long poll, and
//! the failure paths.

use super::*;

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
