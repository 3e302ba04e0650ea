//! Store faults: a real `toolsmith serve --stateless --store postgres://…` whose connection to
//! PostgreSQL goes through a proxy (`support/pg_proxy.rs`) that cuts the database away the moment
//! a given statement passes, then gives it back. Each test drives one transition that used to
//! leave work stuck, and asserts that the call ends exactly once (its effects counted in a file
//! the tool appends to, not through the store), is never left `running`, and completes once the
//! store is back, without restarting anything. Waits are generous deadlines, never timings.

use std::path::PathBuf;
use std::time::{Duration, Instant};

use serde_json::{Value, json};
use tool_core::prelude::*;

use crate::support::child_cli;
use crate::support::pg_proxy::{self, PgProxy};
use crate::support::postgres as pg;

const STORE_KEY: &str = "store-faults-test-key-0123456789abcdef";
const LEDGER_ENV: &str = "TOOLSMITH_TEST_FAULT_LEDGER";
const MODERN: &str = "2026-07-28";
/// How long a test waits for the store's return to be noticed (the kept writes back off to
/// 10 s between tries).
const DEADLINE: Duration = Duration::from_secs(90);

/// Pays an amount once a person approves, exactly once per call (one line per payment in the
/// ledger file named by `TOOLSMITH_TEST_FAULT_LEDGER`)
#[tool(id = "fault-pay", require_approval, idempotent)]
async fn fault_pay(
    /// The amount
    amount: u32,
) -> Result<String, ToolError> {
    use std::io::Write;
    let path = std::env::var(LEDGER_ENV).map_err(|_| ToolError::new("no ledger"))?;
    let mut file = std::fs::OpenOptions::new()
        .create(true)
        .append(true)
        .open(path)
        .map_err(|e| ToolError::new(e.to_string()))?;
    writeln!(file, "paid {amount}").map_err(|e| ToolError::new(e.to_string()))?;
    Ok(format!("paid {amount}"))
}

