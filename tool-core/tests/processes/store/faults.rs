//! Store faults: a real `toolsmith serve --stateless --store postgres://…` whose connection to
//! PostgreSQL goes through a proxy (`support/pg_proxy.rs`) that cuts the database away the moment
//! a given statement passes, then gives it back; and the same server over a SQLite file on a
//! small file system of its own (a tmpfs mounted for the test) that is filled up, so the file
//! cannot be written, then freed. Each test drives one transition that used to leave work stuck,
//! and asserts that the call ends exactly once (its effects counted in a file the tool appends
//! to, not through the store), is never left `running`, and completes once the store is back,
//! without restarting anything. Waits are generous deadlines, never timings.

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

/// Pays an amount once a person approves, exactly once per call: marks that it runs
/// (`<ledger>.running`), waits (at most a minute) for `<ledger>.go`, then pays
#[tool(id = "fault-slow-pay", require_approval, idempotent)]
async fn fault_slow_pay(
    /// The amount
    amount: u32,
) -> Result<String, ToolError> {
    fault_task(amount).await
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
            (
                "a_task_whose_instance_lost_the_store_is_left_to_it_and_completes_once_it_is_back",
                a_task_whose_instance_lost_the_store_is_left_to_it_and_completes_once_it_is_back,
            ),
            (
                "sqlite_an_approval_while_the_disk_is_full_is_refused_unrun_and_runs_once_it_is_freed",
                sqlite_an_approval_while_the_disk_is_full_is_refused_unrun_and_runs_once_it_is_freed,
            ),
            (
                "sqlite_a_run_that_ended_while_the_disk_was_full_is_recorded_once_it_is_freed",
                sqlite_a_run_that_ended_while_the_disk_was_full_is_recorded_once_it_is_freed,
            ),
            (
                "sqlite_a_task_that_completed_while_the_disk_was_full_ends_completed_once_it_is_freed",
                sqlite_a_task_that_completed_while_the_disk_was_full_ends_completed_once_it_is_freed,
            ),
        ],
    )
}

/// How the test takes the store away: a proxy in front of PostgreSQL, or a full disk under a
/// SQLite file.
enum Fault {
    /// PostgreSQL through the proxy, in a fresh schema of `base`'s database.
    Proxy { proxy: PgProxy, base: String, schema: String },
    /// A SQLite file on a small tmpfs of its own.
    Disk(SmallDisk),
}

/// One server whose store the test can take away.
struct Setup {
    fault: Fault,
    server: child_cli::ServedChild,
    /// The store as the checks reach it (directly, not through the proxy).
    direct: String,
    ledger: PathBuf,
    _dir: tempfile::TempDir,
}

impl Setup {
    /// A server over PostgreSQL behind the proxy, on a fresh schema.
    async fn start(base: &str) -> Setup {
        Setup::start_with(base, &[]).await
    }

    /// [`start`](Self::start), with more `serve` arguments.
    async fn start_with(base: &str, extra: &[&str]) -> Setup {
        let schema = pg::fresh_schema(base).await.expect("a fresh schema");
        let direct = pg::url_in_schema(base, &schema);
        let proxy = PgProxy::start(&pg_proxy::host_port(base)).await;
        let through = proxy.url(&direct);
        let migrated = cli(&direct, &["store", "migrate"]);
        assert!(migrated.ok, "store migrate: {}", migrated.stderr);
        let fault = Fault::Proxy {
            proxy,
            base: base.to_owned(),
            schema,
        };
        Setup::serve(fault, &through, direct, extra)
    }

    /// A server over a SQLite file on a small file system the test can fill.
    fn start_sqlite() -> Setup {
        Setup::start_sqlite_with(&[])
    }

    /// [`start_sqlite`](Self::start_sqlite), with more `serve` arguments.
    fn start_sqlite_with(extra: &[&str]) -> Setup {
        let disk = SmallDisk::mount();
        let file = disk.dir.join("store.sqlite3").display().to_string();
        Setup::serve(Fault::Disk(disk), &file, file.clone(), extra)
    }

    fn serve(fault: Fault, store: &str, direct: String, extra: &[&str]) -> Setup {
        let dir = tempfile::tempdir().unwrap();
        let ledger = dir.path().join("ledger.txt");
        let server = serve_on(store, &ledger, extra);
        Setup {
            fault,
            server,
            direct,
            ledger,
            _dir: dir,
        }
    }

