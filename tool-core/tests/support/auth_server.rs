//! A local OAuth authorization server for tests: RFC 8414 metadata, a JWKS whose keys a test
//! publishes (and rotates), and access tokens minted with the test-only keys of
//! `tests/fixtures/oauth`. It counts JWKS fetches, so a test can see the resource server's
//! refetching.

#![allow(dead_code)]

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};

use axum::extract::State;
use axum::routing::get;
use jsonwebtoken::{Algorithm, EncodingKey, Header, encode};
use serde_json::{Value, json};

/// The keys live with tool-core's tests; this module is used by tool-providers' tests too.
const FIXTURES: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/../tool-core/tests/fixtures/oauth");

/// A signing key of the fixtures: its `kid`, algorithm, private half and public JWK.
struct SigningKey {
    kid: &'static str,
    alg: Algorithm,
    encoding: EncodingKey,
    jwk: Value,
}

fn fixture(name: &str) -> Vec<u8> {
    std::fs::read(format!("{FIXTURES}/{name}")).unwrap_or_else(|e| panic!("fixture {name}: {e}"))
}

fn signing_keys() -> Vec<SigningKey> {
    let jwk = |name: &str, kid: &str, alg: &str| {
        let mut v: Value = serde_json::from_slice(&fixture(name)).unwrap();
        v["kid"] = kid.into();
        v["alg"] = alg.into();
        v["use"] = "sig".into();
        v
    };
    vec![
        SigningKey {
            kid: "k1",
            alg: Algorithm::RS256,
            encoding: EncodingKey::from_rsa_pem(&fixture("rsa1.pem")).unwrap(),
            jwk: jwk("rsa1.jwk.json", "k1", "RS256"),
        },
        SigningKey {
            kid: "k2",
            alg: Algorithm::RS256,
            encoding: EncodingKey::from_rsa_pem(&fixture("rsa2.pem")).unwrap(),
            jwk: jwk("rsa2.jwk.json", "k2", "RS256"),
        },
        SigningKey {
            kid: "k3",
            alg: Algorithm::ES256,
            encoding: EncodingKey::from_ec_pem(&fixture("ec1.pem")).unwrap(),
            jwk: jwk("ec1.jwk.json", "k3", "ES256"),
        },
    ]
}

struct AsState {
    issuer: String,
    keys: Vec<SigningKey>,
    published: Mutex<Vec<&'static str>>,
    jwks_fetches: AtomicUsize,
    /// Opaque tokens and the introspection answer each gets (RFC 7662).
    opaque: Mutex<Vec<(String, Value)>>,
    introspections: AtomicUsize,
}

/// The client id and secret a resource server introspects with.
pub const INTROSPECTION_CLIENT: (&str, &str) = ("mcp-resource", "introspection-secret");

/// The running authorization server (stopped when dropped).
pub struct AuthServer {
    pub issuer: String,
    state: Arc<AsState>,
    task: tokio::task::JoinHandle<()>,
}

impl Drop for AuthServer {
    fn drop(&mut self) {
        self.task.abort();
    }
}

async fn metadata(State(s): State<Arc<AsState>>) -> ([(&'static str, &'static str); 1], String) {
    json_body(json!({
        "issuer": s.issuer,
        "jwks_uri": format!("{}/jwks", s.issuer),
        "authorization_endpoint": format!("{}/authorize", s.issuer),
        "token_endpoint": format!("{}/token", s.issuer),
        "response_types_supported": ["code"],
        "id_token_signing_alg_values_supported": ["RS256", "ES256"],
    }))
}

async fn jwks(State(s): State<Arc<AsState>>) -> ([(&'static str, &'static str); 1], String) {
    s.jwks_fetches.fetch_add(1, Ordering::SeqCst);
    let published = s.published.lock().unwrap().clone();
    let keys: Vec<Value> = s
        .keys
        .iter()
        .filter(|k| published.contains(&k.kid))
        .map(|k| k.jwk.clone())
        .collect();
    json_body(json!({ "keys": keys }))
}

