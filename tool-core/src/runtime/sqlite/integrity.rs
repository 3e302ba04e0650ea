//! Integrity tags: every stored row carries an HMAC-SHA256 over its meaningful columns, keyed by
//! a secret kept outside the database file, and is checked before anything uses it. A row edited
//! on disk (its tool, arguments, request context, state or owner) no longer matches its tag and
//! is refused.
//!
//! The key is the value of `TOOLSMITH_STORE_KEY` when that is set (its bytes; use 32 or more
//! random characters), else the file next to the database named like it with `.key` appended
//! (`pending.sqlite3.key`): 32 random bytes, created on first open with mode 0600 (owner only).
//! Whoever can read the key can forge tags: keep it where the database's readers are not, or
//! give it through the environment.

use std::io::Write;
use std::path::{Path, PathBuf};

use hmac::{Hmac, KeyInit, Mac};
use rusqlite::Connection;
use sha2::Sha256;

/// The environment variable that gives the store key (instead of the key file).
pub const KEY_ENV: &str = "TOOLSMITH_STORE_KEY";

/// The key file of the store at `db`: next to it, `.key` appended to its name.
pub(super) fn key_path(db: &Path) -> PathBuf {
    let mut name = db.file_name().map(|n| n.to_os_string()).unwrap_or_default();
    name.push(".key");
    db.with_file_name(name)
}

/// The secret that tags rows.
#[derive(Clone)]
pub(super) struct Key(Vec<u8>);

impl Key {
    /// A key from bytes given by the embedding program.
    pub(super) fn from_bytes(bytes: &[u8]) -> Result<Key, String> {
        if bytes.is_empty() {
            return Err("the store key is empty".into());
        }
        Ok(Key(bytes.to_vec()))
    }

    /// The key of the store at `db`: `TOOLSMITH_STORE_KEY`, else its key file (created with 32
    /// random bytes from SQLite's generator, seeded by the OS, when missing).
    pub(super) fn load(db: &Path, conn: &Connection) -> Result<Key, String> {
        if let Some(value) = std::env::var_os(KEY_ENV).filter(|v| !v.is_empty()) {
            return Key::from_bytes(value.as_encoded_bytes());
        }
        let path = key_path(db);
        let shown = path.display();
        match std::fs::read(&path) {
            Ok(bytes) => return Key::from_bytes(&bytes).map_err(|e| format!("{shown}: {e}")),
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => {}
            Err(e) => return Err(format!("cannot read the store key {shown}: {e}")),
        }
        let random: Vec<u8> = conn
            .query_row("SELECT randomblob(32)", [], |r| r.get(0))
            .map_err(|e| format!("cannot make a store key: {e}"))?;
        publish(&path, &random).map_err(|e| format!("cannot create the store key {shown}: {e}"))?;
        // Another process may have published its key first: the file decides.
        let bytes = std::fs::read(&path).map_err(|e| format!("cannot read the store key {shown}: {e}"))?;
        Key::from_bytes(&bytes).map_err(|e| format!("{shown}: {e}"))
    }

    /// The tag of a row's fields.
    pub(super) fn tag(&self, fields: &[Option<&[u8]>]) -> Vec<u8> {
        self.mac(fields).finalize().into_bytes().to_vec()
    }

    /// Whether `tag` is the tag of these fields (compared in constant time).
    pub(super) fn verify(&self, fields: &[Option<&[u8]>], tag: &[u8]) -> bool {
        self.mac(fields).verify_slice(tag).is_ok()
    }

    /// The MAC over the fields, each framed (present or not, its length, its bytes) so no two
    /// different rows feed it the same bytes.
    fn mac(&self, fields: &[Option<&[u8]>]) -> Hmac<Sha256> {
        // HMAC takes a key of any length: this never fails for a non-empty key.
        let mut mac = <Hmac<Sha256> as KeyInit>::new_from_slice(&self.0).unwrap_or_else(|_| unreachable!("HMAC takes any key length"));
        mac.update(b"toolsmith pending row v2");
        for field in fields {
            match field {
                None => mac.update(&[0]),
                Some(bytes) => {
                    mac.update(&[1]);
                    mac.update(&(bytes.len() as u64).to_le_bytes());
                    mac.update(bytes);
                }
            }
        }
        mac
    }
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn tags_depend_on_every_field_and_its_framing() {
        let key = Key::from_bytes(b"k1").unwrap();
        let fields: [Option<&[u8]>; 3] = [Some(b"ab"), None, Some(b"c")];
        let tag = key.tag(&fields);
        assert!(key.verify(&fields, &tag));
        for other in [
            [Some(b"a".as_slice()), Some(b"b".as_slice()), Some(b"c".as_slice())],
            [Some(b"ab"), Some(b""), Some(b"c")],
            [Some(b"ab"), None, Some(b"d")],
        ] {
            assert!(!key.verify(&other, &tag), "{other:?}");
        }
        assert!(!Key::from_bytes(b"k2").unwrap().verify(&fields, &tag), "another key");
        assert!(Key::from_bytes(b"").is_err());
    }
}
