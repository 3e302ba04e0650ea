//! A faithful local fake of Composio's public REST API (the subset the provider and the
//! official SDK use), served under both `/api/v3.1` and `/api/v3`.
//!
//! Owns the fake's catalog (toolkits `github`, `gmail`, `slack`, `zendesk`, `notion`,
//! `hackernews`, `composio`; their tools with `input_parameters`/`output_parameters`), its
//! auth configs (`notion` has none enabled, `slack` two), its connected accounts (created,
//! linked, listed, refreshed, deleted; statuses driven by tests), its request log and the
//! switches that make it misbehave: 429 once or always, 500, slow, malformed JSON, endless
//! cursors, oversized bodies. Execution enforces what the real API does: an account is only
//! usable with the user id it belongs to.

#![allow(dead_code)]

use std::collections::BTreeMap;
use std::sync::{Arc, Mutex};

use axum::extract::{Path, Query, Request, State};
use axum::http::{HeaderMap, StatusCode, Uri};
use axum::middleware::{self, Next};
use axum::response::{IntoResponse, Response};
use axum::routing::{get, post};
use axum::{Json, Router};
use serde_json::{Value, json};

use super::misbehave::Failure;
pub use super::misbehave::Misbehave;

/// One execution the fake received.
#[derive(Debug, Clone, PartialEq)]
pub struct Execution {
    /// The tool slug.
    pub slug: String,
    /// `user_id` of the body.
    pub user_id: Option<String>,
    /// `connected_account_id` of the body.
    pub connected_account_id: Option<String>,
    /// `version` of the body.
    pub version: Option<String>,
    /// `arguments` of the body.
    pub arguments: Value,
}

/// What the fake saw.
#[derive(Debug, Default)]
pub struct Seen {
    /// Every authenticated request as `METHOD /path?query`.
    pub requests: Vec<String>,
    /// Every header of every request, as `name: value`.
    pub headers: Vec<String>,
    /// Requests received (authenticated or not).
    pub count: usize,
    /// Every execute.
    pub executions: Vec<Execution>,
    /// Bodies of `POST /connected_accounts`.
    pub created: Vec<Value>,
    /// `(auth_config_id, user_id)` of every link.
    pub links: Vec<(String, String)>,
    /// Ids of every delete.
    pub deleted: Vec<String>,
}

#[derive(Debug, Clone)]
struct Account {
    id: String,
    user_id: String,
    toolkit: String,
    auth_config: String,
    status: String,
    disabled: bool,
}

struct Inner {
    key: String,
    misbehave: Mutex<Misbehave>,
    seen: Mutex<Seen>,
    accounts: Mutex<Vec<Account>>,
    next_id: Mutex<u64>,
    /// Descriptions that replace a tool's own, by slug.
    descriptions: Mutex<BTreeMap<String, String>>,
}

/// A running fake.
#[derive(Clone)]
pub struct ComposioFake {
    /// `http://127.0.0.1:PORT` (no `/api/...` prefix).
    pub url: String,
    inner: Arc<Inner>,
}

impl ComposioFake {
    /// Starts the fake on 127.0.0.1:0 accepting `key`.
    pub async fn start(key: &str) -> ComposioFake {
        let inner = Arc::new(Inner {
            key: key.to_owned(),
            misbehave: Mutex::default(),
            seen: Mutex::default(),
            accounts: Mutex::default(),
            next_id: Mutex::new(1),
            descriptions: Mutex::default(),
        });
        let api = Router::new()
            .route("/toolkits", get(list_toolkits))
            .route("/toolkits/{slug}", get(get_toolkit))
            .route("/tools", get(list_tools))
            .route("/tools/{slug}", get(get_tool))
            .route("/tools/execute/{slug}", post(execute))
            .route("/auth_configs", get(list_auth_configs))
            .route("/connected_accounts", get(list_accounts).post(create_account))
            .route("/connected_accounts/link", post(link))
            .route("/connected_accounts/{id}", get(get_account).delete(delete_account))
            .route("/connected_accounts/{id}/refresh", post(refresh_account));
        let app = Router::new()
            .nest("/api/v3.1", api.clone())
            .nest("/api/v3", api)
            .layer(middleware::from_fn_with_state(inner.clone(), gate))
            .with_state(inner.clone());
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
        let url = format!("http://{}", listener.local_addr().unwrap());
        tokio::spawn(async move { axum::serve(listener, app).await.unwrap() });
        ComposioFake { url, inner }
    }

