//! A faithful local fake of Arcade's public `/v1` API (the subset the provider uses).
//!
//! Owns the fake's catalog (toolkits `Math`, `Github` (403 `tool_authorization_required` until
//! the user authorizes), `Gmail` (execute answers `output.authorization`), `Slack`), its
//! request log (which user ids executed what, which `Authorization` form was sent) and the
//! switches that make it misbehave: 429 once, 500, slow, malformed JSON, endless pagination,
//! oversized bodies.

#![allow(dead_code)]

use std::collections::BTreeSet;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use axum::extract::{Path, Query, Request, State};
use axum::http::{HeaderMap, StatusCode};
use axum::middleware::{self, Next};
use axum::response::{IntoResponse, Response};
use axum::routing::{get, post};
use axum::{Json, Router};
use serde_json::{json, Value};

/// How the fake misbehaves.
#[derive(Debug, Clone, Default)]
pub struct Misbehave {
    /// Answer the next request with 429 (`Retry-After: 1`), then behave.
    pub rate_limit_once: bool,
    /// Answer every request with 429.
    pub rate_limit_always: bool,
    /// Answer every request with 500.
    pub fail_500: bool,
    /// Wait this long before answering.
    pub slow: Option<Duration>,
    /// Answer success bodies that are not JSON.
    pub malformed: bool,
    /// `GET /v1/tools` never ends (every page full, `total_count` huge).
    pub endless: bool,
    /// Answer a 9 MiB body.
    pub oversized: bool,
}

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
}

struct Inner {
    key: String,
    misbehave: Mutex<Misbehave>,
    seen: Mutex<Seen>,
    authorized: Mutex<BTreeSet<(String, String)>>,
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
        });
        let app = Router::new()
            .route("/v1/health", get(health))
            .route("/v1/tools", get(list_tools))
            .route("/v1/tools/execute", post(execute))
            .route("/v1/tools/authorize", post(authorize))
            .route("/v1/tools/{name}", get(get_tool))
            .route("/v1/auth/status", get(auth_status))
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

    /// Marks `user_id` as having authorized `toolkit`.
    pub fn grant(&self, user_id: &str, toolkit: &str) {
        self.inner
            .authorized
            .lock()
            .unwrap()
            .insert((user_id.to_owned(), toolkit.to_owned()));
    }
}

fn error(status: StatusCode, name: &str, message: &str) -> Response {
    (status, Json(json!({"name": name, "message": message}))).into_response()
}

async fn gate(State(inner): State<Arc<Inner>>, headers: HeaderMap, request: Request, next: Next) -> Response {
    let misbehave = {
        let mut m = inner.misbehave.lock().unwrap();
        let now = m.clone();
        m.rate_limit_once = false;
        now
    };
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
    if let Some(d) = misbehave.slow {
        tokio::time::sleep(d).await;
    }
    if misbehave.rate_limit_once || misbehave.rate_limit_always {
        let mut r = error(StatusCode::TOO_MANY_REQUESTS, "rate_limit_exceeded", "too many requests");
        r.headers_mut().insert("retry-after", "1".parse().unwrap());
        return r;
    }
    if misbehave.fail_500 {
        return error(StatusCode::INTERNAL_SERVER_ERROR, "internal_error", "something went wrong");
    }
    if misbehave.oversized {
        let big = "x".repeat(9 * 1024 * 1024);
        return (
            StatusCode::OK,
            [("content-type", "application/json")],
            format!("{{\"items\":[],\"pad\":\"{big}\"}}"),
        )
            .into_response();
    }
    if misbehave.malformed {
        return (StatusCode::OK, [("content-type", "application/json")], "{\"items\": [ {\"name\": ").into_response();
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

async fn get_tool(Path(name): Path<String>) -> Response {
    match find(&name) {
        Some(t) => Json(t).into_response(),
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
    inner.seen.lock().unwrap().authorizations.push((name.clone(), user.clone()));
    let toolkit = def["toolkit"]["name"].as_str().unwrap().to_owned();
    if inner.authorized.lock().unwrap().contains(&(user.clone(), toolkit)) {
        return Json(json!({"id": "ac_done", "status": "completed", "user_id": user})).into_response();
    }
    Json(json!({"id": format!("ac_{user}"), "status": "pending", "user_id": user,
                "url": format!("https://github.example/login/oauth/authorize?state={user}")}))
    .into_response()
}

#[derive(serde::Deserialize)]
struct StatusQuery {
    id: String,
}

async fn auth_status(Query(q): Query<StatusQuery>) -> Json<Value> {
    Json(json!({"id": q.id, "status": "pending"}))
}
