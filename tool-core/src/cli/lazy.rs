//! The store of a command that may not need one: opened on first use (plain calls never touch
//! it), with its receipts and its audit trail behind the same lazy opening.

use std::sync::{Arc, OnceLock};

use serde_json::Value;

use crate::runtime::{
    AuditEntry, AuditFilter, AuditRecord, AuditStore, Began, MemoryReceipts, PendingCall, PendingStore, ReceiptClaim, ReceiptStore,
    SqliteStore, StoreError, StoreLocation, StorePart, StoredCall, open_store,
};

/// The pending-call store, opened on first use (plain calls never touch it).
/// Why the store could not be opened: the message, and the store's own error.
type NotOpened = (String, Option<Arc<StoreError>>);

pub(super) struct LazyStore {
    pub(super) location: Option<StoreLocation>,
    /// The store, or why it could not be opened.
    pub(super) store: tokio::sync::OnceCell<Result<Arc<dyn PendingStore>, NotOpened>>,
}

impl LazyStore {
    async fn open(&self) -> Result<&Arc<dyn PendingStore>, StoreError> {
        let opened = self.store.get_or_init(|| async {
            let Some(location) = &self.location else {
                // The default data directory is the one created on demand.
                let opened = tokio::task::spawn_blocking(SqliteStore::open_default).await;
                let opened = opened.map_err(|e| (e.to_string(), None))?;
                return opened.map(|s| Arc::new(s) as Arc<dyn PendingStore>).map_err(|e| match &e {
                    StoreError::Storage { message, .. } => (format!("{message} (or pass --store FILE_OR_URL)"), Some(Arc::new(e))),
                    other => (other.to_string(), Some(Arc::new(e))),
                });
            };
            open_store(location)
                .await
                .map_err(|e| (format!("--store {}: {e}", location.shown()), Some(Arc::new(e))))
        });
        opened.await.as_ref().map_err(|(message, cause)| StoreError::Storage {
            part: StorePart::Store,
            message: message.clone(),
            source: cause.clone().map(|c| Box::new(c) as Box<dyn std::error::Error + Send + Sync>),
        })
    }
}

#[async_trait::async_trait]
impl PendingStore for LazyStore {
    fn backend(&self) -> &'static str {
        match (self.store.get(), &self.location) {
            (Some(Ok(store)), _) => store.backend(),
            (_, Some(StoreLocation::Postgres(_))) => "postgres",
            _ => "sqlite",
        }
    }
    async fn save(&self, call: &PendingCall) -> Result<(), StoreError> {
        self.open().await?.save(call).await
    }
    async fn claim(&self, id: &str) -> Result<Option<PendingCall>, StoreError> {
        self.open().await?.claim(id).await
    }
    async fn claim_again(&self, id: &str) -> Result<Option<PendingCall>, StoreError> {
        self.open().await?.claim_again(id).await
    }
    async fn release(&self, id: &str) -> Result<(), StoreError> {
        self.open().await?.release(id).await
    }
    async fn remove(&self, id: &str) -> Result<(), StoreError> {
        // Resolving a call that was never stored needs no store.
        match self.store.get() {
            None => Ok(()),
            Some(_) => self.open().await?.remove(id).await,
        }
    }
    async fn get(&self, id: &str) -> Result<Option<PendingCall>, StoreError> {
        self.open().await?.get(id).await
    }
    async fn list(&self) -> Result<Vec<PendingCall>, StoreError> {
        self.open().await?.list().await
    }
    async fn entries(&self) -> Result<Vec<StoredCall>, StoreError> {
        self.open().await?.entries().await
    }
    async fn abandon(&self, id: &str, claim: &crate::runtime::backend::Claim) -> Result<bool, StoreError> {
        self.open().await?.abandon(id, claim).await
    }
    async fn remove_claimed(&self, id: &str, claim: &crate::runtime::backend::Claim) -> Result<bool, StoreError> {
        // A claim was taken through the opened store: without one there is nothing to remove.
        match self.store.get() {
            None => Ok(false),
            Some(_) => self.open().await?.remove_claimed(id, claim).await,
        }
    }
    async fn state(&self, id: &str) -> Result<Option<crate::runtime::backend::CallState>, StoreError> {
        self.open().await?.state(id).await
    }
}

/// The receipts of a [`LazyStore`]: the opened store's own (its file or database), opened on
/// first use; in memory when the store keeps none.
pub(super) struct LazyReceipts {
    pub(super) store: Arc<LazyStore>,
    pub(super) memory: OnceLock<Arc<dyn ReceiptStore>>,
}

impl LazyReceipts {
    async fn open(&self) -> Result<Arc<dyn ReceiptStore>, StoreError> {
        let store = self.store.open().await?;
        Ok(store
            .receipts()
            .unwrap_or_else(|| self.memory.get_or_init(|| Arc::new(MemoryReceipts::default())).clone()))
    }
}

#[async_trait::async_trait]
impl ReceiptStore for LazyReceipts {
    async fn begin(&self, claim: &ReceiptClaim, take_over: bool) -> Result<Began, StoreError> {
        self.open().await?.begin(claim, take_over).await
    }
    async fn finish(&self, key: &str, result: &Value) -> Result<(), StoreError> {
        self.open().await?.finish(key, result).await
    }
    async fn release(&self, key: &str) -> Result<(), StoreError> {
        self.open().await?.release(key).await
    }
    async fn interrupt(&self, key: &str) -> Result<(), StoreError> {
        self.open().await?.interrupt(key).await
    }
    async fn remove(&self, key: &str) -> Result<bool, StoreError> {
        self.open().await?.remove(key).await
    }
    async fn remove_digest(&self, key_digest: &str) -> Result<bool, StoreError> {
        self.open().await?.remove_digest(key_digest).await
    }
    async fn list(&self) -> Result<Vec<crate::runtime::ReceiptEntry>, StoreError> {
        self.open().await?.list().await
    }
    async fn expire(&self, before_ms: u64) -> Result<u64, StoreError> {
        self.open().await?.expire(before_ms).await
    }
}

/// The audit trail of a [`LazyStore`]: the opened store's own, opened on first use. A store
/// that keeps none (or cannot be opened) refuses the row, which the runtime logs.
pub(super) struct LazyAudit {
    pub(super) store: Arc<LazyStore>,
}

impl LazyAudit {
    async fn open(&self) -> Result<Arc<dyn AuditStore>, StoreError> {
        let store = self.store.open().await?;
        store.audit().ok_or_else(|| StoreError::storage("this store keeps no audit trail"))
    }
}

#[async_trait::async_trait]
impl AuditStore for LazyAudit {
    async fn append(&self, record: &AuditRecord) -> Result<(), StoreError> {
        self.open().await?.append(record).await
    }
    async fn list(&self, filter: &AuditFilter) -> Result<Vec<AuditEntry>, StoreError> {
        self.open().await?.list(filter).await
    }
    async fn expire(&self, before_ms: u64) -> Result<u64, StoreError> {
        self.open().await?.expire(before_ms).await
    }
}
