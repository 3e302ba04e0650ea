//! Who may use the HTTP endpoint: nobody asked (local use), one static bearer token, or an
//! OAuth 2.1 resource server (feature `oauth`).
//!
//! Owns [`Gate`]: admitting a request by its `Authorization` header (`401` with a
//! `WWW-Authenticate` challenge otherwise; an OAuth token's identity is handed on in the
//! request's extensions and the header is removed, so nothing after the transport ever sees
//! the token), refusing a `tools/call` whose tool needs scopes the token lacks (`403
//! insufficient_scope`, the spec's runtime scope challenge, so a client can step up), and
//! serving Protected Resource Metadata (RFC 9728). The rest of the request checks are `http`'s;
//! what a call does with the identity is `call`'s.

use axum::http::{HeaderMap, HeaderValue, StatusCode, header};
use axum::response::Response;
use serde_json::Value;

use super::body::Message;
use super::guard::refuse;
use crate::Caller;

/// What the gate needs to know of the tools: the scopes each needs.
#[cfg(feature = "oauth")]
pub(super) trait ToolScopes: Send + Sync {
    /// The scopes of the tool listed as `name` (`None`: no such tool).
    fn of(&self, name: &str) -> Option<Vec<String>>;
    /// Every scope some tool needs.
    fn all(&self) -> Vec<String>;
}

/// How requests are admitted.
pub(super) enum Gate {
    /// Everyone (a local server; `Host`/`Origin` checks still apply).
    Open,
    /// Requests carrying this bearer token.
    Token(String),
    /// Requests carrying an access token the resource server accepts.
    #[cfg(feature = "oauth")]
    OAuth {
        server: std::sync::Arc<super::oauth::ResourceServer>,
        tools: std::sync::Arc<dyn ToolScopes>,
    },
}

impl Gate {
    /// The caller of a request (`None` when the gate knows no identities), or the refusal.
    /// The `Authorization` header is removed once read.
    pub(super) async fn admit(&self, headers: &mut HeaderMap) -> Result<Option<Caller>, Response> {
        let authorization = headers.remove(header::AUTHORIZATION);
        let value = authorization.as_ref().and_then(|v| v.to_str().ok());
        match self {
            Gate::Open => Ok(None),
            Gate::Token(token) => {
                if value.and_then(bearer).is_some_and(|t| same_secret(t.as_bytes(), token.as_bytes())) {
                    return Ok(None);
                }
                let mut r = refuse(
                    "no valid bearer token",
                    StatusCode::UNAUTHORIZED,
                    Value::Null,
                    -32001,
                    "Unauthorized: send `Authorization: Bearer <token>`".into(),
                );
                r.headers_mut().insert(header::WWW_AUTHENTICATE, HeaderValue::from_static("Bearer"));
                Err(r)
            }
            #[cfg(feature = "oauth")]
            Gate::OAuth { server, .. } => server
                .authenticate(value)
                .await
                .map(Some)
                .map_err(|refusal| oauth::refused(server, &refusal, Value::Null)),
        }
    }

    /// A `403 insufficient_scope` for a `tools/call` whose tool needs scopes `caller` lacks
    /// (the challenge names the tool's scopes and the server's required ones).
    pub(super) fn check_call(&self, caller: &Caller, message: &Message<'_>) -> Option<Response> {
        #[cfg(feature = "oauth")]
        if let Gate::OAuth { server, tools } = self {
            return oauth::check_call(server, &**tools, caller, message);
        }
        let _ = (caller, message);
        None
    }

    /// The Protected Resource Metadata routes (OAuth only).
    pub(super) fn metadata_routes(&self) -> Option<axum::Router> {
        #[cfg(feature = "oauth")]
        if let Gate::OAuth { server, tools } = self {
            return Some(oauth::routes(server.clone(), tools.clone()));
        }
        None
    }
}

/// The token of an `Authorization: Bearer <token>` value (the scheme is case-insensitive,
/// RFC 9110 §11.1).
pub(super) fn bearer(value: &str) -> Option<&str> {
    let (scheme, token) = value.split_once(' ')?;
    let token = token.trim();
    (scheme.eq_ignore_ascii_case("bearer") && !token.is_empty()).then_some(token)
}

/// Compares without an early exit on the first differing byte.
fn same_secret(a: &[u8], b: &[u8]) -> bool {
    a.len() == b.len() && a.iter().zip(b).fold(0u8, |acc, (x, y)| acc | (x ^ y)) == 0
}