    /// Gives the tool `slug` a new description from now on (a changed remote definition).
    pub fn describe(&self, slug: &str, description: &str) {
        self.inner
            .descriptions
            .lock()
            .unwrap()
            .insert(slug.to_owned(), description.to_owned());
    }

    /// Changes how it misbehaves.
    pub fn misbehave(&self, edit: impl FnOnce(&mut Misbehave)) {
        edit(&mut self.inner.misbehave.lock().unwrap());
    }

    /// Reads what it saw.
    pub fn seen<T>(&self, read: impl FnOnce(&Seen) -> T) -> T {
        read(&self.inner.seen.lock().unwrap())
    }

    /// Adds a connected account (`status` such as `ACTIVE`) and returns its id.
    pub fn add_account(&self, user_id: &str, toolkit: &str, status: &str) -> String {
        let id = self.inner.new_id("ca");
        let auth_config = auth_configs()
            .into_iter()
            .find(|c| c["toolkit"]["slug"] == toolkit && c["status"] == "ENABLED")
            .and_then(|c| c["id"].as_str().map(str::to_owned))
            .unwrap_or_else(|| format!("ac_{toolkit}"));
        self.inner.accounts.lock().unwrap().push(Account {
            id: id.clone(),
            user_id: user_id.to_owned(),
            toolkit: toolkit.to_owned(),
            auth_config,
            status: status.to_owned(),
            disabled: false,
        });
        id
    }

    /// Sets an account's status (`ACTIVE`, `FAILED`, …).
    pub fn set_status(&self, id: &str, status: &str) {
        if let Some(a) = self.inner.accounts.lock().unwrap().iter_mut().find(|a| a.id == id) {
            a.status = status.to_owned();
        }
    }

    /// Completes an authorization: the account becomes `ACTIVE`.
    pub fn complete(&self, id: &str) {
        self.set_status(id, "ACTIVE");
    }

    /// Disables or enables an account.
    pub fn set_disabled(&self, id: &str, disabled: bool) {
        if let Some(a) = self.inner.accounts.lock().unwrap().iter_mut().find(|a| a.id == id) {
            a.disabled = disabled;
        }
    }

    /// `(id, user_id, toolkit, status)` of every account.
    pub fn accounts(&self) -> Vec<(String, String, String, String)> {
        let accounts = self.inner.accounts.lock().unwrap();
        accounts
            .iter()
            .map(|a| (a.id.clone(), a.user_id.clone(), a.toolkit.clone(), a.status.clone()))
            .collect()
    }
}

impl Inner {
    fn new_id(&self, prefix: &str) -> String {
        let mut n = self.next_id.lock().unwrap();
        *n += 1;
        format!("{prefix}_{:012}", *n)
    }
}

/// A Composio error body.
fn error(status: StatusCode, code: Value, slug: Option<&str>, message: &str, fix: &str) -> Response {
    let mut e = json!({"message": message, "code": code, "status": status.as_u16(),
                       "request_id": "req_fake_1", "suggested_fix": fix});
    if let Some(s) = slug {
        e["slug"] = json!(s);
    }
    (status, Json(json!({"error": e}))).into_response()
}

async fn gate(State(inner): State<Arc<Inner>>, headers: HeaderMap, uri: Uri, request: Request, next: Next) -> Response {
    let misbehave = Misbehave::take(&inner.misbehave);
    {
        let mut seen = inner.seen.lock().unwrap();
        seen.count += 1;
        let lines = headers
            .iter()
            .map(|(k, v)| format!("{k}: {}", String::from_utf8_lossy(v.as_bytes())));
        seen.headers.extend(lines);
    }
    let presented = headers.get("x-api-key").and_then(|v| v.to_str().ok()).unwrap_or_default();
    if presented.is_empty() || presented != inner.key {
        return error(
            StatusCode::UNAUTHORIZED,
            json!(10401),
            Some("Unauthorized"),
            "Invalid API key",
            "Pass your project API key in the x-api-key header",
        );
    }
    let line = format!("{} {}", request.method(), uri.path_and_query().map(|p| p.as_str()).unwrap_or(""));
    inner.seen.lock().unwrap().requests.push(line);
    let failure = |f| match f {
        Failure::RateLimited => error(
            StatusCode::TOO_MANY_REQUESTS,
            json!(429),
            Some("RateLimited"),
            "Too many requests",
            "Retry later",
        ),
        Failure::Internal => error(
            StatusCode::INTERNAL_SERVER_ERROR,
            json!(500),
            Some("InternalServerError"),
            "Something went wrong",
            "",
        ),
    };
    if let Some(answer) = misbehave.answer(failure, "{\"items\": [ {\"slug\": ").await {
        return answer;
    }
    next.run(request).await
}

