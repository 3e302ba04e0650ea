//! The authorization server's signing keys: found through its metadata, fetched, cached.
//!
//! Owns [`KeySet`]: the JWKS URI (configured, or discovered from RFC 8414 metadata at
//! `/.well-known/oauth-authorization-server`, falling back to OpenID Connect Discovery, whose
//! `issuer` must be the configured one), the verification keys by `kid` (asymmetric ones only:
//! RSA, EC, Ed25519, each with the algorithms it may verify), and refetching when a token names
//! a `kid` not in the cache — at most once per refresh interval, so a flood of made-up `kid`s
//! costs the authorization server nothing. Every fetch has a timeout and a size cap. Checking a
//! token is `token`'s.

use std::collections::HashMap;
use std::str::FromStr;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use jsonwebtoken::jwk::{AlgorithmParameters, EllipticCurve, Jwk, PublicKeyUse};
use jsonwebtoken::{Algorithm, DecodingKey};
use reqwest::Url;
use serde_json::Value;

/// How long a fetched key set is used before it is fetched again anyway.
const MAX_AGE: Duration = Duration::from_secs(3600);
/// The most keys kept from one key set.
const MAX_KEYS: usize = 64;
/// The largest metadata or key set document read.
const MAX_DOCUMENT: usize = 256 << 10;
/// How long one fetch may take in all.
const FETCH_TIMEOUT: Duration = Duration::from_secs(10);

/// One verification key and the algorithms it may verify.
pub(super) struct Key {
    pub(super) decoding: DecodingKey,
    pub(super) algorithms: Vec<Algorithm>,
}

/// What was fetched last.
#[derive(Default)]
struct Cache {
    jwks_uri: Option<Url>,
    by_kid: HashMap<String, Arc<Key>>,
    /// Keys without a `kid` (usable only for tokens without one).
    unnamed: Vec<Arc<Key>>,
    fetched: Option<Instant>,
}

/// The issuer's keys, fetched when needed.
pub(super) struct KeySet {
    issuer: Url,
    client: reqwest::Client,
    cache: Mutex<Cache>,
    /// One refetch at a time; the others wait and use its result.
    refetch: tokio::sync::Mutex<()>,
    /// The shortest time between two fetches of the key set.
    min_refresh: Duration,
}

impl KeySet {
    pub(super) fn new(issuer: Url, jwks_uri: Option<String>, min_refresh: Duration) -> Result<Self, String> {
        let client = reqwest::Client::builder()
            .timeout(FETCH_TIMEOUT)
            .connect_timeout(Duration::from_secs(5))
            .redirect(reqwest::redirect::Policy::limited(3))
            .build()
            .map_err(|e| format!("cannot make an HTTP client: {e}"))?;
        let jwks_uri = jwks_uri.map(|u| Url::parse(&u)).transpose().map_err(|e| e.to_string())?;
        Ok(KeySet {
            issuer,
            client,
            cache: Mutex::new(Cache {
                jwks_uri,
                ..Cache::default()
            }),
            refetch: tokio::sync::Mutex::new(()),
            min_refresh,
        })
    }

    fn cached(&self, kid: Option<&str>) -> Option<Arc<Key>> {
        let cache = self.cache.lock().unwrap_or_else(|p| p.into_inner());
        if cache.fetched.is_none_or(|at| at.elapsed() > MAX_AGE) {
            return None;
        }
        match kid {
            Some(kid) => cache.by_kid.get(kid).cloned(),
            None if cache.by_kid.len() + cache.unnamed.len() == 1 => cache.by_kid.values().chain(&cache.unnamed).next().cloned(),
            None => None,
        }
    }

