//! Exactly-once side effects under SIGKILL, against a real SQLite file and a real PostgreSQL.
//!
//! Each iteration starts this test binary as a child process (the `CHAOS_CHILD` mode of
//! `main`) that calls a tool declared `idempotent` through a `Runtime` over the store. The tool
//! appends its idempotency key to an effects file (its side effect, synced) and then hangs; the
//! parent SIGKILLs the child as soon as the line is there: the tool ran, its result was not
//! stored. A second child runs the same call again (same call id, so the same key) and must end
//! with a result; a third answers from the receipt. At the end every key has exactly one line:
//! at most one side effect per key, and every call ended with a result.
//!
//! The receipt store's own contract (claim, busy, mismatch, interrupt, take over, damaged
//! rows), the key never being printed or stored, and the recorded result being tagged like the
//! other rows are checked here too, on both databases.

use crate::support::child_cli;
use crate::support::postgres as pg;

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use tool_core::idempotency::key_digest;
use tool_core::prelude::*;
use tool_core::runtime::backend::{Began, MemoryReceipts, PendingStore, ReceiptClaim, ReceiptState, ReceiptStore};
use tool_core::runtime::{Outcome, PostgresOptions, PostgresStore, Runtime, SqliteStore};

const CHILD_ENV: &str = "CHAOS_CHILD";
const HANG_ENV: &str = "CHAOS_HANG";
const KEY: &[u8] = b"chaos-test-store-key";
/// What every result carries: it must never reach a log line.
const CANARY: &str = "canary-5f1d-receipt-secret";

/// Sends one message per call: appends the call's idempotency key to `effects`. After an
/// interruption it first looks its key up in the file (the effect may have happened).
#[tool(id = "chaos-send", idempotent = "recover")]
async fn chaos_send(
    /// The file that counts effects, one key per line
    effects: String,
    #[ctx] cx: ToolContext,
) -> Result<String, ToolError> {
    let key = cx.idempotency_key().clone();
    let already = std::fs::read_to_string(&effects).unwrap_or_default();
    if !(key.after_interruption() && already.lines().any(|l| l == key.as_str())) {
        append(&effects, key.as_str())?;
    }
    hang_if_asked().await;
    Ok(format!("sent once ({CANARY})"))
}

/// The same effect, declared `idempotent` without recovery: an interrupted run is an error.
#[tool(id = "chaos-strict", idempotent)]
async fn chaos_strict(
    /// The file that counts effects, one key per line
    effects: String,
    #[ctx] cx: ToolContext,
) -> Result<String, ToolError> {
    append(&effects, cx.idempotency_key().as_str())?;
    hang_if_asked().await;
    Ok("sent".into())
}

/// Returns a secret the transcript must not keep, once per call.
#[tool(id = "chaos-secret", idempotent, transform(transcript(output = hide_secret)))]
async fn chaos_secret(
    /// The file that counts effects, one key per line
    effects: String,
    #[ctx] cx: ToolContext,
) -> Result<String, ToolError> {
    append(&effects, cx.idempotency_key().as_str())?;
    Ok(format!("the code is {CANARY}"))
}

fn hide_secret(_: &String) -> Value {
    json!("[hidden]")
}

fn append(path: &str, line: &str) -> Result<(), ToolError> {
    use std::io::Write;
    let mut file = std::fs::OpenOptions::new()
        .create(true)
        .append(true)
        .open(path)
        .map_err(|e| ToolError::new(e.to_string()))?;
    file.write_all(format!("{line}\n").as_bytes())
        .and_then(|()| file.sync_all())
        .map_err(|e| ToolError::new(e.to_string()))
}

async fn hang_if_asked() {
    if std::env::var(HANG_ENV).is_ok_and(|v| v == "1") {
        // The parent kills the process here: after the effect, before the result is stored.
        std::future::pending::<()>().await;
    }
}

/// Where a child's store is.
#[derive(Debug, Clone, Serialize, Deserialize)]
enum Store {
    Sqlite(PathBuf),
    Postgres { url: String, schema: String },
}

impl Store {
    async fn open(&self) -> std::sync::Arc<dyn PendingStore> {
        match self {
            Store::Sqlite(path) => std::sync::Arc::new(SqliteStore::open_with_key(path, KEY).unwrap()),
            Store::Postgres { url, schema } => {
                let options = PostgresOptions::default()
                    .schema(schema)
                    .unwrap()
                    .key(KEY)
                    .lease(Duration::from_millis(300));
                std::sync::Arc::new(PostgresStore::connect_with(url, options).await.unwrap())
            }
        }
    }
}