// ----- catalog ---------------------------------------------------------------------------

const LOGO: &str = "https://logos.composio.dev/api/app";
const NOW: &str = "2026-01-01T00:00:00.000Z";

fn toolkit(slug: &str, name: &str, description: &str, schemes: &[&str], no_auth: bool) -> Value {
    json!({
        "slug": slug, "name": name, "type": "native", "is_local_toolkit": false,
        "deprecated": {"toolkitId": format!("tk-{slug}")},
        "meta": {"categories": [{"id": "productivity", "name": "Productivity"}], "created_at": NOW,
                 "description": description, "logo": format!("{LOGO}/{slug}"), "tools_count": 2.0,
                 "triggers_count": 0.0, "updated_at": NOW, "version": "20260101_00", "app_url": null},
        "auth_schemes": schemes, "composio_managed_auth_schemes": schemes, "no_auth": no_auth,
        "auth_guide_url": null,
    })
}

/// The toolkits, in listing order.
pub fn toolkits() -> Vec<Value> {
    vec![
        toolkit("github", "GitHub", "Code hosting", &["OAUTH2"], false),
        toolkit("gmail", "Gmail", "Email by Google", &["OAUTH2"], false),
        toolkit("slack", "Slack", "Team chat", &["OAUTH2"], false),
        toolkit("zendesk", "Zendesk", "Customer support", &["API_KEY"], false),
        toolkit("notion", "Notion", "Notes and docs", &["OAUTH2"], false),
        toolkit("hackernews", "Hacker News", "Tech news", &[], true),
        toolkit("composio", "Composio", "Composio's own tools", &[], true),
    ]
}

fn field(name: &str, display: &str, kind: &str, required: bool, default: Option<&str>) -> Value {
    json!({"name": name, "displayName": display, "type": kind, "required": required, "description": format!("The {display}"),
           "default": default, "is_secret": false, "user_visible": true})
}

fn toolkit_detail(slug: &str) -> Option<Value> {
    let base = toolkits().into_iter().find(|t| t["slug"] == slug)?;
    let mode = |mode: &str, required: Vec<Value>, optional: Vec<Value>| {
        json!({"mode": mode, "name": mode, "required_scopes": [], "fields": {
            "auth_config_creation": {"required": [], "optional": []},
            "connected_account_initiation": {"required": required, "optional": optional}}})
    };
    let details = match slug {
        "zendesk" => vec![mode(
            "API_KEY",
            vec![
                field("subdomain", "Your Subdomain", "string", true, None),
                field("generic_api_key", "API Key", "string", true, None),
            ],
            vec![field("page_size", "Page Size", "integer", false, Some("50"))],
        )],
        "hackernews" | "composio" => vec![],
        _ => vec![mode("OAUTH2", vec![], vec![])],
    };
    let mut meta = base["meta"].clone();
    meta["available_versions"] = json!(["20260101_00"]);
    meta["categories"] = json!([{"name": "Productivity", "slug": "productivity"}]);
    Some(json!({
        "slug": slug, "name": base["name"], "type": "native", "enabled": true, "is_local_toolkit": false,
        "composio_managed_auth": [], "composio_managed_auth_schemes": base["auth_schemes"],
        "deprecated": {"rawProxyInfoByAuthSchemes": [], "toolkitId": format!("tk-{slug}")},
        // No `base_url`: the API leaves it out unless the toolkit has a fixed one, and
        // `@composio/core` 0.21.0 rejects `null` there (an optional string in its schema).
        "meta": meta, "auth_config_details": details,
    }))
}

fn tool(slug: &str, toolkit: &str, name: &str, description: &str, input: Value, output: Value, no_auth: bool) -> Value {
    json!({
        "slug": slug, "name": name, "description": description, "human_description": description,
        "toolkit": {"slug": toolkit, "name": toolkit, "logo": format!("{LOGO}/{toolkit}")},
        "input_parameters": input, "output_parameters": output, "no_auth": no_auth,
        "version": "20260101_00", "available_versions": ["20260101_00"], "is_deprecated": false,
        "deprecated": {"available_versions": ["20260101_00"], "displayName": name, "is_deprecated": false,
                       "toolkit": {"logo": format!("{LOGO}/{toolkit}")}, "version": "20260101_00"},
        "scopes": [], "tags": ["fake"], "scope_requirements": null,
    })
}

fn wrapped(data: Value) -> Value {
    json!({"type": "object", "title": "Response", "required": ["data", "successful"], "properties": {
        "data": data, "error": {"type": "string", "nullable": true}, "successful": {"type": "boolean"}}})
}

