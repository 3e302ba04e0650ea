//! The HTTP plumbing every REST provider shares: one `reqwest` client, the API key in one
//! header (and scrubbed out of every message), bounded 429 retries honouring `Retry-After`,
//! a request timeout and a response size cap, typed request bodies sent as JSON, answers
//! decoded straight into the provider's serde types, and error bodies turned into
//! [`ProviderError`]s.
//!
//! Knows no platform: paths, wire types and error envelopes are each provider's.

use std::sync::Arc;
use std::time::Duration;

use serde::Serialize;
use serde::de::DeserializeOwned;
use serde_json::Value;
use tool_core::provider::ProviderError;

/// No request body (for [`Http::request`]).
pub(crate) const NO_BODY: Option<&()> = None;

/// Reads `(code or name, message)` out of a platform's error body.
pub(crate) type Envelope = fn(&[u8]) -> (Option<String>, String);

#[derive(Clone)]
pub(crate) struct Http {
    pub(crate) client: reqwest::Client,
    pub(crate) api_key: Arc<str>,
    /// The header the key travels in (`authorization`, `x-api-key`).
    pub(crate) key_header: reqwest::header::HeaderName,
    pub(crate) base_url: String,
    pub(crate) timeout: Duration,
    pub(crate) max_body: usize,
    pub(crate) max_retries: u32,
    pub(crate) max_retry_wait: Duration,
    /// The provider id, in errors and log targets.
    pub(crate) provider: &'static str,
    /// The platform's name, in messages.
    pub(crate) display: &'static str,
    pub(crate) envelope: Envelope,
}

pub(crate) struct Reply {
    pub(crate) status: u16,
    pub(crate) bytes: Vec<u8>,
}

impl Http {
    pub(crate) fn new(
        provider: &'static str,
        display: &'static str,
        key_header: reqwest::header::HeaderName,
        api_key: String,
        base_url: &str,
        envelope: Envelope,
    ) -> Self {
        Http {
            client: reqwest::Client::new(),
            api_key: Arc::from(api_key),
            key_header,
            base_url: base_url.trim_end_matches('/').to_owned(),
            timeout: Duration::from_secs(30),
            max_body: 8 * 1024 * 1024,
            max_retries: 3,
            max_retry_wait: Duration::from_secs(30),
            provider,
            display,
            envelope,
        }
    }

    pub(crate) fn set_base_url(&mut self, url: impl Into<String>) {
        self.base_url = url.into().trim_end_matches('/').to_owned();
    }

    /// The text with the API key replaced by `[redacted]`.
    pub(crate) fn scrub(&self, text: String) -> String {
        if self.api_key.is_empty() {
            text
        } else {
            text.replace(&*self.api_key, "[redacted]")
        }
    }

    /// Sends a request with `body` as JSON (429s retried, bounded), reading at most
    /// `max_body` bytes of the answer.
    pub(crate) async fn request<B: Serialize + ?Sized>(
        &self,
        method: reqwest::Method,
        path: &str,
        query: &[(&str, String)],
        body: Option<&B>,
    ) -> Result<Reply, ProviderError> {
        let body = body
            .map(serde_json::to_vec)
            .transpose()
            .map_err(|e| self.transport(format!("the request body for {path} could not be written as JSON ({e})")))?;
        self.send(method, path, query, body).await
    }

    async fn send(
        &self,
        method: reqwest::Method,
        path: &str,
        query: &[(&str, String)],
        body: Option<Vec<u8>>,
    ) -> Result<Reply, ProviderError> {
        let url = format!("{}{path}", self.base_url);
        let mut attempt = 0;
        loop {
            tracing::debug!(target: "tool_providers::http", provider = self.provider, %method, path, attempt, "provider request");
            let mut req = self
                .client
                .request(method.clone(), &url)
                .header(&self.key_header, &*self.api_key)
                .header(reqwest::header::ACCEPT, "application/json")
                .timeout(self.timeout);
            if !query.is_empty() {
                req = req.query(query);
            }
            if let Some(b) = &body {
                req = req.header(reqwest::header::CONTENT_TYPE, "application/json").body(b.clone());
            }
            let mut resp = req.send().await.map_err(|e| self.transport_error(path, e))?;
            let status = resp.status().as_u16();
            if status == 429 && attempt < self.max_retries {
                let wait = retry_after(resp.headers())
                    .unwrap_or_else(|| Duration::from_millis(250u64 << attempt.min(6)))
                    .min(self.max_retry_wait);
                tracing::debug!(target: "tool_providers::http", provider = self.provider, path, ?wait, "rate-limited; retrying");
                tokio::time::sleep(wait).await;
                attempt += 1;
                continue;
            }
            if resp.content_length().is_some_and(|n| n > self.max_body as u64) {
                return Err(self.too_large(path));
            }
            let mut bytes = Vec::new();
            loop {
                match resp.chunk().await {
                    Ok(Some(chunk)) => {
                        if bytes.len() + chunk.len() > self.max_body {
                            return Err(self.too_large(path));
                        }
                        bytes.extend_from_slice(&chunk);
                    }
                    Ok(None) => break,
                    Err(e) => return Err(self.transport_error(path, e)),
                }
            }
            return Ok(Reply { status, bytes });
        }
    }

