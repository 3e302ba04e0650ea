//! The pending-call store is robust and tamper-evident, over real SQLite files: a damaged row
//! (bad JSON, unknown tool, bad state) is listed as damaged and skipped, never breaking
//! `toolsmith pending`; a row edited on disk (tool, arguments, context, state) is refused
//! before anything runs; `--store` in a directory that does not exist is an error, while the
//! default data directory is created on demand; the key can come from `TOOLSMITH_STORE_KEY`.

use crate::support::child_cli;

use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU32, Ordering};

use tool_core::prelude::*;
use tool_core::runtime::backend::{PendingStore, StoredCall};
use tool_core::runtime::{Outcome, ResumeOptions, Runtime, RuntimeError, SqliteStore, StoreError};

static PAID: AtomicU32 = AtomicU32::new(0);

/// Pays someone (a person approves every payment)
#[tool(id = "robust-pay", require_approval)]
async fn pay(
    /// Who
    to: String,
    /// How much
    cents: u32,
) -> String {
    PAID.fetch_add(cents, Ordering::SeqCst);
    format!("paid {cents} to {to}")
}

/// Deletes everything (never meant to run from a stored call)
#[tool(id = "robust-wipe", require_approval)]
async fn wipe() -> String {
    PAID.fetch_add(1_000_000, Ordering::SeqCst);
    "wiped".into()
}

fn runtime(path: &Path) -> Runtime {
    Runtime::builder(Registry::from_iter([pay::tool(), wipe::tool()]))
        .store(SqliteStore::open(path).unwrap())
        .build()
}

/// Calls `robust-pay` waiting for approval, with ids `p0`, `p1`, … and a request context.
fn waiting_payments(path: &Path, n: usize) {
    let rt = tokio::runtime::Runtime::new().unwrap();
    let runtime = runtime(path);
    rt.block_on(async {
        for i in 0..n {
            let mut options = CallOptions::default().id(format!("p{i}"));
            options.data.context = Some(json!({"account": "acme", "token": "sk-secret"}));
            let run = runtime.call("robust-pay", json!({"to": "bob", "cents": 5}), options).finish().await;
            assert!(matches!(run.outcome, Outcome::AwaitingApproval(_)), "{:?}", run.outcome);
        }
    });
}

/// Changes rows behind the store's back, as a person with `sqlite3` would.
fn sql(path: &Path, statement: &str) {
    let conn = rusqlite::Connection::open(path).unwrap();
    conn.pragma_update(None, "ignore_check_constraints", true).unwrap();
    assert_eq!(conn.execute(statement, []).unwrap(), 1, "{statement}");
}

fn store_path() -> (tempfile::TempDir, PathBuf) {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("pending.sqlite3");
    (dir, path)
}

