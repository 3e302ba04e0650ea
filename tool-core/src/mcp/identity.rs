//! Who is calling: the identity an authorization layer established for an HTTP request, and
//! what it means for a call.
//!
//! Owns [`Identity`] (subject, granted scopes, chosen claims), the scope check every entry
//! point shares ([`Identity::missing`]) and the request context a call of an identity runs with
//! ([`Identity::context`]). Establishing an identity is the transport's: the OAuth resource
//! server (`oauth`, feature `oauth`) puts one in the request's extensions, and so can an
//! application's own layer in front of [`router`](super::http::router). The bearer token itself
//! never reaches this type, nor anything after the transport.

use std::collections::BTreeSet;

use rmcp::service::{RequestContext, RoleServer};
use serde_json::{Map, Value, json};

use crate::context::RESOURCE_ID_KEYS;

/// The request-context key under which a call sees its caller's identity:
/// `{"subject": …, "scopes": […], "claims": {…}}`.
pub const AUTH_CONTEXT_KEY: &str = "auth";

/// The authenticated caller of an HTTP request.
///
/// ```
/// use tool_core::mcp::Identity;
/// let alice = Identity::new("alice", ["crm.read"]);
/// assert_eq!(alice.missing(&["crm.read".into(), "crm.write".into()]), ["crm.write"]);
/// let context = alice.context(Some(&serde_json::json!({"resourceId": "spoofed", "region": "eu"})));
/// assert_eq!(context["mastra__resourceId"], "alice");
/// assert_eq!(context["region"], "eu");
/// assert!(context.get("resourceId").is_none());
/// assert_eq!(context["auth"]["scopes"], serde_json::json!(["crm.read"]));
/// ```
#[derive(Debug, Clone, PartialEq, Default)]
pub struct Identity {
    /// Who the token was issued for (the JWT `sub`): the call's resource id.
    pub subject: String,
    /// The scopes the token grants.
    pub scopes: BTreeSet<String>,
    /// The claims chosen to reach tools (e.g. `email`, `org_id`), as the token has them.
    pub claims: Map<String, Value>,
}

impl Identity {
    /// An identity with a subject and scopes, and no claims.
    pub fn new<S: Into<String>>(subject: impl Into<String>, scopes: impl IntoIterator<Item = S>) -> Self {
        Identity {
            subject: subject.into(),
            scopes: scopes.into_iter().map(Into::into).collect(),
            claims: Map::new(),
        }
    }

    /// The scopes of `required` this identity is not granted, in order.
    pub fn missing<'a>(&self, required: &'a [String]) -> Vec<&'a str> {
        required.iter().filter(|s| !self.scopes.contains(*s)).map(String::as_str).collect()
    }

    /// The request context a call of this identity gets: `base` (the server's configured
    /// context; an object, else ignored) with every resource-id key replaced by the subject
    /// (so a provider's caller-supplied scope is this caller's, whatever `base` said), and the
    /// identity under [`AUTH_CONTEXT_KEY`].
    pub fn context(&self, base: Option<&Value>) -> Value {
        let mut context = match base {
            Some(Value::Object(map)) => map.clone(),
            _ => Map::new(),
        };
        for key in RESOURCE_ID_KEYS {
            context.remove(key);
        }
        context.insert(RESOURCE_ID_KEYS[0].to_owned(), Value::String(self.subject.clone()));
        context.insert(
            AUTH_CONTEXT_KEY.to_owned(),
            json!({"subject": self.subject, "scopes": self.scopes, "claims": self.claims}),
        );
        Value::Object(context)
    }
}

/// The identity the transport established for the request carrying `ctx`, if any.
pub(super) fn of(ctx: &RequestContext<RoleServer>) -> Option<&Identity> {
    ctx.extensions.get::<axum::http::request::Parts>()?.extensions.get::<Identity>()
}

/// The error text of a call whose token lacks scopes the tool needs.
pub(super) fn missing_text(tool: &str, missing: &[&str]) -> String {
    format!(
        "Not authorized: calling `{tool}` needs the scope(s) `{}`, which the access token does not grant. Authorize again asking for them.",
        missing.join(" ")
    )
}