/// What a child is asked to do.
#[derive(Debug, Clone, Serialize, Deserialize)]
struct Job {
    store: Store,
    tool: String,
    id: String,
    effects: PathBuf,
}

/// The child: one call through a runtime over the store; prints how it ended as one JSON line.
pub fn child() -> bool {
    let Ok(job) = std::env::var(CHILD_ENV) else { return false };
    let job: Job = serde_json::from_str(&job).unwrap();
    tracing_subscriber::fmt()
        .with_writer(std::io::stderr)
        .with_max_level(tracing_subscriber::filter::LevelFilter::DEBUG)
        .init();
    let rt = tokio::runtime::Runtime::new().unwrap();
    let line = rt.block_on(async {
        let runtime = Runtime::builder(Registry::global()).shared_store(job.store.open().await).build();
        let args = json!({"effects": job.effects});
        let run = runtime.call(&job.tool, args, CallOptions::default().id(&job.id)).finish().await;
        match run.outcome {
            Outcome::Done(output) => json!({"done": output.value()}),
            Outcome::Failed(e) => json!({"failed": e.message()}),
            other => json!({"other": format!("{other:?}")}),
        }
    });
    println!("{line}");
    true
}

fn spawn(job: &Job, hang: bool) -> std::process::Child {
    Command::new(std::env::current_exe().unwrap())
        .env(CHILD_ENV, serde_json::to_string(job).unwrap())
        .env(HANG_ENV, if hang { "1" } else { "0" })
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap()
}

fn lines(path: &Path) -> Vec<String> {
    std::fs::read_to_string(path).map_or_else(|_| Vec::new(), |s| s.lines().map(str::to_owned).collect())
}

/// Runs the job in a child that is SIGKILLed right after its effect.
fn kill_after_effect(job: &Job) {
    let before = lines(&job.effects).len();
    let mut child = spawn(job, true);
    let started = Instant::now();
    while lines(&job.effects).len() == before {
        if let Some(status) = child.try_wait().unwrap() {
            let out = child.wait_with_output().unwrap();
            panic!(
                "the child ended ({status}) before its effect: {}",
                String::from_utf8_lossy(&out.stderr)
            );
        }
        assert!(started.elapsed() < Duration::from_secs(30), "the tool did not run within 30 s");
        std::thread::sleep(Duration::from_millis(1));
    }
    child.kill().unwrap(); // SIGKILL
    child.wait().unwrap();
}

/// Runs the job to its end; how it ended and what it logged.
fn run_to_end(job: &Job) -> (Value, String) {
    let out = spawn(job, false).wait_with_output().unwrap();
    let stdout = String::from_utf8_lossy(&out.stdout);
    let stderr = String::from_utf8_lossy(&out.stderr).into_owned();
    assert!(out.status.success(), "{stderr}");
    let last = stdout.lines().last().unwrap_or_default();
    (serde_json::from_str(last).unwrap_or_else(|_| panic!("{stdout} / {stderr}")), stderr)
}

/// The chaos loop over one store: `n` calls, each killed between its effect and its receipt,
/// then run again to a result, every fifth a third time from the receipt.
fn chaos(store: Store, dir: &Path, n: usize) {
    let effects = dir.join("effects");
    let mut keys_seen = BTreeMap::new();
    for i in 0..n {
        let job = Job {
            store: store.clone(),
            tool: "chaos-send".into(),
            id: format!("call_chaos_{i}"),
            effects: effects.clone(),
        };
        kill_after_effect(&job);
        let (ended, logs) = run_to_end(&job);
        assert_eq!(
            ended["done"],
            json!(format!("sent once ({CANARY})")),
            "call {i} ended with a result: {ended}"
        );
        let key = lines(&effects).last().cloned().unwrap();
        assert!(
            !logs.contains(&key) && !logs.contains(CANARY),
            "a log line shows the key or the result: {logs}"
        );
        if i % 5 == 0 {
            let before = lines(&effects).len();
            let (again, _) = run_to_end(&job);
            assert_eq!(again, ended, "the receipt answers");
            assert_eq!(lines(&effects).len(), before, "the body did not run again");
        }
        keys_seen.insert(job.id, key);
    }
    let effects = lines(&effects);
    assert_eq!(effects.len(), n, "one effect per call: {effects:?}");
    let distinct: std::collections::BTreeSet<_> = effects.iter().collect();
    assert_eq!(distinct.len(), n, "one key per call, each once");
    assert_eq!(keys_seen.len(), n);
}

