//! Tool providers: catalogs of tools that live on someone else's platform (Composio, Arcade,
//! any MCP server), resolved into ordinary tools.
//!
//! Owns the [`ToolProvider`] trait (metadata, the legacy discovery surface and the VNext
//! surface of Mastra's `ToolProvider`; optional methods answer [`ProviderError::NotSupported`]
//! by default), its data types, and the helpers every provider shares: [`AllowList`]
//! (toolkit and tool allow-lists), [`connection_owner`] (whose connection a call uses, per
//! [`Scope`]) and [`ProviderRegistry`] (resolved tools into a [`Registry`], where they get the
//! same validation, hooks, approval, catalogs and MCP exposure as `#[tool]` functions). The
//! HTTP clients live in `tool-providers`.

use std::collections::BTreeMap;
use std::sync::Arc;

use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};

use crate::pins::{self, PinStore};
use crate::registry::{Registry, RegistryError};
use crate::tool::{BoxFuture, Tool};

mod connections;
mod error;
mod fanout;

pub use connections::{
    AuthStatus, Authorization, AuthorizeOptions, Connection, ConnectionField, ConnectionKind, ConnectionRef, ConnectionState,
    ConnectionStatus, FieldType, ListConnectionsOptions, ListConnectionsResult, ResolveToolsOptions, ToolMeta,
};
pub use fanout::{FanOut, FanOutOptions, PinnedConnection, ProviderSelection, Skipped};

/// Resolved tools by slug.
pub type ResolvedTools = BTreeMap<String, Arc<dyn Tool>>;

/// Who a provider is.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ProviderInfo {
    /// Stable id (`composio`, `arcade`, …).
    pub id: String,
    /// Human name.
    pub name: String,
    /// What it offers.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub description: Option<String>,
}

/// What a provider's connections can do.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Capabilities {
    /// One user may hold several connections to one toolkit.
    pub multiple_connections_per_toolkit: bool,
    /// Connection status can be asked for many connections at once.
    pub batch_connection_status: bool,
    /// Re-authorizing keeps the connection id.
    pub reauthorize_reuses_connection_id: bool,
    /// Connections can be revoked.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub supports_revoke: Option<bool>,
}

/// Whose connections a call uses.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Scope {
    /// The author's (whoever configured the agent).
    #[default]
    PerAuthor,
    /// The caller's: the resource id in the request context.
    CallerSupplied,
    /// Everybody's: the bucket [`SHARED_BUCKET_ID`] (a pinned connection's explicit choice;
    /// never a provider's default).
    Shared,
}

/// The user bucket of connections pinned with [`Scope::Shared`].
pub const SHARED_BUCKET_ID: &str = "shared";

/// A toolkit (an integration: `github`, `Gmail`, …).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Toolkit {
    /// Its slug.
    pub slug: String,
    /// Its name.
    pub name: String,
    /// What it does.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub description: Option<String>,
    /// Its icon URL.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub icon: Option<String>,
}

/// A tool as a listing shows it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ToolInfo {
    /// Its slug.
    pub slug: String,
    /// Its name.
    pub name: String,
    /// What it does.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub description: Option<String>,
    /// Its toolkit's slug.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub toolkit: Option<String>,
}

/// Where a page is in a listing.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Pagination {
    /// Items in all pages, when known.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub total: Option<u64>,
    /// This page (1-based).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub page: Option<u32>,
    /// Items per page.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub per_page: Option<u32>,
    /// Whether another page follows.
    pub has_more: bool,
}

/// One page of a listing.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ListResult<T> {
    /// The items.
    pub data: Vec<T>,
    /// Where the page is.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub pagination: Option<Pagination>,
}

impl<T> ListResult<T> {
    /// An empty last page.
    pub fn empty() -> Self {
        ListResult {
            data: Vec::new(),
            pagination: Some(Pagination::default()),
        }
    }
}

/// Filters of [`ToolProvider::list_tools`].
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ListToolsOptions {
    /// Only this toolkit.
    pub toolkit: Option<String>,
    /// Only tools matching this text.
    pub search: Option<String>,
    /// The page (1-based).
    pub page: Option<u32>,
    /// Items per page.
    pub per_page: Option<u32>,
}

/// Who a resolution is for.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct ResolveOptions {
    /// The user whose connections the tools use.
    pub user_id: Option<String>,
    /// The request context (its resource id decides the owner in caller-supplied scope).
    pub request_context: Map<String, Value>,
}

pub use error::ProviderError;

use crate::context::RESOURCE_ID_KEYS;

