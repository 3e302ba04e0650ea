//! The JWT bearer logins end to end (`oauth::login`, then `McpToolProvider`), against an
//! authorization server, an enterprise identity provider and an MCP server written for this test:
//!
//! - workload identity (RFC 7523 §2.1, SEP-1933): the workload's JWT, read from its file at
//!   each grant (a rotated one is the one sent when the token runs out), never stored; a grant
//!   refused is not retried nor replaced by another grant;
//! - enterprise-managed authorization (SEP-990): the user's ID token exchanged at the identity
//!   provider (RFC 8693, discovered from its issuer) for an ID-JAG for this authorization server
//!   and resource, which the JWT bearer grant presents with the client's secret
//!   (`client_secret_basic`).

use std::collections::HashMap;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use axum::extract::{Form, State};
use axum::http::{HeaderMap, StatusCode};
use axum::response::{IntoResponse, Response};
use axum::routing::{get, post};
use axum::{Json, Router};
use base64::Engine as _;
use serde_json::{Value, json};
use tool_core::credentials::{CredentialStore, MemoryCredentials};
use tool_core::provider::{ListToolsOptions, ToolProvider};
use tool_providers::mcp::McpToolProvider;
use tool_providers::mcp::oauth::{self, IdentityProvider, Login, LoginMethod};

const JWT_BEARER: &str = "urn:ietf:params:oauth:grant-type:jwt-bearer";

#[derive(Default)]
struct Seen {
    /// Every token request's form (and its `Authorization`), in order.
    grants: Vec<(HashMap<String, String>, Option<String>)>,
    /// Every token exchange at the identity provider, in order.
    exchanges: Vec<HashMap<String, String>>,
    /// Tokens issued.
    tokens: Vec<String>,
    /// The assertion the authorization server refuses (`invalid_grant`).
    refuse: Option<String>,
    /// How long a token lives.
    lifetime: u64,
}

#[derive(Clone)]
struct Servers {
    issuer: String,
    idp: String,
    resource: String,
    seen: Arc<Mutex<Seen>>,
}

async fn as_metadata(State(s): State<Servers>) -> Json<Value> {
    Json(json!({
        "issuer": s.issuer, "authorization_endpoint": format!("{}/authorize", s.issuer),
        "token_endpoint": format!("{}/token", s.issuer), "response_types_supported": ["code"],
        "grant_types_supported": [JWT_BEARER], "token_endpoint_auth_methods_supported": ["client_secret_basic", "none"],
    }))
}

async fn token(State(s): State<Servers>, headers: HeaderMap, Form(form): Form<HashMap<String, String>>) -> Response {
    let mut seen = s.seen.lock().unwrap();
    let authorization = headers.get("authorization").and_then(|v| v.to_str().ok()).map(str::to_owned);
    seen.grants.push((form.clone(), authorization));
    let assertion = form.get("assertion").cloned().unwrap_or_default();
    if form.get("grant_type").map(String::as_str) != Some(JWT_BEARER)
        || seen.refuse.as_ref() == Some(&assertion)
        || form.get("resource") != Some(&s.resource)
    {
        return (
            StatusCode::BAD_REQUEST,
            Json(json!({"error": "invalid_grant", "error_description": "not this one"})),
        )
            .into_response();
    }
    let access = format!("at-CANARY-{}", seen.tokens.len() + 1);
    seen.tokens.push(access.clone());
    let lifetime = seen.lifetime;
    Json(json!({"access_token": access, "token_type": "Bearer", "expires_in": lifetime})).into_response()
}

async fn idp_metadata(State(s): State<Servers>) -> Json<Value> {
    Json(
        json!({"issuer": s.idp, "token_endpoint": format!("{}/token", s.idp), "grant_types_supported": ["urn:ietf:params:oauth:grant-type:token-exchange"]}),
    )
}

