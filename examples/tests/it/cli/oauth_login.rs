//! `toolsmith mcp login`, then `--import-mcp NAME=URL` with the stored tokens, end to end: a
//! local OAuth authorization server written for this test (RFC 8414 metadata, RFC 7591
//! registration, RFC 6749 code and refresh grants with PKCE S256, RFC 7662 introspection, the
//! RFC 9207 `iss` on the redirect), our own `toolsmith serve --http` as the protected resource,
//! and this test playing the browser (it GETs the printed URL and follows it to the loopback
//! callback). Then: an import call survives the access token's expiry through a refresh, the
//! credential file is owner-only, `mcp logout` ends it with an error naming the login command,
//! and no token, refresh token or client secret shows in any output at `RUST_LOG=trace,rmcp=trace`
//! (`rmcp`'s own debug lines included).

use std::collections::HashMap;
use std::io::{BufRead, BufReader};
use std::process::{Child, Command, Stdio};
use std::sync::{Arc, Mutex};

use axum::extract::{Form, Query, State};
use axum::http::{HeaderMap, StatusCode};
use axum::response::{IntoResponse, Redirect, Response};
use axum::routing::{get, post};
use axum::{Json, Router};
use base64::Engine;
use serde_json::{Value, json};
use sha2::Digest;

/// What the authorization server gave out and saw.
#[derive(Default)]
pub(super) struct Issued {
    /// Registered clients: id → redirect URIs.
    pub(super) clients: HashMap<String, Vec<String>>,
    /// Codes: code → (client, PKCE challenge, redirect URI).
    codes: HashMap<String, (String, String, String)>,
    /// Access tokens: token → expiry (Unix seconds).
    access: HashMap<String, u64>,
    /// Live refresh tokens.
    refresh: Vec<String>,
    /// Every secret handed out (tokens, refresh tokens, client secrets): none may be printed.
    pub(super) secrets: Vec<String>,
    /// Refresh grants answered.
    refreshes: usize,
    /// The scopes each access token, refresh token and code carries (default `mcp offline_access`).
    scopes: HashMap<String, String>,
    /// The `scope` of each authorization request, in order.
    pub(super) asked: Vec<String>,
    /// How long a client-credentials token lives (seconds; 0: an hour), and the `scope` of each
    /// client-credentials grant answered, in order.
    pub(super) machine_lifetime: u64,
    pub(super) machine_grants: Vec<String>,
    /// The public key (PEM) that checks `private_key_jwt` assertions of the client `signer`, and
    /// how many it accepted.
    pub(super) signer_key: Option<String>,
    pub(super) assertions: usize,
    /// The id of that client (`signer` when unset).
    pub(super) signer_id: Option<String>,
    /// Every client id presented at `/authorize` and `/token` (and as an assertion's `iss`),
    /// in order: a client of another authorization server must never show here.
    pub(super) presented: Vec<String>,
    counter: u64,
}

#[derive(Clone)]
pub(super) struct Auth {
    pub(super) issuer: String,
    /// The audience introspection answers name: the resource server's URL.
    resource: String,
    pub(super) state: Arc<Mutex<Issued>>,
}

fn now() -> u64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap()
        .as_secs()
}

impl Auth {
    fn fresh(&self, prefix: &str) -> String {
        let mut s = self.state.lock().unwrap();
        s.counter += 1;
        let value = format!("{prefix}-CANARY-{}-{}", s.counter, std::process::id());
        s.secrets.push(value.clone());
        value
    }

    /// A token answer for `scope`: the first one already expired (so its use needs a refresh),
    /// later ones valid for an hour.
    fn tokens(&self, expires_in: u64, scope: &str) -> Value {
        let access = self.fresh("at");
        let refresh = self.fresh("rt");
        let mut s = self.state.lock().unwrap();
        s.access.insert(access.clone(), now() + expires_in);
        s.refresh.push(refresh.clone());
        s.scopes.insert(access.clone(), scope.to_owned());
        s.scopes.insert(refresh.clone(), scope.to_owned());
        json!({"access_token": access, "token_type": "Bearer", "expires_in": expires_in, "refresh_token": refresh, "scope": scope})
    }

