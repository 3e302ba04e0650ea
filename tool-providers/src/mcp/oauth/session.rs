//! The authorized HTTP client of one session: `rmcp`'s [`AuthClient`] (the token on every
//! request, refreshed before it runs out and once on a 401) with what it does not do itself:
//!
//! - a 401 that `rmcp`'s refresh did not cure: the server's authorization server is discovered
//!   again (the challenge's `resource_metadata`), and when it is not the one the login was made
//!   with (SEP-2352, see `binding`), a portable machine client moves to it by itself and sends
//!   the request again, once; any other login fails, the session keeping a note ([`LoginNote`])
//!   naming the login that registers with the new one;
//! - a machine client (client credentials, which come without a refresh token) whose token ran
//!   out, or was refused with a 401, fetches a new one and sends the request again, once;
//! - a 403 `insufficient_scope` (step-up): a machine client fetches a token for the union of
//!   the scopes it has and the scope the challenge names and sends the request again, once; a
//!   user's login cannot be widened without the user, so the request fails and the session
//!   keeps a note naming the scopes and the `mcp login … --scope …` that asks for them.
//!
//! The call's error carries the note. With an interactive login (`--interactive-login`, see
//! `interactive`), what only the user can cure (a step-up, a new authorization server, a 401 the
//! refresh did not cure) runs the user's login instead, and the request is sent again, once.

use std::collections::HashMap;
use std::sync::{Arc, Mutex};

use futures::stream::BoxStream;
use http::{HeaderName, HeaderValue};
use rmcp::model::ClientJsonRpcMessage;
use rmcp::transport::auth::AuthClient;
use rmcp::transport::streamable_http_client::{
    StreamableHttpClient, StreamableHttpError, StreamableHttpPostResponse, StreamableHttpResponseLimits,
};
use sse_stream::{Error as SseError, Sse};

use super::dpop::{self, Dpop};
use super::{Machine, binding};

/// Where a session keeps what the user must do before a refused request can pass: the sentence
/// naming the login to run (for a step-up, with the scopes; for a new authorization server,
/// with the client it needs).
#[derive(Clone, Default)]
pub struct LoginNote(Arc<Mutex<Option<String>>>);

impl LoginNote {
    /// The last note, if any.
    pub fn note(&self) -> Option<String> {
        self.0.lock().unwrap_or_else(|e| e.into_inner()).clone()
    }

    fn clear(&self) {
        *self.0.lock().unwrap_or_else(|e| e.into_inner()) = None;
    }

    fn set(&self, note: String) {
        // Also said where whoever runs the program sees it, whatever becomes of the call's error.
        tracing::warn!("{note}");
        *self.0.lock().unwrap_or_else(|e| e.into_inner()) = Some(note);
    }
}

/// The scopes of `current` and those `required` names (space-separated), each once, in order.
pub(crate) fn union(current: &[String], required: &str) -> Vec<String> {
    let mut all: Vec<String> = Vec::new();
    for scope in current.iter().map(String::as_str).chain(required.split_whitespace()) {
        if !scope.is_empty() && !all.iter().any(|s| s == scope) {
            all.push(scope.to_owned());
        }
    }
    all
}

/// An [`AuthClient`] that recovers a machine client's token, handles step-up and notices a new
/// authorization server (see the module docs).
#[derive(Clone)]
pub(crate) struct Reauthorizing {
    pub(crate) inner: AuthClient<reqwest13::Client>,
    /// The machine client's settings, when it is one (its token endpoint and issuer change when
    /// it moves to a new authorization server).
    pub(crate) machine: Option<Arc<Mutex<Machine>>>,
    /// The MCP server's URL (the resource tokens are asked for).
    pub(crate) resource: String,
    /// The import's name.
    pub(crate) name: String,
    /// Whether the user login used a client registered beforehand (`--client-id`).
    pub(crate) preregistered: bool,
    /// The issuer of the authorization server the login is bound to.
    pub(crate) issuer: Arc<Mutex<Option<String>>>,
    /// The OAuth exchanges' HTTP clients (discovery).
    pub(crate) oauth: super::Http,
    /// The scopes the login holds: those the stored login was granted, widened by a machine
    /// client's step-up (so its next token keeps them).
    pub(crate) held: Arc<Mutex<Vec<String>>>,
    /// The command that logs in again (`toolsmith mcp login NAME URL`).
    pub(crate) login: String,
    pub(crate) note: LoginNote,
    /// How a login only the user can renew is run during the import, when a person asked for it
    /// (user logins only).
    pub(crate) interactive: Option<super::InteractiveLogin>,
    /// Where a token a signed assertion fetched is saved, and the client that fetches it.
    pub(crate) adapter: super::StoreAdapter,
    pub(crate) http: reqwest13::Client,
    /// The login's DPoP key, when its tokens are bound to one: the token then goes as
    /// `Authorization: DPoP` with a proof on every request (see `dpop`). The slot `oauth`'s
    /// token requests use too, so a new login (interactive) puts its key in both.
    pub(crate) dpop: dpop::DpopSlot,
    /// The last token sent and whether it was issued bound to the key (`token_type` `DPoP`): an
    /// authorization server may answer a proof with a bearer token, which goes as one.
    pub(crate) token_kind: Arc<Mutex<Option<(String, bool)>>>,
}