/// The tools, in listing order.
pub fn tools() -> Vec<Value> {
    vec![
        tool(
            "GITHUB_CREATE_ISSUE",
            "github",
            "Create an issue",
            "Create an issue in a GitHub repository",
            json!({"type": "object", "properties": {
                "owner": {"type": "string", "description": "The repository owner"},
                "repo": {"type": "string", "description": "The repository name"},
                "title": {"type": "string", "description": "The issue title"},
                "body": {"type": "string", "description": "The issue body"}},
                "required": ["owner", "repo", "title"]}),
            wrapped(json!({"type": "object", "properties": {"number": {"type": "integer"}, "url": {"type": "string"}}})),
            false,
        ),
        tool(
            "GITHUB_GET_REPO",
            "github",
            "Get a repository",
            "Get a GitHub repository",
            json!({"type": "object", "properties": {"owner": {"type": "string"}, "repo": {"type": "string"}}, "required": ["owner", "repo"]}),
            // A union `data`: parameter schemas are always `"type": "object"` at the top
            // (`@composio/core` 0.21.0 rejects a tool whose output_parameters are not).
            wrapped(json!({"anyOf": [{"type": "object"}, {"type": "null"}]})),
            false,
        ),
        tool(
            "GMAIL_SEND_EMAIL",
            "gmail",
            "Send an email",
            "Send an email from the user's Gmail account",
            json!({"type": "object", "properties": {
                "recipient_email": {"type": "string", "description": "The recipient"},
                "subject": {"type": "string"}, "body": {"type": "string"}},
                "required": ["recipient_email", "body"]}),
            json!({"type": "object", "properties": {"data": {"anyOf": [{"type": "object"}, {"type": "string"}]}, "successful": {"type": "boolean"}}}),
            false,
        ),
        tool(
            "GMAIL_FETCH_EMAILS",
            "gmail",
            "Fetch emails",
            "Fetch recent emails",
            json!({"type": "object", "properties": {"max_results": {"type": "integer"}}}),
            wrapped(json!({"type": "object"})),
            false,
        ),
        tool(
            "SLACK_SEND_MESSAGE",
            "slack",
            "Send a message",
            "Send a message to a Slack channel",
            json!({"type": "object", "properties": {"channel": {"type": "string"}, "text": {"type": "string"}}, "required": ["channel", "text"]}),
            wrapped(json!({"type": "object"})),
            false,
        ),
        tool(
            "HACKERNEWS_GET_FRONTPAGE",
            "hackernews",
            "Front page",
            "Get the Hacker News front page",
            json!({"type": "object", "properties": {}}),
            wrapped(json!({"type": "object", "properties": {"stories": {"type": "array"}}})),
            true,
        ),
        tool(
            "COMPOSIO_MANAGE_CONNECTIONS",
            "composio",
            "Manage connections",
            "Create authorization links for toolkits",
            json!({"type": "object", "properties": {"toolkits": {"type": "array", "items": {"type": "string"}}}, "required": ["toolkits"]}),
            wrapped(json!({"type": "object"})),
            true,
        ),
        tool(
            "COMPOSIO_WAIT_FOR_CONNECTIONS",
            "composio",
            "Wait for connections",
            "Wait until the user finished connecting",
            json!({"type": "object", "properties": {"toolkits": {"type": "array", "items": {"type": "string"}}}, "required": ["toolkits"]}),
            wrapped(json!({"type": "object"})),
            true,
        ),
    ]
}

fn auth_config(id: &str, toolkit: &str, scheme: &str, enabled: bool, managed: bool) -> Value {
    json!({
        "id": id, "uuid": format!("uuid-{id}"), "name": format!("{toolkit} auth"), "no_of_connections": 0.0,
        "status": if enabled { "ENABLED" } else { "DISABLED" }, "tool_access_config": {},
        "toolkit": {"slug": toolkit, "logo": format!("{LOGO}/{toolkit}")},
        "type": if managed { "default" } else { "custom" }, "auth_scheme": scheme,
        "is_composio_managed": managed, "created_at": NOW, "created_by": "fake", "last_updated_at": NOW,
    })
}

/// The auth configs: `notion` has no enabled one, `slack` two.
pub fn auth_configs() -> Vec<Value> {
    vec![
        auth_config("ac_github", "github", "OAUTH2", true, false),
        auth_config("ac_gmail", "gmail", "OAUTH2", true, true),
        auth_config("ac_slack_a", "slack", "OAUTH2", true, true),
        auth_config("ac_slack_b", "slack", "OAUTH2", true, false),
        auth_config("ac_zendesk", "zendesk", "API_KEY", true, false),
        auth_config("ac_notion", "notion", "OAUTH2", false, true),
    ]
}

