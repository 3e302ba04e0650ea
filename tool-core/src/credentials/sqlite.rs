//! Credentials in SQLite: [`SqliteCredentials`], a file next to the SQLite store
//! (`pending.sqlite3` → `pending.credentials.sqlite3`), created readable and writable by its
//! owner only, one row per name, each tagged with the store's integrity key (the key file next
//! to the store, or `TOOLSMITH_STORE_KEY`) and checked on every read.

use std::path::{Path, PathBuf};
use std::sync::Mutex;
use std::time::Duration;

use rusqlite::{Connection, OptionalExtension, params};

use super::{CredentialError, CredentialStore};
use crate::runtime::store::{Key, sqlite_key};
use crate::tool::BoxFuture;

const SCHEMA: &str = "CREATE TABLE IF NOT EXISTS credentials (
    name TEXT PRIMARY KEY,
    secret BLOB NOT NULL,
    tag BLOB NOT NULL
)";

/// The first tagged field: keeps these tags apart from the store's other rows'.
const DOMAIN: &[u8] = b"credentials v1";

/// Credentials kept in a SQLite file, owner-only, integrity-tagged.
pub struct SqliteCredentials {
    conn: Mutex<Connection>,
    key: Key,
    path: PathBuf,
}

impl std::fmt::Debug for SqliteCredentials {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("SqliteCredentials")
            .field("path", &self.path)
            .finish_non_exhaustive()
    }
}

fn store_error(e: impl std::fmt::Display) -> CredentialError {
    CredentialError::Store(e.to_string())
}

impl SqliteCredentials {
    /// Opens (creating it if missing, mode 0600) the credential file that goes with the SQLite
    /// store at `store`, tagging rows with that store's key.
    pub fn open_next_to(store: &Path) -> Result<Self, CredentialError> {
        let path = Self::path_next_to(store);
        crate::runtime::create_private_file(&path).map_err(CredentialError::Store)?;
        let conn = Connection::open(&path).map_err(store_error)?;
        conn.busy_timeout(Duration::from_secs(5)).map_err(store_error)?;
        conn.execute_batch(SCHEMA).map_err(store_error)?;
        let key = sqlite_key(store, &conn).map_err(store_error)?;
        Ok(SqliteCredentials {
            conn: Mutex::new(conn),
            key,
            path,
        })
    }

    /// The credential file that goes with the store at `store`.
    pub fn path_next_to(store: &Path) -> PathBuf {
        let stem = store.file_stem().and_then(|s| s.to_str()).unwrap_or("pending");
        store.with_file_name(format!("{stem}.credentials.sqlite3"))
    }

    fn run<T: Send + 'static>(
        &self,
        f: impl FnOnce(&Connection, &Key) -> Result<T, CredentialError>,
    ) -> BoxFuture<'_, Result<T, CredentialError>> {
        let out = f(&self.conn.lock().unwrap_or_else(|p| p.into_inner()), &self.key);
        Box::pin(std::future::ready(out))
    }
}

fn fields<'a>(name: &'a str, secret: &'a [u8]) -> [Option<&'a [u8]>; 3] {
    [Some(DOMAIN), Some(name.as_bytes()), Some(secret)]
}

impl CredentialStore for SqliteCredentials {
    fn get(&self, name: String) -> BoxFuture<'_, Result<Option<Vec<u8>>, CredentialError>> {
        self.run(move |c, key| {
            let row: Option<(Vec<u8>, Vec<u8>)> = c
                .query_row("SELECT secret, tag FROM credentials WHERE name = ?1", params![name], |r| {
                    Ok((r.get(0)?, r.get(1)?))
                })
                .optional()
                .map_err(store_error)?;
            match row {
                None => Ok(None),
                Some((secret, tag)) if key.verify(&fields(&name, &secret), &tag) => Ok(Some(secret)),
                Some(_) => Err(CredentialError::Tampered(name)),
            }
        })
    }

    fn put(&self, name: String, secret: Vec<u8>) -> BoxFuture<'_, Result<(), CredentialError>> {
        self.run(move |c, key| {
            let tag = key.tag(&fields(&name, &secret));
            c.execute(
                "INSERT OR REPLACE INTO credentials (name, secret, tag) VALUES (?1, ?2, ?3)",
                params![name, secret, tag],
            )
            .map(drop)
            .map_err(store_error)
        })
    }

    fn remove(&self, name: String) -> BoxFuture<'_, Result<bool, CredentialError>> {
        self.run(move |c, _| {
            c.execute("DELETE FROM credentials WHERE name = ?1", params![name])
                .map(|n| n > 0)
                .map_err(store_error)
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test]
    async fn rows_are_private_tagged_and_refused_when_edited() {
        let dir = tempfile::tempdir().unwrap();
        let store = dir.path().join("pending.sqlite3");
        let creds = SqliteCredentials::open_next_to(&store).unwrap();
        creds.put("crm".into(), b"{\"token\":\"canary\"}".to_vec()).await.unwrap();
        assert_eq!(
            creds.get("crm".into()).await.unwrap().as_deref(),
            Some(b"{\"token\":\"canary\"}".as_slice())
        );
        #[cfg(unix)]
        {
            use std::os::unix::fs::PermissionsExt;
            let mode = std::fs::metadata(SqliteCredentials::path_next_to(&store))
                .unwrap()
                .permissions()
                .mode();
            assert_eq!(mode & 0o777, 0o600);
        }
        let reopened = SqliteCredentials::open_next_to(&store).unwrap();
        assert!(reopened.get("crm".into()).await.unwrap().is_some(), "the same key after reopening");
        let raw = Connection::open(SqliteCredentials::path_next_to(&store)).unwrap();
        raw.execute("UPDATE credentials SET secret = ?1", params![b"{\"token\":\"forged\"}".to_vec()])
            .unwrap();
        assert!(matches!(reopened.get("crm".into()).await, Err(CredentialError::Tampered(n)) if n == "crm"));
        assert!(reopened.remove("crm".into()).await.unwrap());
        assert_eq!(reopened.get("crm".into()).await.unwrap(), None);
        assert!(!format!("{reopened:?}").contains("canary"));
    }
}