fn damaged_rows_are_listed_as_damaged_and_skipped() {
    let (_dir, path) = store_path();
    waiting_payments(&path, 4);
    sql(
        &path,
        "UPDATE pending_calls SET call_json = '{\"tool_call_id\": \"p0\", \"token\": \"sk-secret' WHERE tool_call_id = 'p0'",
    );
    sql(&path, "UPDATE pending_calls SET state = 'half-done' WHERE tool_call_id = 'p1'");
    // A call stored by a binary with other tools: unknown to this one.
    let other = Runtime::builder(Registry::from_iter([pay::tool()]))
        .store(SqliteStore::open(&path).unwrap())
        .build();
    let rt = tokio::runtime::Runtime::new().unwrap();
    let mut call = rt.block_on(other.pending_call("p3")).unwrap().unwrap();
    call.tool_call_id = "p9".into();
    call.tool_name = "gone-tool".into();
    call.created_at_ms += 1;
    rt.block_on(SqliteStore::open(&path).unwrap().save(&call)).unwrap();

    let listed = rt.block_on(runtime(&path).pending_entries()).unwrap();
    let damaged: Vec<(&str, &str)> = listed
        .iter()
        .filter_map(|e| match e {
            StoredCall::Damaged { tool_call_id, reason, .. } => Some((tool_call_id.as_str(), reason.as_str())),
            StoredCall::Call { .. } => None,
        })
        .collect();
    assert_eq!(damaged.len(), 3, "{listed:?}");
    assert!(damaged[0].0 == "p0" && damaged[0].1.contains("JSON"), "{damaged:?}");
    assert!(damaged[1].0 == "p1" && damaged[1].1.contains("half-done"), "{damaged:?}");
    assert!(damaged[2].0 == "p9" && damaged[2].1.contains("gone-tool"), "{damaged:?}");
    assert_eq!(
        rt.block_on(runtime(&path).pending()).unwrap().len(),
        3,
        "the intact calls (p2, p3, p9) are still there"
    );

    // The command line lists them too, and goes on past them.
    let table = child_cli::run(&["--store", path.to_str().unwrap(), "pending"]);
    assert!(table.ok, "{}", table.stderr);
    for id in ["p0", "p1", "p2", "p3", "p9"] {
        assert!(table.stdout.contains(id), "{id} missing: {}", table.stdout);
    }
    assert_eq!(table.stdout.matches("damaged").count(), 3, "{}", table.stdout);
    assert!(!table.stdout.contains("sk-secret"), "{}", table.stdout);
    let json = child_cli::run(&["--store", path.to_str().unwrap(), "pending", "--json"]);
    assert!(json.ok, "{}", json.stderr);
    let json: Value = serde_json::from_str(&json.stdout).unwrap();
    let states: Vec<(&str, &str)> = json
        .as_array()
        .unwrap()
        .iter()
        .map(|e| (e["tool_call_id"].as_str().unwrap(), e["state"].as_str().unwrap()))
        .collect();
    assert_eq!(
        states,
        [
            ("p0", "damaged"),
            ("p1", "damaged"),
            ("p2", "waiting"),
            ("p3", "waiting"),
            ("p9", "damaged")
        ],
        "{json}"
    );

    // A damaged call is refused, naming it; nothing runs.
    let rt = tokio::runtime::Runtime::new().unwrap();
    let before = PAID.load(Ordering::SeqCst);
    let refused = rt
        .block_on(runtime(&path).approve("p0", ResumeOptions::default()))
        .map(drop)
        .unwrap_err();
    assert!(
        matches!(&refused, RuntimeError::Store(StoreError::Damaged { id, .. }) if id == "p0"),
        "{refused}"
    );
    assert!(!refused.to_string().contains("sk-secret"), "{refused}");
    assert_eq!(PAID.load(Ordering::SeqCst), before);
}

fn a_row_edited_on_disk_is_refused_before_anything_runs() {
    let (_dir, path) = store_path();
    waiting_payments(&path, 5);
    let edits = [
        (
            "p0",
            "UPDATE pending_calls SET call_json = replace(call_json, '\"cents\":5', '\"cents\":500000') WHERE tool_call_id = 'p0'",
        ),
        (
            "p1",
            "UPDATE pending_calls SET call_json = replace(call_json, '\"account\":\"acme\"', '\"account\":\"mallory\"') WHERE tool_call_id = 'p1'",
        ),
        (
            "p2",
            "UPDATE pending_calls SET tool_name = 'robust-wipe', call_json = replace(call_json, 'robust-pay', 'robust-wipe') WHERE tool_call_id = 'p2'",
        ),
        (
            "p3",
            "UPDATE pending_calls SET state = 'running', owner_pid = 1 WHERE tool_call_id = 'p3'",
        ),
    ];
    for (_, statement) in edits {
        sql(&path, statement);
    }
    let rt = tokio::runtime::Runtime::new().unwrap();
    let runtime = runtime(&path);
    let before = PAID.load(Ordering::SeqCst);
    for (id, _) in edits {
        let refused = rt.block_on(runtime.approve(id, ResumeOptions::default())).map(drop).unwrap_err();
        let message = refused.to_string();
        assert!(message.contains(id) && message.contains("integrity tag"), "{id}: {message}");
        let cli = child_cli::run(&["--store", path.to_str().unwrap(), "call", id, "--approve", "--rerun"]);
        assert!(!cli.ok && cli.stderr.contains("integrity tag"), "{id}: {}", cli.stderr);
    }
    assert_eq!(PAID.load(Ordering::SeqCst), before, "no edited call ran");
    // The untouched call still runs, once.
    let run = rt.block_on(async { runtime.approve("p4", ResumeOptions::default()).await.unwrap().finish().await });
    assert!(matches!(run.outcome, Outcome::Done(_)), "{:?}", run.outcome);
    assert_eq!(PAID.load(Ordering::SeqCst), before + 5);
}

