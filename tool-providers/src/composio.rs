//! Composio (`https://backend.composio.dev`): toolkits and tools listed with cursor
//! pagination, execution as a user (optionally through one connected account), auth configs,
//! connected accounts (authorize, status, listing, revoke) and the two connection-management
//! tools for chat (`COMPOSIO_MANAGE_CONNECTIONS`, `COMPOSIO_WAIT_FOR_CONNECTIONS`).
//!
//! Owns [`ComposioToolProvider`], the mapping of our 1-based pages onto Composio's cursors
//! (walked, bounded by the page cap), the mapping of connected-account statuses, and the
//! model-facing errors (a missing connected account tells the model how the user connects).
//!
//! A pinned connected account is checked against the user bucket it acts for before it is
//! used (tenant isolation does not rest on the platform's own check): at resolution when the
//! bucket is fixed (author-bound connections), at each caller's first call otherwise. The
//! owner of each account is looked up once (`GET /connected_accounts/{id}`) and remembered.

use std::collections::{BTreeMap, BTreeSet, HashMap};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use serde_json::{json, Map, Value};
use tool_core::provider::{
    caller_id, connection_owner, non_empty_id, AllowList, AuthStatus, Authorization, AuthorizeOptions, Capabilities, Connection,
    ConnectionField, ConnectionKind, ConnectionRef, ConnectionState, ConnectionStatus, FieldType, Health, ListConnectionsOptions,
    ListConnectionsResult, ListResult, ListToolsOptions, Pagination, ProviderError, ProviderInfo, ResolveOptions, ResolveToolsOptions,
    ResolvedTools, Scope, ToolInfo, ToolProvider, Toolkit,
};
use tool_core::tool::BoxFuture;
use tool_core::{CancellationToken, DynamicTool, ErrorKind, Tool, ToolError};

use crate::http::{encode_segment, Http};
use crate::naming::slug_has_prefix;

/// The default base URL.
pub const DEFAULT_BASE_URL: &str = "https://backend.composio.dev";
/// The shared user id, used only when [`ComposioToolProvider::allow_shared_user`] opts in.
pub const SHARED_USER_ID: &str = "default";
/// The chat tool that opens authorization links for the caller.
pub const MANAGE_CONNECTIONS: &str = "COMPOSIO_MANAGE_CONNECTIONS";
/// The chat tool that waits until the caller finished authorizing.
pub const WAIT_FOR_CONNECTIONS: &str = "COMPOSIO_WAIT_FOR_CONNECTIONS";
/// The toolkit the connection-management tools belong to.
pub const META_TOOLKIT: &str = "composio";
const PROVIDER: &str = "composio";
const LIST_LIMIT: u32 = 100;
const MAX_PER_PAGE: u32 = 1000;
const MAX_TOOLKITS_PER_CALL: usize = 20;

/// Which REST API generation requests go to.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub enum ApiVersion {
    /// `/api/v3.1` (what current SDKs use).
    #[default]
    V3_1,
    /// `/api/v3` (older SDKs; same shapes).
    V3,
}

impl ApiVersion {
    /// The path prefix.
    pub fn prefix(self) -> &'static str {
        match self {
            ApiVersion::V3_1 => "/api/v3.1",
            ApiVersion::V3 => "/api/v3",
        }
    }
}

/// Composio as a [`ToolProvider`].
///
/// ```
/// use tool_providers::ComposioToolProvider;
/// let composio = ComposioToolProvider::new("ak_secret").user_id("author-1").allowed_toolkits(["composio", "gmail"]);
/// assert!(!format!("{composio:?}").contains("ak_secret"));
/// ```
#[derive(Clone)]
pub struct ComposioToolProvider {
    info: ProviderInfo,
    http: Http,
    version: ApiVersion,
    user_id: Option<String>,
    allow_shared_user: bool,
    scope: Scope,
    allow: AllowList,
    max_pages: usize,
    wait_max: Duration,
    poll_interval: Duration,
    callback_url: Option<String>,
    /// The owner and toolkit of each connected account looked up so far (an account never
    /// changes owner): a pinned account is checked once, not on every call. Shared by clones.
    accounts_seen: Arc<Mutex<HashMap<String, AccountFacts>>>,
}

/// Who a connected account belongs to.
#[derive(Debug, Clone)]
struct AccountFacts {
    user_id: String,
    toolkit: String,
}

/// Accounts remembered in [`ComposioToolProvider::accounts_seen`] before it starts over.
const ACCOUNTS_SEEN_MAX: usize = 4096;

impl std::fmt::Debug for ComposioToolProvider {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ComposioToolProvider")
            .field("api_key", &"[redacted]")
            .field("base_url", &self.http.base_url)
            .field("api_version", &self.version)
            .field("user_id", &self.user_id)
            .field("allow_shared_user", &self.allow_shared_user)
            .field("default_scope", &self.scope)
            .field("allow", &self.allow)
            .field("timeout", &self.http.timeout)
            .field("max_response_bytes", &self.http.max_body)
            .field("max_pages", &self.max_pages)
            .field("wait_for_connections_timeout", &self.wait_max)
            .field("poll_interval", &self.poll_interval)
            .field("callback_url", &self.callback_url)
            .finish()
    }
}

/// Who executions run as.
#[derive(Debug, Clone)]
enum UserRule {
    /// Always this user bucket.
    Fixed(String),
    /// The caller's resource id at call time (else the resolve-time context's, else the
    /// explicit fallback, else the shared id when allowed).
    Caller {
        resolve_context: Map<String, Value>,
        fallback: Option<String>,
    },
    /// No user: a platform connection used by its connected account alone.
    None,
}

/// How a resolved tool reaches Composio.
#[derive(Debug, Clone)]
struct Binding {
    user: UserRule,
    connected_account_id: Option<String>,
}

impl ComposioToolProvider {
    crate::http::shared_builder_methods!();

    /// A provider using this API key (sent as `x-api-key`).
    pub fn new(api_key: impl Into<String>) -> Self {
        ComposioToolProvider {
            info: ProviderInfo {
                id: PROVIDER.into(),
                name: "Composio".into(),
                description: Some("Integration tools hosted by Composio (composio.dev)".into()),
            },
            http: Http::new(
                PROVIDER,
                "Composio",
                reqwest::header::HeaderName::from_static("x-api-key"),
                api_key.into(),
                DEFAULT_BASE_URL,
                envelope,
            ),
            version: ApiVersion::default(),
            user_id: None,
            allow_shared_user: false,
            scope: Scope::PerAuthor,
            allow: AllowList::default(),
            max_pages: 100,
            wait_max: Duration::from_secs(120),
            poll_interval: Duration::from_secs(2),
            callback_url: None,
            accounts_seen: Arc::default(),
        }
    }

    /// The API base URL (default `https://backend.composio.dev`; the `/api/v3.1` or `/api/v3`
    /// prefix is added by [`api_version`](Self::api_version)).
    pub fn base_url(mut self, url: impl Into<String>) -> Self {
        self.http.set_base_url(url);
        self
    }

    /// The API generation (default [`ApiVersion::V3_1`]).
    pub fn api_version(mut self, version: ApiVersion) -> Self {
        self.version = version;
        self
    }

    /// Whose connections calls use by default (default per-author).
    pub fn default_scope(mut self, scope: Scope) -> Self {
        self.scope = scope;
        self
    }

    /// The longest `COMPOSIO_WAIT_FOR_CONNECTIONS` waits, whatever the model asks (default
    /// 120 s).
    pub fn wait_for_connections_timeout(mut self, timeout: Duration) -> Self {
        self.wait_max = timeout;
        self
    }

    /// How often `COMPOSIO_WAIT_FOR_CONNECTIONS` asks Composio (default 2 s).
    pub fn poll_interval(mut self, interval: Duration) -> Self {
        self.poll_interval = interval.max(Duration::from_millis(10));
        self
    }

    /// Where Composio sends the user after an authorization link (optional).
    pub fn callback_url(mut self, url: impl Into<String>) -> Self {
        self.callback_url = Some(url.into());
        self
    }

    fn filters_tools(&self) -> bool {
        !self.allow.is_unrestricted()
    }

