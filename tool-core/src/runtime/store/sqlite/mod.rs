//! The SQLite pending-call store: pending calls in one file that outlives the process.
//!
//! Owns [`SqliteStore`], a [`PendingStore`] keeping one row per call in a SQLite file (WAL,
//! `synchronous=FULL`, readable by its owner only) that several processes may share. rusqlite
//! blocks, so every operation runs on Tokio's blocking pool, never on an async worker. A claim
//! records the claiming process; a running call whose process has died is *interrupted*
//! (listed with what is known, run again only by an explicit `claim_again`), so a call is never
//! lost and never run twice silently. Every row carries an integrity tag checked before use
//! (`store::integrity`, its key from the environment or `key_file`); a row that fails a check is listed as damaged and skipped (`row`). The call
//! itself is stored as JSON, so new [`PendingCall`] fields need no migration.
//!
//! Rows written before integrity tags (schema version 1) are accepted once: opening such a file
//! tags them, with a warning, and from then on a row without a tag is damaged.

mod audit;
pub(super) mod key_file;
mod owner;
mod receipts;
mod results;
mod row;
mod tasks;

use std::fmt;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex, MutexGuard, PoisonError};
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use rusqlite::TransactionBehavior::Immediate;
use rusqlite::{Connection, OptionalExtension, params};

use super::checks;
use super::integrity::{self, Key};
use super::{PendingStore, StoreError, StorePart, interrupted};
use crate::runtime::pending::PendingCall;
use crate::runtime::state::{CallState, Claim, StoredCall};
use owner::process_stat;
use row::{COLUMNS, Row};

/// The schema this build writes, kept in `PRAGMA user_version`.
const SCHEMA_VERSION: i64 = 6;

/// One row per call; `call_json` is the whole [`PendingCall`]. `owner_start` tells a claiming
/// process from a later one given the same pid (Linux). Version 1's table; version 2 adds `tag`.
const SCHEMA_V1: &str = "CREATE TABLE IF NOT EXISTS pending_calls (
    tool_call_id TEXT PRIMARY KEY NOT NULL, tool_name TEXT NOT NULL, kind TEXT NOT NULL, call_json TEXT NOT NULL,
    created_at_ms INTEGER NOT NULL, state TEXT NOT NULL DEFAULT 'waiting' CHECK (state IN ('waiting', 'running')),
    owner_pid INTEGER, owner_start TEXT, claimed_at_ms INTEGER);
CREATE INDEX IF NOT EXISTS pending_calls_by_age ON pending_calls (created_at_ms, tool_call_id);";

/// Pending calls in a SQLite file shared by every process that opens it.
///
/// Each store holds one connection; stores on the same file, in one process or several,
/// coordinate through SQLite's locks. Its rows are tagged with a key kept outside the file: the
/// environment variable [`SqliteStore::KEY_ENV`], else a key file next to the database
/// (`pending.sqlite3.key`, mode 0600, created on first open), or the key given to
/// [`SqliteStore::open_with_key`].
pub struct SqliteStore {
    path: PathBuf,
    db: Arc<Db>,
}

/// The connection and the key: what the blocking pool works on.
struct Db {
    conn: Mutex<Connection>,
    key: Key,
}

/// Turns a rusqlite error into [`StoreError::Storage`] saying what was being done. rusqlite's
/// messages name columns and SQLite codes, never stored values.
trait OrStorage<T> {
    fn or_storage(self, part: StorePart, what: &str) -> Result<T, StoreError>;
}

impl<T> OrStorage<T> for rusqlite::Result<T> {
    fn or_storage(self, part: StorePart, what: &str) -> Result<T, StoreError> {
        self.map_err(|e| StoreError::storage_caused_by(part, format!("{what}: {e}"), e))
    }
}

fn now_ms() -> i64 {
    let since_epoch = SystemTime::now().duration_since(UNIX_EPOCH).unwrap_or_default();
    i64::try_from(since_epoch.as_millis()).unwrap_or(i64::MAX)
}

