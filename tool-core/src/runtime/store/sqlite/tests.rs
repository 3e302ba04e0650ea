//! The SQLite store against real files: rows, claims, states, integrity, damage.

use super::*;
use crate::runtime::pending::PendingKind;
use crate::runtime::state::CallState;
use serde_json::json;

fn sample(id: &str, at: u64) -> PendingCall {
    let call = json!({"tool_call_id": id, "tool_name": "write-file", "kind": "suspended", "args": {"path": "a.txt"},
                      "suspend_payload": {"path": "a.txt"}, "created_at_ms": at});
    serde_json::from_value(call).unwrap()
}

fn store() -> (tempfile::TempDir, SqliteStore) {
    let dir = tempfile::tempdir().unwrap();
    let store = SqliteStore::open(dir.path().join("pending.sqlite3")).unwrap();
    (dir, store)
}

/// Marks a call running by `pid` as the store itself would (with a valid tag).
fn set_running(store: &SqliteStore, id: &str, pid: i64, start: Option<&str>) {
    let conn = store.conn();
    let row = read_row(&conn, id).unwrap().unwrap();
    let running = Row {
        state: Some("running".into()),
        owner_pid: Some(pid),
        owner_start: start.map(str::to_owned),
        claimed_at_ms: Some(now_ms()),
        ..row
    };
    write_row(&conn, running, &store.db.key).unwrap();
}

fn busy<T>(result: Result<T, StoreError>) -> bool {
    matches!(result, Err(StoreError::Busy(_)))
}

fn interrupted<T>(result: Result<T, StoreError>) -> bool {
    matches!(result, Err(StoreError::Interrupted(_)))
}

async fn state_of(store: &SqliteStore, id: &str) -> CallState {
    let entries = store.entries().await.unwrap();
    let found = entries.into_iter().find(|e| e.tool_call_id() == id).unwrap();
    let StoredCall::Call { state, .. } = found else {
        panic!("{found:?}")
    };
    state
}

#[tokio::test]
async fn every_field_round_trips() {
    let (_dir, s) = store();
    let full: PendingCall = serde_json::from_value(json!({"tool_call_id": "full", "tool_name": "pay", "kind": "approval",
        "args": {"n": 1}, "context": {"api_key": "sk-1"}, "thread_id": "t1", "resource_id": "user-9", "created_at_ms": u64::MAX,
        "caller": {"subject": "user-9", "scopes": ["pay"], "client_id": "app", "claims": {"org": "acme"}},
        "messages": [{"role": "user", "content": "hi ✓"}], "suspend_payload": [1], "resume_schema": {"type": "object"}}))
    .unwrap();
    assert!(full.kind == PendingKind::Approval && full.resume_schema.is_some() && !full.data.messages.is_empty());
    assert_eq!(full.data.caller.as_deref().and_then(crate::Caller::client_id), Some("app"));
    let mut bare = sample("bare", 3);
    bare.suspend_payload = None;
    s.save(&full).await.unwrap();
    s.save(&bare).await.unwrap();
    assert_eq!(s.get("full").await.unwrap().unwrap(), full);
    assert_eq!(s.get("bare").await.unwrap().unwrap(), bare);
    assert_eq!(s.list().await.unwrap(), [bare, full]);
    assert!(s.get("nope").await.unwrap().is_none());
    assert!(format!("{s:?}").contains("pending.sqlite3"));
}

#[tokio::test]
async fn claim_is_exclusive_and_release_reopens() {
    let (_dir, s) = store();
    for (id, at) in [("b", 2), ("a", 1), ("c", 1)] {
        s.save(&sample(id, at)).await.unwrap();
    }
    let ids: Vec<String> = s.list().await.unwrap().into_iter().map(|c| c.tool_call_id).collect();
    assert_eq!(ids, ["a", "c", "b"]);
    assert_eq!(s.claim("a").await.unwrap().unwrap(), sample("a", 1));
    assert!(matches!(s.claim("a").await, Err(StoreError::Busy(id)) if id == "a"));
    assert!(s.get("a").await.unwrap().is_some(), "a running call is still there");
    s.release("a").await.unwrap();
    assert!(s.claim("a").await.unwrap().is_some());
    s.save(&sample("a", 1)).await.unwrap();
    assert!(s.claim("a").await.unwrap().is_some(), "save puts a call back to waiting");
    s.remove("a").await.unwrap();
    assert!(s.claim("a").await.unwrap().is_none());
    s.release("unknown").await.unwrap();
    s.remove("unknown").await.unwrap();
    assert!(s.claim("unknown").await.unwrap().is_none());
    assert!(s.get("b").await.unwrap().is_some());
}

