//! `McpToolProvider` against real MCP servers: our own `toolsmith serve` (stdio and Streamable
//! HTTP), `mcp_fixture` (tools added and removed at run time) and the official Python SDK's
//! example server (FastMCP / `MCPServer`, `tests/fastmcp_server.py`), plus a bare JSON-RPC server
//! in standard-library Python for pagination (followed, and bounded when it never ends).
//!
//! The binaries are taken from `TOOLSMITH_BIN` (toolsmith only) or `target/debug/`, and built
//! with `cargo build -p examples --bin NAME` when missing. The Python server runs with
//! `$TOOLSMITH_PY`, else in the venv `.ci/run` uses (`~/.cache/toolsmith/py-venv`, made with the
//! pinned SDK when missing); without the `mcp` module that test fails, saying how to install it,
//! unless `TOOLSMITH_SKIP_PYTHON_SDK=1` opts out (then it prints why it was skipped).

use crate::support;

use std::io::{BufRead, BufReader};
use std::path::PathBuf;
use std::process::{Child, Command, Stdio};
use std::sync::{Arc, Mutex, mpsc};
use std::time::Duration;

use rmcp::model::ProtocolVersion;
use serde_json::{Value, json};
use tool_core::provider::{ListToolsOptions, ProviderRegistry, ResolveOptions, ToolProvider};
use tool_core::{CallOptions, Registry};
use tool_providers::mcp::McpToolProvider;

fn workspace() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("..")
}

static BUILD: Mutex<()> = Mutex::new(());

/// The path of an `examples` binary, built once if missing.
fn bin(name: &str) -> PathBuf {
    if name == "toolsmith"
        && let Some(path) = std::env::var_os("TOOLSMITH_BIN")
    {
        return PathBuf::from(path);
    }
    let path = workspace().join("target/debug").join(name);
    let _guard = BUILD.lock().unwrap_or_else(|e| e.into_inner());
    if !path.exists() {
        let cargo = std::env::var("CARGO").unwrap_or_else(|_| "cargo".into());
        let status = Command::new(cargo)
            .args(["build", "-p", "examples", "--bin", name])
            .current_dir(workspace())
            .status()
            .expect("cargo runs");
        assert!(status.success(), "cargo build -p examples --bin {name} failed");
    }
    path
}

fn toolsmith() -> String {
    bin("toolsmith").to_string_lossy().into_owned()
}

/// What `toolsmith list` shows: the catalog's tool ids.
fn catalog_ids() -> Vec<String> {
    let out = Command::new(toolsmith()).arg("list").output().expect("toolsmith list runs");
    assert!(out.status.success());
    let mut ids: Vec<String> = String::from_utf8_lossy(&out.stdout)
        .lines()
        .skip(1)
        .filter_map(|l| l.split_whitespace().next().map(str::to_owned))
        .collect();
    ids.sort();
    ids
}

/// A child process killed when dropped.
struct Server(Child);

