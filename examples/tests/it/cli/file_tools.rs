//! End-to-end tests of the `toolsmith` binary's file tools under a context root: `search-files`
//! stays inside it, `write-file` suspends on a conflict and waits for an approval another
//! process gives.

use std::path::Path;

use serde_json::{Value, json};
use support::toolsmith;

use crate::support;

fn context(root: &Path) -> String {
    json!({ "root": root }).to_string()
}

fn sample_tree() -> tempfile::TempDir {
    let dir = tempfile::tempdir().unwrap();
    std::fs::create_dir(dir.path().join("docs")).unwrap();
    std::fs::write(dir.path().join("docs/guide.md"), "# Guide\nInstall with cargo.\n").unwrap();
    std::fs::write(dir.path().join("notes.txt"), "remember the cargo lock\n").unwrap();
    dir
}

#[test]
fn search_files_uses_the_context_root() {
    let dir = sample_tree();
    let cx = context(dir.path());
    let out = toolsmith(&["call", "search-files", r#"{"query": "cargo"}"#, "--context", &cx]).json();
    assert_eq!(
        out,
        json!({
            "searched": ".",
            "matches": [
                {"path": "docs/guide.md", "kind": "content", "line": 2, "text": "Install with cargo."},
                {"path": "notes.txt", "kind": "content", "line": 1, "text": "remember the cargo lock"}
            ],
            "truncated": false,
            "files_scanned": 2,
            "skipped": 0
        })
    );

    let out = toolsmith(&[
        "call",
        "search-files",
        r#"{"query": "GUIDE", "mode": "names", "path": "docs"}"#,
        "--context",
        &cx,
    ])
    .json();
    assert_eq!(out["matches"], json!([{"path": "docs/guide.md", "kind": "name"}]));
    assert_eq!(out["searched"], "docs");

    // Without the context the call fails before the tool runs.
    let run = toolsmith(&["call", "search-files", r#"{"query": "cargo"}"#]);
    assert_ne!(run.code, 0);
    assert!(run.stderr.contains("invalid request context"), "{}", run.stderr);
    assert!(run.stderr.contains("\"root\" is a required property"), "{}", run.stderr);
}

#[test]
fn search_files_refuses_to_leave_the_root() {
    let parent = tempfile::tempdir().unwrap();
    let root = parent.path().join("root");
    std::fs::create_dir(&root).unwrap();
    std::fs::write(parent.path().join("secret.txt"), "password=hunter2\n").unwrap();
    let cx = context(&root);

    for path in ["..", "../", "sub/../..", "./../secret.txt"] {
        let args = json!({"query": "password", "path": path}).to_string();
        let run = toolsmith(&["call", "search-files", &args, "--context", &cx]);
        assert_ne!(run.code, 0, "{path}: {}", run.stdout);
        assert!(run.stderr.contains("contains `..`"), "{path}: {}", run.stderr);
        assert!(!run.stderr.contains("hunter2") && !run.stdout.contains("hunter2"));
    }

    let abs = json!({"query": "password", "path": parent.path().join("secret.txt")}).to_string();
    let run = toolsmith(&["call", "search-files", &abs, "--context", &cx]);
    assert_ne!(run.code, 0);
    assert!(run.stderr.contains("is absolute"), "{}", run.stderr);

    #[cfg(unix)]
    {
        std::os::unix::fs::symlink(parent.path(), root.join("up")).unwrap();
        let run = toolsmith(&["call", "search-files", r#"{"query": "password", "path": "up"}"#, "--context", &cx]);
        assert_ne!(run.code, 0);
        assert!(run.stderr.contains("outside the root"), "{}", run.stderr);
        // Walking the root never follows the link either.
        let out = toolsmith(&["call", "search-files", r#"{"query": "password"}"#, "--context", &cx]).json();
        assert_eq!(out["matches"], json!([]));
        assert_eq!(out["skipped"], 1);
    }
}

#[test]
fn write_file_suspends_on_conflicts_and_waits_for_approval_across_processes() {
    let dir = tempfile::tempdir().unwrap();
    let store_dir = tempfile::tempdir().unwrap();
    let store = store_dir.path().join("pending.sqlite3");
    let store = store.to_str().unwrap();
    let cx = context(dir.path());
    let read = || std::fs::read_to_string(dir.path().join("out/hello.txt")).unwrap();
    let call = |args: &str| toolsmith(&["--store", store, "call", "write-file", args, "--context", &cx]);
    let out = call(r#"{"path": "out/hello.txt", "content": "hello"}"#).json();
    assert_eq!(out, json!({"path": "out/hello.txt", "bytes_written": 5, "created": true}));
    assert_eq!(read(), "hello");

    // A conflict suspends the call: the user decides, in another process.
    let suspended = call(r#"{"path": "out/hello.txt", "content": "bye"}"#);
    let event = suspended.json();
    assert_eq!(event["type"], "tool-call-suspended");
    assert_eq!(
        event["suspend_payload"],
        json!({"path": "out/hello.txt", "existing_bytes": 5, "new_bytes": 3})
    );
    assert!(suspended.stderr.contains("toolsmith resume"), "{}", suspended.stderr);
    let id = event["tool_call_id"].as_str().unwrap().to_owned();
    let pending = toolsmith(&["--store", store, "pending", "--json"]).json();
    assert_eq!(pending[0]["tool_call_id"], id.as_str());
    assert_eq!(pending[0]["kind"], "suspended");
    assert_eq!(pending[0]["context"]["root"], dir.path().to_str().unwrap());
    let table = toolsmith(&["--store", store, "pending"]);
    assert!(table.stdout.contains(&id) && table.stdout.contains("suspended"), "{}", table.stdout);

    let bad = toolsmith(&["--store", store, "resume", &id, r#"{"overwrite": "yes"}"#]);
    assert_ne!(bad.code, 0);
    assert!(bad.stderr.contains("/overwrite"), "{}", bad.stderr);
    let kept = toolsmith(&["--store", store, "resume", &id, r#"{"overwrite": false}"#]);
    assert_ne!(kept.code, 0);
    assert!(kept.stderr.contains("keep the existing"), "{}", kept.stderr);
    assert_eq!(read(), "hello");
    let stale = toolsmith(&["--store", store, "resume", &id, r#"{"overwrite": true}"#]);
    assert!(stale.stderr.contains("already resolved"), "{}", stale.stderr);

    let id = call(r#"{"path": "out/hello.txt", "content": "bye"}"#).json()["tool_call_id"]
        .as_str()
        .unwrap()
        .to_owned();
    let out = toolsmith(&["--store", store, "resume", &id, r#"{"overwrite": true}"#]).json();
    assert_eq!(out, json!({"path": "out/hello.txt", "bytes_written": 3, "created": false}));
    assert_eq!(read(), "bye");

    // Overwriting on request needs approval; a decline never runs it.
    let waiting = call(r#"{"path": "out/hello.txt", "content": "again", "overwrite": true}"#);
    let event = waiting.json();
    assert_eq!(event["type"], "tool-call-approval");
    assert_eq!(event["resume_schema"]["required"], json!(["approved"]));
    let id = event["tool_call_id"].as_str().unwrap().to_owned();
    let declined = toolsmith(&["--store", store, "call", &id, "--decline", "not today"]).json();
    assert_eq!(declined["approved"], false);
    assert_eq!(declined["reason"], "not today");
    assert_eq!(read(), "bye");
    let id = call(r#"{"path": "out/hello.txt", "content": "again", "overwrite": true}"#).json()["tool_call_id"]
        .as_str()
        .unwrap()
        .to_owned();
    let events = toolsmith(&["--store", store, "call", &id, "--approve", "--events"]);
    let kinds: Vec<String> = events
        .stdout
        .lines()
        .map(|l| serde_json::from_str::<Value>(l).unwrap()["type"].as_str().unwrap().to_owned())
        .collect();
    assert_eq!(kinds, ["tool-call-resumed", "tool-result"]);
    assert_eq!(read(), "again");
    assert_eq!(toolsmith(&["--store", store, "pending", "--json"]).json(), json!([]));

    let run = toolsmith(&[
        "call",
        "write-file",
        r#"{"path": "../escape.txt", "content": "x"}"#,
        "--context",
        &cx,
    ]);
    assert_ne!(run.code, 0);
    assert!(run.stderr.contains("contains `..`"), "{}", run.stderr);
}
