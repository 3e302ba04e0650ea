//! Arcade (`https://api.arcade.dev`): tools listed with offset pagination, schemas built from
//! `value_schema`, execution as a user id, authorization links, health, and the VNext surface
//! (per-connection resolution, authorization flows with long-polled status, and connections
//! through Arcade's admin user-connections API).
//!
//! Owns [`ArcadeToolProvider`], its HTTP plumbing (bounded: request timeout, page cap, body
//! size cap, bounded 429 retries honouring `Retry-After`), the mapping from Arcade's tool
//! definitions to JSON Schema and the toolkit → auth provider mapping (cached).
//!
//! # What a connection is on Arcade
//!
//! Arcade has no connection id in `POST /v1/tools/execute`: the **user id is the bucket**,
//! and Arcade picks that user's authorization for the tool's auth provider itself. A
//! *connection* in Arcade's model is one user's authorization for one auth provider
//! (`github`, `google`, …), listed by `GET /v1/admin/user_connections` and deleted by
//! `DELETE /v1/admin/user_connections/{id}`. So:
//!
//! - [`list_connections`](ToolProvider::list_connections) answers Arcade's user-connection
//!   `id` as `connection_id` and the Arcade user id as `author_id`;
//!   [`revoke_connection`](ToolProvider::revoke_connection) takes that `id`;
//!   [`get_connection_status`](ToolProvider::get_connection_status) accepts that `id` or a
//!   user id (the bucket: "does this user hold an active connection for the toolkit?");
//! - [`authorize`](ToolProvider::authorize) reads `connection_id` as the **user id** the new
//!   authorization lands in (to re-authorize a listed connection, pass its `author_id`);
//! - [`resolve_tools_vnext`](ToolProvider::resolve_tools_vnext) never sends the connection id
//!   (Arcade cannot take one): the tools run as the bucket, `author_id` when given, else the
//!   caller's resource id (see the method).
//!
//! A toolkit's auth provider is read from its tools' definitions
//! (`requirements.authorization.provider_id`) and cached per toolkit; a toolkit whose tools
//! need no authorization has no connections (and counts as connected).

use std::collections::{BTreeMap, BTreeSet};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use serde_json::{json, Map, Value};
use tool_core::provider::{
    caller_id, connection_owner, non_empty_id, AllowList, AuthStatus, Authorization, AuthorizeOptions, Capabilities, Connection,
    ConnectionField, ConnectionKind, ConnectionRef, ConnectionState, ConnectionStatus, Health, ListConnectionsOptions,
    ListConnectionsResult, ListResult, ListToolsOptions, Pagination, ProviderError, ProviderInfo, ResolveOptions, ResolveToolsOptions,
    ResolvedTools, Scope, ToolInfo, ToolProvider, Toolkit,
};
use tool_core::tool::BoxFuture;
use tool_core::{DynamicTool, ErrorKind, ToolError};

use crate::definitions::Definitions;
use crate::http::{encode_segment, Http};
use crate::naming::slug_has_prefix;

/// The default base URL.
pub const DEFAULT_BASE_URL: &str = "https://api.arcade.dev";
/// The shared user id, used only when [`ArcadeToolProvider::allow_shared_user`] opts in.
pub const SHARED_USER_ID: &str = "default";
/// The longest long poll Arcade's `GET /v1/auth/status?wait=` accepts, in seconds.
pub const MAX_AUTH_STATUS_WAIT_SECS: u64 = 59;
/// The `auth_id` [`ToolProvider::authorize`] answers when Arcade reports the user already
/// authorized without naming the authorization; [`ToolProvider::get_auth_status`] answers it
/// `Completed` without a request.
pub const ALREADY_AUTHORIZED_ID: &str = "arcade:already-authorized";
const PROVIDER: &str = "arcade";
const MAX_LIMIT: u32 = 100;

/// Arcade as a [`ToolProvider`].
///
/// ```
/// use tool_providers::ArcadeToolProvider;
/// let arcade = ArcadeToolProvider::new("arc_secret").user_id("user-1").allowed_toolkits(["Github", "Slack*"]);
/// assert!(!format!("{arcade:?}").contains("arc_secret"));
/// ```
#[derive(Clone)]
pub struct ArcadeToolProvider {
    info: ProviderInfo,
    http: Http,
    user_id: Option<String>,
    allow_shared_user: bool,
    allow: AllowList,
    max_pages: usize,
    auth_wait_secs: u64,
    auth_providers: Arc<Mutex<BTreeMap<String, AuthProvider>>>,
    definitions: Definitions<Value>,
}

/// The auth provider a toolkit's tools require.
#[derive(Debug, Clone, PartialEq, Eq)]
enum AuthProvider {
    /// Arcade lists no tool of the toolkit.
    UnknownToolkit,
    /// Its tools need no authorization.
    NoneNeeded,
    /// Arcade's auth provider id (`github`, `google`, …).
    Id(String),
}

impl std::fmt::Debug for ArcadeToolProvider {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ArcadeToolProvider")
            .field("api_key", &"[redacted]")
            .field("base_url", &self.http.base_url)
            .field("user_id", &self.user_id)
            .field("allow_shared_user", &self.allow_shared_user)
            .field("allow", &self.allow)
            .field("timeout", &self.http.timeout)
            .field("max_response_bytes", &self.http.max_body)
            .field("max_pages", &self.max_pages)
            .field("auth_status_wait_secs", &self.auth_wait_secs)
            .finish()
    }
}

impl ArcadeToolProvider {
    crate::http::shared_builder_methods!();

    /// A provider using this API key (sent as `Authorization: <key>`, as the official SDKs do).
    pub fn new(api_key: impl Into<String>) -> Self {
        ArcadeToolProvider {
            info: ProviderInfo {
                id: PROVIDER.into(),
                name: "Arcade".into(),
                description: Some("Tools hosted by Arcade (arcade.dev)".into()),
            },
            http: Http::new(
                PROVIDER,
                "Arcade",
                reqwest::header::AUTHORIZATION,
                api_key.into(),
                DEFAULT_BASE_URL,
                envelope,
            ),
            user_id: None,
            allow_shared_user: false,
            allow: AllowList::default(),
            max_pages: 100,
            auth_wait_secs: 0,
            auth_providers: Arc::default(),
            definitions: Definitions::default(),
        }
    }