async fn idp_token(State(s): State<Servers>, Form(form): Form<HashMap<String, String>>) -> Response {
    let mut seen = s.seen.lock().unwrap();
    seen.exchanges.push(form.clone());
    let expected = [
        ("grant_type", "urn:ietf:params:oauth:grant-type:token-exchange"),
        ("subject_token_type", "urn:ietf:params:oauth:token-type:id_token"),
        ("requested_token_type", "urn:ietf:params:oauth:token-type:id-jag"),
        ("audience", s.issuer.as_str()),
        ("resource", s.resource.as_str()),
        ("client_id", "idp-client"),
    ];
    if expected.iter().any(|(k, v)| form.get(*k).map(String::as_str) != Some(*v)) {
        return (StatusCode::BAD_REQUEST, Json(json!({"error": "invalid_request"}))).into_response();
    }
    // The ID-JAG: this test's stand-in names the ID token it was issued for.
    let jag = format!("jag.{}.sig", form["subject_token"].replace('.', "-"));
    Json(json!({"access_token": jag, "issued_token_type": "urn:ietf:params:oauth:token-type:id-jag", "token_type": "N_A"})).into_response()
}

async fn resource_metadata(State(s): State<Servers>) -> Json<Value> {
    Json(json!({"resource": s.resource, "authorization_servers": [s.issuer]}))
}

async fn mcp(State(s): State<Servers>, headers: HeaderMap, Json(request): Json<Value>) -> Response {
    let token = headers
        .get("authorization")
        .and_then(|v| v.to_str().ok())
        .and_then(|v| v.strip_prefix("Bearer "));
    if !token.is_some_and(|t| s.seen.lock().unwrap().tokens.iter().any(|issued| issued == t)) {
        let challenge = format!(
            r#"Bearer resource_metadata="{}/.well-known/oauth-protected-resource/mcp""#,
            s.resource.trim_end_matches("/mcp")
        );
        return (StatusCode::UNAUTHORIZED, [("www-authenticate", challenge)]).into_response();
    }
    let id = request.get("id").cloned();
    let result = match request["method"].as_str().unwrap_or_default() {
        "initialize" => {
            json!({"protocolVersion": "2025-11-25", "capabilities": {"tools": {}}, "serverInfo": {"name": "jwt-test", "version": "1"}})
        }
        "tools/list" => json!({"tools": [{"name": "echo", "inputSchema": {"type": "object"}}]}),
        _ if id.is_none() => return StatusCode::ACCEPTED.into_response(),
        _ => {
            let error = json!({"jsonrpc": "2.0", "id": id, "error": {"code": -32601, "message": "Method not found"}});
            return (StatusCode::BAD_REQUEST, Json(error)).into_response();
        }
    };
    Json(json!({"jsonrpc": "2.0", "id": id, "result": result})).into_response()
}

async fn start(lifetime: u64) -> Servers {
    let listen = || async { tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap() };
    let (auth, idp, rs) = (listen().await, listen().await, listen().await);
    let servers = Servers {
        issuer: format!("http://{}", auth.local_addr().unwrap()),
        idp: format!("http://{}", idp.local_addr().unwrap()),
        resource: format!("http://{}/mcp", rs.local_addr().unwrap()),
        seen: Arc::new(Mutex::new(Seen {
            lifetime,
            ..Seen::default()
        })),
    };
    let apps = [
        (
            auth,
            Router::new()
                .route("/.well-known/oauth-authorization-server", get(as_metadata))
                .route("/token", post(token)),
        ),
        (
            idp,
            Router::new()
                .route("/.well-known/openid-configuration", get(idp_metadata))
                .route("/token", post(idp_token)),
        ),
        (
            rs,
            Router::new()
                .route("/.well-known/oauth-protected-resource/mcp", get(resource_metadata))
                .route("/mcp", post(mcp)),
        ),
    ];
    for (listener, app) in apps {
        let app = app.with_state(servers.clone());
        tokio::spawn(async move { axum::serve(listener, app).await.unwrap() });
    }
    servers
}

fn login(servers: &Servers, method: LoginMethod) -> Login {
    Login {
        name: "crm".into(),
        url: servers.resource.clone(),
        scopes: vec![],
        method,
        timeout: Duration::from_secs(20),
    }
}

async fn list(servers: &Servers, store: &Arc<dyn CredentialStore>) -> Vec<String> {
    let provider = McpToolProvider::http("crm", servers.resource.clone()).oauth(store.clone(), "toolsmith mcp login crm URL");
    provider.connect().await.unwrap();
    let listed = provider.list_tools(ListToolsOptions::default()).await.unwrap();
    provider.close().await;
    listed.data.iter().map(|t| t.slug.clone()).collect()
}

