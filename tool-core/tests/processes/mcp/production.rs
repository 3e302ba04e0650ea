//! `toolsmith serve --http` as deployed: real children of this test binary
//! (`support/child_cli.rs`) spoken to over real HTTP(S). Covered: the 2026-07-28 caching hints
//! of `tools/list` (`--list-ttl`, derived default, scope) and its order across instances; the
//! `Mcp-Method`/`Mcp-Name` headers checked against the body; SSE keep-alive comments and the
//! headers that keep proxies from buffering; graceful shutdown on SIGTERM (a running call
//! finishes and is answered, new connections are refused, a waiting call stays in the store,
//! exit 0); HTTPS with a certificate made here, and plain HTTP refused off loopback.

use crate::support::child_cli;

use std::net::SocketAddr;
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use serde_json::{Value, json};
use tool_core::prelude::*;

/// How long a test waits for what must come.
const PATIENCE: Duration = Duration::from_secs(20);
const MODERN: &str = "2026-07-28";
const LEGACY: &str = "2025-11-25";

/// Says it started (creates `started`), then waits until `release` exists
#[tool]
async fn hold(
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

/// Sends money, once approved
#[tool(id = "pay", require_approval)]
async fn pay(
    /// How much
    amount: u32,
) -> String {
    format!("paid {amount}")
}

/// This suite's tests, named `SUITE::TEST`.
pub fn trials(suite: &str) -> Vec<libtest_mimic::Trial> {
    child_cli::trials(
        suite,
        &[
            ("list_results_carry_cache_hints", list_results_carry_cache_hints),
            (
                "tools_list_order_is_the_same_across_instances",
                tools_list_order_is_the_same_across_instances,
            ),
            (
                "mcp_method_and_name_headers_must_match_the_body",
                mcp_method_and_name_headers_must_match_the_body,
            ),
            (
                "idle_sse_streams_carry_keep_alive_comments",
                idle_sse_streams_carry_keep_alive_comments,
            ),
            (
                "sigterm_lets_a_running_call_finish_and_keeps_waiting_calls",
                sigterm_lets_a_running_call_finish_and_keeps_waiting_calls,
            ),
            (
                "sigterm_cancels_what_outlives_the_grace_period",
                sigterm_cancels_what_outlives_the_grace_period,
            ),
            ("https_with_a_certificate_and_key", https_with_a_certificate_and_key),
            ("plain_http_off_loopback_is_refused", plain_http_off_loopback_is_refused),
        ],
    )
}

/// A `toolsmith serve --http` child, killed when dropped.
struct Served {
    server: child_cli::ServedChild,
    url: String,
    addr: SocketAddr,
    store: PathBuf,
    dir: tempfile::TempDir,
}

impl Served {
    /// `toolsmith --store DIR/store.db serve --http 127.0.0.1:0 FLAGS…`, once it serves.
    fn start(flags: &[&str]) -> Served {
        let dir = tempfile::tempdir().unwrap();
        let store = dir.path().join("store.db");
        let mut args = vec!["--store", store.to_str().unwrap(), "serve", "--http", "127.0.0.1:0"];
        args.extend_from_slice(flags);
        let server = child_cli::ServedChild::start(child_cli::toolsmith(&args).env("TOOLSMITH_TEST_TOKEN", "s3cret"));
        let url = server.url.clone();
        let addr = url.split("://").nth(1).unwrap().trim_end_matches("/mcp").parse().unwrap();
        Served {
            server,
            url,
            addr,
            store,
            dir,
        }
    }

    fn path(&self, name: &str) -> String {
        self.dir.path().join(name).to_str().unwrap().to_owned()
    }

    /// Waits (bounded) for the child to exit, and says whether it succeeded.
    fn exited_ok(&mut self) -> bool {
        let started = Instant::now();
        loop {
            if let Some(status) = self.server.child.try_wait().unwrap() {
                return status.success();
            }
            assert!(started.elapsed() < PATIENCE, "the server did not exit within {PATIENCE:?}");
            std::thread::sleep(Duration::from_millis(10));
        }
    }

    fn sigterm(&self) {
        let ok = std::process::Command::new("kill")
            .args(["-TERM", &self.server.child.id().to_string()])
            .status()
            .unwrap()
            .success();
        assert!(ok, "kill -TERM failed");
    }
}

/// A JSON-RPC request; on 2026-07-28 with the per-request `_meta` the revision wants.
fn message(version: &str, method: &str, mut params: Value) -> String {
    if version == MODERN {
        params["_meta"] = json!({
            "io.modelcontextprotocol/protocolVersion": MODERN,
            "io.modelcontextprotocol/clientCapabilities": {},
        });
    }
    json!({"jsonrpc": "2.0", "id": 1, "method": method, "params": params}).to_string()
}

/// POSTs one request of `version` with `headers`; on 2026-07-28 with matching `Mcp-Method`
/// and `Mcp-Name` unless `headers` sets them.
async fn post(
    client: &reqwest::Client,
    url: &str,
    version: &str,
    method: &str,
    params: Value,
    headers: &[(&str, &str)],
) -> reqwest::Response {
    let mut request = client
        .post(url)
        .header("Accept", "application/json, text/event-stream")
        .header("Content-Type", "application/json")
        .header("MCP-Protocol-Version", version);
    let has = |name: &str| headers.iter().any(|(k, _)| k.eq_ignore_ascii_case(name));
    if version == MODERN && !has("mcp-method") {
        request = request.header("Mcp-Method", method);
    }
    if let (true, false, Some(name)) = (version == MODERN, has("mcp-name"), params.get("name").and_then(Value::as_str)) {
        request = request.header("Mcp-Name", name);
    }
    for (k, v) in headers {
        request = request.header(*k, *v);
    }
    let body = message(version, method, params);
    tokio::time::timeout(PATIENCE, request.body(body).send())
        .await
        .expect("an answer in time")
        .unwrap()
}

/// The `result` of a JSON answer.
async fn result(response: reqwest::Response) -> Value {
    assert_eq!(response.status(), 200);
    let body: Value = response.json().await.unwrap();
    body.get("result").cloned().unwrap_or_else(|| panic!("no result: {body}"))
}

async fn list(served: &Served, version: &str, headers: &[(&str, &str)]) -> Value {
    result(post(&reqwest::Client::new(), &served.url, version, "tools/list", json!({}), headers).await).await
}

fn list_results_carry_cache_hints() {
    child_cli::block_on(async {
        // Only linked tools: a fixed set, fresh for the default 10 minutes, the same for all.
        let fixed = Served::start(&["--stateless", "--json-response"]);
        let page = list(&fixed, MODERN, &[]).await;
        assert_eq!(
            (page["ttlMs"].clone(), page["cacheScope"].clone()),
            (json!(600_000), json!("public")),
            "{page}"
        );
        // Older revisions do not define the fields.
        let legacy = list(&fixed, LEGACY, &[]).await;
        assert!(legacy.get("ttlMs").is_none() && legacy.get("cacheScope").is_none(), "{legacy}");

        // `--list-ttl`, and a token-protected server: private.
        let flags = [
            "--stateless",
            "--json-response",
            "--list-ttl",
            "2s",
            "--auth-token-env",
            "TOOLSMITH_TEST_TOKEN",
        ];
        let protected = Served::start(&flags);
        let page = list(&protected, MODERN, &[("Authorization", "Bearer s3cret")]).await;
        assert_eq!(
            (page["ttlMs"].clone(), page["cacheScope"].clone()),
            (json!(2000), json!("private")),
            "{page}"
        );
    });
}

fn tools_list_order_is_the_same_across_instances() {
    child_cli::block_on(async {
        let names = |page: &Value| -> Vec<String> {
            let tools = page["tools"].as_array().unwrap();
            tools.iter().map(|t| t["name"].as_str().unwrap().to_owned()).collect()
        };
        let mut seen = Vec::new();
        for flags in [
            &["--stateless", "--json-response"][..],
            &["--stateless", "--json-response", "--page-size", "1"],
        ] {
            let served = Served::start(flags);
            // Followed page by page, the same order.
            let (mut all, mut cursor) = (Vec::new(), None::<String>);
            loop {
                let params = cursor.as_ref().map_or(json!({}), |c| json!({"cursor": c}));
                let page = result(post(&reqwest::Client::new(), &served.url, MODERN, "tools/list", params, &[]).await).await;
                all.extend(names(&page));
                match page.get("nextCursor").and_then(Value::as_str) {
                    Some(next) => cursor = Some(next.to_owned()),
                    None => break,
                }
            }
            seen.push(all);
        }
        assert!(seen[0].len() >= 2, "{seen:?}");
        let mut sorted = seen[0].clone();
        sorted.sort();
        assert_eq!(seen[0], sorted, "listed in id order");
        assert_eq!(seen[0], seen[1], "two instances list the same order");
    });
}

fn mcp_method_and_name_headers_must_match_the_body() {
    child_cli::block_on(async {
        let served = Served::start(&["--stateless", "--json-response"]);
        let client = reqwest::Client::new();
        let call = json!({"name": "pay", "arguments": {"amount": 1}});
        let refused = |r: reqwest::Response| async move {
            assert_eq!(r.status(), 400);
            let body: Value = r.json().await.unwrap();
            body["error"]["message"].as_str().unwrap_or_else(|| panic!("{body}")).to_owned()
        };
        let method = post(
            &client,
            &served.url,
            MODERN,
            "tools/call",
            call.clone(),
            &[("Mcp-Method", "tools/list")],
        )
        .await;
        let why = refused(method).await;
        assert!(why.contains("tools/list") && why.contains("tools/call"), "{why}");
        let name = post(&client, &served.url, MODERN, "tools/call", call.clone(), &[("Mcp-Name", "hold")]).await;
        let why = refused(name).await;
        assert!(why.contains("hold") && why.contains("pay"), "{why}");
        // 2026-07-28 requires them.
        let mut bare = client
            .post(&served.url)
            .header("Accept", "application/json, text/event-stream")
            .header("Content-Type", "application/json")
            .header("MCP-Protocol-Version", MODERN);
        bare = bare.body(message(MODERN, "tools/list", json!({})));
        let why = refused(bare.send().await.unwrap()).await;
        assert!(why.contains("Mcp-Method"), "{why}");
        // Matching: served.
        let ok = post(&client, &served.url, MODERN, "tools/call", call.clone(), &[]).await;
        assert_eq!(ok.status(), 200);
        // Older revisions do not define them: absent or not, the request is served.
        let legacy = post(&client, &served.url, LEGACY, "tools/list", json!({}), &[]).await;
        assert_eq!(legacy.status(), 200);
    });
}

fn idle_sse_streams_carry_keep_alive_comments() {
    child_cli::block_on(async {
        let served = Served::start(&["--sse-keep-alive", "100ms"]);
        let client = reqwest::Client::new();
        let init = json!({"protocolVersion": LEGACY, "capabilities": {}, "clientInfo": {"name": "keep-alive", "version": "1"}});
        let r = post(&client, &served.url, LEGACY, "initialize", init, &[]).await;
        assert_eq!(r.status(), 200);
        for (name, value) in [("x-accel-buffering", "no"), ("cache-control", "no-cache")] {
            assert_eq!(
                r.headers().get(name).and_then(|v| v.to_str().ok()),
                Some(value),
                "{name} on a POST stream"
            );
        }
        let session = r.headers()["mcp-session-id"].to_str().unwrap().to_owned();
        drop(r);
        let initialized = client
            .post(&served.url)
            .header("Accept", "application/json, text/event-stream")
            .header("Content-Type", "application/json")
            .header("MCP-Protocol-Version", LEGACY)
            .header("Mcp-Session-Id", &session)
            .body(json!({"jsonrpc": "2.0", "method": "notifications/initialized"}).to_string())
            .send()
            .await
            .unwrap();
        assert!(initialized.status().is_success());
        // The GET stream has nothing to say: only keep-alive comments come.
        let mut stream = client
            .get(&served.url)
            .header("Accept", "text/event-stream")
            .header("MCP-Protocol-Version", LEGACY)
            .header("Mcp-Session-Id", &session)
            .send()
            .await
            .unwrap();
        assert_eq!(stream.status(), 200);
        assert_eq!(stream.headers()["x-accel-buffering"], "no");
        assert_eq!(stream.headers()["cache-control"], "no-cache");
        // Well within rmcp's own default of 15 s, so only the flag's interval passes.
        let within = Duration::from_secs(5);
        let mut text = String::new();
        let comment = loop {
            let chunk = tokio::time::timeout(within, stream.chunk())
                .await
                .expect("a keep-alive comment on the idle stream")
                .unwrap()
                .expect("the stream stays open");
            text.push_str(&String::from_utf8_lossy(&chunk));
            if let Some(line) = text.lines().find(|l| l.starts_with(':')) {
                break line.to_owned();
            }
        };
        assert!(comment.starts_with(':'), "{text:?}");
    });
}

/// Waits (bounded) until `path` exists.
async fn appears(path: &str) {
    let started = Instant::now();
    while !Path::new(path).exists() {
        assert!(started.elapsed() < PATIENCE, "{path} never appeared");
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
}

/// Waits (bounded) until a connection to `addr` is refused.
async fn refuses_connections(addr: SocketAddr) {
    let started = Instant::now();
    while tokio::net::TcpStream::connect(addr).await.is_ok() {
        assert!(started.elapsed() < PATIENCE, "{addr} still accepts connections");
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
}

fn sigterm_lets_a_running_call_finish_and_keeps_waiting_calls() {
    child_cli::block_on(async {
        let mut served = Served::start(&["--stateless", "--json-response", "--shutdown-grace", "20s"]);
        let client = reqwest::Client::new();
        // A call waiting for approval (a client without elicitation): stored, answered at once.
        let waiting = result(
            post(
                &client,
                &served.url,
                LEGACY,
                "tools/call",
                json!({"name": "pay", "arguments": {"amount": 7}}),
                &[],
            )
            .await,
        )
        .await;
        assert_eq!(waiting["isError"], json!(true), "{waiting}");

        let (started, release) = (served.path("started"), served.path("release"));
        let args = json!({"started": started, "release": release});
        let url = served.url.clone();
        let running = tokio::spawn(async move {
            let r = post(
                &reqwest::Client::new(),
                &url,
                LEGACY,
                "tools/call",
                json!({"name": "hold", "arguments": args}),
                &[],
            )
            .await;
            result(r).await
        });
        appears(&started).await;
        served.sigterm();
        // No new connections, while the call still runs…
        refuses_connections(served.addr).await;
        assert!(!running.is_finished());
        // …and finishes: its client gets its result, then the server exits 0.
        std::fs::write(&release, b"").unwrap();
        let answer = tokio::time::timeout(PATIENCE, running).await.expect("the call's answer").unwrap();
        assert_eq!(answer["content"][0]["text"], "released", "{answer}");
        assert!(served.exited_ok(), "the server exits 0");

        let store = served.store.to_str().unwrap().to_owned();
        let pending = child_cli::run(&["--store", &store, "pending", "--json"]);
        assert!(pending.ok, "{}", pending.stderr);
        assert!(
            pending.stdout.contains("\"pay\""),
            "the waiting call is still stored: {}",
            pending.stdout
        );
    });
}

fn sigterm_cancels_what_outlives_the_grace_period() {
    child_cli::block_on(async {
        let mut served = Served::start(&["--shutdown-grace", "200ms"]);
        let client = reqwest::Client::new();
        let init = json!({"protocolVersion": LEGACY, "capabilities": {}, "clientInfo": {"name": "grace", "version": "1"}});
        let r = post(&client, &served.url, LEGACY, "initialize", init, &[]).await;
        let session = r.headers()["mcp-session-id"].to_str().unwrap().to_owned();
        drop(r);
        let (started, release) = (served.path("started"), served.path("never"));
        let body = json!({"jsonrpc": "2.0", "id": 2, "method": "tools/call",
            "params": {"name": "hold", "arguments": {"started": started, "release": release}}});
        let mut call = client
            .post(&served.url)
            .header("Accept", "application/json, text/event-stream")
            .header("Content-Type", "application/json")
            .header("MCP-Protocol-Version", LEGACY)
            .header("Mcp-Session-Id", &session)
            .body(body.to_string())
            .send()
            .await
            .unwrap();
        appears(&started).await;
        served.sigterm();
        // The call never finishes: past the grace period its stream ends without a result.
        let mut text = String::new();
        while let Some(chunk) = tokio::time::timeout(PATIENCE, call.chunk())
            .await
            .expect("the stream ends after the grace period")
            .unwrap_or_default()
        {
            text.push_str(&String::from_utf8_lossy(&chunk));
        }
        assert!(!text.contains("released"), "{text}");
        assert!(served.exited_ok(), "the server exits 0");
    });
}

fn https_with_a_certificate_and_key() {
    child_cli::block_on(async {
        let dir = tempfile::tempdir().unwrap();
        let made = rcgen::generate_simple_self_signed(vec!["localhost".to_owned()]).unwrap();
        let (cert, key) = (dir.path().join("cert.pem"), dir.path().join("key.pem"));
        std::fs::write(&cert, made.cert.pem()).unwrap();
        std::fs::write(&key, made.signing_key.serialize_pem()).unwrap();
        let served = Served::start(&[
            "--stateless",
            "--json-response",
            "--tls-cert",
            cert.to_str().unwrap(),
            "--tls-key",
            key.to_str().unwrap(),
        ]);
        assert!(served.url.starts_with("https://"), "{}", served.url);
        let client = reqwest::Client::builder()
            .add_root_certificate(reqwest::Certificate::from_pem(made.cert.pem().as_bytes()).unwrap())
            .resolve("localhost", served.addr)
            .build()
            .unwrap();
        let url = format!("https://localhost:{}/mcp", served.addr.port());
        let page = result(post(&client, &url, MODERN, "tools/list", json!({}), &[]).await).await;
        assert!(page["tools"].as_array().unwrap().iter().any(|t| t["name"] == "pay"), "{page}");
        // Plain HTTP on the TLS port is not served; an untrusting client refuses the server.
        let plain = reqwest::Client::new().get(format!("http://{}/mcp", served.addr)).send().await;
        assert!(plain.map(|r| !r.status().is_success()).unwrap_or(true));
        let untrusting = reqwest::Client::builder().resolve("localhost", served.addr).build().unwrap();
        assert!(post_fails(&untrusting, &url).await, "a certificate nobody trusts is refused");
    });
}

async fn post_fails(client: &reqwest::Client, url: &str) -> bool {
    client.post(url).body("{}").send().await.is_err()
}

fn plain_http_off_loopback_is_refused() {
    let dir = tempfile::tempdir().unwrap();
    let store = dir.path().join("store.db");
    let store = store.to_str().unwrap();
    let ran = child_cli::run(&["--store", store, "serve", "--http", "0.0.0.0:0"]);
    assert!(!ran.ok);
    assert!(
        ran.stderr.contains("not a loopback address") && ran.stderr.contains("--insecure-http") && ran.stderr.contains("--tls-cert"),
        "{}",
        ran.stderr
    );
}