/// Whose connection a call uses: the author's in per-author scope; the caller's resource id
/// (from the request context) in caller-supplied scope. A caller without a resource id is an
/// error unless `shared_fallback` names the id everybody shares (an explicit opt-in: sharing
/// one tenant's connection with another must never happen by accident).
pub fn connection_owner(
    scope: Scope,
    author_id: Option<&str>,
    request_context: &Map<String, Value>,
    shared_fallback: Option<&str>,
) -> Result<String, ProviderError> {
    let non_empty = non_empty_id;
    match scope {
        Scope::Shared => Ok(SHARED_BUCKET_ID.to_owned()),
        Scope::PerAuthor => non_empty(author_id)
            .or_else(|| non_empty(shared_fallback))
            .ok_or_else(|| ProviderError::Config("per-author scope needs the author's id; none was given".into())),
        Scope::CallerSupplied => {
            let from_context = RESOURCE_ID_KEYS
                .iter()
                .find_map(|k| non_empty(request_context.get(*k).and_then(Value::as_str)));
            from_context.or_else(|| non_empty(shared_fallback)).ok_or_else(|| {
                ProviderError::Config(format!(
                    "caller-supplied scope needs the caller's resource id in the request context (`{}`); none was given, and no shared id is configured",
                    RESOURCE_ID_KEYS[0]
                ))
            })
        }
    }
}

/// An id as given, trimmed; `None` when it is missing or blank.
fn non_empty_id(id: Option<&str>) -> Option<String> {
    id.map(str::trim).filter(|s| !s.is_empty()).map(str::to_owned)
}

/// Toolkit and tool allow-lists.
///
/// Toolkits match exactly or by a trailing `*`; tools (per toolkit) exactly or by a
/// `*`-terminated prefix. No toolkit list allows every toolkit; a toolkit without a tool list
/// is unfiltered; an empty tool list allows none of its tools.
///
/// ```
/// use tool_core::provider::AllowList;
/// let allow = AllowList::new(["git*", "slack"]).tools("github", ["GITHUB_GET_*", "GITHUB_CREATE_ISSUE"]);
/// assert!(allow.toolkit("gitlab") && allow.toolkit("slack") && !allow.toolkit("gmail"));
/// assert!(allow.tool("github", "GITHUB_GET_REPO") && allow.tool("github", "GITHUB_CREATE_ISSUE"));
/// assert!(!allow.tool("github", "GITHUB_DELETE_REPO"));
/// assert!(allow.tool("slack", "SLACK_SEND_MESSAGE"), "no tool list: unfiltered");
/// ```
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct AllowList {
    toolkits: Vec<String>,
    tools: BTreeMap<String, Vec<String>>,
}

fn wildcard(pattern: &str, value: &str, fold_case: bool) -> bool {
    let (p, v) = if fold_case {
        (pattern.to_ascii_lowercase(), value.to_ascii_lowercase())
    } else {
        (pattern.to_owned(), value.to_owned())
    };
    match p.strip_suffix('*') {
        Some(prefix) => v.starts_with(prefix),
        None => p == v,
    }
}

impl AllowList {
    /// Allows these toolkits (an empty list allows all).
    pub fn new<S: Into<String>>(toolkits: impl IntoIterator<Item = S>) -> Self {
        AllowList {
            toolkits: toolkits.into_iter().map(Into::into).collect(),
            tools: BTreeMap::new(),
        }
    }

    /// Allows only these tools of `toolkit` (an empty list allows none).
    pub fn tools<S: Into<String>>(mut self, toolkit: impl Into<String>, tools: impl IntoIterator<Item = S>) -> Self {
        self.tools
            .insert(toolkit.into().to_ascii_lowercase(), tools.into_iter().map(Into::into).collect());
        self
    }

    /// Replaces the toolkit list (an empty list allows all), keeping the tool lists.
    pub fn set_toolkits<S: Into<String>>(&mut self, toolkits: impl IntoIterator<Item = S>) {
        self.toolkits = toolkits.into_iter().map(Into::into).collect();
    }

    /// Whether nothing is filtered (no toolkit list, no tool list).
    pub fn is_unrestricted(&self) -> bool {
        self.toolkits.is_empty() && self.tools.is_empty()
    }

    /// Whether a toolkit is allowed (toolkit slugs compare without case).
    pub fn toolkit(&self, slug: &str) -> bool {
        self.toolkits.is_empty() || self.toolkits.iter().any(|p| wildcard(p, slug, true))
    }

    /// Whether a tool of a toolkit is allowed.
    pub fn tool(&self, toolkit: &str, slug: &str) -> bool {
        self.toolkit(toolkit)
            && match self.tools.get(&toolkit.to_ascii_lowercase()) {
                None => true,
                Some(list) => list.iter().any(|p| wildcard(p, slug, false)),
            }
    }
}