/// A failure that a new token may cure: a refused token (perhaps of an authorization server the
/// server no longer names), or a scope the token lacks.
enum Cure {
    /// A 401, with its `WWW-Authenticate`.
    Refused(String),
    /// A 403 `insufficient_scope` a machine client cures by itself, with the scope asked.
    StepUp(String),
    /// A 403 `insufficient_scope` of a user's login, with the scope asked.
    UserStepUp(String),
    None,
}

impl Reauthorizing {
    fn cure<E: std::error::Error + Send + Sync + 'static>(&self, error: &StreamableHttpError<E>) -> Cure {
        match error {
            StreamableHttpError::AuthRequired(e) => Cure::Refused(e.www_authenticate_header.clone()),
            StreamableHttpError::InsufficientScope(e) => {
                let required = e.get_required_scope().unwrap_or_default().to_owned();
                match (self.machine.is_some(), required.is_empty()) {
                    (_, true) => Cure::None,
                    (true, false) => Cure::StepUp(required),
                    (false, false) => Cure::UserStepUp(required),
                }
            }
            _ => Cure::None,
        }
    }

    /// Notes a step-up only the user can make: the scopes now held and those the server asks.
    fn note_step_up(&self, required: &str) {
        let wanted = union(&self.held(), required);
        let flags: Vec<String> = wanted.iter().map(|s| format!("--scope {s}")).collect();
        self.note.set(format!(
            "the server asks for the scope `{required}`, which this login was not granted: log in again for it with `{} {}`",
            self.login,
            flags.join(" ")
        ));
    }

    fn held(&self) -> Vec<String> {
        self.held.lock().unwrap_or_else(|e| e.into_inner()).clone()
    }

    fn machine(&self) -> Option<Machine> {
        self.machine.as_ref().map(|m| m.lock().unwrap_or_else(|e| e.into_inner()).clone())
    }

    /// A new machine token, for the scopes held and `required` (when given) besides those the
    /// machine client asks for.
    async fn refetch(&self, required: Option<&str>) -> bool {
        let Some(stored) = self.machine() else { return false };
        let resource = &self.resource;
        let manager = self.inner.auth_manager.lock().await;
        let mut machine = stored.clone();
        machine.scopes = union(&union(&machine.scopes, &self.held().join(" ")), required.unwrap_or_default());
        // Saved with the machine client as it is stored (its own scopes), at the authorization
        // server it is bound to now.
        let mut adapter = self.adapter.clone();
        adapter.template.machine = Some(stored);
        let fetched = match (machine.signed.is_some(), machine.bearer.is_some()) {
            (true, _) => super::jwt::exchange(&self.http, &machine, resource, &adapter).await.map(drop),
            (_, true) => super::bearer::exchange(&self.http, &machine, resource, &adapter).await.map(drop),
            _ => manager
                .exchange_client_credentials(&machine.config(resource))
                .await
                .map(drop)
                .map_err(|e| super::OAuthError::Login(e.to_string())),
        };
        match fetched {
            Ok(()) => {
                tracing::debug!(scopes = ?machine.scopes, "fetched a new client-credentials token");
                *self.held.lock().unwrap_or_else(|e| e.into_inner()) = machine.scopes;
                true
            }
            Err(e) => {
                tracing::warn!(error = %e, "fetching a new client-credentials token failed");
                false
            }
        }
    }

    /// After a 401 with `challenge`: whether the server names another authorization server
    /// than the login's. A portable machine client moves to it (`Some(true)` when it has a new
    /// token); for any other login the note names the login to run (`Some(false)`). `None`: the
    /// same server (or none could be discovered).
    async fn moved(&self, challenge: &str) -> Option<bool> {
        let bound = self.issuer.lock().unwrap_or_else(|e| e.into_inner()).clone()?;
        let metadata = match binding::current(&self.resource, &self.oauth, Some(challenge)).await {
            Ok(metadata) => metadata,
            Err(e) => {
                tracing::debug!(error = %e, "the authorization server could not be discovered again after a 401");
                return None;
            }
        };
        let now = metadata.issuer.clone().filter(|now| *now != bound)?;
        let Some(mut machine) = self.machine().filter(binding::moves_by_itself) else {
            let machine = self.machine();
            let error = binding::moved(&self.name, &self.login, machine.as_ref(), self.preregistered, &bound, &now);
            self.note.set(error.to_string());
            return Some(false);
        };
        let _one_at_a_time = self.inner.auth_manager.lock().await;
        match binding::move_machine(&mut machine, &metadata, &self.resource, &self.adapter, &self.http).await {
            Ok(scopes) => {
                *self.held.lock().unwrap_or_else(|e| e.into_inner()) = scopes;
                *self.issuer.lock().unwrap_or_else(|e| e.into_inner()) = Some(now);
                if let Some(shared) = &self.machine {
                    *shared.lock().unwrap_or_else(|e| e.into_inner()) = machine;
                }
                Some(true)
            }
            Err(e) => {
                self.note.set(format!(
                    "the MCP server `{}` now names the authorization server {now}, and fetching a token there failed: {e}",
                    self.name
                ));
                Some(false)
            }
        }
    }

    /// With an interactive login (a user's), runs it for `scopes` (besides those held) and
    /// points the session at the new login; whether it did.
    async fn log_in_again(&self, scopes: Vec<String>) -> bool {
        let Some(how) = &self.interactive else { return false };
        let store = self.adapter.store.clone();
        let logged = match how.run(&self.name, &self.resource, store.clone(), scopes).await {
            Ok(logged) => logged,
            Err(e) => {
                tracing::warn!(error = %e, "the interactive login failed");
                return false;
            }
        };
        let mut manager = self.inner.auth_manager.lock().await;
        if let Err(e) = super::interactive::rebind_manager(&mut manager, &store, &self.name, &self.resource, &self.oauth).await {
            tracing::warn!(error = %e, "the new login could not be used");
            return false;
        }
        let saved = super::StoreAdapter::read(&*store, &self.name).await.ok().flatten();
        self.dpop.replace(saved.as_ref().and_then(|s| s.dpop.clone()).map(Dpop::new));
        *self.issuer.lock().unwrap_or_else(|e| e.into_inner()) = saved.as_ref().and_then(binding::stored_issuer);
        *self.held.lock().unwrap_or_else(|e| e.into_inner()) = logged.scopes;
        self.note.clear();
        true
    }

    /// Runs `call`; a failure a new token cures is cured and `call` runs again, once.
    async fn recovering<T, E, F, Fut>(&self, call: F) -> Result<T, StreamableHttpError<E>>
    where
        E: std::error::Error + Send + Sync + 'static,
        F: Fn() -> Fut,
        Fut: Future<Output = Result<T, StreamableHttpError<E>>>,
    {
        let error = match call().await {
            Err(error) => error,
            done => return done,
        };
        let cured = match self.cure(&error) {
            Cure::Refused(challenge) => match self.moved(&challenge).await {
                Some(true) => true,
                Some(false) => self.log_in_again(Vec::new()).await,
                None if self.machine.is_some() => self.refetch(None).await,
                None => self.log_in_again(Vec::new()).await,
            },
            Cure::StepUp(required) => self.refetch(Some(&required)).await,
            Cure::UserStepUp(required) => self.log_in_again(vec![required]).await,
            Cure::None => false,
        };
        if cured {
            return call().await;
        }
        if let StreamableHttpError::InsufficientScope(e) = &error {
            self.note_step_up(e.get_required_scope().unwrap_or_default());
        }
        Err(error)
    }
}