    fn path(&self, rest: &str) -> String {
        format!("{}{rest}", self.version.prefix())
    }

    fn meta_allowed(&self, slug: &str) -> bool {
        self.allow.tool(META_TOOLKIT, slug)
    }

    fn not_allowed(&self, toolkit: &str) -> ProviderError {
        ProviderError::Config(format!(
            "the Composio toolkit `{toolkit}` is not in this provider's allowed toolkits"
        ))
    }

    // ----- listings -------------------------------------------------------------------

    async fn page(&self, path: &str, query: &[(&str, String)], limit: u32, cursor: Option<&str>) -> Result<Page, ProviderError> {
        let mut q: Vec<(&str, String)> = query.to_vec();
        q.push(("limit", limit.to_string()));
        if let Some(c) = cursor {
            q.push(("cursor", c.to_owned()));
        }
        let body = self.http.json(reqwest::Method::GET, &self.path(path), &q, None).await?;
        let items = match body.get("items") {
            Some(Value::Array(items)) => items.clone(),
            Some(Value::Null) | None => Vec::new(),
            Some(_) => {
                return Err(self
                    .http
                    .transport(format!("the listing of {path} has an `items` that is not an array")))
            }
        };
        Ok(Page {
            items,
            next_cursor: body
                .get("next_cursor")
                .and_then(Value::as_str)
                .filter(|c| !c.is_empty())
                .map(str::to_owned),
            total: body
                .get("total_items")
                .and_then(Value::as_f64)
                .filter(|t| *t >= 0.0)
                .map(|t| t as u64),
        })
    }

    /// Every item of a listing, following `next_cursor` up to the page cap.
    async fn all(&self, path: &str, query: &[(&str, String)]) -> Result<Vec<Value>, ProviderError> {
        let mut items = Vec::new();
        let mut cursor: Option<String> = None;
        let mut seen = BTreeSet::new();
        for _ in 0..self.max_pages {
            let page = self.page(path, query, LIST_LIMIT, cursor.as_deref()).await?;
            items.extend(page.items);
            match page.next_cursor {
                Some(next) if seen.insert(next.clone()) => cursor = Some(next),
                Some(_) => return Err(self.http.transport(format!("the listing of {path} repeated a cursor; stopped"))),
                None => return Ok(items),
            }
        }
        Err(self.endless(path))
    }

    fn endless(&self, path: &str) -> ProviderError {
        self.http.transport(format!(
            "the listing of {path} did not end after {} pages; stopped (raise `max_pages` if it is really that large)",
            self.max_pages
        ))
    }

    /// Page `page` (1-based) of `per_page` items, reached by walking the cursors.
    async fn nth_page(&self, path: &str, query: &[(&str, String)], page: u32, per_page: u32) -> Result<Page, ProviderError> {
        if page as usize > self.max_pages {
            return Err(ProviderError::Config(format!(
                "page {page} is beyond this provider's page cap ({}); raise `max_pages` to reach it",
                self.max_pages
            )));
        }
        let mut cursor: Option<String> = None;
        for _ in 1..page {
            let skipped = self.page(path, query, per_page, cursor.as_deref()).await?;
            match skipped.next_cursor {
                Some(next) => cursor = Some(next),
                None => {
                    return Ok(Page {
                        items: Vec::new(),
                        next_cursor: None,
                        total: skipped.total,
                    })
                }
            }
        }
        self.page(path, query, per_page, cursor.as_deref()).await
    }

    fn toolkit_of(item: &Value) -> Toolkit {
        let slug = item.get("slug").and_then(Value::as_str).unwrap_or_default().to_owned();
        Toolkit {
            name: item
                .get("name")
                .and_then(Value::as_str)
                .map(str::to_owned)
                .unwrap_or_else(|| slug.clone()),
            slug,
            description: item.pointer("/meta/description").and_then(Value::as_str).map(str::to_owned),
            icon: item.pointer("/meta/logo").and_then(Value::as_str).map(str::to_owned),
        }
    }

    fn tool_info(item: &Value) -> Option<ToolInfo> {
        let slug = item.get("slug").and_then(Value::as_str)?;
        Some(ToolInfo {
            slug: slug.to_owned(),
            name: item.get("name").and_then(Value::as_str).unwrap_or(slug).to_owned(),
            description: item.get("description").and_then(Value::as_str).map(str::to_owned),
            toolkit: item.pointer("/toolkit/slug").and_then(Value::as_str).map(str::to_owned),
        })
    }

    async fn toolkits(&self) -> Result<ListResult<Toolkit>, ProviderError> {
        let data: Vec<Toolkit> = self
            .all("/toolkits", &[])
            .await?
            .iter()
            .filter(|t| t.get("slug").and_then(Value::as_str).is_some())
            .map(Self::toolkit_of)
            .filter(|t| self.allow.toolkit(&t.slug))
            .collect();
        Ok(ListResult {
            pagination: Some(Pagination {
                total: Some(data.len() as u64),
                page: Some(1),
                per_page: Some(data.len() as u32),
                has_more: false,
            }),
            data,
        })
    }

    async fn tools_listing(&self, options: ListToolsOptions) -> Result<ListResult<ToolInfo>, ProviderError> {
        let page = options.page.unwrap_or(1).max(1);
        let per_page = options.per_page.unwrap_or(25).clamp(1, MAX_PER_PAGE);
        if let Some(t) = &options.toolkit {
            if !self.allow.toolkit(t) {
                return Ok(ListResult {
                    data: Vec::new(),
                    pagination: Some(Pagination {
                        total: Some(0),
                        page: Some(page),
                        per_page: Some(per_page),
                        has_more: false,
                    }),
                });
            }
        }
        let mut query = Vec::new();
        if let Some(t) = options.toolkit.as_deref().filter(|t| !t.trim().is_empty()) {
            query.push(("toolkit_slug", t.to_ascii_lowercase()));
        }
        if let Some(s) = options.search.as_deref().filter(|s| !s.trim().is_empty()) {
            query.push(("query", s.to_owned()));
        }
        if !self.filters_tools() {
            let got = self.nth_page("/tools", &query, page, per_page).await?;
            return Ok(ListResult {
                data: got.items.iter().filter_map(Self::tool_info).collect(),
                pagination: Some(Pagination {
                    total: got.total,
                    page: Some(page),
                    per_page: Some(per_page),
                    has_more: got.next_cursor.is_some(),
                }),
            });
        }
        // Allow-lists filter on our side: fetch every page (bounded), then page.
        let all: Vec<ToolInfo> = self
            .all("/tools", &query)
            .await?
            .iter()
            .filter_map(Self::tool_info)
            .filter(|t| self.allow.tool(t.toolkit.as_deref().unwrap_or_default(), &t.slug))
            .collect();
        let total = all.len();
        let start = ((page - 1) as usize).saturating_mul(per_page as usize).min(total);
        let data: Vec<ToolInfo> = all.into_iter().skip(start).take(per_page as usize).collect();
        let has_more = start + data.len() < total;
        Ok(ListResult {
            data,
            pagination: Some(Pagination {
                total: Some(total as u64),
                page: Some(page),
                per_page: Some(per_page),
                has_more,
            }),
        })
    }

    /// A tool's definition, `None` when Composio does not know it.
    async fn definition(&self, slug: &str) -> Result<Option<Value>, ProviderError> {
        self.http.definition(&self.definition_path(slug)).await
    }

    /// Where Composio serves a tool's definition.
    fn definition_path(&self, slug: &str) -> String {
        self.path(&format!("/tools/{}", encode_segment(slug)))
    }

    // ----- auth configs and connected accounts ---------------------------------------

