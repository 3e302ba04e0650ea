//! `toolsmith serve --http` as an OAuth 2.1 resource server, against a local authorization
//! server (`support/auth_server.rs`: RFC 8414 metadata, a JWKS, tokens signed with test keys).
//! The server is a real child process of this binary (`support/child_cli.rs`); requests are
//! real HTTP. Covered: Protected Resource Metadata and challenges, every kind of bad token, key
//! rotation and the bounded refetch, server-wide and per-tool scopes (403 step-up challenges,
//! hidden tools), and who the caller is reaching tools and provider scoping — never the token.

use crate::support::auth_server;
use crate::support::child_cli;

use auth_server::{AuthServer, now};
use base64::Engine;
use serde_json::{Value, json};
use tool_core::prelude::*;

/// The canonical URI the server is configured with (a public name, not its bind address).
const RESOURCE: &str = "http://localhost/mcp";
const VERSION: &str = "2025-11-25";

/// Who is calling, as a tool sees it: its caller, its resource id, the provider bucket a
/// caller-supplied scope gives it (what Composio and Arcade tools compute), and everything in
/// its context.
#[tool]
async fn whoami(#[ctx] cx: ToolContext) -> Value {
    let raw = cx.raw_request_context();
    let from_context = || tool_core::provider::connection_owner(tool_core::provider::Scope::CallerSupplied, None, raw, None).ok();
    let bucket = cx
        .caller()
        .and_then(|c| c.subject())
        .map(str::to_owned)
        .or_else(from_context)
        .or_else(|| cx.call().data.resource_id.clone());
    let caller = cx.caller().map(
        |c| json!({"subject": c.subject(), "scopes": c.scopes(), "client_id": c.client_id(), "claims": c.claims(), "owner": c.owner()}),
    );
    json!({"caller": caller, "resource_id": cx.call().data.resource_id.as_deref(), "bucket": bucket, "context": raw})
}

/// Updates a CRM record
#[tool(scopes = ["crm.write"])]
async fn crm_update(
    /// The record
    id: String,
) -> String {
    format!("updated {id}")
}

/// Pays an amount (a person approves each payment)
#[tool(require_approval, scopes = ["payments"])]
async fn oauth_pay(
    /// The amount
    amount: u32,
) -> String {
    format!("paid {amount}")
}

/// This suite's tests, named `SUITE::TEST`.
pub fn trials(suite: &str) -> Vec<libtest_mimic::Trial> {
    child_cli::trials(
        suite,
        &[
            ("metadata_and_challenges", metadata_and_challenges),
            ("bad_tokens_are_refused", bad_tokens_are_refused),
            ("key_rotation_and_bounded_refetch", key_rotation_and_bounded_refetch),
            ("scopes_server_wide_and_per_tool", scopes_server_wide_and_per_tool),
            ("hidden_tools", hidden_tools),
            ("opaque_tokens_are_introspected", opaque_tokens_are_introspected),
            ("a_session_is_its_creators", a_session_is_its_creators),
            (
                "the_caller_reaches_tools_but_its_token_does_not",
                the_caller_reaches_tools_but_its_token_does_not,
            ),
            (
                "a_waiting_call_is_answered_by_its_caller_only",
                a_waiting_call_is_answered_by_its_caller_only,
            ),
        ],
    )
}

/// A `toolsmith serve --http` child, killed when dropped.
struct Served {
    _server: child_cli::ServedChild,
    url: String,
    _store: tempfile::TempDir,
}

impl Served {
    /// A stateless server answering JSON, with `extra` flags.
    fn start(auth: &AuthServer, extra: &[&str]) -> Served {
        let mut flags = vec!["--stateless", "--json-response"];
        flags.extend_from_slice(extra);
        Served::spawn(auth, &flags)
    }

    fn spawn(auth: &AuthServer, extra: &[&str]) -> Served {
        Served::spawn_with(auth, extra, &[])
    }

    fn spawn_with(auth: &AuthServer, extra: &[&str], env: &[(&str, &str)]) -> Served {
        let store = tempfile::tempdir().unwrap();
        let path = store.path().join("store.db");
        let mut args = vec![
            "--store",
            path.to_str().unwrap(),
            "serve",
            "--http",
            "127.0.0.1:0",
            "--auth-issuer",
            &auth.issuer,
            "--auth-resource",
            RESOURCE,
            "--required-scope",
            "mcp",
        ];
        args.extend_from_slice(extra);
        let server = child_cli::ServedChild::start(child_cli::toolsmith(&args).envs(env.iter().copied()));
        let url = server.url.clone();
        Served {
            _server: server,
            url,
            _store: store,
        }
    }

