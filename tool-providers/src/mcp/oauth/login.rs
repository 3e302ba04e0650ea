//! The logins: the authorization code flow with PKCE through a browser and a loopback redirect
//! (`http://127.0.0.1:PORT/callback`), and the client-credentials grant for machines. Both
//! discover the server's authorization server from its 401 challenge, and store what they
//! obtain under the import's name.

use std::sync::Arc;
use std::time::Duration;

use oauth2::TokenResponse;
use rmcp::transport::auth::{AuthorizationRequest, AuthorizationSession};
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::TcpListener;
use tool_core::credentials::CredentialStore;

use super::session::union;
use super::{Machine, OAuthError, Saved, StoreAdapter, manager};
use crate::mcp::tls;

/// How [`login`] obtains tokens.
#[derive(Clone)]
pub enum LoginMethod {
    /// The authorization code flow with PKCE: the user approves in a browser, which the
    /// authorization server sends back to a loopback listener.
    Browser {
        /// The loopback port (`0`: any free one).
        port: u16,
        /// Opens the authorization URL in the user's browser (besides printing it).
        open_browser: bool,
        /// Follows the authorization URL itself (GET, then its redirects to the callback), for
        /// authorization servers that approve without a person (tests, conformance suites).
        follow: bool,
        /// A client registered with the authorization server beforehand (else a client ID
        /// metadata document, else dynamic registration).
        client_id: Option<String>,
        /// The secret of that client, when it is confidential.
        client_secret: Option<String>,
        /// The HTTPS URL of this client's metadata document, used when the authorization server
        /// accepts client ID metadata documents.
        client_metadata_url: Option<String>,
    },
    /// The client-credentials grant with `private_key_jwt` (RFC 7523): the client proves who it
    /// is with an assertion signed with its private key (EC P-256 or RSA, PEM), no secret.
    ClientAssertion {
        /// The client's id (the assertion's `iss` and `sub`).
        client_id: String,
        /// Its private key, PEM.
        private_key_pem: String,
    },
    /// The JWT bearer grant (RFC 7523 §2.1) with a JWT another party issued, read from a file at
    /// each grant: a workload's identity token (workload identity federation, SEP-1933), or,
    /// with `identity_provider`, the user's ID token, exchanged there for an identity assertion
    /// authorization grant first (enterprise-managed authorization, SEP-990).
    JwtBearer {
        /// The client's id at the authorization server (empty: none is sent).
        client_id: String,
        /// Its secret, when it is a confidential client (`client_secret_basic` when the
        /// authorization server offers it, else `client_secret_post`).
        client_secret: Option<String>,
        /// The file holding the JWT (its first line).
        jwt_file: std::path::PathBuf,
        /// Where the ID token is exchanged (enterprise-managed authorization).
        identity_provider: Option<IdentityProvider>,
    },
    /// The client-credentials grant (machine to machine).
    ClientCredentials {
        /// The client's id.
        client_id: String,
        /// Its secret (sent as `client_secret_basic` when that is the only method the
        /// authorization server offers, else `client_secret_post`).
        client_secret: String,
    },
}

/// The enterprise identity provider of an enterprise-managed login: the ID token is exchanged
/// at its token endpoint (RFC 8693) for an identity assertion authorization grant.
#[derive(Debug, Clone)]
pub struct IdentityProvider {
    /// Its issuer (its token endpoint is discovered from its metadata).
    pub issuer: String,
    /// This client's id there.
    pub client_id: String,
}

impl std::fmt::Debug for LoginMethod {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            LoginMethod::Browser { port, client_id, .. } => f
                .debug_struct("Browser")
                .field("port", port)
                .field("client_id", client_id)
                .finish_non_exhaustive(),
            LoginMethod::ClientAssertion { client_id, .. } => f
                .debug_struct("ClientAssertion")
                .field("client_id", client_id)
                .finish_non_exhaustive(),
            LoginMethod::JwtBearer {
                client_id,
                identity_provider,
                ..
            } => f
                .debug_struct("JwtBearer")
                .field("client_id", client_id)
                .field("identity_provider", identity_provider)
                .finish_non_exhaustive(),
            LoginMethod::ClientCredentials { client_id, .. } => f
                .debug_struct("ClientCredentials")
                .field("client_id", client_id)
                .finish_non_exhaustive(),
        }
    }
}

