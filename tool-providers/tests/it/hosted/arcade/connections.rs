//! Connections: listed per toolkit, provider and user with pages, their status batched,
//! revocation idempotent, tenants kept apart, and the failure paths.

use super::*;

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