// ----- listings ------------------------------------------------------------------------

#[derive(serde::Deserialize, Default)]
struct ListQuery {
    limit: Option<f64>,
    cursor: Option<String>,
    toolkit_slug: Option<String>,
    search: Option<String>,
    query: Option<String>,
    tool_slugs: Option<String>,
    user_ids: Option<String>,
    toolkit_slugs: Option<String>,
    connected_account_ids: Option<String>,
    statuses: Option<String>,
    auth_config_ids: Option<String>,
}

fn csv(s: &Option<String>) -> Option<Vec<String>> {
    s.as_ref()
        .map(|s| s.split(',').map(|p| p.trim().to_owned()).filter(|p| !p.is_empty()).collect())
}

/// One page of `items` in Composio's list envelope; the cursor is opaque to clients.
fn paginate(inner: &Inner, items: Vec<Value>, q: &ListQuery, endless_item: impl Fn(usize) -> Value) -> Response {
    // No upper bound: `@composio/core` 0.21.0 asks for `limit=9999` when it lists tools by slug.
    let limit = q.limit.unwrap_or(20.0);
    if !limit.is_finite() || limit < 1.0 {
        return error(
            StatusCode::BAD_REQUEST,
            json!(400),
            Some("BadRequest"),
            "limit must be at least 1",
            "",
        );
    }
    let limit = limit as usize;
    let offset: usize = match q.cursor.as_deref() {
        None | Some("") => 0,
        Some(c) => match c.strip_prefix("cur_").and_then(|n| n.parse().ok()) {
            Some(n) => n,
            None => return error(StatusCode::BAD_REQUEST, json!(400), Some("InvalidCursor"), "invalid cursor", ""),
        },
    };
    if inner.misbehave.lock().unwrap().endless {
        let items: Vec<Value> = (0..limit).map(|i| endless_item(offset + i)).collect();
        return Json(
            json!({"items": items, "next_cursor": format!("cur_{}", offset + limit), "total_pages": 1e9,
                            "current_page": (offset / limit + 1) as f64, "total_items": 1e12}),
        )
        .into_response();
    }
    let total = items.len();
    let page: Vec<Value> = items.into_iter().skip(offset).take(limit).collect();
    let next = (offset + limit < total).then(|| format!("cur_{}", offset + limit));
    Json(
        json!({"items": page, "next_cursor": next, "total_pages": total.div_ceil(limit) as f64,
                "current_page": (offset / limit + 1) as f64, "total_items": total as f64}),
    )
    .into_response()
}

async fn list_toolkits(State(inner): State<Arc<Inner>>, Query(q): Query<ListQuery>) -> Response {
    paginate(&inner, toolkits(), &q, |i| toolkit(&format!("loop{i}"), "Loop", "again", &[], true))
}

async fn get_toolkit(Path(slug): Path<String>) -> Response {
    match toolkit_detail(&slug) {
        Some(t) => Json(t).into_response(),
        None => error(
            StatusCode::NOT_FOUND,
            json!(404),
            Some("Toolkit_NotFound"),
            &format!("Toolkit {slug} not found"),
            "",
        ),
    }
}

async fn list_tools(State(inner): State<Arc<Inner>>, Query(q): Query<ListQuery>) -> Response {
    let search = q.query.clone().or(q.search.clone()).map(|s| s.to_lowercase());
    let slugs = csv(&q.tool_slugs);
    let items: Vec<Value> = current_tools(&inner)
        .into_iter()
        .filter(|t| {
            q.toolkit_slug
                .as_deref()
                .is_none_or(|k| t["toolkit"]["slug"].as_str() == Some(&k.to_lowercase()))
        })
        .filter(|t| slugs.as_ref().is_none_or(|s| s.iter().any(|x| t["slug"] == x.as_str())))
        .filter(|t| {
            search.as_deref().is_none_or(|s| {
                t["slug"].as_str().unwrap().to_lowercase().contains(s) || t["description"].as_str().unwrap().to_lowercase().contains(s)
            })
        })
        .collect();
    paginate(&inner, items, &q, |i| {
        tool(
            &format!("LOOP_T{i}"),
            "loop",
            "Loop",
            "again",
            json!({"type": "object"}),
            json!({}),
            true,
        )
    })
}