    /// How long [`get_auth_status`](ToolProvider::get_auth_status) long-polls Arcade (its
    /// `wait` parameter: Arcade answers as soon as the flow completes, or when the wait ends).
    /// Whole seconds, at most 59 ([`MAX_AUTH_STATUS_WAIT_SECS`]); default 0 = no long poll.
    /// The status request's timeout is the wait plus [`timeout`](Self::timeout).
    pub fn auth_status_wait(mut self, wait: Duration) -> Self {
        self.auth_wait_secs = wait.as_secs().min(MAX_AUTH_STATUS_WAIT_SECS);
        self
    }

    /// The API base URL (default `https://api.arcade.dev`).
    pub fn base_url(mut self, url: impl Into<String>) -> Self {
        self.http.set_base_url(url);
        // Another Arcade: its toolkits' auth providers are learnt afresh.
        self.auth_providers = Arc::default();
        self
    }

    fn filters_tools(&self) -> bool {
        !self.allow.is_unrestricted()
    }

    fn tool_allowed(&self, toolkit: &str, name: &str) -> bool {
        self.allow.tool(toolkit, name) || self.allow.tool(toolkit, &format!("{toolkit}.{name}"))
    }

    /// Every tool (optionally of one toolkit), following offset pagination up to the page cap.
    async fn all_tools(&self, toolkit: Option<&str>) -> Result<Vec<Value>, ProviderError> {
        let mut items = Vec::new();
        let mut offset: u64 = 0;
        for _ in 0..self.max_pages {
            let page = self.tools_page(toolkit, MAX_LIMIT, offset).await?;
            let got = page.items.len() as u64;
            items.extend(page.items);
            offset += got;
            if got == 0 || got < u64::from(MAX_LIMIT) || page.total.is_some_and(|t| offset >= t) {
                return Ok(items);
            }
        }
        Err(self.http.transport(format!(
            "the tool listing did not end after {} pages; stopped (raise `max_pages` if the catalog is really that large)",
            self.max_pages
        )))
    }

    async fn tools_page(&self, toolkit: Option<&str>, limit: u32, offset: u64) -> Result<Page, ProviderError> {
        let mut query = vec![("limit", limit.to_string()), ("offset", offset.to_string())];
        if let Some(t) = toolkit {
            query.push(("toolkit", t.to_owned()));
        }
        let body = self.http.get::<Value>("/v1/tools", &query).await?;
        let items = match body.get("items") {
            Some(Value::Array(items)) => items.clone(),
            Some(Value::Null) | None => Vec::new(),
            Some(_) => return Err(self.http.transport("the tool listing's `items` is not an array".into())),
        };
        Ok(Page {
            items,
            total: body.get("total_count").and_then(Value::as_u64),
        })
    }

    async fn definition(&self, name: &str) -> Result<Option<Value>, ProviderError> {
        self.definitions.fetch(&self.http, &definition_path(name)).await
    }

    fn tool_info(item: &Value) -> Option<ToolInfo> {
        let name = item.get("name").and_then(Value::as_str)?;
        let toolkit = toolkit_name(item);
        Some(ToolInfo {
            slug: qualified_name(item).unwrap_or_else(|| name.to_owned()),
            name: name.to_owned(),
            description: item.get("description").and_then(Value::as_str).map(str::to_owned),
            toolkit,
        })
    }

    /// Runnable tools for the slugs Arcade knows and the allow-lists let through (others are
    /// left out with a warning); `bound` says which user and description a slug's tool keeps.
    async fn resolve_each(
        &self,
        slugs: &[String],
        options: &ResolveOptions,
        bound: impl Fn(&str) -> Option<Bound>,
    ) -> Result<ResolvedTools, ProviderError> {
        let mut wanted = Vec::new();
        for slug in slugs {
            let Some(name) = ArcadeName::parse(slug) else {
                tracing::warn!(target: "tool_providers::arcade", slug, "not an Arcade tool name; left out");
                continue;
            };
            if self.tool_allowed(&name.toolkit, &name.tool) {
                wanted.push((slug, name));
            }
        }
        let paths: Vec<String> = wanted.iter().map(|(_, name)| definition_path(&name.qualified())).collect();
        let definitions = self.definitions.fetch_all(&self.http, paths).await?;
        let mut out = ResolvedTools::new();
        for ((slug, name), def) in wanted.into_iter().zip(definitions) {
            let Some(def) = def else {
                tracing::warn!(target: "tool_providers::arcade", slug, "Arcade has no such tool; left out");
                continue;
            };
            let tool = self.build_tool(&def, options, name.version.clone(), bound(slug))?;
            out.insert(slug.clone(), tool);
        }
        Ok(out)
    }

    fn build_tool(
        &self,
        def: &Value,
        options: &ResolveOptions,
        version: Option<String>,
        bound: Option<Bound>,
    ) -> Result<Arc<dyn tool_core::Tool>, ProviderError> {
        let id = qualified_name(def).ok_or_else(|| self.http.transport("a tool definition has no `qualified_name`".into()))?;
        let (fixed_user, description_override) = match bound {
            Some(b) => (Some(b.user), b.description),
            None => (None, None),
        };
        let description = description_override
            .filter(|d| !d.trim().is_empty())
            .or_else(|| {
                def.get("description")
                    .and_then(Value::as_str)
                    .filter(|d| !d.trim().is_empty())
                    .map(str::to_owned)
            })
            .unwrap_or_else(|| format!("Arcade tool {id}"));
        let input_schema = input_schema(def);
        let mut builder = DynamicTool::builder(id.clone(), description).input_schema(input_schema);
        if let Some(vs) = def.pointer("/output/value_schema").filter(|v| v.is_object()) {
            builder = builder.output_schema(value_schema(vs, None));
        }
        builder = builder.with_spec(|s| {
            s.title = def.get("name").and_then(Value::as_str).map(str::to_owned);
        });
        let runner = Runner {
            http: self.http.clone(),
            tool_name: id,
            version,
            user_id: options.user_id.clone().or_else(|| self.user_id.clone()),
            resolve_context: options.request_context.clone(),
            allow_shared_user: self.allow_shared_user,
            fixed_user,
        };
        let runner = Arc::new(runner);
        let tool = builder
            .handler(move |input, cx| {
                let runner = runner.clone();
                let user = runner.user_for(cx.raw_request_context(), cx.call().resource_id.as_deref());
                async move { runner.run(input, user?).await }
            })
            .map_err(|e| ProviderError::Config(e.0))?;
        Ok(tool.into_tool())
    }
}

/// What binds a VNext tool: the user bucket it always runs as and its description override.
struct Bound {
    user: String,
    description: Option<String>,
}

struct Page {
    items: Vec<Value>,
    total: Option<u64>,
}

