//! DPoP (RFC 9449, the MCP DPoP extension SEP-1932): tokens bound to a key the client holds, so
//! that a stolen token is of no use without the key.
//!
//! When the authorization server lists `ES256` in its `dpop_signing_alg_values_supported`, a login
//! makes a key of its own (EC P-256), stored with the login like its tokens and never logged;
//! every token request (the code, a refresh, client credentials, the JWT bearer grant) then
//! carries a proof signed with it (the `DPoP` header), and every request to the MCP server
//! presents the token as `Authorization: DPoP <token>` with a fresh proof (`htm`, `htu`, `iat`, a
//! unique `jti`, the token's hash `ath`). A server that asks for a nonce (`use_dpop_nonce`, with
//! a `DPoP-Nonce` header: RFC 9449 §8 for the authorization server, §9 for the MCP server) gets
//! the request again, once, with the nonce in the proof; the last nonce of each endpoint is kept.

use std::collections::HashMap;
use std::sync::{Arc, Mutex};
use std::time::{SystemTime, UNIX_EPOCH};

use base64::Engine as _;
use base64::engine::general_purpose::URL_SAFE_NO_PAD as B64;
use ring::rand::{SecureRandom, SystemRandom};
use ring::signature::{ECDSA_P256_SHA256_FIXED_SIGNING, EcdsaKeyPair, KeyPair};
use serde::{Deserialize, Deserializer, Serialize, Serializer};
use serde_json::json;

/// The one signing algorithm a key is made for.
pub(crate) const ALGORITHM: &str = "ES256";

/// Why no proof could be made (never the key).
#[derive(Debug, thiserror::Error)]
pub(crate) enum DpopError {
    /// No key could be made or read back, or nothing signed with it (ring gives no detail).
    #[error("the DPoP key cannot be used ({0})")]
    Key(&'static str),
}

impl From<DpopError> for super::OAuthError {
    fn from(e: DpopError) -> Self {
        super::OAuthError::Login(e.to_string())
    }
}

/// A login's DPoP key: an EC P-256 private key (PKCS#8), stored with the login (base64url), never
/// shown (no `Debug` of it).
#[derive(Clone, PartialEq)]
pub(crate) struct DpopKey {
    pkcs8: Vec<u8>,
}

impl std::fmt::Debug for DpopKey {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("DpopKey(..)")
    }
}

impl Serialize for DpopKey {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        serializer.serialize_str(&B64.encode(&self.pkcs8))
    }
}

impl<'de> Deserialize<'de> for DpopKey {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        let text = String::deserialize(deserializer)?;
        let pkcs8 = B64
            .decode(text.as_bytes())
            .map_err(|_| serde::de::Error::custom("the DPoP key is not base64url"))?;
        Ok(DpopKey { pkcs8 })
    }
}

impl DpopKey {
    /// A new key.
    pub(crate) fn generate() -> Result<Self, DpopError> {
        let document = EcdsaKeyPair::generate_pkcs8(&ECDSA_P256_SHA256_FIXED_SIGNING, &SystemRandom::new())
            .map_err(|_| DpopError::Key("no key could be made"))?;
        Ok(DpopKey {
            pkcs8: document.as_ref().to_vec(),
        })
    }

    fn pair(&self) -> Result<EcdsaKeyPair, DpopError> {
        EcdsaKeyPair::from_pkcs8(&ECDSA_P256_SHA256_FIXED_SIGNING, &self.pkcs8, &SystemRandom::new())
            .map_err(|_| DpopError::Key("the stored key is not an EC P-256 key"))
    }

    /// The public key as a JWK (RFC 7518 §6.2): what a proof's header carries.
    pub(crate) fn public_jwk(&self) -> Result<serde_json::Value, DpopError> {
        let pair = self.pair()?;
        // An uncompressed point: 0x04, then x and y (32 bytes each).
        let point = pair.public_key().as_ref();
        if point.len() != 65 {
            return Err(DpopError::Key("the public key is not an uncompressed P-256 point"));
        }
        Ok(json!({"kty": "EC", "crv": "P-256", "x": B64.encode(&point[1..33]), "y": B64.encode(&point[33..])}))
    }