    /// The scopes `token` (or code) carries.
    fn scope_of(&self, token: &str) -> String {
        let s = self.state.lock().unwrap();
        s.scopes.get(token).cloned().unwrap_or_else(|| "mcp offline_access".into())
    }
}

async fn metadata(State(auth): State<Auth>) -> Json<Value> {
    let at = |path: &str| format!("{}{path}", auth.issuer);
    Json(json!({
        "issuer": auth.issuer,
        "authorization_endpoint": at("/authorize"),
        "token_endpoint": at("/token"),
        "registration_endpoint": at("/register"),
        "introspection_endpoint": at("/introspect"),
        "jwks_uri": at("/jwks"),
        "response_types_supported": ["code"],
        "grant_types_supported": ["authorization_code", "refresh_token", "client_credentials"],
        "code_challenge_methods_supported": ["S256"],
        "scopes_supported": ["mcp", "offline_access", "crm.write"],
        "token_endpoint_auth_methods_supported": ["none", "client_secret_post", "private_key_jwt"],
        "authorization_response_iss_parameter_supported": true,
    }))
}

async fn register(State(auth): State<Auth>, Json(body): Json<Value>) -> Response {
    let redirects: Vec<String> = serde_json::from_value(body["redirect_uris"].clone()).unwrap_or_default();
    // Unique across authorization servers (their ports differ).
    let port = auth.issuer.rsplit(':').next().unwrap_or_default().to_owned();
    let id = format!("client-{}-of-{port}", auth.state.lock().unwrap().clients.len() + 1);
    auth.state.lock().unwrap().clients.insert(id.clone(), redirects.clone());
    let answer = json!({"client_id": id, "redirect_uris": redirects, "token_endpoint_auth_method": "none", "grant_types": ["authorization_code", "refresh_token"]});
    (StatusCode::CREATED, Json(answer)).into_response()
}

/// Approves at once (the person who would click is this test), as RFC 6749 §4.1.2 answers.
async fn authorize(State(auth): State<Auth>, Query(q): Query<HashMap<String, String>>) -> Response {
    let client = q.get("client_id").cloned().unwrap_or_default();
    auth.state.lock().unwrap().presented.push(client.clone());
    let redirect = q.get("redirect_uri").cloned().unwrap_or_default();
    let known = auth
        .state
        .lock()
        .unwrap()
        .clients
        .get(&client)
        .is_some_and(|r| r.contains(&redirect));
    if !known
        || q.get("code_challenge_method").map(String::as_str) != Some("S256")
        || q.get("response_type").map(String::as_str) != Some("code")
    {
        return (StatusCode::BAD_REQUEST, "bad authorization request").into_response();
    }
    let code = auth.fresh("code");
    if let Some(scope) = q.get("scope") {
        let mut s = auth.state.lock().unwrap();
        s.asked.push(scope.clone());
        s.scopes.insert(code.clone(), scope.clone());
    }
    let challenge = q.get("code_challenge").cloned().unwrap_or_default();
    auth.state
        .lock()
        .unwrap()
        .codes
        .insert(code.clone(), (client, challenge, redirect.clone()));
    let state = q.get("state").cloned().unwrap_or_default();
    let issuer: String = url_encode(&auth.issuer);
    Redirect::to(&format!("{redirect}?code={code}&state={}&iss={issuer}", url_encode(&state))).into_response()
}

fn url_encode(s: &str) -> String {
    s.bytes()
        .map(|b| match b {
            b'A'..=b'Z' | b'a'..=b'z' | b'0'..=b'9' | b'-' | b'_' | b'.' | b'~' => (b as char).to_string(),
            _ => format!("%{b:02X}"),
        })
        .collect()
}

