//! What only the PostgreSQL store has: versioned migrations, instances whose lease lapses, many
//! instances approving one call at once, the command line across processes, tags over SQL edits.
//! Each test has a schema of its own and drops it at its end.

use std::future::Future;
use std::pin::Pin;
use std::sync::Arc;
use std::time::Duration;

use tool_core::prelude::*;
use tool_core::runtime::backend::{CallState, PendingStore, StoredCall};
use tool_core::runtime::{Outcome, PostgresOptions, PostgresStore, ResumeOptions, Runtime, StoreError};

use super::{KEY, call, child_cli, options, pg};

type Test = fn(String) -> Pin<Box<dyn Future<Output = Result<(), String>> + Send>>;

/// The PostgreSQL-only tests.
pub const TESTS: &[(&str, Test)] = &[
    ("migrations_apply_once_and_a_newer_schema_is_refused", |url| {
        Box::pin(migrations(url))
    }),
    ("a_dead_instances_call_is_interrupted_and_taken_again_only_on_purpose", |url| {
        Box::pin(dead_instance(url))
    }),
    ("fifty_concurrent_approvals_run_the_tool_once", |url| Box::pin(fifty_approvals(url))),
    ("the_command_line_starts_lists_and_approves_across_processes", |url| {
        Box::pin(across_processes(url))
    }),
    ("rows_edited_in_the_database_are_damaged_and_never_run", |url| {
        Box::pin(damaged_rows(url))
    }),
];

/// Records one run of a call in a table (a person approves every call)
#[tool(id = "pg-effect", require_approval)]
async fn pg_effect(
    /// The database
    url: String,
    /// The table (`schema.effects`)
    table: String,
    /// What ran
    call: String,
) -> Result<String, ToolError> {
    let client = pg::connect(&url).await.map_err(ToolError::new)?;
    let insert = format!("INSERT INTO {table} (call) VALUES ($1)");
    client.execute(&insert, &[&call]).await.map_err(|e| ToolError::new(e.to_string()))?;
    Ok("recorded".into())
}

/// A schema with an `effects` table.
async fn with_effects(url: &str) -> Result<(String, tokio_postgres::Client), String> {
    let schema = pg::fresh_schema(url).await?;
    let client = pg::connect(url).await?;
    client
        .batch_execute(&format!("CREATE TABLE {schema}.effects (call TEXT NOT NULL)"))
        .await
        .map_err(|e| e.to_string())?;
    Ok((schema, client))
}

async fn effects(client: &tokio_postgres::Client, schema: &str) -> i64 {
    let row = client
        .query_one(&format!("SELECT count(*) FROM {schema}.effects"), &[])
        .await
        .unwrap();
    row.get(0)
}

async fn migrations(url: String) -> Result<(), String> {
    let schema = pg::fresh_schema(&url).await?;
    let opts = options(&schema);
    let first = PostgresStore::migrate(&url, &opts).await.unwrap();
    assert!(first.from == 0 && first.to >= 1, "{first:?}");
    let again = PostgresStore::migrate(&url, &opts).await.unwrap();
    assert_eq!((again.from, again.to), (first.to, first.to), "a re-run is a no-op");
    let client = pg::connect(&url).await?;
    let versions = client
        .query(&format!("SELECT version FROM {schema}.toolsmith_schema ORDER BY version"), &[])
        .await
        .unwrap();
    assert_eq!(versions.len(), usize::try_from(first.to).unwrap(), "each migration recorded once");
    let store = PostgresStore::connect_with(&url, opts.clone().migrate(false)).await.unwrap();
    store.save(&call("kept", 1)).await.unwrap();
    drop(store);
    let newer = first.to + 1;
    client
        .execute(&format!("INSERT INTO {schema}.toolsmith_schema (version) VALUES ($1)"), &[&newer])
        .await
        .unwrap();
    for refused in [
        PostgresStore::connect_with(&url, opts.clone()).await.map(drop),
        PostgresStore::migrate(&url, &opts).await.map(drop),
    ] {
        let message = refused.unwrap_err().to_string();
        assert!(
            message.contains(&format!("version {newer}")) && message.contains("newer than this build"),
            "{message}"
        );
    }
    let rows: i64 = client
        .query_one(&format!("SELECT count(*) FROM {schema}.toolsmith_pending"), &[])
        .await
        .unwrap()
        .get(0);
    assert_eq!(rows, 1, "a refused database is not written to");
    let fresh = pg::fresh_schema(&url).await?;
    let unmigrated = PostgresStore::connect_with(&url, options(&fresh).migrate(false))
        .await
        .unwrap_err()
        .to_string();
    assert!(unmigrated.contains("toolsmith store migrate"), "{unmigrated}");
    pg::drop_schema(&url, &fresh).await;
    pg::drop_schema(&url, &schema).await;
    Ok(())
}