    /// A proof (RFC 9449 §4.2) for a `method` request to `url` (its query and fragment left
    /// out of `htu`), with the hash of `token` (`ath`) when one is presented, and `nonce` when
    /// the server gave one.
    pub(crate) fn proof(&self, method: &str, url: &str, token: Option<&str>, nonce: Option<&str>) -> Result<String, DpopError> {
        let pair = self.pair()?;
        let random = SystemRandom::new();
        let mut jti = [0u8; 16];
        random.fill(&mut jti).map_err(|_| DpopError::Key("no random jti"))?;
        let header = json!({"typ": "dpop+jwt", "alg": ALGORITHM, "jwk": self.public_jwk()?});
        let iat = SystemTime::now()
            .duration_since(UNIX_EPOCH)
            .map(|d| d.as_secs())
            .unwrap_or_default();
        let mut claims = json!({"jti": B64.encode(jti), "htm": method, "htu": htu(url), "iat": iat});
        if let Some(token) = token {
            claims["ath"] = B64.encode(ring::digest::digest(&ring::digest::SHA256, token.as_bytes())).into();
        }
        if let Some(nonce) = nonce {
            claims["nonce"] = nonce.into();
        }
        let input = format!("{}.{}", B64.encode(header.to_string()), B64.encode(claims.to_string()));
        let signature = pair.sign(&random, input.as_bytes()).map_err(|_| DpopError::Key("signing failed"))?;
        Ok(format!("{input}.{}", B64.encode(signature.as_ref())))
    }
}

/// `url` without its query and fragment (a proof's `htu`).
fn htu(url: &str) -> String {
    match reqwest13::Url::parse(url) {
        Ok(mut parsed) => {
            parsed.set_query(None);
            parsed.set_fragment(None);
            parsed.to_string()
        }
        Err(_) => url.split(['?', '#']).next().unwrap_or_default().to_owned(),
    }
}

/// A login's key and the last nonce each server gave, shared by its token requests and its
/// session. A nonce is kept for the URL (its `htu`) it was given at, so that an authorization
/// server and an MCP server of one origin each keep their own.
pub(crate) struct Dpop {
    key: DpopKey,
    nonces: Mutex<HashMap<String, String>>,
}

impl Dpop {
    pub(crate) fn new(key: DpopKey) -> Arc<Self> {
        Arc::new(Dpop {
            key,
            nonces: Mutex::default(),
        })
    }

    /// A proof for `method` on `url` (with `token`'s hash), with the nonce given there last.
    pub(crate) fn proof(&self, method: &str, url: &str, token: Option<&str>) -> Result<String, DpopError> {
        let nonce = self.nonces.lock().unwrap_or_else(|e| e.into_inner()).get(&htu(url)).cloned();
        self.key.proof(method, url, token, nonce.as_deref())
    }

    /// Keeps the nonce `url`'s server gave; whether it is a new one (a request refused for want
    /// of it is worth sending again).
    pub(crate) fn remember_nonce(&self, url: &str, nonce: &str) -> bool {
        let mut nonces = self.nonces.lock().unwrap_or_else(|e| e.into_inner());
        nonces.insert(htu(url), nonce.to_owned()).as_deref() != Some(nonce)
    }
}

/// Where the OAuth requests of a login find its DPoP key: set once the authorization server is
/// known to support DPoP (at login), or from the stored login (in a session).
#[derive(Clone, Default)]
pub(crate) struct DpopSlot(Arc<Mutex<Option<Arc<Dpop>>>>);

impl DpopSlot {
    pub(crate) fn get(&self) -> Option<Arc<Dpop>> {
        self.0.lock().unwrap_or_else(|e| e.into_inner()).clone()
    }

    pub(crate) fn set(&self, dpop: Arc<Dpop>) {
        self.replace(Some(dpop));
    }

    /// Puts `dpop` (none: a login without a key) in place of what was there.
    pub(crate) fn replace(&self, dpop: Option<Arc<Dpop>>) {
        *self.0.lock().unwrap_or_else(|e| e.into_inner()) = dpop;
    }
}

/// Whether authorization server metadata (its extra fields) offers DPoP with [`ALGORITHM`].
pub(crate) fn offered(additional: &HashMap<String, serde_json::Value>) -> bool {
    additional
        .get("dpop_signing_alg_values_supported")
        .and_then(serde_json::Value::as_array)
        .is_some_and(|algs| algs.iter().any(|a| a.as_str() == Some(ALGORITHM)))
}

