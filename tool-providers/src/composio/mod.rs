//! Composio (`https://backend.composio.dev`): toolkits and tools listed with cursor
//! pagination, execution as a user (optionally through one connected account), auth configs,
//! connected accounts (authorize, status, listing, revoke) and the two connection-management
//! tools for chat (`COMPOSIO_MANAGE_CONNECTIONS`, `COMPOSIO_WAIT_FOR_CONNECTIONS`).
//!
//! Owns [`ComposioToolProvider`]: its settings and builder, and the [`ToolProvider`] surface,
//! which hands each method to the module that owns its concern:
//!
//! - `api`: Composio's wire types (serde requests and answers), cursor paging and the error
//!   envelope — the only place that knows Composio's JSON;
//! - `tools`: listings, and remote tools resolved into ours (who they run as, execution, the
//!   model-facing errors: a missing connected account tells the model how the user connects);
//! - `accounts`: auth configs and connected accounts (authorization, status, listing, revoke,
//!   and the owner check of pinned accounts);
//! - `meta`: the chat tools that open and wait for connections;
//! - `status`: connected-account statuses mapped onto ours.
//!
//! A pinned connected account is checked against the user bucket it acts for before it is
//! used (tenant isolation does not rest on the platform's own check): at resolution when the
//! bucket is fixed (author-bound connections), at each caller's first call otherwise. The
//! owner of each account is looked up once (`GET /connected_accounts/{id}`) and remembered.

use std::collections::{BTreeMap, HashMap};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use serde_json::Value;
use tool_core::provider::{
    AllowList, AuthStatus, Authorization, AuthorizeOptions, Capabilities, ConnectionField, ConnectionRef, ConnectionState, Health,
    ListConnectionsOptions, ListConnectionsResult, ListResult, ListToolsOptions, ProviderError, ProviderInfo, ResolveOptions,
    ResolveToolsOptions, ResolvedTools, Scope, ToolInfo, ToolProvider, Toolkit,
};
use tool_core::tool::BoxFuture;

use crate::definitions::Definitions;
use crate::http::Http;
use crate::naming::slug_has_prefix;

mod accounts;
mod api;
mod meta;
mod status;
mod tools;

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
    definitions: Definitions<api::Tool>,
    /// Where imported tools sit for tool search.
    placement: crate::placement::ImportPlacement,
    /// The owner and toolkit of each connected account looked up so far (an account never
    /// changes owner): a pinned account is checked once, not on every call. Shared by clones.
    accounts_seen: Arc<Mutex<HashMap<String, accounts::AccountFacts>>>,
}

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
                api::envelope,
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
            definitions: Definitions::default(),
            placement: Default::default(),
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

    /// A path under the API generation's prefix.
    fn path(&self, rest: &str) -> String {
        format!("{}{rest}", self.version.prefix())
    }

    /// Whether the allow-lists let a connection-management tool through.
    fn meta_allowed(&self, slug: &str) -> bool {
        self.allow.tool(META_TOOLKIT, slug)
    }

    fn not_allowed(&self, toolkit: &str) -> ProviderError {
        ProviderError::Config(format!(
            "the Composio toolkit `{toolkit}` is not in this provider's allowed toolkits"
        ))
    }
}

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
        tools::slug_toolkit(slug)
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
        Box::pin(async move { self.tool_schema(&slug).await })
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
        Box::pin(self.resolve_vnext(options))
    }

    fn authorize(&self, options: AuthorizeOptions) -> BoxFuture<'_, Result<Authorization, ProviderError>> {
        Box::pin(self.start_authorization(options))
    }

    fn list_connection_fields(&self, toolkit: &str) -> BoxFuture<'_, Result<Vec<ConnectionField>, ProviderError>> {
        let toolkit = toolkit.trim().to_ascii_lowercase();
        Box::pin(async move { self.connection_fields(&toolkit).await })
    }

    fn get_auth_status(&self, auth_id: &str) -> BoxFuture<'_, Result<AuthStatus, ProviderError>> {
        let id = auth_id.trim().to_owned();
        Box::pin(async move { self.auth_status(&id).await })
    }

    fn get_connection_status(&self, items: Vec<ConnectionRef>) -> BoxFuture<'_, Result<BTreeMap<String, ConnectionState>, ProviderError>> {
        Box::pin(self.connection_states(items))
    }

    fn list_connections(&self, options: ListConnectionsOptions) -> BoxFuture<'_, Result<ListConnectionsResult, ProviderError>> {
        Box::pin(self.connections(options))
    }

    fn get_health(&self) -> BoxFuture<'_, Result<Health, ProviderError>> {
        Box::pin(async move {
            match self.page::<serde::de::IgnoredAny>("/toolkits", &[], 1, None).await {
                Ok(page) => Ok(Health {
                    ok: true,
                    message: None,
                    details: Some(
                        serde_json::json!({"base_url": self.http.base_url, "api": self.version.prefix(), "toolkits": page.total()}),
                    ),
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
        Box::pin(async move { self.revoke(&id).await })
    }
}
