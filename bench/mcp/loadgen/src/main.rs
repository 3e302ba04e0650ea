//! Closed-loop `tools/call` load generator for an MCP server over Streamable HTTP.
//!
//! Each of `--clients` tasks has its own HTTP connection and does: `initialize` (keeping the
//! `mcp-session-id` header when the server sends one) → `notifications/initialized` → waits for
//! every other client → `tools/call echo {"text": ...}` back to back until the end. Each reply is
//! read in full (a JSON body or an SSE stream's `data:` events) and must be a JSON-RPC result for
//! that request's id, not `isError`, echoing the text; anything else counts as an error.
//!
//! Calls completing during `--warmup` are not measured; calls completing in the following
//! `--duration` seconds are. Prints one JSON object on stdout:
//! `{clients, requests, rps, p50_ms, p99_ms, errors, ...}`.
//!
//! For `bench/mcp/fairness.sh`: `--local-address IP` makes every connection come from that
//! loopback address (a caller the server tells apart by address), `--args JSON` adds members to
//! the call's arguments (the text is still echoed), and `--refusals wait` counts a refusal for
//! the caller's limit (HTTP 429, or a JSON-RPC error with `data.retryAfterMs`) as `refused`, not
//! as an error, and waits the retry time it names before the next call, as a well-behaved client
//! does.
//!
//! Only meant for servers on the local machine (the benchmark in `bench/mcp/run.sh`).

use std::process::ExitCode;
use std::sync::{Arc, OnceLock};
use std::time::{Duration, Instant};

use serde_json::{json, Value};
use tokio::sync::Barrier;

const USAGE: &str = "usage: mcp-loadgen --url http://127.0.0.1:PORT/mcp[,http://…] [--clients N] [--duration SECS] \
[--warmup SECS] [--text STRING] [--tool NAME] [--protocol-version VER] [--threads N] [--timeout SECS] \
[--local-address IP] [--args JSON] [--refusals error|wait]";

#[derive(Clone)]
struct Config {
    /// One URL, or several separated by commas (instances of one server: client `n` talks to
    /// the `n % count`-th).
    url: String,
    urls: Vec<String>,
    clients: usize,
    duration: f64,
    warmup: f64,
    text: String,
    tool: String,
    protocol: String,
    threads: usize,
    timeout: f64,
    /// The source address of every connection.
    local_address: Option<std::net::IpAddr>,
    /// Members added to every call's arguments.
    args: serde_json::Map<String, Value>,
    /// Whether a refusal for the caller's limit is waited out (`true`) or an error.
    wait_refusals: bool,
}

fn parse_args() -> Result<Config, String> {
    let mut cfg = Config {
        url: String::new(),
        urls: Vec::new(),
        clients: 1,
        duration: 5.0,
        warmup: 1.0,
        text: "hello".into(),
        tool: "echo".into(),
        protocol: "2025-11-25".into(),
        threads: std::thread::available_parallelism().map_or(2, |n| n.get()),
        timeout: 10.0,
        local_address: None,
        args: serde_json::Map::new(),
        wait_refusals: false,
    };
    let mut args = std::env::args().skip(1);
    while let Some(flag) = args.next() {
        if flag == "-h" || flag == "--help" {
            return Err(USAGE.into());
        }
        let value = args.next().ok_or_else(|| format!("{flag} needs a value\n{USAGE}"))?;
        let num = |v: &str| v.parse::<f64>().map_err(|_| format!("{flag}: not a number: {v}"));
        let int = |v: &str| v.parse::<usize>().map_err(|_| format!("{flag}: not a count: {v}"));
        match flag.as_str() {
            "--url" => cfg.url = value,
            "--clients" => cfg.clients = int(&value)?,
            "--duration" => cfg.duration = num(&value)?,
            "--warmup" => cfg.warmup = num(&value)?,
            "--text" => cfg.text = value,
            "--tool" => cfg.tool = value,
            "--protocol-version" => cfg.protocol = value,
            "--threads" => cfg.threads = int(&value)?,
            "--timeout" => cfg.timeout = num(&value)?,
            "--local-address" => cfg.local_address = Some(value.parse().map_err(|_| format!("{flag}: not an IP address: {value}"))?),
            "--args" => match serde_json::from_str(&value) {
                Ok(Value::Object(map)) => cfg.args = map,
                _ => return Err(format!("{flag}: not a JSON object: {value}")),
            },
            "--refusals" => match value.as_str() {
                "error" => cfg.wait_refusals = false,
                "wait" => cfg.wait_refusals = true,
                _ => return Err(format!("{flag}: `error` or `wait`, not {value}")),
            },
            _ => return Err(format!("unknown flag {flag}\n{USAGE}")),
        }
    }
    cfg.urls = cfg.url.split(',').filter(|u| !u.is_empty()).map(str::to_owned).collect();
    if cfg.urls.is_empty() {
        return Err(format!("--url is required\n{USAGE}"));
    }
    if cfg.clients == 0 || cfg.threads == 0 || cfg.duration <= 0.0 || cfg.warmup < 0.0 || cfg.timeout <= 0.0 {
        return Err("--clients, --threads, --duration and --timeout must be positive".into());
    }
    Ok(cfg)
}