fn jwt_file(dir: &tempfile::TempDir, text: &str) -> std::path::PathBuf {
    let path = dir.path().join("token.jwt");
    std::fs::write(&path, format!("{text}\n")).unwrap();
    path
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_workload_logs_in_with_its_jwt_and_a_rotated_one_is_sent_when_the_token_runs_out() {
    // Tokens that run out at once: each connection needs a new grant.
    let servers = start(1).await;
    let dir = tempfile::tempdir().unwrap();
    let file = jwt_file(&dir, "workload.first-CANARY.sig");
    let store: Arc<dyn CredentialStore> = Arc::new(MemoryCredentials::default());
    let method = LoginMethod::JwtBearer {
        client_id: "workload-1".into(),
        client_secret: None,
        jwt_file: file.clone(),
        identity_provider: None,
    };
    oauth::login(login(&servers, method), store.clone(), &mut |_| {}).await.unwrap();
    // The platform rotates the token; the next grant reads it again.
    std::fs::write(&file, "workload.second-CANARY.sig\n").unwrap();
    tokio::time::sleep(Duration::from_millis(1100)).await;
    assert_eq!(list(&servers, &store).await, ["echo"]);
    let stored = String::from_utf8(store.get("crm".into()).await.unwrap().unwrap()).unwrap();
    let seen = servers.seen.lock().unwrap();
    let assertions: Vec<&str> = seen.grants.iter().map(|(f, _)| f["assertion"].as_str()).collect();
    assert_eq!(assertions, ["workload.first-CANARY.sig", "workload.second-CANARY.sig"]);
    let (form, authorization) = &seen.grants[0];
    assert_eq!((form["client_id"].as_str(), authorization), ("workload-1", &None));
    // The JWT is not stored with the login (the file it is read from is).
    assert!(!stored.contains("CANARY.sig") && stored.contains("token.jwt"), "{stored}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_refused_jwt_fails_the_login_once_without_another_grant() {
    let servers = start(3600).await;
    servers.seen.lock().unwrap().refuse = Some("workload.refused.sig".into());
    let dir = tempfile::tempdir().unwrap();
    let store: Arc<dyn CredentialStore> = Arc::new(MemoryCredentials::default());
    let method = LoginMethod::JwtBearer {
        client_id: String::new(),
        client_secret: None,
        jwt_file: jwt_file(&dir, "workload.refused.sig"),
        identity_provider: None,
    };
    let e = oauth::login(login(&servers, method), store.clone(), &mut |_| {})
        .await
        .unwrap_err()
        .to_string();
    assert!(e.contains("the JWT bearer grant failed") && e.contains("invalid_grant"), "{e}");
    assert!(!e.contains("workload.refused"), "{e}");
    let seen = servers.seen.lock().unwrap();
    assert_eq!(seen.grants.len(), 1);
    assert!(!seen.grants[0].0.contains_key("client_id"));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_enterprise_login_exchanges_the_id_token_for_an_id_jag_and_presents_it() {
    let servers = start(3600).await;
    let dir = tempfile::tempdir().unwrap();
    let store: Arc<dyn CredentialStore> = Arc::new(MemoryCredentials::default());
    let method = LoginMethod::JwtBearer {
        client_id: "mcp client".into(),
        client_secret: Some("secret:CANARY".into()),
        jwt_file: jwt_file(&dir, "id.token-CANARY.sig"),
        identity_provider: Some(IdentityProvider {
            issuer: servers.idp.clone(),
            client_id: "idp-client".into(),
        }),
    };
    oauth::login(login(&servers, method), store.clone(), &mut |_| {}).await.unwrap();
    assert_eq!(list(&servers, &store).await, ["echo"]);
    let seen = servers.seen.lock().unwrap();
    assert_eq!(seen.exchanges.len(), 1);
    assert_eq!(seen.exchanges[0]["subject_token"], "id.token-CANARY.sig");
    assert_eq!(seen.grants.len(), 1);
    let (form, authorization) = &seen.grants[0];
    assert_eq!(form["assertion"], "jag.id-token-CANARY-sig.sig");
    // client_secret_basic, the id and secret form-encoded (RFC 6749 §2.3.1).
    let basic = base64::engine::general_purpose::STANDARD.encode("mcp+client:secret%3ACANARY");
    assert_eq!(authorization.as_deref(), Some(format!("Basic {basic}").as_str()));
    assert!(!form.contains_key("client_secret") && !form.contains_key("client_id"));
}