async fn token(State(auth): State<Auth>, Form(form): Form<HashMap<String, String>>) -> Response {
    let refused = |why: &str| (StatusCode::BAD_REQUEST, Json(json!({"error": why}))).into_response();
    if let Some(client) = form.get("client_id") {
        auth.state.lock().unwrap().presented.push(client.clone());
    }
    match form.get("grant_type").map(String::as_str) {
        Some("authorization_code") => {
            let code = form.get("code").cloned().unwrap_or_default();
            let Some((client, challenge, redirect)) = auth.state.lock().unwrap().codes.remove(&code) else {
                return refused("invalid_grant");
            };
            let verifier = form.get("code_verifier").cloned().unwrap_or_default();
            let computed = base64::engine::general_purpose::URL_SAFE_NO_PAD.encode(sha2::Sha256::digest(verifier.as_bytes()));
            if computed != challenge || form.get("client_id") != Some(&client) || form.get("redirect_uri") != Some(&redirect) {
                return refused("invalid_grant");
            }
            Json(auth.tokens(0, &auth.scope_of(&code))).into_response()
        }
        Some("refresh_token") => {
            let presented = form.get("refresh_token").cloned().unwrap_or_default();
            {
                let mut s = auth.state.lock().unwrap();
                let Some(at) = s.refresh.iter().position(|r| *r == presented) else {
                    return refused("invalid_grant");
                };
                s.refresh.remove(at);
                s.refreshes += 1;
            }
            Json(auth.tokens(3600, &auth.scope_of(&presented))).into_response()
        }
        Some("client_credentials") if form.contains_key("client_assertion") => {
            // RFC 7523: ES256, signed by the signer's key, for this issuer.
            let (key, signer) = {
                let s = auth.state.lock().unwrap();
                (
                    s.signer_key.clone().unwrap_or_default(),
                    s.signer_id.clone().unwrap_or_else(|| "signer".into()),
                )
            };
            let claimed = jsonwebtoken::decode_header(&form["client_assertion"]).ok().and_then(|_| {
                let mut unchecked = jsonwebtoken::Validation::new(jsonwebtoken::Algorithm::ES256);
                unchecked.insecure_disable_signature_validation();
                unchecked.validate_aud = false;
                let key = jsonwebtoken::DecodingKey::from_secret(&[]);
                jsonwebtoken::decode::<Value>(&form["client_assertion"], &key, &unchecked).ok()
            });
            if let Some(iss) = claimed.as_ref().and_then(|c| c.claims["iss"].as_str()) {
                auth.state.lock().unwrap().presented.push(iss.to_owned());
            }
            let mut validation = jsonwebtoken::Validation::new(jsonwebtoken::Algorithm::ES256);
            validation.set_audience(&[&auth.issuer]);
            validation.set_issuer(&[&signer]);
            let checked = jsonwebtoken::DecodingKey::from_ec_pem(key.as_bytes())
                .and_then(|key| jsonwebtoken::decode::<Value>(&form["client_assertion"], &key, &validation));
            let typed =
                form.get("client_assertion_type").map(String::as_str) == Some("urn:ietf:params:oauth:client-assertion-type:jwt-bearer");
            match checked {
                Ok(jwt) if typed && jwt.claims["sub"] == signer.as_str() && form.get("resource") == Some(&auth.resource) => {}
                _ => return (StatusCode::UNAUTHORIZED, Json(json!({"error": "invalid_client"}))).into_response(),
            }
            let access = auth.fresh("at");
            let mut s = auth.state.lock().unwrap();
            s.assertions += 1;
            s.access.insert(access.clone(), now() + 3600);
            Json(json!({"access_token": access, "token_type": "Bearer", "expires_in": 3600, "scope": "mcp"})).into_response()
        }
        Some("client_credentials") => {
            let (id, secret) = (
                form.get("client_id").map(String::as_str),
                form.get("client_secret").map(String::as_str),
            );
            if id != Some("machine") || secret != Some("machine-secret-CANARY") || form.get("resource") != Some(&auth.resource) {
                return (StatusCode::UNAUTHORIZED, Json(json!({"error": "invalid_client"}))).into_response();
            }
            let access = auth.fresh("at");
            let scope = form.get("scope").cloned().unwrap_or_else(|| "mcp".into());
            let mut s = auth.state.lock().unwrap();
            let lifetime = match s.machine_lifetime {
                0 => 3600,
                n => n,
            };
            s.access.insert(access.clone(), now() + lifetime);
            s.scopes.insert(access.clone(), scope.clone());
            s.machine_grants.push(scope.clone());
            Json(json!({"access_token": access, "token_type": "Bearer", "expires_in": lifetime, "scope": scope})).into_response()
        }
        _ => refused("unsupported_grant_type"),
    }
}