    /// The one enabled auth config of a toolkit.
    async fn enabled_auth_config(&self, toolkit: &str) -> Result<Value, ProviderError> {
        let toolkit = toolkit.to_ascii_lowercase();
        let configs = self.all("/auth_configs", &[("toolkit_slug", toolkit.clone())]).await?;
        let enabled: Vec<Value> = configs
            .into_iter()
            .filter(|c| c.get("status").and_then(Value::as_str) == Some("ENABLED"))
            .filter(|c| {
                c.pointer("/toolkit/slug")
                    .and_then(Value::as_str)
                    .is_none_or(|s| s.eq_ignore_ascii_case(&toolkit))
            })
            .collect();
        match enabled.len() {
            1 => Ok(enabled.into_iter().next().unwrap_or(Value::Null)),
            0 => Err(ProviderError::Config(format!(
                "Composio has no enabled auth config for the toolkit `{toolkit}`; create or enable one in the Composio dashboard (Auth Configs)"
            ))),
            n => {
                let ids: Vec<&str> = enabled.iter().filter_map(|c| c.get("id").and_then(Value::as_str)).collect();
                Err(ProviderError::Config(format!(
                    "Composio has {n} enabled auth configs for the toolkit `{toolkit}` ({}); exactly one must be enabled, so disable the others",
                    ids.join(", ")
                )))
            }
        }
    }

    /// A connected account, `None` when it is gone.
    async fn account(&self, id: &str) -> Result<Option<Value>, ProviderError> {
        let path = self.path(&format!("/connected_accounts/{}", encode_segment(id)));
        self.http.json_or_absent(reqwest::Method::GET, &path).await
    }

    /// The owner and toolkit of a connected account (`None`: no such account).
    async fn account_facts(&self, id: &str) -> Result<Option<AccountFacts>, ProviderError> {
        let known = self.accounts_seen.lock().unwrap_or_else(|e| e.into_inner()).get(id).cloned();
        if known.is_some() {
            return Ok(known);
        }
        let Some(account) = self.account(id).await? else {
            return Ok(None);
        };
        let facts = AccountFacts {
            user_id: account.get("user_id").and_then(Value::as_str).unwrap_or_default().to_owned(),
            toolkit: account_toolkit(&account),
        };
        let mut all = self.accounts_seen.lock().unwrap_or_else(|e| e.into_inner());
        if all.len() >= ACCOUNTS_SEEN_MAX {
            all.clear();
        }
        all.insert(id.to_owned(), facts.clone());
        Ok(Some(facts))
    }

    /// Why the pinned connected account `id` may not act for `user` on `toolkit` (empty: any
    /// toolkit), if it may not. Tenant isolation does not rest on the platform's own check: a
    /// pinned account of another user is refused before anything runs with it.
    async fn pinned_account_refusal(&self, id: &str, user: &str, toolkit: &str) -> Result<Option<String>, ProviderError> {
        let toolkit = toolkit.trim().to_ascii_lowercase();
        Ok(match self.account_facts(id).await? {
            None => Some(format!("the connected account `{id}` does not exist")),
            Some(f) if f.user_id != user => Some(format!("the connected account `{id}` belongs to another user")),
            Some(f) if !toolkit.is_empty() && !f.toolkit.is_empty() && f.toolkit != toolkit => Some(format!(
                "the connected account `{id}` belongs to the toolkit `{}`, not `{toolkit}`",
                f.toolkit
            )),
            Some(_) => None,
        })
    }

    /// Every connected account of these users and toolkits (bounded).
    async fn accounts(&self, users: &[String], toolkits: &[String]) -> Result<Vec<Value>, ProviderError> {
        let mut query = vec![("user_ids", users.join(","))];
        if !toolkits.is_empty() {
            query.push(("toolkit_slugs", toolkits.join(",")));
        }
        let all = self.all("/connected_accounts", &query).await?;
        // Never trust a listing to have applied the owner filter.
        Ok(all
            .into_iter()
            .filter(|a| {
                a.get("user_id")
                    .and_then(Value::as_str)
                    .is_none_or(|u| users.iter().any(|x| x == u))
            })
            .collect())
    }

    /// Starts a Composio Connect link for `user` on the toolkit's enabled auth config.
    async fn link(&self, auth_config_id: &str, user: &str) -> Result<Value, ProviderError> {
        let mut body = json!({"auth_config_id": auth_config_id, "user_id": user});
        if let Some(cb) = &self.callback_url {
            body["callback_url"] = json!(cb);
        }
        self.http
            .json(reqwest::Method::POST, &self.path("/connected_accounts/link"), &[], Some(&body))
            .await
    }

    /// The user buckets a listing without owners covers.
    fn default_owner(&self) -> Result<String, ProviderError> {
        let configured = self.user_id.as_deref().map(str::trim).filter(|s| !s.is_empty());
        match configured {
            Some(u) => Ok(u.to_owned()),
            None if self.allow_shared_user => Ok(SHARED_USER_ID.to_owned()),
            None => Err(ProviderError::Config(
                "listing Composio connections needs a user id: pass `user_id`/`user_ids`, or configure the provider's `user_id` (every user's connections are never listed)".into(),
            )),
        }
    }

    // ----- resolution -----------------------------------------------------------------

    fn legacy_binding(&self, options: &ResolveOptions) -> Result<Binding, ProviderError> {
        let given = non_empty_id(options.user_id.as_deref());
        let user = match self.scope {
            Scope::CallerSupplied => UserRule::Caller {
                resolve_context: options.request_context.clone(),
                fallback: given,
            },
            Scope::Shared => UserRule::Fixed(tool_core::provider::SHARED_BUCKET_ID.to_owned()),
            Scope::PerAuthor => {
                let shared = self.allow_shared_user.then_some(SHARED_USER_ID);
                let author = given.or_else(|| self.user_id.clone());
                UserRule::Fixed(connection_owner(
                    Scope::PerAuthor,
                    author.as_deref(),
                    &options.request_context,
                    shared,
                )?)
            }
        };
        Ok(Binding {
            user,
            connected_account_id: None,
        })
    }

    fn vnext_binding(&self, options: &ResolveToolsOptions) -> Result<Binding, ProviderError> {
        let user = match (options.kind.unwrap_or_default(), non_empty_id(options.author_id.as_deref())) {
            (ConnectionKind::Platform, _) => UserRule::None,
            (ConnectionKind::Invoker, _) => UserRule::Caller {
                resolve_context: options.request_context.clone(),
                fallback: None,
            },
            (ConnectionKind::Author, Some(author)) => UserRule::Fixed(author),
            (ConnectionKind::Author, None) => match options.scope.unwrap_or(self.scope) {
                Scope::CallerSupplied => UserRule::Caller {
                    resolve_context: options.request_context.clone(),
                    fallback: None,
                },
                scope => {
                    let shared = self.allow_shared_user.then_some(SHARED_USER_ID);
                    UserRule::Fixed(connection_owner(scope, self.user_id.as_deref(), &options.request_context, shared)?)
                }
            },
        };
        let connection = non_empty_id(Some(&options.connection_id));
        // An unpinned resolution hands over the user bucket as the connection: that is no
        // connected account, so the user's own account is used.
        let connected_account_id = match (&user, connection) {
            (UserRule::Fixed(u), Some(c)) if *u == c => None,
            (_, c) => c,
        };
        if matches!(user, UserRule::None) && connected_account_id.is_none() {
            return Err(ProviderError::Config(
                "a platform connection needs its connected account id (`connection_id`)".into(),
            ));
        }
        Ok(Binding {
            user,
            connected_account_id,
        })
    }

    async fn resolve(
        &self,
        slugs: Vec<String>,
        binding: Binding,
        descriptions: &BTreeMap<String, String>,
    ) -> Result<ResolvedTools, ProviderError> {
        let me = Arc::new(self.clone());
        let mut slugs: Vec<String> = slugs.iter().map(|s| s.trim().to_owned()).filter(|s| !s.is_empty()).collect();
        let mut seen = BTreeSet::new();
        slugs.retain(|s| seen.insert(s.clone()));
        // Every definition first, several at a time (a tool's toolkit, and so whether the
        // allow-list lets it through, is only known from its definition).
        let remote: Vec<&String> = slugs.iter().filter(|s| !is_meta_tool(s)).collect();
        let paths: Vec<String> = remote.iter().map(|s| self.definition_path(s)).collect();
        let mut definitions: BTreeMap<&String, Option<Value>> = remote.into_iter().zip(self.http.definitions(paths).await?).collect();
        let mut out = ResolvedTools::new();
        for slug in slugs.iter().cloned() {
            let description = descriptions.get(&slug).filter(|d| !d.trim().is_empty()).cloned();
            if is_meta_tool(&slug) {
                if !self.meta_allowed(&slug) {
                    tracing::debug!(target: "tool_providers::composio", slug, "connection tool not allowed (add `composio` to the allowed toolkits)");
                    continue;
                }
                let tool = meta_tool(&me, &slug, binding.clone(), description)?;
                out.insert(slug, tool);
                continue;
            }
            let Some(def) = definitions.remove(&slug).flatten() else {
                tracing::warn!(target: "tool_providers::composio", slug, "Composio has no such tool; left out");
                continue;
            };
            let toolkit = def.pointer("/toolkit/slug").and_then(Value::as_str).unwrap_or_default().to_owned();
            if !self.allow.tool(&toolkit, &slug) {
                continue;
            }
            match remote_tool(&me, &def, binding.clone(), description) {
                Ok(tool) => {
                    out.insert(slug, tool);
                }
                Err(e) => tracing::warn!(target: "tool_providers::composio", slug, error = %e, "unusable tool definition; left out"),
            }
        }
        Ok(out)
    }
}

