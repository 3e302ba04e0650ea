//! The MCP server: any registry served over stdio or Streamable HTTP, on `rmcp`.
//!
//! [`McpServer`] is the `rmcp` handler: `tools/list` with cursor pagination, `tools/call`
//! through the [`Runtime`](crate::runtime::Runtime) — validation, approval, suspension,
//! background tasks, views — with content from `to_model_output` and `structuredContent` from
//! the raw output, logging levels, progress, cancellation, `list_changed`. Approval and
//! suspension ask the client's user through elicitation when it can (a blocking request on
//! revisions up to 2025-11-25, an input-required result on 2026-07-28); otherwise (a client
//! without elicitation, or a request without a session: stateless HTTP before 2026-07-28) the
//! result says how to continue the call from the `toolsmith` command line. A tool that elicits or
//! samples mid-call on 2026-07-28 is parked while its question travels as an input-required
//! result, and goes on when the client calls again with the answer. Prompts, resources and
//! completion come from an optional extra handler.
//!
//! This module holds only the `ServerHandler` impl, each method handing off to the module that
//! owns its concern:
//!
//! - `server`: [`McpConfig`], [`McpServer`] and what its sessions share;
//! - `listing`: `tools/list` (per-tool cached entries, paging) and `list_changed`;
//! - `caching`: the 2026-07-28 caching hints (`ttlMs`, `cacheScope`) of `tools/list`;
//! - `session`: a session's log level and call slots, a call's cancellation;
//! - `call`: running a call and mapping its `Outcome` to the answer;
//! - `call_meta`: a call's `_meta` for toolsmith: its idempotency key, a signed decision;
//! - `ask`: asking the client's user to approve or resume a waiting call;
//! - `parked`: 2026-07-28 runs waiting for the answer to their tool's question;
//! - `tool_search`: with [`McpConfig::tool_search`], deferred tools listed once a
//!   `search_tools` call loads them (per session, or named in a request's `_meta`);
//! - `tasks`: the tasks extension (2026-07-28): calls of background tools as durable tasks,
//!   `tasks/get`, `tasks/update`, `tasks/cancel`;
//! - `convert`: `ToolSpec`, `ModelOutput` and `ToolOutput` as `rmcp` types (within the call's
//!   model-output budget);
//! - [`results`]: full results of cut calls, read back as `toolsmith://results/<call-id>`;
//! - `handle`: the per-call handle a tool sees as `cx.mcp()`;
//! - `fairness`: per-caller limits of the HTTP server (calls at once, calls per second) and
//!   the permit a call holds while it runs;
//! - `gate`: who may use the HTTP endpoint (static token, OAuth), Protected Resource Metadata;
//! - `identity`: who is calling (the request's [`Caller`](crate::Caller)) and the scope check's text;
//! - [`oauth`] (feature `oauth`): the HTTP server as an OAuth 2.1 resource server;
//! - [`http`] and [`stdio`]: the transports; `listen` (HTTP connections within limits),
//!   `activity` (what a connection is doing, for its idle timeout), `session_cap` (the cap
//!   on live HTTP sessions) and `guard` (what a request must pass before rmcp sees it: also
//!   the stdio transport's message checks) serve `http`.

#![allow(deprecated)] // MCP logging is deprecated by SEP-2577 but still in use.

mod activity;
mod ask;
mod body;
mod caching;
mod call;
mod call_meta;
mod convert;
mod execution;
mod fairness;
mod gate;
mod guard;
mod handle;
mod health;
pub mod http;
mod identity;
mod listen;
mod listing;
#[cfg(feature = "oauth")]
#[cfg_attr(docsrs, doc(cfg(feature = "oauth")))]
pub mod oauth;
mod parked;
mod relay;
pub mod results;
mod server;
mod session;
mod session_cap;
mod shared_service;
pub mod stdio;
mod tasks;
#[cfg(feature = "tls")]
#[cfg_attr(docsrs, doc(cfg(feature = "tls")))]
pub mod tls;
mod tool_search;

use rmcp::model::{
    CallToolRequestParams, CallToolResponse, CancelTaskParams, CompleteRequestParams, CompleteResult, CustomRequest, CustomResult,
    GetPromptRequestParams, GetPromptResponse, GetTaskParams, GetTaskResult, Implementation, ListPromptsResult,
    ListResourceTemplatesResult, ListResourcesResult, ListToolsResult, PaginatedRequestParams, ReadResourceRequestParams,
    ReadResourceResponse, ServerCapabilities, ServerConfig, SetLevelRequestParams, SubscribeRequestParams, SubscriptionFilter,
    Tool as McpTool, UnsubscribeRequestParams, UpdateTaskParams,
};
use rmcp::service::{NotificationContext, RequestContext, RoleServer, SubscriptionContext};
use rmcp::{ErrorData, ServerHandler};

