//! A faithful local fake of Arcade's public `/v1` API (the subset the provider uses).
//!
//! Owns the fake's catalog (toolkits `Math`, `Github` (403 `tool_authorization_required` until
//! the user authorizes), `Gmail` (execute answers `output.authorization`), `Slack`), its
//! request log (which user ids executed what, which `Authorization` form was sent, which auth
//! statuses were polled and with what `wait`, which user-connection queries and deletions
//! arrived), its authorization flows (`POST /v1/tools/authorize` opens one; the test
//! completes or fails it; `GET /v1/auth/status?id&wait` long-polls it, answering when it
//! leaves `pending` or when the wait ends), its user connections (`GET
//! /v1/admin/user_connections?provider_id&user_id&limit&offset` as `@arcadeai/arcadejs` 2.4.1
//! sends them, or with `provider[id]`/`user[id]` as `arcadepy` 1.10.0 does; `DELETE
//! /v1/admin/user_connections/{id}`) and the switches that
//! make it misbehave: 429 once, 500, slow, malformed JSON, endless pagination, oversized
//! bodies, a user filter ignored.

#![allow(dead_code)]

use std::collections::{BTreeMap, BTreeSet};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use axum::extract::{Path, Query, Request, State};
use axum::http::{HeaderMap, StatusCode};
use axum::middleware::{self, Next};
use axum::response::{IntoResponse, Response};
use axum::routing::{delete, get, post};
use axum::{Json, Router};
use serde_json::{Value, json};

use super::misbehave::Failure;
pub use super::misbehave::Misbehave;

/// What the fake saw.
#[derive(Debug, Default)]
pub struct Seen {
    /// `(tool_name, user_id, tool_version)` of every execute.
    pub executions: Vec<(String, String, Option<String>)>,
    /// `(tool_name, user_id)` of every authorize.
    pub authorizations: Vec<(String, String)>,
    /// The `Authorization` header of every authenticated request.
    pub auth_headers: Vec<String>,
    /// Requests received (authenticated or not).
    pub requests: usize,
    /// `(id, wait)` of every auth status request.
    pub status_polls: Vec<(String, Option<u64>)>,
    /// The query pairs of every user-connection listing.
    pub connection_queries: Vec<Vec<(String, String)>>,
    /// The ids of every user-connection deletion (found or not).
    pub deletions: Vec<String>,
    /// The name of every tool definition fetched (`GET /v1/tools/{name}`).
    pub definition_fetches: Vec<String>,
    /// The most requests it was answering at once.
    pub max_in_flight: usize,
}

/// An authorization flow.
#[derive(Debug, Clone)]
pub struct Flow {
    /// The user.
    pub user: String,
    /// The toolkit of the tool it was opened for.
    pub toolkit: String,
    /// The auth provider.
    pub provider: String,
    /// `pending`, `completed` or `failed`.
    pub status: String,
}

struct Inner {
    key: String,
    misbehave: Mutex<Misbehave>,
    seen: Mutex<Seen>,
    authorized: Mutex<BTreeSet<(String, String)>>,
    flows: Mutex<BTreeMap<String, Flow>>,
    flow_changed: tokio::sync::Notify,
    pollers: tokio::sync::watch::Sender<usize>,
    connections: Mutex<Vec<Value>>,
    next_connection: Mutex<u64>,
    in_flight: std::sync::atomic::AtomicUsize,
    /// Descriptions that replace the catalog's, by qualified name.
    descriptions: Mutex<BTreeMap<String, String>>,
}

/// A running fake.
#[derive(Clone)]
pub struct ArcadeFake {
    /// `http://127.0.0.1:PORT`.
    pub url: String,
    inner: Arc<Inner>,
}