/// What one client measured.
#[derive(Default)]
struct ClientStats {
    /// Latencies in nanoseconds of the calls completed inside the measured window.
    latencies: Vec<u64>,
    errors: u64,
    first_error: Option<String>,
    /// Calls refused for the caller's limit (with `--refusals wait`).
    refused: u64,
}

impl ClientStats {
    fn error(&mut self, what: String) {
        self.errors += 1;
        if self.first_error.is_none() {
            self.first_error = Some(what);
        }
    }
}

/// The JSON-RPC messages in a reply body: the body itself, or each SSE event's `data:`.
fn messages(content_type: &str, body: &str) -> Result<Vec<Value>, String> {
    if content_type.starts_with("text/event-stream") {
        let mut out = Vec::new();
        let mut data = String::new();
        // A trailing blank line ends the last event; add one in case the stream lacks it.
        for line in body.lines().chain(std::iter::once("")) {
            if line.is_empty() {
                if !data.is_empty() {
                    out.push(serde_json::from_str(&data).map_err(|e| format!("bad SSE data {data:?}: {e}"))?);
                    data.clear();
                }
            } else if let Some(rest) = line.strip_prefix("data:") {
                if !data.is_empty() {
                    data.push('\n');
                }
                data.push_str(rest.strip_prefix(' ').unwrap_or(rest));
            }
        }
        Ok(out)
    } else {
        serde_json::from_str(body)
            .map(|v| vec![v])
            .map_err(|e| format!("bad JSON body ({content_type}) {body:?}: {e}"))
    }
}

struct Conn {
    http: reqwest::Client,
    /// The instance this client talks to.
    url: String,
    cfg: Arc<Config>,
    session: Option<String>,
    protocol: Option<String>,
}

impl Conn {
    fn post(&self, body: String) -> reqwest::RequestBuilder {
        let mut r = self
            .http
            .post(&self.url)
            .header("content-type", "application/json")
            .header("accept", "application/json, text/event-stream")
            .body(body);
        if let Some(s) = &self.session {
            r = r.header("mcp-session-id", s);
        }
        if let Some(p) = &self.protocol {
            r = r.header("mcp-protocol-version", p);
        }
        r
    }

    /// Sends a request with `id` and returns its `result`.
    async fn request(&mut self, id: u64, body: String) -> Result<Value, String> {
        self.request_or_refused(id, body).await.and_then(|r| r.map_err(|wait| format!("refused, retry in {wait:?}")))
    }