struct Runner {
    http: Http,
    tool_name: String,
    version: Option<String>,
    user_id: Option<String>,
    resolve_context: Map<String, Value>,
    allow_shared_user: bool,
    /// The bucket a VNext tool was resolved for (wins over everything).
    fixed_user: Option<String>,
}

impl Runner {
    /// The bucket a VNext tool was resolved for; else the caller's resource id, else the
    /// resolve-time context's, else the configured user, else the shared `default` only when
    /// allowed.
    fn user_for(&self, context: &Map<String, Value>, call_resource: Option<&str>) -> Result<String, ToolError> {
        if let Some(user) = &self.fixed_user {
            return Ok(user.clone());
        }
        caller_id(context, call_resource, &self.resolve_context)
            .or_else(|| non_empty_id(self.user_id.as_deref()))
            .or_else(|| self.allow_shared_user.then(|| SHARED_USER_ID.to_owned()))
            .ok_or_else(|| {
                ToolError::new(format!(
                    "Arcade tool `{}`: the caller is not isolated: no resource id in the request context (`mastra__resourceId`), no user id configured, and the shared `{SHARED_USER_ID}` user is not allowed",
                    self.tool_name
                ))
            })
    }

    async fn run(&self, input: Value, user_id: String) -> Result<Value, ToolError> {
        let fail = |e: ProviderError| ToolError::new(e.to_string());
        let mut body = json!({"tool_name": self.tool_name, "input": input, "user_id": user_id});
        if let Some(v) = &self.version {
            body["tool_version"] = json!(v);
        }
        for attempt in 0..2 {
            let reply = self
                .http
                .request(reqwest::Method::POST, "/v1/tools/execute", &[], Some(&body))
                .await
                .map_err(fail)?;
            if reply.status == 403 {
                let (name, message) = envelope(&reply.bytes);
                if name.as_deref() == Some("tool_authorization_required") || message.to_lowercase().contains("authorization required") {
                    self.authorize(&user_id).await?;
                    if attempt == 0 {
                        continue;
                    }
                    break;
                }
            }
            let out: Value = self.http.decode(reply).map_err(fail)?;
            let output = out.get("output").cloned().unwrap_or(Value::Null);
            if let Some(err) = output.get("error").filter(|e| !e.is_null()) {
                let message = err
                    .get("message")
                    .and_then(Value::as_str)
                    .unwrap_or("the tool failed without a message");
                let message = match err.get("additional_prompt_content").and_then(Value::as_str) {
                    Some(extra) if !extra.trim().is_empty() => format!("{message}\n{extra}"),
                    _ => message.to_owned(),
                };
                let details = json!({"kind": err.get("kind"), "can_retry": err.get("can_retry"),
                    "retry_after_ms": err.get("retry_after_ms"), "provider": PROVIDER});
                return Err(ToolError::with_details(self.http.scrub(message), details).with_kind_of(ErrorKind::Execution));
            }
            let auth = output.get("authorization").filter(|a| !a.is_null());
            let pending = auth.is_some_and(|a| a.get("status").and_then(Value::as_str) != Some("completed"));
            if pending && output.get("value").is_none_or(Value::is_null) {
                let auth = auth.cloned().unwrap_or(Value::Null);
                if let Some(url) = auth.get("url").and_then(Value::as_str) {
                    return Err(self.auth_error(url, auth.get("id").and_then(Value::as_str)));
                }
                self.authorize(&user_id).await?;
                if attempt == 0 {
                    continue;
                }
                break;
            }
            return Ok(output.get("value").cloned().unwrap_or(Value::Null));
        }
        Err(ToolError::new(format!(
            "Arcade tool `{}`: authorization was reported complete but execution still asks for it",
            self.tool_name
        )))
    }

    /// Starts authorization: `Ok` when it is already complete (retry the call), otherwise the
    /// model-readable error carrying the URL.
    async fn authorize(&self, user_id: &str) -> Result<(), ToolError> {
        let body = json!({"tool_name": self.tool_name, "user_id": user_id});
        let out = self.http.post::<Value, _>("/v1/tools/authorize", &body).await.map_err(|e| {
            ToolError::new(format!(
                "Arcade tool `{}` needs authorization, and starting it failed: {e}",
                self.tool_name
            ))
        })?;
        if out.get("status").and_then(Value::as_str) == Some("completed") {
            return Ok(());
        }
        match out.get("url").and_then(Value::as_str) {
            Some(url) => Err(self.auth_error(url, out.get("id").and_then(Value::as_str))),
            None => Err(ToolError::new(format!(
                "Arcade tool `{}` needs authorization, but Arcade returned no authorization URL",
                self.tool_name
            ))),
        }
    }

    fn auth_error(&self, url: &str, id: Option<&str>) -> ToolError {
        ToolError::with_details(
            format!(
                "Authorization required: `{}` acts on the user's account, which is not connected yet. Ask the user to open {url} to authorize it, then call the tool again.",
                self.tool_name
            ),
            json!({"authorization_required": true, "url": url, "authorization_id": id, "tool_name": self.tool_name, "provider": PROVIDER}),
        )
        .with_kind_of(ErrorKind::Execution)
    }
}

/// The VNext plumbing: buckets, auth providers, user connections.
impl ArcadeToolProvider {
    fn lock_auth_providers(&self) -> std::sync::MutexGuard<'_, BTreeMap<String, AuthProvider>> {
        self.auth_providers.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// The auth provider a toolkit's tools require, read from their definitions
    /// (`requirements.authorization.provider_id`) and cached (an unknown toolkit is not
    /// cached: it may appear later).
    async fn auth_provider_of(&self, toolkit: &str) -> Result<AuthProvider, ProviderError> {
        let key = toolkit.trim().to_ascii_lowercase();
        if let Some(hit) = self.lock_auth_providers().get(&key) {
            return Ok(hit.clone());
        }
        let mut known = false;
        let mut found: Option<String> = None;
        for def in self.all_tools(Some(toolkit.trim())).await? {
            if !toolkit_name(&def).is_some_and(|n| n.eq_ignore_ascii_case(toolkit.trim())) {
                continue;
            }
            known = true;
            let id = def
                .pointer("/requirements/authorization/provider_id")
                .and_then(Value::as_str)
                .map(str::trim)
                .filter(|p| !p.is_empty());
            match (&found, id) {
                (None, Some(id)) => found = Some(id.to_owned()),
                (Some(first), Some(id)) if first != id => {
                    tracing::warn!(target: "tool_providers::arcade", toolkit, first = %first, other = id,
                        "a toolkit's tools name several auth providers; its connections are those of the first");
                }
                _ => {}
            }
        }
        let answer = match (known, found) {
            (false, _) => return Ok(AuthProvider::UnknownToolkit),
            (true, None) => AuthProvider::NoneNeeded,
            (true, Some(id)) => AuthProvider::Id(id),
        };
        self.lock_auth_providers().insert(key, answer.clone());
        Ok(answer)
    }