/// One login: to the MCP server at `url`, stored under `name`.
#[derive(Debug, Clone)]
pub struct Login {
    /// The import's name (`--import-mcp NAME=URL`).
    pub name: String,
    /// The MCP server's Streamable HTTP endpoint.
    pub url: String,
    /// The scopes to ask for (empty: as the server's challenge and metadata say).
    pub scopes: Vec<String>,
    /// How.
    pub method: LoginMethod,
    /// How long the user has to approve, and the bound on each HTTP request.
    pub timeout: Duration,
}

/// What a login obtained (no token: those are only in the store).
#[derive(Debug, Clone)]
pub struct Logged {
    /// The scopes granted.
    pub scopes: Vec<String>,
    /// Whether a refresh token came with the access token.
    pub refreshable: bool,
    /// The issuer of the authorization server the login stored before this one was made with,
    /// when the server now names another one (SEP-2352: the new login was registered with it,
    /// nothing of the old one was sent to it).
    pub moved_from: Option<String>,
}

/// Logs in to `login.url` and stores the tokens in `store` under `login.name`; `show_url` is
/// given the authorization URL to show the user (browser logins).
pub async fn login(login: Login, store: Arc<dyn CredentialStore>, show_url: &mut dyn FnMut(&str)) -> Result<Logged, OAuthError> {
    let Login {
        name,
        url,
        scopes,
        method,
        timeout,
    } = login;
    let http = tls::oauth_clients(&name, &url, &[], timeout).map_err(|e| OAuthError::Login(e.to_string()))?;
    let challenge = challenge(&http.stop, &url, None).await;
    // Logging in again (a step-up): the scopes the stored login holds, those its token now
    // lacks (the server's 403 `insufficient_scope` to it) and those asked are all asked for.
    let before = StoreAdapter::read(&*store, &name).await.ok().flatten();
    let issuer_before = before.as_ref().filter(|s| s.url == url).and_then(super::binding::stored_issuer);
    let scopes = match before {
        Some(saved) if saved.url == url => {
            let held = saved.credentials.as_ref().map(|c| c.granted_scopes.clone()).unwrap_or_default();
            let token = saved
                .credentials
                .as_ref()
                .and_then(|c| c.token_response.as_ref())
                .map(|t| t.access_token().secret().clone());
            let lacking = match token {
                Some(token) => self::challenge(&http.stop, &url, Some((&token, saved.dpop.as_ref())))
                    .await
                    .and_then(|c| insufficient_scope(&c)),
                None => None,
            };
            match held.is_empty() && lacking.is_none() {
                true => scopes,
                false => union(&union(&held, &scopes.join(" ")), lacking.as_deref().unwrap_or_default()),
            }
        }
        _ => scopes,
    };
    let template = Saved {
        url: url.clone(),
        redirect_uri: None,
        client_secret: None,
        preregistered: matches!(method, LoginMethod::Browser { client_id: Some(_), .. }),
        machine: None,
        credentials: None,
        dpop: None,
    };
    let (kept, kept_name) = (store.clone(), name.clone());
    let start = Start {
        store,
        name,
        url,
        http,
        challenge,
        template,
    };
    let mut logged = match method {
        LoginMethod::ClientCredentials { client_id, client_secret } => {
            let machine = Machine {
                client_id,
                client_secret,
                scopes,
                signed: None,
                bearer: None,
            };
            machine_login(start, machine).await
        }
        LoginMethod::ClientAssertion {
            client_id,
            private_key_pem,
        } => {
            let machine = Machine {
                client_id,
                client_secret: String::new(),
                scopes,
                signed: None,
                bearer: None,
            };
            signed_login(start, machine, private_key_pem).await
        }
        LoginMethod::JwtBearer {
            client_id,
            client_secret,
            jwt_file,
            identity_provider,
        } => {
            let machine = Machine {
                client_id,
                client_secret: client_secret.unwrap_or_default(),
                scopes,
                signed: None,
                bearer: None,
            };
            bearer_login(start, machine, jwt_file, identity_provider).await
        }
        LoginMethod::Browser {
            port,
            open_browser,
            follow,
            client_id,
            client_secret,
            client_metadata_url,
        } => {
            let mut request = |redirect: String| {
                let mut request = AuthorizationRequest::new(redirect).with_client_name("Toolsmith");
                request = match scopes.is_empty() {
                    true => request.with_initial_scope_selection(),
                    false => request.with_scopes(scopes.clone()),
                };
                if let Some(id) = client_id.clone() {
                    request = request.with_preregistered_client(id);
                }
                if let Some(secret) = client_secret.clone() {
                    request = request.with_client_secret(secret);
                }
                if let Some(document) = client_metadata_url.clone() {
                    request = request.with_client_metadata_url(document);
                }
                request
            };
            let browser = Browser {
                port,
                open_browser,
                follow,
                timeout,
                client_secret: client_secret.clone(),
            };
            browser_login(start, browser, &mut request, show_url).await
        }
    }?;
    let issuer_now = StoreAdapter::read(&*kept, &kept_name)
        .await?
        .as_ref()
        .and_then(super::binding::stored_issuer);
    logged.moved_from = issuer_before.filter(|before| issuer_now.as_ref().is_some_and(|now| now != before));
    Ok(logged)
}