    fn origin(&self) -> String {
        self.url.trim_end_matches("/mcp").to_owned()
    }

    /// POSTs one JSON-RPC request, with `token` as the bearer token.
    async fn post(&self, token: Option<&str>, id: u64, method: &str, params: Value) -> reqwest::Response {
        let mut request = reqwest::Client::new()
            .post(&self.url)
            .header("Accept", "application/json, text/event-stream")
            .header("Content-Type", "application/json")
            .header("MCP-Protocol-Version", VERSION)
            .body(json!({"jsonrpc": "2.0", "id": id, "method": method, "params": params}).to_string());
        if let Some(token) = token {
            request = request.bearer_auth(token);
        }
        request.send().await.unwrap()
    }

    async fn result(&self, token: &str, method: &str, params: Value) -> Value {
        let r = self.post(Some(token), 1, method, params).await;
        assert_eq!(r.status(), 200, "{method} was refused: {:?}", r.headers().get("www-authenticate"));
        let body: Value = r.json().await.unwrap();
        body.get("result").cloned().unwrap_or_else(|| panic!("no result: {body}"))
    }

    async fn call(&self, token: &str, tool: &str, args: Value) -> Value {
        self.result(token, "tools/call", json!({"name": tool, "arguments": args})).await
    }
}

fn challenge(r: &reqwest::Response) -> String {
    r.headers()
        .get("www-authenticate")
        .map(|v| v.to_str().unwrap().to_owned())
        .unwrap_or_default()
}

const METADATA_URL: &str = "http://localhost/.well-known/oauth-protected-resource/mcp";

