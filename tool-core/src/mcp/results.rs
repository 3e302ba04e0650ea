//! Full results of calls whose model view was cut, kept for the client to read.
//!
//! Owns [`ResultStore`] (the small trait a shared store implements later), [`MemoryResults`]
//! (the bounded in-memory one: a count, a total size and an expiry) and the
//! `toolsmith://results/<call-id>` address. A cut result's content carries a `resource_link` to
//! that address; `resources/read` on it returns the full result to the session that made the
//! call and to no other. What is cut, and how, is the budget's ([`crate::budget`]); when a link
//! is offered is the call's (`convert`).

use std::collections::{HashMap, VecDeque};
use std::sync::Mutex;
use std::time::{Duration, Instant};

use crate::context::BoxFuture;

/// The scheme and path every kept result's address starts with.
pub const RESULTS_URI: &str = "toolsmith://results/";

/// The address of call `call_id`'s full result.
pub(super) fn result_uri(call_id: &str) -> String {
    format!("{RESULTS_URI}{call_id}")
}

/// One call's full result, and the session it belongs to.
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
    fn size(&self) -> usize {
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
}

/// Where full results wait to be read. Implementations bound what they keep.
pub trait ResultStore: Send + Sync + 'static {
    /// Keeps `result` as call `call_id`'s.
    fn put(&self, call_id: String, result: KeptResult) -> BoxFuture<'_, ()>;
    /// Call `call_id`'s result, for the session `owner`.
    fn get<'a>(&'a self, call_id: &'a str, owner: &'a str) -> BoxFuture<'a, Result<KeptResult, ResultError>>;
}

/// How much [`MemoryResults`] keeps.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ResultLimits {
    /// Results kept at most (the oldest go first; default 256).
    pub max_count: usize,
    /// Bytes kept at most, all results together (default 64 MiB); a result larger than this is
    /// not kept at all.
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
        if let Some(id) = self.order.pop_front() {
            if let Some((r, _)) = self.by_id.remove(&id) {
                self.bytes -= r.size();
            }
        }
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

    fn put_now(&self, call_id: String, result: KeptResult, now: Instant) {
        let size = result.size();
        if size > self.limits.max_bytes || self.limits.max_count == 0 {
            return;
        }
        let mut kept = self.kept.lock().unwrap_or_else(|p| p.into_inner());
        if let Some((old, _)) = kept.by_id.remove(&call_id) {
            kept.bytes -= old.size();
            kept.order.retain(|id| id != &call_id);
        }
        // Expired ones first, then the oldest, until the new one fits.
        while kept
            .order
            .front()
            .and_then(|id| kept.by_id.get(id))
            .is_some_and(|(_, at)| now.duration_since(*at) >= self.limits.ttl)
        {
            kept.evict_oldest();
        }
        while !kept.order.is_empty() && (kept.order.len() >= self.limits.max_count || kept.bytes + size > self.limits.max_bytes) {
            kept.evict_oldest();
        }
        kept.bytes += size;
        kept.order.push_back(call_id.clone());
        kept.by_id.insert(call_id, (result, now));
    }

    fn get_now(&self, call_id: &str, owner: &str, now: Instant) -> Result<KeptResult, ResultError> {
        let kept = self.kept.lock().unwrap_or_else(|p| p.into_inner());
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
