//! Signed decision tokens: a [`Decision`] a stateless client or another instance can carry.
//!
//! Owns [`DecisionKey`] (the server secret, HMAC-SHA256) and the token format:
//! `tsd1.` + base64url(the decision and its expiry as JSON) + `.` + base64url(its HMAC). Any
//! instance holding the same key verifies a token; an expired, altered or truncated token, or one
//! signed with another key, is refused. What the token decides is checked against the stored
//! call like any decision (`decide`). The key is never shown: not by `Debug`, not in errors.
//!
//! The key is, in order: the one given to the runtime builder, `TOOLSMITH_DECISION_KEY`, or one
//! derived from `TOOLSMITH_STORE_KEY` (so instances sharing a PostgreSQL store, and thus its key,
//! verify each other's tokens without a second secret; the derivation keeps row tags and tokens
//! apart). Without any, signing and verifying are refused.

use base64::Engine;
use base64::engine::general_purpose::URL_SAFE_NO_PAD;
use hmac::{Hmac, KeyInit, Mac};
use serde::{Deserialize, Serialize};
use sha2::Sha256;

use std::time::{Duration, SystemTime, UNIX_EPOCH};

use super::binding::Decision;
use super::decide::ResumeOptions;
use super::outcome::EventStream;
use super::{Runtime, RuntimeError};

/// The environment variable that gives the key of decision tokens (its bytes; 32 or more random
/// characters).
pub const DECISION_KEY_ENV: &str = "TOOLSMITH_DECISION_KEY";

/// The store's integrity key (`runtime::STORE_KEY_ENV`), the fallback a decision key is derived
/// from.
const STORE_KEY_ENV: &str = "TOOLSMITH_STORE_KEY";

/// The longest token read (a decision with edited arguments included).
const MAX_TOKEN: usize = 256 * 1024;

const PREFIX: &str = "tsd1.";

/// The secret that signs decision tokens.
#[derive(Clone)]
pub struct DecisionKey(Vec<u8>);

impl std::fmt::Debug for DecisionKey {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("DecisionKey(***)")
    }
}

/// A decision as a token carries it.
#[derive(Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
struct Signed {
    #[serde(flatten)]
    decision: Decision,
    /// Milliseconds since the Unix epoch after which the token is refused.
    expires_at_ms: u64,
}

/// Why a decision key or token cannot be used.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum TokenError {
    /// The key is too short.
    #[error("a decision key needs 16 bytes or more (use 32 or more random characters)")]
    ShortKey,
    /// The token is over the size limit.
    #[error("the decision token is longer than {MAX_TOKEN} bytes")]
    TooLong,
    /// Not a token at all.
    #[error("the decision token is not one (expected `tsd1.<payload>.<signature>`)")]
    Unreadable,
    /// Altered, or signed with another key.
    #[error("the decision token's signature does not match: it was altered, or signed with another key")]
    BadSignature,
    /// No key was configured to sign or check tokens.
    #[error(
        "decision tokens need a key: set {DECISION_KEY_ENV} (or {STORE_KEY_ENV}) to 32 or more random characters, or give one to the runtime builder"
    )]
    NoKey,
    /// The configured key cannot be used.
    #[error("decision tokens cannot be used: {0}")]
    UnusableKey(Box<TokenError>),
    /// Past its expiry.
    #[error("the decision token for call `{call_id}` has expired; ask for a new decision")]
    Expired {
        /// The call it was for.
        call_id: String,
    },
}

impl DecisionKey {
    /// A key from bytes (16 or more).
    pub fn from_bytes(bytes: &[u8]) -> Result<DecisionKey, TokenError> {
        if bytes.len() < 16 {
            return Err(TokenError::ShortKey);
        }
        Ok(DecisionKey(bytes.to_vec()))
    }

    /// The key from [`DECISION_KEY_ENV`], else derived from `TOOLSMITH_STORE_KEY`; `None` when
    /// neither is set.
    pub fn from_env() -> Option<Result<DecisionKey, TokenError>> {
        let var = |name| std::env::var_os(name).filter(|v| !v.is_empty());
        if let Some(own) = var(DECISION_KEY_ENV) {
            return Some(DecisionKey::from_bytes(own.as_encoded_bytes()));
        }
        let store = var(STORE_KEY_ENV)?;
        let mut mac = Self::hmac(store.as_encoded_bytes());
        mac.update(b"toolsmith decision key v1");
        Some(Ok(DecisionKey(mac.finalize().into_bytes().to_vec())))
    }

    fn hmac(key: &[u8]) -> Hmac<Sha256> {
        <Hmac<Sha256> as KeyInit>::new_from_slice(key).unwrap_or_else(|_| unreachable!("HMAC takes any key length"))
    }

    fn mac(&self, payload: &[u8]) -> Hmac<Sha256> {
        let mut mac = Self::hmac(&self.0);
        mac.update(b"toolsmith decision token v1\0");
        mac.update(payload);
        mac
    }

    /// A token for `decision`, valid until `expires_at_ms` (milliseconds since the Unix epoch).
    pub fn sign(&self, decision: &Decision, expires_at_ms: u64) -> String {
        let signed = Signed {
            decision: decision.clone(),
            expires_at_ms,
        };
        // A decision is plain JSON: serialising it cannot fail.
        let payload = serde_json::to_vec(&signed).unwrap_or_default();
        let tag = self.mac(&payload).finalize().into_bytes();
        format!("{PREFIX}{}.{}", URL_SAFE_NO_PAD.encode(&payload), URL_SAFE_NO_PAD.encode(tag))
    }

