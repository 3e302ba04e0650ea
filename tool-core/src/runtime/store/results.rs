//! Kept results: the full results of calls whose model view was cut, kept for their caller to
//! read later.
//!
//! Owns [`ResultStore`] (beside [`PendingStore`](super::PendingStore), implemented by the same
//! backends over the same file or database, so every instance sharing a store reads every
//! instance's results), [`KeptResult`], [`ResultError`], [`ResultLimits`] and the in-memory
//! backend ([`MemoryResults`]). What is cut, the `toolsmith://results/<call-id>` address and
//! who a caller is are the MCP server's (`mcp::results`, `mcp::call`); nothing here knows MCP.
//!
//! # Bounds
//!
//! Every backend keeps at most [`ResultLimits::max_count`] results (the oldest go first), never
//! one larger than [`ResultLimits::max_bytes`], and returns none older than
//! [`ResultLimits::ttl`]. [`MemoryResults`] also bounds the bytes of all its results together;
//! a database bounds each result only. A database row records when it expires (the time to
//! live of the handle that kept it): each put drops the rows past it, and
//! [`ResultStore::expire`] (the store's retention, `Runtime::expire`) removes them whatever
//! limits its handle was opened with.

use std::collections::{HashMap, VecDeque};
use std::sync::Mutex;
use std::time::{Duration, Instant};

use super::StoreError;
use crate::context::BoxFuture;

/// One call's full result, and who it belongs to.
#[derive(Debug, Clone, PartialEq)]
pub struct KeptResult {
    /// Who made the call (its session, or its bearer token's digest): the only one that may
    /// read it. Never empty.
    pub owner: String,
    /// What the model would have seen with no budget, as text.
    pub text: String,
    /// The raw output as JSON text, when it differs from the text (a tool with
    /// `to_model_output`).
    pub json: Option<String>,
}

impl KeptResult {
    /// The bytes it takes: what [`ResultLimits::max_bytes`] counts.
    pub fn size(&self) -> usize {
        self.owner.len() + self.text.len() + self.json.as_ref().map_or(0, String::len)
    }
}

/// Why a kept result cannot be read.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum ResultError {
    /// Never kept, expired or pushed out by newer ones.
    #[error("The result `{0}` is not kept here (unknown, expired or evicted): call the tool again, asking for less.")]
    NotFound(String),
    /// Kept for another session.
    #[error("The result `{0}` belongs to another caller: only the session (or the authenticated caller) that made the call may read it.")]
    NotYours(String),
    /// The store could not be read, or its row fails its checks (the call id, and why; never
    /// the stored text).
    #[error("The result `{0}` cannot be read now ({1}): try again later, or call the tool again, asking for less.")]
    Unavailable(String, String),
}

/// Where full results wait to be read. Implementations bound what they keep ([`ResultLimits`]).
///
/// ```
/// use tool_core::runtime::backend::{KeptResult, MemoryResults, ResultError, ResultLimits, ResultStore};
///
/// # tokio::runtime::Runtime::new().unwrap().block_on(async {
/// let store = MemoryResults::new(ResultLimits::default());
/// let kept = KeptResult { owner: "alice".into(), text: "all of it".into(), json: None };
/// store.put("call_1".into(), kept.clone()).await;
/// assert_eq!(store.get("call_1", "alice").await, Ok(kept));
/// assert_eq!(store.get("call_1", "mallory").await, Err(ResultError::NotYours("call_1".into())));
/// assert_eq!(store.get("call_2", "alice").await, Err(ResultError::NotFound("call_2".into())));
/// # });
/// ```
pub trait ResultStore: Send + Sync + 'static {
    /// Keeps `result` as call `call_id`'s (replacing an earlier one), within the store's
    /// limits: a result larger than the byte limit is not kept, and the oldest results go to
    /// make room. A store that cannot write logs why; the result is then simply not kept.
    fn put(&self, call_id: String, result: KeptResult) -> BoxFuture<'_, ()>;
    /// Call `call_id`'s result, for `owner`: [`ResultError::NotFound`] when unknown or expired,
    /// [`ResultError::NotYours`] when another owner's.
    fn get<'a>(&'a self, call_id: &'a str, owner: &'a str) -> BoxFuture<'a, Result<KeptResult, ResultError>>;
    /// Removes the results past their time to live, and those kept before `before_ms` (Unix
    /// time, ms; the store's retention). Returns how many were removed.
    fn expire(&self, before_ms: u64) -> BoxFuture<'_, Result<u64, StoreError>>;
    /// How many results are kept and not yet expired.
    fn count(&self) -> BoxFuture<'_, Result<u64, StoreError>>;
}

