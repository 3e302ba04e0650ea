//! Opaque access tokens checked by asking the authorization server (RFC 7662 token
//! introspection).
//!
//! Owns [`Introspection`] (the endpoint and this resource server's client credentials) and
//! the [`Introspector`]: it POSTs the token (HTTP Basic client authentication), requires
//! `active: true`, `sub`, an `aud` naming this resource (RFC 8707) and, when present, the
//! issuer and an unexpired `exp`/`nbf`; then caches the identity under the token's SHA-256
//! for a bounded time that never outlives the token's `exp`. Only positive answers are
//! cached. The token goes to the authorization server that issued it and nowhere else.

use std::collections::HashMap;
use std::fmt;
use std::sync::Mutex;
use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

use serde_json::{Map, Value};
use sha2::{Digest, Sha256};

use super::OAuthConfig;
use crate::Caller;

/// The largest introspection answer read.
const MAX_ANSWER: usize = 64 << 10;
/// Identities cached at most; past it expired ones go, then all.
const MAX_CACHED: usize = 10_000;

/// Where opaque tokens are introspected, and as which client.
#[derive(Clone)]
pub struct Introspection {
    /// The introspection endpoint (HTTPS, or HTTP on a loopback host).
    pub endpoint: String,
    /// This resource server's client id at the authorization server.
    pub client_id: String,
    /// Its client secret (HTTP Basic authentication); never logged.
    pub client_secret: String,
    /// How long a positive answer is reused at most (default 60 s; never past the token's
    /// `exp`).
    pub cache_for: Duration,
}

impl Introspection {
    /// Introspection at `endpoint` as client `client_id` with `client_secret`.
    pub fn new(endpoint: impl Into<String>, client_id: impl Into<String>, client_secret: impl Into<String>) -> Self {
        Introspection {
            endpoint: endpoint.into(),
            client_id: client_id.into(),
            client_secret: client_secret.into(),
            cache_for: Duration::from_secs(60),
        }
    }
}

impl fmt::Debug for Introspection {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Introspection")
            .field("endpoint", &self.endpoint)
            .field("client_id", &self.client_id)
            .field("cache_for", &self.cache_for)
            .finish_non_exhaustive()
    }
}

/// Asks the authorization server about opaque tokens, and remembers the valid ones.
pub(super) struct Introspector {
    config: Introspection,
    client: reqwest::Client,
    cache: Mutex<HashMap<[u8; 32], (Caller, Instant)>>,
}

impl Introspector {
    pub(super) fn new(config: Introspection) -> Result<Self, String> {
        let client = reqwest::Client::builder()
            .timeout(Duration::from_secs(10))
            .connect_timeout(Duration::from_secs(5))
            .redirect(reqwest::redirect::Policy::none())
            .build()
            .map_err(|e| format!("cannot make an HTTP client: {e}"))?;
        Ok(Introspector {
            config,
            client,
            cache: Mutex::new(HashMap::new()),
        })
    }

    /// The identity of an opaque token the authorization server says is active and meant for
    /// this resource, or why not.
    pub(super) async fn identity(&self, token: &str, config: &OAuthConfig) -> Result<Caller, String> {
        let key: [u8; 32] = Sha256::digest(token.as_bytes()).into();
        if let Some(identity) = self.cached(&key) {
            return Ok(identity);
        }
        let answer = self.ask(token).await?;
        let (identity, expires) = check(answer, config)?;
        let until = Instant::now() + self.config.cache_for.min(expires.unwrap_or(Duration::MAX));
        let mut cache = self.cache.lock().unwrap_or_else(|p| p.into_inner());
        if cache.len() >= MAX_CACHED {
            let now = Instant::now();
            cache.retain(|_, (_, until)| *until > now);
            if cache.len() >= MAX_CACHED {
                cache.clear();
            }
        }
        cache.insert(key, (identity.clone(), until));
        Ok(identity)
    }

    fn cached(&self, key: &[u8; 32]) -> Option<Caller> {
        let cache = self.cache.lock().unwrap_or_else(|p| p.into_inner());
        let (identity, until) = cache.get(key)?;
        (*until > Instant::now()).then(|| identity.clone())
    }