/// A tool without recovery: the run after a kill ends with a clear error, and runs nothing.
fn strict_after_kill(store: Store, dir: &Path) {
    let effects = dir.join("strict-effects");
    let job = Job {
        store,
        tool: "chaos-strict".into(),
        id: "call_strict".into(),
        effects: effects.clone(),
    };
    kill_after_effect(&job);
    let (ended, logs) = run_to_end(&job);
    let message = ended["failed"].as_str().unwrap_or_else(|| panic!("{ended}"));
    assert!(message.contains("interrupted") && message.contains("not run again"), "{message}");
    assert_eq!(lines(&effects).len(), 1, "not run twice");
    assert!(!logs.contains(&lines(&effects)[0]), "the key is not logged");
}

fn sqlite_chaos_loop() {
    let dir = tempfile::tempdir().unwrap();
    let store = Store::Sqlite(dir.path().join("pending.sqlite3"));
    chaos(store.clone(), dir.path(), 100);
    strict_after_kill(store, dir.path());
    // What the file holds: digests of keys, never the keys themselves.
    let bytes = std::fs::read(dir.path().join("pending.sqlite3")).unwrap();
    let text = String::from_utf8_lossy(&bytes);
    for key in lines(&dir.path().join("effects")) {
        assert!(!text.contains(&key), "the store holds a key");
    }
}

/// The PostgreSQL URL, or `None` when the tests are skipped on purpose.
fn postgres_url() -> Option<String> {
    match pg::postgres() {
        pg::Postgres::Url(url) => Some(url),
        pg::Postgres::Skipped(why) => {
            eprintln!("{why}");
            None
        }
        pg::Postgres::Missing(why) => panic!("{why}"),
    }
}

fn postgres_chaos_loop() {
    let Some(url) = postgres_url() else { return };
    let rt = tokio::runtime::Runtime::new().unwrap();
    let schema = rt.block_on(pg::fresh_schema(&url)).unwrap();
    let dir = tempfile::tempdir().unwrap();
    let store = Store::Postgres {
        url: url.clone(),
        schema: schema.clone(),
    };
    chaos(store.clone(), dir.path(), 100);
    strict_after_kill(store, dir.path());
    rt.block_on(pg::drop_schema(&url, &schema));
}

fn claim(key: &str, args: &str) -> ReceiptClaim {
    ReceiptClaim {
        key: key.into(),
        tool_name: "send".into(),
        args_digest: args.into(),
    }
}

/// The contract every receipt store keeps (within one live process).
async fn contract(store: &dyn ReceiptStore) {
    let c = claim("key-1", "a");
    assert_eq!(store.begin(&c, false).await.unwrap(), Began::Run(None));
    assert!(matches!(store.begin(&c, true).await.unwrap(), Began::Busy(_)), "one run at a time");
    assert_eq!(
        store.begin(&claim("key-1", "b"), false).await.unwrap(),
        Began::Mismatch,
        "other arguments"
    );
    store.finish("key-1", &json!({"sent": CANARY})).await.unwrap();
    assert_eq!(store.begin(&c, false).await.unwrap(), Began::Done(json!({"sent": CANARY})));

    let r = claim("key-2", "a");
    assert_eq!(store.begin(&r, false).await.unwrap(), Began::Run(None));
    store.release("key-2").await.unwrap();
    assert_eq!(store.begin(&r, false).await.unwrap(), Began::Run(None), "released: free again");

    store.interrupt("key-2").await.unwrap();
    assert!(matches!(store.begin(&r, false).await.unwrap(), Began::Interrupted(_)));
    assert!(matches!(store.begin(&r, true).await.unwrap(), Began::Run(Some(_))), "taken over");
    assert!(matches!(store.begin(&r, true).await.unwrap(), Began::Busy(_)), "by one taker");
    assert!(store.remove("key-2").await.unwrap());
    assert_eq!(store.begin(&r, false).await.unwrap(), Began::Run(None), "removed: free again");

    // Listed by the digests of their keys, with their states; removed by digest.
    let listed = store.list().await.unwrap();
    let state = |key: &str| listed.iter().find(|r| r.key_digest == key_digest(key)).map(|r| r.state.clone());
    assert_eq!(
        (state("key-1"), state("key-2")),
        (Some(ReceiptState::Done), Some(ReceiptState::Running))
    );
    assert!(
        listed.len() == 2 && listed.iter().all(|r| r.tool_name == "send" && r.since_ms.is_some()),
        "{listed:?}"
    );
    assert!(store.remove_digest(&key_digest("key-2")).await.unwrap());
    assert!(!store.remove_digest(&key_digest("key-2")).await.unwrap());
    assert_eq!(store.list().await.unwrap().len(), 1);
}