type Stream = BoxStream<'static, Result<Sse, SseError>>;
type Headers = HashMap<HeaderName, HeaderValue>;

/// `headers` with the DPoP token and a fresh proof for a `method` request to `uri`.
fn dpop_headers(dpop: &Dpop, method: &str, uri: &str, token: &str, headers: &Headers) -> Result<Headers, dpop::DpopError> {
    let mut headers = headers.clone();
    let value = |text: String| HeaderValue::from_str(&text).map_err(|_| dpop::DpopError::Key("a header cannot carry it"));
    headers.insert(http::header::AUTHORIZATION, value(format!("DPoP {token}"))?);
    headers.insert(HeaderName::from_static("dpop"), value(dpop.proof(method, uri, Some(token))?)?);
    Ok(headers)
}

impl Reauthorizing {
    /// Sends a DPoP login's request: `call` is given the headers (`headers`, the token as
    /// `Authorization: DPoP`, a proof for `method` on `uri`) and sends them without `rmcp`'s
    /// bearer. A refusal asking for a nonce (RFC 9449 §9) is answered by learning the nonce and
    /// sending the request again, once; any other refusal goes to [`Self::recovering`].
    async fn with_dpop<T, E, F, Fut>(
        &self,
        dpop: &Dpop,
        (method, uri, session_id): (&str, &str, Option<&str>),
        headers: &Headers,
        call: F,
    ) -> Result<T, StreamableHttpError<E>>
    where
        E: std::error::Error + Send + Sync + 'static,
        F: Fn(Headers) -> Fut,
        Fut: Future<Output = Result<T, StreamableHttpError<E>>>,
    {
        let proofless = |e: dpop::DpopError| StreamableHttpError::Auth(rmcp::transport::auth::AuthError::InternalError(e.to_string()));
        let token = match self.inner.get_access_token().await {
            Ok(token) => token,
            // No usable token: sent without one, the server's 401 drives the recovery.
            Err(rmcp::transport::auth::AuthError::AuthorizationRequired) => return call(headers.clone()).await,
            Err(e) => return Err(e.into()),
        };
        if !self.bound(&token).await {
            let mut headers = headers.clone();
            let bearer = HeaderValue::from_str(&format!("Bearer {token}"))
                .map_err(|_| proofless(dpop::DpopError::Key("a header cannot carry it")))?;
            headers.insert(http::header::AUTHORIZATION, bearer);
            return call(headers).await;
        }
        let first = call(dpop_headers(dpop, method, uri, &token, headers).map_err(proofless)?).await;
        let Err(StreamableHttpError::AuthRequired(challenge)) = first else {
            return first;
        };
        if dpop::asks_for_nonce(&challenge.www_authenticate_header) && self.learn_nonce(dpop, uri, session_id, &token, headers).await {
            return call(dpop_headers(dpop, method, uri, &token, headers).map_err(proofless)?).await;
        }
        Err(StreamableHttpError::AuthRequired(challenge))
    }

