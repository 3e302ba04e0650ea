//! The SQLite pending-call store: pending calls in one file that outlives the process.
//!
//! Owns [`SqliteStore`], a [`PendingStore`] keeping one row per call in a SQLite file (WAL,
//! `synchronous=FULL`, readable by its owner only) that several processes may share. A claim
//! records the claiming process; a claim whose process has died is claimable again, so a call
//! survives the process running it being killed. The call itself is stored as JSON, so new
//! [`PendingCall`] fields need no migration.

use std::fmt;
use std::path::{Path, PathBuf};
use std::sync::{Mutex, MutexGuard, PoisonError};
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use rusqlite::TransactionBehavior::Immediate;
use rusqlite::{params, Connection, OptionalExtension};

use super::pending::{PendingCall, PendingStore, StoreError};

/// The schema this build writes, kept in `PRAGMA user_version`.
const SCHEMA_VERSION: i64 = 1;

/// One row per call; `call_json` is the whole [`PendingCall`]. `owner_start` tells a claiming
/// process from a later one given the same pid (Linux).
const SCHEMA: &str = "CREATE TABLE IF NOT EXISTS pending_calls (
    tool_call_id TEXT PRIMARY KEY NOT NULL, tool_name TEXT NOT NULL, kind TEXT NOT NULL, call_json TEXT NOT NULL,
    created_at_ms INTEGER NOT NULL, state TEXT NOT NULL DEFAULT 'waiting' CHECK (state IN ('waiting', 'running')),
    owner_pid INTEGER, owner_start TEXT, claimed_at_ms INTEGER);
CREATE INDEX IF NOT EXISTS pending_calls_by_age ON pending_calls (created_at_ms, tool_call_id);";

/// Pending calls in a SQLite file shared by every process that opens it.
///
/// Each store holds one connection; stores on the same file, in one process or several,
/// coordinate through SQLite's locks.
pub struct SqliteStore {
    path: PathBuf,
    conn: Mutex<Connection>,
}

/// Turns a rusqlite error into [`StoreError::Storage`] saying what was being done. rusqlite's
/// messages name columns and SQLite codes, never stored values.
trait OrStorage<T> {
    fn or_storage(self, what: &str) -> Result<T, StoreError>;
}

impl<T> OrStorage<T> for rusqlite::Result<T> {
    fn or_storage(self, what: &str) -> Result<T, StoreError> {
        self.map_err(|e| StoreError::Storage(format!("{what}: {e}")))
    }
}

/// Decodes a stored call. The error says what went wrong, never the stored text (it may hold
/// credentials).
fn decode(id: &str, json: &str) -> Result<PendingCall, StoreError> {
    serde_json::from_str(json).map_err(|e| {
        let (kind, line, column) = (e.classify(), e.line(), e.column());
        StoreError::Storage(format!("call `{id}` has unreadable JSON ({kind:?} error at {line}:{column})"))
    })
}

fn now_ms() -> i64 {
    let since_epoch = SystemTime::now().duration_since(UNIX_EPOCH).unwrap_or_default();
    i64::try_from(since_epoch.as_millis()).unwrap_or(i64::MAX)
}

/// Creates `path` and its missing directories, readable by the owner only on unix (and makes an
/// existing file so too).
fn create_private_file(path: &Path) -> std::io::Result<()> {
    if let Some(dir) = path.parent().filter(|d| !d.as_os_str().is_empty()) {
        let mut builder = std::fs::DirBuilder::new();
        builder.recursive(true);
        #[cfg(unix)]
        std::os::unix::fs::DirBuilderExt::mode(&mut builder, 0o700);
        builder.create(dir)?;
    }
    let mut options = std::fs::OpenOptions::new();
    options.create(true).append(true);
    #[cfg(unix)]
    std::os::unix::fs::OpenOptionsExt::mode(&mut options, 0o600);
    options.open(path)?;
    #[cfg(unix)]
    std::fs::set_permissions(path, std::os::unix::fs::PermissionsExt::from_mode(0o600))?;
    Ok(())
}

/// [`setup`], retried while another connection holds the lock: switching to WAL does not wait
/// on the busy handler, so processes opening the file at once could otherwise fail.
fn prepare(conn: &mut Connection) -> rusqlite::Result<(String, i64)> {
    let deadline = std::time::Instant::now() + Duration::from_secs(5);
    loop {
        match setup(conn) {
            Err(rusqlite::Error::SqliteFailure(e, _))
                if matches!(e.code, rusqlite::ErrorCode::DatabaseBusy | rusqlite::ErrorCode::DatabaseLocked)
                    && std::time::Instant::now() < deadline =>
            {
                std::thread::sleep(Duration::from_millis(5));
            }
            other => return other,
        }
    }
}