/// RFC 7662: the answer about the form's `token`, for the client authenticated with HTTP Basic.
async fn introspect(
    State(s): State<Arc<AsState>>,
    headers: axum::http::HeaderMap,
    body: String,
) -> (axum::http::StatusCode, [(&'static str, &'static str); 1], String) {
    // `INTROSPECTION_CLIENT` as HTTP Basic credentials (tool-providers' tests have no base64).
    let expected = "Basic bWNwLXJlc291cmNlOmludHJvc3BlY3Rpb24tc2VjcmV0";
    let authorized = headers.get("authorization").and_then(|v| v.to_str().ok()) == Some(expected);
    if !authorized {
        let (h, b) = json_body(json!({"error": "invalid_client"}));
        return (axum::http::StatusCode::UNAUTHORIZED, h, b);
    }
    s.introspections.fetch_add(1, Ordering::SeqCst);
    let token = body.split('&').find_map(|kv| kv.strip_prefix("token=")).unwrap_or_default();
    let opaque = s.opaque.lock().unwrap();
    let answer = opaque
        .iter()
        .find(|(t, _)| t == token)
        .map_or(json!({"active": false}), |(_, a)| a.clone());
    let (h, b) = json_body(answer);
    (axum::http::StatusCode::OK, h, b)
}

fn json_body(v: Value) -> ([(&'static str, &'static str); 1], String) {
    ([("content-type", "application/json")], v.to_string())
}

impl AuthServer {
    /// Serves on 127.0.0.1 (a free port), publishing `k1` (RS256).
    pub async fn start() -> AuthServer {
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
        let issuer = format!("http://{}", listener.local_addr().unwrap());
        let state = Arc::new(AsState {
            issuer: issuer.clone(),
            keys: signing_keys(),
            published: Mutex::new(vec!["k1"]),
            jwks_fetches: AtomicUsize::new(0),
            opaque: Mutex::new(Vec::new()),
            introspections: AtomicUsize::new(0),
        });
        let app = axum::Router::new()
            .route("/.well-known/oauth-authorization-server", get(metadata))
            .route("/jwks", get(jwks))
            .route("/introspect", axum::routing::post(introspect))
            .with_state(state.clone());
        let task = tokio::spawn(async move {
            let _ = axum::serve(listener, app).await;
        });
        AuthServer { issuer, state, task }
    }

    /// Adds `kid` to the published key set (a rotation: the new key appears).
    pub fn publish(&self, kid: &'static str) {
        self.state.published.lock().unwrap().push(kid);
    }

    /// An opaque token whose introspection answers `answer` (`active` added).
    pub fn opaque(&self, answer: &Value) -> String {
        let mut opaque = self.state.opaque.lock().unwrap();
        let token = format!("opaque-{}-{}", opaque.len(), now());
        let mut answer = answer.clone();
        answer["active"] = json!(true);
        opaque.push((token.clone(), answer));
        token
    }

    /// How often a token was introspected (by an authenticated client).
    pub fn introspections(&self) -> usize {
        self.state.introspections.load(Ordering::SeqCst)
    }

    /// How often the key set was fetched.
    pub fn jwks_fetches(&self) -> usize {
        self.state.jwks_fetches.load(Ordering::SeqCst)
    }

    /// A token signed with the key `kid` (published or not) carrying `claims`.
    pub fn mint(&self, kid: &str, claims: &Value) -> String {
        let key = self.state.keys.iter().find(|k| k.kid == kid).expect("a fixture key");
        let mut header = Header::new(key.alg);
        header.kid = Some(kid.to_owned());
        encode(&header, claims, &key.encoding).unwrap()
    }

    /// Claims valid for `resource` now: `sub`, `scope`, `iss`, `aud`, `iat`, `exp` (+5 min).
    pub fn claims(&self, resource: &str, sub: &str, scope: &str) -> Value {
        let now = now();
        json!({"iss": self.issuer, "sub": sub, "aud": resource, "scope": scope, "iat": now, "exp": now + 300})
    }
}

/// Seconds since the epoch.
pub fn now() -> u64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap()
        .as_secs()
}