/// Pays as a durable background task, exactly once per task: marks that it runs
/// (`<ledger>.running`), waits (at most a minute) for `<ledger>.go`, then pays
#[tool(id = "fault-task", idempotent, background(enabled = true))]
async fn fault_task(
    /// The amount
    amount: u32,
) -> Result<String, ToolError> {
    let ledger = std::env::var(LEDGER_ENV).map_err(|_| ToolError::new("no ledger"))?;
    std::fs::write(format!("{ledger}.running"), "").map_err(|e| ToolError::new(e.to_string()))?;
    let go = PathBuf::from(format!("{ledger}.go"));
    let until = Instant::now() + Duration::from_secs(60);
    while !go.exists() && Instant::now() < until {
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    fault_pay(amount).await
}

/// This suite's tests, named `SUITE::TEST`.
pub fn trials(suite: &str) -> Vec<libtest_mimic::Trial> {
    child_cli::trials(
        suite,
        &[
            (
                "an_approval_cut_before_its_receipt_is_released_and_runs_once_the_store_is_back",
                an_approval_cut_before_its_receipt_is_released_and_runs_once_the_store_is_back,
            ),
            (
                "a_run_that_ended_during_an_outage_is_recorded_once_the_store_is_back",
                a_run_that_ended_during_an_outage_is_recorded_once_the_store_is_back,
            ),
            (
                "a_task_that_completed_during_an_outage_ends_completed_once_the_store_is_back",
                a_task_that_completed_during_an_outage_ends_completed_once_the_store_is_back,
            ),
        ],
    )
}

/// One server behind the proxy, on a fresh schema.
struct Setup {
    proxy: PgProxy,
    server: child_cli::ServedChild,
    /// The store as reached directly (for the checks), and through the proxy.
    direct: String,
    schema: String,
    base: String,
    ledger: PathBuf,
    _dir: tempfile::TempDir,
}

impl Setup {
    async fn start(base: &str) -> Setup {
        let schema = pg::fresh_schema(base).await.expect("a fresh schema");
        let direct = pg::url_in_schema(base, &schema);
        let proxy = PgProxy::start(&pg_proxy::host_port(base)).await;
        let through = proxy.url(&direct);
        let dir = tempfile::tempdir().unwrap();
        let ledger = dir.path().join("ledger.txt");
        let migrated = cli(&direct, &["store", "migrate"]);
        assert!(migrated.ok, "store migrate: {}", migrated.stderr);
        let args = [
            "--store",
            &through,
            "serve",
            "--http",
            "127.0.0.1:0",
            "--stateless",
            "--json-response",
        ];
        let server = child_cli::ServedChild::start(
            child_cli::toolsmith(&args)
                .env("TOOLSMITH_STORE_KEY", STORE_KEY)
                .env(LEDGER_ENV, &ledger),
        );
        Setup {
            proxy,
            server,
            direct,
            schema,
            base: base.to_owned(),
            ledger,
            _dir: dir,
        }
    }

    /// A 2026-07-28 `tools/call` of `fault-pay`, answering `state` with an approval when given.
    async fn pay(&self, amount: u32, state: Option<&str>) -> Value {
        let mut params = json!({"name": "fault-pay", "arguments": {"amount": amount}});
        if let Some(state) = state {
            params["requestState"] = json!(state);
            params["inputResponses"] = json!({"approval": {"action": "accept", "content": {"approved": true}}});
        }
        self.request("tools/call", "fault-pay", params).await
    }

    /// A 2026-07-28 request (the client declares elicitation and the tasks extension): its
    /// result.
    async fn request(&self, method: &str, name: &str, mut params: Value) -> Value {
        params["_meta"] = json!({
            "io.modelcontextprotocol/protocolVersion": MODERN,
            "io.modelcontextprotocol/clientCapabilities": {"elicitation": {}, "extensions": {"io.modelcontextprotocol/tasks": {}}},
        });
        let r = reqwest::Client::new()
            .post(&self.server.url)
            .header("Accept", "application/json, text/event-stream")
            .header("Content-Type", "application/json")
            .header("MCP-Protocol-Version", MODERN)
            .header("Mcp-Method", method)
            .header("Mcp-Name", name)
            .timeout(Duration::from_secs(60))
            .body(json!({"jsonrpc": "2.0", "id": 1, "method": method, "params": params}).to_string())
            .send()
            .await
            .expect("the server answers");
        let body: Value = r.json().await.expect("a JSON answer");
        body.get("result").cloned().unwrap_or_else(|| panic!("no result: {body}"))
    }

    fn payments(&self) -> Vec<String> {
        std::fs::read_to_string(&self.ledger)
            .unwrap_or_default()
            .lines()
            .map(str::to_owned)
            .collect()
    }

    /// The calls the store lists (read directly, not through the proxy).
    fn pending(&self) -> Vec<Value> {
        let ran = cli(&self.direct, &["pending", "--json"]);
        assert!(ran.ok, "pending: {}", ran.stderr);
        serde_json::from_str::<Value>(&ran.stdout)
            .ok()
            .and_then(|v| v.as_array().cloned())
            .unwrap_or_default()
    }

    /// The receipts the store lists (read directly).
    fn receipts(&self) -> Vec<Value> {
        let ran = cli(&self.direct, &["receipts", "list", "--json"]);
        assert!(ran.ok, "receipts: {}", ran.stderr);
        serde_json::from_str::<Value>(&ran.stdout)
            .ok()
            .and_then(|v| v.as_array().cloned())
            .unwrap_or_default()
    }

    async fn cleanup(self) {
        drop(self.server);
        drop(self.proxy);
        pg::drop_schema(&self.base, &self.schema).await;
    }
}

/// `toolsmith --store STORE ARGS…` as the operator, to its end.
fn cli(store: &str, args: &[&str]) -> child_cli::Ran {
    let mut all = vec!["--store", store];
    all.extend_from_slice(args);
    child_cli::Ran::from(
        child_cli::toolsmith(&all)
            .env("TOOLSMITH_STORE_KEY", STORE_KEY)
            .output()
            .expect("the command line runs"),
    )
}

fn text(result: &Value) -> String {
    result["content"][0]["text"].as_str().unwrap_or_default().to_owned()
}

fn postgres_url() -> Option<String> {
    match pg::postgres() {
        pg::Postgres::Url(url) => Some(url),
        pg::Postgres::Skipped(why) => {
            eprintln!("{why}");
            None
        }
        pg::Postgres::Missing(why) => panic!("{why}"),
    }
}

/// Waits (bounded by [`DEADLINE`]) until `done` holds.
async fn eventually<F: Future<Output = bool>>(what: &str, mut done: impl FnMut() -> F) {
    let until = Instant::now() + DEADLINE;
    while !done().await {
        assert!(Instant::now() < until, "{what}: not within {} s", DEADLINE.as_secs());
        tokio::time::sleep(Duration::from_millis(250)).await;
    }
}

/// Transition A: the store fails after the approval claimed the call and before its receipt
/// claim. The client is told it was not run; the claim could not be given back then, but it is
/// once the store returns, and the call is approved and runs exactly once — no restart.
fn an_approval_cut_before_its_receipt_is_released_and_runs_once_the_store_is_back() {
    let Some(url) = postgres_url() else { return };
    child_cli::block_on(async {
        let setup = Setup::start(&url).await;
        let asked = setup.pay(1, None).await;
        let state = asked["requestState"].as_str().unwrap_or_else(|| panic!("{asked}")).to_owned();
        setup.proxy.cut_when("INSERT INTO toolsmith_receipts");
        let refused = setup.pay(1, Some(&state)).await;
        assert!(setup.proxy.is_cut(), "the receipt claim was reached: {refused}");
        assert_eq!(refused["isError"], true, "{refused}");
        assert!(setup.payments().is_empty(), "nothing ran while the store was away");
        setup.proxy.restore();
        let mut answers = Vec::new();
        let until = Instant::now() + DEADLINE;
        loop {
            let answer = text(&setup.pay(1, Some(&state)).await);
            if !answers.contains(&answer) {
                answers.push(answer.clone());
            }
            if answer == "paid 1" {
                break;
            }
            assert!(Instant::now() < until, "the call did not run once the store was back: {answers:?}");
            tokio::time::sleep(Duration::from_millis(250)).await;
        }
        assert_eq!(setup.payments(), ["paid 1"], "exactly once");
        assert!(
            answers.iter().all(|a| a == "paid 1" || a.contains("already being continued")),
            "while the claim was given back, the call was only said to be in progress: {answers:?}"
        );
        let again = setup.pay(1, Some(&state)).await;
        assert_eq!(again["isError"], true, "resolved: {again}");
        assert_eq!(setup.payments(), ["paid 1"], "an approval sent again runs nothing");
        assert!(setup.pending().is_empty(), "{:?}", setup.pending());
        setup.cleanup().await;
    });
}

/// Transition B: the store fails after the tool ran and before its receipt is finished. The
/// client has its result; once the store is back the receipt reads done and the call is no
/// longer listed as running — and an approval sent again runs nothing.
fn a_run_that_ended_during_an_outage_is_recorded_once_the_store_is_back() {
    let Some(url) = postgres_url() else { return };
    child_cli::block_on(async {
        let setup = Setup::start(&url).await;
        let asked = setup.pay(2, None).await;
        let state = asked["requestState"].as_str().unwrap_or_else(|| panic!("{asked}")).to_owned();
        setup.proxy.cut_when("UPDATE toolsmith_receipts");
        let done = setup.pay(2, Some(&state)).await;
        assert!(setup.proxy.is_cut(), "the receipt's finish was reached: {done}");
        assert_eq!(text(&done), "paid 2", "the client has its result: {done}");
        assert_eq!(setup.payments(), ["paid 2"]);
        setup.proxy.restore();
        eventually("the receipt is recorded done", || {
            let receipts = setup.receipts();
            async move { receipts.len() == 1 && receipts[0]["state"] == "done" }
        })
        .await;
        eventually("the call is no longer listed", || {
            let pending = setup.pending();
            async move { pending.is_empty() }
        })
        .await;
        let again = setup.pay(2, Some(&state)).await;
        assert_eq!(again["isError"], true, "resolved: {again}");
        assert_eq!(setup.payments(), ["paid 2"], "exactly once");
        setup.cleanup().await;
    });
}

/// Transition C: a durable task's attempt finishes while the store is away, so neither its
/// receipt nor "completed" can be recorded. Once the store is back the task ends `completed` with that attempt's result:
/// not run again, not failed, not left `working`.
fn a_task_that_completed_during_an_outage_ends_completed_once_the_store_is_back() {
    let Some(url) = postgres_url() else { return };
    child_cli::block_on(async {
        let setup = Setup::start(&url).await;
        let handle = setup
            .request(
                "tools/call",
                "fault-task",
                json!({"name": "fault-task", "arguments": {"amount": 3}}),
            )
            .await;
        let task = handle["taskId"]
            .as_str()
            .unwrap_or_else(|| panic!("no task handle: {handle}"))
            .to_owned();
        let marker = |suffix: &str| PathBuf::from(format!("{}.{suffix}", setup.ledger.display()));
        eventually("the attempt runs", || {
            let running = marker("running").exists();
            async move { running }
        })
        .await;
        // The first write after the body ran: its receipt's finish; the task's completion fails
        // after it, the store being away.
        setup.proxy.cut_when("UPDATE toolsmith_receipts");
        std::fs::write(marker("go"), "").unwrap();
        eventually("the attempt tries to record its end", || {
            let cut = setup.proxy.is_cut();
            async move { cut }
        })
        .await;
        assert_eq!(setup.payments(), ["paid 3"], "the attempt ran once");
        setup.proxy.restore();
        eventually("the task ends completed", || {
            let (setup, task) = (&setup, task.clone());
            async move {
                let got = setup.request("tasks/get", &task, json!({"taskId": task})).await;
                let status = got["status"].as_str().unwrap_or_default().to_owned();
                assert!(status != "cancelled", "{got}");
                status == "completed"
            }
        })
        .await;
        let got = setup.request("tasks/get", &task, json!({"taskId": task})).await;
        assert!(got.to_string().contains("paid 3"), "its attempt's result: {got}");
        assert_ne!(got["result"]["isError"], true, "completed, not failed: {got}");
        assert_eq!(setup.payments(), ["paid 3"], "not run again");
        setup.cleanup().await;
    });
}
