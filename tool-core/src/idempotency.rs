//! A call's idempotency key: one value per call, the same however often the call runs.
//!
//! Owns [`IdempotencyKey`] (what a tool reads through `cx.idempotency_key()` and hooks through
//! [`ToolCallInfo::idempotency_key`](crate::ToolCallInfo::idempotency_key)) and how a key is
//! made. Exactly-once execution over the key (receipts) is the runtime's; this module only
//! names the call.
//!
//! # Where the key comes from
//!
//! A caller may give its own (`CallOptions::idempotency_key`, e.g. from an HTTP
//! `Idempotency-Key` header). Otherwise the key is derived from what identifies the call and
//! survives every way it runs again: the tool, the tool call id, the thread and the resource
//! (SHA-256 over them, framed). Wall time and randomness play no part, so a retried request with
//! the same call id, a background retry, an approval and a resume of the same call all see the
//! same key, and two calls with different ids (or in different threads) never share one. A
//! waiting call keeps everything the key is made of (and a given key), so a continued call runs
//! with the key it started with.
//!
//! The key is not a secret a tool can hide behind, but it is never logged: its `Debug` shows
//! only that a key is there.
//!
//! A derived key is made when it is first read, not per call: the registry leaves it
//! *pending* for a call whose tool can only see it through [`ToolContext`](crate::ToolContext)
//! (a `#[tool]` or dynamic tool without an `on_output` hook, run in this process, not declared
//! `idempotent`), and the context settles it from the call's identity when the body asks. A
//! call whose body never asks computes no SHA-256 and allocates no key.

use std::fmt;
use std::hash::{Hash, Hasher};
use std::sync::OnceLock;

use sha2::{Digest, Sha256};

/// What a key made here starts with.
pub const KEY_PREFIX: &str = "idem_";

/// The idempotency key of one call, and whether an earlier run holding it was interrupted.
///
/// ```
/// use tool_core::context::CallData;
/// use tool_core::idempotency::IdempotencyKey;
///
/// let data = CallData { thread_id: Some("t-1".into()), ..CallData::default() };
/// let a = IdempotencyKey::for_call("send-email", "call_1", &data);
/// assert_eq!(a, IdempotencyKey::for_call("send-email", "call_1", &data), "stable");
/// assert_ne!(a, IdempotencyKey::for_call("send-email", "call_2", &data), "per call");
/// assert!(a.as_str().starts_with("idem_") && !a.after_interruption());
/// assert!(!format!("{a:?}").contains(a.as_str()), "never printed");
/// ```
#[derive(Clone, Default)]
pub struct IdempotencyKey {
    /// The key's text; empty until a pending key is settled (and for no key at all).
    key: OnceLock<String>,
    after_interruption: bool,
    /// Derived from the call's identity when first read ([`Self::settle`]).
    pending: bool,
}

impl PartialEq for IdempotencyKey {
    fn eq(&self, other: &Self) -> bool {
        self.as_str() == other.as_str() && self.after_interruption == other.after_interruption
    }
}

impl Eq for IdempotencyKey {}

impl Hash for IdempotencyKey {
    fn hash<H: Hasher>(&self, state: &mut H) {
        self.as_str().hash(state);
        self.after_interruption.hash(state);
    }
}

impl IdempotencyKey {
    /// The key of a call: the one its data carries (given by the caller, or recorded when the
    /// call was first prepared), else the one derived from its tool, id, thread and resource.
    pub fn for_call(tool_name: &str, tool_call_id: &str, data: &crate::context::CallData) -> Self {
        match &data.idempotency_key {
            Some(key) if !key.is_empty() => Self::new(key.clone()),
            _ => Self::new(derive(
                tool_name,
                tool_call_id,
                data.thread_id.as_deref(),
                data.resource_id.as_deref(),
            )),
        }
    }

    /// A key as given.
    pub fn new(key: impl Into<String>) -> Self {
        IdempotencyKey {
            key: OnceLock::from(key.into()),
            after_interruption: false,
            pending: false,
        }
    }

    /// The key of a call whose data carries none, derived when first read ([`Self::settle`]):
    /// what the registry gives a call whose tool reads the key only through its context.
    pub(crate) fn pending() -> Self {
        IdempotencyKey {
            pending: true,
            ..Self::default()
        }
    }

    /// Makes a pending key: the one [`Self::for_call`] derives from the call's identity (as the
    /// call's [`ToolCallInfo`](crate::ToolCallInfo) holds it). Any other key is left as it is.
    pub(crate) fn settle(&self, tool_name: &str, tool_call_id: &str, thread: Option<&str>, resource: Option<&str>) -> &Self {
        if self.pending {
            self.key.get_or_init(|| derive(tool_name, tool_call_id, thread, resource));
        }
        self
    }

    /// The same key, marked as held by an earlier run that was interrupted (its process died,
    /// or it was cut short) before its result was recorded.
    pub fn interrupted_before(mut self) -> Self {
        self.after_interruption = true;
        self
    }

    /// The key's text: pass it to services that take an idempotency key, or record it with
    /// the effect so a run after an interruption can tell whether the effect happened.
    pub fn as_str(&self) -> &str {
        self.key.get().map_or("", String::as_str)
    }

    /// Whether an earlier run of this call held the key and was interrupted before its result
    /// was recorded: its effect may or may not have happened. Only a tool declared
    /// `idempotent = "recover"` runs in that case; it should look its effect up by the key
    /// before having it again.
    pub fn after_interruption(&self) -> bool {
        self.after_interruption
    }
}