    /// The decision a token carries, when this key signed it and it has not expired at `now_ms`.
    pub fn verify(&self, token: &str, now_ms: u64) -> Result<Decision, TokenError> {
        if token.len() > MAX_TOKEN {
            return Err(TokenError::TooLong);
        }
        let unreadable = || TokenError::Unreadable;
        let (payload, tag) = token
            .trim()
            .strip_prefix(PREFIX)
            .and_then(|t| t.split_once('.'))
            .ok_or_else(unreadable)?;
        let payload = URL_SAFE_NO_PAD.decode(payload).map_err(|_| unreadable())?;
        let tag = URL_SAFE_NO_PAD.decode(tag).map_err(|_| unreadable())?;
        if self.mac(&payload).verify_slice(&tag).is_err() {
            return Err(TokenError::BadSignature);
        }
        let signed: Signed = serde_json::from_slice(&payload).map_err(|_| unreadable())?;
        if now_ms > signed.expires_at_ms {
            return Err(TokenError::Expired {
                call_id: signed.decision.call_id().to_owned(),
            });
        }
        Ok(signed.decision)
    }
}

impl Runtime {
    fn decision_key(&self) -> Result<&DecisionKey, RuntimeError> {
        match &self.inner.decision_key {
            Some(Ok(key)) => Ok(key),
            Some(Err(e)) => Err(RuntimeError::Token(TokenError::UnusableKey(Box::new(e.clone())))),
            None => Err(RuntimeError::Token(TokenError::NoKey)),
        }
    }

    /// A signed token for `decision`, valid for `ttl`: a stateless client (or another instance
    /// with the same key) hands it to [`decide_token`](Self::decide_token). The call is not
    /// touched until then.
    pub fn sign_decision(&self, decision: &Decision, ttl: Duration) -> Result<String, RuntimeError> {
        let key = self.decision_key()?;
        let ttl_ms = u64::try_from(ttl.as_millis()).unwrap_or(u64::MAX);
        Ok(key.sign(decision, now_ms().saturating_add(ttl_ms)))
    }

    /// Decides a call with a signed token ([`sign_decision`](Self::sign_decision)): a token
    /// that was altered, signed with another key or has expired is refused
    /// ([`RuntimeError::Token`]); the decision it carries is then checked as
    /// [`decide`](Self::decide) checks any, the owner of the call included. Whether whoever
    /// presents the token is that owner ([`Binding::owner`](super::Binding::owner)) is the edge's
    /// to check, as the MCP server does: called directly, this is the operator's decision.
    pub async fn decide_token(&self, token: &str, options: ResumeOptions) -> Result<EventStream, RuntimeError> {
        let decision = self.verify_decision(token)?;
        self.decide(decision, options).await
    }

    /// The decision a signed token carries, when this runtime's key signed it and it has not
    /// expired; nothing is decided yet (an edge checks what it names first, then hands it to
    /// [`decide`](Self::decide), whose audit row then records that a token was used).
    pub fn verify_decision(&self, token: &str) -> Result<Decision, RuntimeError> {
        let decision = self.decision_key()?.verify(token, now_ms()).map_err(RuntimeError::Token)?;
        Ok(decision.came_signed())
    }
}

fn now_ms() -> u64 {
    SystemTime::now().duration_since(UNIX_EPOCH).map_or(0, |d| d.as_millis() as u64)
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;
    use crate::runtime::binding::{Answer, Binding};
    use crate::spec::ToolSpec;

    #[test]
    fn tokens_verify_once_signed_and_refuse_everything_else() {
        let spec = ToolSpec::new("t", "Does it", json!({"type": "object"}));
        let decision = Decision::new(
            Binding::new("call_1", &spec, &json!({"a": 1}), Some("subject:alice".into())),
            Answer::Approve,
        );
        let key = DecisionKey::from_bytes(b"0123456789abcdef-key-one").unwrap();
        let token = key.sign(&decision, 1_000);
        assert_eq!(key.verify(&token, 1_000).unwrap(), decision);
        let expired = key.verify(&token, 1_001).unwrap_err();
        assert_eq!(expired, TokenError::Expired { call_id: "call_1".into() });
        assert!(expired.to_string().contains("expired"));
        let other = DecisionKey::from_bytes(b"0123456789abcdef-key-two").unwrap();
        assert_eq!(other.verify(&token, 0).unwrap_err(), TokenError::BadSignature);
        let (head, tag) = token.rsplit_once('.').unwrap();
        let mut payload: serde_json::Value =
            serde_json::from_slice(&URL_SAFE_NO_PAD.decode(head.trim_start_matches(PREFIX)).unwrap()).unwrap();
        payload["answer"] = json!("edit");
        payload["args"] = json!({"a": 2});
        let forged = format!("{PREFIX}{}.{tag}", URL_SAFE_NO_PAD.encode(payload.to_string()));
        assert_eq!(key.verify(&forged, 0).unwrap_err(), TokenError::BadSignature);
        for junk in ["", "tsd1.", "tsd1.a.b", "x.y.z"] {
            assert!(
                matches!(key.verify(junk, 0), Err(TokenError::Unreadable | TokenError::BadSignature)),
                "{junk}"
            );
        }
        assert_eq!(key.verify(&"a".repeat(MAX_TOKEN + 1), 0).unwrap_err(), TokenError::TooLong);
        assert!(!format!("{key:?}").contains("key-one"));
        assert_eq!(DecisionKey::from_bytes(b"short").unwrap_err(), TokenError::ShortKey);
    }
}