fn unsupported<T: Send + 'static>(provider: &ProviderInfo, method: &'static str) -> BoxFuture<'static, Result<T, ProviderError>> {
    let e = ProviderError::NotSupported {
        provider: provider.id.clone(),
        method,
    };
    Box::pin(std::future::ready(Err(e)))
}

/// A catalog of remote tools. Object-safe; the optional methods answer
/// [`ProviderError::NotSupported`] unless a provider implements them.
pub trait ToolProvider: Send + Sync + 'static {
    /// Who it is.
    fn info(&self) -> &ProviderInfo;

    /// The name shown in tool pickers (default: `info().name`).
    fn display_name(&self) -> &str {
        &self.info().name
    }

    /// What its connections can do.
    fn capabilities(&self) -> Capabilities {
        Capabilities::default()
    }

    /// Whose connections calls use by default.
    fn default_scope(&self) -> Scope {
        Scope::PerAuthor
    }

    /// The toolkit a slug names by this provider's naming convention, for a selected slug
    /// whose [`ToolMeta`] names none (the fan-out groups unpinned slugs by it). Default: none,
    /// so such a slug is only grouped by its meta.
    fn toolkit_of_slug(&self, slug: &str) -> Option<String> {
        let _ = slug;
        None
    }

    /// Whether `slug` belongs to `toolkit` by this provider's naming convention, for a
    /// selected slug whose [`ToolMeta`] names no toolkit (the fan-out hands it to the
    /// toolkit's pinned connections). Default: [`toolkit_of_slug`](Self::toolkit_of_slug)
    /// names `toolkit`.
    fn slug_belongs_to(&self, slug: &str, toolkit: &str) -> bool {
        self.toolkit_of_slug(slug).is_some_and(|t| t == toolkit)
    }

    /// The toolkits (legacy surface).
    fn list_toolkits(&self) -> BoxFuture<'_, Result<ListResult<Toolkit>, ProviderError>> {
        unsupported(self.info(), "list_toolkits")
    }

    /// The tools, filtered and paginated (legacy surface).
    fn list_tools(&self, options: ListToolsOptions) -> BoxFuture<'_, Result<ListResult<ToolInfo>, ProviderError>>;

    /// A tool's input schema, or `None` when the tool is unknown.
    fn get_tool_schema(&self, slug: &str) -> BoxFuture<'_, Result<Option<Value>, ProviderError>> {
        let _ = slug;
        unsupported(self.info(), "get_tool_schema")
    }

    /// Runnable tools for these slugs (unknown or disallowed slugs are left out).
    fn resolve_tools(&self, slugs: Vec<String>, options: ResolveOptions) -> BoxFuture<'_, Result<ResolvedTools, ProviderError>>;

    /// The allowed toolkits (VNext surface).
    fn list_toolkits_vnext(&self) -> BoxFuture<'_, Result<ListResult<Toolkit>, ProviderError>> {
        unsupported(self.info(), "list_toolkits_vnext")
    }

    /// The allowed tools, filtered and paginated; `pagination.page` is always set (VNext).
    fn list_tools_vnext(&self, options: ListToolsOptions) -> BoxFuture<'_, Result<ListResult<ToolInfo>, ProviderError>> {
        let _ = options;
        unsupported(self.info(), "list_tools_vnext")
    }

    /// Runnable tools for one set of slugs over one connection (VNext). The fan-out across
    /// connections and the per-connection names are [`ProviderRegistry::resolve_selection`]'s
    /// job, never the provider's.
    fn resolve_tools_vnext(&self, options: ResolveToolsOptions) -> BoxFuture<'_, Result<ResolvedTools, ProviderError>> {
        let _ = options;
        unsupported(self.info(), "resolve_tools_vnext")
    }

    /// Starts an authorization flow: the URL the user opens and the flow's handle.
    fn authorize(&self, options: AuthorizeOptions) -> BoxFuture<'_, Result<Authorization, ProviderError>> {
        let _ = options;
        unsupported(self.info(), "authorize")
    }

    /// The values a user supplies before `toolkit` can be authorized (empty: none needed).
    fn list_connection_fields(&self, toolkit: &str) -> BoxFuture<'_, Result<Vec<ConnectionField>, ProviderError>> {
        let _ = toolkit;
        unsupported(self.info(), "list_connection_fields")
    }

    /// Where an authorization flow stands.
    fn get_auth_status(&self, auth_id: &str) -> BoxFuture<'_, Result<AuthStatus, ProviderError>> {
        let _ = auth_id;
        unsupported(self.info(), "get_auth_status")
    }

    /// Whether connections still work, by connection id (every asked id answered).
    fn get_connection_status(&self, items: Vec<ConnectionRef>) -> BoxFuture<'_, Result<BTreeMap<String, ConnectionState>, ProviderError>> {
        let _ = items;
        unsupported(self.info(), "get_connection_status")
    }

    /// The provider's existing connections of a toolkit for some users.
    fn list_connections(&self, options: ListConnectionsOptions) -> BoxFuture<'_, Result<ListConnectionsResult, ProviderError>> {
        let _ = options;
        unsupported(self.info(), "list_connections")
    }

    /// Provider health.
    fn get_health(&self) -> BoxFuture<'_, Result<Health, ProviderError>> {
        unsupported(self.info(), "get_health")
    }

    /// Revokes a connection (one already gone counts as revoked).
    fn revoke_connection(&self, connection_id: &str) -> BoxFuture<'_, Result<(), ProviderError>> {
        let _ = connection_id;
        unsupported(self.info(), "revoke_connection")
    }
}