impl ArcadeFake {
    /// Starts the fake on 127.0.0.1:0 accepting `key`.
    pub async fn start(key: &str) -> ArcadeFake {
        let inner = Arc::new(Inner {
            key: key.to_owned(),
            misbehave: Mutex::default(),
            seen: Mutex::default(),
            authorized: Mutex::default(),
            flows: Mutex::default(),
            flow_changed: tokio::sync::Notify::new(),
            pollers: tokio::sync::watch::Sender::new(0),
            connections: Mutex::default(),
            next_connection: Mutex::new(0),
            in_flight: Default::default(),
            descriptions: Mutex::default(),
        });
        let app = Router::new()
            .route("/v1/health", get(health))
            .route("/v1/tools", get(list_tools))
            .route("/v1/tools/execute", post(execute))
            .route("/v1/tools/authorize", post(authorize))
            .route("/v1/tools/{name}", get(get_tool))
            .route("/v1/auth/status", get(auth_status))
            .route("/v1/admin/user_connections", get(list_connections))
            .route("/v1/admin/user_connections/{id}", delete(delete_connection))
            .layer(middleware::from_fn_with_state(inner.clone(), gate))
            .with_state(inner.clone());
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
        let url = format!("http://{}", listener.local_addr().unwrap());
        tokio::spawn(async move { axum::serve(listener, app).await.unwrap() });
        ArcadeFake { url, inner }
    }

    /// Changes how it misbehaves.
    pub fn misbehave(&self, edit: impl FnOnce(&mut Misbehave)) {
        edit(&mut self.inner.misbehave.lock().unwrap());
    }

    /// Reads what it saw.
    pub fn seen<T>(&self, read: impl FnOnce(&Seen) -> T) -> T {
        read(&self.inner.seen.lock().unwrap())
    }

    /// Gives the tool `qualified_name` (`Math.Add`) a new description from now on.
    pub fn describe(&self, qualified_name: &str, description: &str) {
        self.inner
            .descriptions
            .lock()
            .unwrap()
            .insert(qualified_name.to_owned(), description.to_owned());
    }

    /// Marks `user_id` as having authorized `toolkit`.
    pub fn grant(&self, user_id: &str, toolkit: &str) {
        self.inner
            .authorized
            .lock()
            .unwrap()
            .insert((user_id.to_owned(), toolkit.to_owned()));
    }

    /// Adds a user connection (`connection_status` as given) and returns its id.
    pub fn add_connection(&self, user_id: &str, provider_id: &str, status: &str) -> String {
        add_connection(&self.inner, user_id, provider_id, status)
    }

    /// The user connections it holds.
    pub fn connections(&self) -> Vec<Value> {
        self.inner.connections.lock().unwrap().clone()
    }

    /// The authorization flows by id.
    pub fn flows(&self) -> BTreeMap<String, Flow> {
        self.inner.flows.lock().unwrap().clone()
    }

    /// Completes a flow as the user would: the user's toolkit is authorized, a connection for
    /// the auth provider exists, and waiting status polls answer.
    pub fn complete(&self, auth_id: &str) {
        let flow = {
            let mut flows = self.inner.flows.lock().unwrap();
            let flow = flows.get_mut(auth_id).expect("no such flow");
            flow.status = "completed".into();
            flow.clone()
        };
        self.grant(&flow.user, &flow.toolkit);
        let exists = self
            .connections()
            .iter()
            .any(|c| c["user_id"] == json!(flow.user) && c["provider_id"] == json!(flow.provider));
        if !exists {
            self.add_connection(&flow.user, &flow.provider, "active");
        }
        self.inner.flow_changed.notify_waiters();
    }

    /// Fails a flow (the user declined).
    pub fn fail(&self, auth_id: &str) {
        self.inner.flows.lock().unwrap().get_mut(auth_id).expect("no such flow").status = "failed".into();
        self.inner.flow_changed.notify_waiters();
    }

    /// Returns once at least `n` status polls are waiting on a pending flow.
    pub async fn pollers_waiting(&self, n: usize) {
        let mut rx = self.inner.pollers.subscribe();
        rx.wait_for(|waiting| *waiting >= n).await.unwrap();
    }
}

fn add_connection(inner: &Inner, user_id: &str, provider_id: &str, status: &str) -> String {
    let n = {
        let mut next = inner.next_connection.lock().unwrap();
        *next += 1;
        *next
    };
    let id = format!("uc_{n:04}");
    inner.connections.lock().unwrap().push(json!({
        "id": id, "connection_id": format!("conn_{n:04}"), "connection_status": status,
        "provider_id": provider_id, "provider_type": "oauth2", "provider_description": format!("The {provider_id} provider"),
        "provider_user_info": {"login": user_id}, "scopes": ["read"], "user_id": user_id,
    }));
    id
}