    /// The proxy in front of PostgreSQL.
    fn proxy(&self) -> &PgProxy {
        match &self.fault {
            Fault::Proxy { proxy, .. } => proxy,
            Fault::Disk(_) => panic!("a SQLite setup has no proxy"),
        }
    }

    /// The small disk under the SQLite file.
    fn disk(&self) -> &SmallDisk {
        match &self.fault {
            Fault::Disk(disk) => disk,
            Fault::Proxy { .. } => panic!("a PostgreSQL setup has no disk"),
        }
    }

    /// A marker file beside the ledger (`<ledger>.SUFFIX`).
    fn marker(&self, suffix: &str) -> PathBuf {
        PathBuf::from(format!("{}.{suffix}", self.ledger.display()))
    }

    /// Sends the approval of `fault-pay` for `amount` (its request state `state`) until it
    /// runs; the distinct answers seen on the way.
    async fn approve_until_paid(&self, amount: u32, state: &str) -> Vec<String> {
        let (mut answers, paid) = (Vec::new(), format!("paid {amount}"));
        let until = Instant::now() + DEADLINE;
        loop {
            let answer = text(&self.pay(amount, Some(state)).await);
            if !answers.contains(&answer) {
                answers.push(answer.clone());
            }
            if answer == paid {
                return answers;
            }
            assert!(Instant::now() < until, "the call did not run once the store was back: {answers:?}");
            tokio::time::sleep(Duration::from_millis(250)).await;
        }
    }

    /// The server's log has a line naming the receipt store as what failed, and `store` (the
    /// option that configured it) — never the whole log in the failure message.
    fn log_names_the_receipt_store(&self, store: &str) {
        let logs = self.server.logs.lock().unwrap().clone();
        let named = logs.lines().any(|l| l.contains("receipt store failed") && l.contains(store));
        assert!(named, "the log names the receipt store and {store}:\n{}", tail(&logs));
    }

    /// Waits until the one receipt reads done and no call is listed any more.
    async fn receipt_done_and_call_gone(&self) {
        eventually("the receipt is recorded done", || {
            let receipts = self.receipts();
            async move { receipts.len() == 1 && receipts[0]["state"] == "done" }
        })
        .await;
        eventually("the call is no longer listed", || {
            let pending = self.pending();
            async move { pending.is_empty() }
        })
        .await;
    }

    /// Starts `fault-task` for `amount` as a durable task; returns its id once its attempt runs.
    async fn start_task(&self, amount: u32) -> String {
        let params = json!({"name": "fault-task", "arguments": {"amount": amount}});
        let handle = self.request("tools/call", "fault-task", params).await;
        let task = handle["taskId"]
            .as_str()
            .unwrap_or_else(|| panic!("no task handle: {handle}"))
            .to_owned();
        eventually("the attempt runs", || {
            let running = self.marker("running").exists();
            async move { running }
        })
        .await;
        task
    }

    /// `toolsmith tasks get TASK --json`, read directly.
    fn task(&self, task: &str) -> Value {
        cli_json(&self.direct, &["tasks", "get", task, "--json"])
    }

    /// Waits until `task`'s lease ran out, as the store shows it.
    async fn lease_runs_out(&self, task: &str) {
        eventually("the task's lease runs out", || {
            let shown = self.task(task);
            let now = std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).unwrap();
            let expired = shown["lease_expires_at_ms"]
                .as_u64()
                .is_some_and(|at| u128::from(at) < now.as_millis());
            async move { expired }
        })
        .await;
    }

    /// `GET /healthz` of the server: its JSON body.
    async fn health(&self) -> Value {
        let url = self.server.url.replace("/mcp", "/healthz");
        let got = reqwest::get(&url).await.expect("/healthz answers");
        got.json().await.expect("a JSON health answer")
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
    async fn request(&self, method: &str, name: &str, params: Value) -> Value {
        request_at(&self.server.url, method, name, params).await
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
        if let Fault::Proxy { proxy, base, schema } = self.fault {
            drop(proxy);
            pg::drop_schema(&base, &schema).await;
        }
    }
}

/// A tmpfs of its own (mounted for the test, unmounted when dropped) that [`fill`](Self::fill)
/// fills to the last byte, so a SQLite file on it cannot grow (every commit appends to its
/// write-ahead log), and [`free`](Self::free) frees again.
struct SmallDisk {
    dir: PathBuf,
    _mount_point: tempfile::TempDir,
}