    /// The Arcade user a VNext resolution runs as: `author_id` when given; a platform
    /// connection's configured user; otherwise the caller's resource id (per the connection's
    /// scope, default caller-supplied); the shared `default` user only when
    /// [`allow_shared_user`](Self::allow_shared_user) opted in. Never a silent shared id.
    fn vnext_bucket(&self, options: &ResolveToolsOptions) -> Result<String, ProviderError> {
        if let Some(author) = non_empty_id(options.author_id.as_deref()) {
            return Ok(author);
        }
        let shared = self.allow_shared_user.then_some(SHARED_USER_ID);
        if options.kind == Some(ConnectionKind::Platform) {
            return non_empty_id(self.user_id.as_deref()).or_else(|| shared.map(str::to_owned)).ok_or_else(|| {
                ProviderError::Config(
                    "an Arcade platform connection runs as the configured Arcade user: set `user_id` on the provider (or opt in to the shared user with `allow_shared_user`)"
                        .into(),
                )
            });
        }
        let scope = match options.kind {
            Some(ConnectionKind::Invoker) => Scope::CallerSupplied,
            _ => options.scope.unwrap_or(Scope::CallerSupplied),
        };
        connection_owner(scope, None, &options.request_context, shared)
            .map_err(|e| ProviderError::Config(format!("Arcade cannot tell which user the tools run as: {e}")))
    }

    /// Every user connection for an auth provider (optionally one user's), following offset
    /// pagination up to the page cap. Items of another user or provider are dropped, so a
    /// filter the API ignored never widens a listing.
    async fn user_connections(&self, provider_id: &str, user: Option<&str>) -> Result<Vec<Value>, ProviderError> {
        let mut items = Vec::new();
        let mut offset: u64 = 0;
        for _ in 0..self.max_pages {
            // Both filter spellings: `provider_id`/`user_id` (Arcade's OpenAPI and
            // `@arcadeai/arcadejs`) and `provider[id]`/`user[id]` (`arcadepy` 1.10).
            let mut query = vec![
                ("provider_id", provider_id.to_owned()),
                ("provider[id]", provider_id.to_owned()),
                ("limit", MAX_LIMIT.to_string()),
                ("offset", offset.to_string()),
            ];
            if let Some(u) = user {
                query.push(("user_id", u.to_owned()));
                query.push(("user[id]", u.to_owned()));
            }
            let body = self.http.get::<Value>("/v1/admin/user_connections", &query).await?;
            let page = match body.get("items") {
                Some(Value::Array(items)) => items.clone(),
                Some(Value::Null) | None => Vec::new(),
                Some(_) => return Err(self.http.transport("the user-connection listing's `items` is not an array".into())),
            };
            let got = page.len() as u64;
            offset += got;
            items.extend(page.into_iter().filter(|c| {
                c.get("provider_id").and_then(Value::as_str) == Some(provider_id)
                    && user.is_none_or(|u| c.get("user_id").and_then(Value::as_str) == Some(u))
            }));
            let total = body.get("total_count").and_then(Value::as_u64);
            if got == 0 || got < u64::from(MAX_LIMIT) || total.is_some_and(|t| offset >= t) {
                return Ok(items);
            }
        }
        Err(self.http.transport(format!(
            "the user-connection listing did not end after {} pages; stopped (raise `max_pages` if there are really that many)",
            self.max_pages
        )))
    }

    /// Revokes `connection_id` only if it is one of `user_id`'s connections (any auth
    /// provider): the owner-checked form of
    /// [`revoke_connection`](ToolProvider::revoke_connection) for code acting on one tenant's
    /// behalf. A connection of another user is refused with [`ProviderError::Config`] and left
    /// untouched; one that is already gone counts as revoked.
    pub async fn revoke_user_connection(&self, user_id: &str, connection_id: &str) -> Result<(), ProviderError> {
        let (user, id) = (user_id.trim(), connection_id.trim());
        if user.is_empty() || id.is_empty() {
            return Err(ProviderError::Config(
                "revoking an Arcade connection needs both the user id and the connection id".into(),
            ));
        }
        let mut offset: u64 = 0;
        for _ in 0..self.max_pages {
            let query = [
                ("user_id", user.to_owned()),
                ("user[id]", user.to_owned()),
                ("limit", MAX_LIMIT.to_string()),
                ("offset", offset.to_string()),
            ];
            let body = self.http.get::<Value>("/v1/admin/user_connections", &query).await?;
            let page = body.get("items").and_then(Value::as_array).cloned().unwrap_or_default();
            if let Some(owner) = page
                .iter()
                .find(|c| c.get("id").and_then(Value::as_str) == Some(id))
                .map(|c| c.get("user_id").and_then(Value::as_str).unwrap_or_default())
            {
                if owner != user {
                    break;
                }
                return self.delete_connection(id).await;
            }
            let got = page.len() as u64;
            offset += got;
            if got == 0 || got < u64::from(MAX_LIMIT) || body.get("total_count").and_then(Value::as_u64).is_some_and(|t| offset >= t) {
                break;
            }
        }
        Err(ProviderError::Config(format!(
            "the Arcade connection `{id}` is not one of user `{user}`'s connections; nothing was revoked (list the user's connections for the ids they own)"
        )))
    }

    async fn delete_connection(&self, id: &str) -> Result<(), ProviderError> {
        // Already gone counts as revoked.
        let path = format!("/v1/admin/user_connections/{}", encode_segment(id));
        self.http.delete_or_absent(&path).await
    }
}

/// Arcade's `connection_status` as a [`ConnectionStatus`]: `active`/`connected`/`completed`
/// are active; `pending`/`not_started`/`initializing` pending; `failed`/`error`/`expired`/
/// `revoked` failed; anything else (`inactive`, unknown values) inactive, so it is never
/// pinned by mistake.
fn connection_status(status: Option<&str>) -> ConnectionStatus {
    match status.map(|s| s.trim().to_ascii_lowercase()).as_deref() {
        Some("active" | "connected" | "completed") => ConnectionStatus::Active,
        Some("pending" | "not_started" | "initializing" | "initiated") => ConnectionStatus::Pending,
        Some("failed" | "error" | "expired" | "revoked") => ConnectionStatus::Failed,
        _ => ConnectionStatus::Inactive,
    }
}