#[tokio::test]
async fn stores_on_one_file_share_rows_and_claims_and_rows_survive_reopening() {
    let (_dir, one) = store();
    let two = SqliteStore::open(one.path()).unwrap();
    one.save(&sample("x", 1)).await.unwrap();
    one.save(&sample("y", 2)).await.unwrap();
    assert_eq!(two.get("x").await.unwrap().unwrap(), sample("x", 1));
    assert!(two.claim("x").await.unwrap().is_some());
    assert!(busy(one.claim("x").await));
    two.remove("x").await.unwrap();
    let path = one.path().to_path_buf();
    drop((one, two));
    assert_eq!(SqliteStore::open(&path).unwrap().list().await.unwrap(), [sample("y", 2)]);
}

#[cfg(unix)]
#[tokio::test]
async fn a_claim_by_an_ended_process_is_interrupted_and_taken_again_only_on_purpose() {
    let (_dir, s) = store();
    s.save(&sample("x", 1)).await.unwrap();
    let mut child = std::process::Command::new("sleep").arg("30").spawn().unwrap();
    let pid = i64::from(child.id());
    set_running(&s, "x", pid, process_stat(child.id()).map(|(_, start)| start).as_deref());
    assert!(busy(s.claim("x").await), "another live process holds the call");
    assert!(busy(s.claim_again("x").await), "a live run is never taken, even on purpose");
    assert!(matches!(state_of(&s, "x").await, CallState::Running(c) if c.owner_pid == u32::try_from(pid).ok()));
    child.kill().unwrap();
    child.wait().unwrap();
    let mut ended = std::process::Command::new("true").spawn().unwrap();
    let ended_pid = i64::from(ended.id());
    ended.wait().unwrap();
    for pid in [pid, ended_pid, -1, 0, i64::from(u32::MAX) + 1] {
        set_running(&s, "x", pid, None);
        let Err(StoreError::Interrupted(what)) = s.claim("x").await else {
            panic!("pid {pid}: not interrupted")
        };
        assert_eq!((what.tool_call_id.as_str(), what.tool_name.as_str()), ("x", "write-file"));
        assert!(what.to_string().contains("--rerun"), "{what}");
        assert!(matches!(state_of(&s, "x").await, CallState::Interrupted(_)), "pid {pid}");
        assert!(interrupted(s.claim("x").await), "refusing leaves it interrupted");
        assert_eq!(s.list().await.unwrap(), [sample("x", 1)], "an interrupted call is listed");
        assert!(s.claim_again("x").await.unwrap().is_some(), "pid {pid}");
        assert!(matches!(state_of(&s, "x").await, CallState::Running(c) if c.owner_pid == Some(std::process::id())));
    }
    let me = i64::from(std::process::id());
    set_running(&s, "x", me, None);
    assert!(busy(s.claim("x").await), "a call running in this process is busy");
    if cfg!(target_os = "linux") {
        set_running(&s, "x", me, Some("1"));
        assert!(interrupted(s.claim("x").await), "a reused pid does not hold the claim");
        assert!(s.claim_again("x").await.unwrap().is_some());
        assert!(busy(s.claim("x").await), "our claim records our start time");
    }
}

#[cfg(unix)]
#[tokio::test]
async fn the_file_is_readable_by_its_owner_only() {
    use std::os::unix::fs::PermissionsExt;
    let (_dir, s) = store();
    let mode = |p: &Path| std::fs::metadata(p).unwrap().permissions().mode() & 0o777;
    assert_eq!(mode(s.path()), 0o600);
    std::fs::set_permissions(s.path(), std::fs::Permissions::from_mode(0o644)).unwrap();
    assert_eq!(mode(SqliteStore::open(s.path()).unwrap().path()), 0o600);
}

/// Edits a column of every row behind the store's back (as a person with `sqlite3` would).
fn edit(store: &SqliteStore, column: &str, value: impl rusqlite::ToSql) {
    let sql = format!("UPDATE pending_calls SET {column} = ?1");
    store.conn().execute(&sql, [value]).unwrap();
}

fn damage_of(err: StoreError) -> String {
    let StoreError::Damaged { id, reason } = err else {
        panic!("not damaged: {err}")
    };
    assert_eq!(id, "x");
    reason
}

