//! Authorization server binding (SEP-2352, MCP 2026-07-28 "Authorization Server Binding"): a
//! stored login belongs to the authorization server that issued it, keyed by its `issuer`. When
//! the server's protected-resource metadata names another one, nothing of the old login (client
//! id, secret, tokens) is sent to the new one:
//!
//! - a user's login needs the user (a new registration and a new approval): the import fails,
//!   or the running call does, naming `mcp login NAME URL`, which registers with the new server
//!   (dynamic registration or the client ID metadata document; a pre-registered client is named:
//!   it is specific to the old server);
//! - a machine client whose id is portable (a client ID metadata document URL, signing
//!   `private_key_jwt` assertions with its own key) re-authorizes with the new server by itself:
//!   the new token endpoint, the new issuer as the assertion's audience;
//! - a machine client with a secret was registered with the old server: the error names the
//!   login with a client of the new one, as the specification asks ("surface an error rather
//!   than silently attempting to use mismatched credentials").

use std::sync::Arc;

use rmcp::transport::auth::{AuthorizationManager, AuthorizationMetadata};

use super::{Http, Machine, OAuthError, Saved, StoreAdapter};

/// Whether `client_id` is a client ID metadata document's URL (HTTPS, with a path): an id the
/// authorization server resolves itself, valid with any of them.
pub(crate) fn portable(client_id: &str) -> bool {
    reqwest13::Url::parse(client_id).is_ok_and(|u| u.scheme() == "https" && u.host_str().is_some() && u.path() != "/")
}

/// The issuer the stored login was made with, when it was recorded.
pub(crate) fn stored_issuer(saved: &Saved) -> Option<String> {
    let recorded = saved.credentials.as_ref().and_then(|c| c.issuer.clone());
    recorded.or_else(|| saved.machine.as_ref()?.signed.as_ref().map(|s| s.issuer.clone()))
}

/// Whether `machine` can take itself to another authorization server (see the module docs).
pub(crate) fn moves_by_itself(machine: &Machine) -> bool {
    machine.signed.is_some() && portable(&machine.client_id)
}

/// The authorization server metadata the MCP server at `url` names now: from the
/// `resource_metadata` of `challenge` (a 401's `WWW-Authenticate`) when given, else the
/// well-known locations, with the 2025-03-26 fallbacks.
pub(crate) async fn current(url: &str, http: &Http, challenge: Option<&str>) -> Result<AuthorizationMetadata, OAuthError> {
    let manager = AuthorizationManager::new_with_oauth_http_client(url, Arc::new(http.clone()))
        .await
        .map_err(OAuthError::auth(format!("the OAuth client for {url}")))?;
    let resolution = manager
        .resolve_metadata_from_challenge(challenge)
        .await
        .map_err(OAuthError::auth(format!("discovering the authorization server of {url}")))?;
    Ok(resolution.metadata)
}

/// The error for a login of `name` made with the authorization server `from` when the server
/// now names `to`, naming the login that registers with `to` (`login`: `mcp login NAME URL`).
/// `machine` is the login's machine client, `preregistered` whether its user login used a
/// client registered beforehand.
pub(crate) fn moved(name: &str, login: &str, machine: Option<&Machine>, preregistered: bool, from: &str, to: &str) -> OAuthError {
    let again = match machine {
        Some(machine) => format!(
            "log in again with a client registered with {to}: `{login} --client-credentials --client-id ID` (the client `{}` was registered with {from})",
            machine.client_id
        ),
        None if preregistered => {
            format!("log in again with `{login}`, with a client registered with {to} (`--client-id`) or none (to register one)")
        }
        None => format!("log in again with `{login}`"),
    };
    OAuthError::AuthorizationServerChanged {
        name: name.to_owned(),
        from: from.to_owned(),
        to: to.to_owned(),
        again,
    }
}

/// Takes the portable machine client `machine` to the authorization server of `metadata`: its
/// token endpoint and issuer (the assertion's audience) replaced, a token fetched there for
/// `resource` and saved with them (through `adapter`'s store, under its name). The scopes
/// granted.
pub(crate) async fn move_machine(
    machine: &mut Machine,
    metadata: &AuthorizationMetadata,
    resource: &str,
    adapter: &StoreAdapter,
    http: &reqwest13::Client,
) -> Result<Vec<String>, OAuthError> {
    let Some(signed) = machine.signed.as_mut() else {
        return Err(OAuthError::Login("this machine client signs no assertion".into()));
    };
    signed.token_endpoint = metadata.token_endpoint.clone();
    signed.issuer = metadata
        .issuer
        .clone()
        .ok_or_else(|| OAuthError::Login("the new authorization server's metadata names no issuer".into()))?;
    tracing::info!(issuer = %signed.issuer, "the MCP server names a new authorization server: the machine client moves to it");
    let mut adapter = adapter.clone();
    adapter.template.machine = Some(machine.clone());
    super::jwt::exchange(http, machine, resource, &adapter).await
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_a_metadata_document_url_is_a_portable_client_id() {
        assert!(portable("https://client.example/toolsmith.json"));
        assert!(!portable("https://client.example/"));
        assert!(!portable("http://client.example/toolsmith.json"));
        assert!(!portable("client-1"));
    }

    #[test]
    fn the_error_names_the_login_each_kind_of_client_needs() {
        let user = moved("crm", "toolsmith mcp login crm U", None, false, "http://as1", "http://as2").to_string();
        assert!(
            user.contains("now names the authorization server http://as2")
                && user.contains("http://as1")
                && user.ends_with("log in again with `toolsmith mcp login crm U`"),
            "{user}"
        );
        let registered = moved("crm", "L", None, true, "http://as1", "http://as2").to_string();
        assert!(
            registered.contains("a client registered with http://as2 (`--client-id`)"),
            "{registered}"
        );
        let machine = Machine {
            client_id: "machine".into(),
            client_secret: "machine-secret-CANARY".into(),
            scopes: vec![],
            signed: None,
            bearer: None,
        };
        let machine = moved("ci", "L", Some(&machine), false, "http://as1", "http://as2").to_string();
        assert!(
            machine.contains("`L --client-credentials --client-id ID`") && machine.contains("the client `machine`"),
            "{machine}"
        );
        assert!(!machine.contains("CANARY"), "{machine}");
    }
}