impl SmallDisk {
    fn mount() -> SmallDisk {
        let point = tempfile::tempdir().unwrap();
        let mounted = std::process::Command::new("mount")
            .args(["-t", "tmpfs", "-o", "size=16m,mode=0700", "tmpfs"])
            .arg(point.path())
            .output()
            .expect("mount runs");
        assert!(
            mounted.status.success(),
            "the SQLite fault tests mount a small tmpfs (as root): {}",
            String::from_utf8_lossy(&mounted.stderr)
        );
        SmallDisk {
            dir: point.path().to_owned(),
            _mount_point: point,
        }
    }

    fn filler(&self) -> PathBuf {
        self.dir.join("filler")
    }

    /// Writes a file until the file system has no byte left.
    fn fill(&self) {
        use std::io::Write;
        let mut file = std::fs::File::create(self.filler()).expect("the filler file");
        let block = vec![0u8; 64 * 1024];
        loop {
            match file.write(&block) {
                Ok(0) => break,
                Ok(_) => {}
                Err(e) if e.raw_os_error() == Some(28) => break, // ENOSPC
                Err(e) => panic!("filling the disk: {e}"),
            }
        }
        // The last partial block, byte by byte.
        while file.write(&[0]).is_ok_and(|n| n == 1) {}
    }

    fn free(&self) {
        std::fs::remove_file(self.filler()).expect("the filler is removed");
    }
}

impl Drop for SmallDisk {
    fn drop(&mut self) {
        let _ = std::process::Command::new("umount").arg("-l").arg(&self.dir).status();
    }
}

/// `toolsmith --store STORE serve --http … --stateless` with `extra` arguments, the ledger in
/// its environment.
fn serve_on(store: &str, ledger: &std::path::Path, extra: &[&str]) -> child_cli::ServedChild {
    let mut args = vec!["--store", store, "serve", "--http", "127.0.0.1:0", "--stateless", "--json-response"];
    args.extend_from_slice(extra);
    child_cli::ServedChild::start(
        child_cli::toolsmith(&args)
            .env("TOOLSMITH_STORE_KEY", STORE_KEY)
            .env(LEDGER_ENV, ledger),
    )
}