struct Page {
    items: Vec<Value>,
    next_cursor: Option<String>,
    total: Option<u64>,
}

// ----- execution ----------------------------------------------------------------------

impl Binding {
    /// The user bucket a call runs as.
    fn user_for(
        &self,
        provider: &ComposioToolProvider,
        context: &Map<String, Value>,
        call_resource: Option<&str>,
        tool: &str,
    ) -> Result<Option<String>, ToolError> {
        match &self.user {
            UserRule::Fixed(u) => Ok(Some(u.clone())),
            UserRule::None => Ok(None),
            UserRule::Caller { resolve_context, fallback } => {
                caller_id(context, call_resource, resolve_context)
                    .or_else(|| fallback.clone())
                    .or_else(|| provider.allow_shared_user.then(|| SHARED_USER_ID.to_owned()))
                    .map(Some)
                    .ok_or_else(|| {
                        ToolError::new(format!(
                            "Composio tool `{tool}` cannot run: the caller is not identified (no resource id in the request context, `mastra__resourceId`), and the shared `{SHARED_USER_ID}` user is not allowed. The application must pass the signed-in user's resource id."
                        ))
                        .with_kind_of(ErrorKind::Execution)
                    })
            }
        }
    }
}

struct Remote {
    provider: Arc<ComposioToolProvider>,
    slug: String,
    toolkit: String,
    version: Option<String>,
    binding: Binding,
}

impl Remote {
    async fn run(&self, arguments: Value, user: Option<String>) -> Result<Value, ToolError> {
        let p = &self.provider;
        if let (Some(account), Some(u)) = (&self.binding.connected_account_id, &user) {
            let refusal = p.pinned_account_refusal(account, u, &self.toolkit).await.map_err(|e| {
                ToolError::new(format!("Composio tool `{}` could not check its connected account: {e}", self.slug))
                    .with_kind_of(ErrorKind::Execution)
            })?;
            if let Some(why) = refusal {
                // The caller learns only that the account is not theirs to use.
                tracing::warn!(target: "tool_providers::composio", tool = %self.slug, %why, "pinned connected account refused");
                return Err(self.connect_error(Some(u)));
            }
        }
        let mut body = json!({"arguments": arguments});
        if let Some(u) = &user {
            body["user_id"] = json!(u);
        }
        if let Some(c) = &self.binding.connected_account_id {
            body["connected_account_id"] = json!(c);
        }
        if let Some(v) = &self.version {
            body["version"] = json!(v);
        }
        let path = p.path(&format!("/tools/execute/{}", encode_segment(&self.slug)));
        let reply =
            p.http.send(reqwest::Method::POST, &path, &[], Some(&body)).await.map_err(|e| {
                ToolError::new(format!("Composio tool `{}` could not run: {e}", self.slug)).with_kind_of(ErrorKind::Execution)
            })?;
        if !(200..300).contains(&reply.status) {
            let (code, message) = envelope(&reply.bytes);
            if missing_account(reply.status, code.as_deref(), &message) {
                return Err(self.connect_error(user.as_deref()));
            }
            let e = p
                .http
                .decode(reply)
                .err()
                .unwrap_or_else(|| p.http.transport("unexpected answer".into()));
            return Err(ToolError::with_details(
                format!("Composio tool `{}` failed: {e}", self.slug),
                json!({"provider": PROVIDER, "tool": self.slug, "code": code}),
            )
            .with_kind_of(ErrorKind::Execution));
        }
        let out = p
            .http
            .decode(reply)
            .map_err(|e| ToolError::new(format!("Composio tool `{}`: {e}", self.slug)).with_kind_of(ErrorKind::Execution))?;
        if out.get("successful").and_then(Value::as_bool) == Some(true) {
            return Ok(out.get("data").cloned().unwrap_or(Value::Null));
        }
        let message = match out.get("error") {
            Some(Value::String(s)) if !s.trim().is_empty() => s.clone(),
            Some(v) if !v.is_null() => v.to_string(),
            _ => "the tool failed without a message".into(),
        };
        if missing_account(400, None, &message) {
            return Err(self.connect_error(user.as_deref()));
        }
        Err(ToolError::with_details(
            p.http.scrub(format!("Composio tool `{}` failed: {message}", self.slug)),
            json!({"provider": PROVIDER, "tool": self.slug, "log_id": out.get("log_id"), "data": out.get("data")}),
        )
        .with_kind_of(ErrorKind::Execution))
    }

    fn connect_error(&self, user: Option<&str>) -> ToolError {
        let toolkit = if self.toolkit.is_empty() {
            "this app".to_owned()
        } else {
            format!("`{}`", self.toolkit)
        };
        let next = if self.provider.meta_allowed(MANAGE_CONNECTIONS) {
            format!(
                "Call `{MANAGE_CONNECTIONS}` with {{\"toolkits\": [\"{}\"]}} to get an authorization link, give the link to the user, and call `{}` again once they have connected.",
                self.toolkit, self.slug
            )
        } else {
            format!(
                "Ask the user to connect their {toolkit} account by authorizing it in the app, then call `{}` again.",
                self.slug
            )
        };
        let which = match &self.binding.connected_account_id {
            Some(c) => format!("the connected account `{c}` is not available to this user"),
            None => format!("the user has no active {toolkit} connection"),
        };
        ToolError::with_details(
            format!(
                "Connection required: `{}` acts on the user's {toolkit} account, but {which}. {next}",
                self.slug
            ),
            json!({"connection_required": true, "toolkit": self.toolkit, "tool": self.slug, "user_id": user,
                   "connected_account_id": self.binding.connected_account_id, "provider": PROVIDER}),
        )
        .with_kind_of(ErrorKind::Execution)
    }
}

/// The toolkit an `UPPER_SNAKE` slug starts with, lower-cased (`GMAIL_SEND_EMAIL` → `gmail`);
/// none for any other slug.
fn slug_toolkit(slug: &str) -> Option<String> {
    let upper_snake = slug.bytes().all(|b| b.is_ascii_uppercase() || b.is_ascii_digit() || b == b'_');
    match slug.split_once('_') {
        Some((t, rest)) if upper_snake && !t.is_empty() && !rest.is_empty() => Some(t.to_ascii_lowercase()),
        _ => None,
    }
}

/// Whether `slug` names one of the connection-management tools this provider writes itself.
fn is_meta_tool(slug: &str) -> bool {
    slug == MANAGE_CONNECTIONS || slug == WAIT_FOR_CONNECTIONS
}

/// Whether an error says the user (or the given account) has no usable connected account.
fn missing_account(status: u16, code: Option<&str>, message: &str) -> bool {
    if !(400..500).contains(&status) || status == 401 || status == 429 {
        return false;
    }
    let code = code.unwrap_or_default().to_ascii_lowercase().replace(['_', '-'], "");
    let m = message.to_ascii_lowercase();
    code == "1803"
        || code.contains("connectedaccountnotfound")
        || code.contains("noactiveconnection")
        || m.contains("no connected account")
        || m.contains("connected account not found")
        || m.contains("no active connection")
}