pub use caching::{FIXED_TOOLS_TTL, ListCaching};
pub use call_meta::{DECISION_META, IDEMPOTENCY_KEY_META, MAX_IDEMPOTENCY_KEY};
pub(crate) use server::SESSIONLESS;
pub use server::{McpConfig, McpServer, NoExtras};
pub use tool_search::LOADED_META;

/// Client requests `rmcp` parses into typed params.
const STANDARD_METHODS: [&str; 15] = [
    "initialize",
    "ping",
    "server/discover",
    "tools/list",
    "tools/call",
    "logging/setLevel",
    "prompts/list",
    "prompts/get",
    "resources/list",
    "resources/templates/list",
    "resources/read",
    "resources/subscribe",
    "resources/unsubscribe",
    "completion/complete",
    "subscriptions/listen",
];

/// Methods 2026-07-28 removed (SEP-2575: the handshake and the session's state are gone, each
/// request carries its own `_meta`): a 2026-07-28 request for one is answered as for any
/// method the server does not have (-32601, which the HTTP transport sends as 404), while
/// peers of earlier revisions keep them.
const REMOVED_IN_2026: [&str; 5] = [
    "initialize",
    "ping",
    "logging/setLevel",
    "resources/subscribe",
    "resources/unsubscribe",
];

/// The error of a method this request's revision does not have.
fn method_not_found(method: &str) -> ErrorData {
    ErrorData::new(
        rmcp::model::ErrorCode::METHOD_NOT_FOUND,
        format!("`{method}` is not a method of MCP 2026-07-28."),
        None,
    )
}

impl<E: ServerHandler + Clone> McpServer<E> {
    /// The server's name, version, instructions and capabilities: the tools' and logging's,
    /// the extras' prompts, resources and completion, and tasks when the runtime keeps them.
    fn server_info(&self) -> ServerConfig {
        let extra = self.extras.get_info().capabilities;
        let mut caps = ServerCapabilities::builder()
            .enable_logging()
            .enable_tools()
            .enable_tool_list_changed()
            .build();
        caps.prompts = extra.prompts;
        // Cut results are read as resources (`results`), whether or not the extras have any.
        caps.resources = Some(extra.resources.unwrap_or_default());
        caps.completions = extra.completions;
        if self.shared.runtime.has_task_store() {
            // Tools that opted into the background run as tasks (`tasks`) on 2026-07-28.
            let extensions = caps.extensions.get_or_insert_with(Default::default);
            extensions.insert(rmcp::model::TASKS_EXTENSION_ID.to_owned(), Default::default());
        }
        let mut info = ServerConfig::new(caps).with_server_info(Implementation::new(&self.shared.config.name, &self.shared.config.version));
        if let Some(i) = &self.shared.config.instructions {
            info = info.with_instructions(i.clone());
        }
        info
    }
}

impl<E: ServerHandler + Clone> ServerHandler for McpServer<E> {
    fn get_info(&self) -> ServerConfig {
        self.info.get_or_init(|| self.server_info()).clone()
    }

    async fn list_tools(
        &self,
        request: Option<PaginatedRequestParams>,
        ctx: RequestContext<RoleServer>,
    ) -> Result<ListToolsResult, ErrorData> {
        let caller = identity::of(&ctx);
        let listing = self.listing()?;
        let (cursor, meta) = request.map_or((None, None), |r| (r.cursor, r.meta));
        let loaded = if self.searching() {
            let metas = tool_search::metas(&ctx, meta.as_ref().map(|m| &*m.0));
            Some(self.loaded(&listing, &ctx, metas)?)
        } else {
            None
        };
        let mut page = self.list_page(&listing, cursor.as_deref(), caller, loaded.as_ref())?;
        if server::modern(&ctx) {
            // A caller's identity (its listing may be filtered), any required token or tool
            // search (the listing depends on what the request loaded): private.
            let private = caller.is_some() || caching::authorized(&ctx) || loaded.is_some();
            self.shared.config.list_caching.apply(&mut page, private);
        }
        Ok(page)
    }

    fn get_tool(&self, name: &str) -> Option<McpTool> {
        self.listing().ok()?.tool(name).cloned()
    }

    async fn call_tool(&self, request: CallToolRequestParams, ctx: RequestContext<RoleServer>) -> Result<CallToolResponse, ErrorData> {
        // Boxed, like every handler whose future is large: rmcp spawns each request's handler
        // as a task whose future is as large as the largest of them, moved several times as it
        // is spawned (most of a call's cost before they were boxed).
        // The caller's place among its running calls (over HTTP with a concurrency limit) is
        // held until the call is answered, whichever way this future ends.
        let _permit = fairness::admitted(&ctx)?;
        Box::pin(self.call(request, &ctx)).await
    }

