//! The token requests Toolsmith sends itself (not through `rmcp`): a form POSTed to a token
//! endpoint (with a DPoP proof when the login has a key, sent again once with the nonce a
//! `use_dpop_nonce` refusal gives), and the token of its answer saved with the login.

use std::time::{SystemTime, UNIX_EPOCH};

use rmcp::transport::auth::{CredentialStore as _, OAuthTokenResponse, StoredCredentials};
use serde_json::Value;

use super::dpop::{Dpop, DpopKey};
use super::{OAuthError, StoreAdapter};

/// How a client authenticates at the token endpoint.
pub(crate) enum ClientAuth<'a> {
    /// `client_secret_basic`: the id and secret in `Authorization: Basic` (form-encoded first,
    /// RFC 6749 §2.3.1).
    Basic(&'a str, &'a str),
    /// No secret: the id (if any) in the form.
    Public(Option<&'a str>),
}

/// `pairs` form-encoded (`application/x-www-form-urlencoded`).
pub(crate) fn encode(pairs: &[(&str, String)]) -> String {
    let Ok(mut encoder) = reqwest13::Url::parse("http://form.invalid/") else {
        return String::new();
    };
    encoder.query_pairs_mut().extend_pairs(pairs);
    encoder.query().unwrap_or_default().to_owned()
}

/// One value form-encoded.
fn encode_value(value: &str) -> String {
    encode(&[("", value.to_owned())]).trim_start_matches('=').to_owned()
}

/// POSTs `form` to the token endpoint `endpoint` as `auth` says, with a DPoP proof of `dpop`'s
/// key when given; the answer's JSON when it is a success, else an error naming `what` and the
/// server's error code and words (never a token).
pub(crate) async fn post(
    http: &reqwest13::Client,
    endpoint: &str,
    mut form: Vec<(&str, String)>,
    auth: ClientAuth<'_>,
    dpop: Option<&DpopKey>,
    what: &str,
) -> Result<Value, OAuthError> {
    let refused = |why: String| OAuthError::Login(format!("{what} failed: {why}"));
    let mut basic = None;
    match auth {
        ClientAuth::Basic(id, secret) => {
            basic = Some(format!("{}:{}", encode_value(id), encode_value(secret)));
        }
        ClientAuth::Public(Some(id)) => form.push(("client_id", id.to_owned())),
        ClientAuth::Public(None) => {}
    }
    let dpop = dpop.cloned().map(Dpop::new);
    let body = encode(&form);
    let mut retried = false;
    loop {
        let mut request = http
            .post(endpoint)
            .header("accept", "application/json")
            .header("content-type", "application/x-www-form-urlencoded");
        if let Some(pair) = &basic {
            use base64::Engine as _;
            let encoded = base64::engine::general_purpose::STANDARD.encode(pair);
            request = request.header("authorization", format!("Basic {encoded}"));
        }
        if let Some(dpop) = &dpop {
            request = request.header("dpop", dpop.proof("POST", endpoint, None)?);
        }
        let response = request
            .body(body.clone())
            .send()
            .await
            .map_err(|e| refused(e.without_url().to_string()))?;
        let status = response.status();
        let nonce = response
            .headers()
            .get("dpop-nonce")
            .and_then(|v| v.to_str().ok())
            .map(str::to_owned);
        let bytes = response.bytes().await.map_err(|e| refused(e.without_url().to_string()))?;
        if let (Some(dpop), Some(nonce)) = (&dpop, nonce)
            && dpop.remember_nonce(endpoint, &nonce)
            && !retried
            && super::refused_for_nonce(status, &bytes)
        {
            retried = true;
            continue;
        }
        let body: Value = serde_json::from_slice(&bytes).unwrap_or(Value::Null);
        if !status.is_success() {
            // The server's error code and words (RFC 6749 §5.2), never a token.
            let text = |k: &str| body.get(k).and_then(Value::as_str).unwrap_or_default().to_owned();
            return Err(refused(format!("{status}: {} {}", text("error"), text("error_description"))));
        }
        return Ok(body);
    }
}

/// Saves the token of the successful token answer `body` for `client_id` (of the authorization
/// server `issuer`) through `adapter`; the scopes granted (`asked` when the answer names none).
pub(crate) async fn save(
    adapter: &StoreAdapter,
    client_id: &str,
    body: Value,
    asked: &[String],
    issuer: &str,
    what: &str,
) -> Result<Vec<String>, OAuthError> {
    let token: OAuthTokenResponse = serde_json::from_value(body)
        .map_err(|e| OAuthError::Login(format!("{what} failed: the token answer is not understood ({e:?})").replace('"', "")))?;
    let scopes: Vec<String> = match oauth2::TokenResponse::scopes(&token) {
        Some(granted) => granted.iter().map(|s| s.to_string()).collect(),
        None => asked.to_vec(),
    };
    let received = SystemTime::now().duration_since(UNIX_EPOCH).map(|d| d.as_secs()).ok();
    let credentials =
        StoredCredentials::new(client_id.to_owned(), Some(token), scopes.clone(), received).with_issuer(Some(issuer.to_owned()));
    adapter
        .save(credentials)
        .await
        .map_err(|e| OAuthError::Login(format!("storing the token failed: {e}")))?;
    Ok(scopes)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_form_is_url_encoded() {
        assert_eq!(encode(&[("a", "x y&z".into()), ("b", "é".into())]), "a=x+y%26z&b=%C3%A9");
        assert_eq!(encode_value("id:1"), "id%3A1");
    }
}
