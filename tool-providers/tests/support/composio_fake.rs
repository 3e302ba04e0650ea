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

mod accounts;
mod catalog;
mod execution;
mod listings;

use accounts::{create_account, delete_account, get_account, link, list_accounts, refresh_account};
use catalog::auth_configs;
use execution::execute;
use listings::{get_tool, get_toolkit, list_auth_configs, list_toolkits, list_tools};

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
