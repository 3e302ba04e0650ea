//! The MCP client as an OAuth 2.1 client, on `rmcp`'s `auth` support: what a login stores,
//! how a connection finds and refreshes its tokens, and the HTTP requests the OAuth exchanges
//! make (over the same TLS settings as the MCP session).
//!
//! `rmcp` does the protocol: protected-resource metadata (RFC 9728, from the 401's
//! `WWW-Authenticate` `resource_metadata` or the well-known URLs), authorization-server
//! metadata (RFC 8414 / OpenID discovery, with the 2025-03-26 fallbacks), PKCE S256, client ID
//! metadata documents, dynamic client registration (RFC 7591) or a pre-registered client, scope
//! selection (the challenge's `scope`, else the resource's `scopes_supported`, with
//! `offline_access` when offered), the `iss` check of the authorization response (RFC 9207), the
//! refresh of a token close to its expiry, and client credentials for machines.
//!
//! Toolsmith adds the authorization extensions `rmcp` lacks: DPoP-bound tokens when the
//! authorization server offers them (`dpop`), `private_key_jwt` client assertions (`jwt`), and
//! the JWT bearer grant of workload identity federation and enterprise-managed authorization
//! (`bearer`), whose token requests it sends itself (`grant`).
//!
//! This module keeps what a login obtained in a [`CredentialStore`] under the import's name
//! (`Saved`: the server URL, the tokens, the client and, for a machine client, its secret) and
//! builds the authorized HTTP client a connection uses (`authorized`); [`login`] runs the
//! logins. Tokens and secrets are never logged nor put in errors.

use std::sync::Arc;

use rmcp::transport::auth::{
    AuthClient, AuthError, AuthorizationManager, ClientCredentialsConfig, CredentialStore as RmcpCredentialStore, OAuthClientConfig,
    OAuthHttpClient, OAuthHttpClientError, OAuthHttpClientFuture, OAuthHttpRedirectPolicy, OAuthHttpRequest, StoredCredentials,
};
use serde::{Deserialize, Serialize};
use tool_core::credentials::{CredentialError, CredentialStore};

mod bearer;
mod binding;
mod dpop;
mod grant;
mod interactive;
mod jwt;
mod login;
mod session;

pub use interactive::InteractiveLogin;
pub use login::{IdentityProvider, Logged, Login, LoginMethod, login};
pub use session::LoginNote;
pub(crate) use session::Reauthorizing;

/// Why an OAuth step of the MCP client failed. Never carries a token or a secret.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum OAuthError {
    /// The credential store failed, or a stored row was changed outside Toolsmith.
    #[error(transparent)]
    Store(#[from] CredentialError),
    /// The stored login cannot be used any more (no refresh token, the refresh was refused, the
    /// stored row is unreadable, or it was made for another URL): log in again with `login`.
    #[error("the MCP server `{name}` needs a new login ({why}): run `{login}`")]
    LoginRequired {
        /// The import's name.
        name: String,
        /// Why.
        why: String,
        /// The command that logs in.
        login: String,
    },
    /// The server's protected-resource metadata names another authorization server than the
    /// one the stored login was made with (SEP-2352): nothing of that login is sent to the new
    /// one, and only a new login (or, for a portable machine client, a new token) goes on.
    #[error(
        "the MCP server `{name}` now names the authorization server {to}, not {from} that its stored login was made with, and a login is not carried from one authorization server to another: {again}"
    )]
    AuthorizationServerChanged {
        /// The import's name.
        name: String,
        /// The issuer of the stored login.
        from: String,
        /// The issuer the server names now.
        to: String,
        /// What to run (the login command, and the client it needs).
        again: String,
    },
    /// An OAuth exchange failed (discovery, registration, authorization, token).
    #[error("{step}: {detail}")]
    Auth {
        /// What was being done.
        step: String,
        /// The error's words and those of its causes (an HTTP failure's reason included).
        detail: String,
        /// `rmcp`'s error.
        #[source]
        source: AuthError,
    },
    /// The login did not complete: the callback carried an error, never came, or was malformed.
    #[error("{0}")]
    Login(String),
    /// The loopback listener or the browser could not be used.
    #[error("{what}: {source}")]
    Io {
        /// What was being done.
        what: String,
        /// The cause.
        #[source]
        source: std::io::Error,
    },
}

