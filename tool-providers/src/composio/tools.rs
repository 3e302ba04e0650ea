//! Composio's tools as ours: the listings (allow-lists applied, our 1-based pages mapped onto
//! Composio's cursors), resolution (definitions fetched together, each remote tool turned into
//! a [`DynamicTool`] with Composio's schemas), who a resolved tool runs as ([`Binding`]), and
//! execution, with the model-facing errors (a missing connected account tells the model how
//! the user connects).
//!
//! Owns remote tools. Must not start authorizations or list accounts beyond the owner check of
//! a pinned account (`accounts`), nor write the connection-management tools (`meta`).

use std::collections::{BTreeMap, BTreeSet};
use std::sync::Arc;

use serde_json::{Map, Value, json};
use tool_core::provider::{
    ConnectionKind, ListResult, ListToolsOptions, Pagination, ProviderError, ResolveOptions, ResolveToolsOptions, ResolvedTools, Scope,
    ToolInfo, Toolkit, connection_owner,
};
use tool_core::{DynamicTool, ErrorKind, Tool, ToolCallInfo, ToolError};

use super::api::{self, ExecuteRequest, Execution};
use super::meta::{is_meta_tool, meta_tool};
use super::{ComposioToolProvider, MANAGE_CONNECTIONS, PROVIDER, SHARED_USER_ID};
use crate::http::{Reply, encode_segment};
use crate::owner::{caller_id, non_empty_id};

/// The largest page a tool listing answers.
const MAX_PER_PAGE: u32 = 1000;

/// The toolkit an `UPPER_SNAKE` slug starts with, lower-cased (`GMAIL_SEND_EMAIL` → `gmail`);
/// none for any other slug.
pub(super) fn slug_toolkit(slug: &str) -> Option<String> {
    let upper_snake = slug.bytes().all(|b| b.is_ascii_uppercase() || b.is_ascii_digit() || b == b'_');
    match slug.split_once('_') {
        Some((t, rest)) if upper_snake && !t.is_empty() && !rest.is_empty() => Some(t.to_ascii_lowercase()),
        _ => None,
    }
}

// ----- listings ------------------------------------------------------------------------

impl api::Toolkit {
    /// As ours (none without a slug): the name defaults to the slug.
    fn into_toolkit(self) -> Option<Toolkit> {
        let slug = self.slug?;
        let meta = self.meta.unwrap_or_default();
        Some(Toolkit {
            name: self.name.unwrap_or_else(|| slug.clone()),
            slug,
            description: meta.description,
            icon: meta.logo,
        })
    }
}

impl api::Tool {
    /// As a listing shows it (none without a slug): the name defaults to the slug.
    fn info(&self) -> Option<ToolInfo> {
        let slug = self.slug.clone()?;
        Some(ToolInfo {
            name: self.name.clone().unwrap_or_else(|| slug.clone()),
            slug,
            description: self.description.clone(),
            toolkit: self.toolkit.as_ref().and_then(|t| t.slug.clone()),
        })
    }
}

/// Page `page` of `per_page` items of an already filtered list.
fn paged<T>(all: Vec<T>, page: u32, per_page: u32) -> ListResult<T> {
    let total = all.len();
    let start = ((page - 1) as usize).saturating_mul(per_page as usize).min(total);
    let data: Vec<T> = all.into_iter().skip(start).take(per_page as usize).collect();
    let has_more = start + data.len() < total;
    ListResult {
        data,
        pagination: Some(Pagination {
            total: Some(total as u64),
            page: Some(page),
            per_page: Some(per_page),
            has_more,
        }),
    }
}

impl ComposioToolProvider {
    /// The allowed toolkits, all in one page.
    pub(super) async fn toolkits(&self) -> Result<ListResult<Toolkit>, ProviderError> {
        let all: Vec<api::Toolkit> = self.all("/toolkits", &[]).await?;
        let data: Vec<Toolkit> = all
            .into_iter()
            .filter_map(api::Toolkit::into_toolkit)
            .filter(|t| self.allow.toolkit(&t.slug))
            .collect();
        let n = data.len() as u32;
        Ok(paged(data, 1, n))
    }

