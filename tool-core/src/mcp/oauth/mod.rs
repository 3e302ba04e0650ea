//! The MCP HTTP server as an OAuth 2.1 resource server (MCP authorization, revisions
//! 2025-06-18 to 2026-07-28).
//!
//! Owns [`OAuthConfig`], [`ResourceServer`] (a request's bearer token → an
//! [`Caller`], or a [`Refusal`]), the Protected Resource Metadata document (RFC 9728) and the
//! `WWW-Authenticate` challenges (RFC 6750 §3). Access tokens are JWTs checked locally: the
//! signature against the authorization server's published keys (`keys`: discovered from its
//! RFC 8414 or OpenID metadata, cached, refetched for an unknown `kid`), then `iss`, `exp`/`nbf`
//! with a small leeway, and `aud` against this server's canonical resource URI (RFC 8707), in
//! `token`. Opaque tokens can be checked by introspection at the authorization server
//! (RFC 7662, `introspect`). Which HTTP answer a refusal becomes, and where the identity goes, is `http`'s.

mod introspect;
mod keys;
mod token;

use std::fmt;
use std::time::Duration;

use serde_json::{Value, json};

use crate::Caller;
pub use introspect::Introspection;
use introspect::Introspector;
use keys::KeySet;

/// How the resource server checks access tokens and what it publishes.
#[derive(Debug, Clone)]
pub struct OAuthConfig {
    /// The authorization server's issuer identifier (`iss` of its tokens, and where its
    /// metadata is discovered), e.g. `https://tenant.eu.auth0.com/`. HTTPS, or HTTP on a
    /// loopback host.
    pub issuer: String,
    /// This server's canonical URI (RFC 8707 / RFC 9728 `resource`), e.g.
    /// `https://mcp.example.com/mcp`: clients ask tokens for it, and a token whose `aud` does
    /// not name it (or one of [`Self::audiences`]) is refused.
    pub resource: String,
    /// Further accepted `aud` values (an authorization server that cannot put the resource
    /// URI in `aud`, e.g. an Auth0 API identifier). The resource URI is always accepted.
    pub audiences: Vec<String>,
    /// Scopes every request's token must grant (`--required-scope`).
    pub required_scopes: Vec<String>,
    /// Scopes published as `scopes_supported` besides the required ones (the tools' own
    /// scopes are added by the server).
    pub scopes_supported: Vec<String>,
    /// Token claims besides `sub` and the scopes that reach tools (as the call's
    /// [`Caller::claims`](crate::Caller::claims)).
    pub claims: Vec<String>,
    /// Clock skew allowed on `exp` and `nbf` (default 30 s).
    pub leeway: Duration,
    /// The JWKS URI, when the authorization server publishes no metadata (otherwise
    /// discovered).
    pub jwks_uri: Option<String>,
    /// The shortest time between two fetches of the key set (default 10 s): a token naming
    /// an unknown `kid` refetches it at most this often.
    pub key_refresh_interval: Duration,
    /// Accept opaque (non-JWT) access tokens by asking the authorization server about each
    /// (RFC 7662), caching positive answers for a bounded time.
    pub introspection: Option<Introspection>,
}

impl OAuthConfig {
    /// A configuration for tokens of `issuer` meant for `resource`; everything else default.
    pub fn new(issuer: impl Into<String>, resource: impl Into<String>) -> Self {
        OAuthConfig {
            issuer: issuer.into(),
            resource: resource.into(),
            audiences: Vec::new(),
            required_scopes: Vec::new(),
            scopes_supported: Vec::new(),
            claims: Vec::new(),
            leeway: Duration::from_secs(30),
            jwks_uri: None,
            key_refresh_interval: Duration::from_secs(10),
            introspection: None,
        }
    }
}

/// A configuration the resource server cannot work with.
#[derive(Debug, thiserror::Error)]
#[error("OAuth configuration: {0}")]
pub struct ConfigError(String);

/// Why a request's token is not accepted.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Refusal {
    /// No bearer token (401, no `error`, RFC 6750 §3.1).
    Missing,
    /// A token that is not valid for this server (401 `invalid_token`); the reason is logged
    /// and told to the client.
    Invalid(String),
    /// A valid token without these scopes (403 `insufficient_scope`, the scopes the request
    /// needs).
    InsufficientScope(Vec<String>),
}