    /// Whether `token` was issued as a DPoP token (its answer's `token_type`), read from the
    /// stored login once per token.
    async fn bound(&self, token: &str) -> bool {
        if let Some((last, bound)) = self.token_kind.lock().unwrap_or_else(|e| e.into_inner()).as_ref()
            && last == token
        {
            return *bound;
        }
        let credentials = self.inner.auth_manager.lock().await.get_credentials().await;
        let issued = credentials.ok().and_then(|(_, response)| response);
        let bound = issued.is_none_or(|r| oauth2::TokenResponse::token_type(&r).as_ref().eq_ignore_ascii_case("dpop"));
        *self.token_kind.lock().unwrap_or_else(|e| e.into_inner()) = Some((token.to_owned(), bound));
        bound
    }

    /// The nonce the MCP server at `uri` asks for, learnt from its answer to a `ping` (which has
    /// no effect whether or not the server takes it): `rmcp` keeps only the `WWW-Authenticate` of
    /// the 401 that asked, not its `DPoP-Nonce`. Whether a new nonce was learnt.
    async fn learn_nonce(&self, dpop: &Dpop, uri: &str, session_id: Option<&str>, token: &str, headers: &Headers) -> bool {
        let Ok(headers) = dpop_headers(dpop, "POST", uri, token, headers) else {
            return false;
        };
        let mut request = self
            .inner
            .http_client
            .post(uri)
            .header(http::header::ACCEPT, "application/json, text/event-stream")
            .header(http::header::CONTENT_TYPE, "application/json");
        for (name, value) in headers {
            request = request.header(name, value);
        }
        if let Some(session_id) = session_id {
            request = request.header("mcp-session-id", session_id);
        }
        let ping = serde_json::json!({"jsonrpc": "2.0", "id": "toolsmith-dpop-nonce", "method": "ping"});
        let response = match request.body(ping.to_string()).send().await {
            Ok(response) => response,
            Err(e) => {
                tracing::debug!(error = %e.without_url(), "asking the MCP server for its DPoP nonce failed");
                return false;
            }
        };
        let nonce = response.headers().get("dpop-nonce").and_then(|v| v.to_str().ok());
        nonce.is_some_and(|nonce| dpop.remember_nonce(uri, nonce))
    }
}

impl StreamableHttpClient for Reauthorizing {
    type Error = <reqwest13::Client as StreamableHttpClient>::Error;

    async fn post_message(
        &self,
        uri: Arc<str>,
        message: ClientJsonRpcMessage,
        session_id: Option<Arc<str>>,
        auth_header: Option<String>,
        custom_headers: Headers,
    ) -> Result<StreamableHttpPostResponse, StreamableHttpError<Self::Error>> {
        self.post_message_with_response_limits(
            uri,
            message,
            session_id,
            auth_header,
            custom_headers,
            StreamableHttpResponseLimits::default(),
        )
        .await
    }