/// The one receipt left after `contract`, edited in the database: listed as damaged, saying why.
async fn listed_as_damaged(store: &dyn ReceiptStore) {
    let listed = store.list().await.unwrap();
    assert!(
        matches!(&listed[..], [r] if matches!(&r.state, ReceiptState::Damaged(why) if why.contains("integrity tag"))),
        "{listed:?}"
    );
}

fn receipt_store_contract_on_every_backend() {
    let rt = tokio::runtime::Runtime::new().unwrap();
    rt.block_on(async {
        contract(&MemoryReceipts::default()).await;
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("pending.sqlite3");
        let sqlite = SqliteStore::open_with_key(&path, KEY).unwrap();
        contract(&*sqlite.receipts().unwrap()).await;

        // A recorded result edited in the file is refused, and the call runs nothing.
        let db = rusqlite::Connection::open(&path).unwrap();
        let edited = db
            .execute("UPDATE receipts SET result_json = '{\"sent\":\"forged\"}' WHERE state = 'done'", [])
            .unwrap();
        assert_eq!(edited, 1);
        let refused = sqlite.receipts().unwrap().begin(&claim("key-1", "a"), false).await.unwrap_err();
        assert!(refused.to_string().contains("integrity tag"), "{refused}");
        assert!(
            !refused.to_string().contains("key-1") && !refused.to_string().contains("forged"),
            "{refused}"
        );
        listed_as_damaged(&*sqlite.receipts().unwrap()).await;

        if let Some(url) = postgres_url() {
            let schema = pg::fresh_schema(&url).await.unwrap();
            let options = PostgresOptions::default().schema(&schema).unwrap().key(KEY);
            let store = PostgresStore::connect_with(&url, options).await.unwrap();
            contract(&*store.receipts().unwrap()).await;
            let client = pg::connect(&url).await.unwrap();
            let sql = format!("UPDATE {schema}.toolsmith_receipts SET result_json = '\"forged\"' WHERE state = 'done'");
            assert_eq!(client.execute(&sql, &[]).await.unwrap(), 1);
            let refused = store.receipts().unwrap().begin(&claim("key-1", "a"), false).await.unwrap_err();
            assert!(refused.to_string().contains("integrity tag"), "{refused}");
            listed_as_damaged(&*store.receipts().unwrap()).await;
            let rows = client
                .query(&format!("SELECT key_digest FROM {schema}.toolsmith_receipts"), &[])
                .await
                .unwrap();
            assert!(rows.iter().all(|r| !r.get::<_, String>(0).contains("key-")), "digests, not keys");
            drop(store);
            pg::drop_schema(&url, &schema).await;
        }
    });
}

/// Through a runtime, in one process: one key per call whatever runs it again; a second run
/// answers from the receipt; a key reused with other arguments is refused.
fn the_runtime_runs_an_idempotent_call_once() {
    let rt = tokio::runtime::Runtime::new().unwrap();
    rt.block_on(async {
        let dir = tempfile::tempdir().unwrap();
        let effects = dir.path().join("effects");
        let runtime = Runtime::builder(Registry::global())
            .store(SqliteStore::open_with_key(dir.path().join("p.sqlite3"), KEY).unwrap())
            .build();
        let call = |id: &str, args: Value| runtime.call("chaos-strict", args, CallOptions::default().id(id)).finish();
        let args = json!({"effects": effects});
        for _ in 0..3 {
            let run = call("call_once", args.clone()).await;
            assert!(matches!(run.outcome, Outcome::Done(_)), "{:?}", run.outcome);
        }
        let run = call("call_twice", args.clone()).await;
        assert!(matches!(run.outcome, Outcome::Done(_)), "{:?}", run.outcome);
        assert_eq!(lines(&effects).len(), 2, "one effect per call");
        assert_ne!(lines(&effects)[0], lines(&effects)[1], "one key per call");
        let other = json!({"effects": dir.path().join("elsewhere")});
        let run = call("call_once", other).await;
        let Outcome::Failed(e) = run.outcome else {
            panic!("{:?}", run.outcome)
        };
        assert!(e.message().contains("other arguments"), "{}", e.message());
        assert_eq!(lines(&effects).len(), 2);
    });
}