    /// The allowed tools, filtered and paginated. Without allow-lists a page is one request;
    /// with them every page is fetched (bounded) and filtered here.
    pub(super) async fn tools_listing(&self, options: ListToolsOptions) -> Result<ListResult<ToolInfo>, ProviderError> {
        let page = options.page.unwrap_or(1).max(1);
        let per_page = options.per_page.unwrap_or(25).clamp(1, MAX_PER_PAGE);
        if options.toolkit.as_deref().is_some_and(|t| !self.allow.toolkit(t)) {
            return Ok(paged(Vec::new(), page, per_page));
        }
        let mut query = Vec::new();
        if let Some(t) = options.toolkit.as_deref().filter(|t| !t.trim().is_empty()) {
            query.push(("toolkit_slug", t.to_ascii_lowercase()));
        }
        if let Some(s) = options.search.as_deref().filter(|s| !s.trim().is_empty()) {
            query.push(("query", s.to_owned()));
        }
        if self.allow.is_unrestricted() {
            let got = self.nth_page::<api::Tool>("/tools", &query, page, per_page).await?;
            return Ok(ListResult {
                data: got.items.iter().filter_map(api::Tool::info).collect(),
                pagination: Some(Pagination {
                    total: got.total(),
                    page: Some(page),
                    per_page: Some(per_page),
                    has_more: got.next().is_some(),
                }),
            });
        }
        let all: Vec<api::Tool> = self.all("/tools", &query).await?;
        let allowed: Vec<ToolInfo> = all
            .iter()
            .filter_map(api::Tool::info)
            .filter(|t| self.allow.tool(t.toolkit.as_deref().unwrap_or_default(), &t.slug))
            .collect();
        Ok(paged(allowed, page, per_page))
    }

    /// Where Composio serves a tool's definition.
    fn definition_path(&self, slug: &str) -> String {
        self.path(&format!("/tools/{}", encode_segment(slug)))
    }

    /// [`ToolProvider::get_tool_schema`](tool_core::provider::ToolProvider::get_tool_schema):
    /// an allowed tool's input schema.
    pub(super) async fn tool_schema(&self, slug: &str) -> Result<Option<Value>, ProviderError> {
        if is_meta_tool(slug) {
            return Ok(self.meta_allowed(slug).then(|| super::meta::meta_schema(slug)).flatten());
        }
        if slug.is_empty() {
            return Ok(None);
        }
        let Some(def) = self.definitions.fetch(&self.http, &self.definition_path(slug)).await? else {
            return Ok(None);
        };
        Ok(self.allow.tool(def.toolkit_slug(), slug).then(|| input_schema(&def)))
    }
}

// ----- who a tool runs as ----------------------------------------------------------------