/// Sets the connection up and creates the schema if missing; returns the journal mode in force
/// and the schema version found.
fn setup(conn: &mut Connection) -> rusqlite::Result<(String, i64)> {
    conn.busy_timeout(Duration::from_secs(5))?;
    let mode: String = conn.pragma_update_and_check(None, "journal_mode", "WAL", |r| r.get(0))?;
    conn.pragma_update(None, "synchronous", "FULL")?;
    let tx = conn.transaction_with_behavior(Immediate)?;
    let version: i64 = tx.pragma_query_value(None, "user_version", |r| r.get(0))?;
    if version < SCHEMA_VERSION {
        tx.execute_batch(SCHEMA)?;
        tx.pragma_update(None, "user_version", SCHEMA_VERSION)?;
    }
    tx.commit()?;
    Ok((mode, version))
}

impl SqliteStore {
    /// Opens (creating it and its directories if missing) the store file at `path`: owner-only
    /// permissions on unix, WAL, `synchronous=FULL`, a 5 s busy timeout, and the schema.
    pub fn open(path: impl AsRef<Path>) -> Result<Self, StoreError> {
        let path = path.as_ref().to_path_buf();
        let shown = path.display();
        create_private_file(&path).map_err(|e| StoreError::Storage(format!("cannot create {shown}: {e}")))?;
        let mut conn = Connection::open(&path).or_storage(&format!("cannot open {shown}"))?;
        let (mode, version) = prepare(&mut conn).or_storage(&format!("cannot set up {shown}"))?;
        if version > SCHEMA_VERSION {
            return Err(StoreError::Storage(format!("{shown} has a newer schema (version {version})")));
        }
        if !mode.eq_ignore_ascii_case("wal") {
            tracing::warn!(path = %shown, journal_mode = %mode, "the pending-call store could not use WAL");
        }
        let conn = Mutex::new(conn);
        Ok(Self { path, conn })
    }

    /// Where the store lives by default: `$TOOLSMITH_DATA_DIR/pending.sqlite3` when that is set,
    /// else `toolsmith/pending.sqlite3` in the user's data directory; `None` when neither is known.
    pub fn default_path() -> Option<PathBuf> {
        let dir = match std::env::var_os("TOOLSMITH_DATA_DIR").filter(|d| !d.is_empty()) {
            Some(dir) => PathBuf::from(dir),
            None => dirs::data_dir()?.join("toolsmith"),
        };
        Some(dir.join("pending.sqlite3"))
    }

    /// Opens the store at [`default_path`](Self::default_path).
    pub fn open_default() -> Result<Self, StoreError> {
        let no_dir = || StoreError::Storage("no data directory is known; set TOOLSMITH_DATA_DIR".to_owned());
        Self::open(Self::default_path().ok_or_else(no_dir)?)
    }

    /// The store file.
    pub fn path(&self) -> &Path {
        &self.path
    }

    fn conn(&self) -> MutexGuard<'_, Connection> {
        self.conn.lock().unwrap_or_else(PoisonError::into_inner)
    }
}

impl fmt::Debug for SqliteStore {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("SqliteStore").field("path", &self.path).finish_non_exhaustive()
    }
}

const SAVE: &str = "INSERT OR REPLACE INTO pending_calls (tool_call_id, tool_name, kind, call_json, created_at_ms, state)
    VALUES (?1, ?2, ?3, ?4, ?5, 'waiting')";
const CLAIMED: &str = "SELECT call_json, state, owner_pid, owner_start FROM pending_calls WHERE tool_call_id = ?1";
const CLAIM: &str =
    "UPDATE pending_calls SET state = 'running', owner_pid = ?2, owner_start = ?3, claimed_at_ms = ?4 WHERE tool_call_id = ?1";
const RELEASE: &str =
    "UPDATE pending_calls SET state = 'waiting', owner_pid = NULL, owner_start = NULL, claimed_at_ms = NULL WHERE tool_call_id = ?1";
const REMOVE: &str = "DELETE FROM pending_calls WHERE tool_call_id = ?1";
const GET: &str = "SELECT call_json FROM pending_calls WHERE tool_call_id = ?1";
const LIST: &str = "SELECT tool_call_id, call_json FROM pending_calls ORDER BY created_at_ms, tool_call_id";

