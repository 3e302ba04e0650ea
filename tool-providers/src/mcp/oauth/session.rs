//! The authorized HTTP client of one session: `rmcp`'s [`AuthClient`] (the token on every
//! request, refreshed before it runs out and once on a 401) with what it does not do itself:
//!
//! - a machine client (client credentials, which come without a refresh token) whose token ran
//!   out, or was refused with a 401, fetches a new one and sends the request again, once;
//! - a 403 `insufficient_scope` (step-up): a machine client fetches a token for the union of
//!   the scopes it has and the scope the challenge names and sends the request again, once; a
//!   user's login cannot be widened without the user, so the request fails and the session
//!   keeps a note ([`StepUp`]) naming the scopes and the `mcp login … --scope …` that asks for
//!   them, which the call's error carries.

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

use super::Machine;

/// Where a session keeps what a refused step-up needs: the sentence naming the scopes and the
/// login that asks for them.
#[derive(Clone, Default)]
pub struct StepUp(Arc<Mutex<Option<String>>>);

impl StepUp {
    /// The note of the last refused step-up, if any.
    pub fn note(&self) -> Option<String> {
        self.0.lock().unwrap_or_else(|e| e.into_inner()).clone()
    }

    fn set(&self, note: String) {
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

/// An [`AuthClient`] that recovers a machine client's token and handles step-up (see the
/// module docs).
#[derive(Clone)]
pub(crate) struct Reauthorizing {
    pub(crate) inner: AuthClient<reqwest13::Client>,
    /// The machine client's settings and the resource (the server's URL), when it is one.
    pub(crate) machine: Option<(Machine, String)>,
    /// The scopes the login holds: those the stored login was granted, widened by a machine
    /// client's step-up (so its next token keeps them).
    pub(crate) held: Arc<Mutex<Vec<String>>>,
    /// The command that logs in again (`toolsmith mcp login NAME URL`).
    pub(crate) login: String,
    pub(crate) step_up: StepUp,
    /// Where a token a signed assertion fetched is saved, and the client that fetches it.
    pub(crate) adapter: super::StoreAdapter,
    pub(crate) http: reqwest13::Client,
}

/// A failure that a new token may cure: a refused or missing token, or a scope the token lacks.
enum Cure {
    Refetch(Option<String>),
    None,
}

impl Reauthorizing {
    fn cure<E: std::error::Error + Send + Sync + 'static>(&self, error: &StreamableHttpError<E>) -> Cure {
        match error {
            StreamableHttpError::AuthRequired(_) if self.machine.is_some() => Cure::Refetch(None),
            StreamableHttpError::InsufficientScope(e) => {
                let required = e.get_required_scope().unwrap_or_default().to_owned();
                if self.machine.is_some() && !required.is_empty() {
                    return Cure::Refetch(Some(required));
                }
                Cure::None
            }
            _ => Cure::None,
        }
    }

    /// Notes a step-up only the user can make: the scopes now held and those the server asks.
    fn note_step_up(&self, required: &str) {
        let wanted = union(&self.held(), required);
        let flags: Vec<String> = wanted.iter().map(|s| format!("--scope {s}")).collect();
        let note = format!(
            "the server asks for the scope `{required}`, which this login was not granted: log in again for it with `{} {}`",
            self.login,
            flags.join(" ")
        );
        // Also said where whoever runs the program sees it, whatever becomes of the call's error.
        tracing::warn!("{note}");
        self.step_up.set(note);
    }

    fn held(&self) -> Vec<String> {
        self.held.lock().unwrap_or_else(|e| e.into_inner()).clone()
    }

    /// A new machine token, for the scopes held and `required` (when given) besides those the
    /// machine client asks for.
    async fn refetch(&self, required: Option<&str>) -> bool {
        let Some((machine, resource)) = &self.machine else { return false };
        let manager = self.inner.auth_manager.lock().await;
        let mut machine = machine.clone();
        machine.scopes = union(&union(&machine.scopes, &self.held().join(" ")), required.unwrap_or_default());
        let fetched = match machine.signed.is_some() {
            true => super::jwt::exchange(&self.http, &machine, resource, &self.adapter).await.map(drop),
            false => manager
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
        match self.cure(&error) {
            Cure::Refetch(required) if self.refetch(required.as_deref()).await => call().await,
            _ => {
                if let StreamableHttpError::InsufficientScope(e) = &error {
                    self.note_step_up(e.get_required_scope().unwrap_or_default());
                }
                Err(error)
            }
        }
    }
}

type Stream = BoxStream<'static, Result<Sse, SseError>>;
type Headers = HashMap<HeaderName, HeaderValue>;

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
        self.recovering(|| {
            self.inner.post_message(
                uri.clone(),
                message.clone(),
                session_id.clone(),
                auth_header.clone(),
                custom_headers.clone(),
            )
        })
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
        self.recovering(|| {
            self.inner.post_message_with_max_sse_event_size(
                uri.clone(),
                message.clone(),
                session_id.clone(),
                auth_header.clone(),
                custom_headers.clone(),
                max_sse_event_size,
            )
        })
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
        self.recovering(|| {
            self.inner.post_message_with_response_limits(
                uri.clone(),
                message.clone(),
                session_id.clone(),
                auth_header.clone(),
                custom_headers.clone(),
                limits,
            )
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
        self.recovering(|| {
            self.inner
                .delete_session(uri.clone(), session_id.clone(), auth_header.clone(), custom_headers.clone())
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
        self.recovering(|| {
            self.inner.get_stream(
                uri.clone(),
                session_id.clone(),
                last_event_id.clone(),
                auth_header.clone(),
                custom_headers.clone(),
            )
        })
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
        self.recovering(|| {
            self.inner.get_stream_with_max_sse_event_size(
                uri.clone(),
                session_id.clone(),
                last_event_id.clone(),
                auth_header.clone(),
                custom_headers.clone(),
                max_sse_event_size,
            )
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
