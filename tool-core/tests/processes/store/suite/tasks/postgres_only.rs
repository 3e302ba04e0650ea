//! The PostgreSQL-only tests: a real `toolsmith serve` killed with SIGKILL mid-task, its task
//! taken over by another process and completed exactly once; and a task row edited in the
//! database, never run.

use super::*;

pub(super) async fn edited_row(url: String) -> Result<(), String> {
    let schema = pg::fresh_schema(&url).await?;
    let store = PostgresStore::connect_with(&url, options(&schema)).await.unwrap();
    store.enqueue_task(&task("edited", 1, 3)).await.unwrap();
    store.enqueue_task(&task("intact", 2, 0)).await.unwrap();
    let client = pg::connect(&url).await?;
    let edit =
        format!("UPDATE {schema}.toolsmith_tasks SET task_json = replace(task_json, 'suite-bg', 'wipe-disk') WHERE task_id = 'edited'");
    assert_eq!(client.execute(&edit, &[]).await.unwrap(), 1);
    let claimed = store.claim_task("w", LONG).await.unwrap().unwrap();
    assert_eq!(claimed.task.task_id, "intact", "the edited task is skipped, never handed out");
    let Err(damaged) = store.get_task("edited").await else {
        panic!("an edited row is refused")
    };
    assert!(damaged.to_string().contains("integrity tag"), "{damaged}");
    let state: String = client
        .query_one(&format!("SELECT state FROM {schema}.toolsmith_tasks WHERE task_id = 'edited'"), &[])
        .await
        .unwrap()
        .get(0);
    assert_eq!(state, "failed", "ended, not retried");
    assert!(
        !store.list_tasks(None, 10).await.unwrap().iter().any(|t| t.task.task_id == "edited"),
        "listings skip it"
    );
    pg::drop_schema(&url, &schema).await;
    Ok(())
}

/// Records when a background task starts and ends in a table, holding in between
#[tool(id = "suite-task-effect", background(enabled = true))]
async fn suite_task_effect(
    /// The database
    url: String,
    /// The table (`schema.task_effects`)
    table: String,
    /// How long to hold between start and end, in milliseconds
    hold_ms: u64,
) -> Result<String, ToolError> {
    let client = pg::connect(&url).await.map_err(ToolError::new)?;
    let insert = format!("INSERT INTO {table} (what, pid) VALUES ($1, $2)");
    let pid = i64::from(std::process::id());
    client
        .execute(&insert, &[&"started", &pid])
        .await
        .map_err(|e| ToolError::new(e.to_string()))?;
    tokio::time::sleep(Duration::from_millis(hold_ms)).await;
    client
        .execute(&insert, &[&"done", &pid])
        .await
        .map_err(|e| ToolError::new(e.to_string()))?;
    Ok("done".into())
}

/// `toolsmith serve --http` on the test's schema, holding task leases of one second and an
/// instance lease of two (a killed instance's task is taken over once both ran out).
fn instance(store: &str) -> std::process::Child {
    let mut command = child_cli::toolsmith(&[
        "serve",
        "--http",
        "127.0.0.1:0",
        "--stateless",
        "--store",
        store,
        "--task-lease",
        "1",
        "--instance-lease",
        "2",
    ]);
    command.env(tool_core::runtime::STORE_KEY_ENV, std::str::from_utf8(KEY).unwrap());
    command.stdout(std::process::Stdio::null()).stderr(std::process::Stdio::null());
    command.spawn().expect("the instance starts")
}

/// The `(what, pid)` rows of the effects table.
async fn effects(client: &tokio_postgres::Client, table: &str) -> Vec<(String, i64)> {
    let rows = client.query(&format!("SELECT what, pid FROM {table}"), &[]).await.unwrap();
    let mut rows: Vec<(String, i64)> = rows.iter().map(|r| (r.get(0), r.get(1))).collect();
    rows.sort();
    rows
}