/// RFC 7662, for the resource server: active while not expired.
async fn introspect(State(auth): State<Auth>, _headers: HeaderMap, Form(form): Form<HashMap<String, String>>) -> Json<Value> {
    let token = form.get("token").cloned().unwrap_or_default();
    let expiry = auth.state.lock().unwrap().access.get(&token).copied();
    let scope = auth.scope_of(&token);
    match expiry {
        Some(exp) if exp > now() => Json(json!({
            "active": true, "sub": "olivia", "scope": scope, "client_id": "client-1",
            "iss": auth.issuer, "aud": auth.resource, "exp": exp
        })),
        _ => Json(json!({"active": false})),
    }
}

/// Starts the authorization server on a thread of its own; `resource` is the audience its
/// introspection answers name.
pub(super) fn start_auth(rt: &tokio::runtime::Runtime, resource: String) -> Auth {
    let listener = rt.block_on(tokio::net::TcpListener::bind("127.0.0.1:0")).unwrap();
    let issuer = format!("http://{}", listener.local_addr().unwrap());
    let auth = Auth {
        issuer,
        resource,
        state: Arc::default(),
    };
    let app = Router::new()
        .route("/.well-known/oauth-authorization-server", get(metadata))
        .route("/register", post(register))
        .route("/authorize", get(authorize))
        .route("/token", post(token))
        .route("/introspect", post(introspect))
        .route("/jwks", get(|| async { Json(json!({"keys": []})) }))
        .with_state(auth.clone());
    rt.spawn(async move { axum::serve(listener, app).await.unwrap() });
    auth
}

/// A free loopback port (the resource server must know its own URL before it starts).
pub(super) fn free_port() -> u16 {
    std::net::TcpListener::bind("127.0.0.1:0").unwrap().local_addr().unwrap().port()
}

pub(super) struct Served(Child);

impl Drop for Served {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

/// `toolsmith --store STORE --import-mcp IMPORT call TOOL` converting 100 °C to °F (212): the
/// imported example tool `convert-units`, under the import's name.
pub(super) fn convert_call<'a>(store: &'a str, import: &'a str, tool: &'a str) -> [&'a str; 7] {
    [
        "--store",
        store,
        "--import-mcp",
        import,
        "call",
        tool,
        r#"{"value": 100, "from": "C", "to": "F"}"#,
    ]
}

/// Runs `toolsmith ARGS` (an `mcp login --no-browser`) with the test as its browser: opens the
/// authorization URL it prints, then waits for it. Whether it succeeded, its stdout and its stderr.
pub(super) fn login_as_browser(args: &[&str], data: &std::path::Path, rt: &tokio::runtime::Runtime) -> (bool, String, String) {
    let mut login = toolsmith(args, data).stdout(Stdio::piped()).stderr(Stdio::piped()).spawn().unwrap();
    let mut stdout = BufReader::new(login.stdout.take().unwrap());
    let mut printed = String::new();
    let auth_url = loop {
        let mut line = String::new();
        assert!(stdout.read_line(&mut line).unwrap() > 0, "no authorization URL printed: {printed}");
        printed.push_str(&line);
        if line.starts_with("http") {
            break line.trim().to_owned();
        }
    };
    let landed = rt.block_on(async { reqwest::get(&auth_url).await.unwrap() });
    assert_eq!(landed.status(), 200, "the callback answered");
    std::io::Read::read_to_string(&mut stdout, &mut printed).unwrap();
    let finished = login.wait_with_output().unwrap();
    (
        finished.status.success(),
        printed,
        String::from_utf8_lossy(&finished.stderr).into_owned(),
    )
}

pub(super) fn toolsmith(args: &[&str], data: &std::path::Path) -> Command {
    let mut command = Command::new(env!("CARGO_BIN_EXE_toolsmith"));
    command
        .env("TOOLSMITH_DATA_DIR", data)
        .env("RUST_LOG", "trace,rmcp=trace")
        .env_remove("TOOLSMITH_STORE_KEY")
        .args(args);
    command
}

