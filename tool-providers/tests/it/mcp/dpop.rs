//! DPoP (RFC 9449) end to end: `oauth::login` and then `McpToolProvider` against an
//! authorization server and an MCP server written for this test, both of which check every
//! proof (an ES256 JWT whose header key verifies it, `htm`, `htu`, a `jti` never seen before, the
//! token's hash `ath`, the key the token is bound to) and each of which first refuses a proof
//! without the nonce it hands out (`use_dpop_nonce` with `DPoP-Nonce`: a 400 from the token
//! endpoint, a 401 from the MCP server). The authorization server advertises DPoP in its
//! metadata (`dpop_signing_alg_values_supported`), which is what turns it on; one that does not
//! gets bearer tokens. The login's key is stored with it, and shows in no log line at trace level.

use std::collections::{HashMap, HashSet};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use axum::extract::{Form, Query, State};
use axum::http::{HeaderMap, StatusCode};
use axum::response::{IntoResponse, Redirect, Response};
use axum::routing::{get, post};
use axum::{Json, Router};
use base64::Engine as _;
use base64::engine::general_purpose::URL_SAFE_NO_PAD as B64;
use serde_json::{Value, json};
use tool_core::credentials::{CredentialStore, MemoryCredentials};
use tool_core::provider::{ListToolsOptions, ToolProvider};
use tool_providers::mcp::McpToolProvider;
use tool_providers::mcp::oauth::{self, Login, LoginMethod};

const AS_NONCE: &str = "as-nonce-1";
const RS_NONCE: &str = "rs-nonce-1";

/// What both servers saw.
#[derive(Default)]
struct Seen {
    /// Whether the authorization server offers DPoP, and whether it answers a proof with a bearer
    /// token all the same.
    offers: bool,
    unbound: bool,
    /// Token → the thumbprint of the key it is bound to (none: a bearer token).
    tokens: HashMap<String, Option<String>>,
    /// Every proof's `jti` (both servers).
    jtis: HashSet<String>,
    /// A proof was used twice, or one did not verify: what was wrong.
    faults: Vec<String>,
    /// Token requests refused for want of the nonce, and those with it.
    as_challenges: usize,
    as_nonced: usize,
    /// The `Authorization` schemes the MCP server saw.
    schemes: Vec<String>,
    /// MCP requests refused for want of the nonce, and those with it.
    rs_challenges: usize,
    rs_nonced: usize,
    counter: u64,
}

#[derive(Clone)]
struct Servers {
    issuer: String,
    resource: String,
    seen: Arc<Mutex<Seen>>,
}

/// The RFC 7638 thumbprint of an EC JWK.
fn thumbprint(jwk: &Value) -> String {
    let canonical = format!(
        r#"{{"crv":"{}","kty":"EC","x":"{}","y":"{}"}}"#,
        jwk["crv"].as_str().unwrap_or_default(),
        jwk["x"].as_str().unwrap_or_default(),
        jwk["y"].as_str().unwrap_or_default()
    );
    B64.encode(ring::digest::digest(&ring::digest::SHA256, canonical.as_bytes()))
}

/// The claims and key thumbprint of `proof` when it is a valid proof for `htm` on `htu` whose
/// `jti` was never seen; else what is wrong with it.
fn check(seen: &mut Seen, proof: Option<&str>, htm: &str, htu: &str) -> Result<(Value, String), String> {
    let proof = proof.ok_or("no proof")?;
    let parts: Vec<&str> = proof.split('.').collect();
    let [head, body, signature] = parts.as_slice() else {
        return Err("not a JWS".into());
    };
    let decode = |part: &str| -> Option<Value> { serde_json::from_slice(&B64.decode(part).ok()?).ok() };
    let (header, claims) = (decode(head).ok_or("header")?, decode(body).ok_or("claims")?);
    if header["typ"] != "dpop+jwt" || header["alg"] != "ES256" || header["jwk"].get("d").is_some() {
        return Err(format!("header {header}"));
    }
    let jwk = &header["jwk"];
    let mut point = vec![4u8];
    for c in ["x", "y"] {
        point.extend(B64.decode(jwk[c].as_str().unwrap_or_default()).map_err(|_| "jwk")?);
    }
    let signature = B64.decode(signature).map_err(|_| "signature")?;
    ring::signature::UnparsedPublicKey::new(&ring::signature::ECDSA_P256_SHA256_FIXED, &point)
        .verify(format!("{head}.{body}").as_bytes(), &signature)
        .map_err(|_| "the signature does not verify")?;
    if claims["htm"] != htm || claims["htu"] != htu || !claims["iat"].is_u64() {
        return Err(format!("claims {claims}"));
    }
    let jti = claims["jti"].as_str().ok_or("no jti")?.to_owned();
    if !seen.jtis.insert(jti) {
        return Err("a jti seen before".into());
    }
    Ok((claims, thumbprint(jwk)))
}