/// The secret canary over receipts: a result answered from a receipt is shown in the views as
/// the first run's was (the transcript never keeps the secret), the application still gets it
/// whole, and no log line carries the key or the secret.
fn a_recorded_result_keeps_its_views_and_is_never_logged() {
    let job = |dir: &Path| Job {
        store: Store::Sqlite(dir.join("pending.sqlite3")),
        tool: "chaos-secret".into(),
        id: "call_secret".into(),
        effects: dir.join("effects"),
    };
    let dir = tempfile::tempdir().unwrap();
    let (first, first_logs) = run_to_end(&job(dir.path()));
    let (again, again_logs) = run_to_end(&job(dir.path()));
    assert_eq!(first, again, "answered from the receipt");
    assert_eq!(
        first["done"],
        json!(format!("the code is {CANARY}")),
        "the application gets it whole"
    );
    let key = lines(&dir.path().join("effects")).pop().unwrap();
    assert_eq!(lines(&dir.path().join("effects")).len(), 1, "ran once");
    for logs in [first_logs, again_logs] {
        assert!(!logs.contains(CANARY) && !logs.contains(&key), "{logs}");
    }

    let rt = tokio::runtime::Runtime::new().unwrap();
    rt.block_on(async {
        let runtime = Runtime::builder(Registry::global())
            .store(SqliteStore::open_with_key(dir.path().join("pending.sqlite3"), KEY).unwrap())
            .build();
        let args = json!({"effects": dir.path().join("effects")});
        let run = runtime
            .call("chaos-secret", args, CallOptions::default().id("call_secret"))
            .finish()
            .await;
        let Outcome::Done(output) = &run.outcome else {
            panic!("{:?}", run.outcome)
        };
        assert_eq!(output.value(), json!(format!("the code is {CANARY}")));
        let transcript = serde_json::to_string(&run.events.iter().map(|e| &e.transcript).collect::<Vec<_>>()).unwrap();
        assert!(transcript.contains("[hidden]") && !transcript.contains(CANARY), "{transcript}");
    });
    assert_eq!(lines(&dir.path().join("effects")).len(), 1, "still once");
}

/// `toolsmith --store LOCATION receipts ARGS` with the tests' store key.
fn receipts_cli(location: &str, args: &[&str]) -> child_cli::Ran {
    let mut all = vec!["--store", location, "receipts"];
    all.extend_from_slice(args);
    let key = std::str::from_utf8(KEY).unwrap();
    child_cli::Ran::from(child_cli::toolsmith(&all).env("TOOLSMITH_STORE_KEY", key).output().unwrap())
}

/// `receipts list --json`, as (digest, state) pairs sorted by digest, after checking that
/// neither the JSON nor the table shows a key or a result.
fn listed_receipts(location: &str, keys: &[String]) -> Vec<(String, String)> {
    let (json, table) = (receipts_cli(location, &["list", "--json"]), receipts_cli(location, &["list"]));
    assert!(json.ok && table.ok, "{} {}", json.stderr, table.stderr);
    for shown in [&json.stdout, &table.stdout] {
        assert!(
            !shown.contains(CANARY) && !shown.contains("sent once"),
            "a result is listed: {shown}"
        );
        assert!(keys.iter().all(|k| !shown.contains(k.as_str())), "a key is listed: {shown}");
    }
    let rows: Vec<Value> = serde_json::from_str(&json.stdout).unwrap();
    let mut pairs: Vec<(String, String)> = rows
        .iter()
        .map(|r| {
            assert_eq!(r["tool_name"], "chaos-strict", "{r}");
            assert!(r["age_s"].is_u64(), "{r}");
            let digest = r["key_digest"].as_str().unwrap().to_owned();
            assert!(table.stdout.contains(&digest), "{}", table.stdout);
            (digest, r["state"].as_str().unwrap().to_owned())
        })
        .collect();
    pairs.sort();
    pairs
}

