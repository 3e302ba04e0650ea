//! Where the audit trail is kept: [`AuditStore`] (append, list, expire; nothing edits a row),
//! its in-memory backend ([`MemoryAudit`], what a [`MemoryStore`](super::MemoryStore) keeps),
//! and what the SQLite and PostgreSQL rows share ([`DbRow`]: the columns, the integrity tag over
//! them, the checks before a row is shown). What a row records and when one is appended are the
//! runtime's `audit`.

use std::sync::Mutex;

use super::StoreError;
use crate::runtime::audit::{AuditEntry, AuditFilter, AuditRecord};

/// Where audit rows are kept: appended, listed, expired by the retention; never edited or
/// removed one by one. Every method is durable before it returns.
///
/// ```
/// use tool_core::runtime::{Actor, AuditAction, AuditEntry, AuditFilter, AuditRecord};
/// use tool_core::runtime::backend::{AuditStore, MemoryAudit};
///
/// # tokio::runtime::Runtime::new().unwrap().block_on(async {
/// let store = MemoryAudit::default();
/// let row = AuditRecord::new(Actor::Operator, AuditAction::Approve).call("call_1", "send");
/// store.append(&row).await.unwrap();
/// assert_eq!(store.list(&AuditFilter::default()).await.unwrap(), [AuditEntry::Recorded(row.clone())]);
/// assert_eq!(store.expire(row.at_ms + 1).await.unwrap(), 1);
/// assert!(store.list(&AuditFilter::default()).await.unwrap().is_empty());
/// # });
/// ```
#[async_trait::async_trait]
pub trait AuditStore: Send + Sync + 'static {
    /// Appends a row.
    async fn append(&self, record: &AuditRecord) -> Result<(), StoreError>;
    /// The rows `filter` selects, oldest first (in the order they were appended); a row that
    /// fails its checks is listed as [`AuditEntry::Damaged`], never as a decision.
    async fn list(&self, filter: &AuditFilter) -> Result<Vec<AuditEntry>, StoreError>;
    /// Removes the rows made before `before_ms` (the retention); returns how many.
    async fn expire(&self, before_ms: u64) -> Result<u64, StoreError>;
}

/// A shared audit store is an audit store.
#[async_trait::async_trait]
impl<S: AuditStore + ?Sized> AuditStore for std::sync::Arc<S> {
    async fn append(&self, record: &AuditRecord) -> Result<(), StoreError> {
        (**self).append(record).await
    }
    async fn list(&self, filter: &AuditFilter) -> Result<Vec<AuditEntry>, StoreError> {
        (**self).list(filter).await
    }
    async fn expire(&self, before_ms: u64) -> Result<u64, StoreError> {
        (**self).expire(before_ms).await
    }
}

/// Audit rows in this process's memory (a [`MemoryStore`](super::MemoryStore)'s): gone with
/// the process.
#[derive(Debug, Default)]
pub struct MemoryAudit {
    rows: Mutex<Vec<AuditRecord>>,
}

impl MemoryAudit {
    fn rows(&self) -> std::sync::MutexGuard<'_, Vec<AuditRecord>> {
        self.rows.lock().unwrap_or_else(std::sync::PoisonError::into_inner)
    }
}

#[async_trait::async_trait]
impl AuditStore for MemoryAudit {
    async fn append(&self, record: &AuditRecord) -> Result<(), StoreError> {
        self.rows().push(record.clone());
        Ok(())
    }

    async fn list(&self, filter: &AuditFilter) -> Result<Vec<AuditEntry>, StoreError> {
        let rows = self.rows();
        let shown = rows.iter().filter(|r| filter.matches(r.at_ms, r.call_id.as_deref()));
        Ok(shown.cloned().map(AuditEntry::Recorded).collect())
    }

    async fn expire(&self, before_ms: u64) -> Result<u64, StoreError> {
        let mut rows = self.rows();
        let before = rows.len();
        rows.retain(|r| r.at_ms >= before_ms);
        Ok((before - rows.len()) as u64)
    }
}

/// An audit row as both databases store it: its id, time and call (the columns a listing
/// filters on) and the whole record as JSON, tagged together.
#[cfg(any(feature = "sqlite", feature = "postgres"))]
#[derive(Debug, Clone, Default)]
pub(crate) struct DbRow {
    pub id: String,
    pub at_ms: Option<i64>,
    pub call_id: Option<String>,
    pub record_json: Option<String>,
    pub tag: Option<Vec<u8>>,
}

#[cfg(any(feature = "sqlite", feature = "postgres"))]
impl DbRow {
    /// The row of `record`, tagged with `key` under `domain` (the backend's own, so a row
    /// cannot move from one kind of store to another).
    pub fn of(record: &AuditRecord, key: &super::integrity::Key, domain: &[u8]) -> Result<DbRow, StoreError> {
        let json = serde_json::to_string(record).map_err(|e| {
            StoreError::storage_of(
                super::StorePart::Audit,
                format!("cannot encode an audit row ({:?} error)", e.classify()),
            )
        })?;
        let mut row = DbRow {
            id: record.id.clone(),
            at_ms: Some(i64::try_from(record.at_ms).unwrap_or(i64::MAX)),
            call_id: record.call_id.clone(),
            record_json: Some(json),
            tag: None,
        };
        let fields = row.fields(domain);
        row.tag = Some(key.tag(&fields.iter().map(|f| f.as_deref()).collect::<Vec<_>>()));
        Ok(row)
    }

    fn fields(&self, domain: &[u8]) -> Vec<Option<Vec<u8>>> {
        vec![
            Some(domain.to_vec()),
            Some(self.id.as_bytes().to_vec()),
            self.at_ms.map(|t| t.to_string().into_bytes()),
            self.call_id.as_ref().map(|c| c.as_bytes().to_vec()),
            self.record_json.as_ref().map(|j| j.as_bytes().to_vec()),
        ]
    }

    /// The row as listed: its record when its tag matches and its columns agree with it, else
    /// damaged with why (never its stored text).
    pub fn entry(self, key: &super::integrity::Key, domain: &[u8]) -> AuditEntry {
        match self.check(key, domain) {
            Ok(record) => AuditEntry::Recorded(record),
            Err(reason) => {
                tracing::warn!(id = %self.id, %reason, "listing a damaged audit row");
                AuditEntry::Damaged { id: self.id, reason }
            }
        }
    }

    fn check(&self, key: &super::integrity::Key, domain: &[u8]) -> Result<AuditRecord, String> {
        let fields = self.fields(domain);
        let fields: Vec<Option<&[u8]>> = fields.iter().map(|f| f.as_deref()).collect();
        if !self.tag.as_deref().is_some_and(|tag| key.verify(&fields, tag)) {
            return Err(super::checks::TAG_MISMATCH.into());
        }
        let json = self.record_json.as_deref().ok_or("its record is not text")?;
        let record: AuditRecord =
            serde_json::from_str(json).map_err(|e| format!("its record is unreadable JSON ({:?} error)", e.classify()))?;
        let at_ms = self.at_ms.and_then(|t| u64::try_from(t).ok());
        if record.id != self.id || Some(record.at_ms) != at_ms || record.call_id != self.call_id {
            return Err("its columns disagree with the record they store".into());
        }
        Ok(record)
    }
}