/// How much a [`ResultStore`] keeps.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ResultLimits {
    /// Results kept at most (the oldest go first; default 256).
    pub max_count: usize,
    /// Bytes a result may take (default 64 MiB): a larger one is not kept at all.
    /// [`MemoryResults`] also keeps at most this many bytes of all its results together.
    pub max_bytes: usize,
    /// How long a result stays readable (default 15 minutes).
    pub ttl: Duration,
}

impl Default for ResultLimits {
    fn default() -> Self {
        ResultLimits {
            max_count: 256,
            max_bytes: 64 << 20,
            ttl: Duration::from_secs(15 * 60),
        }
    }
}

impl ResultLimits {
    /// Whether a result of `size` bytes may be kept at all.
    pub(crate) fn admits(&self, size: usize) -> bool {
        size <= self.max_bytes && self.max_count > 0
    }

    /// The time to live in milliseconds.
    #[cfg(any(feature = "sqlite", feature = "postgres"))]
    pub(crate) fn ttl_ms(&self) -> i64 {
        i64::try_from(self.ttl.as_millis()).unwrap_or(i64::MAX)
    }
}

/// Results in this process's memory, within [`ResultLimits`].
#[derive(Debug, Default)]
pub struct MemoryResults {
    limits: ResultLimits,
    kept: Mutex<Kept>,
}

#[derive(Debug, Default)]
struct Kept {
    by_id: HashMap<String, (KeptResult, Instant)>,
    /// Ids, oldest first.
    order: VecDeque<String>,
    bytes: usize,
}

impl Kept {
    fn evict_oldest(&mut self) {
        if let Some(id) = self.order.pop_front()
            && let Some((r, _)) = self.by_id.remove(&id)
        {
            self.bytes -= r.size();
        }
    }

    /// Drops the expired results (the oldest first); how many.
    fn evict_expired(&mut self, now: Instant, ttl: Duration) -> u64 {
        let mut removed = 0;
        while self
            .order
            .front()
            .and_then(|id| self.by_id.get(id))
            .is_some_and(|(_, at)| now.duration_since(*at) >= ttl)
        {
            self.evict_oldest();
            removed += 1;
        }
        removed
    }
}

impl MemoryResults {
    /// An empty store within `limits`.
    pub fn new(limits: ResultLimits) -> Self {
        MemoryResults {
            limits,
            kept: Mutex::default(),
        }
    }

    fn kept(&self) -> std::sync::MutexGuard<'_, Kept> {
        self.kept.lock().unwrap_or_else(std::sync::PoisonError::into_inner)
    }

    fn put_now(&self, call_id: String, result: KeptResult, now: Instant) {
        let size = result.size();
        if !self.limits.admits(size) {
            return;
        }
        let mut kept = self.kept();
        if let Some((old, _)) = kept.by_id.remove(&call_id) {
            kept.bytes -= old.size();
            kept.order.retain(|id| id != &call_id);
        }
        // Expired ones first, then the oldest, until the new one fits.
        kept.evict_expired(now, self.limits.ttl);
        while !kept.order.is_empty() && (kept.order.len() >= self.limits.max_count || kept.bytes + size > self.limits.max_bytes) {
            kept.evict_oldest();
        }
        kept.bytes += size;
        kept.order.push_back(call_id.clone());
        kept.by_id.insert(call_id, (result, now));
    }

    fn get_now(&self, call_id: &str, owner: &str, now: Instant) -> Result<KeptResult, ResultError> {
        let kept = self.kept();
        match kept.by_id.get(call_id) {
            Some((r, at)) if now.duration_since(*at) < self.limits.ttl => {
                if r.owner == owner {
                    Ok(r.clone())
                } else {
                    Err(ResultError::NotYours(call_id.to_owned()))
                }
            }
            _ => Err(ResultError::NotFound(call_id.to_owned())),
        }
    }
}