    async fn post_message_with_max_sse_event_size(
        &self,
        uri: Arc<str>,
        message: ClientJsonRpcMessage,
        session_id: Option<Arc<str>>,
        auth_header: Option<String>,
        custom_headers: Headers,
        max_sse_event_size: usize,
    ) -> Result<StreamableHttpPostResponse, StreamableHttpError<Self::Error>> {
        let mut limits = StreamableHttpResponseLimits::default();
        limits.max_sse_event_size = max_sse_event_size;
        self.post_message_with_response_limits(uri, message, session_id, auth_header, custom_headers, limits)
            .await
    }

    async fn post_message_with_response_limits(
        &self,
        uri: Arc<str>,
        message: ClientJsonRpcMessage,
        session_id: Option<Arc<str>>,
        auth_header: Option<String>,
        custom_headers: Headers,
        limits: StreamableHttpResponseLimits,
    ) -> Result<StreamableHttpPostResponse, StreamableHttpError<Self::Error>> {
        self.recovering(|| async {
            let Some(dpop) = self.dpop.get() else {
                let (uri, message, session_id) = (uri.clone(), message.clone(), session_id.clone());
                return (self.inner)
                    .post_message_with_response_limits(uri, message, session_id, auth_header.clone(), custom_headers.clone(), limits)
                    .await;
            };
            let request = ("POST", &*uri, session_id.as_deref());
            self.with_dpop(&dpop, request, &custom_headers, |headers| {
                let (uri, message, session_id) = (uri.clone(), message.clone(), session_id.clone());
                (self.inner.http_client).post_message_with_response_limits(uri, message, session_id, None, headers, limits)
            })
            .await
        })
        .await
    }

    async fn delete_session(
        &self,
        uri: Arc<str>,
        session_id: Arc<str>,
        auth_header: Option<String>,
        custom_headers: Headers,
    ) -> Result<(), StreamableHttpError<Self::Error>> {
        self.recovering(|| async {
            let Some(dpop) = self.dpop.get() else {
                return (self.inner)
                    .delete_session(uri.clone(), session_id.clone(), auth_header.clone(), custom_headers.clone())
                    .await;
            };
            self.with_dpop(&dpop, ("DELETE", &*uri, Some(&*session_id)), &custom_headers, |headers| {
                (self.inner.http_client).delete_session(uri.clone(), session_id.clone(), None, headers)
            })
            .await
        })
        .await
    }

    async fn get_stream(
        &self,
        uri: Arc<str>,
        session_id: Option<Arc<str>>,
        last_event_id: Option<String>,
        auth_header: Option<String>,
        custom_headers: Headers,
    ) -> Result<Stream, StreamableHttpError<Self::Error>> {
        self.get_stream_with_max_sse_event_size(
            uri,
            session_id,
            last_event_id,
            auth_header,
            custom_headers,
            StreamableHttpResponseLimits::default().max_sse_event_size,
        )
        .await
    }

    async fn get_stream_with_max_sse_event_size(
        &self,
        uri: Arc<str>,
        session_id: Option<Arc<str>>,
        last_event_id: Option<String>,
        auth_header: Option<String>,
        custom_headers: Headers,
        max_sse_event_size: usize,
    ) -> Result<Stream, StreamableHttpError<Self::Error>> {
        self.recovering(|| async {
            let (session, last) = (session_id.clone(), last_event_id.clone());
            let Some(dpop) = self.dpop.get() else {
                return (self.inner)
                    .get_stream_with_max_sse_event_size(
                        uri.clone(),
                        session,
                        last,
                        auth_header.clone(),
                        custom_headers.clone(),
                        max_sse_event_size,
                    )
                    .await;
            };
            self.with_dpop(&dpop, ("GET", &*uri, session_id.as_deref()), &custom_headers, |headers| {
                let (uri, session, last) = (uri.clone(), session_id.clone(), last_event_id.clone());
                (self.inner.http_client).get_stream_with_max_sse_event_size(uri, session, last, None, headers, max_sse_event_size)
            })
            .await
        })
        .await
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_union_keeps_each_scope_once_in_order() {
        let current = vec!["mcp:basic".to_owned(), "offline_access".to_owned()];
        assert_eq!(union(&current, "mcp:write mcp:basic"), ["mcp:basic", "offline_access", "mcp:write"]);
        assert_eq!(union(&[], ""), Vec::<String>::new());
    }
}