/// What both logins start from.
struct Start {
    store: Arc<dyn CredentialStore>,
    name: String,
    url: String,
    http: super::Http,
    /// The server's 401 challenge, when it gave one.
    challenge: Option<String>,
    /// What is stored with the tokens.
    template: Saved,
}

impl Start {
    /// The authorization manager, its metadata discovered (from the challenge first).
    async fn discovered(self) -> Result<(rmcp::transport::auth::AuthorizationManager, String), OAuthError> {
        self.discovered_with_metadata().await.map(|(manager, url, ..)| (manager, url))
    }

    /// [`Self::discovered`], and the authorization server's metadata and what is stored with
    /// the tokens. When the authorization server offers DPoP, the login gets a key of its own:
    /// its token requests carry proofs, and it is stored with the tokens.
    async fn discovered_with_metadata(
        self,
    ) -> Result<
        (
            rmcp::transport::auth::AuthorizationManager,
            String,
            rmcp::transport::auth::AuthorizationMetadata,
            Saved,
        ),
        OAuthError,
    > {
        let Start {
            store,
            name,
            url,
            http,
            challenge,
            mut template,
        } = self;
        let slot = http.dpop.clone();
        let adapter = StoreAdapter {
            store,
            name,
            template: template.clone(),
        };
        let mut manager = manager(&url, http, adapter.clone()).await?;
        let resolution = manager
            .resolve_metadata_from_challenge(challenge.as_deref())
            .await
            .map_err(OAuthError::auth(format!("discovering the authorization server of {url}")))?;
        if super::dpop::offered(&resolution.metadata.additional_fields) {
            let key = super::dpop::DpopKey::generate()?;
            slot.set(super::dpop::Dpop::new(key.clone()));
            template.dpop = Some(key);
            manager.set_credential_store(StoreAdapter {
                template: template.clone(),
                ..adapter
            });
        }
        manager.set_metadata(resolution.metadata.clone());
        Ok((manager, url, resolution.metadata, template))
    }
}

/// The client-credentials grant.
async fn machine_login(mut start: Start, machine: Machine) -> Result<Logged, OAuthError> {
    start.template.machine = Some(machine.clone());
    let (mut manager, url) = start.discovered().await?;
    let config = machine.config(&url);
    manager
        .configure_client_credentials(&config)
        .map_err(OAuthError::auth("the client-credentials client"))?;
    let token = manager
        .exchange_client_credentials(&config)
        .await
        .map_err(OAuthError::auth("the client-credentials grant"))?;
    Ok(Logged {
        scopes: manager.get_current_scopes().await,
        refreshable: token.refresh_token().is_some(),
        moved_from: None,
    })
}

