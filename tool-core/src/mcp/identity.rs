//! Who is calling: the [`Caller`] an authorization layer established for an HTTP request.
//!
//! Establishing a caller is the transport's: the OAuth resource server (`oauth`, feature
//! `oauth`) puts one in the request's extensions, and so can an application's own layer in
//! front of [`router`](super::http::router); the static-token gate marks its holder. A call
//! carries its caller as a typed value ([`CallData::caller`](crate::CallData)); the request
//! context stays the application's own. The bearer token itself never reaches any of this.

use rmcp::service::{RequestContext, RoleServer};

use crate::Caller;

/// The identified caller (a token's subject) the transport established for the request
/// carrying `ctx`, if any: whose scopes are checked, whose listing may be filtered.
pub(super) fn of(ctx: &RequestContext<RoleServer>) -> Option<&Caller> {
    ctx.extensions.get::<axum::http::request::Parts>()?.extensions.get::<Caller>()
}

/// The caller a call of this request carries: the identified one, else the holder of the
/// server's static bearer token, else nobody.
pub(super) fn caller_of(ctx: &RequestContext<RoleServer>) -> Option<Caller> {
    let http = ctx.extensions.get::<axum::http::request::Parts>()?;
    match http.extensions.get::<Caller>() {
        Some(caller) => Some(caller.clone()),
        None => http.extensions.get::<super::caching::Authorized>().map(|_| Caller::static_token()),
    }
}

/// The owner key of this request's caller ([`Caller::owner`]), `None` without one: what every
/// object a call of this request leaves (a waiting call, a parked run, a sealed state) is bound
/// to, and what answering, reading or cancelling one must match.
pub(super) fn owner_of(ctx: &RequestContext<RoleServer>) -> Option<String> {
    caller_of(ctx).map(|caller| caller.owner())
}

/// Who decides through this request, for the audit trail: its caller, or an anonymous client.
pub(super) fn actor_of(ctx: &RequestContext<RoleServer>) -> crate::runtime::Actor {
    crate::runtime::Actor::of(caller_of(ctx).as_ref())
}

/// `owner` as a sealed field: the owner key, or the empty string for none (no owner key is empty).
pub(super) fn sealed_owner(owner: Option<&str>) -> &str {
    owner.unwrap_or_default()
}

/// Logs that a request named an object that is another caller's: at warn, without arguments
/// (never the object's id, state or the caller), so the log is no oracle either.
pub(super) fn refused_as_unknown(what: &'static str) {
    tracing::warn!(object = what, "a request named another caller's object; answered as unknown");
}

/// The error text of a call whose token lacks scopes the tool needs.
pub(super) fn missing_text(tool: &str, missing: &[&str]) -> String {
    format!(
        "Not authorized: calling `{tool}` needs the scope(s) `{}`, which the access token does not grant. Authorize again asking for them.",
        missing.join(" ")
    )
}