    async fn get_task(&self, request: GetTaskParams, ctx: RequestContext<RoleServer>) -> Result<GetTaskResult, ErrorData> {
        Box::pin(self.get_task(&request.task_id, &ctx)).await.map(GetTaskResult::new)
    }

    async fn update_task(&self, request: UpdateTaskParams, ctx: RequestContext<RoleServer>) -> Result<(), ErrorData> {
        Box::pin(self.update_task(&request.task_id, &request.input_responses, &ctx)).await
    }

    async fn cancel_task(&self, request: CancelTaskParams, ctx: RequestContext<RoleServer>) -> Result<(), ErrorData> {
        Box::pin(self.cancel_task(&request.task_id, &ctx)).await
    }

    async fn set_level(&self, request: SetLevelRequestParams, ctx: RequestContext<RoleServer>) -> Result<(), ErrorData> {
        if server::modern(&ctx) {
            return Err(method_not_found("logging/setLevel"));
        }
        self.session.set_level(request.level);
        Ok(())
    }

    async fn on_initialized(&self, ctx: NotificationContext<RoleServer>) {
        // Sessions of older revisions hear about tool changes as notifications.
        self.notify_list_changes(ctx.peer);
    }

    fn accepted_subscription_filter(&self, _requested: &SubscriptionFilter) -> Option<SubscriptionFilter> {
        // Called for each `subscriptions/listen` before its acknowledgment is sent.
        self.shared.note_listen();
        Some(SubscriptionFilter::builder().tools_list_changed().build())
    }

    async fn listen(&self, cx: SubscriptionContext) -> Result<(), ErrorData> {
        Box::pin(self.stream_list_changes(cx)).await;
        Ok(())
    }

    async fn on_custom_request(&self, request: CustomRequest, ctx: RequestContext<RoleServer>) -> Result<CustomResult, ErrorData> {
        // rmcp hands a standard request whose params do not parse here, as a custom one; its
        // default would call the method unknown (-32601).
        if server::modern(&ctx) && REMOVED_IN_2026.contains(&request.method.as_str()) {
            return Err(method_not_found(&request.method));
        }
        if STANDARD_METHODS.contains(&request.method.as_str()) {
            return Err(ErrorData::invalid_params(
                format!("The params of `{}` are missing or not valid.", request.method),
                None,
            ));
        }
        self.extras.on_custom_request(request, ctx).await
    }

    async fn complete(&self, request: CompleteRequestParams, ctx: RequestContext<RoleServer>) -> Result<CompleteResult, ErrorData> {
        self.extras.complete(request, ctx).await
    }

    async fn list_prompts(
        &self,
        request: Option<PaginatedRequestParams>,
        ctx: RequestContext<RoleServer>,
    ) -> Result<ListPromptsResult, ErrorData> {
        self.extras.list_prompts(request, ctx).await
    }

    async fn get_prompt(&self, request: GetPromptRequestParams, ctx: RequestContext<RoleServer>) -> Result<GetPromptResponse, ErrorData> {
        self.extras.get_prompt(request, ctx).await
    }

    async fn list_resources(
        &self,
        request: Option<PaginatedRequestParams>,
        ctx: RequestContext<RoleServer>,
    ) -> Result<ListResourcesResult, ErrorData> {
        self.extras.list_resources(request, ctx).await
    }

    async fn list_resource_templates(
        &self,
        request: Option<PaginatedRequestParams>,
        ctx: RequestContext<RoleServer>,
    ) -> Result<ListResourceTemplatesResult, ErrorData> {
        self.extras.list_resource_templates(request, ctx).await
    }

    async fn read_resource(
        &self,
        request: ReadResourceRequestParams,
        ctx: RequestContext<RoleServer>,
    ) -> Result<ReadResourceResponse, ErrorData> {
        if request.uri.starts_with(results::RESULTS_URI) {
            return Box::pin(self.read_result(&request.uri, &ctx)).await.map(Into::into);
        }
        self.extras.read_resource(request, ctx).await
    }

    async fn subscribe(&self, request: SubscribeRequestParams, ctx: RequestContext<RoleServer>) -> Result<(), ErrorData> {
        if server::modern(&ctx) {
            return Err(method_not_found("resources/subscribe"));
        }
        self.extras.subscribe(request, ctx).await
    }

    async fn unsubscribe(&self, request: UnsubscribeRequestParams, ctx: RequestContext<RoleServer>) -> Result<(), ErrorData> {
        if server::modern(&ctx) {
            return Err(method_not_found("resources/unsubscribe"));
        }
        self.extras.unsubscribe(request, ctx).await
    }
}