fn a_store_in_a_missing_directory_is_an_error_but_the_default_directory_is_made() {
    let dir = tempfile::tempdir().unwrap();
    let missing = dir.path().join("nonexistent/dir/x.sqlite3");
    let ran = child_cli::run(&["--store", missing.to_str().unwrap(), "pending"]);
    assert!(!ran.ok);
    assert!(
        ran.stderr.contains("--store") && ran.stderr.contains("does not exist"),
        "{}",
        ran.stderr
    );
    assert!(!dir.path().join("nonexistent").exists(), "the directory was created");

    let data = dir.path().join("data/toolsmith");
    let out = child_cli::toolsmith(&["pending", "--json"])
        .env("TOOLSMITH_DATA_DIR", &data)
        .output()
        .unwrap();
    let ran = child_cli::Ran::from(out);
    assert!(ran.ok, "{}", ran.stderr);
    assert_eq!(serde_json::from_str::<Value>(&ran.stdout).unwrap(), json!([]));
    assert!(data.join("pending.sqlite3").is_file() && data.join("pending.sqlite3.key").is_file());
}

fn the_key_can_come_from_the_environment() {
    let (_dir, path) = store_path();
    let store = path.to_str().unwrap();
    let waits = |key: &str| {
        let out = child_cli::toolsmith(&["--store", store, "call", "robust-pay", r#"{"to": "ann", "cents": 1}"#])
            .env("TOOLSMITH_STORE_KEY", key)
            .output()
            .unwrap();
        child_cli::Ran::from(out)
    };
    let made = waits("a long secret kept by the deployment");
    assert!(made.ok, "{}", made.stderr);
    let id = serde_json::from_str::<Value>(&made.stdout).unwrap()["tool_call_id"]
        .as_str()
        .unwrap()
        .to_owned();
    assert!(
        !Path::new(&format!("{store}.key")).exists(),
        "no key file when the environment gives the key"
    );
    let listed = |key: &str| {
        let out = child_cli::toolsmith(&["--store", store, "pending", "--json"])
            .env("TOOLSMITH_STORE_KEY", key)
            .output()
            .unwrap();
        serde_json::from_str::<Value>(&child_cli::Ran::from(out).stdout).unwrap()
    };
    assert_eq!(listed("a long secret kept by the deployment")[0]["state"], "waiting");
    let wrong = listed("another secret");
    assert_eq!(wrong[0]["tool_call_id"], id.as_str());
    assert_eq!(wrong[0]["state"], "damaged", "{wrong}");
}

/// `TOOLSMITH_STORE` names the store as `--store` does (so a URL with a password need not be on
/// the command line), and `--store` wins over it.
fn the_store_can_come_from_the_environment() {
    let (_dir, path) = store_path();
    let store = path.to_str().unwrap();
    let call = |args: &[&str], env: Option<&str>| {
        let mut command = child_cli::toolsmith(args);
        if let Some(env) = env {
            command.env("TOOLSMITH_STORE", env);
        }
        child_cli::Ran::from(command.output().unwrap())
    };
    let made = call(&["call", "robust-pay", r#"{"to": "ann", "cents": 1}"#], Some(store));
    assert!(made.ok, "{}", made.stderr);
    assert!(path.exists(), "the call waits in the store the environment named");
    let listed = call(&["pending", "--json"], Some(store));
    let listed: Value = serde_json::from_str(&listed.stdout).unwrap();
    assert_eq!(listed.as_array().map(Vec::len), Some(1), "{listed}");
    let elsewhere = path.with_file_name("other.sqlite3");
    let flag = call(&["--store", elsewhere.to_str().unwrap(), "pending", "--json"], Some(store));
    assert_eq!(
        serde_json::from_str::<Value>(&flag.stdout).unwrap(),
        serde_json::json!([]),
        "the flag wins"
    );
}

/// This suite's tests, named `SUITE::TEST`.
pub fn trials(suite: &str) -> Vec<libtest_mimic::Trial> {
    child_cli::trials(
        suite,
        &[
            ("the_store_can_come_from_the_environment", the_store_can_come_from_the_environment),
            (
                "damaged_rows_are_listed_as_damaged_and_skipped",
                damaged_rows_are_listed_as_damaged_and_skipped,
            ),
            (
                "a_row_edited_on_disk_is_refused_before_anything_runs",
                a_row_edited_on_disk_is_refused_before_anything_runs,
            ),
            (
                "a_store_in_a_missing_directory_is_an_error_but_the_default_directory_is_made",
                a_store_in_a_missing_directory_is_an_error_but_the_default_directory_is_made,
            ),
            ("the_key_can_come_from_the_environment", the_key_can_come_from_the_environment),
        ],
    )
}