fn usable_output_schema(def: &Value) -> Option<Value> {
    let out = def.get("output_parameters").filter(|o| o.is_object())?;
    // Composio wraps the result: `{data, error, successful}`; the tool returns `data`.
    let schema = match out.pointer("/properties/data") {
        Some(data) if out.pointer("/properties/successful").is_some() => data,
        _ => out,
    };
    let obj = schema.as_object()?;
    let is_object = obj.get("type").and_then(Value::as_str) == Some("object");
    let union = ["anyOf", "oneOf", "allOf", "not", "$ref"].iter().any(|k| obj.contains_key(*k));
    (is_object && !union).then(|| schema.clone())
}

fn input_schema(def: &Value) -> Value {
    match def.get("input_parameters") {
        Some(Value::Object(o)) if !o.is_empty() => {
            let mut o = o.clone();
            o.insert("type".into(), json!("object"));
            Value::Object(o)
        }
        _ => json!({"type": "object", "properties": {}}),
    }
}

fn remote_tool(
    provider: &Arc<ComposioToolProvider>,
    def: &Value,
    binding: Binding,
    description: Option<String>,
) -> Result<Arc<dyn Tool>, ProviderError> {
    let slug = def
        .get("slug")
        .and_then(Value::as_str)
        .ok_or_else(|| provider.http.transport("a tool definition has no `slug`".into()))?
        .to_owned();
    let description = description
        .or_else(|| {
            def.get("description")
                .and_then(Value::as_str)
                .filter(|d| !d.trim().is_empty())
                .map(str::to_owned)
        })
        .unwrap_or_else(|| format!("Composio tool {slug}"));
    let title = def.get("name").and_then(Value::as_str).map(str::to_owned);
    let remote = Arc::new(Remote {
        provider: provider.clone(),
        toolkit: def.pointer("/toolkit/slug").and_then(Value::as_str).unwrap_or_default().to_owned(),
        version: def
            .get("version")
            .and_then(Value::as_str)
            .filter(|v| !v.is_empty())
            .map(str::to_owned),
        slug: slug.clone(),
        binding,
    });
    let build = |output: Option<Value>| {
        let mut builder = DynamicTool::builder(slug.clone(), description.clone()).input_schema(input_schema(def));
        if let Some(o) = output {
            builder = builder.output_schema(o);
        }
        if let Some(t) = &title {
            builder = builder.title(t.clone());
        }
        let remote = remote.clone();
        builder.handler(move |input, cx| {
            let remote = remote.clone();
            let user = remote.binding.user_for(
                &remote.provider,
                cx.raw_request_context(),
                cx.call().resource_id.as_deref(),
                &remote.slug,
            );
            async move { remote.run(input, user?).await }
        })
    };
    let tool = match usable_output_schema(def) {
        Some(o) => build(Some(o)).or_else(|_| build(None)),
        None => build(None),
    }
    .map_err(|e| ProviderError::Config(e.0))?;
    Ok(tool.into_tool())
}

// ----- connection-management tools --------------------------------------------------

struct Meta {
    provider: Arc<ComposioToolProvider>,
    slug: String,
    binding: Binding,
}

fn requested_toolkits(input: &Value) -> Result<Vec<String>, ToolError> {
    let mut out = Vec::new();
    for t in input.get("toolkits").and_then(Value::as_array).into_iter().flatten() {
        if let Some(s) = t.as_str().map(|s| s.trim().to_ascii_lowercase()).filter(|s| !s.is_empty()) {
            if !out.contains(&s) {
                out.push(s);
            }
        }
    }
    if out.is_empty() {
        return Err(ToolError::with_kind(
            ErrorKind::InvalidInput,
            "`toolkits` must name at least one toolkit slug, such as [\"gmail\"]",
        ));
    }
    if out.len() > MAX_TOOLKITS_PER_CALL {
        return Err(ToolError::with_kind(
            ErrorKind::InvalidInput,
            format!(
                "`toolkits` names {} toolkits; ask for at most {MAX_TOOLKITS_PER_CALL} at a time",
                out.len()
            ),
        ));
    }
    Ok(out)
}

fn is_active(account: &Value) -> bool {
    account.get("status").and_then(Value::as_str) == Some("ACTIVE") && account.get("is_disabled").and_then(Value::as_bool) != Some(true)
}

fn account_toolkit(account: &Value) -> String {
    account
        .pointer("/toolkit/slug")
        .and_then(Value::as_str)
        .unwrap_or_default()
        .to_ascii_lowercase()
}

impl Meta {
    fn fail(&self, e: ProviderError) -> ToolError {
        ToolError::new(format!("`{}` could not reach Composio: {e}", self.slug)).with_kind_of(ErrorKind::Execution)
    }

    async fn manage(&self, input: Value, user: String) -> Result<Value, ToolError> {
        let p = &self.provider;
        let toolkits = requested_toolkits(&input)?;
        let reinitiate = input.get("reinitiate_all").and_then(Value::as_bool).unwrap_or(false);
        let allowed: Vec<String> = toolkits.iter().filter(|t| p.allow.toolkit(t)).cloned().collect();
        let accounts = if allowed.is_empty() {
            Vec::new()
        } else {
            p.accounts(std::slice::from_ref(&user), &allowed).await.map_err(|e| self.fail(e))?
        };
        let mut results = Map::new();
        let mut links = Vec::new();
        for toolkit in &toolkits {
            if !p.allow.toolkit(toolkit) {
                results.insert(
                    toolkit.clone(),
                    json!({"status": "not_allowed", "message": format!("The toolkit `{toolkit}` is not available to this agent.")}),
                );
                continue;
            }
            let active = accounts.iter().find(|a| account_toolkit(a) == *toolkit && is_active(a));
            if let (Some(a), false) = (active, reinitiate) {
                results.insert(
                    toolkit.clone(),
                    json!({"status": "active", "connected_account_id": a.get("id"),
                           "message": format!("`{toolkit}` is already connected; no action is needed.")}),
                );
                continue;
            }
            let started = async {
                let config = p.enabled_auth_config(toolkit).await?;
                let id = config.get("id").and_then(Value::as_str).unwrap_or_default().to_owned();
                p.link(&id, &user).await
            }
            .await;
            match started {
                Ok(link) => {
                    let url = link.get("redirect_url").and_then(Value::as_str).unwrap_or_default().to_owned();
                    links.push(format!("{toolkit}: {url}"));
                    results.insert(
                        toolkit.clone(),
                        json!({"status": "initiated", "redirect_url": url, "connected_account_id": link.get("connected_account_id"),
                               "expires_at": link.get("expires_at"),
                               "message": format!("Ask the user to open {url} to connect `{toolkit}`.")}),
                    );
                }
                Err(e) => {
                    results.insert(
                        toolkit.clone(),
                        json!({"status": "error", "message": format!("Could not start connecting `{toolkit}`: {e}")}),
                    );
                }
            }
        }
        let message = if links.is_empty() {
            "No new authorization is needed (see each toolkit's status).".to_owned()
        } else {
            let wait = if p.meta_allowed(WAIT_FOR_CONNECTIONS) {
                format!(" Then call `{WAIT_FOR_CONNECTIONS}` to wait until they finish.")
            } else {
                " Once they have finished, continue with the task.".to_owned()
            };
            format!(
                "Give the user these links to authorize access (each opens the app's sign-in page): {}.{wait}",
                links.join("; ")
            )
        };
        Ok(json!({"results": results, "message": message}))
    }