/// Whether a `WWW-Authenticate` challenge (an MCP server's 401) asks for a DPoP nonce.
pub(crate) fn asks_for_nonce(challenge: &str) -> bool {
    let lower = challenge.to_ascii_lowercase();
    lower.contains("dpop") && (lower.contains("error=\"use_dpop_nonce\"") || lower.contains("error=use_dpop_nonce"))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn part(jwt: &str, i: usize) -> serde_json::Value {
        serde_json::from_slice(&B64.decode(jwt.split('.').nth(i).unwrap()).unwrap()).unwrap()
    }

    #[test]
    fn a_proof_is_an_es256_jwt_its_public_key_verifies() {
        let key = DpopKey::generate().unwrap();
        let proof = key
            .proof("POST", "https://as.example/token?x=1#f", Some("the-token"), Some("n-1"))
            .unwrap();
        let header = part(&proof, 0);
        assert_eq!((header["typ"].as_str(), header["alg"].as_str()), (Some("dpop+jwt"), Some("ES256")));
        assert!(header["jwk"].get("d").is_none(), "{header}");
        let claims = part(&proof, 1);
        assert_eq!(claims["htm"], "POST");
        assert_eq!(claims["htu"], "https://as.example/token");
        assert_eq!(claims["nonce"], "n-1");
        let ath = B64.encode(ring::digest::digest(&ring::digest::SHA256, b"the-token"));
        assert_eq!(claims["ath"], ath.as_str());
        // The signature verifies with the header's key.
        let jwk = &header["jwk"];
        let mut point = vec![4u8];
        point.extend(B64.decode(jwk["x"].as_str().unwrap()).unwrap());
        point.extend(B64.decode(jwk["y"].as_str().unwrap()).unwrap());
        let (input, signature) = proof.rsplit_once('.').unwrap();
        ring::signature::UnparsedPublicKey::new(&ring::signature::ECDSA_P256_SHA256_FIXED, &point)
            .verify(input.as_bytes(), &B64.decode(signature).unwrap())
            .unwrap();
        // Each proof is fresh.
        let again = part(&key.proof("POST", "https://as.example/token", None, None).unwrap(), 1);
        assert_ne!(again["jti"], claims["jti"]);
        assert!(again.get("ath").is_none() && again.get("nonce").is_none());
    }

    #[test]
    fn the_key_round_trips_through_the_store_and_never_shows() {
        let key = DpopKey::generate().unwrap();
        let text = serde_json::to_string(&key).unwrap();
        let back: DpopKey = serde_json::from_str(&text).unwrap();
        assert!(back == key);
        assert_eq!(format!("{key:?}"), "DpopKey(..)");
        assert!(serde_json::from_str::<DpopKey>("\"not base64!\"").is_err());
    }

    #[test]
    fn nonces_are_kept_per_endpoint_and_a_repeated_one_is_not_new() {
        let dpop = Dpop::new(DpopKey::generate().unwrap());
        assert!(dpop.remember_nonce("http://rs.example/mcp", "a"));
        assert!(!dpop.remember_nonce("http://rs.example/mcp?x=1", "a"));
        let proof = dpop.proof("POST", "http://rs.example/mcp", None).unwrap();
        assert_eq!(part(&proof, 1)["nonce"], "a");
        let elsewhere = dpop.proof("POST", "http://rs.example/token", None).unwrap();
        assert!(part(&elsewhere, 1).get("nonce").is_none());
    }

    #[test]
    fn what_a_server_offers_and_asks() {
        let mut extra = HashMap::new();
        assert!(!offered(&extra));
        extra.insert("dpop_signing_alg_values_supported".to_owned(), json!(["RS256", "ES256"]));
        assert!(offered(&extra));
        extra.insert("dpop_signing_alg_values_supported".to_owned(), json!(["RS256"]));
        assert!(!offered(&extra));
        assert!(asks_for_nonce(r#"DPoP error="use_dpop_nonce", resource_metadata="x""#));
        assert!(!asks_for_nonce(r#"DPoP resource_metadata="x""#));
        assert!(!asks_for_nonce(r#"Bearer error="invalid_token""#));
    }
}
