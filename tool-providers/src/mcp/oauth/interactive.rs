//! Logging in again in the middle of an import, when a person asked for it
//! ([`InteractiveLogin`], `--interactive-login`): a user's login that only the user can renew —
//! a step-up (403 `insufficient_scope`), a new authorization server (SEP-2352), a token that
//! can no longer be refreshed, or no login at all — runs the browser login right there (the
//! authorization URL shown, the browser opened unless asked not to, the loopback redirect
//! awaited) and the refused request is sent again, once.
//!
//! It is opt-in: without it such a request fails naming the `mcp login` to run, which is what a
//! program (an agent, a CI job, a server importing another) must get — a process that waits
//! minutes for a browser nobody watches is worse than an error that says what to run. Whether a
//! terminal is attached is not taken as the person's consent: agents often run under one.

use std::sync::Arc;
use std::time::Duration;

use rmcp::transport::auth::{AuthorizationManager, OAuthClientConfig};
use tool_core::credentials::CredentialStore;

use super::{Http, Logged, Login, LoginMethod, OAuthError, StoreAdapter};

/// How a login that needs the user is run in the middle of an import (see the module docs).
#[derive(Clone)]
pub struct InteractiveLogin {
    /// Opens the authorization URL in the user's browser (besides showing it).
    pub open_browser: bool,
    /// How long the user has to approve.
    pub timeout: Duration,
    /// Shows the authorization URL to the user (e.g. on standard error).
    pub show: Arc<dyn Fn(&str) + Send + Sync>,
    /// One login at a time, whatever number of requests were refused together.
    one_at_a_time: Arc<tokio::sync::Mutex<()>>,
}

impl InteractiveLogin {
    /// Logins shown with `show`, the browser opened when `open_browser`, each waiting `timeout`
    /// for the user.
    pub fn new(open_browser: bool, timeout: Duration, show: impl Fn(&str) + Send + Sync + 'static) -> Self {
        InteractiveLogin {
            open_browser,
            timeout,
            show: Arc::new(show),
            one_at_a_time: Arc::default(),
        }
    }

    /// Runs the browser login of the import `name` at `url` for `scopes` (besides those the
    /// stored login holds), with the client the stored login used when it was registered
    /// beforehand, and stores it.
    pub(crate) async fn run(
        &self,
        name: &str,
        url: &str,
        store: Arc<dyn CredentialStore>,
        scopes: Vec<String>,
    ) -> Result<Logged, OAuthError> {
        let _one = self.one_at_a_time.lock().await;
        let saved = StoreAdapter::read(&*store, name).await?.filter(|s| s.url == url);
        if saved.as_ref().is_some_and(|s| s.machine.is_some()) {
            return Err(OAuthError::Login(format!(
                "the login of `{name}` is a machine client's: it is not run interactively"
            )));
        }
        let (client_id, client_secret) = match &saved {
            Some(saved) if saved.preregistered => (saved.credentials.as_ref().map(|c| c.client_id.clone()), saved.client_secret.clone()),
            _ => (None, None),
        };
        let login = Login {
            name: name.to_owned(),
            url: url.to_owned(),
            scopes,
            method: LoginMethod::Browser {
                port: 0,
                open_browser: self.open_browser,
                follow: false,
                client_id,
                client_secret,
                client_metadata_url: None,
            },
            timeout: self.timeout,
        };
        tracing::info!(import = %name, "the import needs the user's login: running it (--interactive-login)");
        // The login's future is not `Send` (its callbacks are plain closures): it runs on a
        // thread of its own while this one waits.
        let show = self.show.clone();
        let runtime = tokio::runtime::Handle::current();
        let logged = tokio::task::spawn_blocking(move || runtime.block_on(super::login(login, store, &mut |u| show(u))).map_err(Box::new))
            .await
            .map_err(|e| OAuthError::Login(format!("the login did not finish ({e})")))?;
        logged.map_err(|e| *e)
    }
}

impl std::fmt::Debug for InteractiveLogin {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("InteractiveLogin")
            .field("open_browser", &self.open_browser)
            .field("timeout", &self.timeout)
            .finish_non_exhaustive()
    }
}

/// Points `manager` at the login stored now for `name` at `url` (after an interactive login):
/// the authorization server it names, the client, and what is saved with refreshed tokens.
pub(crate) async fn rebind_manager(
    manager: &mut AuthorizationManager,
    store: &Arc<dyn CredentialStore>,
    name: &str,
    url: &str,
    http: &Http,
) -> Result<(), OAuthError> {
    let Some(saved) = StoreAdapter::read(&**store, name).await? else {
        return Err(OAuthError::Login(format!("the login of `{name}` was not stored")));
    };
    manager.set_metadata(super::binding::current(url, http, None).await?);
    let client_id = saved.credentials.as_ref().map(|c| c.client_id.clone()).unwrap_or_default();
    let configured = match (&saved.client_secret, &saved.redirect_uri) {
        (Some(secret), Some(redirect)) => {
            manager.configure_client(OAuthClientConfig::new(client_id, redirect.clone()).with_client_secret(secret.clone()))
        }
        _ => manager.configure_client_id(&client_id),
    };
    configured.map_err(OAuthError::auth(format!("the OAuth client of `{name}`")))?;
    let mut template = saved;
    template.credentials = None;
    manager.set_credential_store(StoreAdapter {
        store: store.clone(),
        name: name.to_owned(),
        template,
    });
    Ok(())
}