/// Runs to the end: (success, stdout, stderr).
pub(super) fn run(args: &[&str], data: &std::path::Path) -> (bool, String, String) {
    let out = toolsmith(args, data).output().unwrap();
    (
        out.status.success(),
        String::from_utf8_lossy(&out.stdout).into_owned(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

/// The authorization server, and `toolsmith serve --http` as its protected resource.
pub(super) struct Setup {
    pub(super) rt: tokio::runtime::Runtime,
    pub(super) dir: tempfile::TempDir,
    pub(super) auth: Auth,
    pub(super) url: String,
    pub(super) _served: Served,
}

fn setup() -> Setup {
    setup_serving(&[])
}

/// [`setup`], the resource server given `serve_flags` too.
pub(super) fn setup_serving(serve_flags: &[&str]) -> Setup {
    let rt = tokio::runtime::Runtime::new().unwrap();
    let dir = tempfile::tempdir().unwrap();
    let port = free_port();
    let url = format!("http://127.0.0.1:{port}/mcp");
    let auth = start_auth(&rt, url.clone());
    let served = serve_resource(dir.path(), port, &auth, serve_flags);
    Setup {
        rt,
        dir,
        auth,
        url,
        _served: served,
    }
}

/// `toolsmith serve --http 127.0.0.1:PORT` (its store in `dir`, `serve_flags` added) as the
/// protected resource of the authorization server `auth` (its metadata names it, tokens are
/// introspected there), once it listens.
pub(super) fn serve_resource(dir: &std::path::Path, port: u16, auth: &Auth, serve_flags: &[&str]) -> Served {
    let url = format!("http://127.0.0.1:{port}/mcp");
    let server_store = dir.join("server.sqlite3");
    let introspection = format!("{}/introspect", auth.issuer);
    let bind = format!("127.0.0.1:{port}");
    let flags = [
        "--store",
        server_store.to_str().unwrap(),
        "serve",
        "--http",
        &bind,
        "--auth-issuer",
        &auth.issuer,
        "--auth-resource",
        &url,
        "--oauth-introspection",
        &introspection,
    ];
    let flags: Vec<&str> = flags.iter().copied().chain(serve_flags.iter().copied()).collect();
    let server_secret = "rs-secret-CANARY";
    auth.state.lock().unwrap().secrets.push(server_secret.into());
    let mut child = toolsmith(&flags, dir)
        .env("TOOLSMITH_OAUTH_CLIENT_ID", "resource-server")
        .env("TOOLSMITH_OAUTH_CLIENT_SECRET", server_secret)
        .env("RUST_LOG", "info")
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let mut banner = String::new();
    BufReader::new(child.stderr.take().unwrap()).read_line(&mut banner).unwrap();
    let served = Served(child);
    assert!(banner.contains(&bind), "{banner}");
    served
}

/// Fails naming the output (and the line, the secret masked) when it shows one of the secrets
/// the authorization server gave out or the test gave the client.
///
/// Authorization codes are left out: `rmcp` logs the code it exchanges at debug, which
/// `RUST_LOG=rmcp=debug` (asked for here) shows; a code is single-use and worthless without the
/// PKCE verifier, which is never logged.
pub(super) fn assert_no_secret(auth: &Auth, outputs: &[String]) {
    let secrets: Vec<String> = auth
        .state
        .lock()
        .unwrap()
        .secrets
        .iter()
        .filter(|s| !s.starts_with("code-"))
        .cloned()
        .collect();
    for (n, output) in outputs.iter().enumerate() {
        for secret in &secrets {
            // The line, the secret masked and cut short: what logged it.
            let line = output
                .lines()
                .find(|l| l.contains(secret.as_str()))
                .map(|l| l.replace(secret.as_str(), "***"));
            let line: Option<String> = line.map(|l| l.chars().take(300).collect());
            assert!(line.is_none(), "output #{n} shows a secret: {line:?}");
        }
    }
}

#[test]
fn mcp_login_then_import_refreshes_and_logout_ends_it_without_showing_a_secret() {
    let Setup {
        rt,
        dir,
        auth,
        url,
        _served,
    } = setup();
    let store = dir.path().join("client.sqlite3");
    let store = store.to_str().unwrap();
    let mut outputs = Vec::new();

    // Without a login: refused, with the command that logs in.
    let import = format!("demo={url}");
    let call = convert_call(store, &import, "demo_convert-units");
    let (ok, _, stderr) = run(&call, dir.path());
    assert!(!ok && stderr.contains(&format!("toolsmith mcp login demo {url}")), "{stderr}");

    // The login: the test is the browser.
    let (logged_in, printed, login_err) = login_as_browser(
        &["--store", store, "mcp", "login", "demo", &url, "--no-browser", "--timeout", "60"],
        dir.path(),
        &rt,
    );
    assert!(logged_in, "{printed}\n{login_err}");
    assert!(
        printed.contains("Logged in to `demo`") && printed.contains("refreshable"),
        "{printed}"
    );
    outputs.extend([printed, login_err]);
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        let file = dir.path().join("client.credentials.sqlite3");
        assert_eq!(std::fs::metadata(&file).unwrap().permissions().mode() & 0o777, 0o600);
    }

    // The stored access token has expired already: the import refreshes it and the call runs.
    assert_eq!(auth.state.lock().unwrap().refreshes, 0);
    let (ok, stdout, stderr) = run(&call, dir.path());
    assert!(ok, "{stderr}");
    assert!(stdout.contains("212"), "{stdout}");
    assert_eq!(auth.state.lock().unwrap().refreshes, 1, "one refresh");
    outputs.extend([stdout, stderr]);
    // The refreshed token is stored: the next run uses it as it is.
    let (ok, stdout, stderr) = run(&call, dir.path());
    assert!(ok, "{stderr}");
    assert_eq!(auth.state.lock().unwrap().refreshes, 1, "the stored refreshed token was used");
    outputs.extend([stdout, stderr]);
    let (_, stdout, stderr) = run(&["--store", store, "pending"], dir.path());
    outputs.extend([stdout, stderr]);
    let (_, stdout, stderr) = run(&["--store", store, "tasks", "list"], dir.path());
    outputs.extend([stdout, stderr]);

    // Logged out: refused again, naming the login command.
    let (ok, stdout, _) = run(&["--store", store, "mcp", "logout", "demo"], dir.path());
    assert!(ok && stdout.contains("Logged out of `demo`"), "{stdout}");
    let (ok, _, stderr) = run(&call, dir.path());
    assert!(!ok && stderr.contains(&format!("toolsmith mcp login demo {url}")), "{stderr}");
    outputs.push(stderr);

    assert!(auth.state.lock().unwrap().secrets.len() >= 4);
    assert_no_secret(&auth, &outputs);
}

#[test]
fn a_machine_logs_in_with_client_credentials_and_its_secret_is_never_shown() {
    // The runtime serves the authorization server: kept until the end.
    let Setup {
        rt: _rt,
        dir,
        auth,
        url,
        _served,
    } = setup();
    let store = dir.path().join("client.sqlite3");
    let store = store.to_str().unwrap();
    let secret = "machine-secret-CANARY";
    auth.state.lock().unwrap().secrets.push(secret.into());
    let login = [
        "--store",
        store,
        "mcp",
        "login",
        "ci",
        &url,
        "--client-credentials",
        "--client-id",
        "machine",
    ];
    let mut with_env = login.to_vec();
    with_env.extend(["--client-secret-env", "CI_SECRET"]);
    let out = toolsmith(&with_env, dir.path()).env("CI_SECRET", secret).output().unwrap();
    let (stdout, stderr) = (
        String::from_utf8_lossy(&out.stdout).into_owned(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    );
    assert!(out.status.success() && stdout.contains("Logged in to `ci`"), "{stdout}\n{stderr}");
    let mut outputs = vec![stdout, stderr];
    // A wrong secret is refused by the authorization server.
    let out = toolsmith(&with_env, dir.path()).env("CI_SECRET", "wrong").output().unwrap();
    assert!(!out.status.success());
    outputs.push(String::from_utf8_lossy(&out.stderr).into_owned());
    // Without a secret: refused before anything is sent.
    let (ok, _, stderr) = run(&login, dir.path());
    assert!(!ok && stderr.contains("--client-secret-env"), "{stderr}");

    let import = format!("ci={url}");
    let call = convert_call(store, &import, "ci_convert-units");
    let (ok, stdout, stderr) = run(&call, dir.path());
    assert!(ok && stdout.contains("212"), "{stdout}\n{stderr}");
    outputs.extend([stdout, stderr]);
    assert_no_secret(&auth, &outputs);
}