fn error(status: StatusCode, name: &str, message: &str) -> Response {
    (status, Json(json!({"name": name, "message": message}))).into_response()
}

/// Counts a request in flight while it lives.
struct InFlight(Arc<Inner>);

impl InFlight {
    fn start(inner: &Arc<Inner>) -> InFlight {
        let now = inner.in_flight.fetch_add(1, std::sync::atomic::Ordering::SeqCst) + 1;
        let mut seen = inner.seen.lock().unwrap();
        seen.max_in_flight = seen.max_in_flight.max(now);
        InFlight(inner.clone())
    }
}

impl Drop for InFlight {
    fn drop(&mut self) {
        self.0.in_flight.fetch_sub(1, std::sync::atomic::Ordering::SeqCst);
    }
}

async fn gate(State(inner): State<Arc<Inner>>, headers: HeaderMap, request: Request, next: Next) -> Response {
    let _in_flight = InFlight::start(&inner);
    let misbehave = Misbehave::take(&inner.misbehave);
    inner.seen.lock().unwrap().requests += 1;
    let presented = headers
        .get("authorization")
        .and_then(|v| v.to_str().ok())
        .unwrap_or_default()
        .to_owned();
    let token = presented.strip_prefix("Bearer ").unwrap_or(&presented);
    if presented.is_empty() || token != inner.key {
        return error(StatusCode::UNAUTHORIZED, "unauthorized", "missing or invalid API key");
    }
    inner.seen.lock().unwrap().auth_headers.push(presented.clone());
    let failure = |f| match f {
        Failure::RateLimited => error(StatusCode::TOO_MANY_REQUESTS, "rate_limit_exceeded", "too many requests"),
        Failure::Internal => error(StatusCode::INTERNAL_SERVER_ERROR, "internal_error", "something went wrong"),
    };
    if let Some(answer) = misbehave.answer(failure, "{\"items\": [ {\"name\": ").await {
        return answer;
    }
    next.run(request).await
}

fn param(name: &str, val_type: &str, required: bool, description: &str) -> Value {
    json!({"name": name, "required": required, "description": description, "inferrable": true,
           "value_schema": {"val_type": val_type, "inner_val_type": null, "enum": null}})
}

fn tool(toolkit: &str, name: &str, description: &str, params: Vec<Value>, output: Option<Value>, auth: Option<&str>) -> Value {
    json!({
        "qualified_name": format!("{toolkit}.{name}"),
        "fully_qualified_name": format!("{toolkit}.{name}@1.0.0"),
        "name": name,
        "description": description,
        "toolkit": {"name": toolkit, "description": format!("The {toolkit} toolkit"), "version": "1.0.0"},
        "input": {"parameters": params},
        "output": {"available_modes": ["value", "error"], "description": "the result", "value_schema": output},
        "requirements": {"authorization": auth.map(|p| json!({"provider_id": p, "provider_type": "oauth2", "id": p})), "secrets": null, "met": auth.is_none()},
    })
}

/// The catalog, in listing order.
pub fn catalog() -> Vec<Value> {
    vec![
        tool(
            "Math",
            "Add",
            "Add two integers",
            vec![
                param("a", "integer", true, "The first addend"),
                param("b", "integer", true, "The second addend"),
            ],
            Some(json!({"val_type": "integer", "inner_val_type": null, "enum": null})),
            None,
        ),
        tool(
            "Math",
            "Divide",
            "Divide a by b",
            vec![param("a", "number", true, "Dividend"), param("b", "number", true, "Divisor")],
            Some(json!({"val_type": "number"})),
            None,
        ),
        tool(
            "Github",
            "GetRepository",
            "Get a repository",
            vec![
                param("owner", "string", true, "The owner"),
                param("repo", "string", true, "The repository"),
                json!({"name": "include", "required": false, "description": "Extra sections",
                       "value_schema": {"val_type": "array", "inner_val_type": "string", "enum": ["issues", "pulls"]}}),
                param("archived", "boolean", false, "Include archived"),
                param("filters", "json", false, "Filters"),
            ],
            Some(json!({"val_type": "json"})),
            Some("github"),
        ),
        tool(
            "Gmail",
            "ListEmails",
            "List recent emails",
            vec![param("n_emails", "integer", false, "How many")],
            None,
            Some("google"),
        ),
        tool(
            "Slack",
            "SendMessage",
            "Send a message",
            vec![
                param("channel", "string", true, "The channel"),
                json!({"name": "priority", "required": false, "value_schema": {"val_type": "string", "enum": ["low", "high"]}}),
            ],
            Some(json!({"val_type": "string"})),
            None,
        ),
    ]
}

