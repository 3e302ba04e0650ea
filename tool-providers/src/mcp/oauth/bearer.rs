//! Logins with a JWT another party issued, the JWT bearer grant (RFC 7523 §2.1):
//!
//! - workload identity federation (SEP-1933): a workload's platform (Kubernetes, a CI system, a
//!   cloud) gives it a JWT for the authorization server, in a file it keeps fresh; the grant
//!   sends it as the `assertion` (`mcp login --jwt-bearer-assertion-file FILE`);
//! - enterprise-managed authorization (SEP-990): the user's ID token from the enterprise's
//!   identity provider (`--enterprise-id-token-file FILE`) is first exchanged there (RFC 8693
//!   token exchange) for an identity assertion authorization grant (ID-JAG) for the MCP
//!   server's authorization server and resource, which the grant then sends.
//!
//! The file is read again for every new token (tokens of these grants come without a refresh
//! token), so a token the platform rotated is the one sent; its contents are never stored, shown
//! nor logged. A grant that fails is not retried nor replaced by another grant: the error
//! names the authorization server's answer.

use std::path::PathBuf;

use serde::{Deserialize, Serialize};
use serde_json::Value;

use super::grant::{self, ClientAuth};
use super::{Machine, OAuthError, StoreAdapter};

/// RFC 7523's grant type.
const JWT_BEARER: &str = "urn:ietf:params:oauth:grant-type:jwt-bearer";
/// RFC 8693's grant type and token types, and the ID-JAG's (SEP-990).
const TOKEN_EXCHANGE: &str = "urn:ietf:params:oauth:grant-type:token-exchange";
const ID_TOKEN: &str = "urn:ietf:params:oauth:token-type:id_token";
const ID_JAG: &str = "urn:ietf:params:oauth:token-type:id-jag";

/// A JWT bearer login's settings, stored with it (never the JWT).
#[derive(Clone, Serialize, Deserialize)]
pub(crate) struct Bearer {
    /// The file the JWT is read from, at each grant.
    pub(crate) assertion_file: PathBuf,
    /// The authorization server's token endpoint and issuer, as discovered at login.
    pub(crate) token_endpoint: String,
    pub(crate) issuer: String,
    /// Whether the client's secret goes as `client_secret_basic` (else in the form).
    #[serde(default)]
    pub(crate) basic: bool,
    /// Enterprise-managed authorization: the JWT is the user's ID token, exchanged at the identity
    /// provider for an ID-JAG first.
    #[serde(default)]
    pub(crate) exchange: Option<Exchange>,
}

/// The identity provider an ID token is exchanged at.
#[derive(Clone, Serialize, Deserialize)]
pub(crate) struct Exchange {
    pub(crate) token_endpoint: String,
    /// This client's id at the identity provider.
    pub(crate) client_id: String,
}

/// Why the JWT file gave no JWT (never its text).
#[derive(Debug, thiserror::Error)]
pub(crate) enum JwtFileError {
    #[error("the JWT file {0} cannot be read: {1}")]
    Unreadable(PathBuf, std::io::ErrorKind),
    #[error("the file {0} holds no JWT")]
    NotJwt(PathBuf),
}

impl From<JwtFileError> for OAuthError {
    fn from(e: JwtFileError) -> Self {
        OAuthError::Login(e.to_string())
    }
}

/// The JWT in `file` (its first line, trimmed).
fn read_jwt(file: &std::path::Path) -> Result<String, JwtFileError> {
    let text = std::fs::read_to_string(file).map_err(|e| JwtFileError::Unreadable(file.to_owned(), e.kind()))?;
    let jwt = text.lines().next().unwrap_or_default().trim().to_owned();
    if jwt.split('.').count() != 3 {
        return Err(JwtFileError::NotJwt(file.to_owned()));
    }
    Ok(jwt)
}

/// The identity provider `issuer`'s token endpoint, from its OpenID Connect (else RFC 8414)
/// metadata.
pub(crate) async fn idp_token_endpoint(http: &reqwest13::Client, issuer: &str) -> Result<String, OAuthError> {
    let base = issuer.trim_end_matches('/');
    for path in ["/.well-known/openid-configuration", "/.well-known/oauth-authorization-server"] {
        let Ok(response) = http.get(format!("{base}{path}")).header("accept", "application/json").send().await else {
            continue;
        };
        if !response.status().is_success() {
            continue;
        }
        let metadata: Value = response.json().await.unwrap_or(Value::Null);
        if let Some(endpoint) = metadata.get("token_endpoint").and_then(Value::as_str) {
            return Ok(endpoint.to_owned());
        }
    }
    Err(OAuthError::Login(format!(
        "the identity provider {issuer} publishes no token endpoint (OpenID Connect or RFC 8414 metadata)"
    )))
}