/// Whether a provider is usable.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Health {
    /// Usable.
    pub ok: bool,
    /// Why not, or a note.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub message: Option<String>,
    /// Anything else the provider reports.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub details: Option<Value>,
}

/// Providers by id, resolving their tools into a registry.
#[derive(Default)]
pub struct ProviderRegistry {
    providers: BTreeMap<String, Arc<dyn ToolProvider>>,
    /// Where resolved tools are pinned, when they are.
    pins: Option<Arc<dyn PinStore>>,
}

impl std::fmt::Debug for ProviderRegistry {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ProviderRegistry")
            .field("providers", &self.providers.keys())
            .finish()
    }
}

impl ProviderRegistry {
    /// No providers.
    pub fn new() -> Self {
        Self::default()
    }

    /// Adds a provider under its id (replacing one with the same id).
    pub fn add(&mut self, provider: impl ToolProvider) -> &mut Self {
        let provider: Arc<dyn ToolProvider> = Arc::new(provider);
        self.providers.insert(provider.info().id.clone(), provider);
        self
    }

    /// A provider by id.
    pub fn get(&self, id: &str) -> Option<&Arc<dyn ToolProvider>> {
        self.providers.get(id)
    }

    /// Pins every tool resolved from now on in `store` (per provider and user): a tool whose
    /// definition later differs from its pin is not called until the change is accepted
    /// ([`pins::accept`]).
    pub fn pin_in(&mut self, store: Arc<dyn PinStore>) -> &mut Self {
        self.pins = Some(store);
        self
    }

    /// Resolves `slugs` of provider `id` and inserts the tools into `registry`; returns the
    /// ids inserted. A slug already in the registry is an error (nothing is replaced).
    pub async fn resolve_into(
        &self,
        registry: &Registry,
        id: &str,
        slugs: Vec<String>,
        options: ResolveOptions,
    ) -> Result<Vec<String>, ResolveError> {
        let provider = self.providers.get(id).ok_or_else(|| ResolveError::UnknownProvider(id.to_owned()))?;
        let connection = options.user_id.clone().unwrap_or_else(|| "default".to_owned());
        let mut tools: Vec<Arc<dyn Tool>> = provider.resolve_tools(slugs, options).await?.into_values().collect();
        if let Some(store) = &self.pins {
            pins::pin_all(&**store, id, &connection, &tools)
                .await
                .map_err(|e| ResolveError::Provider(ProviderError::Config(e.to_string())))?;
            tools = tools.into_iter().map(|t| pins::pinned(t, id, &connection, store.clone())).collect();
        }
        let mut inserted = Vec::new();
        for tool in tools {
            let tool_id = tool.spec().id.clone();
            registry.insert(tool)?;
            inserted.push(tool_id);
        }
        Ok(inserted)
    }
}

