//! The SQLite store's key file: when `TOOLSMITH_STORE_KEY` is not set, the file next to the
//! database named like it with `.key` appended (`pending.sqlite3.key`): 32 random bytes, created
//! on first open with mode 0600 (owner only).

use std::io::Write;
use std::path::{Path, PathBuf};

use rusqlite::Connection;

use crate::runtime::store::integrity::Key;
use crate::runtime::store::{StoreError, StorePart};

/// The key file of the store at `db`: next to it, `.key` appended to its name.
pub(super) fn key_path(db: &Path) -> PathBuf {
    let mut name = db.file_name().map(|n| n.to_os_string()).unwrap_or_default();
    name.push(".key");
    db.with_file_name(name)
}

/// The key of the store at `db`: `TOOLSMITH_STORE_KEY`, else its key file (created with 32
/// random bytes from SQLite's generator, seeded by the OS, when missing).
pub(crate) fn load(db: &Path, conn: &Connection) -> Result<Key, StoreError> {
    if let Some(key) = Key::from_env() {
        return key.map_err(|e| StoreError::storage_of(StorePart::Store, e));
    }
    let path = key_path(db);
    let shown = path.display();
    let read = |e: std::io::Error| StoreError::storage_caused_by(StorePart::Store, format!("cannot read the store key {shown}: {e}"), e);
    match std::fs::read(&path) {
        Ok(bytes) => return Key::from_bytes(&bytes).map_err(|e| StoreError::storage_of(StorePart::Store, format!("{shown}: {e}"))),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => {}
        Err(e) => return Err(read(e)),
    }
    let random: Vec<u8> = conn
        .query_row("SELECT randomblob(32)", [], |r| r.get(0))
        .map_err(|e| StoreError::storage_caused_by(StorePart::Store, format!("cannot make a store key: {e}"), e))?;
    publish(&path, &random)
        .map_err(|e| StoreError::storage_caused_by(StorePart::Store, format!("cannot create the store key {shown}: {e}"), e))?;
    // Another process may have published its key first: the file decides.
    let bytes = std::fs::read(&path).map_err(read)?;
    Key::from_bytes(&bytes).map_err(|e| StoreError::storage_of(StorePart::Store, format!("{shown}: {e}")))
}

/// Writes `bytes` to `path` at once, readable by the owner only, unless `path` exists: written
/// to a file of this process first, then linked into place (which fails if another process got
/// there first; its key is kept).
fn publish(path: &Path, bytes: &[u8]) -> std::io::Result<()> {
    let mut name = path.file_name().map(|n| n.to_os_string()).unwrap_or_default();
    // Unique to this attempt: other processes, and other threads of this one, may race.
    static ATTEMPTS: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(0);
    let attempt = ATTEMPTS.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
    name.push(format!(".{}-{attempt}.tmp", std::process::id()));
    let temporary = path.with_file_name(name);
    let mut options = std::fs::OpenOptions::new();
    options.write(true).create(true).truncate(true);
    #[cfg(unix)]
    std::os::unix::fs::OpenOptionsExt::mode(&mut options, 0o600);
    let written = options.open(&temporary).and_then(|mut file| {
        file.write_all(bytes)?;
        file.sync_all()
    });
    let linked = written.and_then(|()| std::fs::hard_link(&temporary, path));
    let _ = std::fs::remove_file(&temporary);
    match linked {
        Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => Ok(()),
        other => other,
    }
}