impl OAuthError {
    /// Whether only a new login by the user (or a machine client's new credentials) cures it:
    /// the stored login is spent or was made with another authorization server.
    pub fn needs_the_user(&self) -> bool {
        matches!(
            self,
            OAuthError::LoginRequired { .. } | OAuthError::AuthorizationServerChanged { .. }
        )
    }

    fn auth(step: impl Into<String>) -> impl FnOnce(AuthError) -> OAuthError {
        let step = step.into();
        move |source| {
            let mut detail = source.to_string();
            let mut next = std::error::Error::source(&source);
            while let Some(cause) = next {
                let words = cause.to_string();
                if !words.is_empty() && !detail.contains(&words) {
                    detail = format!("{detail}: {words}");
                }
                next = cause.source();
            }
            OAuthError::Auth { step, detail, source }
        }
    }
}

/// A machine client: the client-credentials grant's settings (SEP-1046).
#[derive(Clone, Serialize, Deserialize)]
pub(crate) struct Machine {
    pub(crate) client_id: String,
    /// Empty for a client that signs assertions instead (`signed`).
    pub(crate) client_secret: String,
    #[serde(default)]
    pub(crate) scopes: Vec<String>,
    /// The key, token endpoint and issuer of a `private_key_jwt` client.
    #[serde(default)]
    pub(crate) signed: Option<jwt::Signed>,
    /// The JWT bearer grant's settings (workload identity, enterprise-managed authorization).
    #[serde(default)]
    pub(crate) bearer: Option<bearer::Bearer>,
}

impl Machine {
    pub(crate) fn config(&self, resource: &str) -> ClientCredentialsConfig {
        ClientCredentialsConfig::ClientSecret {
            client_id: self.client_id.clone(),
            client_secret: self.client_secret.clone(),
            scopes: self.scopes.clone(),
            resource: Some(resource.to_owned()),
        }
    }
}

/// What is stored under an import's name: the JSON document in the credential store.
#[derive(Clone, Serialize, Deserialize)]
pub(crate) struct Saved {
    /// The MCP server logged in to.
    pub(crate) url: String,
    /// The redirect URI the client was registered with (authorization code logins).
    #[serde(default)]
    pub(crate) redirect_uri: Option<String>,
    /// A pre-registered confidential client's secret (authorization code logins).
    #[serde(default)]
    pub(crate) client_secret: Option<String>,
    /// Whether the authorization code login used a client registered beforehand (`--client-id`),
    /// which is specific to its authorization server.
    #[serde(default)]
    pub(crate) preregistered: bool,
    /// The client-credentials settings (machine logins).
    #[serde(default)]
    pub(crate) machine: Option<Machine>,
    /// The tokens, as `rmcp` keeps them.
    #[serde(default)]
    pub(crate) credentials: Option<StoredCredentials>,
    /// The key the tokens are bound to (DPoP, RFC 9449), when the authorization server offered it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub(crate) dpop: Option<dpop::DpopKey>,
}

/// `rmcp`'s credential store over ours: one [`Saved`] document under `name`, its tokens
/// replaced on every save (a refresh) and the rest kept.
#[derive(Clone)]
pub(crate) struct StoreAdapter {
    pub(crate) store: Arc<dyn CredentialStore>,
    pub(crate) name: String,
    /// What is saved with the tokens.
    pub(crate) template: Saved,
}

impl StoreAdapter {
    pub(crate) async fn read(store: &dyn CredentialStore, name: &str) -> Result<Option<Saved>, OAuthError> {
        let Some(bytes) = store.get(name.to_owned()).await? else {
            return Ok(None);
        };
        // A document that does not parse says nothing about where: never its text.
        serde_json::from_slice(&bytes)
            .map(Some)
            .map_err(|e| OAuthError::Login(format!("the stored login of `{name}` is unreadable ({})", e.classify_name())))
    }
}

/// The serde error's kind, without the input it quotes.
trait Classify {
    fn classify_name(&self) -> &'static str;
}

impl Classify for serde_json::Error {
    fn classify_name(&self) -> &'static str {
        match self.classify() {
            serde_json::error::Category::Io => "I/O",
            serde_json::error::Category::Syntax => "not JSON",
            serde_json::error::Category::Data => "unexpected fields",
            serde_json::error::Category::Eof => "truncated",
        }
    }
}

fn store_failure(e: impl std::fmt::Display) -> AuthError {
    AuthError::CredentialStoreError(e.to_string())
}