impl AsRef<str> for IdempotencyKey {
    fn as_ref(&self) -> &str {
        self.as_str()
    }
}

impl fmt::Debug for IdempotencyKey {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("IdempotencyKey")
            .field("key", &if self.as_str().is_empty() { "<none>" } else { "<hidden>" })
            .field("after_interruption", &self.after_interruption)
            .finish()
    }
}

/// The derived key: `idem_` and 32 hex digits (128 bits of SHA-256 over the framed fields).
fn derive(tool: &str, call_id: &str, thread: Option<&str>, resource: Option<&str>) -> String {
    let mut hash = Sha256::new();
    hash.update(b"toolsmith idempotency key v1");
    for field in [Some(tool), Some(call_id), thread, resource] {
        match field {
            None => hash.update([0]),
            Some(text) => {
                hash.update([1]);
                hash.update((text.len() as u64).to_le_bytes());
                hash.update(text.as_bytes());
            }
        }
    }
    let digest = hash.finalize();
    let mut key = String::with_capacity(KEY_PREFIX.len() + 32);
    key.push_str(KEY_PREFIX);
    push_hex(&mut key, &digest[..16]);
    key
}

/// Appends `bytes` as lowercase hex digits (no allocation beyond `out`'s growth: this runs on
/// every call's context).
fn push_hex(out: &mut String, bytes: &[u8]) {
    const DIGITS: &[u8; 16] = b"0123456789abcdef";
    for b in bytes {
        out.push(char::from(DIGITS[usize::from(b >> 4)]));
        out.push(char::from(DIGITS[usize::from(b & 0x0f)]));
    }
}

/// A short, one-way digest of a key for logs and store rows (never the key itself).
pub fn key_digest(key: &str) -> String {
    let digest = Sha256::digest([b"toolsmith receipt key v1 ".as_slice(), key.as_bytes()].concat());
    let mut hex = String::with_capacity(64);
    push_hex(&mut hex, &digest);
    hex
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::context::CallData;

    #[test]
    fn keys_differ_by_every_part_of_the_call_and_a_given_key_wins() {
        let plain = CallData::default();
        let base = IdempotencyKey::for_call("t", "c", &plain);
        let threaded = CallData {
            thread_id: Some("x".into()),
            ..CallData::default()
        };
        let owned = CallData {
            resource_id: Some("x".into()),
            ..CallData::default()
        };
        for other in [
            IdempotencyKey::for_call("u", "c", &plain),
            IdempotencyKey::for_call("t", "d", &plain),
            IdempotencyKey::for_call("t", "c", &threaded),
            IdempotencyKey::for_call("t", "c", &owned),
            // Framing: moving a byte from one field to the next is another call.
            IdempotencyKey::for_call("tc", "", &plain),
        ] {
            assert_ne!(base, other);
        }
        let given = CallData {
            idempotency_key: Some("order-42".into()),
            ..CallData::default()
        };
        assert_eq!(IdempotencyKey::for_call("t", "c", &given).as_str(), "order-42");
        assert_eq!(base.as_str().len(), KEY_PREFIX.len() + 32);
        assert_ne!(key_digest("a"), key_digest("b"));
        assert!(!key_digest(base.as_str()).contains(base.as_str()));
    }

    #[test]
    fn a_pending_key_reads_as_the_derived_one_through_the_context() {
        use crate::context::{CallEnv, ToolCallInfo, ToolContext};
        let data = CallData {
            thread_id: Some("t-1".into()),
            ..CallData::default()
        };
        let eager = IdempotencyKey::for_call("tool", "call_1", &data);
        let lazy = || {
            ToolCallInfo::with_key(
                "tool".into(),
                "call_1".into(),
                &std::sync::Arc::new(data.clone()),
                CallEnv::default(),
                Default::default(),
                true,
            )
        };
        assert_eq!(lazy().idempotency_key.as_str(), "", "made before it was read");
        let cx: ToolContext<()> = ToolContext::new((), Default::default(), lazy());
        assert_eq!(cx.idempotency_key(), &eager);
        let cx: ToolContext<()> = ToolContext::new((), Default::default(), lazy());
        assert_eq!(cx.call().idempotency_key, eager, "a body reading the call sees it made");
        // A key the caller gave, or one the runtime resolved, is never replaced.
        let given = CallData {
            idempotency_key: Some("order-42".into()),
            ..data.clone()
        };
        let info = ToolCallInfo::with_key(
            "tool".into(),
            "call_1".into(),
            &std::sync::Arc::new(given.clone()),
            CallEnv::default(),
            Default::default(),
            true,
        );
        assert_eq!(info.idempotency_key.as_str(), "order-42");
        let env = CallEnv {
            idempotency: Some(IdempotencyKey::new("resolved").interrupted_before()),
            ..CallEnv::default()
        };
        let cx: ToolContext<()> = ToolContext::new(
            (),
            Default::default(),
            ToolCallInfo::with_key(
                "tool".into(),
                "c".into(),
                &std::sync::Arc::new(data.clone()),
                env,
                Default::default(),
                true,
            ),
        );
        assert_eq!(cx.idempotency_key().as_str(), "resolved");
        assert!(cx.idempotency_key().after_interruption());
        // No key at all stays none.
        assert_eq!(IdempotencyKey::default().settle("t", "c", None, None).as_str(), "");
    }
}
