//! `private_key_jwt` client authentication (RFC 7523 §2.2, SEP-1046): a machine client proves
//! who it is with an assertion it signs with its private key (ES256 for an EC P-256 key, RS256
//! for an RSA key) instead of a secret, in the client-credentials grant. `rmcp`'s own support
//! builds a crypto library the workspace keeps out; this signs with `jsonwebtoken` on *ring*.
//!
//! The key comes from a PEM file (`mcp login --client-key-file`), is stored with the login like a
//! secret, and is never logged nor put in errors.

use std::time::{SystemTime, UNIX_EPOCH};

use jsonwebtoken::{Algorithm, EncodingKey, Header};
use serde_json::json;

use super::{Machine, OAuthError, StoreAdapter};

/// The assertion type of RFC 7523 §2.2.
const ASSERTION_TYPE: &str = "urn:ietf:params:oauth:client-assertion-type:jwt-bearer";

/// How long an assertion is valid.
const LIFETIME_SECS: u64 = 300;

/// Why no assertion could be signed (never the key's text).
#[derive(Debug, thiserror::Error)]
pub(crate) enum AssertionError {
    /// The PEM is not a key this can sign with (the kind of failure).
    #[error("the client key is not an EC P-256 or RSA private key in PEM ({0})")]
    Key(String),
    /// Signing failed (the kind of failure).
    #[error("signing the client assertion failed ({0})")]
    Sign(String),
}

impl From<AssertionError> for OAuthError {
    fn from(e: AssertionError) -> Self {
        OAuthError::Login(e.to_string())
    }
}

/// The private key of a PEM text and the algorithm it signs with (EC P-256: ES256, RSA: RS256).
fn key(pem: &str) -> Result<(EncodingKey, Algorithm), AssertionError> {
    if let Ok(key) = EncodingKey::from_ec_pem(pem.as_bytes()) {
        return Ok((key, Algorithm::ES256));
    }
    EncodingKey::from_rsa_pem(pem.as_bytes())
        .map(|key| (key, Algorithm::RS256))
        .map_err(|e| AssertionError::Key(e.kind_name()))
}

/// `jsonwebtoken`'s error kind, without any input it may quote.
trait KindName {
    fn kind_name(&self) -> String;
}

impl KindName for jsonwebtoken::errors::Error {
    fn kind_name(&self) -> String {
        let kind = format!("{:?}", self.kind());
        kind.split(['(', ' ']).next().unwrap_or_default().to_owned()
    }
}

/// A value no other assertion of this process (nor, by its time and process id, of another)
/// carries: the assertion's `jti`, which the authorization server may use to refuse a replay.
fn jti() -> String {
    static COUNT: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(0);
    let n = COUNT.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
    let nanos = SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map(|d| d.as_nanos())
        .unwrap_or_default();
    format!("{nanos:x}-{:x}-{n}", std::process::id())
}

/// A signed assertion of `client_id` (its `iss` and `sub`) for the authorization server
/// `audience` (its issuer identifier), with a fresh `jti`.
pub(crate) fn assertion(client_id: &str, audience: &str, pem: &str) -> Result<String, AssertionError> {
    let (key, algorithm) = key(pem)?;
    let now = SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map(|d| d.as_secs())
        .unwrap_or_default();
    let claims = json!({
        "iss": client_id, "sub": client_id, "aud": audience,
        "iat": now, "exp": now + LIFETIME_SECS, "jti": jti(),
    });
    jsonwebtoken::encode(&Header::new(algorithm), &claims, &key).map_err(|e| AssertionError::Sign(e.kind_name()))
}

/// The key-signed machine client's settings: its token endpoint and the authorization server's
/// issuer (the assertion's audience), as discovered at login.
#[derive(Clone, serde::Serialize, serde::Deserialize)]
pub(crate) struct Signed {
    pub(crate) private_key_pem: String,
    pub(crate) token_endpoint: String,
    pub(crate) issuer: String,
}

/// The client-credentials grant with a signed assertion for `machine` (whose `signed` is set) at
/// the resource `resource`; the token is saved through `adapter` and its scopes returned.
pub(crate) async fn exchange(
    http: &reqwest13::Client,
    machine: &Machine,
    resource: &str,
    adapter: &StoreAdapter,
) -> Result<Vec<String>, OAuthError> {
    let Some(signed) = &machine.signed else {
        return Err(OAuthError::Login("this machine client signs no assertion".into()));
    };
    let assertion = assertion(&machine.client_id, &signed.issuer, &signed.private_key_pem)?;
    let mut form = vec![
        ("grant_type", "client_credentials".to_owned()),
        ("client_assertion_type", ASSERTION_TYPE.to_owned()),
        ("client_assertion", assertion),
        ("resource", resource.to_owned()),
    ];
    if !machine.scopes.is_empty() {
        form.push(("scope", machine.scopes.join(" ")));
    }
    let what = "the client-credentials grant (private_key_jwt)";
    let dpop = adapter.template.dpop.as_ref();
    let answer = super::grant::post(
        http,
        &signed.token_endpoint,
        form,
        super::grant::ClientAuth::Public(None),
        dpop,
        what,
    )
    .await?;
    super::grant::save(adapter, &machine.client_id, answer, &machine.scopes, &signed.issuer, what).await
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::Value;

    /// An EC P-256 key made for this test (PKCS#8).
    const EC_KEY: &str = "-----BEGIN PRIVATE KEY-----
MIGHAgEAMBMGByqGSM49AgEGCCqGSM49AwEHBG0wawIBAQQg8LK86hTIDfic9tDI
ZneQg6BlJ1aEDCAeRnluPpvqKKuhRANCAASPJ3NAaDHsU0usIOMJNbRX/+IYSQtW
3AhlKCqMR4zSKYJ64kcqxFJ9rxnXNRbQu6CSyBzMLeqUfagyW7VHldNY
-----END PRIVATE KEY-----
";

    #[test]
    fn an_ec_key_signs_an_es256_assertion_for_the_issuer() {
        let jwt = assertion("client-1", "https://as.example", EC_KEY).unwrap();
        let header = jsonwebtoken::decode_header(&jwt).unwrap();
        assert_eq!(header.alg, Algorithm::ES256);
        let mut validation = jsonwebtoken::Validation::new(Algorithm::ES256);
        validation.insecure_disable_signature_validation();
        validation.set_audience(&["https://as.example"]);
        let key = jsonwebtoken::DecodingKey::from_secret(&[]);
        let claims: Value = jsonwebtoken::decode(&jwt, &key, &validation).unwrap().claims;
        assert_eq!(
            (claims["iss"].as_str(), claims["sub"].as_str()),
            (Some("client-1"), Some("client-1"))
        );
        assert_eq!(claims["aud"], "https://as.example");
        assert!(claims["exp"].as_u64() > claims["iat"].as_u64() && claims["jti"].is_string());
    }

    #[test]
    fn a_key_that_is_not_one_is_refused_without_its_text() {
        let e = assertion("c", "a", "-----BEGIN PRIVATE KEY-----\nQ0FOQVJZ\n-----END PRIVATE KEY-----\n").unwrap_err();
        assert!(!e.to_string().contains("Q0FOQVJZ"), "{e}");
    }
}