/// A listed user connection as a [`Connection`] (none without an `id`).
fn connection_of(item: &Value) -> Option<Connection> {
    let id = item.get("id").and_then(Value::as_str).filter(|s| !s.is_empty())?;
    Some(Connection {
        connection_id: id.to_owned(),
        status: connection_status(item.get("connection_status").and_then(Value::as_str)),
        created_at: ["created_at", "created"]
            .iter()
            .find_map(|k| item.get(*k).and_then(Value::as_str))
            .map(str::to_owned),
        author_id: item.get("user_id").and_then(Value::as_str).map(str::to_owned),
    })
}

impl ToolProvider for ArcadeToolProvider {
    fn info(&self) -> &ProviderInfo {
        &self.info
    }

    fn default_scope(&self) -> Scope {
        Scope::CallerSupplied
    }

    /// The toolkit before the `.` of `Toolkit.Tool` (`Github.GetRepository@1.2.0` → `Github`).
    fn toolkit_of_slug(&self, slug: &str) -> Option<String> {
        slug.split_once('.').map(|(t, _)| t.to_owned()).filter(|t| !t.is_empty())
    }

    /// `<Toolkit>.…` (exact), or the model-safe `<Toolkit>_…` (without case).
    fn slug_belongs_to(&self, slug: &str, toolkit: &str) -> bool {
        slug_has_prefix(slug, toolkit, '.', false) || slug_has_prefix(slug, toolkit, '_', true)
    }

    /// One connection per toolkit (Arcade runs a user's tools with that user's single
    /// authorization per auth provider: execute takes no connection id); status for many
    /// connections in one listing per auth provider; re-authorizing is not promised to keep
    /// Arcade's user-connection id (resolution never depends on it: it keys on the user);
    /// revocation supported.
    fn capabilities(&self) -> Capabilities {
        Capabilities {
            multiple_connections_per_toolkit: false,
            batch_connection_status: true,
            reauthorize_reuses_connection_id: false,
            supports_revoke: Some(true),
        }
    }