    /// The `(code, message)` of an error body, secrets removed, as one line.
    pub(crate) fn error_message(&self, bytes: &[u8]) -> String {
        let (name, message) = (self.envelope)(bytes);
        let message = match name {
            Some(n) if !message.is_empty() => format!("{n}: {message}"),
            Some(n) => n,
            None if message.is_empty() => "no error message".into(),
            None => message,
        };
        self.scrub(message)
    }

    /// A success body decoded as `T` (an empty body reads as `null`, else as `{}`); an error
    /// status as [`ProviderError::Api`].
    pub(crate) fn decode<T: DeserializeOwned>(&self, reply: Reply) -> Result<T, ProviderError> {
        if !(200..300).contains(&reply.status) {
            return Err(ProviderError::Api {
                provider: self.provider.into(),
                status: reply.status,
                message: self.error_message(&reply.bytes),
            });
        }
        let decoded = if reply.bytes.iter().all(u8::is_ascii_whitespace) {
            T::deserialize(Value::Null).or_else(|_| T::deserialize(Value::Object(serde_json::Map::new())))
        } else {
            serde_json::from_slice(&reply.bytes)
        };
        decoded.map_err(|e| self.unreadable(&e))
    }

    /// Why an answer could not be read: not JSON at all, or JSON of another shape.
    pub(crate) fn unreadable(&self, e: &serde_json::Error) -> ProviderError {
        match e.classify() {
            serde_json::error::Category::Data => self.transport(format!("{} answered JSON of an unexpected shape ({e})", self.display)),
            _ => self.transport(format!("{} answered malformed JSON ({e})", self.display)),
        }
    }

    /// `GET path?query`, decoded.
    pub(crate) async fn get<T: DeserializeOwned>(&self, path: &str, query: &[(&str, String)]) -> Result<T, ProviderError> {
        let reply = self.request(reqwest::Method::GET, path, query, NO_BODY).await?;
        self.decode(reply)
    }

    /// `POST path` with a JSON body, decoded.
    pub(crate) async fn post<T: DeserializeOwned, B: Serialize + ?Sized>(&self, path: &str, body: &B) -> Result<T, ProviderError> {
        let reply = self.request(reqwest::Method::POST, path, &[], Some(body)).await?;
        self.decode(reply)
    }

    /// `GET path`, where a 404 means "not there": `Ok(None)` (a tool Arcade or Composio does
    /// not know, an account already gone).
    pub(crate) async fn get_or_absent<T: DeserializeOwned>(&self, path: &str) -> Result<Option<T>, ProviderError> {
        let reply = self.request(reqwest::Method::GET, path, &[], NO_BODY).await?;
        if reply.status == 404 {
            return Ok(None);
        }
        self.decode(reply).map(Some)
    }

    /// `DELETE path`, where a 404 (already gone) counts as deleted.
    pub(crate) async fn delete_or_absent(&self, path: &str) -> Result<(), ProviderError> {
        let reply = self.request(reqwest::Method::DELETE, path, &[], NO_BODY).await?;
        if reply.status == 404 {
            return Ok(());
        }
        self.decode::<serde::de::IgnoredAny>(reply).map(|_| ())
    }

    pub(crate) fn transport(&self, message: String) -> ProviderError {
        ProviderError::transport(self.provider, message)
    }

    fn too_large(&self, path: &str) -> ProviderError {
        self.transport(format!("the response to {path} is larger than the {} byte limit", self.max_body))
    }