#[async_trait::async_trait]
impl RmcpCredentialStore for StoreAdapter {
    async fn load(&self) -> Result<Option<StoredCredentials>, AuthError> {
        let saved = StoreAdapter::read(&*self.store, &self.name).await.map_err(store_failure)?;
        Ok(saved.and_then(|s| s.credentials))
    }

    async fn save(&self, credentials: StoredCredentials) -> Result<(), AuthError> {
        let mut saved = self.template.clone();
        saved.credentials = Some(credentials);
        let bytes = serde_json::to_vec(&saved).map_err(|e| store_failure(e.classify_name()))?;
        self.store.put(self.name.clone(), bytes).await.map_err(store_failure)
    }

    async fn clear(&self) -> Result<(), AuthError> {
        self.store.remove(self.name.clone()).await.map(drop).map_err(store_failure)
    }
}

/// The OAuth exchanges' HTTP requests, sent by reqwest clients with the MCP session's TLS
/// settings: one that follows redirects, one that stops at them (as each exchange asks). A token
/// request of a DPoP login carries a proof (and is sent again, once, with the nonce the
/// authorization server asks for).
#[derive(Clone)]
pub(crate) struct Http {
    pub(crate) follow: reqwest13::Client,
    pub(crate) stop: reqwest13::Client,
    /// The login's DPoP key, once it has one.
    pub(crate) dpop: dpop::DpopSlot,
}

/// Whether `request` is a token request (RFC 6749 §3.2: a form POST with a `grant_type`).
fn is_token_request(request: &http::Request<Vec<u8>>) -> bool {
    let form = request
        .headers()
        .get(http::header::CONTENT_TYPE)
        .and_then(|v| v.to_str().ok())
        .is_some_and(|v| v.starts_with("application/x-www-form-urlencoded"));
    request.method() == http::Method::POST && form && request.body().split(|b| *b == b'&').any(|p| p.starts_with(b"grant_type="))
}

/// Whether a token endpoint's answer asks for a DPoP nonce (RFC 9449 §8: a 400 `use_dpop_nonce`).
pub(crate) fn refused_for_nonce(status: http::StatusCode, body: &[u8]) -> bool {
    status == http::StatusCode::BAD_REQUEST
        && serde_json::from_slice::<serde_json::Value>(body)
            .ok()
            .and_then(|v| v.get("error").and_then(|e| e.as_str()).map(|e| e == "use_dpop_nonce"))
            .unwrap_or(false)
}

/// A copy of `request` (an `http::Request` is not `Clone`).
fn copy(request: &http::Request<Vec<u8>>) -> http::Request<Vec<u8>> {
    let mut copy = http::Request::new(request.body().clone());
    *copy.method_mut() = request.method().clone();
    *copy.uri_mut() = request.uri().clone();
    *copy.version_mut() = request.version();
    *copy.headers_mut() = request.headers().clone();
    copy
}

/// Largest OAuth response body read (metadata, registration, tokens).
const MAX_BODY: usize = 1 << 20;

impl Http {
    /// Sends `request` (with `timeout`) through `client`, its answer read whole (bounded).
    async fn send(
        client: &reqwest13::Client,
        request: http::Request<Vec<u8>>,
        timeout: Option<std::time::Duration>,
    ) -> Result<http::Response<Vec<u8>>, OAuthHttpClientError> {
        let mut outgoing = reqwest13::Request::try_from(request).map_err(|e| Box::new(e) as OAuthHttpClientError)?;
        if let Some(timeout) = timeout {
            *outgoing.timeout_mut() = Some(timeout);
        }
        let mut response = client.execute(outgoing).await.map_err(|e| Box::new(e) as OAuthHttpClientError)?;
        let mut builder = http::Response::builder().status(response.status()).version(response.version());
        for (name, value) in response.headers() {
            builder = builder.header(name, value);
        }
        let mut body = Vec::new();
        while let Some(chunk) = response.chunk().await.map_err(|e| Box::new(e) as OAuthHttpClientError)? {
            if body.len() + chunk.len() > MAX_BODY {
                return Err(format!("the OAuth response is larger than {MAX_BODY} bytes").into());
            }
            body.extend_from_slice(&chunk);
        }
        builder.body(body).map_err(|e| Box::new(e) as OAuthHttpClientError)
    }
}