impl fmt::Display for Refusal {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Refusal::Missing => write!(f, "no bearer token: send `Authorization: Bearer <access token>`"),
            Refusal::Invalid(why) => write!(f, "the access token is not valid here: {why}"),
            Refusal::InsufficientScope(scopes) => write!(f, "the access token lacks the scope(s) `{}`", scopes.join(" ")),
        }
    }
}

/// Checks access tokens for one MCP endpoint and describes it (RFC 9728).
pub struct ResourceServer {
    config: OAuthConfig,
    keys: KeySet,
    introspector: Option<Introspector>,
}

impl fmt::Debug for ResourceServer {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("ResourceServer")
            .field("config", &self.config)
            .finish_non_exhaustive()
    }
}

/// The well-known path of Protected Resource Metadata (RFC 9728 §3).
pub const METADATA_PATH: &str = "/.well-known/oauth-protected-resource";

impl ResourceServer {
    /// A resource server for `config`; its URIs are checked here, the authorization server
    /// is first asked when a token arrives.
    pub fn new(config: OAuthConfig) -> Result<Self, ConfigError> {
        let issuer = checked_url("the issuer", &config.issuer)?;
        let resource = checked_url("the resource", &config.resource)?;
        if resource.fragment().is_some() {
            return Err(ConfigError(format!("the resource `{}` must not have a fragment", config.resource)));
        }
        if let Some(jwks) = &config.jwks_uri {
            checked_url("the JWKS URI", jwks)?;
        }
        let scopes = config.required_scopes.iter().chain(&config.scopes_supported);
        if let Some(bad) = scopes.into_iter().find(|s| !crate::spec::is_scope_token(s)) {
            return Err(ConfigError(format!("`{bad}` is not an OAuth scope")));
        }
        let keys = KeySet::new(issuer, config.jwks_uri.clone(), config.key_refresh_interval).map_err(ConfigError)?;
        let introspector = match &config.introspection {
            Some(i) => {
                checked_url("the introspection endpoint", &i.endpoint)?;
                Some(Introspector::new(i.clone()).map_err(ConfigError)?)
            }
            None => None,
        };
        Ok(ResourceServer {
            config,
            keys,
            introspector,
        })
    }

    /// The configuration.
    pub fn config(&self) -> &OAuthConfig {
        &self.config
    }

    /// The identity of a request's `Authorization` header value, or why it is refused: a
    /// valid JWT of the issuer meant for this resource, granting the required scopes.
    pub async fn authenticate(&self, authorization: Option<&str>) -> Result<Caller, Refusal> {
        let token = authorization.and_then(super::gate::bearer).ok_or(Refusal::Missing)?;
        let identity = self.validate(token).await.map_err(Refusal::Invalid)?;
        let missing = identity.missing(&self.config.required_scopes);
        if missing.is_empty() {
            Ok(identity)
        } else {
            Err(Refusal::InsufficientScope(self.config.required_scopes.clone()))
        }
    }

    /// The URL of this resource's metadata document: the well-known path with the resource
    /// URI's path appended (RFC 9728 §3.1).
    pub fn metadata_url(&self) -> String {
        let Ok(url) = reqwest::Url::parse(&self.config.resource) else {
            return METADATA_PATH.to_owned();
        };
        let path = url.path().trim_end_matches('/');
        format!("{}{METADATA_PATH}{path}", url.origin().ascii_serialization())
    }

    /// The Protected Resource Metadata document, with `tool_scopes` (every tool's) added to
    /// `scopes_supported`.
    pub fn metadata(&self, tool_scopes: &[String]) -> Value {
        let mut scopes: Vec<&String> = Vec::new();
        for s in self
            .config
            .required_scopes
            .iter()
            .chain(&self.config.scopes_supported)
            .chain(tool_scopes)
        {
            if !scopes.contains(&s) {
                scopes.push(s);
            }
        }
        json!({
            "resource": self.config.resource,
            "authorization_servers": [self.config.issuer],
            "scopes_supported": scopes,
            "bearer_methods_supported": ["header"],
            "resource_name": "Toolsmith MCP server",
        })
    }