/// Exchanges the ID token `id_token` at the identity provider for an ID-JAG for the
/// authorization server `audience` and the MCP server `resource` (RFC 8693, SEP-990).
async fn id_jag(
    http: &reqwest13::Client,
    exchange: &Exchange,
    id_token: String,
    audience: &str,
    resource: &str,
    scopes: &[String],
) -> Result<String, OAuthError> {
    let mut form = vec![
        ("grant_type", TOKEN_EXCHANGE.to_owned()),
        ("requested_token_type", ID_JAG.to_owned()),
        ("subject_token", id_token),
        ("subject_token_type", ID_TOKEN.to_owned()),
        ("audience", audience.to_owned()),
        ("resource", resource.to_owned()),
    ];
    if !scopes.is_empty() {
        form.push(("scope", scopes.join(" ")));
    }
    let what = "the token exchange at the identity provider";
    let auth = ClientAuth::Public(Some(&exchange.client_id));
    let answer = grant::post(http, &exchange.token_endpoint, form, auth, None, what).await?;
    if answer.get("issued_token_type").and_then(Value::as_str) != Some(ID_JAG) {
        return Err(OAuthError::Login(format!("{what} did not issue an ID-JAG")));
    }
    answer
        .get("access_token")
        .and_then(Value::as_str)
        .map(str::to_owned)
        .ok_or_else(|| OAuthError::Login(format!("{what} answered no token")))
}

/// The JWT bearer grant for `machine` (whose `bearer` is set) at the resource `resource`: the
/// JWT read again (and exchanged first, for an enterprise login), the token saved through
/// `adapter`; the scopes granted.
pub(crate) async fn exchange(
    http: &reqwest13::Client,
    machine: &Machine,
    resource: &str,
    adapter: &StoreAdapter,
) -> Result<Vec<String>, OAuthError> {
    let Some(bearer) = &machine.bearer else {
        return Err(OAuthError::Login("this machine client has no JWT to present".into()));
    };
    let mut assertion = read_jwt(&bearer.assertion_file)?;
    if let Some(exchange) = &bearer.exchange {
        assertion = id_jag(http, exchange, assertion, &bearer.issuer, resource, &machine.scopes).await?;
    }
    let mut form = vec![
        ("grant_type", JWT_BEARER.to_owned()),
        ("assertion", assertion),
        ("resource", resource.to_owned()),
    ];
    if !machine.scopes.is_empty() {
        form.push(("scope", machine.scopes.join(" ")));
    }
    let auth = match (machine.client_secret.is_empty(), bearer.basic) {
        (false, true) => ClientAuth::Basic(&machine.client_id, &machine.client_secret),
        (false, false) => {
            form.push(("client_secret", machine.client_secret.clone()));
            ClientAuth::Public(Some(&machine.client_id))
        }
        (true, _) => ClientAuth::Public(Some(machine.client_id.as_str()).filter(|id| !id.is_empty())),
    };
    let what = "the JWT bearer grant";
    let dpop = adapter.template.dpop.as_ref();
    let answer = grant::post(http, &bearer.token_endpoint, form, auth, dpop, what).await?;
    grant::save(adapter, &machine.client_id, answer, &machine.scopes, &bearer.issuer, what).await
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_jwt_file_is_read_and_a_bad_one_named_without_its_text() {
        let dir = std::env::temp_dir().join(format!("toolsmith-bearer-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let good = dir.join("good.jwt");
        std::fs::write(&good, "aaa.bbb.ccc\n").unwrap();
        assert_eq!(read_jwt(&good).unwrap(), "aaa.bbb.ccc");
        let bad = dir.join("bad.jwt");
        std::fs::write(&bad, "CANARY-not-a-jwt\n").unwrap();
        let e = read_jwt(&bad).unwrap_err().to_string();
        assert!(e.contains("holds no JWT") && !e.contains("CANARY"), "{e}");
        let e = read_jwt(&dir.join("missing.jwt")).unwrap_err().to_string();
        assert!(e.contains("cannot be read"), "{e}");
        std::fs::remove_dir_all(&dir).unwrap();
    }
}