/// A 2026-07-28 request to the server at `url` (the client declares elicitation and the tasks
/// extension): its result.
async fn request_at(url: &str, method: &str, name: &str, mut params: Value) -> Value {
    params["_meta"] = json!({
        "io.modelcontextprotocol/protocolVersion": MODERN,
        "io.modelcontextprotocol/clientCapabilities": {"elicitation": {}, "extensions": {"io.modelcontextprotocol/tasks": {}}},
    });
    let r = reqwest::Client::new()
        .post(url)
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

/// `toolsmith --store STORE ARGS…` as the operator: its standard output as JSON (null when it
/// failed or printed none).
fn cli_json(store: &str, args: &[&str]) -> Value {
    let ran = cli(store, args);
    serde_json::from_str(&ran.stdout).unwrap_or(Value::Null)
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
        setup.proxy().cut_when("INSERT INTO toolsmith_receipts");
        let refused = setup.pay(1, Some(&state)).await;
        assert!(setup.proxy().is_cut(), "the receipt claim was reached: {refused}");
        assert_eq!(refused["isError"], true, "{refused}");
        assert!(setup.payments().is_empty(), "nothing ran while the store was away");
        setup.proxy().restore();
        let answers = setup.approve_until_paid(1, &state).await;
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
        setup.proxy().cut_when("UPDATE toolsmith_receipts");
        let done = setup.pay(2, Some(&state)).await;
        assert!(setup.proxy().is_cut(), "the receipt's finish was reached: {done}");
        assert_eq!(text(&done), "paid 2", "the client has its result: {done}");
        assert_eq!(setup.payments(), ["paid 2"]);
        let health = setup.health().await;
        assert_eq!(
            (&health["status"], &health["backend"]),
            (&json!("unavailable"), &json!("postgres")),
            "{health}"
        );
        setup.log_names_the_receipt_store("--store postgres://");
        setup.proxy().restore();
        setup.receipt_done_and_call_gone().await;
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
        let task = setup.start_task(3).await;
        let marker = |suffix: &str| setup.marker(suffix);
        // The first write after the body ran: its receipt's finish; the task's completion fails
        // after it, the store being away.
        setup.proxy().cut_when("UPDATE toolsmith_receipts");
        std::fs::write(marker("go"), "").unwrap();
        eventually("the attempt tries to record its end", || {
            let cut = setup.proxy().is_cut();
            async move { cut }
        })
        .await;
        assert_eq!(setup.payments(), ["paid 3"], "the attempt ran once");
        setup.proxy().restore();
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

/// Transition C with a second instance: the first's attempt ends while its store is away, so
/// neither the receipt nor the task's end can be recorded and its task lease runs out. The second
/// instance does not take the task over (or fail it, with no retries left) while the first is
/// alive — the first holds the attempt's end in memory — and once the first reaches the store
/// again the task ends `completed` with that attempt's result. The tool ran exactly once.
fn a_task_whose_instance_lost_the_store_is_left_to_it_and_completes_once_it_is_back() {
    let Some(url) = postgres_url() else { return };
    child_cli::block_on(async {
        // Short task leases, so they run out during the outage; an instance lease long enough that
        // the first instance is still alive meanwhile.
        let leases = ["--task-lease", "1", "--instance-lease", "120"];
        let setup = Setup::start_with(&url, &leases).await;
        let task = setup.start_task(4).await;
        // The second instance, straight to the database, after the first took the task.
        let second = serve_on(&setup.direct, &setup.ledger, &leases);
        setup.proxy().cut();
        std::fs::write(setup.marker("go"), "").unwrap();
        let shown = || setup.task(&task);
        eventually("the first attempt ran", || {
            let paid = setup.payments().len() == 1;
            async move { paid }
        })
        .await;
        setup.lease_runs_out(&task).await;
        // The second instance polls for tasks every half second: give it a few chances to take
        // over (or fail) the task, which it must not.
        tokio::time::sleep(Duration::from_secs(3)).await;
        let during = shown();
        assert_eq!(
            (&during["state"], &during["attempts"]),
            (&json!("running"), &json!(1)),
            "left to its live instance: {during}"
        );
        setup.proxy().restore();
        eventually("the task ends completed", || {
            let (url, task) = (second.url.clone(), task.clone());
            async move {
                let got = request_at(&url, "tasks/get", &task, json!({"taskId": task})).await;
                let status = got["status"].as_str().unwrap_or_default().to_owned();
                assert!(status != "cancelled" && status != "failed", "{got}");
                status == "completed"
            }
        })
        .await;
        let got = setup.request("tasks/get", &task, json!({"taskId": task})).await;
        assert!(got.to_string().contains("paid 4"), "the first attempt's result: {got}");
        assert_eq!(shown()["attempts"], 1, "not taken over");
        assert_eq!(setup.payments(), ["paid 4"], "the body ran once");
        drop(second);
        setup.cleanup().await;
    });
}

/// SQLite, the disk full before the approval: the approval's claim cannot be written, so the
/// client is told nothing ran; nothing is left claimed, and once the disk has room the same
/// approval runs the call exactly once. The failure names the store that failed.
fn sqlite_an_approval_while_the_disk_is_full_is_refused_unrun_and_runs_once_it_is_freed() {
    child_cli::block_on(async {
        let setup = Setup::start_sqlite();
        let asked = setup.pay(1, None).await;
        let state = asked["requestState"].as_str().unwrap_or_else(|| panic!("{asked}")).to_owned();
        setup.disk().fill();
        let refused = setup.pay(1, Some(&state)).await;
        assert_eq!(refused["isError"], true, "{refused}");
        assert!(text(&refused).contains("store failed"), "the failure names the store: {refused}");
        assert!(setup.payments().is_empty(), "nothing ran while the disk was full");
        // The command line names the part of the store that failed and the option behind it.
        let waiting = setup.pending();
        let id = waiting[0]["tool_call_id"].as_str().unwrap_or_else(|| panic!("{waiting:?}"));
        let declined = cli(&setup.direct, &["call", id, "--decline", "not now"]);
        assert!(!declined.ok, "a decision that cannot be written is refused");
        let expected = format!("--store {}: the pending-call store failed: ", setup.direct);
        assert!(declined.stderr.contains(&expected), "{expected:?} in: {}", declined.stderr);
        setup.disk().free();
        setup.approve_until_paid(1, &state).await;
        assert_eq!(setup.payments(), ["paid 1"], "exactly once");
        assert!(setup.pending().is_empty(), "{:?}", setup.pending());
        setup.cleanup().await;
    });
}

/// SQLite, transition B: the disk fills while the approved tool runs, so neither its receipt's
/// finish nor the call's removal can be written. The client has its result; `/healthz` counts
/// the writes kept in memory; the server's log names the part of the store that failed and the
/// option that configured it; once the disk has room the receipt reads done, the call is gone,
/// and an approval sent again runs nothing.
fn sqlite_a_run_that_ended_while_the_disk_was_full_is_recorded_once_it_is_freed() {
    child_cli::block_on(async {
        let setup = Setup::start_sqlite();
        let asked = setup.request(
            "tools/call",
            "fault-slow-pay",
            json!({"name": "fault-slow-pay", "arguments": {"amount": 2}}),
        );
        let asked = asked.await;
        let state = asked["requestState"].as_str().unwrap_or_else(|| panic!("{asked}")).to_owned();
        let approve = || {
            let mut params = json!({"name": "fault-slow-pay", "arguments": {"amount": 2}});
            params["requestState"] = json!(state);
            params["inputResponses"] = json!({"approval": {"action": "accept", "content": {"approved": true}}});
            setup.request("tools/call", "fault-slow-pay", params)
        };
        let (done, ()) = tokio::join!(approve(), async {
            eventually("the approved call runs", || {
                let running = setup.marker("running").exists();
                async move { running }
            })
            .await;
            setup.disk().fill();
            std::fs::write(setup.marker("go"), "").unwrap();
        });
        assert_eq!(text(&done), "paid 2", "the client has its result: {done}");
        assert_eq!(setup.payments(), ["paid 2"]);
        let health = setup.health().await;
        assert_eq!(health["backend"], "sqlite", "{health}");
        assert!(
            health["kept_writes"].as_u64() > Some(0),
            "the writes kept for later are counted: {health}"
        );
        setup.log_names_the_receipt_store("--store /");
        setup.disk().free();
        setup.receipt_done_and_call_gone().await;
        eventually("no write is kept any longer", || async { setup.health().await["kept_writes"] == 0 }).await;
        let mut again = json!({"name": "fault-slow-pay", "arguments": {"amount": 2}});
        again["requestState"] = json!(state);
        again["inputResponses"] = json!({"approval": {"action": "accept", "content": {"approved": true}}});
        let again = setup.request("tools/call", "fault-slow-pay", again).await;
        assert_eq!(again["isError"], true, "resolved: {again}");
        assert_eq!(setup.payments(), ["paid 2"], "exactly once");
        setup.cleanup().await;
    });
}

/// SQLite, transition C: a durable task's attempt finishes while the disk is full. Once it has
/// room the task ends `completed` with that attempt's result: not run again, not failed.
fn sqlite_a_task_that_completed_while_the_disk_was_full_ends_completed_once_it_is_freed() {
    child_cli::block_on(async {
        // A short task lease, so it runs out while the disk is full: the task is left to this
        // process (alive, holding the attempt's end), not failed or run again by its own worker.
        let setup = Setup::start_sqlite_with(&["--task-lease", "1"]);
        let task = setup.start_task(3).await;
        setup.disk().fill();
        std::fs::write(setup.marker("go"), "").unwrap();
        eventually("the attempt ran", || {
            let paid = setup.payments().len() == 1;
            async move { paid }
        })
        .await;
        eventually("its end is kept for later", || async {
            setup.health().await["kept_writes"].as_u64() > Some(0)
        })
        .await;
        let shown = || setup.task(&task);
        setup.lease_runs_out(&task).await;
        // The kept writes back off meanwhile, while the worker polls every half second.
        tokio::time::sleep(Duration::from_secs(3)).await;
        setup.disk().free();
        eventually("the task ends completed", || {
            let (setup, task) = (&setup, task.clone());
            async move {
                let got = setup.request("tasks/get", &task, json!({"taskId": task})).await;
                let status = got["status"].as_str().unwrap_or_default().to_owned();
                assert!(status != "cancelled" && status != "failed", "{got}");
                status == "completed"
            }
        })
        .await;
        let got = setup.request("tasks/get", &task, json!({"taskId": task})).await;
        assert!(got.to_string().contains("paid 3"), "its attempt's result: {got}");
        assert_eq!(setup.payments(), ["paid 3"], "not run again");
        assert_eq!(shown()["attempts"], 1, "one attempt");
        setup.cleanup().await;
    });
}

/// The last lines of a log, for a failure message (never the whole of it).
fn tail(logs: &str) -> String {
    let lines: Vec<&str> = logs.lines().collect();
    lines[lines.len().saturating_sub(20)..].join("\n")
}