/// `receipts list` and `receipts clear` on one store: an interrupted call (its process killed
/// after the effect) is listed as interrupted, by its key's digest; clearing it lets the call
/// run once more; a done receipt is cleared by its key.
fn receipts_command_line(store: Store, location: &str, dir: &Path) {
    let effects = dir.join("cli-effects");
    let job = |id: &str| Job {
        store: store.clone(),
        tool: "chaos-strict".into(),
        id: id.into(),
        effects: effects.clone(),
    };
    kill_after_effect(&job("call_cli_killed"));
    let (done, _) = run_to_end(&job("call_cli_done"));
    assert!(done["done"].is_string(), "{done}");
    let keys = lines(&effects);
    let digests: Vec<String> = keys.iter().map(|k| tool_core::idempotency::key_digest(k)).collect();
    let (killed, finished) = (digests[0].clone(), digests[1].clone());
    // A PostgreSQL claim reads as interrupted once the killed instance's lease lapses.
    let started = Instant::now();
    let listed = loop {
        let listed = listed_receipts(location, &keys);
        if listed.iter().any(|(_, state)| state == "interrupted") || started.elapsed() > Duration::from_secs(20) {
            break listed;
        }
        std::thread::sleep(Duration::from_millis(50));
    };
    let mut expected = vec![(killed.clone(), "interrupted".to_owned()), (finished.clone(), "done".to_owned())];
    expected.sort();
    assert_eq!(listed, expected);

    let (refused, _) = run_to_end(&job("call_cli_killed"));
    assert!(
        refused["failed"].as_str().unwrap_or_default().contains("toolsmith receipts clear"),
        "{refused}"
    );
    let cleared = receipts_cli(location, &["clear", "--digest", &killed]);
    assert!(
        cleared.ok && cleared.stdout.contains(&killed),
        "{} {}",
        cleared.stdout,
        cleared.stderr
    );
    let (again, _) = run_to_end(&job("call_cli_killed"));
    assert!(again["done"].is_string(), "cleared: it runs once more: {again}");
    assert_eq!(lines(&effects).len(), 3);

    let by_key = receipts_cli(location, &["clear", &keys[1]]);
    assert!(by_key.ok, "{}", by_key.stderr);
    let twice = receipts_cli(location, &["clear", &keys[1]]);
    assert!(!twice.ok && twice.stderr.contains("no receipt"), "{}", twice.stderr);
    assert!(
        !by_key.stdout.contains(&keys[1]) && !twice.stderr.contains(&keys[1]),
        "the key is not echoed"
    );
    assert_eq!(listed_receipts(location, &keys), [(killed, "done".to_owned())]);
}

fn receipts_from_the_command_line_on_every_backend() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("pending.sqlite3");
    receipts_command_line(Store::Sqlite(path.clone()), path.to_str().unwrap(), dir.path());
    let Some(url) = postgres_url() else { return };
    let rt = tokio::runtime::Runtime::new().unwrap();
    let schema = rt.block_on(pg::fresh_schema(&url)).unwrap();
    let pg_dir = tempfile::tempdir().unwrap();
    let store = Store::Postgres {
        url: url.clone(),
        schema: schema.clone(),
    };
    receipts_command_line(store, &pg::url_in_schema(&url, &schema), pg_dir.path());
    rt.block_on(pg::drop_schema(&url, &schema));
}

/// This suite's tests, named `SUITE::TEST`.
pub fn trials(suite: &str) -> Vec<libtest_mimic::Trial> {
    child_cli::trials(
        suite,
        &[
            ("receipt_store_contract_on_every_backend", receipt_store_contract_on_every_backend),
            (
                "receipts_from_the_command_line_on_every_backend",
                receipts_from_the_command_line_on_every_backend,
            ),
            ("the_runtime_runs_an_idempotent_call_once", the_runtime_runs_an_idempotent_call_once),
            (
                "a_recorded_result_keeps_its_views_and_is_never_logged",
                a_recorded_result_keeps_its_views_and_is_never_logged,
            ),
            ("sqlite_chaos_loop", sqlite_chaos_loop),
            ("postgres_chaos_loop", postgres_chaos_loop),
        ],
    )
}