    fn list_toolkits(&self) -> BoxFuture<'_, Result<ListResult<Toolkit>, ProviderError>> {
        Box::pin(async move {
            let mut toolkits: BTreeMap<String, Toolkit> = BTreeMap::new();
            for item in self.all_tools(None).await? {
                let Some(name) = toolkit_name(&item) else { continue };
                if !self.allow.toolkit(&name) {
                    continue;
                }
                toolkits.entry(name.clone()).or_insert_with(|| Toolkit {
                    slug: name.clone(),
                    name,
                    description: item.pointer("/toolkit/description").and_then(Value::as_str).map(str::to_owned),
                    icon: None,
                });
            }
            let data: Vec<Toolkit> = toolkits.into_values().collect();
            Ok(ListResult {
                pagination: Some(Pagination {
                    total: Some(data.len() as u64),
                    page: Some(1),
                    per_page: Some(data.len() as u32),
                    has_more: false,
                }),
                data,
            })
        })
    }

    fn list_tools(&self, options: ListToolsOptions) -> BoxFuture<'_, Result<ListResult<ToolInfo>, ProviderError>> {
        Box::pin(async move {
            if let Some(t) = &options.toolkit {
                if !self.allow.toolkit(t) {
                    return Ok(ListResult::empty());
                }
            }
            let page = options.page.unwrap_or(1).max(1);
            let per_page = options.per_page.unwrap_or(25).clamp(1, MAX_LIMIT);
            let search = options.search.as_deref().map(str::to_lowercase).filter(|s| !s.is_empty());
            if search.is_none() && !self.filters_tools() {
                let offset = u64::from(page - 1) * u64::from(per_page);
                let got = self.tools_page(options.toolkit.as_deref(), per_page, offset).await?;
                let n = got.items.len() as u64;
                let has_more = match got.total {
                    Some(t) => offset + n < t,
                    None => n == u64::from(per_page),
                };
                return Ok(ListResult {
                    data: got.items.iter().filter_map(Self::tool_info).collect(),
                    pagination: Some(Pagination {
                        total: got.total,
                        page: Some(page),
                        per_page: Some(per_page),
                        has_more,
                    }),
                });
            }
            // Search and allow-lists filter on our side: fetch every page (bounded), then page.
            let all: Vec<ToolInfo> = self
                .all_tools(options.toolkit.as_deref())
                .await?
                .iter()
                .filter_map(Self::tool_info)
                .filter(|t| {
                    let toolkit = t.toolkit.as_deref().unwrap_or_default();
                    self.tool_allowed(toolkit, &t.name)
                })
                .filter(|t| {
                    search.as_deref().is_none_or(|s| {
                        t.slug.to_lowercase().contains(s) || t.description.as_deref().is_some_and(|d| d.to_lowercase().contains(s))
                    })
                })
                .collect();
            let total = all.len() as u64;
            let start = (u64::from(page - 1) * u64::from(per_page)).min(total) as usize;
            let data: Vec<ToolInfo> = all.into_iter().skip(start).take(per_page as usize).collect();
            let has_more = (start + data.len()) < total as usize;
            Ok(ListResult {
                data,
                pagination: Some(Pagination {
                    total: Some(total),
                    page: Some(page),
                    per_page: Some(per_page),
                    has_more,
                }),
            })
        })
    }

    fn get_tool_schema(&self, slug: &str) -> BoxFuture<'_, Result<Option<Value>, ProviderError>> {
        let slug = slug.to_owned();
        Box::pin(async move {
            let Some(name) = ArcadeName::parse(&slug) else { return Ok(None) };
            if !self.tool_allowed(&name.toolkit, &name.tool) {
                return Ok(None);
            }
            Ok(self.definition(&name.qualified()).await?.as_ref().map(input_schema))
        })
    }

    fn resolve_tools(&self, slugs: Vec<String>, options: ResolveOptions) -> BoxFuture<'_, Result<ResolvedTools, ProviderError>> {
        Box::pin(async move { self.resolve_each(&slugs, &options, |_| None).await })
    }

    fn get_health(&self) -> BoxFuture<'_, Result<Health, ProviderError>> {
        Box::pin(async move {
            match self.http.get::<Value>("/v1/health", &[]).await {
                Ok(body) => {
                    let ok = body.get("healthy").and_then(Value::as_bool).unwrap_or(false);
                    Ok(Health {
                        ok,
                        message: (!ok).then(|| "Arcade reports that it is not healthy".to_owned()),
                        details: Some(body),
                    })
                }
                Err(e) => Ok(Health {
                    ok: false,
                    message: Some(e.to_string()),
                    details: None,
                }),
            }
        })
    }

    /// The allowed toolkits (the legacy listing: Arcade has no toolkit endpoint, so they are
    /// derived from the tools; one page).
    fn list_toolkits_vnext(&self) -> BoxFuture<'_, Result<ListResult<Toolkit>, ProviderError>> {
        self.list_toolkits()
    }

    /// The allowed tools (the legacy listing), with `pagination.page` always set.
    fn list_tools_vnext(&self, options: ListToolsOptions) -> BoxFuture<'_, Result<ListResult<ToolInfo>, ProviderError>> {
        Box::pin(async move {
            let page = options.page.unwrap_or(1).max(1);
            let mut out = self.list_tools(options).await?;
            out.pagination.get_or_insert_with(Pagination::default).page.get_or_insert(page);
            Ok(out)
        })
    }

    /// Runnable tools for one set of slugs over one connection. The Arcade user the tools run
    /// as (the bucket) is decided here, once: `author_id` when given; for a `platform`
    /// connection the configured [`user_id`](ArcadeToolProvider::user_id); otherwise the
    /// caller's resource id from the request context (per the connection's scope, default
    /// caller-supplied; an `invoker` connection always reads the caller). No bucket and no
    /// [`allow_shared_user`](ArcadeToolProvider::allow_shared_user) opt-in is a
    /// [`ProviderError::Config`], never a shared id. `connection_id` is not sent: Arcade's
    /// execute has no connection parameter and uses the bucket's authorization for the tool's
    /// auth provider. `tool_meta` descriptions replace Arcade's.
    fn resolve_tools_vnext(&self, options: ResolveToolsOptions) -> BoxFuture<'_, Result<ResolvedTools, ProviderError>> {
        Box::pin(async move {
            let user = self.vnext_bucket(&options)?;
            let resolve = ResolveOptions {
                user_id: Some(user.clone()),
                request_context: options.request_context.clone(),
            };
            self.resolve_each(&options.tool_slugs, &resolve, |slug| {
                Some(Bound {
                    user: user.clone(),
                    description: options.tool_meta.get(slug).and_then(|m| m.description.clone()),
                })
            })
            .await
        })
    }

    /// Starts Arcade's authorization for one tool (`POST /v1/tools/authorize {tool_name,
    /// user_id}`): Arcade authorizes per tool, so `tool_name` is required (a tool of
    /// `toolkit`), and `connection_id` is the Arcade user id the authorization lands in.
    /// A user who has already authorized gets `url` empty and an `auth_id` whose status is
    /// `Completed` (Arcade's id, else [`ALREADY_AUTHORIZED_ID`]): there is nothing to open.
    fn authorize(&self, options: AuthorizeOptions) -> BoxFuture<'_, Result<Authorization, ProviderError>> {
        Box::pin(async move {
            let toolkit = options.toolkit.trim();
            let Some(tool) = options.tool_name.as_deref().map(str::trim).filter(|t| !t.is_empty()) else {
                return Err(ProviderError::Config(format!(
                    "Arcade authorizes per tool: pass `tool_name` (a tool of toolkit `{toolkit}`, such as one from list_tools_vnext)"
                )));
            };
            let Some(name) = ArcadeName::parse(tool) else {
                return Err(ProviderError::Config(format!(
                    "`{tool}` is not an Arcade tool name: use `Toolkit.Tool` (optionally `@version`)"
                )));
            };
            if !toolkit.is_empty() && !name.toolkit.eq_ignore_ascii_case(toolkit) {
                return Err(ProviderError::Config(format!(
                    "`{tool}` is not a tool of toolkit `{toolkit}`: pass one of that toolkit's tools"
                )));
            }
            if !self.tool_allowed(&name.toolkit, &name.tool) {
                return Err(ProviderError::Config(format!(
                    "`{tool}` is not allowed by this provider's allow-lists"
                )));
            }
            let user = options.connection_id.trim();
            if user.is_empty() {
                return Err(ProviderError::Config(
                    "Arcade authorizes a user: pass the Arcade user id (the bucket) as `connection_id`".into(),
                ));
            }
            let mut body = json!({"tool_name": name.qualified(), "user_id": user});
            if let Some(v) = &name.version {
                body["tool_version"] = json!(v);
            }
            let out = self.http.post::<Value, _>("/v1/tools/authorize", &body).await?;
            if let Some(other) = out.get("user_id").and_then(Value::as_str).filter(|u| !u.is_empty() && *u != user) {
                tracing::warn!(target: "tool_providers::arcade", asked = user, answered = other, "authorization for another user refused");
                return Err(self
                    .http
                    .transport("Arcade answered an authorization for a different user; refused".into()));
            }
            let id = out.get("id").and_then(Value::as_str).filter(|s| !s.is_empty()).map(str::to_owned);
            match out.get("status").and_then(Value::as_str) {
                Some("completed") => Ok(Authorization {
                    url: String::new(),
                    auth_id: id.unwrap_or_else(|| ALREADY_AUTHORIZED_ID.to_owned()),
                }),
                Some("failed") => Err(ProviderError::Config(format!(
                    "Arcade reported the authorization of `{tool}` as failed; check the auth provider's setup in Arcade, then try again"
                ))),
                _ => {
                    let url = out.get("url").and_then(Value::as_str).filter(|u| !u.trim().is_empty());
                    match (url, id) {
                        (Some(url), Some(auth_id)) => Ok(Authorization {
                            url: url.to_owned(),
                            auth_id,
                        }),
                        _ => Err(self
                            .http
                            .transport("Arcade started an authorization without a URL or an id to follow it".into())),
                    }
                }
            }
        })
    }

    /// Always empty: Arcade collects nothing before authorizing (the auth provider's OAuth
    /// page asks the user whatever it needs).
    fn list_connection_fields(&self, toolkit: &str) -> BoxFuture<'_, Result<Vec<ConnectionField>, ProviderError>> {
        let _ = toolkit;
        Box::pin(std::future::ready(Ok(Vec::new())))
    }

    /// `GET /v1/auth/status?id=…` (with `wait=` when
    /// [`auth_status_wait`](ArcadeToolProvider::auth_status_wait) is set: a long poll that
    /// answers as soon as the flow completes). Arcade's `not_started`/`pending` are pending,
    /// `completed` completed, `failed` failed; an authorization Arcade no longer knows (404)
    /// is failed; any other status is an error.
    fn get_auth_status(&self, auth_id: &str) -> BoxFuture<'_, Result<AuthStatus, ProviderError>> {
        let id = auth_id.trim().to_owned();
        Box::pin(async move {
            if id.is_empty() {
                return Err(ProviderError::Config("pass the `auth_id` that `authorize` returned".into()));
            }
            if id == ALREADY_AUTHORIZED_ID {
                return Ok(AuthStatus::Completed);
            }
            let mut query = vec![("id", id.clone())];
            let mut http = self.http.clone();
            if self.auth_wait_secs > 0 {
                query.push(("wait", self.auth_wait_secs.to_string()));
                http.timeout += Duration::from_secs(self.auth_wait_secs);
            }
            let reply = http
                .request(reqwest::Method::GET, "/v1/auth/status", &query, crate::http::NO_BODY)
                .await?;
            if reply.status == 404 {
                return Ok(AuthStatus::Failed);
            }
            let body: Value = http.decode(reply)?;
            match body.get("status").and_then(Value::as_str) {
                Some("completed") => Ok(AuthStatus::Completed),
                Some("pending" | "not_started") => Ok(AuthStatus::Pending),
                Some("failed") => Ok(AuthStatus::Failed),
                other => Err(http.transport(format!(
                    "Arcade answered an unknown authorization status {}",
                    other.map_or("(none)".to_owned(), |s| format!("`{}`", s.chars().take(40).collect::<String>()))
                ))),
            }
        })
    }

    /// Whether connections work, one user-connection listing per auth provider (so many
    /// items cost one listing each provider). An item's id may be an Arcade user-connection
    /// id or a user id (the bucket): connected when a matching connection for the toolkit's
    /// auth provider is active. A toolkit whose tools need no authorization is connected; an
    /// unknown or disallowed toolkit is not.
    fn get_connection_status(&self, items: Vec<ConnectionRef>) -> BoxFuture<'_, Result<BTreeMap<String, ConnectionState>, ProviderError>> {
        Box::pin(async move {
            let mut out = BTreeMap::new();
            let mut listings: BTreeMap<String, Vec<Value>> = BTreeMap::new();
            for item in items {
                let connected = if !self.allow.toolkit(&item.toolkit) {
                    false
                } else {
                    match self.auth_provider_of(&item.toolkit).await? {
                        AuthProvider::UnknownToolkit => false,
                        AuthProvider::NoneNeeded => true,
                        AuthProvider::Id(provider) => {
                            if !listings.contains_key(&provider) {
                                let listed = self.user_connections(&provider, None).await?;
                                listings.insert(provider.clone(), listed);
                            }
                            let id = item.connection_id.as_str();
                            listings.get(&provider).is_some_and(|listed| {
                                listed.iter().any(|c| {
                                    (c.get("id").and_then(Value::as_str) == Some(id)
                                        || c.get("user_id").and_then(Value::as_str) == Some(id))
                                        && connection_status(c.get("connection_status").and_then(Value::as_str)) == ConnectionStatus::Active
                                })
                            })
                        }
                    }
                };
                let entry = out.entry(item.connection_id).or_insert(ConnectionState { connected });
                entry.connected |= connected;
            }
            Ok(out)
        })
    }

    /// The toolkit's connections (Arcade's user connections for the toolkit's auth provider),
    /// of `user_ids`/`user_id`; with neither, of the configured
    /// [`user_id`](ArcadeToolProvider::user_id) only (none configured: an empty page) —
    /// never every user's. `connection_id` is Arcade's user-connection id, `author_id` the
    /// Arcade user id. A disallowed or unknown toolkit, or one whose tools need no
    /// authorization, has none.
    fn list_connections(&self, options: ListConnectionsOptions) -> BoxFuture<'_, Result<ListConnectionsResult, ProviderError>> {
        Box::pin(async move {
            let (page, per_page) = (options.page(), options.per_page());
            let owners: BTreeSet<String> = options
                .owners()
                .unwrap_or_else(|| self.user_id.iter().cloned().collect())
                .into_iter()
                .map(|o| o.trim().to_owned())
                .filter(|o| !o.is_empty())
                .collect();
            let mut all = Vec::new();
            if self.allow.toolkit(&options.toolkit) && !owners.is_empty() {
                if let AuthProvider::Id(provider) = self.auth_provider_of(&options.toolkit).await? {
                    for owner in &owners {
                        all.extend(
                            self.user_connections(&provider, Some(owner))
                                .await?
                                .iter()
                                .filter_map(connection_of),
                        );
                    }
                }
            }
            let total = all.len();
            let start = ((page as usize - 1) * per_page as usize).min(total);
            let items: Vec<Connection> = all.into_iter().skip(start).take(per_page as usize).collect();
            Ok(ListConnectionsResult {
                pagination: Pagination {
                    total: Some(total as u64),
                    page: Some(page),
                    per_page: Some(per_page),
                    has_more: start + items.len() < total,
                },
                items,
            })
        })
    }

    /// `DELETE /v1/admin/user_connections/{id}` with Arcade's user-connection id; one already
    /// gone (404) counts as revoked. The id alone is the authority here (ids come from a
    /// tenant's own listing); code acting for one user can use
    /// [`revoke_user_connection`](ArcadeToolProvider::revoke_user_connection), which checks the
    /// owner first.
    fn revoke_connection(&self, connection_id: &str) -> BoxFuture<'_, Result<(), ProviderError>> {
        let id = connection_id.trim().to_owned();
        Box::pin(async move {
            if id.is_empty() {
                return Err(ProviderError::Config(
                    "pass the Arcade connection id to revoke (from list_connections)".into(),
                ));
            }
            self.delete_connection(&id).await
        })
    }
}