#[derive(serde::Deserialize)]
struct ListQuery {
    toolkit: Option<String>,
    limit: Option<u64>,
    offset: Option<u64>,
}

async fn health() -> Json<Value> {
    Json(json!({"healthy": true}))
}

async fn list_tools(State(inner): State<Arc<Inner>>, Query(q): Query<ListQuery>) -> Response {
    let limit = q.limit.unwrap_or(25);
    if limit == 0 || limit > 100 {
        return error(StatusCode::BAD_REQUEST, "invalid_request", "limit must be between 1 and 100");
    }
    let offset = q.offset.unwrap_or(0);
    if inner.misbehave.lock().unwrap().endless {
        let items: Vec<Value> = (0..limit)
            .map(|i| tool("Loop", &format!("T{}", offset + i), "again", vec![], None, None))
            .collect();
        return Json(json!({"items": items, "total_count": u64::MAX / 2, "offset": offset, "limit": limit, "page_count": limit}))
            .into_response();
    }
    let all: Vec<Value> = catalog()
        .into_iter()
        .filter(|t| {
            q.toolkit
                .as_deref()
                .is_none_or(|k| t["toolkit"]["name"].as_str().unwrap().eq_ignore_ascii_case(k))
        })
        .collect();
    let total = all.len();
    let items: Vec<Value> = all.into_iter().skip(offset as usize).take(limit as usize).collect();
    Json(json!({"items": items, "total_count": total, "offset": offset, "limit": limit, "page_count": items.len()})).into_response()
}

fn find(name: &str) -> Option<Value> {
    let name = name.split('@').next().unwrap_or(name);
    catalog().into_iter().find(|t| t["qualified_name"].as_str() == Some(name))
}

async fn get_tool(State(inner): State<Arc<Inner>>, Path(name): Path<String>) -> Response {
    inner.seen.lock().unwrap().definition_fetches.push(name.clone());
    match find(&name) {
        Some(mut t) => {
            let qualified = t["qualified_name"].as_str().unwrap_or_default().to_owned();
            if let Some(d) = inner.descriptions.lock().unwrap().get(&qualified) {
                t["description"] = json!(d);
            }
            Json(t).into_response()
        }
        None => error(StatusCode::NOT_FOUND, "not_found", &format!("tool {name} not found")),
    }
}

fn done(value: Value) -> Response {
    Json(
        json!({"id": "te_1", "execution_id": "tc_1", "execution_type": "immediate", "status": "success", "success": true,
                "duration": 1.5, "finished_at": "2026-01-01T00:00:00Z", "output": {"value": value}}),
    )
    .into_response()
}