async fn state_of(store: &dyn PendingStore, id: &str) -> Option<CallState> {
    let entries = store.entries().await.unwrap();
    entries.into_iter().find_map(|e| match e {
        StoredCall::Call { call, state } if call.tool_call_id == id => Some(state),
        _ => None,
    })
}

async fn dead_instance(url: String) -> Result<(), String> {
    let schema = pg::fresh_schema(&url).await?;
    let dying = PostgresStore::connect_with(&url, options(&schema).lease(Duration::from_secs(1)))
        .await
        .unwrap();
    let other = PostgresStore::connect_with(&url, options(&schema)).await.unwrap();
    assert_ne!(dying.instance_id(), other.instance_id());
    dying.save(&call("x", 1)).await.unwrap();
    assert!(dying.claim("x").await.unwrap().is_some());
    assert!(
        matches!(other.claim("x").await, Err(StoreError::Busy(_))),
        "a live instance holds it"
    );
    drop(dying); // its lease is no longer renewed, as when its process is killed
    let deadline = std::time::Instant::now() + Duration::from_secs(20);
    while !matches!(state_of(&other, "x").await, Some(CallState::Interrupted(_))) {
        assert!(std::time::Instant::now() < deadline, "the call never showed as interrupted");
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    let Err(StoreError::Interrupted(what)) = other.claim("x").await else {
        panic!("not interrupted")
    };
    assert_eq!((what.tool_call_id.as_str(), what.tool_name.as_str()), ("x", "suite-approve"));
    assert!(what.to_string().contains("--rerun"), "{what}");
    assert!(
        matches!(state_of(&other, "x").await, Some(CallState::Interrupted(_))),
        "refusing leaves it interrupted"
    );
    assert_eq!(
        other.claim_again("x").await.unwrap(),
        Some(call("x", 1)),
        "an explicit rerun takes it"
    );
    assert!(
        matches!(state_of(&other, "x").await, Some(CallState::Running(_))),
        "now held by the live instance"
    );
    drop(other);
    pg::drop_schema(&url, &schema).await;
    Ok(())
}

async fn fifty_approvals(url: String) -> Result<(), String> {
    const APPROVERS: usize = 50;
    let (schema, client) = with_effects(&url).await?;
    let starter = Runtime::builder(Registry::global())
        .store(PostgresStore::connect_with(&url, options(&schema)).await.unwrap())
        .build();
    let args = json!({"url": url, "table": format!("{schema}.effects"), "call": "fifty"});
    let run = starter.call("pg-effect", args, CallOptions::default()).finish().await;
    let Outcome::AwaitingApproval(waiting) = run.outcome else {
        panic!("{:?}", run.outcome)
    };
    // Fifty instances: a runtime and a pool (one connection) each, on the same database.
    let stores = (0..APPROVERS).map(|_| PostgresStore::connect_with(&url, options(&schema).max_connections(1)));
    let stores = futures::future::join_all(stores).await;
    let barrier = Arc::new(tokio::sync::Barrier::new(APPROVERS));
    let approvals = stores.into_iter().map(|store| {
        let runtime = Runtime::builder(Registry::global()).store(store.unwrap()).build();
        let (barrier, id) = (barrier.clone(), waiting.id().to_owned());
        tokio::spawn(async move {
            barrier.wait().await;
            match runtime.approve(&id, ResumeOptions::default()).await {
                Ok(stream) => Ok(stream.finish().await.outcome),
                Err(e) => Err(e.to_string()),
            }
        })
    });
    let outcomes: Vec<_> = futures::future::join_all(approvals).await.into_iter().map(Result::unwrap).collect();
    let done = outcomes.iter().filter(|o| matches!(o, Ok(Outcome::Done(_)))).count();
    assert_eq!(done, 1, "exactly one approval ran the call: {outcomes:?}");
    let refused = outcomes.iter().filter(|o| {
        o.as_ref()
            .is_err_and(|e| e.contains("already being continued") || e.contains("no pending call"))
    });
    assert_eq!(refused.count(), APPROVERS - 1, "{outcomes:?}");
    assert_eq!(effects(&client, &schema).await, 1, "the tool ran once");
    assert!(starter.pending().await.unwrap().is_empty());
    pg::drop_schema(&url, &schema).await;
    Ok(())
}

/// `toolsmith ARGS` in a child process sharing the test's store key.
pub(super) fn toolsmith(args: &[&str]) -> child_cli::Ran {
    let mut command = child_cli::toolsmith(args);
    command.env(tool_core::runtime::STORE_KEY_ENV, std::str::from_utf8(KEY).unwrap());
    command.output().expect("the child runs").into()
}

async fn across_processes(url: String) -> Result<(), String> {
    let (schema, client) = with_effects(&url).await?;
    let store = pg::url_in_schema(&url, &schema);
    let args = json!({"url": url, "table": format!("{schema}.effects"), "call": "cli"}).to_string();
    let started = tokio::task::spawn_blocking({
        let (store, args) = (store.clone(), args.clone());
        move || {
            [
                toolsmith(&["call", "pg-effect", &args, "--store", &store]),
                toolsmith(&["call", "pg-effect", &args, "--store", &store]),
            ]
        }
    });
    let started = started.await.unwrap();
    let mut ids = Vec::new();
    for ran in &started {
        assert!(ran.ok, "{}", ran.stderr);
        let text = format!("{}{}", ran.stdout, ran.stderr);
        let id = text
            .split("toolsmith call ")
            .nth(1)
            .and_then(|t| t.split(' ').next())
            .unwrap_or_default();
        assert!(id.starts_with("call_"), "no waiting call id in: {text}");
        ids.push(id.to_owned());
    }
    let (approved, declined) = (ids[0].clone(), ids[1].clone());
    let listed = tokio::task::spawn_blocking({
        let store = store.clone();
        move || {
            let listed = toolsmith(&["pending", "--store", &store]);
            let status = toolsmith(&["store", "status", "--json", "--store", &store]);
            let approve = toolsmith(&["call", &approved, "--approve", "--store", &store]);
            let decline = toolsmith(&["call", &declined, "--decline", "no", "--store", &store]);
            let again = toolsmith(&["call", &approved, "--approve", "--store", &store]);
            let after = toolsmith(&["pending", "--json", "--store", &store]);
            [listed, status, approve, decline, again, after]
        }
    });
    let [listed, status, approve, decline, again, after] = listed.await.unwrap();
    assert!(listed.ok, "{}", listed.stderr);
    for id in &ids {
        assert!(
            listed.stdout.contains(id.as_str()) && listed.stdout.contains("waiting"),
            "{id}: {}",
            listed.stdout
        );
    }
    assert!(status.ok, "{}", status.stderr);
    let status: Value = serde_json::from_str(&status.stdout).map_err(|e| format!("{e}: {}", status.stdout))?;
    assert_eq!(status["waiting"], 2, "{status}");
    assert!(
        approve.ok && approve.stdout.contains("recorded"),
        "{}{}",
        approve.stdout,
        approve.stderr
    );
    assert!(decline.ok, "{}", decline.stderr);
    assert!(
        !again.ok && again.stderr.contains("no pending call"),
        "a stale id is refused: {}",
        again.stderr
    );
    assert!(after.ok, "{}", after.stderr);
    assert_eq!(serde_json::from_str::<Value>(&after.stdout).map_err(|e| e.to_string())?, json!([]));
    assert_eq!(
        effects(&client, &schema).await,
        1,
        "the approved call ran once, the declined one never"
    );
    pg::drop_schema(&url, &schema).await;
    Ok(())
}

async fn damaged_rows(url: String) -> Result<(), String> {
    let schema = pg::fresh_schema(&url).await?;
    let store = PostgresStore::connect_with(&url, options(&schema)).await.unwrap();
    let client = pg::connect(&url).await?;
    let edit = |sql: String| {
        let client = &client;
        async move { assert_eq!(client.execute(&sql, &[]).await.unwrap(), 1, "{sql}") }
    };
    for id in ["json", "args", "state", "owner", "ok"] {
        store.save(&call(id, 1)).await.unwrap();
    }
    let table = format!("{schema}.toolsmith_pending");
    edit(format!(
        "UPDATE {table} SET call_json = '{{\"tool_call_id\": \"sk-1' WHERE tool_call_id = 'json'"
    ))
    .await;
    let other_args = serde_json::to_string(&json!({"tool_call_id": "args", "tool_name": "suite-approve", "kind": "approval",
        "args": {"ledger": "wipe"}, "created_at_ms": 1}))
    .unwrap();
    edit(format!("UPDATE {table} SET call_json = '{other_args}' WHERE tool_call_id = 'args'")).await;
    edit(format!("UPDATE {table} SET state = 'running' WHERE tool_call_id = 'state'")).await;
    edit(format!("UPDATE {table} SET owner_pid = 1 WHERE tool_call_id = 'owner'")).await;
    for id in ["json", "args", "state", "owner"] {
        for refused in [
            store.claim(id).await.map(drop),
            store.claim_again(id).await.map(drop),
            store.get(id).await.map(drop),
        ] {
            let err = refused.unwrap_err();
            assert!(matches!(err, StoreError::Damaged { .. }), "{id}: {err}");
            assert!(!err.to_string().contains("sk-1"), "{err}");
        }
    }
    let entries = store.entries().await.unwrap();
    let damaged = entries.iter().filter(|e| matches!(e, StoredCall::Damaged { .. })).count();
    assert_eq!(damaged, 4, "{entries:?}");
    assert_eq!(super::ids(&store.list().await.unwrap()), ["ok"]);
    let rekeyed = PostgresStore::connect_with(&url, options(&schema).key(b"another key"))
        .await
        .unwrap();
    assert!(
        matches!(rekeyed.claim("ok").await, Err(StoreError::Damaged { .. })),
        "another key's tags are refused"
    );
    assert!(store.claim("ok").await.unwrap().is_some());
    pg::drop_schema(&url, &schema).await;
    Ok(())
}

/// Needs no database: a store that cannot be reached says so.
pub async fn an_unreachable_database_is_a_clear_error() -> Result<(), String> {
    let options = PostgresOptions::default().key(KEY);
    let err = PostgresStore::connect_with("postgres://postgres:hunter2@127.0.0.1:1/test", options)
        .await
        .unwrap_err();
    let message = err.to_string();
    assert!(message.contains("cannot reach PostgreSQL"), "{message}");
    assert!(!message.contains("hunter2"), "{message}");
    let no_key = PostgresStore::connect("postgres://127.0.0.1:1/test").await.map(drop);
    if std::env::var_os(tool_core::runtime::STORE_KEY_ENV).is_none() {
        assert!(no_key.unwrap_err().to_string().contains("TOOLSMITH_STORE_KEY"));
    }
    Ok(())
}