async fn metadata(State(s): State<Servers>) -> Json<Value> {
    let at = |path: &str| format!("{}{path}", s.issuer);
    let mut metadata = json!({
        "issuer": s.issuer, "authorization_endpoint": at("/authorize"), "token_endpoint": at("/token"),
        "registration_endpoint": at("/register"), "response_types_supported": ["code"],
        "grant_types_supported": ["authorization_code", "refresh_token"], "code_challenge_methods_supported": ["S256"],
        "token_endpoint_auth_methods_supported": ["none"], "authorization_response_iss_parameter_supported": true,
    });
    if s.seen.lock().unwrap().offers {
        metadata["dpop_signing_alg_values_supported"] = json!(["ES256"]);
    }
    Json(metadata)
}

async fn register(Json(body): Json<Value>) -> Response {
    let answer = json!({"client_id": "client-1", "redirect_uris": body["redirect_uris"], "token_endpoint_auth_method": "none"});
    (StatusCode::CREATED, Json(answer)).into_response()
}

async fn authorize(State(s): State<Servers>, Query(q): Query<HashMap<String, String>>) -> Response {
    let mut to = reqwest::Url::parse(&q["redirect_uri"]).unwrap();
    to.query_pairs_mut()
        .append_pair("code", "code-1")
        .append_pair("state", q.get("state").map(String::as_str).unwrap_or_default())
        .append_pair("iss", &s.issuer);
    Redirect::to(to.as_str()).into_response()
}

async fn token(State(s): State<Servers>, headers: HeaderMap, Form(_form): Form<HashMap<String, String>>) -> Response {
    let mut seen = s.seen.lock().unwrap();
    seen.counter += 1;
    let access = format!("at-CANARY-{}", seen.counter);
    if !seen.offers {
        seen.tokens.insert(access.clone(), None);
        return Json(json!({"access_token": access, "token_type": "Bearer", "expires_in": 3600})).into_response();
    }
    let proof = headers.get("dpop").and_then(|v| v.to_str().ok());
    let (claims, jkt) = match check(&mut seen, proof, "POST", &format!("{}/token", s.issuer)) {
        Ok(checked) => checked,
        Err(why) => {
            seen.faults.push(format!("token request: {why}"));
            return (StatusCode::BAD_REQUEST, Json(json!({"error": "invalid_dpop_proof"}))).into_response();
        }
    };
    if claims["nonce"] != AS_NONCE {
        seen.as_challenges += 1;
        let refusal = Json(json!({"error": "use_dpop_nonce"}));
        return (StatusCode::BAD_REQUEST, [("dpop-nonce", AS_NONCE)], refusal).into_response();
    }
    seen.as_nonced += 1;
    if seen.unbound {
        seen.tokens.insert(access.clone(), None);
        return Json(json!({"access_token": access, "token_type": "Bearer", "expires_in": 3600})).into_response();
    }
    seen.tokens.insert(access.clone(), Some(jkt));
    Json(json!({"access_token": access, "token_type": "DPoP", "expires_in": 3600})).into_response()
}

async fn resource_metadata(State(s): State<Servers>) -> Json<Value> {
    Json(json!({"resource": s.resource, "authorization_servers": [s.issuer]}))
}