    async fn wait(&self, input: Value, user: String, cancellation: CancellationToken) -> Result<Value, ToolError> {
        let p = &self.provider;
        let toolkits = requested_toolkits(&input)?;
        let any = match input.get("mode").and_then(Value::as_str).unwrap_or("all") {
            "any" => true,
            "all" => false,
            other => {
                return Err(ToolError::with_kind(
                    ErrorKind::InvalidInput,
                    format!("`mode` is {other:?}; use \"any\" or \"all\""),
                ))
            }
        };
        let asked = input
            .get("timeout_seconds")
            .and_then(Value::as_f64)
            .filter(|s| s.is_finite() && *s >= 0.0)
            .map(|s| Duration::from_secs_f64(s.min(86_400.0)));
        let limit = asked.map_or(p.wait_max, |a| a.min(p.wait_max));
        let deadline = tokio::time::Instant::now() + limit;
        loop {
            let accounts = p.accounts(std::slice::from_ref(&user), &toolkits).await.map_err(|e| self.fail(e))?;
            let mut statuses = Map::new();
            for t in &toolkits {
                let mine: Vec<&Value> = accounts.iter().filter(|a| account_toolkit(a) == *t).collect();
                let has = |set: &[&str]| {
                    mine.iter()
                        .any(|a| a.get("status").and_then(Value::as_str).is_some_and(|s| set.contains(&s)))
                };
                let status = if mine.iter().any(|a| is_active(a)) {
                    "active"
                } else if has(&["INITIALIZING", "INITIATED"]) {
                    "pending"
                } else if mine.is_empty() {
                    "not_connected"
                } else {
                    "failed"
                };
                statuses.insert(t.clone(), json!(status));
            }
            let active = statuses.values().filter(|s| *s == "active").count();
            let done = if any { active > 0 } else { active == toolkits.len() };
            if done {
                return Ok(json!({"toolkits": statuses, "connected": true, "timed_out": false,
                                  "message": "The user finished connecting; continue with the task."}));
            }
            let now = tokio::time::Instant::now();
            if now >= deadline {
                return Ok(json!({"toolkits": statuses, "connected": false, "timed_out": true,
                    "message": format!("The user has not finished connecting after {}s. Ask them to complete the authorization link, then continue (or call `{WAIT_FOR_CONNECTIONS}` again).", limit.as_secs())}));
            }
            let nap = p.poll_interval.min(deadline - now);
            tokio::select! {
                _ = cancellation.cancelled() => return Err(ToolError::aborted(format!("`{WAIT_FOR_CONNECTIONS}` was cancelled"))),
                _ = tokio::time::sleep(nap) => {}
            }
        }
    }
}

fn meta_tool(
    provider: &Arc<ComposioToolProvider>,
    slug: &str,
    binding: Binding,
    description: Option<String>,
) -> Result<Arc<dyn Tool>, ProviderError> {
    let toolkits = json!({"type": "array", "items": {"type": "string"}, "minItems": 1, "maxItems": MAX_TOOLKITS_PER_CALL,
                          "description": "Toolkit slugs, lowercase (for example \"gmail\", \"github\")"});
    let (default_description, schema) = if slug == MANAGE_CONNECTIONS {
        (
            "Create authorization links so the user can connect their accounts (Gmail, GitHub, …) to this agent. Use it when a tool reports that a connection is required. Relay each returned link to the user.",
            json!({"type": "object", "properties": {
                "toolkits": toolkits,
                "reinitiate_all": {"type": "boolean", "description": "Create new links even for toolkits that are already connected"}},
                "required": ["toolkits"], "additionalProperties": false}),
        )
    } else {
        (
            "Wait until the user has finished connecting the given toolkits (after COMPOSIO_MANAGE_CONNECTIONS gave them links). Returns each toolkit's status and whether the wait timed out.",
            json!({"type": "object", "properties": {
                "toolkits": toolkits,
                "mode": {"type": "string", "enum": ["any", "all"], "default": "all", "description": "Wait for any or for all of the toolkits"},
                "timeout_seconds": {"type": "number", "minimum": 0, "description": "How long to wait at most (bounded by the provider)"}},
                "required": ["toolkits"], "additionalProperties": false}),
        )
    };
    let meta = Arc::new(Meta {
        provider: provider.clone(),
        slug: slug.to_owned(),
        binding,
    });
    let tool = DynamicTool::builder(slug, description.unwrap_or_else(|| default_description.to_owned()))
        .input_schema(schema)
        .handler(move |input, cx| {
            let meta = meta.clone();
            let user = meta
                .binding
                .user_for(
                    &meta.provider,
                    cx.raw_request_context(),
                    cx.call().resource_id.as_deref(),
                    &meta.slug,
                )
                .and_then(|u| {
                    u.ok_or_else(|| {
                        ToolError::new(format!("`{}` needs a user: it cannot run for a platform connection", meta.slug))
                            .with_kind_of(ErrorKind::Execution)
                    })
                });
            let cancellation = cx.cancellation().clone();
            async move {
                let user = user?;
                if meta.slug == MANAGE_CONNECTIONS {
                    meta.manage(input, user).await
                } else {
                    meta.wait(input, user, cancellation).await
                }
            }
        })
        .map_err(|e| ProviderError::Config(e.0))?;
    Ok(tool.into_tool())
}

fn meta_schema(slug: &str) -> Option<Value> {
    let provider = Arc::new(ComposioToolProvider::new(String::new()));
    let binding = Binding {
        user: UserRule::None,
        connected_account_id: None,
    };
    meta_tool(&provider, slug, binding, None)
        .ok()
        .map(|t| t.spec().input_schema.clone())
}

// ----- statuses -------------------------------------------------------------------------

fn auth_status(account: &Value) -> AuthStatus {
    match account.get("status").and_then(Value::as_str).unwrap_or_default() {
        "ACTIVE" => AuthStatus::Completed,
        "INITIALIZING" | "INITIATED" => AuthStatus::Pending,
        _ => AuthStatus::Failed,
    }
}

fn connection_status(account: &Value) -> ConnectionStatus {
    let disabled = account.get("is_disabled").and_then(Value::as_bool) == Some(true);
    match account.get("status").and_then(Value::as_str).unwrap_or_default() {
        "ACTIVE" if disabled => ConnectionStatus::Inactive,
        "ACTIVE" => ConnectionStatus::Active,
        "INACTIVE" => ConnectionStatus::Inactive,
        "INITIALIZING" | "INITIATED" => ConnectionStatus::Pending,
        _ => ConnectionStatus::Failed,
    }
}

fn redirect_url(body: &Value) -> Option<String> {
    [
        "/redirect_url",
        "/redirect_uri",
        "/connectionData/val/redirectUrl",
        "/connectionData/val/redirect_url",
    ]
    .iter()
    .find_map(|p| body.pointer(p).and_then(Value::as_str).filter(|s| !s.is_empty()))
    .map(str::to_owned)
}

fn field(f: &Value, required: bool) -> Option<ConnectionField> {
    let name = f.get("name").and_then(Value::as_str)?.to_owned();
    Some(ConnectionField {
        display_name: f.get("displayName").and_then(Value::as_str).unwrap_or(&name).to_owned(),
        description: f
            .get("description")
            .and_then(Value::as_str)
            .filter(|d| !d.is_empty())
            .map(str::to_owned),
        field_type: FieldType::coerce(f.get("type").and_then(Value::as_str).unwrap_or("string")),
        required: f.get("required").and_then(Value::as_bool).unwrap_or(required),
        default: match f.get("default") {
            Some(Value::String(s)) => Some(s.clone()),
            Some(v @ (Value::Number(_) | Value::Bool(_))) => Some(v.to_string()),
            _ => None,
        },
        name,
    })
}

const REDIRECT_SCHEMES: [&str; 3] = ["OAUTH2", "OAUTH1", "DCR_OAUTH"];

impl ToolProvider for ComposioToolProvider {
    fn info(&self) -> &ProviderInfo {
        &self.info
    }

    fn capabilities(&self) -> Capabilities {
        Capabilities {
            multiple_connections_per_toolkit: true,
            batch_connection_status: true,
            reauthorize_reuses_connection_id: true,
            supports_revoke: Some(true),
        }
    }

    fn default_scope(&self) -> Scope {
        self.scope
    }

    /// Composio's tool slugs are `UPPER_SNAKE` and start with their toolkit
    /// (`GMAIL_SEND_EMAIL` → `gmail`).
    fn toolkit_of_slug(&self, slug: &str) -> Option<String> {
        slug_toolkit(slug)
    }

    /// `<TOOLKIT>_…`, without case (`GMAIL_SEND_EMAIL` belongs to `gmail`, and a toolkit whose
    /// slug holds `_` still claims its tools).
    fn slug_belongs_to(&self, slug: &str, toolkit: &str) -> bool {
        slug_has_prefix(slug, toolkit, '_', true)
    }