pub(super) async fn killed_instance(url: String) -> Result<(), String> {
    let schema = pg::fresh_schema(&url).await?;
    let client = pg::connect(&url).await?;
    let table = format!("{schema}.task_effects");
    client
        .batch_execute(&format!("CREATE TABLE {table} (what TEXT NOT NULL, pid BIGINT NOT NULL)"))
        .await
        .map_err(|e| e.to_string())?;
    let store = PostgresStore::connect_with(&url, options(&schema)).await.unwrap();
    let args = json!({"url": url, "table": table, "hold_ms": 4000});
    let queued: NewTask = serde_json::from_value(json!({"task_id": "task_killed", "tool_name": "suite-task-effect",
        "args": args, "max_retries": 2, "created_at_ms": 1}))
    .unwrap();
    store.enqueue_task(&queued).await.unwrap();
    let location = pg::url_in_schema(&url, &schema);
    let mut a = instance(&location);
    let deadline = Instant::now() + Duration::from_secs(60);
    let a_pid = i64::from(a.id());
    while !effects(&client, &table).await.contains(&("started".into(), a_pid)) {
        assert!(Instant::now() < deadline, "instance A never started the task");
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    let mut b = instance(&location);
    a.kill().unwrap(); // SIGKILL: no cleanup, its lease simply stops being renewed
    a.wait().unwrap();
    let done = loop {
        let record = store.get_task("task_killed").await.unwrap().unwrap();
        if record.state.is_final() {
            break record;
        }
        assert!(Instant::now() < deadline, "the task was never completed: {record:?}");
        tokio::time::sleep(Duration::from_millis(100)).await;
    };
    let b_pid = i64::from(b.id());
    b.kill().unwrap();
    b.wait().unwrap();
    assert_eq!(done.state, TaskState::Completed, "{done:?}");
    assert_eq!(done.attempts, 2, "A's attempt, then B's takeover");
    assert_eq!(done.output.map(|o| o.value()), Some(json!("done")));
    // A lease's owner names its instance (`INSTANCE/random`): B's.
    let b_instance: String = client
        .query_one(&format!("SELECT id FROM {schema}.toolsmith_instances WHERE pid = $1"), &[&b_pid])
        .await
        .map_err(|e| e.to_string())?
        .get(0);
    assert!(
        done.lease_owner
            .as_deref()
            .is_some_and(|o| o.starts_with(&format!("{b_instance}/"))),
        "{:?}",
        done.lease_owner
    );
    let rows = effects(&client, &table).await;
    let mut expected = vec![
        ("done".to_owned(), b_pid),
        ("started".to_owned(), a_pid),
        ("started".to_owned(), b_pid),
    ];
    expected.sort();
    assert_eq!(rows, expected, "started on A, taken over and completed once on B");
    let read = tokio::task::spawn_blocking(move || {
        let cli = |args: &[&str]| {
            let mut command = child_cli::toolsmith(args);
            command.env(tool_core::runtime::STORE_KEY_ENV, std::str::from_utf8(KEY).unwrap());
            child_cli::Ran::from(command.output().expect("the child runs"))
        };
        let get = cli(&["tasks", "get", "task_killed", "--json", "--store", &location]);
        let list = cli(&["tasks", "list", "--store", &location]);
        let status = cli(&["store", "status", "--json", "--store", &location]);
        let unknown = cli(&["tasks", "get", "task_never", "--store", &location]);
        [get, list, status, unknown]
    });
    let [get, list, status, unknown] = read.await.unwrap();
    assert!(get.ok, "{}", get.stderr);
    let got: Value = serde_json::from_str(&get.stdout).map_err(|e| format!("{e}: {}", get.stdout))?;
    assert_eq!(
        (&got["state"], &got["attempts"], &got["output"]["result"]),
        (&json!("completed"), &json!(2), &json!("done")),
        "{got}"
    );
    assert!(
        list.ok && list.stdout.contains("task_killed") && list.stdout.contains("completed"),
        "{}{}",
        list.stdout,
        list.stderr
    );
    assert!(status.ok, "{}", status.stderr);
    let status: Value = serde_json::from_str(&status.stdout).map_err(|e| format!("{e}: {}", status.stdout))?;
    assert_eq!(
        status["tasks"],
        json!({"queued": 0, "running": 0, "completed": 1, "failed": 0, "cancelled": 0}),
        "{status}"
    );
    assert!(
        !unknown.ok && unknown.stderr.contains("no background task has the id `task_never`"),
        "{}",
        unknown.stderr
    );
    pg::drop_schema(&url, &schema).await;
    Ok(())
}
