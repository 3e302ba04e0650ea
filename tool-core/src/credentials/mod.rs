//! Where the credentials of remote servers are kept between runs: the OAuth tokens `toolsmith
//! mcp login` obtained for an imported MCP server (and, for a machine client, its client
//! secret), stored under the import's name.
//!
//! Owns [`CredentialStore`] (the small async trait a store implements) and its stores
//! ([`MemoryCredentials`] here, [`SqliteCredentials`] in `sqlite`: a file next to the SQLite
//! store, owner-only, every row integrity-tagged with the store's key; `PostgresCredentials`
//! beside the PostgreSQL store's other tables: `PostgresStore::credentials`). What the bytes mean is
//! the provider's (`tool-providers`' MCP client keeps a JSON document); this module never
//! looks inside them, never logs them, and its `Debug` output shows only names.

use std::collections::BTreeMap;
use std::sync::Mutex;

use crate::tool::BoxFuture;

#[cfg(feature = "postgres")]
#[cfg_attr(docsrs, doc(cfg(feature = "postgres")))]
pub use crate::runtime::store::PostgresCredentials;
#[cfg(feature = "sqlite")]
mod sqlite;
#[cfg(feature = "sqlite")]
#[cfg_attr(docsrs, doc(cfg(feature = "sqlite")))]
pub use sqlite::SqliteCredentials;

/// Why a credential store failed.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum CredentialError {
    /// The store could not be read or written.
    #[error("the credential store failed: {0}")]
    Store(String),
    /// A row does not match its integrity tag: it was changed outside Toolsmith (or the store
    /// key changed). It is not used.
    #[error("the stored credentials of `{0}` do not match their integrity tag (changed outside Toolsmith, or the store key changed)")]
    Tampered(String),
}

/// A store of secrets by name. Implementations keep the bytes as given, return them only to
/// [`get`](Self::get), and never show them in `Debug`, logs or errors.
pub trait CredentialStore: Send + Sync + std::fmt::Debug {
    /// The secret stored under `name`, if any.
    fn get(&self, name: String) -> BoxFuture<'_, Result<Option<Vec<u8>>, CredentialError>>;
    /// Stores `secret` under `name`, replacing what was there.
    fn put(&self, name: String, secret: Vec<u8>) -> BoxFuture<'_, Result<(), CredentialError>>;
    /// Removes what is stored under `name`; whether there was something.
    fn remove(&self, name: String) -> BoxFuture<'_, Result<bool, CredentialError>>;
}

/// Credentials for the life of the process (tests, or a program that logs in each run).
#[derive(Default)]
pub struct MemoryCredentials(Mutex<BTreeMap<String, Vec<u8>>>);

impl std::fmt::Debug for MemoryCredentials {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let names: Vec<String> = self.0.lock().unwrap_or_else(|p| p.into_inner()).keys().cloned().collect();
        f.debug_struct("MemoryCredentials").field("names", &names).finish()
    }
}

impl MemoryCredentials {
    fn with<T: Send + 'static>(&self, f: impl FnOnce(&mut BTreeMap<String, Vec<u8>>) -> T) -> BoxFuture<'_, T> {
        let out = f(&mut self.0.lock().unwrap_or_else(|p| p.into_inner()));
        Box::pin(std::future::ready(out))
    }
}

impl CredentialStore for MemoryCredentials {
    fn get(&self, name: String) -> BoxFuture<'_, Result<Option<Vec<u8>>, CredentialError>> {
        self.with(move |m| Ok(m.get(&name).cloned()))
    }

    fn put(&self, name: String, secret: Vec<u8>) -> BoxFuture<'_, Result<(), CredentialError>> {
        self.with(move |m| {
            m.insert(name, secret);
            Ok(())
        })
    }

    fn remove(&self, name: String) -> BoxFuture<'_, Result<bool, CredentialError>> {
        self.with(move |m| Ok(m.remove(&name).is_some()))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test]
    async fn memory_keeps_replaces_and_removes_and_debug_shows_only_names() {
        let store = MemoryCredentials::default();
        store.put("crm".into(), b"canary-secret".to_vec()).await.unwrap();
        store.put("crm".into(), b"canary-secret-2".to_vec()).await.unwrap();
        assert_eq!(
            store.get("crm".into()).await.unwrap().as_deref(),
            Some(b"canary-secret-2".as_slice())
        );
        let shown = format!("{store:?}");
        assert!(shown.contains("crm") && !shown.contains("canary"), "{shown}");
        assert!(store.remove("crm".into()).await.unwrap());
        assert!(!store.remove("crm".into()).await.unwrap());
        assert_eq!(store.get("crm".into()).await.unwrap(), None);
    }
}
