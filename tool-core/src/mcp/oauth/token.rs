//! One access token checked: a JWT signed by one of the issuer's keys, for this resource, in
//! its validity window.
//!
//! Owns [`ResourceServer::validate`]: the header's algorithm must be an asymmetric one the
//! named key may verify (`alg: none` does not parse; HMAC is never accepted, so a public key
//! cannot be used as an HMAC secret), then `jsonwebtoken` checks the signature, `iss`, `aud`
//! (the resource URI or a configured audience), `exp` and `nbf` (with the leeway), and `sub`
//! must be there. The scopes come from `scope` (a space-separated string, RFC 8693/9068) or
//! `scp` (a list or a string, as Okta and Azure AD write it).

use std::collections::BTreeSet;

use jsonwebtoken::{Algorithm, Validation, decode, decode_header};
use serde_json::{Map, Value};

use super::ResourceServer;
use crate::Caller;

/// The longest token read at all.
const MAX_TOKEN: usize = 16 << 10;

impl ResourceServer {
    /// The identity of a valid token, or why it is not valid (for the log and the client).
    pub(super) async fn validate(&self, token: &str) -> Result<Caller, String> {
        if token.len() > MAX_TOKEN {
            return Err(format!("longer than {MAX_TOKEN} bytes"));
        }
        let header = match (decode_header(token), &self.introspector) {
            (Ok(header), _) => header,
            // Not a JWT: an opaque token, which only its authorization server can judge.
            (Err(_), Some(introspector)) => return introspector.identity(token, &self.config).await,
            (Err(e), None) => return Err(format!("not a signed JWT ({e})")),
        };
        if matches!(header.alg, Algorithm::HS256 | Algorithm::HS384 | Algorithm::HS512) {
            return Err("signed with a shared secret (HMAC); only the authorization server's public keys are accepted".into());
        }
        let key = self.keys.key(header.kid.as_deref()).await?;
        if !key.algorithms.contains(&header.alg) {
            return Err(format!("its algorithm {:?} is not one its key may verify", header.alg));
        }
        let config = &self.config;
        let mut validation = Validation::new(header.alg);
        validation.leeway = config.leeway.as_secs();
        validation.validate_nbf = true;
        validation.set_issuer(&[&config.issuer]);
        let audiences: Vec<&str> = std::iter::once(config.resource.as_str())
            .chain(config.audiences.iter().map(String::as_str))
            .collect();
        validation.set_audience(&audiences);
        validation.set_required_spec_claims(&["exp", "iss", "aud", "sub"]);
        let claims = decode::<Map<String, Value>>(token, &key.decoding, &validation)
            .map_err(|e| refusal(e.kind()))?
            .claims;
        identity(claims, &config.claims)
    }
}

/// Why `jsonwebtoken` refused a token, in words a client can act on.
fn refusal(kind: &jsonwebtoken::errors::ErrorKind) -> String {
    use jsonwebtoken::errors::ErrorKind as K;
    match kind {
        K::InvalidSignature => "the signature does not verify".into(),
        K::ExpiredSignature => "it has expired".into(),
        K::ImmatureSignature => "it is not valid yet (`nbf`)".into(),
        K::InvalidIssuer => "it was issued by another authorization server".into(),
        K::InvalidAudience => "it was issued for another resource (`aud`)".into(),
        K::MissingRequiredClaim(c) => format!("it has no `{c}` claim"),
        K::InvalidAlgorithm => "its algorithm does not match its key".into(),
        other => format!("it cannot be read ({other:?})"),
    }
}

/// The identity in a token's verified claims: `sub`, the scopes, and the `chosen` claims.
pub(super) fn identity(claims: Map<String, Value>, chosen: &[String]) -> Result<Caller, String> {
    let subject = claims
        .get("sub")
        .and_then(Value::as_str)
        .map(str::trim)
        .filter(|s| !s.is_empty())
        .ok_or("its `sub` is not a non-empty string")?
        .to_owned();
    let scopes: BTreeSet<String> = match (claims.get("scope"), claims.get("scp")) {
        (Some(Value::String(s)), _) | (None, Some(Value::String(s))) => s.split_whitespace().map(str::to_owned).collect(),
        (None, Some(Value::Array(list))) => list.iter().filter_map(Value::as_str).map(str::to_owned).collect(),
        _ => BTreeSet::new(),
    };
    let client = ["client_id", "azp"]
        .iter()
        .find_map(|k| claims.get(*k).and_then(Value::as_str).filter(|c| !c.is_empty()));
    let client = client.map(str::to_owned);
    let chosen = chosen
        .iter()
        .filter_map(|name| Some((name.clone(), claims.get(name)?.clone())))
        .collect();
    let caller = Caller::new(subject, scopes).with_claims(chosen);
    Ok(match client {
        Some(client) => caller.with_client_id(client),
        None => caller,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn claims(v: Value) -> Map<String, Value> {
        v.as_object().unwrap().clone()
    }

    #[test]
    fn scopes_from_scope_or_scp() {
        let i = identity(claims(json!({"sub": "a", "scope": "x  y"})), &[]).unwrap();
        assert_eq!(i.scopes().iter().collect::<Vec<_>>(), ["x", "y"]);
        let i = identity(claims(json!({"sub": "a", "scp": ["x", 1, "z"]})), &[]).unwrap();
        assert_eq!(i.scopes().iter().collect::<Vec<_>>(), ["x", "z"]);
        let i = identity(claims(json!({"sub": "a"})), &[]).unwrap();
        assert!(i.scopes().is_empty());
    }

    #[test]
    fn subject_required_and_chosen_claims_only() {
        assert!(identity(claims(json!({"sub": " "})), &[]).is_err());
        assert!(identity(claims(json!({"sub": 7})), &[]).is_err());
        let i = identity(
            claims(json!({"sub": "a", "email": "a@x", "secret": 1})),
            &["email".into(), "org".into()],
        )
        .unwrap();
        assert_eq!(Value::Object(i.claims().clone()), json!({"email": "a@x"}));
    }
}