    /// The key a token names (`kid`; a token without one, when the set has one key only),
    /// refetching the set when it is not known (at most once per refresh interval).
    pub(super) async fn key(&self, kid: Option<&str>) -> Result<Arc<Key>, String> {
        if let Some(key) = self.cached(kid) {
            return Ok(key);
        }
        let _one = self.refetch.lock().await;
        if let Some(key) = self.cached(kid) {
            return Ok(key);
        }
        let recent = {
            let cache = self.cache.lock().unwrap_or_else(|p| p.into_inner());
            cache.fetched.is_some_and(|at| at.elapsed() < self.min_refresh)
        };
        if !recent {
            self.refetch().await?;
        }
        self.cached(kid).ok_or_else(|| match kid {
            Some(kid) => format!("no key `{kid}` in the authorization server's key set"),
            None => "the token names no key (`kid`) and the key set has more than one".to_owned(),
        })
    }

    async fn refetch(&self) -> Result<(), String> {
        let known = self.cache.lock().unwrap_or_else(|p| p.into_inner()).jwks_uri.clone();
        let jwks_uri = match known {
            Some(uri) => uri,
            None => self.discover().await?,
        };
        let set = self.fetch(&jwks_uri).await.map_err(|e| format!("the key set {jwks_uri}: {e}"))?;
        let (mut by_kid, mut unnamed) = (HashMap::new(), Vec::new());
        let keys = set.get("keys").and_then(Value::as_array).ok_or("the key set has no `keys` array")?;
        for jwk in keys.iter().filter_map(|k| serde_json::from_value::<Jwk>(k.clone()).ok()) {
            if by_kid.len() + unnamed.len() >= MAX_KEYS {
                break;
            }
            let Some(key) = verification_key(&jwk) else { continue };
            match &jwk.common.key_id {
                Some(kid) => {
                    by_kid.insert(kid.clone(), Arc::new(key));
                }
                None => unnamed.push(Arc::new(key)),
            }
        }
        tracing::debug!(keys = by_kid.len() + unnamed.len(), %jwks_uri, "fetched the authorization server's keys");
        let mut cache = self.cache.lock().unwrap_or_else(|p| p.into_inner());
        *cache = Cache {
            jwks_uri: Some(jwks_uri),
            by_kid,
            unnamed,
            fetched: Some(Instant::now()),
        };
        Ok(())
    }

    /// The JWKS URI of the issuer's metadata: RFC 8414 first, then OpenID Connect Discovery.
    async fn discover(&self) -> Result<Url, String> {
        let mut why = Vec::new();
        for url in metadata_urls(&self.issuer) {
            match self.fetch(&url).await {
                Ok(meta) => {
                    if meta.get("issuer").and_then(Value::as_str) != Some(self.issuer.as_str())
                        && meta.get("issuer").and_then(Value::as_str) != Some(self.issuer.as_str().trim_end_matches('/'))
                    {
                        why.push(format!("{url}: its `issuer` is not `{}`", self.issuer));
                        continue;
                    }
                    let uri = meta
                        .get("jwks_uri")
                        .and_then(Value::as_str)
                        .ok_or(format!("{url}: no `jwks_uri`"))?;
                    return Url::parse(uri).map_err(|e| format!("{url}: `jwks_uri` is not a URL: {e}"));
                }
                Err(e) => why.push(format!("{url}: {e}")),
            }
        }
        Err(format!("no authorization server metadata found ({})", why.join("; ")))
    }

    /// A JSON document, at most [`MAX_DOCUMENT`] bytes.
    async fn fetch(&self, url: &Url) -> Result<Value, String> {
        let mut response = self
            .client
            .get(url.clone())
            .header(reqwest::header::ACCEPT, "application/json")
            .send()
            .await
            .map_err(|e| format!("cannot fetch: {e}"))?;
        if !response.status().is_success() {
            return Err(format!("answered {}", response.status()));
        }
        let mut body = Vec::new();
        while let Some(chunk) = response.chunk().await.map_err(|e| format!("cannot read: {e}"))? {
            if body.len() + chunk.len() > MAX_DOCUMENT {
                return Err(format!("larger than {MAX_DOCUMENT} bytes"));
            }
            body.extend_from_slice(&chunk);
        }
        serde_json::from_slice(&body).map_err(|e| format!("not JSON: {e}"))
    }
}