#[cfg(feature = "oauth")]
mod oauth {
    use std::sync::Arc;

    use axum::http::{HeaderValue, StatusCode, header};
    use axum::response::{IntoResponse, Response};
    use serde_json::Value;

    use super::super::body::Message;
    use super::super::guard::refuse;
    use super::super::oauth::{METADATA_PATH, Refusal, ResourceServer};
    use super::ToolScopes;
    use crate::Caller;

    /// The answer to a refused token: 401 (missing, invalid) or 403 (insufficient scope),
    /// with the challenge.
    pub(super) fn refused(server: &ResourceServer, refusal: &Refusal, id: Value) -> Response {
        let (status, code, reason) = match refusal {
            Refusal::Missing => (StatusCode::UNAUTHORIZED, -32001, "no access token"),
            Refusal::Invalid(_) => (StatusCode::UNAUTHORIZED, -32001, "invalid access token"),
            Refusal::InsufficientScope(_) => (StatusCode::FORBIDDEN, -32003, "insufficient scope"),
        };
        if let Refusal::Invalid(why) = refusal {
            tracing::warn!(why = %why, "refused an access token");
        }
        let mut r = refuse(reason, status, id, code, format!("Unauthorized: {refusal}"));
        if let Ok(challenge) = HeaderValue::from_str(&server.challenge(refusal)) {
            r.headers_mut().insert(header::WWW_AUTHENTICATE, challenge);
        }
        r
    }

    pub(super) fn check_call(server: &ResourceServer, tools: &dyn ToolScopes, caller: &Caller, message: &Message<'_>) -> Option<Response> {
        if !message.is("tools/call") {
            return None;
        }
        /// The tool a `tools/call` names.
        #[derive(serde::Deserialize)]
        struct Named<'a> {
            #[serde(borrow)]
            name: std::borrow::Cow<'a, str>,
        }
        let named = serde_json::from_str::<Named>(message.params()?.get()).ok()?;
        let needed = tools.of(&named.name)?;
        if caller.missing(&needed).is_empty() {
            return None;
        }
        let mut scopes = server.config().required_scopes.clone();
        scopes.extend(needed.into_iter().filter(|s| !server.config().required_scopes.contains(s)));
        Some(refused(server, &Refusal::InsufficientScope(scopes), message.id()))
    }

    /// `GET /.well-known/oauth-protected-resource` and the form with the resource's path
    /// appended (RFC 9728 §3.1), readable from any origin (the document is public).
    pub(super) fn routes(server: Arc<ResourceServer>, tools: Arc<dyn ToolScopes>) -> axum::Router {
        let suffixed = reqwest::Url::parse(&server.config().resource)
            .map(|u| u.path().trim_end_matches('/').to_owned())
            .unwrap_or_default();
        let document = move || {
            let body = server.metadata(&tools.all()).to_string();
            async move {
                (
                    [
                        (header::CONTENT_TYPE, "application/json"),
                        (header::ACCESS_CONTROL_ALLOW_ORIGIN, "*"),
                        (header::CACHE_CONTROL, "max-age=300"),
                    ],
                    body,
                )
                    .into_response()
            }
        };
        let mut router = axum::Router::new().route(METADATA_PATH, axum::routing::get(document.clone()));
        if !suffixed.is_empty() {
            router = router.route(&format!("{METADATA_PATH}{suffixed}"), axum::routing::get(document));
        }
        router
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn bearer_values() {
        assert_eq!(bearer("Bearer abc"), Some("abc"));
        assert_eq!(bearer("bearer  abc "), Some("abc"));
        assert_eq!(bearer("Basic abc"), None);
        assert_eq!(bearer("Bearer "), None);
        assert_eq!(bearer("Bearer"), None);
    }

    #[tokio::test]
    async fn static_tokens_compare_exactly_and_are_removed() {
        let gate = Gate::Token("s3cret".into());
        for (given, ok) in [
            ("Bearer s3cret", true),
            ("bearer s3cret", true),
            ("Bearer s3cre", false),
            ("s3cret", false),
        ] {
            let mut h = HeaderMap::new();
            h.insert(header::AUTHORIZATION, given.parse().unwrap());
            assert_eq!(gate.admit(&mut h).await.is_ok(), ok, "{given}");
            assert!(h.get(header::AUTHORIZATION).is_none());
        }
        assert!(gate.admit(&mut HeaderMap::new()).await.is_err());
    }
}