/// A tool name in any accepted form: `Toolkit.Tool`, `Toolkit.Tool@1.2.0`, `Toolkit_Tool`.
#[derive(Debug, Clone, PartialEq, Eq)]
struct ArcadeName {
    toolkit: String,
    tool: String,
    version: Option<String>,
}

impl ArcadeName {
    fn parse(slug: &str) -> Option<Self> {
        let slug = slug.trim();
        let (name, version) = match slug.split_once('@') {
            Some((n, v)) if !v.is_empty() => (n, Some(v.to_owned())),
            Some(_) => return None,
            None => (slug, None),
        };
        let (toolkit, tool) = name.split_once('.').or_else(|| name.split_once('_'))?;
        if toolkit.is_empty() || tool.is_empty() {
            return None;
        }
        Some(ArcadeName {
            toolkit: toolkit.to_owned(),
            tool: tool.to_owned(),
            version,
        })
    }

    fn qualified(&self) -> String {
        format!("{}.{}", self.toolkit, self.tool)
    }
}

fn qualified_name(def: &Value) -> Option<String> {
    if let Some(q) = def.get("qualified_name").and_then(Value::as_str) {
        return Some(q.to_owned());
    }
    let name = def.get("name").and_then(Value::as_str)?;
    Some(match toolkit_name(def) {
        Some(t) => format!("{t}.{name}"),
        None => name.to_owned(),
    })
}