    /// The authorization server's answer about `token` (RFC 7662 §2).
    async fn ask(&self, token: &str) -> Result<Map<String, Value>, String> {
        let c = &self.config;
        let mut response = self
            .client
            .post(&c.endpoint)
            .basic_auth(&c.client_id, Some(&c.client_secret))
            .header(reqwest::header::ACCEPT, "application/json")
            .form(&[("token", token), ("token_type_hint", "access_token")])
            .send()
            .await
            .map_err(|e| format!("the introspection endpoint cannot be reached: {}", e.without_url()))?;
        if !response.status().is_success() {
            return Err(format!("the introspection endpoint answered {}", response.status()));
        }
        let mut body = Vec::new();
        while let Some(chunk) = response
            .chunk()
            .await
            .map_err(|e| format!("cannot read the introspection answer: {e}"))?
        {
            if body.len() + chunk.len() > MAX_ANSWER {
                return Err(format!("the introspection answer is larger than {MAX_ANSWER} bytes"));
            }
            body.extend_from_slice(&chunk);
        }
        match serde_json::from_slice(&body) {
            Ok(Value::Object(answer)) => Ok(answer),
            _ => Err("the introspection answer is not a JSON object".into()),
        }
    }
}

/// The identity in an introspection answer and how long the token still lives, or why the
/// token is not valid here.
fn check(answer: Map<String, Value>, config: &OAuthConfig) -> Result<(Caller, Option<Duration>), String> {
    if answer.get("active") != Some(&Value::Bool(true)) {
        return Err("the authorization server says it is not active".into());
    }
    if let Some(iss) = answer.get("iss")
        && iss.as_str() != Some(config.issuer.as_str())
    {
        return Err("it was issued by another authorization server".into());
    }
    let audiences: Vec<&str> = match answer.get("aud") {
        Some(Value::String(aud)) => vec![aud.as_str()],
        Some(Value::Array(list)) => list.iter().filter_map(Value::as_str).collect(),
        _ => Vec::new(),
    };
    let ours = |aud: &&str| *aud == config.resource || config.audiences.iter().any(|a| a == aud);
    if !audiences.iter().any(ours) {
        return Err("it was issued for another resource (`aud`)".into());
    }
    let now = SystemTime::now().duration_since(UNIX_EPOCH).unwrap_or_default().as_secs();
    let leeway = config.leeway.as_secs();
    let expires = match answer.get("exp").and_then(Value::as_u64) {
        Some(exp) if exp.saturating_add(leeway) <= now => return Err("it has expired".into()),
        Some(exp) => Some(Duration::from_secs(exp.saturating_sub(now))),
        None => None,
    };
    if answer
        .get("nbf")
        .and_then(Value::as_u64)
        .is_some_and(|nbf| nbf > now.saturating_add(leeway))
    {
        return Err("it is not valid yet (`nbf`)".into());
    }
    Ok((super::token::identity(answer, &config.claims)?, expires))
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn answer(v: Value) -> Map<String, Value> {
        v.as_object().unwrap().clone()
    }

    #[test]
    fn only_active_tokens_for_this_resource_in_their_window() {
        let config = OAuthConfig::new("https://as.example", "https://mcp.example/mcp");
        let now = SystemTime::now().duration_since(UNIX_EPOCH).unwrap().as_secs();
        let good = json!({"active": true, "sub": "alice", "aud": ["x", "https://mcp.example/mcp"], "scope": "mcp", "exp": now + 100});
        let (identity, expires) = check(answer(good.clone()), &config).unwrap();
        assert_eq!(identity.subject(), Some("alice"));
        assert!(expires.unwrap() <= Duration::from_secs(100));
        for (change, why) in [
            (json!({"active": false}), "not active"),
            (json!({"aud": "https://other.example/mcp"}), "another resource"),
            (json!({"iss": "https://evil.example"}), "another authorization server"),
            (json!({"exp": now - 100}), "expired"),
            (json!({"nbf": now + 1000}), "not valid yet"),
            (json!({"sub": ""}), "sub"),
        ] {
            let mut bad = good.clone();
            bad.as_object_mut().unwrap().extend(change.as_object().unwrap().clone());
            let err = check(answer(bad), &config).unwrap_err();
            assert!(err.contains(why), "{err}");
        }
        let mut no_aud = good.clone();
        no_aud.as_object_mut().unwrap().remove("aud");
        assert!(check(answer(no_aud), &config).is_err(), "an answer naming no audience is refused");
    }
}