impl Drop for Server {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

/// `toolsmith serve --http 127.0.0.1:0` and its `/mcp` URL.
fn http_server() -> (Server, String) {
    http_server_with(&[], &[])
}

/// `toolsmith serve --http 127.0.0.1:0 ARGS` with `ENV`, and its `/mcp` URL.
fn http_server_with(args: &[&str], env: &[(&str, &str)]) -> (Server, String) {
    let mut child = Command::new(toolsmith())
        .args(["serve", "--http", "127.0.0.1:0"])
        .args(args)
        .envs(env.iter().copied())
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .expect("toolsmith serve --http starts");
    let stderr = child.stderr.take().unwrap();
    let (tx, rx) = mpsc::channel();
    std::thread::spawn(move || {
        for line in BufReader::new(stderr).lines().map_while(Result::ok) {
            if let Some(url) = line.split("serving MCP on ").nth(1) {
                let _ = tx.send(url.trim().to_owned());
            }
        }
    });
    let server = Server(child);
    let url = rx.recv_timeout(Duration::from_secs(30)).expect("the server prints its URL");
    (server, url)
}

async fn slugs(p: &McpToolProvider, options: ListToolsOptions) -> Vec<String> {
    let mut s: Vec<String> = p.list_tools(options).await.unwrap().data.into_iter().map(|t| t.slug).collect();
    s.sort();
    s
}

/// Lists, checks annotations, calls through a registry: the same for both transports, each
/// at MCP 2026-07-28 (`server/discover` first, our server offering it).
async fn exercise_toolsmith(provider: McpToolProvider) {
    provider.connect().await.unwrap();
    let version = provider.server_info().unwrap().protocol_version.clone();
    assert_eq!(version, ProtocolVersion::V_2026_07_28, "the session starts at 2026-07-28");
    let id = provider.info().id.clone();
    assert_eq!(
        slugs(&provider, ListToolsOptions::default()).await,
        catalog_ids(),
        "the server lists the catalog"
    );

    let toolkits = provider.list_toolkits().await.unwrap().data;
    assert_eq!(toolkits.len(), 1);
    assert_eq!(toolkits[0].slug, id);

    let searched = slugs(
        &provider,
        ListToolsOptions {
            search: Some("WEATHER".into()),
            ..Default::default()
        },
    )
    .await;
    assert!(searched.contains(&"weather-mcp".to_owned()) && !searched.contains(&"convert-units".to_owned()));
    let other = provider
        .list_tools(ListToolsOptions {
            toolkit: Some("someone-else".into()),
            ..Default::default()
        })
        .await
        .unwrap();
    assert!(other.data.is_empty());
    let page = provider
        .list_tools(ListToolsOptions {
            page: Some(1),
            per_page: Some(2),
            ..Default::default()
        })
        .await
        .unwrap();
    assert_eq!(page.data.len(), 2);
    assert!(page.pagination.unwrap().has_more);

    let schema = provider.get_tool_schema("convert-units").await.unwrap().unwrap();
    assert_eq!(schema["required"], json!(["value", "from", "to"]));
    assert_eq!(provider.get_tool_schema("no-such-tool").await.unwrap(), None);

    let resolved = provider
        .resolve_tools(vec!["weather-mcp".into(), "no-such-tool".into()], ResolveOptions::default())
        .await
        .unwrap();
    assert_eq!(resolved.keys().collect::<Vec<_>>(), ["weather-mcp"]);
    let spec = resolved["weather-mcp"].spec();
    assert_eq!(spec.presentation.mcp.title.as_deref(), Some("Weather Lookup"));
    assert_eq!(
        (
            spec.presentation.mcp.read_only_hint,
            spec.presentation.mcp.destructive_hint,
            spec.presentation.mcp.idempotent_hint,
            spec.presentation.mcp.open_world_hint
        ),
        (Some(true), Some(false), Some(true), Some(true))
    );
    assert_eq!(spec.presentation.mcp.meta, Some(json!({"version": "1.0.0", "category": "weather"})));
    assert!(spec.schemas.output.is_some(), "the output schema is kept");

    let mut providers = ProviderRegistry::new();
    providers.add(provider);
    let registry = Registry::new();
    let ids = providers
        .resolve_into(&registry, &id, vec!["convert-units".into()], ResolveOptions::default())
        .await
        .unwrap();
    assert_eq!(ids, ["convert-units"]);

    let args = json!({"value": 100, "from": "C", "to": "F"});
    let out = registry.call("convert-units", args.clone(), CallOptions::default()).await.unwrap();
    let cli = Command::new(toolsmith())
        .args(["call", "convert-units", &args.to_string()])
        .output()
        .unwrap();
    assert!(cli.status.success());
    let printed: Value = serde_json::from_slice(&cli.stdout).unwrap();
    assert_eq!(out.value(), printed, "the same value `toolsmith call` prints");

    let bad = json!({"value": 1, "from": "C", "to": "kg"});
    let err = registry
        .call("convert-units", bad.clone(), CallOptions::default())
        .await
        .unwrap_err();
    let cli = Command::new(toolsmith())
        .args(["call", "convert-units", &bad.to_string()])
        .output()
        .unwrap();
    let cli_err = String::from_utf8_lossy(&cli.stderr);
    assert!(err.message().contains("Cannot convert C (Temperature) to kg (Mass)"), "{err:?}");
    assert!(cli_err.contains(err.message()), "server text: {cli_err}\nours: {}", err.message());

    let health = providers.get(&id).unwrap().get_health().await.unwrap();
    assert!(health.ok, "{health:?}");
}

#[tokio::test(flavor = "multi_thread")]
async fn toolsmith_serve_over_stdio() {
    exercise_toolsmith(McpToolProvider::stdio("toolsmith", toolsmith(), ["serve", "--stdio"])).await;
}

#[tokio::test(flavor = "multi_thread")]
async fn toolsmith_serve_over_streamable_http() {
    let (_server, url) = http_server();
    exercise_toolsmith(McpToolProvider::http("toolsmith-http", url).bearer_token("not-checked-by-this-server")).await;
}

#[tokio::test(flavor = "multi_thread")]
async fn imported_tools_are_deferred_and_namespaced_by_server() {
    let registry = Arc::new(Registry::new());
    let provider = McpToolProvider::stdio("Toolsmith Local", toolsmith(), ["serve", "--stdio"])
        .defer_loading()
        .namespace_by_server()
        .sync_into(registry.clone());
    provider.connect().await.unwrap();
    assert!(!registry.is_empty());
    for tool in registry.tools() {
        let p = &tool.spec().presentation;
        assert!(p.defer_loading, "{}", tool.spec().id);
        assert_eq!(p.namespace.as_deref(), Some("toolsmith_local"), "{}", tool.spec().id);
    }
    provider.close().await;

    let plain_registry = Arc::new(Registry::new());
    let plain = McpToolProvider::stdio("toolsmith", toolsmith(), ["serve", "--stdio"]).sync_into(plain_registry.clone());
    plain.connect().await.unwrap();
    assert!(
        plain_registry
            .tools()
            .iter()
            .all(|t| !t.spec().presentation.defer_loading && t.spec().presentation.namespace.is_none())
    );
    plain.close().await;
}

#[tokio::test(flavor = "multi_thread")]
async fn not_connected_and_unreachable_are_clear_errors() {
    let p = McpToolProvider::stdio("nothing", "/nonexistent/mcp-server", Vec::<String>::new());
    let e = p.list_tools(ListToolsOptions::default()).await.unwrap_err();
    assert!(e.to_string().contains("connect()"), "{e}");
    let e = p.connect().await.unwrap_err();
    assert!(e.to_string().contains("/nonexistent/mcp-server"), "{e}");
    // The spawn's own error is the source.
    let source = std::error::Error::source(&e).and_then(|s| s.downcast_ref::<std::io::Error>());
    assert_eq!(source.map(std::io::Error::kind), Some(std::io::ErrorKind::NotFound), "{e:?}");
}

async fn eventually(what: &str, mut check: impl FnMut() -> bool) {
    for _ in 0..100 {
        if check() {
            return;
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    panic!("timed out waiting for: {what}");
}

#[tokio::test(flavor = "multi_thread")]
async fn list_changed_refreshes_the_tools_and_the_synced_registry() {
    let fixture = bin("mcp_fixture").to_string_lossy().into_owned();
    let registry = Arc::new(Registry::new());
    let provider = McpToolProvider::stdio("fixture", fixture, ["--stdio"]).sync_into(registry.clone());
    provider.connect().await.unwrap();
    let has = |p: &McpToolProvider| p.tools().iter().any(|t| t.name == "dynamic_echo");
    assert!(!has(&provider));
    assert!(registry.get("add_tool").is_some(), "sync_into mirrors the server's tools");
    assert!(registry.get("dynamic_echo").is_none());

    registry.call("add_tool", json!({}), CallOptions::default()).await.unwrap();
    eventually("dynamic_echo in the provider's list", || has(&provider)).await;
    let listed = slugs(&provider, ListToolsOptions::default()).await;
    assert!(listed.contains(&"dynamic_echo".to_owned()), "{listed:?}");
    eventually("dynamic_echo in the registry", || registry.get("dynamic_echo").is_some()).await;
    let out = registry
        .call("dynamic_echo", json!({"text": "hello"}), CallOptions::default())
        .await
        .unwrap();
    assert_eq!(out.value(), json!("hello"), "text-only content comes back as the text");

    registry.call("remove_tool", json!({}), CallOptions::default()).await.unwrap();
    eventually("dynamic_echo gone from the provider", || !has(&provider)).await;
    eventually("dynamic_echo gone from the registry", || registry.get("dynamic_echo").is_none()).await;
    provider.close().await;
}

#[tokio::test(flavor = "multi_thread")]
async fn the_python_sdk_example_server() {
    let python = python_with_the_sdk();
    let probe = Command::new(&python).args(["-c", "import mcp"]).output();
    if !probe.as_ref().is_ok_and(|o| o.status.success()) {
        let why = match &probe {
            Ok(o) => String::from_utf8_lossy(&o.stderr).trim().lines().last().unwrap_or("").to_owned(),
            Err(e) => e.to_string(),
        };
        let notice = format!(
            "the Python `mcp` package is not importable with `{python}` ({why}); run `bash tests/python/run.sh` once \
             (it makes the venv ~/.cache/toolsmith/py-venv with the pinned SDK), or set TOOLSMITH_PY to a Python \
             that has it (pip install mcp)"
        );
        let opted_out = std::env::var("TOOLSMITH_SKIP_PYTHON_SDK").is_ok_and(|v| v == "1");
        assert!(
            opted_out,
            "{notice}; or set TOOLSMITH_SKIP_PYTHON_SDK=1 to skip this test on purpose"
        );
        eprintln!("SKIPPED the_python_sdk_example_server (TOOLSMITH_SKIP_PYTHON_SDK=1): {notice}");
        return;
    }
    let script = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("tests/fastmcp_server.py");
    let script = script.to_string_lossy().into_owned();
    // The SDK speaks 2026-07-28: the import starts with `server/discover`.
    let modern = McpToolProvider::stdio("fastmcp", python.clone(), [script.clone()]);
    exercise_fastmcp(modern, ProtocolVersion::V_2026_07_28).await;
    // The same server not knowing `server/discover`: the import falls back to `initialize`.
    let legacy = McpToolProvider::stdio("fastmcp", python, [script, "--only-2025-11-25".to_owned()]);
    exercise_fastmcp(legacy, ProtocolVersion::V_2025_11_25).await;
}

/// Lists, calls and answers a question of the Python SDK's example server, reached at `version`.
async fn exercise_fastmcp(provider: McpToolProvider, version: ProtocolVersion) {
    provider.connect().await.unwrap();
    assert_eq!(provider.server_info().unwrap().protocol_version, version);
    assert_eq!(slugs(&provider, ListToolsOptions::default()).await, ["add", "greet", "shout"]);
    let resolved = provider
        .resolve_tools(vec!["add".into(), "shout".into()], ResolveOptions::default())
        .await
        .unwrap();
    assert_eq!(resolved["add"].spec().presentation.mcp.read_only_hint, Some(true));
    assert_eq!(resolved["add"].spec().presentation.mcp.meta, Some(json!({"origin": "fastmcp"})));
    let registry = Registry::from_iter(resolved.into_values());
    let sum = registry.call("add", json!({"a": 2, "b": 3}), CallOptions::default()).await.unwrap();
    // FastMCP wraps a non-object return value as `{"result": …}` in structuredContent.
    assert!(sum.value() == json!({"result": 5}) || sum.value() == json!(5), "{:?}", sum.value());
    let loud = registry.call("shout", json!({"text": "hi"}), CallOptions::default()).await.unwrap();
    assert!(
        loud.value() == json!("HI") || loud.value() == json!({"result": "HI"}),
        "{:?}",
        loud.value()
    );
    let err = registry
        .call("shout", json!({"text": ""}), CallOptions::default())
        .await
        .unwrap_err();
    assert!(err.message().contains("nothing to shout"), "{err:?}");

    // The tool's question (at 2025-11-25 an `elicitation/create` of the server's own, at
    // 2026-07-28 an input-required result) reaches the call's MCP client; with no one to ask,
    // the form's default answers it.
    let greet = provider
        .resolve_tools(vec!["greet".into()], ResolveOptions::default())
        .await
        .unwrap();
    let registry = Registry::from_iter(greet.into_values());
    let ada = Arc::new(super::questions::Ada::default());
    let hello = registry
        .call("greet", json!({}), CallOptions::default().mcp(ada.clone()))
        .await
        .unwrap();
    assert!(hello.value().to_string().contains("Hello, Ada"), "{:?}", hello.value());
    assert_eq!(ada.0.lock().unwrap().len(), 1);
    let hello = registry.call("greet", json!({}), CallOptions::default()).await.unwrap();
    assert!(hello.value().to_string().contains("Hello, World"), "{:?}", hello.value());
    provider.close().await;
}

/// A bare JSON-RPC MCP server (standard library Python only): `paged` lists `t0`..`t2` over
/// three pages, `endless` hands out a new cursor forever; the first page also lists a tool
/// whose name no Toolsmith id allows, and every call returns text plus an image.
///
/// It knows MCP 2025-06-18 only: any other method is answered "method not found" (-32601), or in
/// mode `strict` ends the process (as some servers do before `initialize`).
const PAGED_SERVER: &str = r#"
import json, sys
mode = sys.argv[1]
for line in sys.stdin:
    msg = json.loads(line)
    if "id" not in msg or "method" not in msg:
        continue
    method, params = msg["method"], msg.get("params") or {}
    if mode == "strict" and method not in ("initialize", "tools/list", "tools/call", "ping"):
        sys.exit(3)
    if method == "initialize":
        result = {"protocolVersion": "2025-06-18", "capabilities": {"tools": {"listChanged": True}},
                  "serverInfo": {"name": "paged", "version": "1"}}
    elif method == "tools/list":
        page = int(params.get("cursor") or 0)
        tools = [{"name": "t%d" % page, "description": "tool %d" % page, "inputSchema": {"type": "object"}}]
        if page == 0:
            tools.append({"name": "bad name!", "description": "spaces", "inputSchema": {"type": "object"}})
        result = {"tools": tools}
        if mode == "endless" or page < 2:
            result["nextCursor"] = str(page + 1)
    elif method == "tools/call":
        result = {"content": [{"type": "text", "text": "a"}, {"type": "image", "data": "AA==", "mimeType": "image/png"}]}
    elif method == "ping":
        result = {}
    else:
        print(json.dumps({"jsonrpc": "2.0", "id": msg["id"], "error": {"code": -32601, "message": method}}), flush=True)
        continue
    print(json.dumps({"jsonrpc": "2.0", "id": msg["id"], "result": result}), flush=True)
"#;

/// `$TOOLSMITH_PY`, else the venv that `.ci/run` and `tests/python/run.sh` use
/// (`$TOOLSMITH_CACHE` or `~/.cache/toolsmith`, `py-venv`), made here with the pinned SDK when
/// it is missing (`tests/python/venv.sh`), so the test runs on a fresh machine too.
fn python_with_the_sdk() -> String {
    if let Ok(python) = std::env::var("TOOLSMITH_PY") {
        return python;
    }
    let cache = std::env::var_os("TOOLSMITH_CACHE")
        .map(PathBuf::from)
        .or_else(|| std::env::var_os("HOME").map(|home| PathBuf::from(home).join(".cache/toolsmith")))
        .unwrap_or_else(|| std::env::temp_dir().join("toolsmith-cache"));
    let venv = cache.join("py-venv");
    let root = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("..");
    let made = Command::new("bash")
        .args([
            "-c",
            r#"source tests/python/venv.sh && ensure_venv "$1" tests/python/requirements.txt"#,
            "_",
        ])
        .arg(&venv)
        .current_dir(root)
        .status();
    if !made.is_ok_and(|s| s.success()) {
        eprintln!(
            "could not make the venv {} (python3 -m venv, pip install): see above",
            venv.display()
        );
    }
    venv.join("bin/python").to_string_lossy().into_owned()
}

fn paged_server(mode: &str) -> McpToolProvider {
    let python = std::env::var("TOOLSMITH_PY").unwrap_or_else(|_| "python3".into());
    McpToolProvider::stdio(format!("paged-{mode}"), python, ["-c", PAGED_SERVER, mode])
}

#[tokio::test(flavor = "multi_thread")]
async fn pagination_is_followed_bounded_and_bad_names_are_skipped() {
    let paged = paged_server("paged");
    paged.connect().await.unwrap();
    // `server/discover` answered "method not found": `initialize` on the same pipe.
    let version = paged.server_info().unwrap().protocol_version.clone();
    assert_eq!(version, ProtocolVersion::V_2025_06_18, "the session fell back to `initialize`");
    assert_eq!(slugs(&paged, ListToolsOptions::default()).await, ["bad name!", "t0", "t1", "t2"]);
    let resolved = paged
        .resolve_tools(vec!["t0".into(), "t2".into(), "bad name!".into()], ResolveOptions::default())
        .await
        .unwrap();
    assert_eq!(
        resolved.keys().collect::<Vec<_>>(),
        ["t0", "t2"],
        "a name Toolsmith ids do not allow is skipped"
    );
    let registry = Registry::from_iter(resolved.into_values());
    let out = registry.call("t0", json!({}), CallOptions::default()).await.unwrap();
    assert_eq!(
        out.value()[0],
        json!({"type": "text", "text": "a"}),
        "mixed content comes back as the blocks"
    );
    assert_eq!(out.value()[1]["type"], "image");
    paged.close().await;

    // A server that ends at `server/discover` is started again and sent `initialize`.
    let strict = paged_server("strict");
    strict.connect().await.unwrap();
    assert_eq!(strict.server_info().unwrap().protocol_version, ProtocolVersion::V_2025_06_18);
    assert_eq!(slugs(&strict, ListToolsOptions::default()).await, ["bad name!", "t0", "t1", "t2"]);
    strict.close().await;

    let endless = paged_server("endless");
    endless.connect().await.unwrap();
    let tools = endless.tools();
    assert_eq!(tools.len(), tool_providers::mcp::MAX_PAGES + 1, "at most MAX_PAGES pages are read");
    endless.close().await;
}

// One thread: the thread-local log subscriber sees rmcp's and reqwest's tasks too.
#[tokio::test]
async fn the_bearer_token_never_appears_in_debug_errors_or_logs() {
    const RIGHT: &str = "tok_CANARY_right_6b2e9f";
    const WRONG: &str = "tok_CANARY_wrong_1c7d4a";
    let logs = support::logs::capture();

    let (_server, url) = http_server_with(&["--auth-token-env", "MCP_TEST_TOKEN"], &[("MCP_TEST_TOKEN", RIGHT)]);
    let mut texts = Vec::new();
    let wrong = McpToolProvider::http("guarded", &url).bearer_token(WRONG);
    texts.push(format!("{wrong:?}"));
    let e = wrong.connect().await.unwrap_err();
    assert!(e.to_string().contains("unauthorized (HTTP 401)"), "{e}");
    texts.push(format!("{e} {e:?}"));
    let e = wrong.list_tools(ListToolsOptions::default()).await.unwrap_err();
    texts.push(format!("{e} {e:?}"));

    // The right token gets in: the header is really sent.
    let right = McpToolProvider::http("guarded", &url).bearer_token(RIGHT);
    texts.push(format!("{right:?}"));
    right.connect().await.unwrap();
    assert!(!slugs(&right, ListToolsOptions::default()).await.is_empty());

    let logged = logs.text();
    assert!(!logged.is_empty(), "logs were captured");
    texts.push(logged);
    for text in &texts {
        assert!(!text.contains("CANARY"), "a token leaked: {text}");
    }
}
