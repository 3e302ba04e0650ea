//! The HTTP plumbing every REST provider shares: one `reqwest` client, the API key in one
//! header (and scrubbed out of every message), bounded 429 retries honouring `Retry-After`,
//! a request timeout and a response size cap, error bodies turned into [`ProviderError`]s, and
//! tool definitions fetched several at a time and kept for a while ([`Http::definitions`]).

use std::collections::HashMap;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use futures::StreamExt;

use serde_json::Value;
use tool_core::provider::ProviderError;

/// Tool definitions fetched at once by one resolution.
const DEFINITION_FETCHES_AT_ONCE: usize = 8;

/// Tool definitions kept at most (past it, expired ones go, then all).
const DEFINITIONS_KEPT: usize = 2048;

/// Tool definitions by URL, with when each was fetched. Shared by a provider's clones.
type DefinitionCache = Arc<Mutex<HashMap<String, (Instant, Value)>>>;

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
    /// How long a fetched tool definition is used before it is fetched again (zero: always).
    pub(crate) definition_ttl: Duration,
    definitions: DefinitionCache,
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
            definition_ttl: Duration::from_secs(300),
            definitions: DefinitionCache::default(),
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

    /// Sends a request (429s retried, bounded), reading at most `max_body` bytes.
    pub(crate) async fn send(
        &self,
        method: reqwest::Method,
        path: &str,
        query: &[(&str, String)],
        body: Option<&Value>,
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
            if let Some(b) = body {
                req = req.json(b);
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

    /// A success body as JSON; an error status as [`ProviderError::Api`].
    pub(crate) fn decode(&self, reply: Reply) -> Result<Value, ProviderError> {
        if !(200..300).contains(&reply.status) {
            return Err(ProviderError::Api {
                provider: self.provider.into(),
                status: reply.status,
                message: self.error_message(&reply.bytes),
            });
        }
        if reply.bytes.iter().all(u8::is_ascii_whitespace) {
            return Ok(Value::Null);
        }
        serde_json::from_slice(&reply.bytes).map_err(|e| self.transport(format!("{} answered malformed JSON ({e})", self.display)))
    }

    pub(crate) async fn json(
        &self,
        method: reqwest::Method,
        path: &str,
        query: &[(&str, String)],
        body: Option<&Value>,
    ) -> Result<Value, ProviderError> {
        let reply = self.send(method, path, query, body).await?;
        self.decode(reply)
    }

    /// [`json`](Self::json) where a 404 means "not there": `Ok(None)` (a tool Arcade or
    /// Composio does not know, an account or connection already gone).
    pub(crate) async fn json_or_absent(&self, method: reqwest::Method, path: &str) -> Result<Option<Value>, ProviderError> {
        let reply = self.send(method, path, &[], None).await?;
        if reply.status == 404 {
            return Ok(None);
        }
        self.decode(reply).map(Some)
    }

    /// The tool definitions at these paths, in their order (`None`: the platform has no such
    /// tool), fetched [`DEFINITION_FETCHES_AT_ONCE`] at a time; a definition fetched less than
    /// `definition_ttl` ago is not fetched again. Absences and failures are not remembered.
    pub(crate) async fn definitions(&self, paths: Vec<String>) -> Result<Vec<Option<Value>>, ProviderError> {
        futures::stream::iter(paths)
            .map(|path| async move { self.definition(&path).await })
            .buffered(DEFINITION_FETCHES_AT_ONCE)
            .collect::<Vec<_>>()
            .await
            .into_iter()
            .collect()
    }

    /// One tool definition, as [`definitions`](Self::definitions) fetches it.
    pub(crate) async fn definition(&self, path: &str) -> Result<Option<Value>, ProviderError> {
        let url = format!("{}{path}", self.base_url);
        let cache = || self.definitions.lock().unwrap_or_else(|e| e.into_inner());
        if !self.definition_ttl.is_zero() {
            if let Some((at, def)) = cache().get(&url) {
                if at.elapsed() < self.definition_ttl {
                    return Ok(Some(def.clone()));
                }
            }
        }
        let def = self.json_or_absent(reqwest::Method::GET, path).await?;
        if let (Some(def), false) = (&def, self.definition_ttl.is_zero()) {
            let mut kept = cache();
            if kept.len() >= DEFINITIONS_KEPT {
                let ttl = self.definition_ttl;
                kept.retain(|_, (at, _)| at.elapsed() < ttl);
                if kept.len() >= DEFINITIONS_KEPT {
                    kept.clear();
                }
            }
            kept.insert(url, (Instant::now(), def.clone()));
        }
        Ok(def)
    }

    pub(crate) fn transport(&self, message: String) -> ProviderError {
        ProviderError::Transport {
            provider: self.provider.into(),
            message,
        }
    }

    fn too_large(&self, path: &str) -> ProviderError {
        self.transport(format!("the response to {path} is larger than the {} byte limit", self.max_body))
    }

    fn transport_error(&self, path: &str, e: reqwest::Error) -> ProviderError {
        let what = if e.is_timeout() {
            format!("{path} timed out after {:?}", self.timeout)
        } else {
            format!("{path}: {}", error_chain(&e))
        };
        self.transport(self.scrub(what))
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
/// `user_id: Option<String>`, `allow_shared_user: bool`, `allow: AllowList` and
/// `max_pages: usize`.
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
            self.http.definition_ttl = ttl;
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