impl PendingStore for SqliteStore {
    fn save(&self, call: &PendingCall) -> Result<(), StoreError> {
        let id = &call.tool_call_id;
        let encode_failed = |e: serde_json::Error| StoreError::Storage(format!("cannot encode call `{id}` ({:?})", e.classify()));
        let json = serde_json::to_string(call).map_err(encode_failed)?;
        let created = i64::try_from(call.created_at_ms).unwrap_or(i64::MAX);
        let row = params![id, call.tool_name, call.kind.as_str(), json, created];
        self.conn().execute(SAVE, row).or_storage("cannot save a call").map(drop)
    }

    fn claim(&self, tool_call_id: &str) -> Result<Option<PendingCall>, StoreError> {
        const FAILED: &str = "cannot claim a call";
        let mut conn = self.conn();
        let tx = conn.transaction_with_behavior(Immediate).or_storage(FAILED)?;
        let row: Option<(String, String, Option<i64>, Option<String>)> = tx
            .query_row(CLAIMED, [tool_call_id], |r| Ok((r.get(0)?, r.get(1)?, r.get(2)?, r.get(3)?)))
            .optional()
            .or_storage(FAILED)?;
        let Some((json, state, owner, start)) = row else { return Ok(None) };
        if state == "running" {
            if owner_alive(owner, start.as_deref()) {
                return Err(StoreError::Busy(tool_call_id.to_owned()));
            }
            tracing::info!(tool_call_id, owner_pid = ?owner, "claiming a call whose claiming process has ended");
        }
        let call = decode(tool_call_id, &json)?;
        let me = std::process::id();
        let owner = params![tool_call_id, me, process_stat(me).map(|(_, start)| start), now_ms()];
        tx.execute(CLAIM, owner).or_storage(FAILED)?;
        tx.commit().or_storage(FAILED)?;
        Ok(Some(call))
    }

    fn release(&self, tool_call_id: &str) -> Result<(), StoreError> {
        let released = self.conn().execute(RELEASE, [tool_call_id]);
        released.or_storage("cannot release a call").map(drop)
    }

    fn remove(&self, tool_call_id: &str) -> Result<(), StoreError> {
        let removed = self.conn().execute(REMOVE, [tool_call_id]);
        removed.or_storage("cannot remove a call").map(drop)
    }

    fn get(&self, tool_call_id: &str) -> Result<Option<PendingCall>, StoreError> {
        let found = self.conn().query_row(GET, [tool_call_id], |r| r.get::<_, String>(0)).optional();
        let json = found.or_storage("cannot read a call")?;
        json.map(|json| decode(tool_call_id, &json)).transpose()
    }

    fn list(&self) -> Result<Vec<PendingCall>, StoreError> {
        let rows: Vec<(String, String)> = {
            let conn = self.conn();
            let mut stmt = conn.prepare(LIST).or_storage("cannot list calls")?;
            let rows = stmt.query_map([], |r| Ok((r.get(0)?, r.get(1)?))).or_storage("cannot list calls")?;
            rows.collect::<Result<_, _>>().or_storage("cannot list calls")?
        };
        rows.iter().map(|(id, json)| decode(id, json)).collect()
    }
}

/// Whether the process that claimed a call is still running. No pid (or one that cannot be a
/// process id) means nobody holds the call.
fn owner_alive(pid: Option<i64>, start: Option<&str>) -> bool {
    let pid = pid.and_then(|p| u32::try_from(p).ok()).filter(|&p| p > 0);
    pid.is_some_and(|pid| process_alive(pid, start))
}

/// A process's state letter and start time (clock ticks after boot, which tells it from a later
/// process given the same pid), from `/proc/<pid>/stat`.
#[cfg(target_os = "linux")]
fn process_stat(pid: u32) -> Option<(char, String)> {
    let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).ok()?;
    // The command name (field 2) may hold spaces and parentheses: count fields after the last `)`.
    let mut fields = stat.get(stat.rfind(')')? + 1..)?.split_whitespace();
    let state = fields.next()?.chars().next()?;
    Some((state, fields.nth(18)?.to_owned()))
}

#[cfg(not(target_os = "linux"))]
fn process_stat(_pid: u32) -> Option<(char, String)> {
    None
}

#[cfg(target_os = "linux")]
fn process_alive(pid: u32, start: Option<&str>) -> bool {
    match process_stat(pid) {
        // Without procfs nothing can be told: holding the call beats running it twice.
        None => !Path::new("/proc/self").exists(),
        Some(('Z' | 'X' | 'x', _)) => false,
        Some((_, now)) => start.is_none_or(|s| s == now),
    }
}