/// The client-credentials grant with a signed assertion (`private_key_jwt`).
async fn signed_login(start: Start, mut machine: Machine, private_key_pem: String) -> Result<Logged, OAuthError> {
    let http = start.http.stop.clone();
    let (store, name) = (start.store.clone(), start.name.clone());
    let (_, url, metadata, mut template) = start.discovered_with_metadata().await?;
    // The assertion's audience: the authorization server's issuer identifier (RFC 7523 §3).
    let issuer = issuer_of(&metadata);
    machine.signed = Some(super::jwt::Signed {
        private_key_pem,
        token_endpoint: metadata.token_endpoint,
        issuer,
    });
    template.machine = Some(machine.clone());
    let adapter = StoreAdapter { store, name, template };
    let scopes = super::jwt::exchange(&http, &machine, &url, &adapter).await?;
    Ok(Logged {
        scopes,
        refreshable: false,
        moved_from: None,
    })
}

/// The authorization server's issuer identifier, as a JWT grant's audience (RFC 7523 §3): the
/// one its metadata names, else the origin of its token endpoint.
fn issuer_of(metadata: &rmcp::transport::auth::AuthorizationMetadata) -> String {
    metadata.issuer.clone().unwrap_or_else(|| {
        let endpoint = reqwest13::Url::parse(&metadata.token_endpoint).ok();
        endpoint.map(|u| u.origin().ascii_serialization()).unwrap_or_default()
    })
}

/// The JWT bearer grant (see [`LoginMethod::JwtBearer`]).
async fn bearer_login(
    start: Start,
    mut machine: Machine,
    jwt_file: std::path::PathBuf,
    idp: Option<IdentityProvider>,
) -> Result<Logged, OAuthError> {
    let http = start.http.stop.clone();
    let (store, name) = (start.store.clone(), start.name.clone());
    let (_, url, metadata, mut template) = start.discovered_with_metadata().await?;
    let issuer = issuer_of(&metadata);
    let methods = metadata
        .additional_fields
        .get("token_endpoint_auth_methods_supported")
        .and_then(serde_json::Value::as_array)
        .map(|m| m.iter().filter_map(|m| m.as_str().map(str::to_owned)).collect::<Vec<_>>())
        .unwrap_or_default();
    // RFC 8414: client_secret_basic when the server names no methods.
    let basic = methods.is_empty() || methods.iter().any(|m| m == "client_secret_basic");
    let exchange = match idp {
        Some(idp) => Some(super::bearer::Exchange {
            token_endpoint: super::bearer::idp_token_endpoint(&http, &idp.issuer).await?,
            client_id: idp.client_id,
        }),
        None => None,
    };
    machine.bearer = Some(super::bearer::Bearer {
        assertion_file: std::path::absolute(&jwt_file).unwrap_or(jwt_file),
        token_endpoint: metadata.token_endpoint,
        issuer,
        basic,
        exchange,
    });
    template.machine = Some(machine.clone());
    let adapter = StoreAdapter { store, name, template };
    let scopes = super::bearer::exchange(&http, &machine, &url, &adapter).await?;
    Ok(Logged {
        scopes,
        refreshable: false,
        moved_from: None,
    })
}

/// How a browser login runs.
struct Browser {
    port: u16,
    open_browser: bool,
    follow: bool,
    timeout: Duration,
    client_secret: Option<String>,
}