impl OAuthHttpClient for Http {
    fn execute(&self, request: OAuthHttpRequest) -> OAuthHttpClientFuture<'_> {
        Box::pin(async move {
            let client = match request.redirect_policy {
                OAuthHttpRedirectPolicy::Stop => &self.stop,
                _ => &self.follow,
            };
            let timeout = request.timeout;
            let request = request.request;
            let Some(dpop) = self.dpop.get().filter(|_| is_token_request(&request)) else {
                return Http::send(client, request, timeout).await;
            };
            let url = request.uri().to_string();
            let mut retried = false;
            loop {
                let mut outgoing = copy(&request);
                let proof = dpop.proof("POST", &url, None).map_err(|e| Box::new(e) as OAuthHttpClientError)?;
                let proof = http::HeaderValue::from_str(&proof).map_err(|e| Box::new(e) as OAuthHttpClientError)?;
                outgoing.headers_mut().insert("dpop", proof);
                let response = Http::send(client, outgoing, timeout).await?;
                let nonce = response.headers().get("dpop-nonce").and_then(|v| v.to_str().ok());
                let fresh = nonce.is_some_and(|nonce| dpop.remember_nonce(&url, nonce));
                if fresh && !retried && refused_for_nonce(response.status(), response.body()) {
                    retried = true;
                    continue;
                }
                return Ok(response);
            }
        })
    }
}

/// An authorization manager for the server at `url`, its requests sent by `http`, its
/// tokens in `adapter`.
pub(crate) async fn manager(url: &str, http: Http, adapter: StoreAdapter) -> Result<AuthorizationManager, OAuthError> {
    let mut manager = AuthorizationManager::new_with_oauth_http_client(url, Arc::new(http))
        .await
        .map_err(OAuthError::auth(format!("the OAuth client for {url}")))?;
    manager.set_credential_store(adapter);
    Ok(manager)
}

/// How a login that needs renewing is renewed: the command that logs in again, where the session
/// notes what the user must do, and the interactive login when a person asked for one.
pub(crate) struct Renewal<'a> {
    pub(crate) login: &'a str,
    pub(crate) note: LoginNote,
    pub(crate) interactive: Option<InteractiveLogin>,
}