    /// The `WWW-Authenticate` value of a refusal (RFC 6750 §3, MCP authorization): always the
    /// metadata URL; the scopes to ask for when a token is missing (the required ones) or
    /// insufficient (what the request needs).
    pub fn challenge(&self, refusal: &Refusal) -> String {
        let mut parts = Vec::new();
        match refusal {
            Refusal::Missing => {}
            Refusal::Invalid(why) => {
                parts.push(r#"error="invalid_token""#.to_owned());
                parts.push(format!("error_description=\"{}\"", quoted(why)));
            }
            Refusal::InsufficientScope(_) => parts.push(r#"error="insufficient_scope""#.to_owned()),
        }
        let scopes = match refusal {
            Refusal::InsufficientScope(scopes) => scopes.clone(),
            _ => self.config.required_scopes.clone(),
        };
        if !scopes.is_empty() {
            parts.push(format!("scope=\"{}\"", scopes.join(" ")));
        }
        parts.push(format!("resource_metadata=\"{}\"", self.metadata_url()));
        format!("Bearer {}", parts.join(", "))
    }
}

/// `text` fit for a quoted-string: no `"` or `\`, printable ASCII only.
fn quoted(text: &str) -> String {
    text.chars()
        .map(|c| {
            if c.is_ascii_graphic() && c != '"' && c != '\\' || c == ' ' {
                c
            } else {
                '\''
            }
        })
        .collect()
}

/// `url` parsed, and HTTPS unless its host is a loopback one (MCP authorization: every
/// authorization server endpoint is HTTPS).
fn checked_url(what: &str, url: &str) -> Result<reqwest::Url, ConfigError> {
    let parsed = reqwest::Url::parse(url).map_err(|e| ConfigError(format!("{what} `{url}` is not a URL: {e}")))?;
    let host = parsed.host_str().unwrap_or_default().trim_start_matches('[').trim_end_matches(']');
    let loopback = host.eq_ignore_ascii_case("localhost") || host.parse::<std::net::IpAddr>().is_ok_and(|ip| ip.is_loopback());
    match parsed.scheme() {
        "https" => Ok(parsed),
        "http" if loopback => Ok(parsed),
        _ => Err(ConfigError(format!(
            "{what} `{url}` must be an https URL (http only on a loopback host)"
        ))),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn server(resource: &str) -> ResourceServer {
        let mut config = OAuthConfig::new("https://auth.example.com", resource);
        config.required_scopes = vec!["mcp".into()];
        ResourceServer::new(config).unwrap()
    }

    #[test]
    fn metadata_url_appends_the_resource_path() {
        assert_eq!(
            server("https://mcp.example.com/mcp").metadata_url(),
            "https://mcp.example.com/.well-known/oauth-protected-resource/mcp"
        );
        assert_eq!(
            server("https://mcp.example.com").metadata_url(),
            "https://mcp.example.com/.well-known/oauth-protected-resource"
        );
    }

    #[test]
    fn challenges_name_the_metadata_and_the_scopes() {
        let s = server("https://mcp.example.com/mcp");
        let meta = r#"resource_metadata="https://mcp.example.com/.well-known/oauth-protected-resource/mcp""#;
        assert_eq!(s.challenge(&Refusal::Missing), format!(r#"Bearer scope="mcp", {meta}"#));
        let bad = s.challenge(&Refusal::Invalid("the \"exp\" is past\n".into()));
        assert!(
            bad.starts_with(r#"Bearer error="invalid_token", error_description="the 'exp' is past'", scope="mcp""#),
            "{bad}"
        );
        let more = s.challenge(&Refusal::InsufficientScope(vec!["mcp".into(), "crm.write".into()]));
        assert_eq!(more, format!(r#"Bearer error="insufficient_scope", scope="mcp crm.write", {meta}"#));
    }

    #[test]
    fn insecure_or_odd_urls_are_refused() {
        for (issuer, resource) in [
            ("http://auth.example.com", "https://mcp.example.com"),
            ("https://auth.example.com", "ftp://mcp.example.com"),
            ("https://auth.example.com", "https://mcp.example.com/mcp#frag"),
            ("not a url", "https://mcp.example.com"),
        ] {
            assert!(
                ResourceServer::new(OAuthConfig::new(issuer, resource)).is_err(),
                "{issuer} {resource}"
            );
        }
        assert!(ResourceServer::new(OAuthConfig::new("http://127.0.0.1:9/", "http://localhost:8931/mcp")).is_ok());
    }
}
