//! Who made a call: the caller the transport authenticated, as a typed value carried with the
//! call (never as JSON in the request context, which stays the application's own data).
//!
//! Owns [`Caller`]: an OAuth token's subject, scopes, client and chosen claims (or an identity
//! an application's own layer established the same way), or the holder of a server's static
//! bearer token. Calls without one (stdio, an open HTTP endpoint, a direct
//! [`Registry::call`](crate::Registry::call)) have no caller. Tools read it with
//! [`ToolContext::caller`](crate::ToolContext::caller), hooks through
//! [`ToolCallInfo::caller`](crate::ToolCallInfo), the runtime keeps it with a waiting call
//! ([`CallData::caller`](crate::CallData)), and whatever binds an object to its owner uses
//! [`Caller::owner`]. The bearer token itself never reaches this type.

use std::collections::BTreeSet;

use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};

/// The authenticated caller of a call.
///
/// ```
/// use tool_core::Caller;
/// let alice = Caller::new("alice", ["crm.read"]).with_client_id("crm-app");
/// assert_eq!(alice.subject(), Some("alice"));
/// assert_eq!(alice.client_id(), Some("crm-app"));
/// assert_eq!(alice.missing(&["crm.read".into(), "crm.write".into()]), ["crm.write"]);
/// assert_eq!(alice.owner(), "subject:alice");
///
/// let holder = Caller::static_token();
/// assert_eq!(holder.subject(), None);
/// assert_eq!(holder.owner(), "bearer-token");
/// ```
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Caller {
    #[serde(default, skip_serializing_if = "Option::is_none")]
    subject: Option<String>,
    #[serde(default, skip_serializing_if = "BTreeSet::is_empty")]
    scopes: BTreeSet<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    client_id: Option<String>,
    #[serde(default, skip_serializing_if = "Map::is_empty")]
    claims: Map<String, Value>,
}

impl Caller {
    /// A caller identified as `subject` (an OAuth token's `sub`), granted `scopes`.
    pub fn new<S: Into<String>>(subject: impl Into<String>, scopes: impl IntoIterator<Item = S>) -> Self {
        Caller {
            subject: Some(subject.into()),
            scopes: scopes.into_iter().map(Into::into).collect(),
            client_id: None,
            claims: Map::new(),
        }
    }

    /// The holder of the server's one static bearer token: no subject, no scopes (every holder
    /// of the token is the same caller).
    pub fn static_token() -> Self {
        Caller {
            subject: None,
            scopes: BTreeSet::new(),
            client_id: None,
            claims: Map::new(),
        }
    }

    /// The OAuth client the token was issued to (`client_id`, else `azp`).
    pub fn with_client_id(mut self, client_id: impl Into<String>) -> Self {
        self.client_id = Some(client_id.into());
        self
    }

    /// The token's claims chosen to reach tools (e.g. `email`, `org_id`).
    pub fn with_claims(mut self, claims: Map<String, Value>) -> Self {
        self.claims = claims;
        self
    }

    /// Who the token was issued for; `None` for the static-token holder.
    pub fn subject(&self) -> Option<&str> {
        self.subject.as_deref()
    }

    /// The scopes the token grants.
    pub fn scopes(&self) -> &BTreeSet<String> {
        &self.scopes
    }

    /// The OAuth client the token was issued to, when the token says.
    pub fn client_id(&self) -> Option<&str> {
        self.client_id.as_deref()
    }

    /// The chosen claims, as the token has them.
    pub fn claims(&self) -> &Map<String, Value> {
        &self.claims
    }

    /// The scopes of `required` this caller is not granted, in order.
    pub fn missing<'a>(&self, required: &'a [String]) -> Vec<&'a str> {
        required.iter().filter(|s| !self.scopes.contains(*s)).map(String::as_str).collect()
    }

    /// The key under which objects this caller creates are bound to it (tasks, kept results,
    /// sessions, idempotency keys): `subject:<sub>`, or `bearer-token` for the static-token
    /// holder. Two callers never share one.
    pub fn owner(&self) -> String {
        match &self.subject {
            Some(subject) => format!("subject:{subject}"),
            None => "bearer-token".to_owned(),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_caller_is_stored_and_read_back_whole() {
        let mut claims = Map::new();
        claims.insert("email".into(), "a@example.com".into());
        let alice = Caller::new("alice", ["a", "b"]).with_client_id("app").with_claims(claims);
        let stored = serde_json::to_value(&alice).unwrap();
        assert_eq!(
            stored,
            serde_json::json!({"subject": "alice", "scopes": ["a", "b"], "client_id": "app", "claims": {"email": "a@example.com"}})
        );
        assert_eq!(serde_json::from_value::<Caller>(stored).unwrap(), alice);
        let holder = serde_json::to_value(Caller::static_token()).unwrap();
        assert_eq!(holder, serde_json::json!({}));
        assert_eq!(serde_json::from_value::<Caller>(holder).unwrap(), Caller::static_token());
    }

    #[test]
    fn owners_of_different_callers_differ() {
        let owners = [
            Caller::new("a", [""; 0]).owner(),
            Caller::new("b", [""; 0]).owner(),
            Caller::static_token().owner(),
        ];
        assert_eq!(owners.iter().collect::<BTreeSet<_>>().len(), 3);
        // A subject that looks like the static holder's key is still a subject.
        assert_ne!(Caller::new("bearer-token", [""; 0]).owner(), Caller::static_token().owner());
    }
}