/// The authorization code flow: the loopback listener, the authorization URL shown (opened,
/// followed), the callback awaited, the code exchanged. `request` builds the authorization
/// request for a redirect URI.
async fn browser_login(
    mut start: Start,
    browser: Browser,
    request: &mut dyn FnMut(String) -> AuthorizationRequest,
    show_url: &mut dyn FnMut(&str),
) -> Result<Logged, OAuthError> {
    let Browser {
        port,
        open_browser,
        follow,
        timeout,
        client_secret,
    } = browser;
    let listener = TcpListener::bind(("127.0.0.1", port)).await.map_err(|source| OAuthError::Io {
        what: format!("cannot listen on 127.0.0.1:{port} for the authorization callback"),
        source,
    })?;
    let port = listener.local_addr().map(|a| a.port()).unwrap_or(port);
    let redirect = format!("http://127.0.0.1:{port}/callback");
    start.template.redirect_uri = Some(redirect.clone());
    start.template.client_secret = client_secret;
    let follower = start.http.follow.clone();
    let (manager, _) = start.discovered().await?;
    let session = AuthorizationSession::new(manager, request(redirect))
        .await
        .map_err(|(_, e)| OAuthError::auth("starting the authorization")(e))?;
    let auth_url = session.get_authorization_url().to_owned();
    show_url(&auth_url);
    if open_browser {
        open_in_browser(&auth_url);
    }
    if follow {
        // The authorization server redirects to the listener below, which gets the code.
        tokio::spawn(async move {
            if let Err(e) = follower.get(&auth_url).send().await {
                tracing::warn!(error = %e, "following the authorization URL failed");
            }
        });
    }
    let callback = tokio::time::timeout(timeout, callback(&listener, port))
        .await
        .map_err(|_| OAuthError::Login(format!("no authorization arrived within {timeout:?}")))??;
    let token = session
        .handle_callback_url(&callback)
        .await
        .map_err(OAuthError::auth("exchanging the authorization code"))?;
    Ok(Logged {
        scopes: session.auth_manager.get_current_scopes().await,
        refreshable: token.refresh_token().is_some(),
        moved_from: None,
    })
}

/// The `WWW-Authenticate` of the server's challenge to a first request sent with `token` (none:
/// unauthenticated; with its DPoP key, when it is bound to one): a 401, or a 403 (`insufficient_scope`) when a token was sent. The first
/// request is an `initialize` (2025-11-25), then, when that passed unchallenged, a
/// `server/discover` (2026-07-28), since a server may let either through unauthenticated.
async fn challenge(client: &reqwest13::Client, url: &str, token: Option<(&str, Option<&super::dpop::DpopKey>)>) -> Option<String> {
    let client_info = serde_json::json!({"name": "toolsmith", "version": env!("CARGO_PKG_VERSION")});
    let initialize = serde_json::json!({
        "jsonrpc": "2.0", "id": 0, "method": "initialize",
        "params": {"protocolVersion": "2025-11-25", "capabilities": {}, "clientInfo": client_info}
    });
    let discover = serde_json::json!({
        "jsonrpc": "2.0", "id": 0, "method": "server/discover",
        "params": {"_meta": {
            "io.modelcontextprotocol/protocolVersion": "2026-07-28",
            "io.modelcontextprotocol/clientInfo": client_info,
            "io.modelcontextprotocol/clientCapabilities": {}
        }}
    });
    for (body, version, method) in [(initialize, None, "initialize"), (discover, Some("2026-07-28"), "server/discover")] {
        let mut request = client
            .post(url)
            .header("accept", "application/json, text/event-stream")
            .header("content-type", "application/json");
        if let Some(version) = version {
            request = request.header("mcp-protocol-version", version).header("mcp-method", method);
        }
        match token {
            Some((token, Some(key))) => {
                let Ok(proof) = key.proof("POST", url, Some(token), None) else {
                    continue;
                };
                request = request.header("authorization", format!("DPoP {token}")).header("dpop", proof);
            }
            Some((token, None)) => request = request.bearer_auth(token),
            None => {}
        }
        let Ok(response) = request.body(body.to_string()).send().await else {
            continue;
        };
        let challenged = response.status() == reqwest13::StatusCode::UNAUTHORIZED
            || (token.is_some() && response.status() == reqwest13::StatusCode::FORBIDDEN);
        if challenged {
            return response
                .headers()
                .get("www-authenticate")
                .and_then(|v| v.to_str().ok())
                .map(str::to_owned);
        }
    }
    None
}