/// The catalog with the descriptions [`ComposioFake::describe`] replaced.
fn current_tools(inner: &Inner) -> Vec<Value> {
    let descriptions = inner.descriptions.lock().unwrap();
    let mut all = tools();
    for t in &mut all {
        if let Some(d) = t["slug"].as_str().and_then(|s| descriptions.get(s)) {
            t["description"] = json!(d);
        }
    }
    all
}

fn find_tool(inner: &Inner, slug: &str) -> Option<Value> {
    current_tools(inner).into_iter().find(|t| t["slug"] == slug)
}

async fn get_tool(State(inner): State<Arc<Inner>>, Path(slug): Path<String>) -> Response {
    match find_tool(&inner, &slug) {
        Some(t) => Json(t).into_response(),
        None => error(
            StatusCode::NOT_FOUND,
            json!(404),
            Some("Tool_NotFound"),
            &format!("Tool {slug} not found"),
            "",
        ),
    }
}

async fn list_auth_configs(State(inner): State<Arc<Inner>>, Query(q): Query<ListQuery>) -> Response {
    let items: Vec<Value> = auth_configs()
        .into_iter()
        .filter(|c| q.toolkit_slug.as_deref().is_none_or(|k| c["toolkit"]["slug"] == k))
        .collect();
    paginate(&inner, items, &q, |i| {
        auth_config(&format!("ac_loop{i}"), "loop", "NO_AUTH", false, false)
    })
}

// ----- connected accounts ----------------------------------------------------------------

/// The `state.val` of an account: what the scheme's union member for this status requires
/// (tokens are masked, as the real API masks them).
fn state_val(scheme: &str, status: &str, id: &str) -> Value {
    let mut val = json!({"status": status});
    if matches!(scheme, "OAUTH2" | "OAUTH1" | "DCR_OAUTH") {
        match status {
            "INITIATED" => val["redirectUrl"] = json!(format!("https://connect.composio.example/authorize/{id}")),
            "ACTIVE" | "INACTIVE" => val["access_token"] = json!("[REDACTED]"),
            _ => {}
        }
    }
    val
}

fn account_json(a: &Account) -> Value {
    let config = auth_configs().into_iter().find(|c| c["id"] == a.auth_config.as_str());
    let scheme = config.as_ref().map(|c| c["auth_scheme"].clone()).unwrap_or(json!("OAUTH2"));
    let managed = config.as_ref().map(|c| c["is_composio_managed"].clone()).unwrap_or(json!(false));
    json!({
        "id": a.id, "alias": null, "word_id": format!("{}_fake", a.toolkit),
        "auth_config": {"id": a.auth_config, "auth_scheme": scheme, "is_composio_managed": managed, "is_disabled": false},
        "created_at": NOW, "updated_at": NOW, "data": {}, "params": {}, "is_disabled": a.disabled,
        "state": {"authScheme": scheme, "val": state_val(scheme.as_str().unwrap_or("OAUTH2"), &a.status, &a.id)},
        "status": a.status, "status_reason": null, "toolkit": {"slug": a.toolkit}, "user_id": a.user_id,
        "deprecated": {"uuid": format!("uuid-{}", a.id), "labels": []},
    })
}

async fn list_accounts(State(inner): State<Arc<Inner>>, Query(q): Query<ListQuery>) -> Response {
    let (users, kits, ids, statuses, configs) = (
        csv(&q.user_ids),
        csv(&q.toolkit_slugs),
        csv(&q.connected_account_ids),
        csv(&q.statuses),
        csv(&q.auth_config_ids),
    );
    let items: Vec<Value> = inner
        .accounts
        .lock()
        .unwrap()
        .iter()
        .filter(|a| users.as_ref().is_none_or(|u| u.contains(&a.user_id)))
        .filter(|a| kits.as_ref().is_none_or(|k| k.contains(&a.toolkit)))
        .filter(|a| ids.as_ref().is_none_or(|i| i.contains(&a.id)))
        .filter(|a| statuses.as_ref().is_none_or(|s| s.contains(&a.status)))
        .filter(|a| configs.as_ref().is_none_or(|c| c.contains(&a.auth_config)))
        .map(account_json)
        .collect();
    paginate(&inner, items, &q, |i| {
        account_json(&Account {
            id: format!("ca_loop{i}"),
            user_id: "loop".into(),
            toolkit: "loop".into(),
            auth_config: "ac_loop".into(),
            status: "ACTIVE".into(),
            disabled: false,
        })
    })
}