    /// [`Self::request`], or how long to wait when the call was refused for the caller's limit
    /// (429 with `Retry-After`, or a JSON-RPC error whose `data` has `retryAfterMs`).
    async fn request_or_refused(&mut self, id: u64, body: String) -> Result<Result<Value, Duration>, String> {
        let resp = self.post(body).send().await.map_err(|e| format!("send: {e}"))?;
        let status = resp.status();
        if self.session.is_none() {
            if let Some(s) = resp.headers().get("mcp-session-id") {
                self.session = Some(s.to_str().map_err(|e| format!("session id: {e}"))?.to_owned());
            }
        }
        let ctype = resp
            .headers()
            .get("content-type")
            .and_then(|v| v.to_str().ok())
            .unwrap_or("")
            .to_owned();
        let retry_after = resp
            .headers()
            .get("retry-after")
            .and_then(|v| v.to_str().ok())
            .and_then(|v| v.parse::<u64>().ok());
        let text = resp.text().await.map_err(|e| format!("read: {e}"))?;
        if status.as_u16() == 429 {
            if let Some(secs) = retry_after {
                return Ok(Err(Duration::from_secs(secs)));
            }
        }
        if !status.is_success() {
            return Err(format!("HTTP {status}: {text}"));
        }
        let reply = messages(&ctype, &text)?
            .into_iter()
            .find(|m| m.get("id").and_then(Value::as_u64) == Some(id))
            .ok_or_else(|| format!("no reply with id {id} in {text:?}"))?;
        if let Some(ms) = reply.pointer("/error/data/retryAfterMs").and_then(Value::as_u64) {
            return Ok(Err(Duration::from_millis(ms)));
        }
        match reply.get("result") {
            Some(r) => Ok(Ok(r.clone())),
            None => Err(format!("not a result: {reply}")),
        }
    }

    async fn notify(&self, body: String) -> Result<(), String> {
        let resp = self.post(body).send().await.map_err(|e| format!("send: {e}"))?;
        let status = resp.status();
        let text = resp.text().await.map_err(|e| format!("read: {e}"))?;
        if status.is_success() {
            Ok(())
        } else {
            Err(format!("HTTP {status}: {text}"))
        }
    }

    async fn handshake(&mut self, n: usize) -> Result<(), String> {
        let init = json!({"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": {
            "protocolVersion": self.cfg.protocol, "capabilities": {},
            "clientInfo": {"name": format!("mcp-loadgen-{n}"), "version": "0.1.0"}}});
        let result = self.request(0, init.to_string()).await.map_err(|e| format!("initialize: {e}"))?;
        let version = result
            .get("protocolVersion")
            .and_then(Value::as_str)
            .ok_or_else(|| format!("initialize: no protocolVersion in {result}"))?;
        self.protocol = Some(version.to_owned());
        let note = json!({"jsonrpc": "2.0", "method": "notifications/initialized"});
        self.notify(note.to_string())
            .await
            .map_err(|e| format!("notifications/initialized: {e}"))
    }

    /// One call: `Ok(None)` when it answered, `Ok(Some(wait))` when it was refused for the
    /// caller's limit and `--refusals wait` is on.
    async fn call(&mut self, id: u64) -> Result<Option<Duration>, String> {
        let mut arguments = self.cfg.args.clone();
        arguments.insert("text".into(), json!(self.cfg.text));
        let body = json!({"jsonrpc": "2.0", "id": id, "method": "tools/call",
            "params": {"name": self.cfg.tool, "arguments": arguments}});
        let result = match self.request_or_refused(id, body.to_string()).await? {
            Ok(result) => result,
            Err(wait) if self.cfg.wait_refusals => return Ok(Some(wait)),
            Err(wait) => return Err(format!("refused, retry in {wait:?}")),
        };
        if result.get("isError").and_then(Value::as_bool) == Some(true) {
            return Err(format!("isError result: {result}"));
        }
        let echoed = result.pointer("/content/0/text").and_then(Value::as_str);
        if echoed != Some(self.cfg.text.as_str()) {
            return Err(format!("unexpected result: {result}"));
        }
        Ok(None)
    }

    async fn close(&self) {
        if let Some(s) = &self.session {
            let _ = self.http.delete(&self.url).header("mcp-session-id", s).send().await;
        }
    }
}