/// Why resolved tools could not be added.
#[derive(Debug, thiserror::Error)]
pub enum ResolveError {
    /// No provider has this id.
    #[error("no tool provider has the id `{0}`")]
    UnknownProvider(String),
    /// The provider failed.
    #[error(transparent)]
    Provider(#[from] ProviderError),
    /// The registry refused a tool.
    #[error(transparent)]
    Registry(#[from] RegistryError),
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn ctx(v: Value) -> Map<String, Value> {
        v.as_object().unwrap().clone()
    }

    #[test]
    fn allow_lists_follow_the_empty_list_rules() {
        let all = AllowList::default();
        assert!(all.toolkit("anything") && all.tool("anything", "ANY_TOOL"));
        let none_of_github = AllowList::new(["github"]).tools("github", Vec::<String>::new());
        assert!(none_of_github.toolkit("github"));
        assert!(!none_of_github.tool("github", "GITHUB_GET_REPO"), "an empty tool list allows none");
        assert!(!none_of_github.tool("slack", "SLACK_SEND"), "a toolkit not listed is refused");
        let star = AllowList::new(["*"]);
        assert!(star.toolkit("gmail"));
        assert!(AllowList::new(["GitHub"]).toolkit("github"), "toolkit slugs compare without case");
        assert!(!AllowList::new(["git"]).toolkit("github"), "no star, no prefix match");
        assert!(AllowList::default().is_unrestricted());
        let mut set = AllowList::default().tools("github", ["GITHUB_GET_*"]);
        assert!(!set.is_unrestricted(), "a tool list filters");
        set.set_toolkits(["slack"]);
        assert!(!set.toolkit("github") && set.toolkit("slack"));
    }

    #[test]
    fn caller_supplied_scope_never_shares_by_accident() {
        let c = ctx(json!({"mastra__resourceId": "user-1"}));
        assert_eq!(connection_owner(Scope::CallerSupplied, Some("author"), &c, None).unwrap(), "user-1");
        assert_eq!(
            connection_owner(Scope::CallerSupplied, None, &ctx(json!({"resourceId": "u2"})), None).unwrap(),
            "u2"
        );
        let missing = connection_owner(Scope::CallerSupplied, Some("author"), &Map::new(), None).unwrap_err();
        assert!(missing.to_string().contains("resource id"), "{missing}");
        let blank = connection_owner(Scope::CallerSupplied, None, &ctx(json!({"mastra__resourceId": "  "})), None);
        assert!(blank.is_err());
        assert_eq!(
            connection_owner(Scope::CallerSupplied, None, &Map::new(), Some("default")).unwrap(),
            "default",
            "sharing is an explicit opt-in"
        );
        assert_eq!(connection_owner(Scope::PerAuthor, Some("author"), &c, None).unwrap(), "author");
        assert!(connection_owner(Scope::PerAuthor, None, &c, None).is_err());
    }

    struct Minimal(ProviderInfo);

    impl ToolProvider for Minimal {
        fn info(&self) -> &ProviderInfo {
            &self.0
        }
        fn list_tools(&self, _: ListToolsOptions) -> BoxFuture<'_, Result<ListResult<ToolInfo>, ProviderError>> {
            Box::pin(async { Ok(ListResult::empty()) })
        }
        fn resolve_tools(&self, slugs: Vec<String>, _: ResolveOptions) -> BoxFuture<'_, Result<ResolvedTools, ProviderError>> {
            Box::pin(async move {
                let mut out = BTreeMap::new();
                for s in slugs {
                    let tool = crate::DynamicTool::builder(s.clone(), format!("Remote {s}"))
                        .handler(|input, _cx| async move { Ok(input) })
                        .map_err(|e| ProviderError::Config(e.0))?;
                    out.insert(s, tool.into_tool());
                }
                Ok(out)
            })
        }
    }

    #[tokio::test]
    async fn optional_methods_say_not_supported_and_resolved_tools_join_the_registry() {
        let info = ProviderInfo {
            id: "mini".into(),
            name: "Mini".into(),
            description: None,
        };
        let p = Minimal(info);
        assert_eq!(p.display_name(), "Mini");
        assert_eq!(p.default_scope(), Scope::PerAuthor);
        let e = p.list_toolkits().await.unwrap_err();
        assert_eq!(e.to_string(), "the mini provider does not support `list_toolkits`");
        assert!(matches!(
            p.revoke_connection("c1").await,
            Err(ProviderError::NotSupported {
                method: "revoke_connection",
                ..
            })
        ));

        let mut providers = ProviderRegistry::new();
        providers.add(p);
        let registry = Registry::new();
        let ids = providers
            .resolve_into(&registry, "mini", vec!["Remote.Echo".into()], ResolveOptions::default())
            .await
            .unwrap();
        assert_eq!(ids, ["Remote.Echo"]);
        let out = registry
            .call("Remote.Echo", json!({"x": 1}), crate::CallOptions::default())
            .await
            .unwrap();
        assert_eq!(out.value(), json!({"x": 1}));
        assert!(matches!(
            providers
                .resolve_into(&registry, "mini", vec!["Remote.Echo".into()], ResolveOptions::default())
                .await,
            Err(ResolveError::Registry(_))
        ));
        assert!(matches!(
            providers.resolve_into(&registry, "nope", vec![], ResolveOptions::default()).await,
            Err(ResolveError::UnknownProvider(_))
        ));
    }
}