    fn list_toolkits(&self) -> BoxFuture<'_, Result<ListResult<Toolkit>, ProviderError>> {
        Box::pin(self.toolkits())
    }

    fn list_tools(&self, options: ListToolsOptions) -> BoxFuture<'_, Result<ListResult<ToolInfo>, ProviderError>> {
        Box::pin(self.tools_listing(options))
    }

    fn get_tool_schema(&self, slug: &str) -> BoxFuture<'_, Result<Option<Value>, ProviderError>> {
        let slug = slug.trim().to_owned();
        Box::pin(async move {
            if is_meta_tool(&slug) {
                return Ok(self.meta_allowed(&slug).then(|| meta_schema(&slug)).flatten());
            }
            if slug.is_empty() {
                return Ok(None);
            }
            let Some(def) = self.definition(&slug).await? else {
                return Ok(None);
            };
            let toolkit = def.pointer("/toolkit/slug").and_then(Value::as_str).unwrap_or_default();
            Ok(self.allow.tool(toolkit, &slug).then(|| input_schema(&def)))
        })
    }

    fn resolve_tools(&self, slugs: Vec<String>, options: ResolveOptions) -> BoxFuture<'_, Result<ResolvedTools, ProviderError>> {
        Box::pin(async move {
            let binding = self.legacy_binding(&options)?;
            self.resolve(slugs, binding, &BTreeMap::new()).await
        })
    }

    fn list_toolkits_vnext(&self) -> BoxFuture<'_, Result<ListResult<Toolkit>, ProviderError>> {
        Box::pin(self.toolkits())
    }

    fn list_tools_vnext(&self, options: ListToolsOptions) -> BoxFuture<'_, Result<ListResult<ToolInfo>, ProviderError>> {
        Box::pin(self.tools_listing(options))
    }

    fn resolve_tools_vnext(&self, options: ResolveToolsOptions) -> BoxFuture<'_, Result<ResolvedTools, ProviderError>> {
        Box::pin(async move {
            let binding = self.vnext_binding(&options)?;
            // An account pinned for a known user is checked now; one pinned for callers is
            // checked at each caller's first call.
            if let (UserRule::Fixed(user), Some(account)) = (&binding.user, &binding.connected_account_id) {
                let toolkit = options.toolkit.as_deref().unwrap_or_default();
                if let Some(why) = self.pinned_account_refusal(account, user, toolkit).await? {
                    return Err(ProviderError::Config(format!(
                        "Composio tools cannot be bound to user `{user}` through this connection: {why}"
                    )));
                }
            }
            let descriptions: BTreeMap<String, String> = options
                .tool_meta
                .iter()
                .filter_map(|(slug, meta)| meta.description.clone().map(|d| (slug.clone(), d)))
                .collect();
            self.resolve(options.tool_slugs.clone(), binding, &descriptions).await
        })
    }

    fn authorize(&self, options: AuthorizeOptions) -> BoxFuture<'_, Result<Authorization, ProviderError>> {
        Box::pin(async move {
            let toolkit = options.toolkit.trim().to_ascii_lowercase();
            if !self.allow.toolkit(&toolkit) {
                return Err(self.not_allowed(&toolkit));
            }
            let connection = options.connection_id.trim().to_owned();
            if connection.is_empty() {
                return Err(ProviderError::Config(
                    "authorize needs `connection_id`: the user bucket the connection belongs to (or an existing connected account to re-authorize)".into(),
                ));
            }
            // Re-authorizing an existing connected account keeps its id.
            if connection.starts_with("ca_") {
                if let Some(account) = self.account(&connection).await? {
                    let owner_toolkit = account_toolkit(&account);
                    if !owner_toolkit.is_empty() && owner_toolkit != toolkit {
                        return Err(ProviderError::Config(format!(
                            "the connected account `{connection}` belongs to the toolkit `{owner_toolkit}`, not `{toolkit}`"
                        )));
                    }
                    let mut body = json!({});
                    if let Some(cb) = &self.callback_url {
                        body["redirect_url"] = json!(cb);
                    }
                    let path = self.path(&format!("/connected_accounts/{}/refresh", encode_segment(&connection)));
                    let out = self.http.json(reqwest::Method::POST, &path, &[], Some(&body)).await?;
                    return Ok(Authorization {
                        url: redirect_url(&out).unwrap_or_default(),
                        auth_id: out.get("id").and_then(Value::as_str).unwrap_or(&connection).to_owned(),
                    });
                }
            }
            let config = self.enabled_auth_config(&toolkit).await?;
            let config_id = config.get("id").and_then(Value::as_str).unwrap_or_default().to_owned();
            let scheme = config.get("auth_scheme").and_then(Value::as_str).unwrap_or_default().to_owned();
            let managed = config.get("is_composio_managed").and_then(Value::as_bool).unwrap_or(false);
            let out = if options.config.is_empty() && managed && REDIRECT_SCHEMES.contains(&scheme.as_str()) {
                // Composio retired `POST /connected_accounts` for its managed OAuth apps.
                let link = self.link(&config_id, &connection).await?;
                json!({"id": link.get("connected_account_id"), "redirect_url": link.get("redirect_url")})
            } else {
                let mut conn = json!({"user_id": connection});
                if !options.config.is_empty() {
                    let mut val = options.config.clone();
                    val.insert("status".into(), json!("INITIALIZING"));
                    conn["state"] = json!({"authScheme": scheme, "val": val});
                }
                if let Some(cb) = &self.callback_url {
                    conn["callback_url"] = json!(cb);
                }
                let body = json!({"auth_config": {"id": config_id}, "connection": conn});
                self.http
                    .json(reqwest::Method::POST, &self.path("/connected_accounts"), &[], Some(&body))
                    .await?
            };
            let auth_id = out
                .get("id")
                .and_then(Value::as_str)
                .ok_or_else(|| self.http.transport("Composio answered the new connection without an `id`".into()))?
                .to_owned();
            Ok(Authorization {
                url: redirect_url(&out).unwrap_or_default(),
                auth_id,
            })
        })
    }

    fn list_connection_fields(&self, toolkit: &str) -> BoxFuture<'_, Result<Vec<ConnectionField>, ProviderError>> {
        let toolkit = toolkit.trim().to_ascii_lowercase();
        Box::pin(async move {
            if !self.allow.toolkit(&toolkit) {
                return Err(self.not_allowed(&toolkit));
            }
            let config = self.enabled_auth_config(&toolkit).await?;
            let scheme = config.get("auth_scheme").and_then(Value::as_str).unwrap_or_default();
            let path = self.path(&format!("/toolkits/{}", encode_segment(&toolkit)));
            let detail = self.http.json(reqwest::Method::GET, &path, &[], None).await?;
            let details = detail
                .get("auth_config_details")
                .and_then(Value::as_array)
                .cloned()
                .unwrap_or_default();
            let Some(mode) = details.iter().find(|d| {
                d.get("mode")
                    .and_then(Value::as_str)
                    .is_some_and(|m| m.eq_ignore_ascii_case(scheme))
            }) else {
                return Ok(Vec::new());
            };
            let initiation = mode.pointer("/fields/connected_account_initiation");
            let mut fields = Vec::new();
            for (key, required) in [("required", true), ("optional", false)] {
                for f in initiation.and_then(|i| i.get(key)).and_then(Value::as_array).into_iter().flatten() {
                    fields.extend(field(f, required));
                }
            }
            Ok(fields)
        })
    }

    fn get_auth_status(&self, auth_id: &str) -> BoxFuture<'_, Result<AuthStatus, ProviderError>> {
        let id = auth_id.trim().to_owned();
        Box::pin(async move {
            if id.is_empty() {
                return Ok(AuthStatus::Failed);
            }
            Ok(match self.account(&id).await? {
                Some(account) => auth_status(&account),
                None => AuthStatus::Failed,
            })
        })
    }

    fn get_connection_status(&self, items: Vec<ConnectionRef>) -> BoxFuture<'_, Result<BTreeMap<String, ConnectionState>, ProviderError>> {
        Box::pin(async move {
            let mut out: BTreeMap<String, ConnectionState> = items
                .iter()
                .map(|i| (i.connection_id.clone(), ConnectionState { connected: false }))
                .collect();
            let ids: BTreeSet<&str> = items
                .iter()
                .map(|i| i.connection_id.as_str())
                .filter(|s| !s.trim().is_empty())
                .collect();
            if ids.is_empty() {
                return Ok(out);
            }
            let toolkits: BTreeSet<String> = items.iter().map(|i| i.toolkit.to_ascii_lowercase()).collect();
            let query = vec![
                ("connected_account_ids", ids.iter().copied().collect::<Vec<_>>().join(",")),
                ("toolkit_slugs", toolkits.iter().cloned().collect::<Vec<_>>().join(",")),
            ];
            let accounts = self.all("/connected_accounts", &query).await?;
            for item in &items {
                let found = accounts
                    .iter()
                    .find(|a| a.get("id").and_then(Value::as_str) == Some(item.connection_id.as_str()));
                let connected = found.is_some_and(|a| is_active(a) && account_toolkit(a) == item.toolkit.to_ascii_lowercase());
                out.insert(item.connection_id.clone(), ConnectionState { connected });
            }
            Ok(out)
        })
    }

    fn list_connections(&self, options: ListConnectionsOptions) -> BoxFuture<'_, Result<ListConnectionsResult, ProviderError>> {
        Box::pin(async move {
            let page = options.page();
            let per_page = options.per_page();
            let empty = ListConnectionsResult {
                items: Vec::new(),
                pagination: Pagination {
                    total: Some(0),
                    page: Some(page),
                    per_page: Some(per_page),
                    has_more: false,
                },
            };
            let toolkit = options.toolkit.trim().to_ascii_lowercase();
            if !toolkit.is_empty() && !self.allow.toolkit(&toolkit) {
                return Ok(empty);
            }
            let owners: Vec<String> = match options.owners() {
                Some(list) => list.into_iter().map(|u| u.trim().to_owned()).filter(|u| !u.is_empty()).collect(),
                None => vec![self.default_owner()?],
            };
            if owners.is_empty() {
                return Ok(empty);
            }
            let mut query = vec![("user_ids", owners.join(","))];
            if !toolkit.is_empty() {
                query.push(("toolkit_slugs", toolkit.clone()));
            }
            let got = self.nth_page("/connected_accounts", &query, page, per_page).await?;
            let items = got
                .items
                .iter()
                .filter(|a| {
                    a.get("user_id")
                        .and_then(Value::as_str)
                        .is_none_or(|u| owners.iter().any(|o| o == u))
                })
                .filter(|a| toolkit.is_empty() || account_toolkit(a) == toolkit)
                .filter_map(|a| {
                    Some(Connection {
                        connection_id: a.get("id").and_then(Value::as_str)?.to_owned(),
                        status: connection_status(a),
                        created_at: a.get("created_at").and_then(Value::as_str).map(str::to_owned),
                        author_id: a.get("user_id").and_then(Value::as_str).map(str::to_owned),
                    })
                })
                .collect();
            Ok(ListConnectionsResult {
                items,
                pagination: Pagination {
                    total: got.total,
                    page: Some(page),
                    per_page: Some(per_page),
                    has_more: got.next_cursor.is_some(),
                },
            })
        })
    }

    fn get_health(&self) -> BoxFuture<'_, Result<Health, ProviderError>> {
        Box::pin(async move {
            match self.page("/toolkits", &[], 1, None).await {
                Ok(page) => Ok(Health {
                    ok: true,
                    message: None,
                    details: Some(json!({"base_url": self.http.base_url, "api": self.version.prefix(), "toolkits": page.total})),
                }),
                Err(e) => Ok(Health {
                    ok: false,
                    message: Some(self.http.scrub(e.to_string())),
                    details: None,
                }),
            }
        })
    }

    fn revoke_connection(&self, connection_id: &str) -> BoxFuture<'_, Result<(), ProviderError>> {
        let id = connection_id.trim().to_owned();
        Box::pin(async move {
            if id.is_empty() {
                return Err(ProviderError::Config("revoke_connection needs a connected account id".into()));
            }
            // Already gone counts as revoked.
            let path = self.path(&format!("/connected_accounts/{}", encode_segment(&id)));
            self.http.json_or_absent(reqwest::Method::DELETE, &path).await.map(|_| ())
        })
    }
}

