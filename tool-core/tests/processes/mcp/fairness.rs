//! Fairness between callers of `toolsmith serve --http` (`--caller-concurrency`,
//! `--caller-rate`, `--caller-burst`): real children of this test binary
//! (`support/child_cli.rs`), real HTTP, OAuth subjects from the test authorization server
//! (`support/auth_server.rs`). Covered: a caller past its rate is answered 429 with
//! `Retry-After` while another subject is not; a caller at its concurrency limit (a call held
//! open until the test releases it) is refused its next call, 429 outside a session and a
//! JSON-RPC error inside one, both with the retry time, while another subject's call at the same
//! moment succeeds; once the held call answers, the caller can call again (its permit is freed);
//! listing is never counted; without authorization callers are told apart by IP address. No
//! timing is asserted: every wait is on something the test controls, bounded only against a hang.

use crate::support::auth_server::AuthServer;
use crate::support::child_cli;

use std::net::IpAddr;
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use serde_json::{Value, json};
use tool_core::prelude::*;

/// The canonical URI the server is configured with.
const RESOURCE: &str = "http://localhost/mcp";
const VERSION: &str = "2025-11-25";
/// How long a test waits for what must come.
const PATIENCE: Duration = Duration::from_secs(20);

/// Says it started (creates `started`), then waits until `release` exists
#[tool]
async fn fair_hold(
    /// Created once the call runs
    started: String,
    /// The call answers once this exists
    release: String,
) -> String {
    let _ = std::fs::write(&started, b"");
    while !Path::new(&release).exists() {
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
    "released".to_owned()
}

/// Answers at once
#[tool]
async fn fair_echo(
    /// What to say
    text: String,
) -> String {
    text
}

/// This suite's tests, named `SUITE::TEST`.
pub fn trials(suite: &str) -> Vec<libtest_mimic::Trial> {
    child_cli::trials(
        suite,
        &[
            ("a_caller_past_its_rate_gets_429", a_caller_past_its_rate_gets_429),
            (
                "a_caller_at_its_concurrency_limit_is_refused_and_others_are_not",
                a_caller_at_its_concurrency_limit_is_refused_and_others_are_not,
            ),
            (
                "inside_a_session_the_refusal_is_a_jsonrpc_error",
                inside_a_session_the_refusal_is_a_jsonrpc_error,
            ),
            (
                "anonymous_callers_are_told_apart_by_address",
                anonymous_callers_are_told_apart_by_address,
            ),
        ],
    )
}

/// A `toolsmith serve --http` child, killed when dropped.
struct Served {
    _server: child_cli::ServedChild,
    url: String,
    dir: tempfile::TempDir,
}

impl Served {
    /// A server with `flags` after `serve --http 127.0.0.1:0`, OAuth when `auth` is given.
    fn start(auth: Option<&AuthServer>, flags: &[&str]) -> Served {
        let dir = tempfile::tempdir().unwrap();
        let store = dir.path().join("store.db");
        let mut args = vec!["--store", store.to_str().unwrap(), "serve", "--http", "127.0.0.1:0"];
        if let Some(auth) = auth {
            args.extend_from_slice(&["--auth-issuer", &auth.issuer, "--auth-resource", RESOURCE]);
        }
        args.extend_from_slice(flags);
        let server = child_cli::ServedChild::start(&mut child_cli::toolsmith(&args));
        let url = server.url.clone();
        Served { _server: server, url, dir }
    }

    /// A file path in the server's directory.
    fn path(&self, name: &str) -> PathBuf {
        self.dir.path().join(name)
    }

    /// POSTs one JSON-RPC request from `client`, with `token` as the bearer token and
    /// `session` as the session.
    fn post(&self, client: &reqwest::Client, token: Option<&str>, session: Option<&str>, body: Value) -> reqwest::RequestBuilder {
        let mut request = client
            .post(&self.url)
            .header("Accept", "application/json, text/event-stream")
            .header("Content-Type", "application/json")
            .header("MCP-Protocol-Version", VERSION)
            .body(body.to_string());
        if let Some(token) = token {
            request = request.bearer_auth(token);
        }
        if let Some(session) = session {
            request = request.header("Mcp-Session-Id", session);
        }
        request
    }
}

fn call(id: u64, tool: &str, args: Value) -> Value {
    json!({"jsonrpc": "2.0", "id": id, "method": "tools/call", "params": {"name": tool, "arguments": args}})
}

fn list(id: u64) -> Value {
    json!({"jsonrpc": "2.0", "id": id, "method": "tools/list", "params": {}})
}

/// The JSON-RPC message answering request `id` in a response body (JSON, or an SSE stream).
async fn answer(r: reqwest::Response, id: u64) -> Value {
    let text = r.text().await.unwrap();
    let messages: Vec<Value> = match serde_json::from_str::<Value>(&text) {
        Ok(v) => vec![v],
        Err(_) => text
            .lines()
            .filter_map(|l| l.strip_prefix("data:"))
            .filter_map(|d| serde_json::from_str(d.trim()).ok())
            .collect(),
    };
    messages
        .into_iter()
        .find(|m| m["id"] == id)
        .unwrap_or_else(|| panic!("no answer to request {id} in {text}"))
}

/// The text of a successful call's answer.
async fn result_text(r: reqwest::Response, id: u64) -> String {
    assert_eq!(r.status(), 200);
    let m = answer(r, id).await;
    assert!(m["result"].is_object() && m["result"]["isError"] != true, "{m}");
    m["result"]["content"][0]["text"].as_str().unwrap_or_default().to_owned()
}

/// A 429 refusal: its `Retry-After` (whole seconds) and its JSON-RPC error.
async fn too_many(r: reqwest::Response) -> (u64, Value) {
    assert_eq!(r.status(), 429);
    let retry = r.headers()["retry-after"].to_str().unwrap().parse::<u64>().unwrap();
    let body: Value = r.json().await.unwrap();
    (retry, body["error"].clone())
}

/// Waits for `path` to exist (a held call has started).
async fn wait_for(path: &Path) {
    let deadline = Instant::now() + PATIENCE;
    while !path.exists() {
        assert!(Instant::now() < deadline, "{} did not appear", path.display());
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
}

/// Checks a refusal's JSON-RPC error: the retry time in its message and `data`.
fn assert_over_limit(error: &Value, limit: &str) {
    assert_eq!(error["code"], -32000, "{error}");
    assert_eq!(error["data"]["limit"], limit, "{error}");
    let ms = error["data"]["retryAfterMs"]
        .as_u64()
        .unwrap_or_else(|| panic!("no retryAfterMs: {error}"));
    assert!(ms >= 1, "{error}");
    let message = error["message"].as_str().unwrap();
    assert!(message.contains(&format!("retry in {ms} ms")), "{message}");
}

fn a_caller_past_its_rate_gets_429() {
    child_cli::block_on(async {
        let auth = AuthServer::start().await;
        // Two calls, then one every 100 s: the third call of a caller is surely refused.
        let served = Served::start(
            Some(&auth),
            &["--stateless", "--json-response", "--caller-rate", "0.01", "--caller-burst", "2"],
        );
        let alice = auth.mint("k1", &auth.claims(RESOURCE, "alice", "mcp"));
        let bob = auth.mint("k1", &auth.claims(RESOURCE, "bob", "mcp"));
        let client = reqwest::Client::new();
        for id in 1..=2 {
            let r = served.post(&client, Some(&alice), None, call(id, "fair-echo", json!({"text": "hi"})));
            assert_eq!(result_text(r.send().await.unwrap(), id).await, "hi");
        }
        let r = served.post(&client, Some(&alice), None, call(3, "fair-echo", json!({"text": "hi"})));
        let (retry, error) = too_many(r.send().await.unwrap()).await;
        assert_over_limit(&error, "rate");
        assert!((1..=100).contains(&retry), "Retry-After: {retry}");
        assert!(error["message"].as_str().unwrap().contains("0.01 tool calls per second"), "{error}");
        // Another subject has its own allowance; listing is not counted.
        let r = served.post(&client, Some(&bob), None, call(4, "fair-echo", json!({"text": "bob"})));
        assert_eq!(result_text(r.send().await.unwrap(), 4).await, "bob");
        for id in 5..10 {
            let r = served.post(&client, Some(&alice), None, list(id)).send().await.unwrap();
            assert_eq!(r.status(), 200, "listing is not limited");
            assert!(answer(r, id).await["result"]["tools"].is_array());
        }
    });
}

fn a_caller_at_its_concurrency_limit_is_refused_and_others_are_not() {
    child_cli::block_on(async {
        let auth = AuthServer::start().await;
        let served = Served::start(Some(&auth), &["--stateless", "--json-response", "--caller-concurrency", "1"]);
        let alice = auth.mint("k1", &auth.claims(RESOURCE, "alice", "mcp"));
        let bob = auth.mint("k1", &auth.claims(RESOURCE, "bob", "mcp"));
        let client = reqwest::Client::new();
        let (started, release) = (served.path("started"), served.path("release"));
        let args = json!({"started": started, "release": release});
        let held = tokio::spawn(served.post(&client, Some(&alice), None, call(1, "fair-hold", args)).send());
        wait_for(&started).await;
        // Alice's one call runs: her next is refused, Bob's at the same moment is not.
        let r = served.post(&client, Some(&alice), None, call(2, "fair-echo", json!({"text": "a"})));
        let (retry, error) = too_many(r.send().await.unwrap()).await;
        assert!(retry >= 1, "Retry-After: {retry}");
        assert_over_limit(&error, "concurrency");
        assert_eq!(error["data"]["limit"], "concurrency");
        let r = served.post(&client, Some(&bob), None, call(3, "fair-echo", json!({"text": "bob"})));
        assert_eq!(result_text(r.send().await.unwrap(), 3).await, "bob");
        let r = served.post(&client, Some(&alice), None, list(4)).send().await.unwrap();
        assert_eq!(r.status(), 200, "listing is not limited");
        // Once the held call answers, its permit is free again.
        std::fs::write(&release, b"").unwrap();
        let r = tokio::time::timeout(PATIENCE, held).await.unwrap().unwrap().unwrap();
        assert_eq!(result_text(r, 1).await, "released");
        let r = served.post(&client, Some(&alice), None, call(5, "fair-echo", json!({"text": "again"})));
        assert_eq!(result_text(r.send().await.unwrap(), 5).await, "again");
    });
}

/// Opens a session for `token` (initialize, initialized) and returns its id.
async fn open_session(served: &Served, client: &reqwest::Client, token: &str) -> String {
    let init = json!({"jsonrpc": "2.0", "id": 0, "method": "initialize",
        "params": {"protocolVersion": VERSION, "capabilities": {}, "clientInfo": {"name": "t", "version": "1"}}});
    let r = served.post(client, Some(token), None, init).send().await.unwrap();
    assert_eq!(r.status(), 200);
    let session = r.headers()["mcp-session-id"].to_str().unwrap().to_owned();
    drop(r);
    let initialized = json!({"jsonrpc": "2.0", "method": "notifications/initialized"});
    let r = served.post(client, Some(token), Some(&session), initialized).send().await.unwrap();
    assert_eq!(r.status(), 202);
    session
}

fn inside_a_session_the_refusal_is_a_jsonrpc_error() {
    child_cli::block_on(async {
        let auth = AuthServer::start().await;
        let served = Served::start(Some(&auth), &["--caller-concurrency", "1"]);
        let alice = auth.mint("k1", &auth.claims(RESOURCE, "alice", "mcp"));
        let bob = auth.mint("k1", &auth.claims(RESOURCE, "bob", "mcp"));
        let client = reqwest::Client::new();
        let (a, b) = (
            open_session(&served, &client, &alice).await,
            open_session(&served, &client, &bob).await,
        );
        let (started, release) = (served.path("started"), served.path("release"));
        let args = json!({"started": started, "release": release});
        let held = tokio::spawn(served.post(&client, Some(&alice), Some(&a), call(1, "fair-hold", args)).send());
        wait_for(&started).await;
        // The session's client waits for the answer on the session: a JSON-RPC error, not a 429.
        let r = served.post(&client, Some(&alice), Some(&a), call(2, "fair-echo", json!({"text": "a"})));
        let r = r.send().await.unwrap();
        assert_eq!(r.status(), 200);
        let refused = answer(r, 2).await;
        assert_over_limit(&refused["error"], "concurrency");
        let r = served.post(&client, Some(&bob), Some(&b), call(3, "fair-echo", json!({"text": "bob"})));
        assert_eq!(result_text(r.send().await.unwrap(), 3).await, "bob");
        let r = served.post(&client, Some(&alice), Some(&a), list(4)).send().await.unwrap();
        assert!(answer(r, 4).await["result"]["tools"].is_array(), "listing is not limited");
        std::fs::write(&release, b"").unwrap();
        let r = tokio::time::timeout(PATIENCE, held).await.unwrap().unwrap().unwrap();
        assert_eq!(result_text(r, 1).await, "released");
        let r = served.post(&client, Some(&alice), Some(&a), call(5, "fair-echo", json!({"text": "again"})));
        assert_eq!(result_text(r.send().await.unwrap(), 5).await, "again");
    });
}

/// A client whose connections come from `ip` (any 127.x address reaches the server).
fn client_from(ip: [u8; 4]) -> reqwest::Client {
    reqwest::Client::builder().local_address(IpAddr::from(ip)).build().unwrap()
}

fn anonymous_callers_are_told_apart_by_address() {
    child_cli::block_on(async {
        let served = Served::start(None, &["--stateless", "--json-response", "--caller-concurrency", "1"]);
        let (one, two) = (client_from([127, 0, 0, 1]), client_from([127, 0, 0, 2]));
        let (started, release) = (served.path("started"), served.path("release"));
        let args = json!({"started": started, "release": release});
        let held = tokio::spawn(served.post(&one, None, None, call(1, "fair-hold", args)).send());
        wait_for(&started).await;
        // A new connection from the same address is the same caller.
        let r = served.post(&client_from([127, 0, 0, 1]), None, None, call(2, "fair-echo", json!({"text": "x"})));
        let (_, error) = too_many(r.send().await.unwrap()).await;
        assert_over_limit(&error, "concurrency");
        let r = served.post(&two, None, None, call(3, "fair-echo", json!({"text": "two"})));
        assert_eq!(result_text(r.send().await.unwrap(), 3).await, "two");
        std::fs::write(&release, b"").unwrap();
        let r = tokio::time::timeout(PATIENCE, held).await.unwrap().unwrap().unwrap();
        assert_eq!(result_text(r, 1).await, "released");
        let r = served.post(&one, None, None, call(4, "fair-echo", json!({"text": "again"})));
        assert_eq!(result_text(r.send().await.unwrap(), 4).await, "again");
    });
}
