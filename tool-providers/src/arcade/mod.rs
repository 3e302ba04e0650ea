//! Arcade (`https://api.arcade.dev`): tools listed with offset pagination, schemas built from
//! `value_schema`, execution as a user id, authorization links, health, and the VNext surface
//! (per-connection resolution, authorization flows with long-polled status, and connections
//! through Arcade's admin user-connections API).
//!
//! Owns [`ArcadeToolProvider`]: its settings and builder, and the [`ToolProvider`] surface,
//! which hands each method to the module that owns its concern:
//!
//! - `api`: Arcade's wire types (serde requests and answers), offset paging and the error
//!   envelope — the only place that knows Arcade's JSON;
//! - `schema`: Arcade's `value_schema` types as JSON Schema;
//! - `tools`: tool names, listings, remote tools resolved into ours and their execution;
//! - `connections`: auth providers, user connections and authorization flows;
//! - `status`: Arcade's statuses mapped onto ours.
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

use std::collections::BTreeMap;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use serde::Deserialize;
use serde_json::Value;
use tool_core::provider::{
    AllowList, AuthStatus, Authorization, AuthorizeOptions, Capabilities, ConnectionField, ConnectionRef, ConnectionState, Health,
    ListConnectionsOptions, ListConnectionsResult, ListResult, ListToolsOptions, Pagination, ProviderError, ProviderInfo, ResolveOptions,
    ResolveToolsOptions, ResolvedTools, Scope, ToolInfo, ToolProvider, Toolkit,
};
use tool_core::tool::BoxFuture;

use crate::definitions::Definitions;
use crate::http::Http;
use crate::naming::slug_has_prefix;

mod api;
mod connections;
mod schema;
mod status;
mod tools;

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
    auth_providers: Arc<Mutex<BTreeMap<String, connections::AuthProvider>>>,
    definitions: Definitions<api::ToolDefinition>,
    /// Where imported tools sit for tool search.
    placement: crate::placement::ImportPlacement,
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
                api::envelope,
            ),
            user_id: None,
            allow_shared_user: false,
            allow: AllowList::default(),
            max_pages: 100,
            auth_wait_secs: 0,
            auth_providers: Arc::default(),
            definitions: Definitions::default(),
            placement: Default::default(),
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
        Box::pin(self.toolkits())
    }

    fn list_tools(&self, options: ListToolsOptions) -> BoxFuture<'_, Result<ListResult<ToolInfo>, ProviderError>> {
        Box::pin(self.tools_listing(options))
    }

    fn get_tool_schema(&self, slug: &str) -> BoxFuture<'_, Result<Option<Value>, ProviderError>> {
        let slug = slug.to_owned();
        Box::pin(async move { self.tool_schema(&slug).await })
    }

    fn resolve_tools(&self, slugs: Vec<String>, options: ResolveOptions) -> BoxFuture<'_, Result<ResolvedTools, ProviderError>> {
        Box::pin(async move { self.resolve_each(&slugs, &options, |_| None).await })
    }

    fn get_health(&self) -> BoxFuture<'_, Result<Health, ProviderError>> {
        Box::pin(async move {
            match self.http.get::<Value>("/v1/health", &[]).await {
                Ok(body) => {
                    let ok = api::HealthBody::deserialize(&body).ok().and_then(|h| h.healthy).unwrap_or(false);
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
        Box::pin(self.resolve_vnext(options))
    }

    /// Starts Arcade's authorization for one tool (`POST /v1/tools/authorize {tool_name,
    /// user_id}`): Arcade authorizes per tool, so `tool_name` is required (a tool of
    /// `toolkit`), and `connection_id` is the Arcade user id the authorization lands in.
    /// A user who has already authorized gets `url` empty and an `auth_id` whose status is
    /// `Completed` (Arcade's id, else [`ALREADY_AUTHORIZED_ID`]): there is nothing to open.
    fn authorize(&self, options: AuthorizeOptions) -> BoxFuture<'_, Result<Authorization, ProviderError>> {
        Box::pin(self.start_authorization(options))
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
        Box::pin(async move { self.flow_status(&id).await })
    }

    /// Whether connections work, one user-connection listing per auth provider (so many
    /// items cost one listing each provider). An item's id may be an Arcade user-connection
    /// id or a user id (the bucket): connected when a matching connection for the toolkit's
    /// auth provider is active. A toolkit whose tools need no authorization is connected; an
    /// unknown or disallowed toolkit is not.
    fn get_connection_status(&self, items: Vec<ConnectionRef>) -> BoxFuture<'_, Result<BTreeMap<String, ConnectionState>, ProviderError>> {
        Box::pin(self.connection_states(items))
    }

    /// The toolkit's connections (Arcade's user connections for the toolkit's auth provider),
    /// of `user_ids`/`user_id`; with neither, of the configured
    /// [`user_id`](ArcadeToolProvider::user_id) only (none configured: an empty page) —
    /// never every user's. `connection_id` is Arcade's user-connection id, `author_id` the
    /// Arcade user id. A disallowed or unknown toolkit, or one whose tools need no
    /// authorization, has none.
    fn list_connections(&self, options: ListConnectionsOptions) -> BoxFuture<'_, Result<ListConnectionsResult, ProviderError>> {
        Box::pin(self.connections(options))
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
