//! Arcade's tools as ours: tool names in every accepted form ([`ArcadeName`]), the listings
//! (toolkits derived from the tools, allow-lists and search applied), resolution (definitions
//! fetched together, schemas built by `schema`), the user a tool runs as, and execution with
//! authorization links (a tool the user has not authorized returns a model-readable error
//! carrying the URL).
//!
//! Owns remote tools. Must not list, authorize or revoke connections (`connections`).

use std::collections::BTreeMap;
use std::sync::Arc;

use serde_json::{Map, Value, json};
use tool_core::provider::{
    ConnectionKind, ListResult, ListToolsOptions, Pagination, ProviderError, ResolveOptions, ResolveToolsOptions, ResolvedTools, Scope,
    ToolInfo, Toolkit, connection_owner,
};
use tool_core::{DynamicTool, ErrorKind, ToolCallInfo, ToolError};

use super::api::{self, AuthorizeRequest, ExecuteRequest, Execution, ExecutionOutput, MAX_LIMIT, ToolDefinition};
use super::schema::{input_schema, output_schema};
use super::{ArcadeToolProvider, PROVIDER, SHARED_USER_ID};
use crate::http::{Http, encode_segment};
use crate::owner::{caller_id, non_empty_id};

/// A tool name in any accepted form: `Toolkit.Tool`, `Toolkit.Tool@1.2.0`, `Toolkit_Tool`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(super) struct ArcadeName {
    pub(super) toolkit: String,
    pub(super) tool: String,
    pub(super) version: Option<String>,
}

impl ArcadeName {
    pub(super) fn parse(slug: &str) -> Option<Self> {
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

    /// `Toolkit.Tool`.
    pub(super) fn qualified(&self) -> String {
        format!("{}.{}", self.toolkit, self.tool)
    }
}

/// Where Arcade serves a tool's definition.
pub(super) fn definition_path(qualified_name: &str) -> String {
    format!("/v1/tools/{}", encode_segment(qualified_name))
}

impl ToolDefinition {
    /// As a listing shows it (none without a name): the slug is the qualified name.
    fn info(&self) -> Option<ToolInfo> {
        let name = self.name.clone()?;
        Some(ToolInfo {
            slug: self.qualified().unwrap_or_else(|| name.clone()),
            name,
            description: self.description.clone(),
            toolkit: self.toolkit_name().map(str::to_owned),
        })
    }
}

/// Page `page` of `per_page` items of an already filtered list.
fn paged<T>(all: Vec<T>, page: u32, per_page: u32) -> ListResult<T> {
    let total = all.len() as u64;
    let start = (u64::from(page - 1) * u64::from(per_page)).min(total) as usize;
    let data: Vec<T> = all.into_iter().skip(start).take(per_page as usize).collect();
    let has_more = (start + data.len()) < total as usize;
    ListResult {
        data,
        pagination: Some(Pagination {
            total: Some(total),
            page: Some(page),
            per_page: Some(per_page),
            has_more,
        }),
    }
}

// ----- listings ------------------------------------------------------------------------

impl ArcadeToolProvider {
    /// Whether the allow-lists let a tool through (by its name or its qualified name).
    pub(super) fn tool_allowed(&self, toolkit: &str, name: &str) -> bool {
        self.allow.tool(toolkit, name) || self.allow.tool(toolkit, &format!("{toolkit}.{name}"))
    }

    /// The allowed toolkits, derived from the tools (Arcade has no toolkit endpoint); one page.
    pub(super) async fn toolkits(&self) -> Result<ListResult<Toolkit>, ProviderError> {
        let mut toolkits: BTreeMap<String, Toolkit> = BTreeMap::new();
        for item in self.all_tools(None).await? {
            let Some(toolkit) = item.toolkit else { continue };
            let Some(name) = toolkit.name else { continue };
            if !self.allow.toolkit(&name) {
                continue;
            }
            toolkits.entry(name.clone()).or_insert_with(|| Toolkit {
                slug: name.clone(),
                name,
                description: toolkit.description,
                icon: None,
            });
        }
        let data: Vec<Toolkit> = toolkits.into_values().collect();
        let n = data.len() as u32;
        Ok(paged(data, 1, n))
    }