/// Where an issuer's metadata may be: RFC 8414 §3.1 (the well-known segment before the
/// issuer's path), then OpenID Connect Discovery (both after the path and, as RFC 8414 §5
/// allows, before it).
fn metadata_urls(issuer: &Url) -> Vec<Url> {
    let path = issuer.path().trim_end_matches('/');
    let origin = issuer.origin().ascii_serialization();
    [
        format!("{origin}/.well-known/oauth-authorization-server{path}"),
        format!("{origin}{path}/.well-known/openid-configuration"),
        format!("{origin}/.well-known/openid-configuration{path}"),
    ]
    .into_iter()
    .filter_map(|u| Url::parse(&u).ok())
    .fold(Vec::new(), |mut urls, u| {
        if !urls.contains(&u) {
            urls.push(u);
        }
        urls
    })
}

/// A signature key of the set and the algorithms it verifies; `None` for encryption keys,
/// symmetric ones (never accepted from a key set) and what cannot be decoded.
fn verification_key(jwk: &Jwk) -> Option<Key> {
    if matches!(jwk.common.public_key_use, Some(PublicKeyUse::Encryption)) {
        return None;
    }
    let by_type: Vec<Algorithm> = match &jwk.algorithm {
        AlgorithmParameters::RSA(_) => {
            use Algorithm::*;
            vec![RS256, RS384, RS512, PS256, PS384, PS512]
        }
        AlgorithmParameters::EllipticCurve(ec) => match ec.curve {
            EllipticCurve::P256 => vec![Algorithm::ES256],
            EllipticCurve::P384 => vec![Algorithm::ES384],
            _ => return None,
        },
        AlgorithmParameters::OctetKeyPair(_) => vec![Algorithm::EdDSA],
        AlgorithmParameters::OctetKey(_) => return None,
    };
    let algorithms = match &jwk.common.key_algorithm {
        None => by_type,
        Some(named) => {
            let name = serde_json::to_value(named).ok()?;
            let alg = Algorithm::from_str(name.as_str()?).ok()?;
            if !by_type.contains(&alg) {
                return None;
            }
            vec![alg]
        }
    };
    let decoding = DecodingKey::from_jwk(jwk).ok()?;
    Some(Key { decoding, algorithms })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn metadata_urls_in_order() {
        let urls = |issuer: &str| -> Vec<String> { metadata_urls(&Url::parse(issuer).unwrap()).iter().map(Url::to_string).collect() };
        assert_eq!(
            urls("https://auth.example.com/"),
            [
                "https://auth.example.com/.well-known/oauth-authorization-server",
                "https://auth.example.com/.well-known/openid-configuration",
            ]
        );
        assert_eq!(
            urls("https://kc.example.com/realms/acme"),
            [
                "https://kc.example.com/.well-known/oauth-authorization-server/realms/acme",
                "https://kc.example.com/realms/acme/.well-known/openid-configuration",
                "https://kc.example.com/.well-known/openid-configuration/realms/acme",
            ]
        );
    }

    #[test]
    fn symmetric_and_encryption_keys_are_not_verification_keys() {
        let jwk = |v: Value| serde_json::from_value::<Jwk>(v).unwrap();
        assert!(verification_key(&jwk(serde_json::json!({"kty": "oct", "k": "c2VjcmV0"}))).is_none());
        let rsa = serde_json::json!({"kty": "RSA", "n": "sXch", "e": "AQAB"});
        assert_eq!(verification_key(&jwk(rsa.clone())).unwrap().algorithms.len(), 6);
        let mut enc = rsa.clone();
        enc["use"] = "enc".into();
        assert!(verification_key(&jwk(enc)).is_none());
        let mut hs = rsa;
        hs["alg"] = "HS256".into();
        assert!(verification_key(&jwk(hs)).is_none(), "an RSA key named for HMAC is refused");
    }
}