impl ResultStore for MemoryResults {
    fn put(&self, call_id: String, result: KeptResult) -> BoxFuture<'_, ()> {
        self.put_now(call_id, result, Instant::now());
        Box::pin(std::future::ready(()))
    }

    fn get<'a>(&'a self, call_id: &'a str, owner: &'a str) -> BoxFuture<'a, Result<KeptResult, ResultError>> {
        Box::pin(std::future::ready(self.get_now(call_id, owner, Instant::now())))
    }

    /// Removes the expired results. Nothing outlives its time to live here, so `before_ms`
    /// (a retention, normally longer) only matters when it is shorter: then every result kept
    /// before it goes too.
    fn expire(&self, before_ms: u64) -> BoxFuture<'_, Result<u64, StoreError>> {
        let now = Instant::now();
        let since_epoch = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .unwrap_or_default();
        let age = Duration::from_millis(u64::try_from(since_epoch.as_millis()).unwrap_or(u64::MAX).saturating_sub(before_ms));
        let removed = self.kept().evict_expired(now, self.limits.ttl.min(age));
        Box::pin(std::future::ready(Ok(removed)))
    }

    fn count(&self) -> BoxFuture<'_, Result<u64, StoreError>> {
        let (now, ttl) = (Instant::now(), self.limits.ttl);
        let kept = self.kept();
        let live = kept.by_id.values().filter(|(_, at)| now.duration_since(*at) < ttl).count();
        Box::pin(std::future::ready(Ok(live as u64)))
    }
}

/// A shared result store is a result store.
impl<S: ResultStore + ?Sized> ResultStore for std::sync::Arc<S> {
    fn put(&self, call_id: String, result: KeptResult) -> BoxFuture<'_, ()> {
        (**self).put(call_id, result)
    }
    fn get<'a>(&'a self, call_id: &'a str, owner: &'a str) -> BoxFuture<'a, Result<KeptResult, ResultError>> {
        (**self).get(call_id, owner)
    }
    fn expire(&self, before_ms: u64) -> BoxFuture<'_, Result<u64, StoreError>> {
        (**self).expire(before_ms)
    }
    fn count(&self) -> BoxFuture<'_, Result<u64, StoreError>> {
        (**self).count()
    }
}

/// What a database row of a kept result is read as, once its tag is checked: the result, or
/// why it cannot be used (never its stored text).
#[cfg(any(feature = "sqlite", feature = "postgres"))]
pub(crate) struct ResultRow {
    pub call_id: String,
    pub owner: Option<String>,
    pub text: Option<String>,
    pub json: Option<String>,
    pub created_at_ms: Option<i64>,
    pub expires_at_ms: Option<i64>,
    pub tag: Option<Vec<u8>>,
}

#[cfg(any(feature = "sqlite", feature = "postgres"))]
impl ResultRow {
    /// A new row for `result`, kept now for `limits.ttl`, tagged with `key` (`label` names the
    /// backend and the row's version in the tag).
    pub(crate) fn new(
        label: &'static str,
        call_id: String,
        result: KeptResult,
        now_ms: i64,
        limits: &ResultLimits,
        key: &super::integrity::Key,
    ) -> Self {
        let mut row = ResultRow {
            call_id,
            owner: Some(result.owner),
            text: Some(result.text),
            json: result.json,
            created_at_ms: Some(now_ms),
            expires_at_ms: Some(now_ms.saturating_add(limits.ttl_ms())),
            tag: None,
        };
        let fields = row.fields(label);
        row.tag = Some(key.tag(&fields.iter().map(|f| f.as_deref()).collect::<Vec<_>>()));
        row
    }

    fn fields(&self, label: &'static str) -> Vec<Option<Vec<u8>>> {
        let n = |v: Option<i64>| v.map(|v| v.to_string().into_bytes());
        let t = |v: &Option<String>| v.as_ref().map(|v| v.as_bytes().to_vec());
        vec![
            Some(label.as_bytes().to_vec()),
            Some(self.call_id.as_bytes().to_vec()),
            t(&self.owner),
            t(&self.text),
            t(&self.json),
            n(self.created_at_ms),
            n(self.expires_at_ms),
        ]
    }