    /// The allowed tools, filtered and paginated. Without search or allow-lists a page is one
    /// request; with them every page is fetched (bounded) and filtered here.
    pub(super) async fn tools_listing(&self, options: ListToolsOptions) -> Result<ListResult<ToolInfo>, ProviderError> {
        if options.toolkit.as_deref().is_some_and(|t| !self.allow.toolkit(t)) {
            return Ok(ListResult::empty());
        }
        let page = options.page.unwrap_or(1).max(1);
        let per_page = options.per_page.unwrap_or(25).clamp(1, MAX_LIMIT);
        let search = options.search.as_deref().map(str::to_lowercase).filter(|s| !s.is_empty());
        if search.is_none() && self.allow.is_unrestricted() {
            let offset = u64::from(page - 1) * u64::from(per_page);
            let got = self.tools_page(options.toolkit.as_deref(), per_page, offset).await?;
            let n = got.items.len() as u64;
            let has_more = match got.total_count {
                Some(t) => offset + n < t,
                None => n == u64::from(per_page),
            };
            return Ok(ListResult {
                data: got.items.iter().filter_map(ToolDefinition::info).collect(),
                pagination: Some(Pagination {
                    total: got.total_count,
                    page: Some(page),
                    per_page: Some(per_page),
                    has_more,
                }),
            });
        }
        let matches = |t: &ToolInfo| {
            search
                .as_deref()
                .is_none_or(|s| t.slug.to_lowercase().contains(s) || t.description.as_deref().is_some_and(|d| d.to_lowercase().contains(s)))
        };
        let all: Vec<ToolInfo> = self
            .all_tools(options.toolkit.as_deref())
            .await?
            .iter()
            .filter_map(ToolDefinition::info)
            .filter(|t| self.tool_allowed(t.toolkit.as_deref().unwrap_or_default(), &t.name))
            .filter(matches)
            .collect();
        Ok(paged(all, page, per_page))
    }

    /// [`ToolProvider::get_tool_schema`](tool_core::provider::ToolProvider::get_tool_schema):
    /// an allowed tool's input schema.
    pub(super) async fn tool_schema(&self, slug: &str) -> Result<Option<Value>, ProviderError> {
        let Some(name) = ArcadeName::parse(slug) else { return Ok(None) };
        if !self.tool_allowed(&name.toolkit, &name.tool) {
            return Ok(None);
        }
        let def = self.definitions.fetch(&self.http, &definition_path(&name.qualified())).await?;
        Ok(def.as_ref().map(input_schema))
    }
}

// ----- resolution --------------------------------------------------------------------------

/// What binds a VNext tool: the user bucket it always runs as and its description override.
pub(super) struct Bound {
    user: String,
    description: Option<String>,
}

impl ArcadeToolProvider {
    /// Runnable tools for the slugs Arcade knows and the allow-lists let through (others are
    /// left out with a warning); `bound` says which user and description a slug's tool keeps.
    pub(super) async fn resolve_each(
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
        def: &ToolDefinition,
        options: &ResolveOptions,
        version: Option<String>,
        bound: Option<Bound>,
    ) -> Result<Arc<dyn tool_core::Tool>, ProviderError> {
        let id = def
            .qualified()
            .ok_or_else(|| self.http.transport("a tool definition has no `qualified_name`".into()))?;
        let (fixed_user, description_override) = match bound {
            Some(b) => (Some(b.user), b.description),
            None => (None, None),
        };
        let description = description_override
            .filter(|d| !d.trim().is_empty())
            .or_else(|| def.description.clone().filter(|d| !d.trim().is_empty()))
            .unwrap_or_else(|| format!("Arcade tool {id}"));
        let mut builder = DynamicTool::builder(id.clone(), description).input_schema(input_schema(def));
        if let Some(output) = output_schema(def) {
            builder = builder.output_schema(output);
        }
        builder = builder.with_spec(|s| s.title = def.name.clone());
        let toolkit = def
            .toolkit_name()
            .map(str::to_owned)
            .or_else(|| id.split_once('.').map(|(t, _)| t.to_owned()));
        builder = self.placement.apply(builder, toolkit.as_deref().unwrap_or_default());
        let runner = Arc::new(Runner {
            http: self.http.clone(),
            tool_name: id,
            version,
            user_id: options.user_id.clone().or_else(|| self.user_id.clone()),
            resolve_context: options.request_context.clone(),
            allow_shared_user: self.allow_shared_user,
            fixed_user,
        });
        let tool = builder
            .handler(move |input, cx| {
                let runner = runner.clone();
                let user = runner.user_for(cx.call(), cx.raw_request_context());
                async move { runner.run(input, user?).await }
            })
            .map_err(|e| ProviderError::Config(e.0))?;
        Ok(tool.into_tool())
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

    /// [`ToolProvider::resolve_tools_vnext`](tool_core::provider::ToolProvider::resolve_tools_vnext):
    /// every tool bound to the bucket [`vnext_bucket`](Self::vnext_bucket) decides, with the
    /// `tool_meta` descriptions.
    pub(super) async fn resolve_vnext(&self, options: ResolveToolsOptions) -> Result<ResolvedTools, ProviderError> {
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
    }
}

// ----- execution ---------------------------------------------------------------------------

/// One resolved remote tool: what it calls and as whom.
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

/// What one execution attempt came to.
enum Attempt {
    /// The result (`output.value`).
    Done(Value),
    /// Authorization was missing and is now complete: run again.
    Authorized,
}

impl Runner {
    /// The bucket a VNext tool was resolved for; else the caller's resource id, else the
    /// resolve-time context's, else the configured user, else the shared `default` only when
    /// allowed.
    fn user_for(&self, call: &ToolCallInfo, context: &Map<String, Value>) -> Result<String, ToolError> {
        if let Some(user) = &self.fixed_user {
            return Ok(user.clone());
        }
        caller_id(call, context, &self.resolve_context)
            .or_else(|| non_empty_id(self.user_id.as_deref()))
            .or_else(|| self.allow_shared_user.then(|| SHARED_USER_ID.to_owned()))
            .ok_or_else(|| {
                ToolError::new(format!(
                    "Arcade tool `{}`: the caller is not isolated: no resource id in the request context (`mastra__resourceId`), no user id configured, and the shared `{SHARED_USER_ID}` user is not allowed",
                    self.tool_name
                ))
            })
    }