#[cfg(all(unix, not(target_os = "linux")))]
fn process_alive(pid: u32, _start: Option<&str>) -> bool {
    let Ok(pid) = libc::pid_t::try_from(pid) else { return false };
    // SAFETY: signal 0 sends nothing; it only asks whether the process exists.
    let status = unsafe { libc::kill(pid, 0) };
    status == 0 || std::io::Error::last_os_error().raw_os_error() == Some(libc::EPERM)
}

/// Elsewhere liveness cannot be checked: a claim is held until released (never run twice).
#[cfg(not(unix))]
fn process_alive(_pid: u32, _start: Option<&str>) -> bool {
    true
}

#[cfg(test)]
mod tests {
    use super::super::pending::PendingKind;
    use super::*;
    use serde_json::json;

    fn sample(id: &str, at: u64) -> PendingCall {
        let call = json!({"tool_call_id": id, "tool_name": "write-file", "kind": "suspended", "args": {"path": "a.txt"},
                          "suspend_payload": {"path": "a.txt"}, "created_at_ms": at});
        serde_json::from_value(call).unwrap()
    }

    fn store() -> (tempfile::TempDir, SqliteStore) {
        let dir = tempfile::tempdir().unwrap();
        let store = SqliteStore::open(dir.path().join("nested/dir/pending.sqlite3")).unwrap();
        (dir, store)
    }

    fn set_running(store: &SqliteStore, id: &str, pid: i64, start: Option<&str>) {
        let sql = "UPDATE pending_calls SET state = 'running', owner_pid = ?2, owner_start = ?3 WHERE tool_call_id = ?1";
        assert_eq!(store.conn().execute(sql, params![id, pid, start]).unwrap(), 1);
    }

    fn busy<T>(result: Result<T, StoreError>) -> bool {
        matches!(result, Err(StoreError::Busy(_)))
    }

    #[test]
    fn every_field_round_trips() {
        let (_dir, s) = store();
        let full: PendingCall = serde_json::from_value(json!({"tool_call_id": "full", "tool_name": "pay", "kind": "approval",
            "args": {"n": 1}, "context": {"api_key": "sk-1"}, "thread_id": "t1", "resource_id": "user-9", "created_at_ms": u64::MAX,
            "messages": [{"role": "user", "content": "hi ✓"}], "suspend_payload": [1], "resume_schema": {"type": "object"}}))
        .unwrap();
        assert!(full.kind == PendingKind::Approval && full.resume_schema.is_some() && !full.data.messages.is_empty());
        let mut bare = sample("bare", 3);
        bare.suspend_payload = None;
        s.save(&full).unwrap();
        s.save(&bare).unwrap();
        assert_eq!(s.get("full").unwrap().unwrap(), full);
        assert_eq!(s.get("bare").unwrap().unwrap(), bare);
        assert_eq!(s.list().unwrap(), [bare, full]);
        assert!(s.get("nope").unwrap().is_none());
        assert!(format!("{s:?}").contains("pending.sqlite3"));
    }

    #[test]
    fn claim_is_exclusive_and_release_reopens() {
        let (_dir, s) = store();
        for (id, at) in [("b", 2), ("a", 1), ("c", 1)] {
            s.save(&sample(id, at)).unwrap();
        }
        let ids: Vec<String> = s.list().unwrap().into_iter().map(|c| c.tool_call_id).collect();
        assert_eq!(ids, ["a", "c", "b"]);
        assert_eq!(s.claim("a").unwrap().unwrap(), sample("a", 1));
        assert!(matches!(s.claim("a"), Err(StoreError::Busy(id)) if id == "a"));
        assert!(s.get("a").unwrap().is_some(), "a running call is still there");
        s.release("a").unwrap();
        assert!(s.claim("a").unwrap().is_some());
        s.save(&sample("a", 1)).unwrap();
        assert!(s.claim("a").unwrap().is_some(), "save puts a call back to waiting");
        s.remove("a").unwrap();
        assert!(s.claim("a").unwrap().is_none());
        s.release("unknown").unwrap();
        s.remove("unknown").unwrap();
        assert!(s.claim("unknown").unwrap().is_none());
        assert!(s.get("b").unwrap().is_some());
    }