/// Who executions run as.
#[derive(Debug, Clone)]
pub(super) enum UserRule {
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
pub(super) struct Binding {
    pub(super) user: UserRule,
    pub(super) connected_account_id: Option<String>,
}

impl Binding {
    /// The user bucket a call runs as.
    pub(super) fn user_for(
        &self,
        provider: &ComposioToolProvider,
        call: &ToolCallInfo,
        context: &Map<String, Value>,
        tool: &str,
    ) -> Result<Option<String>, ToolError> {
        match &self.user {
            UserRule::Fixed(u) => Ok(Some(u.clone())),
            UserRule::None => Ok(None),
            UserRule::Caller { resolve_context, fallback } => {
                caller_id(call, context, resolve_context)
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

impl ComposioToolProvider {
    /// Who tools resolved through the legacy surface run as, per the default scope.
    pub(super) fn legacy_binding(&self, options: &ResolveOptions) -> Result<Binding, ProviderError> {
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

    /// Who tools resolved over one connection run as, per its kind and scope.
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

    // ----- resolution -------------------------------------------------------------------

    /// [`ToolProvider::resolve_tools_vnext`](tool_core::provider::ToolProvider::resolve_tools_vnext):
    /// an account pinned for a known user is checked now; one pinned for callers at each
    /// caller's first call. `tool_meta` descriptions replace Composio's.
    pub(super) async fn resolve_vnext(&self, options: ResolveToolsOptions) -> Result<ResolvedTools, ProviderError> {
        let binding = self.vnext_binding(&options)?;
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
        self.resolve(options.tool_slugs, binding, &descriptions).await
    }

    /// Runnable tools for the slugs Composio knows and the allow-lists let through (others are
    /// left out with a log line), all bound the same way.
    pub(super) async fn resolve(
        &self,
        slugs: Vec<String>,
        binding: Binding,
        descriptions: &BTreeMap<String, String>,
    ) -> Result<ResolvedTools, ProviderError> {
        let me = Arc::new(self.clone());
        let mut seen = BTreeSet::new();
        let slugs: Vec<String> = slugs
            .iter()
            .map(|s| s.trim().to_owned())
            .filter(|s| !s.is_empty() && seen.insert(s.clone()))
            .collect();
        // Every definition first, several at a time (a tool's toolkit, and so whether the
        // allow-list lets it through, is only known from its definition).
        let remote: Vec<&String> = slugs.iter().filter(|s| !is_meta_tool(s)).collect();
        let paths: Vec<String> = remote.iter().map(|s| self.definition_path(s)).collect();
        let fetched = self.definitions.fetch_all(&self.http, paths).await?;
        let mut definitions: BTreeMap<&String, Option<api::Tool>> = remote.into_iter().zip(fetched).collect();
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
            if !self.allow.tool(def.toolkit_slug(), &slug) {
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

// ----- execution -------------------------------------------------------------------------

/// One resolved remote tool: what it calls and as whom.
struct Remote {
    provider: Arc<ComposioToolProvider>,
    slug: String,
    toolkit: String,
    version: Option<String>,
    binding: Binding,
}

impl Remote {
    fn failed(&self, what: &str, e: impl std::fmt::Display) -> ToolError {
        ToolError::new(format!("Composio tool `{}` {what}: {e}", self.slug)).with_kind_of(ErrorKind::Execution)
    }

    async fn run(&self, arguments: Value, user: Option<String>) -> Result<Value, ToolError> {
        let p = &self.provider;
        if let (Some(account), Some(u)) = (&self.binding.connected_account_id, &user) {
            let refusal = p
                .pinned_account_refusal(account, u, &self.toolkit)
                .await
                .map_err(|e| self.failed("could not check its connected account", e))?;
            if let Some(why) = refusal {
                // The caller learns only that the account is not theirs to use.
                tracing::warn!(target: "tool_providers::composio", tool = %self.slug, %why, "pinned connected account refused");
                return Err(self.connect_error(Some(u)));
            }
        }
        let body = ExecuteRequest {
            arguments: &arguments,
            user_id: user.as_deref(),
            connected_account_id: self.binding.connected_account_id.as_deref(),
            version: self.version.as_deref(),
        };
        let path = p.path(&format!("/tools/execute/{}", encode_segment(&self.slug)));
        let reply = p
            .http
            .request(reqwest::Method::POST, &path, &[], Some(&body))
            .await
            .map_err(|e| self.failed("could not run", e))?;
        if !(200..300).contains(&reply.status) {
            return Err(self.refused(reply, user.as_deref()));
        }
        let out: Execution = p
            .http
            .decode(reply)
            .map_err(|e| ToolError::new(format!("Composio tool `{}`: {e}", self.slug)).with_kind_of(ErrorKind::Execution))?;
        if out.successful == Some(true) {
            return Ok(out.data);
        }
        let message = match &out.error {
            Value::String(s) if !s.trim().is_empty() => s.clone(),
            Value::Null => "the tool failed without a message".into(),
            other => other.to_string(),
        };
        if missing_account(400, None, &message) {
            return Err(self.connect_error(user.as_deref()));
        }
        Err(ToolError::with_details(
            p.http.scrub(format!("Composio tool `{}` failed: {message}", self.slug)),
            json!({"provider": PROVIDER, "tool": self.slug, "log_id": out.log_id, "data": out.data}),
        )
        .with_kind_of(ErrorKind::Execution))
    }

    /// An error status: the connect hint when the user has no usable account, else the
    /// platform's error.
    fn refused(&self, reply: Reply, user: Option<&str>) -> ToolError {
        let p = &self.provider;
        let (code, message) = api::envelope(&reply.bytes);
        if missing_account(reply.status, code.as_deref(), &message) {
            return self.connect_error(user);
        }
        let e = p
            .http
            .decode::<serde::de::IgnoredAny>(reply)
            .err()
            .unwrap_or_else(|| p.http.transport("unexpected answer".into()));
        ToolError::with_details(
            format!("Composio tool `{}` failed: {e}", self.slug),
            json!({"provider": PROVIDER, "tool": self.slug, "code": code}),
        )
        .with_kind_of(ErrorKind::Execution)
    }

    /// The model-facing "connect first" error: what is missing and how the user connects.
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

// ----- definitions → tools ----------------------------------------------------------------

/// The output schema a tool's result (`data`) can be checked against: Composio wraps results
/// as `{data, error, successful}`, so the schema of `data`; only a plain object schema (a
/// union or reference could not be checked reliably).
fn usable_output_schema(def: &api::Tool) -> Option<Value> {
    let out = def.output_parameters.as_ref().filter(|o| o.is_object())?;
    let schema = match out.pointer("/properties/data") {
        Some(data) if out.pointer("/properties/successful").is_some() => data,
        _ => out,
    };
    let obj = schema.as_object()?;
    let is_object = obj.get("type").and_then(Value::as_str) == Some("object");
    let union = ["anyOf", "oneOf", "allOf", "not", "$ref"].iter().any(|k| obj.contains_key(*k));
    (is_object && !union).then(|| schema.clone())
}

/// A tool's input schema, its root always an object.
fn input_schema(def: &api::Tool) -> Value {
    match &def.input_parameters {
        Some(Value::Object(o)) if !o.is_empty() => {
            let mut o = o.clone();
            o.insert("type".into(), json!("object"));
            Value::Object(o)
        }
        _ => json!({"type": "object", "properties": {}}),
    }
}

/// A remote tool as a [`DynamicTool`]: Composio's schemas (an output schema the validator
/// cannot use is dropped), its description unless overridden, execution as `binding` says.
fn remote_tool(
    provider: &Arc<ComposioToolProvider>,
    def: &api::Tool,
    binding: Binding,
    description: Option<String>,
) -> Result<Arc<dyn Tool>, ProviderError> {
    let slug = def
        .slug
        .clone()
        .ok_or_else(|| provider.http.transport("a tool definition has no `slug`".into()))?;
    let description = description
        .or_else(|| def.description.clone().filter(|d| !d.trim().is_empty()))
        .unwrap_or_else(|| format!("Composio tool {slug}"));
    let remote = Arc::new(Remote {
        provider: provider.clone(),
        toolkit: def.toolkit_slug().to_owned(),
        version: def.version.clone().filter(|v| !v.is_empty()),
        slug: slug.clone(),
        binding,
    });
    let build = |output: Option<Value>| {
        let mut builder = DynamicTool::builder(slug.clone(), description.clone()).input_schema(input_schema(def));
        if let Some(o) = output {
            builder = builder.output_schema(o);
        }
        if let Some(t) = &def.name {
            builder = builder.title(t.clone());
        }
        builder = provider.placement.apply(builder, &remote.toolkit);
        let remote = remote.clone();
        builder.handler(move |input, cx| {
            let remote = remote.clone();
            let user = remote
                .binding
                .user_for(&remote.provider, cx.call(), cx.raw_request_context(), &remote.slug);
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

#[cfg(test)]
mod tests {
    use super::*;

    fn tool(v: Value) -> api::Tool {
        serde_json::from_value(v).unwrap()
    }

    #[test]
    fn missing_accounts_are_told_apart_from_other_errors() {
        assert!(missing_account(400, Some("1803"), ""));
        assert!(missing_account(404, Some("CONNECTED_ACCOUNT_NOT_FOUND"), ""));
        assert!(missing_account(404, Some("ConnectedAccountNotFound"), ""));
        assert!(!missing_account(401, Some("1803"), "no connected account"));
        assert!(!missing_account(500, None, "no connected account"));
    }

    #[test]
    fn output_schemas_are_kept_only_when_usable() {
        let wrapped = tool(json!({"output_parameters": {"type": "object", "properties": {
            "data": {"type": "object", "properties": {"id": {"type": "string"}}}, "successful": {"type": "boolean"}}}}));
        assert_eq!(
            usable_output_schema(&wrapped),
            Some(json!({"type": "object", "properties": {"id": {"type": "string"}}}))
        );
        let union = tool(json!({"output_parameters": {"anyOf": [{"type": "object"}, {"type": "string"}]}}));
        assert_eq!(usable_output_schema(&union), None);
        assert_eq!(usable_output_schema(&tool(json!({"output_parameters": {}}))), None);
        assert_eq!(
            input_schema(&tool(json!({"input_parameters": {}}))),
            json!({"type": "object", "properties": {}})
        );
    }

    #[test]
    fn upper_snake_slugs_name_their_toolkit() {
        assert_eq!(slug_toolkit("GMAIL_SEND_EMAIL").as_deref(), Some("gmail"));
        assert_eq!(slug_toolkit("COMPOSIO_MANAGE_CONNECTIONS").as_deref(), Some("composio"));
        assert_eq!(slug_toolkit("lowercase_slug"), None);
        assert_eq!(slug_toolkit("GMAIL"), None);
        assert_eq!(slug_toolkit("_GMAIL"), None);
    }
}