    /// Runs the tool as `user_id`; a missing authorization is started once (and the call
    /// retried when it turns out complete).
    async fn run(&self, input: Value, user_id: String) -> Result<Value, ToolError> {
        for _ in 0..2 {
            match self.attempt(&input, &user_id).await? {
                Attempt::Done(value) => return Ok(value),
                Attempt::Authorized => continue,
            }
        }
        Err(ToolError::new(format!(
            "Arcade tool `{}`: authorization was reported complete but execution still asks for it",
            self.tool_name
        )))
    }

    async fn attempt(&self, input: &Value, user_id: &str) -> Result<Attempt, ToolError> {
        let fail = |e: ProviderError| ToolError::new(e.to_string());
        let body = ExecuteRequest {
            tool_name: &self.tool_name,
            input,
            user_id,
            tool_version: self.version.as_deref(),
        };
        let reply = self
            .http
            .request(reqwest::Method::POST, "/v1/tools/execute", &[], Some(&body))
            .await
            .map_err(fail)?;
        if reply.status == 403 {
            let (name, message) = api::envelope(&reply.bytes);
            if name.as_deref() == Some("tool_authorization_required") || message.to_lowercase().contains("authorization required") {
                self.authorize(user_id).await?;
                return Ok(Attempt::Authorized);
            }
        }
        let out: Execution = self.http.decode(reply).map_err(fail)?;
        self.outcome(out.output.unwrap_or_default(), user_id).await
    }

    /// An execution's output: its value, its error (model-readable), or an authorization to
    /// start.
    async fn outcome(&self, output: ExecutionOutput, user_id: &str) -> Result<Attempt, ToolError> {
        if let Some(err) = output.error {
            let message = err.message.as_deref().unwrap_or("the tool failed without a message");
            let message = match err.additional_prompt_content.as_deref() {
                Some(extra) if !extra.trim().is_empty() => format!("{message}\n{extra}"),
                _ => message.to_owned(),
            };
            let details = json!({"kind": err.kind, "can_retry": err.can_retry,
                "retry_after_ms": err.retry_after_ms, "provider": PROVIDER});
            return Err(ToolError::with_details(self.http.scrub(message), details).with_kind_of(ErrorKind::Execution));
        }
        let pending = output.authorization.filter(|a| a.status.as_deref() != Some("completed"));
        match (pending, output.value) {
            (Some(auth), None) => {
                if let Some(url) = &auth.url {
                    return Err(self.auth_error(url, auth.id.as_deref()));
                }
                self.authorize(user_id).await?;
                Ok(Attempt::Authorized)
            }
            (_, value) => Ok(Attempt::Done(value.unwrap_or(Value::Null))),
        }
    }

    /// Starts authorization: `Ok` when it is already complete (retry the call), otherwise the
    /// model-readable error carrying the URL.
    async fn authorize(&self, user_id: &str) -> Result<(), ToolError> {
        let body = AuthorizeRequest {
            tool_name: &self.tool_name,
            user_id,
            tool_version: None,
        };
        let out: api::Authorization = self.http.post("/v1/tools/authorize", &body).await.map_err(|e| {
            ToolError::new(format!(
                "Arcade tool `{}` needs authorization, and starting it failed: {e}",
                self.tool_name
            ))
        })?;
        if out.status.as_deref() == Some("completed") {
            return Ok(());
        }
        match &out.url {
            Some(url) => Err(self.auth_error(url, out.id.as_deref())),
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
}