/// `(code, message)` of a Composio error body `{error: {message, code, slug?, status,
/// request_id?, suggested_fix?}}` (the slug wins over the numeric code; the suggested fix is
/// appended to the message), or its text.
fn envelope(bytes: &[u8]) -> (Option<String>, String) {
    let text = |bytes: &[u8]| String::from_utf8_lossy(bytes).chars().take(300).collect::<String>();
    let Ok(v) = serde_json::from_slice::<Value>(bytes) else {
        return (None, text(bytes));
    };
    let e = match v.get("error") {
        Some(e @ Value::Object(_)) => e,
        Some(Value::String(s)) => return (None, s.clone()),
        _ => &v,
    };
    let code = ["slug", "code", "name"].iter().find_map(|k| match e.get(*k) {
        Some(Value::String(s)) if !s.is_empty() => Some(s.clone()),
        Some(Value::Number(n)) => Some(n.to_string()),
        _ => None,
    });
    let mut message = e.get("message").and_then(Value::as_str).unwrap_or_default().to_owned();
    if let Some(fix) = e.get("suggested_fix").and_then(Value::as_str).filter(|f| !f.trim().is_empty()) {
        if message.is_empty() {
            message = fix.to_owned();
        } else {
            message = format!("{message} ({fix})");
        }
    }
    if message.is_empty() && code.is_none() {
        return (None, text(bytes));
    }
    (code, message)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn error_envelopes_read_slug_code_and_suggested_fix() {
        let body = br#"{"error":{"message":"No connected account found","code":1803,"status":400,"request_id":"r","suggested_fix":""}}"#;
        assert_eq!(envelope(body), (Some("1803".into()), "No connected account found".into()));
        let body =
            br#"{"error":{"message":"Bad","code":600,"slug":"ConnectedAccount_BadRequest","status":400,"suggested_fix":"Use link"}}"#;
        assert_eq!(
            envelope(body),
            (Some("ConnectedAccount_BadRequest".into()), "Bad (Use link)".into())
        );
        assert_eq!(envelope(b"<html>oops"), (None, "<html>oops".into()));
        assert!(missing_account(400, Some("1803"), ""));
        assert!(missing_account(404, Some("CONNECTED_ACCOUNT_NOT_FOUND"), ""));
        assert!(missing_account(404, Some("ConnectedAccountNotFound"), ""));
        assert!(!missing_account(401, Some("1803"), "no connected account"));
        assert!(!missing_account(500, None, "no connected account"));
    }

    #[test]
    fn output_schemas_are_kept_only_when_usable() {
        let wrapped = json!({"output_parameters": {"type": "object", "properties": {
            "data": {"type": "object", "properties": {"id": {"type": "string"}}}, "successful": {"type": "boolean"}}}});
        assert_eq!(
            usable_output_schema(&wrapped),
            Some(json!({"type": "object", "properties": {"id": {"type": "string"}}}))
        );
        let union = json!({"output_parameters": {"anyOf": [{"type": "object"}, {"type": "string"}]}});
        assert_eq!(usable_output_schema(&union), None);
        assert_eq!(usable_output_schema(&json!({"output_parameters": {}})), None);
        assert_eq!(
            input_schema(&json!({"input_parameters": {}})),
            json!({"type": "object", "properties": {}})
        );
    }

    #[test]
    fn statuses_map_as_the_reference_says() {
        for (s, a, c) in [
            ("ACTIVE", AuthStatus::Completed, ConnectionStatus::Active),
            ("INITIALIZING", AuthStatus::Pending, ConnectionStatus::Pending),
            ("INITIATED", AuthStatus::Pending, ConnectionStatus::Pending),
            ("FAILED", AuthStatus::Failed, ConnectionStatus::Failed),
            ("EXPIRED", AuthStatus::Failed, ConnectionStatus::Failed),
            ("INACTIVE", AuthStatus::Failed, ConnectionStatus::Inactive),
            ("REVOKED", AuthStatus::Failed, ConnectionStatus::Failed),
        ] {
            let account = json!({"status": s});
            assert_eq!((auth_status(&account), connection_status(&account)), (a, c), "{s}");
        }
        assert_eq!(
            connection_status(&json!({"status": "ACTIVE", "is_disabled": true})),
            ConnectionStatus::Inactive
        );
    }
}