#[tokio::test]
async fn a_damaged_row_is_refused_listed_as_damaged_and_hides_its_text() {
    let (_dir, s) = store();
    for bad in [r#"{"secret": "sk-1""#, r#"{"tool_call_id": "sk-1"}"#, r#"{"args": "sk-1"}"#] {
        s.save(&sample("x", 1)).await.unwrap();
        s.save(&sample("y", 2)).await.unwrap();
        s.conn()
            .execute("UPDATE pending_calls SET call_json = ?1 WHERE tool_call_id = 'x'", [bad])
            .unwrap();
        for err in [
            s.get("x").await.unwrap_err(),
            s.claim("x").await.unwrap_err(),
            s.claim_again("x").await.unwrap_err(),
        ] {
            let message = err.to_string();
            assert!(message.contains("`x`") && !message.contains("sk-1"), "{message}");
            assert!(matches!(err, StoreError::Damaged { .. }), "{err}");
        }
        assert_eq!(s.list().await.unwrap(), [sample("y", 2)], "the damaged row is skipped");
        let entries = s.entries().await.unwrap();
        let StoredCall::Damaged {
            tool_call_id,
            tool_name,
            reason,
        } = &entries[0]
        else {
            panic!("{entries:?}")
        };
        assert_eq!((tool_call_id.as_str(), tool_name.as_deref()), ("x", Some("write-file")));
        assert!(!reason.contains("sk-1"), "{reason}");
        assert!(matches!(&entries[1], StoredCall::Call { call, state: CallState::Waiting } if call.tool_call_id == "y"));
        assert!(s.release("x").await.is_err(), "a damaged row is not re-tagged");
        assert!(s.claim("x").await.is_err());
        s.remove("x").await.unwrap();
    }
}

#[tokio::test]
async fn an_edit_on_disk_breaks_the_tag_and_nothing_runs() {
    let (_dir, s) = store();
    let edited_call = |c: &mut PendingCall| c.args = json!({"path": "/etc/passwd"});
    let mut other = sample("x", 1);
    edited_call(&mut other);
    let other_json = serde_json::to_string(&other).unwrap();
    let edits: [(&str, &dyn rusqlite::ToSql); 5] = [
        ("call_json", &other_json),
        ("state", &"running"),
        ("owner_pid", &1_i64),
        ("created_at_ms", &7_i64),
        ("tag", &None::<Vec<u8>>),
    ];
    for (column, value) in edits {
        s.save(&sample("x", 1)).await.unwrap();
        edit(&s, column, value);
        let reason = damage_of(s.claim("x").await.unwrap_err());
        assert!(reason.contains("integrity tag"), "{column}: {reason}");
        assert!(s.list().await.unwrap().is_empty(), "{column}");
    }
    // A row written by a store with another key is refused too.
    s.save(&sample("x", 1)).await.unwrap();
    let other_key = SqliteStore::open_with_key(s.path(), b"another key").unwrap();
    assert!(damage_of(other_key.claim("x").await.unwrap_err()).contains("integrity tag"));
    assert!(s.claim("x").await.unwrap().is_some(), "the right key still reads it");
}

#[tokio::test]
async fn an_unknown_state_and_mismatched_columns_are_damage() {
    let (_dir, s) = store();
    s.save(&sample("x", 1)).await.unwrap();
    s.conn().pragma_update(None, "ignore_check_constraints", true).unwrap();
    edit(&s, "state", "exploded");
    assert!(damage_of(s.claim("x").await.unwrap_err()).contains("`exploded`"));
    s.save(&sample("x", 1)).await.unwrap();
    edit(&s, "tool_name", "delete-everything");
    assert!(damage_of(s.get("x").await.unwrap_err()).contains("disagree"));
    s.save(&sample("x", 1)).await.unwrap();
    edit(&s, "created_at_ms", "soon");
    assert!(damage_of(s.get("x").await.unwrap_err()).contains("integrity tag"));
}