fn enabled_config(id: &str) -> Result<Value, Box<Response>> {
    match auth_configs().into_iter().find(|c| c["id"] == id) {
        Some(c) if c["status"] == "ENABLED" => Ok(c),
        Some(_) => Err(Box::new(error(
            StatusCode::BAD_REQUEST,
            json!(400),
            Some("AuthConfig_Disabled"),
            "Auth config is disabled",
            "",
        ))),
        None => Err(Box::new(error(
            StatusCode::NOT_FOUND,
            json!(404),
            Some("AuthConfig_NotFound"),
            &format!("Auth config {id} not found"),
            "",
        ))),
    }
}

async fn create_account(State(inner): State<Arc<Inner>>, Json(body): Json<Value>) -> Response {
    inner.seen.lock().unwrap().created.push(body.clone());
    let Some(config_id) = body["auth_config"]["id"].as_str() else {
        return error(
            StatusCode::BAD_REQUEST,
            json!(400),
            Some("BadRequest"),
            "auth_config.id is required",
            "",
        );
    };
    let config = match enabled_config(config_id) {
        Ok(c) => c,
        Err(r) => return *r,
    };
    let user = body["connection"]["user_id"].as_str().unwrap_or("default").to_owned();
    let scheme = config["auth_scheme"].as_str().unwrap_or("OAUTH2").to_owned();
    let state = &body["connection"]["state"];
    let redirect = matches!(scheme.as_str(), "OAUTH2" | "OAUTH1" | "DCR_OAUTH");
    let status = if redirect {
        "INITIATED"
    } else if state["val"].is_object() {
        "ACTIVE"
    } else {
        return error(
            StatusCode::BAD_REQUEST,
            json!(400),
            Some("ConnectedAccount_MissingState"),
            "connection.state is required for this auth scheme",
            "",
        );
    };
    let id = inner.new_id("ca");
    inner.accounts.lock().unwrap().push(Account {
        id: id.clone(),
        user_id: user,
        toolkit: config["toolkit"]["slug"].as_str().unwrap_or_default().to_owned(),
        auth_config: config_id.to_owned(),
        status: status.to_owned(),
        disabled: false,
    });
    let url = redirect.then(|| format!("https://connect.composio.example/authorize/{id}"));
    let val = state_val(&scheme, status, &id);
    (
        StatusCode::CREATED,
        Json(
            json!({"id": id, "connectionData": {"authScheme": scheme, "val": val}, "status": status,
                    "redirect_url": url, "redirect_uri": url,
                    "deprecated": {"authConfigUuid": format!("uuid-{config_id}"), "uuid": format!("uuid-{id}")}}),
        ),
    )
        .into_response()
}

async fn link(State(inner): State<Arc<Inner>>, Json(body): Json<Value>) -> Response {
    let (Some(config_id), Some(user)) = (body["auth_config_id"].as_str(), body["user_id"].as_str()) else {
        return error(
            StatusCode::BAD_REQUEST,
            json!(400),
            Some("BadRequest"),
            "auth_config_id and user_id are required",
            "",
        );
    };
    let config = match enabled_config(config_id) {
        Ok(c) => c,
        Err(r) => return *r,
    };
    inner.seen.lock().unwrap().links.push((config_id.to_owned(), user.to_owned()));
    let id = inner.new_id("ca");
    inner.accounts.lock().unwrap().push(Account {
        id: id.clone(),
        user_id: user.to_owned(),
        toolkit: config["toolkit"]["slug"].as_str().unwrap_or_default().to_owned(),
        auth_config: config_id.to_owned(),
        status: "INITIATED".into(),
        disabled: false,
    });
    (
        StatusCode::CREATED,
        Json(
            json!({"link_token": format!("lt_{id}"), "redirect_url": format!("https://connect.composio.example/link/lt_{id}"),
                    "expires_at": "2026-01-01T00:10:00.000Z", "connected_account_id": id}),
        ),
    )
        .into_response()
}

fn account_missing(id: &str) -> Response {
    error(
        StatusCode::NOT_FOUND,
        json!(1800),
        Some("ConnectedAccount_NotFound"),
        &format!("Connected account {id} not found"),
        "",
    )
}

async fn get_account(State(inner): State<Arc<Inner>>, Path(id): Path<String>) -> Response {
    let accounts = inner.accounts.lock().unwrap();
    match accounts.iter().find(|a| a.id == id) {
        Some(a) => Json(account_json(a)).into_response(),
        None => account_missing(&id),
    }
}