/// The MCP server: the token checked (and, when bound, the proof), then a bare JSON-RPC answer.
async fn mcp(State(s): State<Servers>, headers: HeaderMap, Json(request): Json<Value>) -> Response {
    let challenge = format!(
        r#"DPoP resource_metadata="{}/.well-known/oauth-protected-resource/mcp""#,
        s.issuer_of_rs()
    );
    let Some((scheme, token)) = headers
        .get("authorization")
        .and_then(|v| v.to_str().ok())
        .and_then(|v| v.split_once(' '))
    else {
        return (StatusCode::UNAUTHORIZED, [("www-authenticate", challenge)]).into_response();
    };
    let mut seen = s.seen.lock().unwrap();
    seen.schemes.push(scheme.to_owned());
    let bound = match seen.tokens.get(token) {
        Some(bound) => bound.clone(),
        None => return (StatusCode::UNAUTHORIZED, [("www-authenticate", challenge)]).into_response(),
    };
    if let Some(jkt) = bound {
        let proof = headers.get("dpop").and_then(|v| v.to_str().ok());
        let ath = B64.encode(ring::digest::digest(&ring::digest::SHA256, token.as_bytes()));
        match check(&mut seen, proof, "POST", &s.resource) {
            Ok((claims, key)) if key == jkt && claims["ath"] == ath.as_str() && scheme == "DPoP" => {
                if claims["nonce"] != RS_NONCE {
                    seen.rs_challenges += 1;
                    let asks = format!(r#"DPoP error="use_dpop_nonce", {}"#, challenge.trim_start_matches("DPoP "));
                    let refusal = [("www-authenticate", asks), ("dpop-nonce", RS_NONCE.to_owned())];
                    return (StatusCode::UNAUTHORIZED, refusal).into_response();
                }
                seen.rs_nonced += 1;
            }
            Ok((claims, _)) => {
                seen.faults.push(format!("MCP request: not bound to the token's key, or {claims}"));
                return (StatusCode::UNAUTHORIZED, [("www-authenticate", challenge)]).into_response();
            }
            Err(why) => {
                seen.faults.push(format!("MCP request: {why}"));
                return (StatusCode::UNAUTHORIZED, [("www-authenticate", challenge)]).into_response();
            }
        }
    }
    let id = request.get("id").cloned();
    let result = match request["method"].as_str().unwrap_or_default() {
        "initialize" => json!({
            "protocolVersion": "2025-11-25", "capabilities": {"tools": {}},
            "serverInfo": {"name": "dpop-test", "version": "1"}
        }),
        "tools/list" => json!({"tools": [{"name": "echo", "inputSchema": {"type": "object"}}]}),
        "ping" => json!({}),
        method if id.is_none() => {
            let _ = method;
            return StatusCode::ACCEPTED.into_response();
        }
        _ => {
            let error = json!({"jsonrpc": "2.0", "id": id, "error": {"code": -32601, "message": "Method not found"}});
            return (StatusCode::BAD_REQUEST, Json(error)).into_response();
        }
    };
    Json(json!({"jsonrpc": "2.0", "id": id, "result": result})).into_response()
}

impl Servers {
    fn issuer_of_rs(&self) -> String {
        self.resource.trim_end_matches("/mcp").to_owned()
    }
}

/// Starts the authorization server and the MCP server (two origins).
async fn start(offers: bool) -> Servers {
    let auth = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let rs = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let servers = Servers {
        issuer: format!("http://{}", auth.local_addr().unwrap()),
        resource: format!("http://{}/mcp", rs.local_addr().unwrap()),
        seen: Arc::new(Mutex::new(Seen { offers, ..Seen::default() })),
    };
    let auth_app = Router::new()
        .route("/.well-known/oauth-authorization-server", get(metadata))
        .route("/register", post(register))
        .route("/authorize", get(authorize))
        .route("/token", post(token))
        .with_state(servers.clone());
    let rs_app = Router::new()
        .route("/.well-known/oauth-protected-resource/mcp", get(resource_metadata))
        .route("/mcp", post(mcp))
        .with_state(servers.clone());
    tokio::spawn(async move { axum::serve(auth, auth_app).await.unwrap() });
    tokio::spawn(async move { axum::serve(rs, rs_app).await.unwrap() });
    servers
}

/// Logs in (following the authorization URL as a browser would), then imports and lists the
/// tools; the tools' names and the stored login.
async fn log_in_and_list(servers: &Servers) -> (Vec<String>, Value) {
    let store: Arc<dyn CredentialStore> = Arc::new(MemoryCredentials::default());
    log_in_and_list_in(servers, &store).await
}

async fn log_in_and_list_in(servers: &Servers, store: &Arc<dyn CredentialStore>) -> (Vec<String>, Value) {
    let login = Login {
        name: "crm".into(),
        url: servers.resource.clone(),
        scopes: vec![],
        method: LoginMethod::Browser {
            port: 0,
            open_browser: false,
            follow: true,
            client_id: None,
            client_secret: None,
            client_metadata_url: None,
        },
        timeout: Duration::from_secs(20),
    };
    oauth::login(login, store.clone(), &mut |_| {}).await.unwrap();
    let provider = McpToolProvider::http("crm", servers.resource.clone()).oauth(store.clone(), "toolsmith mcp login crm URL");
    provider.connect().await.unwrap();
    let listed = provider.list_tools(ListToolsOptions::default()).await.unwrap();
    provider.close().await;
    let names = listed.data.iter().map(|t| t.slug.clone()).collect();
    let stored = store.get("crm".into()).await.unwrap().unwrap();
    (names, serde_json::from_slice(&stored).unwrap())
}

// One thread: the thread-local log subscriber sees rmcp's and reqwest's tasks too.
#[tokio::test]
async fn a_dpop_login_binds_its_tokens_to_its_key_and_answers_both_servers_nonces() {
    let logs = crate::support::logs::capture();

    let servers = start(true).await;
    let (names, stored) = log_in_and_list(&servers).await;
    assert_eq!(names, ["echo"]);
    let seen = servers.seen.lock().unwrap();
    assert!(seen.faults.is_empty(), "{:?}", seen.faults);
    // The code grant: refused once for the nonce, then granted with it.
    assert_eq!((seen.as_challenges, seen.as_nonced), (1, 1));
    // Every MCP request presented the token with the DPoP scheme; the first one, without the
    // MCP server's nonce, was refused, and so was the `ping` that learns the nonce (rmcp keeps
    // no header of a 401 but its challenge); the requests with the nonce passed.
    assert!(
        seen.schemes.iter().all(|s| s == "DPoP") && !seen.schemes.is_empty(),
        "{:?}",
        seen.schemes
    );
    assert_eq!(seen.rs_challenges, 2, "{:?}", seen.schemes);
    assert!(seen.rs_nonced >= 3, "initialize, initialized, tools/list: {}", seen.rs_nonced);
    assert!(seen.tokens.values().all(Option::is_some));

    // The key is stored with the login, and no log line shows it.
    let key = stored["dpop"].as_str().expect("the DPoP key is stored with the login");
    let logged = logs.text();
    assert!(!logged.is_empty(), "the trace log was captured");
    let pkcs8 = B64.decode(key).unwrap();
    // The private scalar is the 32 bytes after the PKCS#8 prefix of a P-256 key (ring's layout).
    let scalar = B64.encode(&pkcs8[36..68]);
    for secret in [key, scalar.as_str()] {
        assert!(!logged.contains(secret), "the DPoP key shows in the log");
    }
    for token in seen.tokens.keys() {
        assert!(!logged.contains(token.as_str()), "a token shows in the log");
    }
}

/// Plays the browser for an interactive login: follows the authorization URL to the loopback
/// callback, on a thread of its own.
fn follow(url: &str) {
    let url = url.to_owned();
    std::thread::spawn(move || {
        let runtime = tokio::runtime::Builder::new_current_thread().enable_all().build().unwrap();
        let _ = runtime.block_on(reqwest::get(url));
    });
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_new_login_in_the_middle_of_an_import_brings_its_own_key_to_the_session() {
    let servers = start(true).await;
    let store: Arc<dyn CredentialStore> = Arc::new(MemoryCredentials::default());
    let (_, first) = log_in_and_list_in(&servers, &store).await;
    // The server forgets the token: only a new login (run interactively) gets in again.
    servers.seen.lock().unwrap().tokens.clear();
    let how = oauth::InteractiveLogin::new(false, Duration::from_secs(20), follow);
    let provider = McpToolProvider::http("crm", servers.resource.clone())
        .oauth(store.clone(), "toolsmith mcp login crm URL")
        .interactive_login(how);
    provider.connect().await.unwrap();
    let listed = provider.list_tools(ListToolsOptions::default()).await.unwrap();
    provider.close().await;
    assert_eq!(listed.data.len(), 1);
    let second: Value = serde_json::from_slice(&store.get("crm".into()).await.unwrap().unwrap()).unwrap();
    // A new key, and the session's proofs made with it: the new token is bound to it.
    assert_ne!(first["dpop"], second["dpop"]);
    let seen = servers.seen.lock().unwrap();
    assert!(seen.faults.is_empty(), "{:?}", seen.faults);
    assert_eq!(seen.tokens.len(), 1);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_bearer_token_answered_to_a_proof_goes_as_a_bearer_one() {
    let servers = start(true).await;
    servers.seen.lock().unwrap().unbound = true;
    let (names, stored) = log_in_and_list(&servers).await;
    assert_eq!(names, ["echo"]);
    let seen = servers.seen.lock().unwrap();
    assert_eq!(seen.as_nonced, 1, "the token request carried a proof");
    assert!(
        seen.schemes.iter().all(|s| s == "Bearer") && !seen.schemes.is_empty(),
        "{:?}",
        seen.schemes
    );
    assert!(stored.get("dpop").is_some());
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn without_dpop_in_the_metadata_the_tokens_are_bearer_ones() {
    let servers = start(false).await;
    let (names, stored) = log_in_and_list(&servers).await;
    assert_eq!(names, ["echo"]);
    let seen = servers.seen.lock().unwrap();
    assert!(
        seen.schemes.iter().all(|s| s == "Bearer") && !seen.schemes.is_empty(),
        "{:?}",
        seen.schemes
    );
    assert!(seen.jtis.is_empty() && stored.get("dpop").is_none());
}