fn toolkit_name(def: &Value) -> Option<String> {
    def.pointer("/toolkit/name").and_then(Value::as_str).map(str::to_owned)
}

/// The input JSON Schema of an Arcade tool definition.
fn input_schema(def: &Value) -> Value {
    let mut properties = Map::new();
    let mut required = Vec::new();
    let params = def
        .pointer("/input/parameters")
        .and_then(Value::as_array)
        .cloned()
        .unwrap_or_default();
    for p in params {
        let Some(name) = p.get("name").and_then(Value::as_str) else {
            continue;
        };
        let description = p.get("description").and_then(Value::as_str);
        let schema = match p.get("value_schema") {
            Some(vs) if vs.is_object() => value_schema(vs, description),
            _ => json!({}),
        };
        if p.get("required").and_then(Value::as_bool).unwrap_or(false) {
            required.push(json!(name));
        }
        properties.insert(name.to_owned(), schema);
    }
    let mut schema = json!({"type": "object", "properties": properties});
    if !required.is_empty() {
        schema["required"] = Value::Array(required);
    }
    schema
}

/// One `value_schema {val_type, inner_val_type?, enum?}` as JSON Schema (also the newer
/// nested forms: `properties`/`required_keys` of `json` values, `items` or
/// `inner_properties`/`inner_required_keys` of arrays).
fn value_schema(vs: &Value, description: Option<&str>) -> Value {
    fn base(val_type: &str) -> Value {
        match val_type {
            "string" => json!({"type": "string"}),
            "integer" => json!({"type": "integer"}),
            "number" => json!({"type": "number"}),
            "boolean" => json!({"type": "boolean"}),
            "json" => json!({"type": "object"}),
            "array" => json!({"type": "array"}),
            _ => json!({}),
        }
    }
    fn object(schema: &mut Value, properties: Option<&Value>, required: Option<&Value>) {
        let Some(Value::Object(props)) = properties else { return };
        let props: Map<String, Value> = props
            .iter()
            .filter(|(_, v)| v.is_object())
            .map(|(k, v)| (k.clone(), value_schema(v, None)))
            .collect();
        schema["properties"] = Value::Object(props);
        if let Some(Value::Array(keys)) = required {
            if !keys.is_empty() {
                schema["required"] = Value::Array(keys.clone());
            }
        }
    }
    let val_type = vs.get("val_type").and_then(Value::as_str).unwrap_or("");
    let mut schema = base(val_type);
    let values = vs.get("enum").and_then(Value::as_array).filter(|e| !e.is_empty());
    if val_type == "array" {
        let mut items = match vs.get("items").filter(|i| i.is_object()) {
            Some(items) => value_schema(items, None),
            None => {
                let mut items = base(vs.get("inner_val_type").and_then(Value::as_str).unwrap_or(""));
                object(&mut items, vs.get("inner_properties"), vs.get("inner_required_keys"));
                items
            }
        };
        if let Some(values) = values {
            items["enum"] = Value::Array(values.clone());
        }
        schema["items"] = items;
    } else {
        if val_type == "json" {
            object(&mut schema, vs.get("properties"), vs.get("required_keys"));
        }
        if let Some(values) = values {
            schema["enum"] = Value::Array(values.clone());
        }
    }
    if let Some(d) = description.or_else(|| vs.get("description").and_then(Value::as_str)) {
        schema["description"] = json!(d);
    }
    schema
}

/// `{name, message}` of an Arcade error body (also `msg`/`error`), or its text.
fn envelope(bytes: &[u8]) -> (Option<String>, String) {
    match serde_json::from_slice::<Value>(bytes) {
        Ok(v) => {
            let name = v.get("name").and_then(Value::as_str).map(str::to_owned);
            let message = ["message", "msg", "error"]
                .iter()
                .find_map(|k| v.get(*k).and_then(Value::as_str))
                .unwrap_or_default()
                .to_owned();
            (name, message)
        }
        Err(_) => {
            let text = String::from_utf8_lossy(bytes);
            (None, text.chars().take(300).collect())
        }
    }
}

/// Where Arcade serves a tool's definition.
fn definition_path(qualified_name: &str) -> String {
    format!("/v1/tools/{}", encode_segment(qualified_name))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_parse_in_every_form() {
        let plain = ArcadeName::parse("Github.GetRepository").unwrap();
        assert_eq!((plain.qualified(), plain.version), ("Github.GetRepository".into(), None));
        let versioned = ArcadeName::parse("Github.GetRepository@1.2.0").unwrap();
        assert_eq!(
            (versioned.qualified(), versioned.version.as_deref()),
            ("Github.GetRepository".into(), Some("1.2.0"))
        );
        assert_eq!(
            ArcadeName::parse("Github_GetRepository").unwrap().qualified(),
            "Github.GetRepository"
        );
        assert!(ArcadeName::parse("nodot").is_none() && ArcadeName::parse("A.B@").is_none());
    }

    #[test]
    fn value_schemas_become_json_schema() {
        let vs = json!({"val_type": "array", "inner_val_type": "string", "enum": ["a", "b"]});
        assert_eq!(
            value_schema(&vs, Some("d")),
            json!({"type": "array", "items": {"type": "string", "enum": ["a", "b"]}, "description": "d"})
        );
        assert_eq!(value_schema(&json!({"val_type": "json"}), None), json!({"type": "object"}));
        let nested = json!({"val_type": "json", "required_keys": ["id"], "properties": {
            "id": {"val_type": "integer", "description": "The id"},
            "tags": {"val_type": "array", "items": {"val_type": "string"}}}});
        assert_eq!(
            value_schema(&nested, None),
            json!({"type": "object", "required": ["id"], "properties": {
                "id": {"type": "integer", "description": "The id"},
                "tags": {"type": "array", "items": {"type": "string"}}}})
        );
        let rows = json!({"val_type": "array", "inner_val_type": "json", "inner_properties": {"n": {"val_type": "number"}}});
        assert_eq!(
            value_schema(&rows, None),
            json!({"type": "array", "items": {"type": "object", "properties": {"n": {"type": "number"}}}})
        );
    }
}