fn metadata_and_challenges() {
    child_cli::block_on(async {
        let auth = AuthServer::start().await;
        let served = Served::start(&auth, &[]);
        for path in ["/.well-known/oauth-protected-resource", "/.well-known/oauth-protected-resource/mcp"] {
            let doc: Value = reqwest::get(format!("{}{path}", served.origin()))
                .await
                .unwrap()
                .json()
                .await
                .unwrap();
            assert_eq!(doc["resource"], RESOURCE, "{path}: {doc}");
            assert_eq!(doc["authorization_servers"], json!([auth.issuer]));
            assert_eq!(
                doc["scopes_supported"],
                json!(["mcp", "crm.write", "payments"]),
                "required scopes, then the tools'"
            );
            assert_eq!(doc["bearer_methods_supported"], json!(["header"]));
        }
        let r = served.post(None, 1, "tools/list", json!({})).await;
        assert_eq!(r.status(), 401);
        assert_eq!(challenge(&r), format!(r#"Bearer scope="mcp", resource_metadata="{METADATA_URL}""#));
        let r = served.post(Some("not-a-jwt"), 1, "tools/list", json!({})).await;
        assert_eq!(r.status(), 401);
        let c = challenge(&r);
        assert!(c.starts_with(r#"Bearer error="invalid_token""#) && c.contains(METADATA_URL), "{c}");
    });
}

fn b64(v: &Value) -> String {
    base64::engine::general_purpose::URL_SAFE_NO_PAD.encode(v.to_string())
}

fn bad_tokens_are_refused() {
    child_cli::block_on(async {
        let auth = AuthServer::start().await;
        let served = Served::start(&auth, &[]);
        let good = auth.claims(RESOURCE, "alice", "mcp");
        let valid = auth.mint("k1", &good);
        assert_eq!(served.post(Some(&valid), 1, "tools/list", json!({})).await.status(), 200);

        let with = |edit: &dyn Fn(&mut Value)| {
            let mut claims = good.clone();
            edit(&mut claims);
            auth.mint("k1", &claims)
        };
        let [header, payload, signature]: [&str; 3] = valid.split('.').collect::<Vec<_>>().try_into().unwrap();
        let other_payload = b64(&json!({"iss": auth.issuer, "sub": "mallory", "aud": RESOURCE, "scope": "mcp", "exp": now() + 300}));
        let mut flipped = signature.to_owned();
        // RS256 signatures are 256 bytes: the last base64 character carries 2 bits and 4 zero
        // bits, so only A, Q, g and w decode; swapping between A and Q keeps it decodable.
        let last = if flipped.ends_with('A') { 'Q' } else { 'A' };
        flipped.replace_range(flipped.len() - 1.., &last.to_string());
        // The RSA key's public modulus used as an HMAC secret (algorithm confusion).
        let n: Value = serde_json::from_str(
            &std::fs::read_to_string(concat!(env!("CARGO_MANIFEST_DIR"), "/tests/fixtures/oauth/rsa1.jwk.json")).unwrap(),
        )
        .unwrap();
        let mut hs = jsonwebtoken::Header::new(jsonwebtoken::Algorithm::HS256);
        hs.kid = Some("k1".into());
        let confused = jsonwebtoken::encode(
            &hs,
            &good,
            &jsonwebtoken::EncodingKey::from_secret(n["n"].as_str().unwrap().as_bytes()),
        )
        .unwrap();
        let cases: Vec<(&str, String, &str)> = vec![
            ("expired", with(&|c| c["exp"] = json!(now() - 120)), "expired"),
            ("not yet valid", with(&|c| c["nbf"] = json!(now() + 120)), "not valid yet"),
            (
                "another resource",
                with(&|c| c["aud"] = json!("https://other.example.com/mcp")),
                "another resource",
            ),
            (
                "another issuer",
                with(&|c| c["iss"] = json!("https://evil.example.com")),
                "another authorization server",
            ),
            (
                "no subject",
                with(&|c| {
                    c.as_object_mut().unwrap().remove("sub");
                }),
                "`sub`",
            ),
            (
                "unsigned",
                format!("{}.{payload}.", b64(&json!({"alg": "none", "typ": "JWT"}))),
                "not a signed JWT",
            ),
            ("tampered payload", format!("{header}.{other_payload}.{signature}"), "signature"),
            ("tampered signature", format!("{header}.{payload}.{flipped}"), "signature"),
            ("HMAC with the public key", confused, "shared secret"),
            ("unknown key", auth.mint("k2", &good), "no key `k2`"),
        ];
        for (what, token, says) in cases {
            let r = served.post(Some(&token), 1, "tools/list", json!({})).await;
            assert_eq!(r.status(), 401, "{what} was accepted");
            let c = challenge(&r);
            assert!(c.contains(r#"error="invalid_token""#) && c.contains(says), "{what}: {c}");
        }
        // Within the leeway, a just-expired token still passes.
        let r = served
            .post(Some(&with(&|c| c["exp"] = json!(now() - 5))), 1, "tools/list", json!({}))
            .await;
        assert_eq!(r.status(), 200, "a token 5 s past `exp` is within the leeway");
    });
}

fn key_rotation_and_bounded_refetch() {
    child_cli::block_on(async {
        let auth = AuthServer::start().await;
        let served = Served::start(&auth, &["--auth-key-refresh-interval", "0.2"]);
        let claims = auth.claims(RESOURCE, "alice", "mcp");
        assert_eq!(
            served
                .post(Some(&auth.mint("k1", &claims)), 1, "tools/list", json!({}))
                .await
                .status(),
            200
        );
        assert_eq!(auth.jwks_fetches(), 1);
        // Rotation: new keys appear; a token naming one makes the server fetch the set again.
        auth.publish("k2");
        auth.publish("k3");
        tokio::time::sleep(std::time::Duration::from_millis(300)).await;
        assert_eq!(
            served
                .post(Some(&auth.mint("k2", &claims)), 1, "tools/list", json!({}))
                .await
                .status(),
            200,
            "RS256 after rotation"
        );
        assert_eq!(auth.jwks_fetches(), 2);
        assert_eq!(
            served
                .post(Some(&auth.mint("k3", &claims)), 1, "tools/list", json!({}))
                .await
                .status(),
            200,
            "ES256, already fetched"
        );
        assert_eq!(auth.jwks_fetches(), 2, "a known key costs no fetch");
        assert_eq!(
            served
                .post(Some(&auth.mint("k1", &claims)), 1, "tools/list", json!({}))
                .await
                .status(),
            200
        );

        // A flood of unknown kids: one refetch per interval at most, and each is refused.
        let mut forged = jsonwebtoken::Header::new(jsonwebtoken::Algorithm::RS256);
        let key = jsonwebtoken::EncodingKey::from_rsa_pem(
            &std::fs::read(concat!(env!("CARGO_MANIFEST_DIR"), "/tests/fixtures/oauth/rsa1.pem")).unwrap(),
        )
        .unwrap();
        tokio::time::sleep(std::time::Duration::from_millis(300)).await;
        let before = auth.jwks_fetches();
        for i in 0..20 {
            forged.kid = Some(format!("made-up-{i}"));
            let token = jsonwebtoken::encode(&forged, &claims, &key).unwrap();
            let r = served.post(Some(&token), 1, "tools/list", json!({})).await;
            assert_eq!(r.status(), 401);
            assert!(challenge(&r).contains("no key `made-up-"), "{}", challenge(&r));
        }
        let fetched = auth.jwks_fetches() - before;
        assert!(fetched >= 1, "an unknown kid after the interval refetches the set");
        assert!(fetched < 20, "unknown kids refetched the key set {fetched} times for 20 tokens");
    });
}

fn scopes_server_wide_and_per_tool() {
    child_cli::block_on(async {
        let auth = AuthServer::start().await;
        let served = Served::start(&auth, &[]);
        // Without the server's required scope: 403 insufficient_scope on any request.
        let r = served
            .post(
                Some(&auth.mint("k1", &auth.claims(RESOURCE, "alice", "crm.write"))),
                1,
                "tools/list",
                json!({}),
            )
            .await;
        assert_eq!(r.status(), 403);
        assert_eq!(
            challenge(&r),
            format!(r#"Bearer error="insufficient_scope", scope="mcp", resource_metadata="{METADATA_URL}""#)
        );
        // Listed, but calling it needs its scope: a 403 step-up challenge naming everything
        // the call needs, with the JSON-RPC id.
        let reader = auth.mint("k1", &auth.claims(RESOURCE, "alice", "mcp"));
        let list = served.result(&reader, "tools/list", json!({})).await;
        assert!(
            list["tools"].as_array().unwrap().iter().any(|t| t["name"] == "crm-update"),
            "{list}"
        );
        let r = served
            .post(
                Some(&reader),
                7,
                "tools/call",
                json!({"name": "crm-update", "arguments": {"id": "r1"}}),
            )
            .await;
        assert_eq!(r.status(), 403);
        assert_eq!(
            challenge(&r),
            format!(r#"Bearer error="insufficient_scope", scope="mcp crm.write", resource_metadata="{METADATA_URL}""#)
        );
        let body: Value = r.json().await.unwrap();
        assert_eq!(body["id"], 7);
        assert!(body["error"]["message"].as_str().unwrap().contains("crm.write"), "{body}");
        // A tool without scopes needs only the server's.
        let me = served.call(&reader, "whoami", json!({})).await;
        assert!(
            me["isError"] != json!(true) && me["content"][0]["text"].as_str().is_some_and(|t| t.contains("alice")),
            "{me}"
        );
        let writer = auth.mint("k1", &auth.claims(RESOURCE, "alice", "mcp crm.write"));
        let done = served.call(&writer, "crm-update", json!({"id": "r1"})).await;
        assert_eq!(done["content"][0]["text"], "updated r1", "{done}");
    });
}

fn hidden_tools() {
    child_cli::block_on(async {
        let auth = AuthServer::start().await;
        let served = Served::start(&auth, &["--hide-unauthorized-tools", "--tool-scope", "whoami=profile,audit"]);
        let names = |list: &Value| -> Vec<String> {
            list["tools"]
                .as_array()
                .unwrap()
                .iter()
                .map(|t| t["name"].as_str().unwrap().to_owned())
                .collect()
        };
        let reader = auth.mint("k1", &auth.claims(RESOURCE, "alice", "mcp"));
        assert!(names(&served.result(&reader, "tools/list", json!({})).await).is_empty());
        let writer = auth.mint("k1", &auth.claims(RESOURCE, "alice", "mcp crm.write"));
        assert_eq!(names(&served.result(&writer, "tools/list", json!({})).await), ["crm-update"]);
        // `--tool-scope` gave `whoami` scopes of its own; a token needs all of them.
        let partly = auth.mint("k1", &auth.claims(RESOURCE, "alice", "mcp profile"));
        assert!(names(&served.result(&partly, "tools/list", json!({})).await).is_empty());
        let profiler = auth.mint("k1", &auth.claims(RESOURCE, "alice", "mcp profile audit"));
        assert_eq!(names(&served.result(&profiler, "tools/list", json!({})).await), ["whoami"]);
        let r = served
            .post(Some(&partly), 3, "tools/call", json!({"name": "whoami", "arguments": {}}))
            .await;
        assert_eq!(r.status(), 403);
        assert!(challenge(&r).contains(r#"scope="mcp profile audit""#), "{}", challenge(&r));
    });
}

fn opaque_tokens_are_introspected() {
    child_cli::block_on(async {
        let auth = AuthServer::start().await;
        let endpoint = format!("{}/introspect", auth.issuer);
        let (id, secret) = auth_server::INTROSPECTION_CLIENT;
        let env = [("TOOLSMITH_OAUTH_CLIENT_ID", id), ("TOOLSMITH_OAUTH_CLIENT_SECRET", secret)];
        let flags = [
            "--stateless",
            "--json-response",
            "--oauth-introspection",
            &endpoint,
            "--tool-scope",
            "whoami=profile",
        ];
        let served = Served::spawn_with(&auth, &flags, &env);
        let claims = |sub: &str, aud: &str| json!({"sub": sub, "aud": aud, "iss": auth.issuer, "scope": "mcp profile", "exp": now() + 300});
        let token = auth.opaque(&claims("olivia", RESOURCE));
        let who = served.call(&token, "whoami", json!({})).await;
        let who = &who["structuredContent"];
        assert_eq!(who["resource_id"], "olivia", "{who}");
        assert!(!who.to_string().contains(&token), "the token reached the tool: {who}");
        // A valid answer is reused: a second request asks nobody.
        let asked = auth.introspections();
        served.call(&token, "whoami", json!({})).await;
        assert_eq!(auth.introspections(), asked, "a cached token was introspected again");
        // Refused: an inactive (unknown) token, one for another resource, an expired one.
        let other = auth.opaque(&claims("olivia", "https://other.example/mcp"));
        let mut old = claims("olivia", RESOURCE);
        old["exp"] = json!(now() - 600);
        let expired = auth.opaque(&old);
        for (bad, why) in [
            ("opaque-unknown", "not active"),
            (other.as_str(), "another resource"),
            (expired.as_str(), "expired"),
        ] {
            let r = served.post(Some(bad), 1, "tools/list", json!({})).await;
            assert_eq!(r.status(), 401, "{bad}");
            assert!(challenge(&r).contains(why), "{bad}: {}", challenge(&r));
        }
        // JWTs are still checked locally.
        let jwt = auth.mint("k1", &auth.claims(RESOURCE, "jay", "mcp"));
        assert_eq!(served.post(Some(&jwt), 1, "tools/list", json!({})).await.status(), 200);
    });
}

fn the_caller_reaches_tools_but_its_token_does_not() {
    child_cli::block_on(async {
        let auth = AuthServer::start().await;
        let served = Served::start(
            &auth,
            &[
                "--auth-claim",
                "email",
                "--context",
                r#"{"resourceId": "operator", "region": "eu"}"#,
            ],
        );
        let mut seen = Vec::new();
        for who in ["alice", "bob"] {
            let mut claims = auth.claims(RESOURCE, who, "mcp");
            claims["email"] = json!(format!("{who}@example.com"));
            claims["secret_claim"] = json!("not chosen");
            claims["azp"] = json!(format!("{who}-app"));
            let token = auth.mint("k1", &claims);
            let result = served.call(&token, "whoami", json!({})).await;
            let text = result["content"][0]["text"].as_str().unwrap().to_owned();
            let me: Value = serde_json::from_str(&text).unwrap();
            assert_eq!(me["resource_id"], who, "{me}");
            assert_eq!(me["bucket"], who, "the provider scope is the token's subject: {me}");
            assert_eq!(
                me["context"],
                json!({"resourceId": "operator", "region": "eu"}),
                "the request context is the application's own, as configured: no `auth`, no caller"
            );
            assert_eq!(me["caller"]["subject"], who, "{me}");
            assert_eq!(me["caller"]["owner"], format!("subject:{who}"));
            assert_eq!(
                me["caller"]["claims"],
                json!({"email": format!("{who}@example.com")}),
                "only the chosen claims"
            );
            assert_eq!(me["caller"]["scopes"], json!(["mcp"]));
            assert_eq!(
                me["caller"]["client_id"],
                format!("{who}-app"),
                "the client the token was issued to"
            );
            for part in token.split('.') {
                assert!(!text.contains(part), "the tool saw the token");
            }
            seen.push(me["bucket"].clone());
        }
        assert_ne!(seen[0], seen[1], "two subjects, two provider scopes");
    });
}

/// A session created with one subject's token cannot be used with another's (it is unknown to
/// them), while its creator goes on using it.
fn a_session_is_its_creators() {
    child_cli::block_on(async {
        let auth = AuthServer::start().await;
        let served = Served::spawn(&auth, &[]);
        let alice = auth.mint("k1", &auth.claims(RESOURCE, "alice", "mcp"));
        let bob = auth.mint("k1", &auth.claims(RESOURCE, "bob", "mcp"));
        let init = json!({"protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": {"name": "t", "version": "1"}});
        let r = reqwest::Client::new()
            .post(&served.url)
            .header("Accept", "application/json, text/event-stream")
            .header("Content-Type", "application/json")
            .bearer_auth(&alice)
            .body(json!({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": init}).to_string())
            .send()
            .await
            .unwrap();
        assert_eq!(r.status(), 200);
        let session = r.headers()["mcp-session-id"].to_str().unwrap().to_owned();
        drop(r);
        let send = |token: &str, body: Value| {
            reqwest::Client::new()
                .post(&served.url)
                .header("Accept", "application/json, text/event-stream")
                .header("Content-Type", "application/json")
                .header("MCP-Protocol-Version", "2025-06-18")
                .header("Mcp-Session-Id", &session)
                .bearer_auth(token)
                .body(body.to_string())
                .send()
        };
        let initialized = json!({"jsonrpc": "2.0", "method": "notifications/initialized"});
        assert_eq!(send(&alice, initialized).await.unwrap().status(), 202);
        let list = json!({"jsonrpc": "2.0", "id": 2, "method": "tools/list", "params": {}});
        assert_eq!(send(&bob, list.clone()).await.unwrap().status(), 404, "bob used alice's session");
        assert_eq!(send(&alice, list).await.unwrap().status(), 200);
    });
}

/// A 2026-07-28 approval: the request state another subject sends with an "approve" answer is
/// refused exactly as an unknown state is (nothing runs), and the caller's own answer still
/// runs the call once.
fn a_waiting_call_is_answered_by_its_caller_only() {
    child_cli::block_on(async {
        let auth = AuthServer::start().await;
        let served = Served::start(&auth, &[]);
        let alice = auth.mint("k1", &auth.claims(RESOURCE, "alice", "mcp payments"));
        let bob = auth.mint("k1", &auth.claims(RESOURCE, "bob", "mcp payments"));
        let modern = |token: String, mut params: Value| {
            params["_meta"] = json!({
                "io.modelcontextprotocol/protocolVersion": "2026-07-28",
                "io.modelcontextprotocol/clientCapabilities": {"elicitation": {}},
            });
            let name = params["name"].as_str().unwrap().to_owned();
            let request = reqwest::Client::new()
                .post(&served.url)
                .header("Accept", "application/json, text/event-stream")
                .header("Content-Type", "application/json")
                .header("MCP-Protocol-Version", "2026-07-28")
                .header("Mcp-Method", "tools/call")
                .header("Mcp-Name", name)
                .bearer_auth(token)
                .body(json!({"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": params}).to_string());
            async move {
                let r = request.send().await.unwrap();
                assert_eq!(r.status(), 200);
                r.json::<Value>().await.unwrap()
            }
        };
        let asked = modern(alice.clone(), json!({"name": "oauth-pay", "arguments": {"amount": 3}})).await;
        let state = asked["result"]["requestState"]
            .as_str()
            .unwrap_or_else(|| panic!("no request state: {asked}"))
            .to_owned();
        let answer = json!({"action": "accept", "content": {"approved": true}});
        let answering = |state: &str| json!({"name": "oauth-pay", "arguments": {"amount": 3}, "requestState": state, "inputResponses": {"approval": answer}});
        let stolen = modern(bob.clone(), answering(&state)).await;
        let unknown = modern(bob, answering("mcp_00000000000000000000000000000000")).await;
        let text = |v: &Value| v["result"]["content"][0]["text"].as_str().unwrap_or_default().to_owned();
        assert_eq!(stolen["result"]["isError"], true, "{stolen}");
        assert!(
            !stolen.to_string().contains("paid"),
            "another subject's answer ran the call: {stolen}"
        );
        let unknown_text = text(&unknown).replace("mcp_00000000000000000000000000000000", "STATE");
        assert_eq!(
            text(&stolen).replace(&state, "STATE"),
            unknown_text,
            "a stranger learns nothing a wrong state would not tell"
        );
        let done = modern(alice, answering(&state)).await;
        assert!(done.to_string().contains("paid 3"), "the caller's own answer runs it: {done}");
    })
}