/// Creates `path` if missing, readable by the owner only on unix (and makes an existing file so
/// too). Its directory must exist: a mistyped path is an error, not a new directory tree.
pub(crate) fn create_private_file(path: &Path) -> Result<(), String> {
    if let Some(dir) = path.parent().filter(|d| !d.as_os_str().is_empty())
        && !dir.is_dir()
    {
        return Err(format!(
            "the directory {} does not exist; create it first (only the default data directory is created on demand)",
            dir.display()
        ));
    }
    let mut options = std::fs::OpenOptions::new();
    options.create(true).append(true);
    #[cfg(unix)]
    std::os::unix::fs::OpenOptionsExt::mode(&mut options, 0o600);
    let made = options.open(path).map(drop);
    #[cfg(unix)]
    let made = made.and_then(|()| std::fs::set_permissions(path, std::os::unix::fs::PermissionsExt::from_mode(0o600)));
    made.map_err(|e| format!("cannot create {}: {e}", path.display()))
}

/// [`setup`], retried while another connection holds the lock: switching to WAL does not wait
/// on the busy handler, so processes opening the file at once could otherwise fail.
fn prepare(conn: &mut Connection, key: &Key) -> rusqlite::Result<(String, i64)> {
    let deadline = std::time::Instant::now() + Duration::from_secs(5);
    loop {
        match setup(conn, key) {
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

/// Sets the connection up and creates or migrates the schema; returns the journal mode in force
/// and the schema version found. Rows of version 1 (before integrity tags) are tagged once.
fn setup(conn: &mut Connection, key: &Key) -> rusqlite::Result<(String, i64)> {
    conn.busy_timeout(Duration::from_secs(5))?;
    let mode: String = conn.pragma_update_and_check(None, "journal_mode", "WAL", |r| r.get(0))?;
    conn.pragma_update(None, "synchronous", "FULL")?;
    let tx = conn.transaction_with_behavior(Immediate)?;
    let version: i64 = tx.pragma_query_value(None, "user_version", |r| r.get(0))?;
    if version < 1 {
        tx.execute_batch(SCHEMA_V1)?;
    }
    if version < 2 {
        tx.execute_batch("ALTER TABLE pending_calls ADD COLUMN tag BLOB")?;
        let old = read_rows(&tx, "")?;
        if !old.is_empty() {
            tracing::warn!(
                rows = old.len(),
                "tagging pending calls stored before integrity tags (accepted this once)"
            );
        }
        for row in old {
            write_row(&tx, row, key)?;
        }
    }
    if version < 3 {
        // 3: the receipts of tools declared idempotent (`receipts`).
        tx.execute_batch(receipts::SCHEMA_V3)?;
    }
    if version < 4 {
        // 4: the background-task queue (`tasks`).
        tx.execute_batch(tasks::SCHEMA_V4)?;
    }
    if version < 5 {
        // 5: the full results of cut calls, kept for their callers (`results`).
        tx.execute_batch(results::SCHEMA_V5)?;
    }
    if version < 6 {
        // 6: the audit trail of decisions (`audit`).
        tx.execute_batch(audit::SCHEMA_V6)?;
    }
    if version < SCHEMA_VERSION {
        tx.pragma_update(None, "user_version", SCHEMA_VERSION)?;
    }
    tx.commit()?;
    Ok((mode, version))
}

/// The rows, oldest first (`filter`: a `WHERE` clause binding nothing, or empty).
fn read_rows(conn: &Connection, filter: &str) -> rusqlite::Result<Vec<Row>> {
    let sql = format!("SELECT {COLUMNS} FROM pending_calls {filter} ORDER BY created_at_ms, tool_call_id");
    let mut stmt = conn.prepare(&sql)?;
    let rows = stmt.query_map([], Row::read)?;
    rows.collect()
}

fn read_row(conn: &Connection, id: &str) -> rusqlite::Result<Option<Row>> {
    let sql = format!("SELECT {COLUMNS} FROM pending_calls WHERE tool_call_id = ?1");
    conn.query_row(&sql, [id], Row::read).optional()
}

/// Writes a row (insert or replace) with its fresh tag.
fn write_row(conn: &Connection, mut row: Row, key: &Key) -> rusqlite::Result<()> {
    row.tag = Some(row.compute_tag(key));
    let sql = format!("INSERT OR REPLACE INTO pending_calls ({COLUMNS}) VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10)");
    let Row {
        id,
        tool_name,
        kind,
        json,
        created_at_ms,
        state,
        owner_pid,
        owner_start,
        claimed_at_ms,
        tag,
    } = row;
    let values = params![
        id,
        tool_name,
        kind,
        json,
        created_at_ms,
        state,
        owner_pid,
        owner_start,
        claimed_at_ms,
        tag
    ];
    conn.execute(&sql, values).map(drop)
}

impl SqliteStore {
    /// The environment variable that gives the integrity key (its bytes), instead of the key
    /// file next to the database.
    pub const KEY_ENV: &'static str = integrity::KEY_ENV;

    /// Opens (creating it if missing) the store file at `path`, whose directory must exist:
    /// owner-only permissions on unix, WAL, `synchronous=FULL`, a 5 s busy timeout, the schema,
    /// and the integrity key ([`KEY_ENV`](Self::KEY_ENV), else the key file next to it,
    /// created when missing).
    pub fn open(path: impl AsRef<Path>) -> Result<Self, StoreError> {
        Self::open_keyed(path.as_ref(), None)
    }

    /// [`open`](Self::open) with the integrity key given by the program (kept wherever it
    /// keeps secrets) instead of the environment or a key file.
    pub fn open_with_key(path: impl AsRef<Path>, key: &[u8]) -> Result<Self, StoreError> {
        let key = Key::from_bytes(key).map_err(|e| StoreError::storage_of(StorePart::Store, e))?;
        Self::open_keyed(path.as_ref(), Some(key))
    }

    fn open_keyed(path: &Path, key: Option<Key>) -> Result<Self, StoreError> {
        let path = path.to_path_buf();
        let shown = path.display();
        create_private_file(&path).map_err(|e| StoreError::storage_of(StorePart::Store, format!("cannot open {shown}: {e}")))?;
        let mut conn = Connection::open(&path).or_storage(StorePart::Store, &format!("cannot open {shown}"))?;
        let key = match key {
            Some(key) => key,
            None => key_file::load(&path, &conn)?,
        };
        let (mode, version) = prepare(&mut conn, &key).or_storage(StorePart::Store, &format!("cannot set up {shown}"))?;
        if version > SCHEMA_VERSION {
            return Err(StoreError::storage_of(
                StorePart::Store,
                format!("{shown} has a newer schema (version {version})"),
            ));
        }
        if !mode.eq_ignore_ascii_case("wal") {
            tracing::warn!(path = %shown, journal_mode = %mode, "the pending-call store could not use WAL");
        }
        let conn = Mutex::new(conn);
        Ok(Self {
            path,
            db: Arc::new(Db { conn, key }),
        })
    }

    /// Where the store lives by default: `$TOOLSMITH_DATA_DIR/pending.sqlite3` when that is set,
    /// else `toolsmith/pending.sqlite3` in the user's data directory; `None` when neither is known.
    pub fn default_path() -> Option<PathBuf> {
        default_path_in(std::env::var_os("TOOLSMITH_DATA_DIR"))
    }

    /// Opens the store at [`default_path`](Self::default_path), creating its directory (owner
    /// only) when missing: the one directory the store creates on demand.
    pub fn open_default() -> Result<Self, StoreError> {
        let no_dir = || StoreError::storage_of(StorePart::Store, "no data directory is known; set TOOLSMITH_DATA_DIR");
        let path = Self::default_path().ok_or_else(no_dir)?;
        if let Some(dir) = path.parent() {
            let mut builder = std::fs::DirBuilder::new();
            builder.recursive(true);
            #[cfg(unix)]
            std::os::unix::fs::DirBuilderExt::mode(&mut builder, 0o700);
            let made = builder.create(dir);
            made.map_err(|e| StoreError::storage_of(StorePart::Store, format!("cannot create the data directory {}: {e}", dir.display())))?;
        }
        Self::open(path)
    }

    /// The store file.
    pub fn path(&self) -> &Path {
        &self.path
    }

    #[cfg(test)]
    fn conn(&self) -> MutexGuard<'_, Connection> {
        self.db.conn()
    }

    /// Runs `work` on the blocking pool (rusqlite blocks; an async worker must not).
    async fn blocking<T, F>(&self, work: F) -> Result<T, StoreError>
    where
        T: Send + 'static,
        F: FnOnce(&Db) -> Result<T, StoreError> + Send + 'static,
    {
        let db = self.db.clone();
        let done = tokio::task::spawn_blocking(move || work(&db)).await;
        done.map_err(|e| StoreError::storage_of(StorePart::Calls, format!("the store's worker thread failed: {e}")))?
    }
}

impl Db {
    fn conn(&self) -> MutexGuard<'_, Connection> {
        self.conn.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// Takes a call for this process: a waiting one, or (`again`) an interrupted one too.
    fn take(&self, tool_call_id: &str, again: bool) -> Result<Option<PendingCall>, StoreError> {
        const FAILED: &str = "cannot claim a call";
        let mut conn = self.conn();
        let tx = conn.transaction_with_behavior(Immediate).or_storage(StorePart::Calls, FAILED)?;
        let Some(row) = read_row(&tx, tool_call_id).or_storage(StorePart::Calls, FAILED)? else {
            return Ok(None);
        };
        let (call, state) = row.check(&self.key).map_err(|reason| damaged(tool_call_id, reason))?;
        match state {
            CallState::Waiting => {}
            CallState::Running(_) => return Err(StoreError::Busy(tool_call_id.to_owned())),
            CallState::Interrupted(_) if !again => return Err(interrupted(call, state)),
            CallState::Interrupted(claim) => {
                tracing::warn!(tool_call_id, tool = %call.tool_name, %claim, "taking an interrupted call again, as decided");
            }
        }
        let me = std::process::id();
        let claimed = Row {
            state: Some("running".into()),
            owner_pid: Some(i64::from(me)),
            owner_start: process_stat(me).map(|(_, start)| start),
            claimed_at_ms: Some(i64::try_from(Claim::now_ms()).unwrap_or(i64::MAX)),
            ..row
        };
        write_row(&tx, claimed, &self.key).or_storage(StorePart::Calls, FAILED)?;
        tx.commit().or_storage(StorePart::Calls, FAILED)?;
        Ok(Some(call))
    }
}

fn damaged(id: &str, reason: String) -> StoreError {
    StoreError::Damaged { id: id.to_owned(), reason }
}

impl fmt::Debug for SqliteStore {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("SqliteStore").field("path", &self.path).finish_non_exhaustive()
    }
}

impl Db {
    fn save(&self, call: &PendingCall) -> Result<(), StoreError> {
        let id = &call.tool_call_id;
        let encode_failed =
            |e: serde_json::Error| StoreError::storage_of(StorePart::Calls, format!("cannot encode call `{id}` ({:?})", e.classify()));
        let json = serde_json::to_string(call).map_err(encode_failed)?;
        let row = Row {
            id: id.clone(),
            tool_name: Some(call.tool_name.clone()),
            kind: Some(call.kind.as_str().to_owned()),
            json: Some(json),
            created_at_ms: Some(i64::try_from(call.created_at_ms).unwrap_or(i64::MAX)),
            state: Some("waiting".into()),
            ..Row::default()
        };
        write_row(&self.conn(), row, &self.key).or_storage(StorePart::Calls, "cannot save a call")
    }

    /// Puts a claimed call back to waiting; a row that fails its checks is left as it is (its
    /// edit is not laundered by a fresh tag).
    fn release(&self, tool_call_id: &str) -> Result<(), StoreError> {
        const FAILED: &str = "cannot release a call";
        let mut conn = self.conn();
        let tx = conn.transaction_with_behavior(Immediate).or_storage(StorePart::Calls, FAILED)?;
        let Some(row) = read_row(&tx, tool_call_id).or_storage(StorePart::Calls, FAILED)? else {
            return Ok(());
        };
        row.check(&self.key).map_err(|reason| damaged(tool_call_id, reason))?;
        let waiting = Row {
            state: Some("waiting".into()),
            owner_pid: None,
            owner_start: None,
            claimed_at_ms: None,
            ..row
        };
        write_row(&tx, waiting, &self.key).or_storage(StorePart::Calls, FAILED)?;
        tx.commit().or_storage(StorePart::Calls, FAILED)
    }

    /// Gives up this process's `claim`: the row keeps its claim time but no owner, which reads
    /// as interrupted (see [`owner::owner_alive`]).
    fn abandon(&self, tool_call_id: &str, claim: &Claim) -> Result<bool, StoreError> {
        const FAILED: &str = "cannot give up a claim";
        let mut conn = self.conn();
        let tx = conn.transaction_with_behavior(Immediate).or_storage(StorePart::Calls, FAILED)?;
        let Some(row) = read_row(&tx, tool_call_id).or_storage(StorePart::Calls, FAILED)? else {
            return Ok(false);
        };
        let (_, state) = row.check(&self.key).map_err(|reason| damaged(tool_call_id, reason))?;
        let mine = claim.owner_pid == Some(std::process::id());
        if !mine || state != CallState::Running(*claim) {
            return Ok(false);
        }
        let abandoned = Row {
            owner_pid: None,
            owner_start: None,
            ..row
        };
        write_row(&tx, abandoned, &self.key).or_storage(StorePart::Calls, FAILED)?;
        tx.commit().or_storage(StorePart::Calls, FAILED)?;
        Ok(true)
    }

    fn remove(&self, tool_call_id: &str) -> Result<(), StoreError> {
        let removed = self
            .conn()
            .execute("DELETE FROM pending_calls WHERE tool_call_id = ?1", [tool_call_id]);
        removed.or_storage(StorePart::Calls, "cannot remove a call").map(drop)
    }

    /// Removes the row while it is running under exactly `claim` of this process's: one
    /// `DELETE` conditioned on the claim's columns, so a row saved or claimed since stays.
    fn remove_claimed(&self, tool_call_id: &str, claim: &Claim) -> Result<bool, StoreError> {
        let (Some(pid), Some(at)) = (claim.owner_pid, claim.claimed_at_ms) else {
            return Ok(false);
        };
        if pid != std::process::id() {
            return Ok(false);
        }
        let at = i64::try_from(at).unwrap_or(i64::MAX);
        let removed = self.conn().execute(
            "DELETE FROM pending_calls WHERE tool_call_id = ?1 AND state = 'running' AND owner_pid = ?2 AND claimed_at_ms = ?3",
            params![tool_call_id, i64::from(pid), at],
        );
        Ok(removed.or_storage(StorePart::Calls, "cannot remove a call")? > 0)
    }

    /// One call's row, checked: the call and where it is in its life.
    fn checked(&self, tool_call_id: &str) -> Result<Option<(PendingCall, CallState)>, StoreError> {
        let row = read_row(&self.conn(), tool_call_id).or_storage(StorePart::Calls, "cannot read a call")?;
        let checked = row.map(|row| row.check(&self.key));
        checked.transpose().map_err(|reason| damaged(tool_call_id, reason))
    }

    fn state(&self, tool_call_id: &str) -> Result<Option<CallState>, StoreError> {
        Ok(self.checked(tool_call_id)?.map(|(_, state)| state))
    }

    fn get(&self, tool_call_id: &str) -> Result<Option<PendingCall>, StoreError> {
        Ok(self.checked(tool_call_id)?.map(|(call, _)| call))
    }

    /// Removes the waiting and interrupted calls created before `cutoff_ms` in one write
    /// transaction: only the old rows are read (the age index), a call claimed by a live
    /// process is kept (a claim needs the same writer lock, so none lands in between), and a
    /// damaged row is kept for inspection.
    fn expire(&self, cutoff_ms: u64) -> Result<Vec<PendingCall>, StoreError> {
        const FAILED: &str = "cannot expire calls";
        let cutoff = i64::try_from(cutoff_ms).unwrap_or(i64::MAX);
        let mut conn = self.conn();
        let tx = conn.transaction_with_behavior(Immediate).or_storage(StorePart::Calls, FAILED)?;
        let rows = read_rows(&tx, &format!("WHERE created_at_ms < {cutoff}")).or_storage(StorePart::Calls, FAILED)?;
        let mut expired = Vec::new();
        for row in rows {
            let Ok((call, state)) = row.check(&self.key) else { continue };
            if matches!(state, CallState::Running(_)) {
                continue;
            }
            tx.execute("DELETE FROM pending_calls WHERE tool_call_id = ?1", [&row.id])
                .or_storage(StorePart::Calls, FAILED)?;
            expired.push(call);
        }
        tx.commit().or_storage(StorePart::Calls, FAILED)?;
        Ok(expired)
    }

    fn entries(&self) -> Result<Vec<StoredCall>, StoreError> {
        let rows = read_rows(&self.conn(), "").or_storage(StorePart::Calls, "cannot list calls")?;
        let entries = rows.into_iter().map(|row| {
            let checked = row.check(&self.key);
            checks::listed(checked, row.id, row.tool_name)
        });
        Ok(entries.collect())
    }
}

#[async_trait::async_trait]
impl PendingStore for SqliteStore {
    fn backend(&self) -> &'static str {
        "sqlite"
    }
    async fn save(&self, call: &PendingCall) -> Result<(), StoreError> {
        let call = call.clone();
        self.blocking(move |db| db.save(&call)).await
    }

    async fn claim(&self, tool_call_id: &str) -> Result<Option<PendingCall>, StoreError> {
        let id = tool_call_id.to_owned();
        self.blocking(move |db| db.take(&id, false)).await
    }

    async fn claim_again(&self, tool_call_id: &str) -> Result<Option<PendingCall>, StoreError> {
        let id = tool_call_id.to_owned();
        self.blocking(move |db| db.take(&id, true)).await
    }

    /// Puts a claimed call back to waiting; a row that fails its checks is left as it is (its
    /// edit is not laundered by a fresh tag).
    async fn release(&self, tool_call_id: &str) -> Result<(), StoreError> {
        let id = tool_call_id.to_owned();
        self.blocking(move |db| db.release(&id)).await
    }

    async fn remove(&self, tool_call_id: &str) -> Result<(), StoreError> {
        let id = tool_call_id.to_owned();
        self.blocking(move |db| db.remove(&id)).await
    }

    async fn abandon(&self, tool_call_id: &str, claim: &Claim) -> Result<bool, StoreError> {
        let (id, claim) = (tool_call_id.to_owned(), *claim);
        self.blocking(move |db| db.abandon(&id, &claim)).await
    }

    async fn remove_claimed(&self, tool_call_id: &str, claim: &Claim) -> Result<bool, StoreError> {
        let (id, claim) = (tool_call_id.to_owned(), *claim);
        self.blocking(move |db| db.remove_claimed(&id, &claim)).await
    }

    async fn state(&self, tool_call_id: &str) -> Result<Option<CallState>, StoreError> {
        let id = tool_call_id.to_owned();
        self.blocking(move |db| db.state(&id)).await
    }

    async fn get(&self, tool_call_id: &str) -> Result<Option<PendingCall>, StoreError> {
        let id = tool_call_id.to_owned();
        self.blocking(move |db| db.get(&id)).await
    }

    async fn entries(&self) -> Result<Vec<StoredCall>, StoreError> {
        self.blocking(Db::entries).await
    }

    async fn expire(&self, retention: Duration) -> Result<Vec<PendingCall>, StoreError> {
        let now = SystemTime::now().duration_since(UNIX_EPOCH).unwrap_or_default();
        let cutoff = u64::try_from(now.saturating_sub(retention).as_millis()).unwrap_or(u64::MAX);
        self.blocking(move |db| db.expire(cutoff)).await
    }

    fn receipts(&self) -> Option<Arc<dyn super::ReceiptStore>> {
        Some(Arc::new(SqliteStore {
            path: self.path.clone(),
            db: self.db.clone(),
        }))
    }

    fn audit(&self) -> Option<Arc<dyn super::AuditStore>> {
        Some(Arc::new(SqliteStore {
            path: self.path.clone(),
            db: self.db.clone(),
        }))
    }

    fn results(&self, limits: super::ResultLimits) -> Option<Arc<dyn super::ResultStore>> {
        let store = SqliteStore {
            path: self.path.clone(),
            db: self.db.clone(),
        };
        Some(Arc::new(results::SqliteResults { store, limits }))
    }
}

#[cfg(test)]
mod tests;

/// [`SqliteStore::default_path`] with `TOOLSMITH_DATA_DIR` given (empty counts as unset).
fn default_path_in(data_dir: Option<std::ffi::OsString>) -> Option<PathBuf> {
    let dir = match data_dir.filter(|d| !d.is_empty()) {
        Some(dir) => PathBuf::from(dir),
        None => dirs::data_dir()?.join("toolsmith"),
    };
    Some(dir.join("pending.sqlite3"))
}