/// The scope a `WWW-Authenticate` challenge with `error="insufficient_scope"` asks for.
fn insufficient_scope(challenge: &str) -> Option<String> {
    let param = |name: &str| {
        let at = challenge.find(&format!("{name}="))? + name.len() + 1;
        let rest = &challenge[at..];
        Some(match rest.strip_prefix('"') {
            Some(quoted) => quoted.split('"').next().unwrap_or_default().to_owned(),
            None => rest.split([',', ' ']).next().unwrap_or_default().to_owned(),
        })
    };
    (param("error").as_deref() == Some("insufficient_scope"))
        .then(|| param("scope"))
        .flatten()
        .filter(|s| !s.is_empty())
}

/// Waits for the browser's request to `/callback` on `listener`, answers it, and returns its
/// URL; an `error` in it fails the login with the authorization server's words.
async fn callback(listener: &TcpListener, port: u16) -> Result<String, OAuthError> {
    loop {
        let (mut stream, _) = listener.accept().await.map_err(|source| OAuthError::Io {
            what: "the authorization callback listener failed".into(),
            source,
        })?;
        let mut head = Vec::new();
        let mut buf = [0u8; 2048];
        while !head.windows(4).any(|w| w == b"\r\n\r\n") && head.len() < 16 * 1024 {
            match stream.read(&mut buf).await {
                Ok(0) | Err(_) => break,
                Ok(n) => head.extend_from_slice(&buf[..n]),
            }
        }
        let line = String::from_utf8_lossy(&head).lines().next().unwrap_or_default().to_owned();
        let target = line.split_whitespace().nth(1).unwrap_or_default().to_owned();
        if !target.starts_with("/callback?") {
            let _ = stream.write_all(answer(404, "Not the authorization callback.").as_bytes()).await;
            continue;
        }
        let url = format!("http://127.0.0.1:{port}{target}");
        let query: Vec<(String, String)> = reqwest13::Url::parse(&url)
            .map(|u| u.query_pairs().map(|(k, v)| (k.into_owned(), v.into_owned())).collect())
            .unwrap_or_default();
        let get = |key: &str| query.iter().find(|(k, _)| k == key).map(|(_, v)| v.clone());
        if let Some(error) = get("error") {
            let _ = stream
                .write_all(answer(400, "The authorization failed; see the terminal.").as_bytes())
                .await;
            let described = get("error_description").map(|d| format!(": {d}")).unwrap_or_default();
            return Err(OAuthError::Login(format!("the authorization server refused: {error}{described}")));
        }
        let _ = stream
            .write_all(answer(200, "Logged in. You can close this window.").as_bytes())
            .await;
        return Ok(url);
    }
}

/// A small HTTP/1.1 answer with a text body.
fn answer(status: u16, text: &str) -> String {
    let reason = match status {
        200 => "OK",
        400 => "Bad Request",
        _ => "Not Found",
    };
    format!(
        "HTTP/1.1 {status} {reason}\r\ncontent-type: text/plain; charset=utf-8\r\ncontent-length: {}\r\nconnection: close\r\n\r\n{text}",
        text.len()
    )
}

/// Asks the desktop to open `url` (nothing happens where there is none: the URL is printed).
fn open_in_browser(url: &str) {
    let opener = if cfg!(target_os = "macos") { "open" } else { "xdg-open" };
    let started = std::process::Command::new(opener)
        .arg(url)
        .stdin(std::process::Stdio::null())
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .spawn();
    if let Err(e) = started {
        tracing::debug!(error = %e, "no browser could be opened; the URL is printed");
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_scope_an_insufficient_scope_challenge_asks_for() {
        let c = r#"Bearer scope="mcp:write", resource_metadata="http://h/.well-known/oauth-protected-resource/mcp", error="insufficient_scope""#;
        assert_eq!(insufficient_scope(c).as_deref(), Some("mcp:write"));
        assert_eq!(insufficient_scope(r#"Bearer error="invalid_token", scope="a""#), None);
        assert_eq!(
            insufficient_scope(r#"Bearer error=insufficient_scope, scope=a"#).as_deref(),
            Some("a")
        );
    }
}