/// The authorized HTTP client for the import `name` at `url`, when a login is stored for it
/// (`None` otherwise): its tokens checked (and refreshed, or fetched again for a machine client,
/// when close to expiry) before the session starts, and refreshed during it as they run out.
/// `renewal.login` is the command that logs in again, for the error when the stored login is
/// spent and in the note a refused step-up or an authorization server change leaves in
/// `renewal.note` (see [`Reauthorizing`]).
///
/// The server's authorization server is discovered first: when it is not the one the login was
/// made with (SEP-2352, see `binding`), the login is not used with it.
pub(crate) async fn authorized(
    name: &str,
    url: &str,
    store: Arc<dyn CredentialStore>,
    http: Http,
    session: reqwest13::Client,
    renewal: Renewal<'_>,
) -> Result<Option<Reauthorizing>, OAuthError> {
    let Renewal { login, note, interactive } = renewal;
    let Some(mut saved) = StoreAdapter::read(&*store, name).await? else {
        return Ok(None);
    };
    let again = |why: &str| OAuthError::LoginRequired {
        name: name.to_owned(),
        why: why.to_owned(),
        login: login.to_owned(),
    };
    if saved.url != url {
        return Err(again(&format!("the stored login is for {}", saved.url)));
    }
    let fetcher = http.stop.clone();
    let metadata = binding::current(url, &http, None).await?;
    let mut template = saved.clone();
    template.credentials = None;
    let adapter = StoreAdapter {
        store,
        name: name.to_owned(),
        template,
    };
    if let (Some(from), Some(to)) = (binding::stored_issuer(&saved), metadata.issuer.clone())
        && from != to
    {
        match saved.machine.as_mut() {
            Some(machine) if binding::moves_by_itself(machine) => {
                binding::move_machine(machine, &metadata, url, &adapter, &fetcher).await?;
            }
            machine => return Err(binding::moved(name, login, machine.as_deref(), saved.preregistered, &from, &to)),
        }
    }
    let adapter = StoreAdapter {
        template: Saved {
            machine: saved.machine.clone(),
            ..adapter.template
        },
        ..adapter
    };
    // A DPoP login's refreshes carry proofs of its key, as its session's requests do (one slot
    // for both: a new login during the session puts its own key there).
    http.dpop.replace(saved.dpop.clone().map(dpop::Dpop::new));
    let dpop = http.dpop.clone();
    let oauth = http.clone();
    let mut manager = manager(url, http, adapter.clone()).await?;
    manager.set_metadata(metadata.clone());
    if !manager
        .initialize_from_store()
        .await
        .map_err(OAuthError::auth(format!("reading the login of `{name}`")))?
    {
        return Err(again("no tokens are stored"));
    }
    let client_id = saved.credentials.as_ref().map(|c| c.client_id.clone()).unwrap_or_default();
    if let (Some(secret), Some(redirect)) = (&saved.client_secret, &saved.redirect_uri) {
        manager
            .configure_client(OAuthClientConfig::new(client_id, redirect.clone()).with_client_secret(secret.clone()))
            .map_err(OAuthError::auth(format!("the OAuth client of `{name}`")))?;
    }
    if let Some(machine) = &saved.machine {
        manager
            .configure_client_credentials(&machine.config(url))
            .map_err(OAuthError::auth(format!("the OAuth client of `{name}`")))?;
    }
    match manager.get_access_token().await {
        Ok(_) => {}
        Err(AuthError::AuthorizationRequired) => match &saved.machine {
            Some(machine) if machine.signed.is_some() => {
                jwt::exchange(&fetcher, machine, url, &adapter).await?;
            }
            Some(machine) if machine.bearer.is_some() => {
                bearer::exchange(&fetcher, machine, url, &adapter).await?;
            }
            Some(machine) => {
                manager
                    .exchange_client_credentials(&machine.config(url))
                    .await
                    .map_err(OAuthError::auth(format!("fetching a new token for `{name}`")))?;
            }
            None => return Err(again("the access token expired and could not be refreshed")),
        },
        Err(e) => return Err(OAuthError::auth(format!("refreshing the token of `{name}`"))(e)),
    }
    // (A portable machine client moved above is bound to the new one.)
    let issuer = metadata.issuer.clone().or_else(|| binding::stored_issuer(&saved));
    let interactive = interactive.filter(|_| saved.machine.is_none());
    Ok(Some(Reauthorizing {
        inner: AuthClient::new(session, manager),
        held: Arc::new(std::sync::Mutex::new(
            saved.credentials.as_ref().map(|c| c.granted_scopes.clone()).unwrap_or_default(),
        )),
        machine: saved.machine.map(|m| Arc::new(std::sync::Mutex::new(m))),
        resource: url.to_owned(),
        name: name.to_owned(),
        preregistered: saved.preregistered,
        issuer: Arc::new(std::sync::Mutex::new(issuer)),
        oauth,
        login: login.to_owned(),
        note,
        interactive,
        adapter,
        http: fetcher,
        dpop,
        token_kind: Arc::default(),
    }))
}

/// Removes the login stored for `name`; whether there was one.
pub async fn logout(store: &dyn CredentialStore, name: &str) -> Result<bool, OAuthError> {
    Ok(store.remove(name.to_owned()).await?)
}

#[cfg(test)]
mod tests {
    use super::*;
    use tool_core::credentials::MemoryCredentials;

    #[tokio::test]
    async fn a_saved_login_round_trips_and_a_damaged_one_is_named_without_its_text() {
        let store: Arc<dyn CredentialStore> = Arc::new(MemoryCredentials::default());
        let adapter = StoreAdapter {
            store: store.clone(),
            name: "crm".into(),
            template: Saved {
                url: "http://127.0.0.1:1/mcp".into(),
                redirect_uri: None,
                client_secret: None,
                preregistered: false,
                machine: None,
                credentials: None,
                dpop: None,
            },
        };
        adapter
            .save(StoredCredentials::new("client-1".into(), None, vec!["read".into()], Some(1)))
            .await
            .unwrap();
        let back = adapter.load().await.unwrap().unwrap();
        assert_eq!(
            (back.client_id.as_str(), back.granted_scopes.as_slice()),
            ("client-1", ["read".to_owned()].as_slice())
        );
        store.put("crm".into(), b"secret-canary {".to_vec()).await.unwrap();
        let e = StoreAdapter::read(&*store, "crm").await.err().unwrap().to_string();
        assert!(e.contains("`crm`") && !e.contains("canary"), "{e}");
        assert!(logout(&*store, "crm").await.unwrap());
        assert!(!logout(&*store, "crm").await.unwrap());
    }
}