async fn client(n: usize, cfg: Arc<Config>, barrier: Arc<Barrier>, start: Arc<OnceLock<Instant>>) -> ClientStats {
    let mut stats = ClientStats::default();
    let http = match reqwest::Client::builder()
        .local_address(cfg.local_address)
        .tcp_nodelay(true)
        .pool_max_idle_per_host(1)
        .timeout(Duration::from_secs_f64(cfg.timeout))
        .build()
    {
        Ok(h) => h,
        Err(e) => {
            stats.error(format!("client: {e}"));
            barrier.wait().await;
            return stats;
        }
    };
    let mut conn = Conn {
        http,
        url: cfg.urls[n % cfg.urls.len()].clone(),
        cfg: cfg.clone(),
        session: None,
        protocol: None,
    };
    let ready = conn.handshake(n).await;
    barrier.wait().await;
    if let Err(e) = ready {
        stats.error(e);
        return stats;
    }
    // Every client starts its loop together; the window opens after the warm-up.
    let t0 = *start.get_or_init(Instant::now);
    let open = t0 + Duration::from_secs_f64(cfg.warmup);
    let close = open + Duration::from_secs_f64(cfg.duration);
    let mut id = 1u64;
    loop {
        let sent = Instant::now();
        if sent >= close {
            break;
        }
        let outcome = conn.call(id).await;
        let done = Instant::now();
        id += 1;
        match outcome {
            Ok(None) => {
                if done >= open && done <= close {
                    stats.latencies.push((done - sent).as_nanos() as u64);
                }
            }
            Ok(Some(wait)) => {
                stats.refused += 1;
                tokio::time::sleep(wait.min(close.saturating_duration_since(Instant::now()))).await;
            }
            Err(e) => {
                stats.error(e);
                // Do not spin on a dead server.
                tokio::time::sleep(Duration::from_millis(1)).await;
            }
        }
    }
    conn.close().await;
    stats
}

fn main() -> ExitCode {
    let cfg = match parse_args() {
        Ok(c) => Arc::new(c),
        Err(e) => {
            eprintln!("{e}");
            return ExitCode::from(2);
        }
    };
    let rt = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(cfg.threads)
        .enable_all()
        .build()
        .expect("tokio runtime");
    let stats = rt.block_on(async {
        let barrier = Arc::new(Barrier::new(cfg.clients));
        let start = Arc::new(OnceLock::new());
        let tasks: Vec<_> = (0..cfg.clients)
            .map(|n| tokio::spawn(client(n, cfg.clone(), barrier.clone(), start.clone())))
            .collect();
        let mut all = Vec::with_capacity(tasks.len());
        for t in tasks {
            all.push(t.await.expect("client task panicked"));
        }
        all
    });

    let errors: u64 = stats.iter().map(|s| s.errors).sum();
    let refused: u64 = stats.iter().map(|s| s.refused).sum();
    if let Some(e) = stats.iter().find_map(|s| s.first_error.as_ref()) {
        eprintln!("mcp-loadgen: {errors} error(s); first: {e}");
    }
    let mut lat: Vec<u64> = stats.into_iter().flat_map(|s| s.latencies).collect();
    lat.sort_unstable();
    let ms = |ns: u64| (ns as f64 / 1e6 * 1000.0).round() / 1000.0;
    // Nearest-rank percentile.
    let pct = |q: f64| {
        if lat.is_empty() {
            return Value::Null;
        }
        let rank = ((q * lat.len() as f64).ceil() as usize).clamp(1, lat.len());
        json!(ms(lat[rank - 1]))
    };
    let mean = if lat.is_empty() {
        Value::Null
    } else {
        json!(ms(lat.iter().sum::<u64>() / lat.len() as u64))
    };
    // Written by hand to keep the documented key order (serde_json sorts a map's keys).
    let report = format!(
        r#"{{"clients":{},"requests":{},"rps":{},"p50_ms":{},"p99_ms":{},"errors":{},"p90_ms":{},"max_ms":{},"mean_ms":{},"duration_s":{},"warmup_s":{},"url":{},"refused":{}}}"#,
        cfg.clients,
        lat.len(),
        (lat.len() as f64 / cfg.duration).round(),
        pct(0.50),
        pct(0.99),
        errors,
        pct(0.90),
        lat.last().map_or(Value::Null, |&n| json!(ms(n))),
        mean,
        cfg.duration,
        cfg.warmup,
        json!(cfg.url),
        refused,
    );
    println!("{report}");
    if lat.is_empty() || errors > 0 {
        ExitCode::FAILURE
    } else {
        ExitCode::SUCCESS
    }
}