async fn execute(State(inner): State<Arc<Inner>>, Json(body): Json<Value>) -> Response {
    let name = body["tool_name"].as_str().unwrap_or_default().to_owned();
    let user = body["user_id"].as_str().unwrap_or_default().to_owned();
    let version = body["tool_version"].as_str().map(str::to_owned);
    let Some(def) = find(&name) else {
        return error(StatusCode::NOT_FOUND, "not_found", &format!("tool {name} not found"));
    };
    inner.seen.lock().unwrap().executions.push((name.clone(), user.clone(), version));
    let toolkit = def["toolkit"]["name"].as_str().unwrap().to_owned();
    let authorized = inner.authorized.lock().unwrap().contains(&(user.clone(), toolkit.clone()));
    let input = &body["input"];
    match name.as_str() {
        "Math.Add" => match (input["a"].as_i64(), input["b"].as_i64()) {
            (Some(a), Some(b)) => done(json!(a + b)),
            _ => error(StatusCode::BAD_REQUEST, "invalid_request", "a and b must be integers"),
        },
        "Math.Divide" => {
            let (a, b) = (input["a"].as_f64().unwrap_or(0.0), input["b"].as_f64().unwrap_or(0.0));
            if b == 0.0 {
                return Json(json!({"id": "te_2", "status": "failed", "success": false, "output": {"error": {
                    "message": "Cannot divide by zero", "kind": "TOOL_RUNTIME_FATAL", "can_retry": false,
                    "developer_message": "ZeroDivisionError", "additional_prompt_content": "Ask for a non-zero divisor."}}}))
                .into_response();
            }
            done(json!(a / b))
        }
        "Github.GetRepository" if !authorized => error(
            StatusCode::FORBIDDEN,
            "tool_authorization_required",
            "Authorization required: the user must authorize the tool before it can run",
        ),
        "Github.GetRepository" => done(
            json!({"full_name": format!("{}/{}", input["owner"].as_str().unwrap_or(""), input["repo"].as_str().unwrap_or("")), "user": user}),
        ),
        "Gmail.ListEmails" if !authorized => Json(json!({"id": "te_3", "status": "failed", "success": false, "output": {
            "authorization": {"id": "ac_gmail", "status": "pending", "url": format!("https://accounts.example/authorize?user={user}")}}}))
        .into_response(),
        "Gmail.ListEmails" => done(json!({"emails": []})),
        "Slack.SendMessage" => done(json!(format!("sent to {}", input["channel"].as_str().unwrap_or("")))),
        _ => error(StatusCode::NOT_FOUND, "not_found", "unknown tool"),
    }
}

async fn authorize(State(inner): State<Arc<Inner>>, Json(body): Json<Value>) -> Response {
    let name = body["tool_name"].as_str().unwrap_or_default().to_owned();
    let user = body["user_id"].as_str().unwrap_or_default().to_owned();
    let Some(def) = find(&name) else {
        return error(StatusCode::NOT_FOUND, "not_found", &format!("tool {name} not found"));
    };
    if user.is_empty() {
        return error(
            StatusCode::BAD_REQUEST,
            "invalid_request",
            "user_id is required when calling with an API key",
        );
    }
    inner.seen.lock().unwrap().authorizations.push((name.clone(), user.clone()));
    let toolkit = def["toolkit"]["name"].as_str().unwrap().to_owned();
    let provider = def["requirements"]["authorization"]["provider_id"]
        .as_str()
        .unwrap_or("none")
        .to_owned();
    let id = if toolkit == "Github" {
        format!("ac_{user}")
    } else {
        format!("ac_{}_{user}", toolkit.to_lowercase())
    };
    let done = inner.authorized.lock().unwrap().contains(&(user.clone(), toolkit.clone()));
    let status = if done { "completed" } else { "pending" };
    let flow = Flow {
        user: user.clone(),
        toolkit,
        provider: provider.clone(),
        status: status.into(),
    };
    inner.flows.lock().unwrap().insert(id.clone(), flow);
    if done {
        return Json(json!({"id": id, "status": "completed", "user_id": user, "provider_id": provider, "scopes": ["read"]}))
            .into_response();
    }
    Json(
        json!({"id": id, "status": "pending", "user_id": user, "provider_id": provider, "scopes": ["read"],
                "url": format!("https://github.example/login/oauth/authorize?state={user}")}),
    )
    .into_response()
}

#[derive(serde::Deserialize)]
struct StatusQuery {
    id: Option<String>,
    wait: Option<u64>,
}

fn flow_json(id: &str, flow: &Flow) -> Value {
    let mut v = json!({"id": id, "status": flow.status, "user_id": flow.user, "provider_id": flow.provider, "scopes": ["read"]});
    if flow.status == "pending" {
        v["url"] = json!(format!("https://github.example/login/oauth/authorize?state={}", flow.user));
    }
    v
}