async fn delete_account(State(inner): State<Arc<Inner>>, Path(id): Path<String>) -> Response {
    let mut accounts = inner.accounts.lock().unwrap();
    let before = accounts.len();
    accounts.retain(|a| a.id != id);
    if accounts.len() == before {
        return account_missing(&id);
    }
    inner.seen.lock().unwrap().deleted.push(id);
    Json(json!({"success": true})).into_response()
}

async fn refresh_account(State(inner): State<Arc<Inner>>, Path(id): Path<String>) -> Response {
    let mut accounts = inner.accounts.lock().unwrap();
    match accounts.iter_mut().find(|a| a.id == id) {
        Some(a) => {
            a.status = "INITIATED".into();
            Json(json!({"id": id, "status": "INITIATED", "redirect_url": format!("https://connect.composio.example/authorize/{id}")}))
                .into_response()
        }
        None => account_missing(&id),
    }
}

// ----- execution -------------------------------------------------------------------------

fn no_account(user: &str, toolkit: &str) -> Response {
    error(
        StatusCode::BAD_REQUEST,
        json!(1803),
        Some("ConnectedAccountNotFound"),
        &format!("No connected account found for user {user} and toolkit {toolkit}"),
        "Connect an account for this user and toolkit first",
    )
}

async fn execute(State(inner): State<Arc<Inner>>, Path(slug): Path<String>, Json(body): Json<Value>) -> Response {
    let user = body["user_id"].as_str().map(str::to_owned);
    let account_id = body["connected_account_id"].as_str().map(str::to_owned);
    inner.seen.lock().unwrap().executions.push(Execution {
        slug: slug.clone(),
        user_id: user.clone(),
        connected_account_id: account_id.clone(),
        version: body["version"].as_str().map(str::to_owned),
        arguments: body["arguments"].clone(),
    });
    let Some(def) = find_tool(&inner, &slug) else {
        return error(
            StatusCode::NOT_FOUND,
            json!(404),
            Some("Tool_NotFound"),
            &format!("Tool {slug} not found"),
            "",
        );
    };
    let toolkit = def["toolkit"]["slug"].as_str().unwrap_or_default().to_owned();
    let args = &body["arguments"];
    let account = if def["no_auth"] == true {
        None
    } else {
        let accounts = inner.accounts.lock().unwrap();
        let usable = |a: &&Account| a.toolkit == toolkit && a.status == "ACTIVE" && !a.disabled;
        let found = match (&account_id, &user) {
            (Some(id), u) => match accounts.iter().find(|a| a.id == *id) {
                None => return account_missing(id),
                // An account is only usable with the user it belongs to.
                Some(a) if u.as_ref().is_some_and(|u| *u != a.user_id) => None,
                Some(a) => Some(a).filter(usable),
            },
            (None, Some(u)) => accounts.iter().filter(|a| a.user_id == *u).find(usable),
            (None, None) => {
                return error(
                    StatusCode::BAD_REQUEST,
                    json!(400),
                    Some("BadRequest"),
                    "user_id or connected_account_id is required",
                    "",
                );
            }
        };
        match found {
            Some(a) => Some(a.clone()),
            None => return no_account(user.as_deref().unwrap_or("(none)"), &toolkit),
        }
    };
    let who = json!({"user": user, "account": account.as_ref().map(|a| a.id.clone())});
    let ok = |data: Value| Json(json!({"data": data, "error": null, "successful": true, "log_id": "log_fake"})).into_response();
    match slug.as_str() {
        "GITHUB_CREATE_ISSUE" if args["title"] == "fail" => {
            Json(json!({"data": {}, "error": "Validation Failed: the title is not allowed",
                                                                       "successful": false, "log_id": "log_fail"}))
            .into_response()
        }
        "GITHUB_CREATE_ISSUE" => ok(json!({"number": 7, "url": format!("https://github.example/{}/{}/issues/7",
                                           args["owner"].as_str().unwrap_or(""), args["repo"].as_str().unwrap_or(""))})),
        "GMAIL_SEND_EMAIL" => ok(json!({"message_id": "msg_1", "to": args["recipient_email"], "sent_by": who})),
        "HACKERNEWS_GET_FRONTPAGE" => ok(json!({"stories": [{"title": "Hello"}]})),
        _ => ok(json!({"echo": args, "sent_by": who})),
    }
}

/// Distinct `(user_id, toolkit)` pairs with an active account.
pub fn active_pairs(fake: &ComposioFake) -> BTreeMap<String, Vec<String>> {
    let mut out: BTreeMap<String, Vec<String>> = BTreeMap::new();
    for (_, user, toolkit, status) in fake.accounts() {
        if status == "ACTIVE" {
            out.entry(user).or_default().push(toolkit);
        }
    }
    out
}