    /// A failed request as [`ProviderError::Transport`]: the message scrubbed, the cause kept
    /// without its URL (whose query may name users, and whose host is the base URL).
    fn transport_error(&self, path: &str, e: reqwest::Error) -> ProviderError {
        let what = if e.is_timeout() {
            format!("{path} timed out after {:?}", self.timeout)
        } else {
            format!("{path}: {}", error_chain(&e))
        };
        self.transport(self.scrub(what)).caused_by(e.without_url())
    }
}

fn retry_after(headers: &reqwest::header::HeaderMap) -> Option<Duration> {
    let v = headers.get(reqwest::header::RETRY_AFTER)?.to_str().ok()?.trim();
    v.parse::<f64>()
        .ok()
        .filter(|s| s.is_finite() && *s >= 0.0)
        .map(Duration::from_secs_f64)
}

fn error_chain(e: &dyn std::error::Error) -> String {
    let mut text = e.to_string();
    let mut source = e.source();
    while let Some(s) = source {
        text.push_str(": ");
        text.push_str(&s.to_string());
        source = s.source();
    }
    text
}

/// A path segment, percent-encoded (unreserved characters and `@` kept).
pub(crate) fn encode_segment(s: &str) -> String {
    s.bytes()
        .map(|b| match b {
            b'A'..=b'Z' | b'a'..=b'z' | b'0'..=b'9' | b'-' | b'_' | b'.' | b'~' | b'@' => (b as char).to_string(),
            _ => format!("%{b:02X}"),
        })
        .collect()
}

/// The builder methods every REST provider shares, over its fields `http: Http`,
/// `user_id: Option<String>`, `allow_shared_user: bool`, `allow: AllowList`,
/// `max_pages: usize` and `definitions: Definitions<_>`.
macro_rules! shared_builder_methods {
    () => {
        /// The user id calls run as when the request context names no resource id (in
        /// per-author scope: the author's bucket).
        pub fn user_id(mut self, id: impl Into<String>) -> Self {
            self.user_id = Some(id.into());
            self
        }

        /// Lets calls without any user id run as the shared `default` user (off by default: a
        /// shared id is only for integrations meant to be shared; without it such a call is an
        /// error, never somebody else's account).
        pub fn allow_shared_user(mut self, allow: bool) -> Self {
            self.allow_shared_user = allow;
            self
        }

        /// Allows only these toolkits (exact or trailing `*`, without case; empty allows all).
        pub fn allowed_toolkits<S: Into<String>>(mut self, toolkits: impl IntoIterator<Item = S>) -> Self {
            self.allow.set_toolkits(toolkits);
            self
        }

        /// Allows only these tools of `toolkit` (exact or `*`-terminated prefix; an empty list
        /// allows none).
        pub fn allowed_tools<S: Into<String>>(mut self, toolkit: impl Into<String>, tools: impl IntoIterator<Item = S>) -> Self {
            self.allow = self.allow.tools(toolkit, tools);
            self
        }

        /// Defers every imported tool: it is left out of a request's tool list until the model
        /// finds it with tool search (a catalog may still override it).
        pub fn defer_loading(mut self) -> Self {
            self.placement.defer = true;
            self
        }

        /// Puts every imported tool in its toolkit's namespace (`gmail`, `google_calendar`:
        /// lower-cased, characters outside `a-z 0-9 _ -` as `_`), listed and searched under it.
        pub fn namespace_by_toolkit(mut self) -> Self {
            self.placement.by_group = true;
            self
        }

        /// The timeout of each HTTP request (default 30 s).
        pub fn timeout(mut self, timeout: std::time::Duration) -> Self {
            self.http.timeout = timeout;
            self
        }

        /// The largest response body read (default 8 MiB).
        pub fn max_response_bytes(mut self, bytes: usize) -> Self {
            self.http.max_body = bytes;
            self
        }

        /// The most pages one listing follows (default 100).
        pub fn max_pages(mut self, pages: usize) -> Self {
            self.max_pages = pages.max(1);
            self
        }

        /// How long a fetched tool definition is reused before it is fetched again (default 5
        /// minutes; zero fetches every time). Resolving tools fetches each definition; with this,
        /// resolving the same tools again (per request, per caller) costs no request.
        pub fn definition_cache_ttl(mut self, ttl: std::time::Duration) -> Self {
            self.definitions.ttl = ttl;
            self
        }

        /// Retries after a 429 (default 3) and the longest wait between them (default 30 s).
        pub fn retries(mut self, max_retries: u32, max_wait: std::time::Duration) -> Self {
            self.http.max_retries = max_retries;
            self.http.max_retry_wait = max_wait;
            self
        }
    };
}
pub(crate) use shared_builder_methods;