/// `GET /v1/auth/status?id&wait`: with `wait` (max 59), a pending flow is answered when it
/// leaves `pending` or when the wait ends.
async fn auth_status(State(inner): State<Arc<Inner>>, Query(q): Query<StatusQuery>) -> Response {
    let Some(id) = q.id.filter(|i| !i.is_empty()) else {
        return error(StatusCode::BAD_REQUEST, "invalid_request", "id is required");
    };
    inner.seen.lock().unwrap().status_polls.push((id.clone(), q.wait));
    if q.wait.is_some_and(|w| w > 59) {
        return error(StatusCode::BAD_REQUEST, "invalid_request", "wait must be at most 59 seconds");
    }
    let deadline = tokio::time::Instant::now() + Duration::from_secs(q.wait.unwrap_or(0));
    let mut waiting = false;
    let answer = loop {
        let changed = inner.flow_changed.notified();
        tokio::pin!(changed);
        changed.as_mut().enable();
        let Some(flow) = inner.flows.lock().unwrap().get(&id).cloned() else {
            break error(StatusCode::NOT_FOUND, "not_found", &format!("authorization {id} not found"));
        };
        if flow.status != "pending" || tokio::time::Instant::now() >= deadline {
            break Json(flow_json(&id, &flow)).into_response();
        }
        if !waiting {
            waiting = true;
            inner.pollers.send_modify(|n| *n += 1);
        }
        let _ = tokio::time::timeout_at(deadline, changed).await;
    };
    if waiting {
        inner.pollers.send_modify(|n| *n -= 1);
    }
    answer
}

/// `GET /v1/admin/user_connections?provider_id&user_id&limit&offset` (or `provider[id]`,
/// `user[id]`).
async fn list_connections(State(inner): State<Arc<Inner>>, Query(q): Query<Vec<(String, String)>>) -> Response {
    inner.seen.lock().unwrap().connection_queries.push(q.clone());
    let get = |k: &str| q.iter().find(|(key, _)| key == k).map(|(_, v)| v.clone());
    let limit = match get("limit").map(|l| l.parse::<u64>()) {
        None => 25,
        Some(Ok(l)) if (1..=100).contains(&l) => l,
        _ => return error(StatusCode::BAD_REQUEST, "invalid_request", "limit must be between 1 and 100"),
    };
    let Ok(offset) = get("offset").map_or(Ok(0), |o| o.parse::<u64>()) else {
        return error(StatusCode::BAD_REQUEST, "invalid_request", "offset must be a number");
    };
    // The public API's filters are `provider_id` and `user_id` (as `@arcadeai/arcadejs` 2.4.1
    // sends them); `arcadepy` 1.10.0 sends `provider[id]` and `user[id]`: both are honoured.
    let provider = get("provider_id").or_else(|| get("provider[id]"));
    let user = if inner.misbehave.lock().unwrap().ignore_user_filter {
        None
    } else {
        get("user_id").or_else(|| get("user[id]"))
    };
    let all: Vec<Value> = inner
        .connections
        .lock()
        .unwrap()
        .iter()
        .filter(|c| provider.as_deref().is_none_or(|p| c["provider_id"] == json!(p)))
        .filter(|c| user.as_deref().is_none_or(|u| c["user_id"] == json!(u)))
        .cloned()
        .collect();
    let total = all.len();
    let items: Vec<Value> = all.into_iter().skip(offset as usize).take(limit as usize).collect();
    Json(json!({"items": items, "total_count": total, "offset": offset, "limit": limit, "page_count": items.len()})).into_response()
}

/// `DELETE /v1/admin/user_connections/{id}`: 204, or 404 when there is no such connection.
async fn delete_connection(State(inner): State<Arc<Inner>>, Path(id): Path<String>) -> Response {
    inner.seen.lock().unwrap().deletions.push(id.clone());
    let mut connections = inner.connections.lock().unwrap();
    let before = connections.len();
    connections.retain(|c| c["id"] != json!(id));
    if connections.len() == before {
        return error(StatusCode::NOT_FOUND, "not_found", &format!("user connection {id} not found"));
    }
    StatusCode::NO_CONTENT.into_response()
}