    /// The result for `owner` at `now_ms` under `limits` (its own expiry, and the reader's
    /// time to live): the owner check of [`MemoryResults`], after the row's tag.
    pub(crate) fn read(
        self,
        label: &'static str,
        owner: &str,
        now_ms: i64,
        limits: &ResultLimits,
        key: &super::integrity::Key,
    ) -> Result<KeptResult, ResultError> {
        let fields = self.fields(label);
        let refs: Vec<Option<&[u8]>> = fields.iter().map(|f| f.as_deref()).collect();
        if !self.tag.as_deref().is_some_and(|tag| key.verify(&refs, tag)) {
            tracing::warn!(call_id = %self.call_id, "a kept result's row fails its integrity tag; it is not returned");
            return Err(ResultError::Unavailable(self.call_id, super::checks::TAG_MISMATCH.into()));
        }
        let fresh = self.expires_at_ms.is_some_and(|at| now_ms < at)
            && self.created_at_ms.is_some_and(|at| now_ms.saturating_sub(at) < limits.ttl_ms());
        match (fresh, self.owner, self.text) {
            (false, ..) | (_, None, _) | (_, _, None) => Err(ResultError::NotFound(self.call_id)),
            (true, Some(o), Some(text)) if o == owner => Ok(KeptResult {
                owner: o,
                text,
                json: self.json,
            }),
            (true, Some(_), Some(_)) => Err(ResultError::NotYours(self.call_id)),
        }
    }
}

/// The milliseconds since the Unix epoch, as the databases store them.
#[cfg(any(feature = "sqlite", feature = "postgres"))]
pub(crate) fn now_ms() -> i64 {
    let since_epoch = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap_or_default();
    i64::try_from(since_epoch.as_millis()).unwrap_or(i64::MAX)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn result(owner: &str, text: &str) -> KeptResult {
        KeptResult {
            owner: owner.into(),
            text: text.into(),
            json: None,
        }
    }

    #[test]
    fn only_the_owner_reads_and_only_while_kept() {
        let store = MemoryResults::new(ResultLimits {
            max_count: 2,
            max_bytes: 1000,
            ttl: Duration::from_secs(60),
        });
        let t0 = Instant::now();
        store.put_now("a".into(), result("s1", "aaa"), t0);
        assert_eq!(store.get_now("a", "s1", t0).unwrap().text, "aaa");
        assert_eq!(store.get_now("a", "s2", t0), Err(ResultError::NotYours("a".into())));
        assert_eq!(store.get_now("zzz", "s1", t0), Err(ResultError::NotFound("zzz".into())));
        // Expired.
        assert_eq!(
            store.get_now("a", "s1", t0 + Duration::from_secs(61)),
            Err(ResultError::NotFound("a".into()))
        );
        // The count bound pushes the oldest out.
        store.put_now("b".into(), result("s1", "b"), t0);
        store.put_now("c".into(), result("s1", "c"), t0);
        assert!(store.get_now("a", "s1", t0).is_err());
        assert!(store.get_now("b", "s1", t0).is_ok() && store.get_now("c", "s1", t0).is_ok());
    }

    #[test]
    fn the_byte_bound_holds() {
        let store = MemoryResults::new(ResultLimits {
            max_count: 100,
            max_bytes: 100,
            ttl: Duration::from_secs(60),
        });
        let t0 = Instant::now();
        store.put_now("big".into(), result("s", &"x".repeat(200)), t0);
        assert!(store.get_now("big", "s", t0).is_err(), "larger than the whole store: not kept");
        for i in 0..10 {
            store.put_now(format!("r{i}"), result("s", &"x".repeat(39)), t0);
        }
        let kept = store.kept.lock().unwrap();
        assert!(kept.bytes <= 100, "{}", kept.bytes);
        assert_eq!(kept.order.len(), 2);
        assert!(kept.by_id.contains_key("r9") && kept.by_id.contains_key("r8"));
    }
}