    #[test]
    fn stores_on_one_file_share_rows_and_claims_and_rows_survive_reopening() {
        let (_dir, one) = store();
        let two = SqliteStore::open(one.path()).unwrap();
        one.save(&sample("x", 1)).unwrap();
        one.save(&sample("y", 2)).unwrap();
        assert_eq!(two.get("x").unwrap().unwrap(), sample("x", 1));
        assert!(two.claim("x").unwrap().is_some());
        assert!(busy(one.claim("x")));
        two.remove("x").unwrap();
        let path = one.path().to_path_buf();
        drop((one, two));
        assert_eq!(SqliteStore::open(&path).unwrap().list().unwrap(), [sample("y", 2)]);
    }

    #[cfg(unix)]
    #[test]
    fn a_claim_by_an_ended_process_is_claimable_again() {
        let (_dir, s) = store();
        s.save(&sample("x", 1)).unwrap();
        let mut child = std::process::Command::new("sleep").arg("30").spawn().unwrap();
        let pid = i64::from(child.id());
        set_running(&s, "x", pid, process_stat(child.id()).map(|(_, start)| start).as_deref());
        assert!(busy(s.claim("x")), "another live process holds the call");
        child.kill().unwrap();
        child.wait().unwrap();
        let mut ended = std::process::Command::new("true").spawn().unwrap();
        let ended_pid = i64::from(ended.id());
        ended.wait().unwrap();
        for pid in [pid, ended_pid, -1, 0, i64::from(u32::MAX) + 1] {
            set_running(&s, "x", pid, None);
            assert!(s.claim("x").unwrap().is_some(), "pid {pid}");
        }
        let me = i64::from(std::process::id());
        set_running(&s, "x", me, None);
        assert!(busy(s.claim("x")), "a call running in this process is busy");
        if cfg!(target_os = "linux") {
            set_running(&s, "x", me, Some("1"));
            assert!(s.claim("x").unwrap().is_some(), "a reused pid does not hold the claim");
            assert!(busy(s.claim("x")), "our claim records our start time");
        }
    }

    #[cfg(unix)]
    #[test]
    fn the_file_is_readable_by_its_owner_only() {
        use std::os::unix::fs::PermissionsExt;
        let (_dir, s) = store();
        let mode = |p: &Path| std::fs::metadata(p).unwrap().permissions().mode() & 0o777;
        assert_eq!(mode(s.path()), 0o600);
        std::fs::set_permissions(s.path(), std::fs::Permissions::from_mode(0o644)).unwrap();
        assert_eq!(mode(SqliteStore::open(s.path()).unwrap().path()), 0o600);
    }

    #[test]
    fn corrupt_json_is_a_storage_error_that_hides_the_text() {
        let (_dir, s) = store();
        s.save(&sample("x", 1)).unwrap();
        for bad in [r#"{"secret": "sk-1""#, r#"{"tool_call_id": "sk-1"}"#, r#"{"args": "sk-1"}"#] {
            s.conn().execute("UPDATE pending_calls SET call_json = ?1", [bad]).unwrap();
            for err in [s.get("x").unwrap_err(), s.list().unwrap_err(), s.claim("x").unwrap_err()] {
                let StoreError::Storage(message) = err else { panic!("{err}") };
                assert!(message.contains("`x`") && !message.contains("sk-1"), "{message}");
            }
        }
    }

    #[test]
    fn default_path_honours_toolsmith_data_dir() {
        std::env::set_var("TOOLSMITH_DATA_DIR", "/tmp/toolsmith-test-data");
        let set = SqliteStore::default_path();
        std::env::remove_var("TOOLSMITH_DATA_DIR");
        assert_eq!(set, Some(PathBuf::from("/tmp/toolsmith-test-data/pending.sqlite3")));
        let unset = dirs::data_dir().map(|d| d.join("toolsmith/pending.sqlite3"));
        assert_eq!(SqliteStore::default_path(), unset);
    }

    #[test]
    fn one_of_many_concurrent_claimers_wins() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("pending.sqlite3");
        let barrier = std::sync::Barrier::new(8);
        let claimer = || {
            // Every thread reaches the barrier, whatever happens before it (no hang on failure).
            let opened = SqliteStore::open(&path).and_then(|s| s.save(&sample("x", 1)).map(|()| s));
            barrier.wait();
            opened.unwrap().claim("x")
        };
        let results: Vec<_> = std::thread::scope(|scope| {
            let threads: Vec<_> = (0..8).map(|_| scope.spawn(claimer)).collect();
            threads.into_iter().map(|t| t.join().unwrap()).collect()
        });
        assert_eq!(results.iter().filter(|r| matches!(r, Ok(Some(_)))).count(), 1);
        assert_eq!(results.iter().filter(|r| matches!(r, Err(StoreError::Busy(_)))).count(), 7);
    }
}