#[tokio::test]
async fn rows_from_before_tags_are_accepted_once() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("pending.sqlite3");
    let old = Connection::open(&path).unwrap();
    old.execute_batch(SCHEMA_V1).unwrap();
    let json = serde_json::to_string(&sample("old", 1)).unwrap();
    let insert = "INSERT INTO pending_calls (tool_call_id, tool_name, kind, call_json, created_at_ms) VALUES ('old', 'write-file', 'suspended', ?1, 1)";
    old.execute(insert, [&json]).unwrap();
    old.pragma_update(None, "user_version", 1).unwrap();
    drop(old);
    let s = SqliteStore::open_with_key(&path, b"k").unwrap();
    assert_eq!(s.get("old").await.unwrap().unwrap(), sample("old", 1), "tagged on upgrade");
    let version: i64 = s.conn().pragma_query_value(None, "user_version", |r| r.get(0)).unwrap();
    assert_eq!(version, SCHEMA_VERSION);
    edit(&s, "tag", None::<Vec<u8>>);
    drop(s);
    let s = SqliteStore::open_with_key(&path, b"k").unwrap();
    assert!(
        damage_of_id(s.get("old").await.unwrap_err()).contains("no integrity tag"),
        "only once"
    );
}

fn damage_of_id(err: StoreError) -> String {
    let StoreError::Damaged { reason, .. } = err else {
        panic!("not damaged: {err}")
    };
    reason
}

#[tokio::test]
async fn a_missing_directory_is_an_error_and_the_key_file_is_private() {
    let dir = tempfile::tempdir().unwrap();
    let missing = dir.path().join("nonexistent/dir/x.sqlite3");
    let err = SqliteStore::open(&missing).unwrap_err().to_string();
    assert!(err.contains("does not exist") && err.contains("nonexistent"), "{err}");
    assert!(!dir.path().join("nonexistent").exists(), "no directory was created");
    let (_dir, s) = store();
    let key = key_file::key_path(s.path());
    assert_eq!(key.file_name().unwrap(), "pending.sqlite3.key");
    assert_eq!(std::fs::read(&key).unwrap().len(), 32);
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        assert_eq!(std::fs::metadata(&key).unwrap().permissions().mode() & 0o777, 0o600);
    }
    s.save(&sample("x", 1)).await.unwrap();
    let again = SqliteStore::open(s.path()).unwrap();
    assert!(again.get("x").await.unwrap().is_some(), "the key file is reused");
    std::fs::write(&key, b"a new key").unwrap();
    let rekeyed = SqliteStore::open(s.path()).unwrap();
    assert!(damage_of(rekeyed.get("x").await.unwrap_err()).contains("key changed"));
}

#[tokio::test]
async fn default_path_honours_toolsmith_data_dir() {
    // The variable's value is passed in: setting it would race the other tests of the binary.
    let set = super::default_path_in(Some("/tmp/toolsmith-test-data".into()));
    assert_eq!(set, Some(PathBuf::from("/tmp/toolsmith-test-data/pending.sqlite3")));
    let unset = dirs::data_dir().map(|d| d.join("toolsmith/pending.sqlite3"));
    assert_eq!(super::default_path_in(None), unset);
    assert_eq!(super::default_path_in(Some("".into())), unset);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn one_of_many_concurrent_claimers_wins() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("pending.sqlite3");
    let barrier = std::sync::Arc::new(tokio::sync::Barrier::new(8));
    let claimers = (0..8).map(|_| {
        let (path, barrier) = (path.clone(), barrier.clone());
        tokio::spawn(async move {
            // Every task reaches the barrier, whatever happens before it (no hang on failure).
            let opened = match SqliteStore::open(&path) {
                Ok(s) => s.save(&sample("x", 1)).await.map(|()| s),
                Err(e) => Err(e),
            };
            barrier.wait().await;
            opened.unwrap().claim("x").await
        })
    });
    let mut results = Vec::new();
    for claimer in claimers.collect::<Vec<_>>() {
        results.push(claimer.await.unwrap());
    }
    assert_eq!(results.iter().filter(|r| matches!(r, Ok(Some(_)))).count(), 1);
    assert_eq!(results.iter().filter(|r| matches!(r, Err(StoreError::Busy(_)))).count(), 7);
}

#[test]
fn a_storage_failure_keeps_the_drivers_error() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("not-a-database.sqlite3");
    std::fs::write(&path, vec![b'x'; 4096]).unwrap();
    let err = SqliteStore::open(&path).unwrap_err();
    let source = std::error::Error::source(&err).unwrap_or_else(|| panic!("the driver's error is not kept: {err:?}"));
    assert!(source.downcast_ref::<rusqlite::Error>().is_some(), "{source:?}");
    assert!(matches!(err, StoreError::Storage { .. }), "{err:?}");
    assert!(err.to_string().contains("not a database"), "{err}");
}
