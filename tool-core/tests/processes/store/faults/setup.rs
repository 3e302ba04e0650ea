//! The server under test and the ways its store is taken away: PostgreSQL behind the proxy on a
//! fresh schema, or a SQLite file on a small tmpfs that is filled and freed.

use super::*;

/// How the test takes the store away: a proxy in front of PostgreSQL, or a full disk under a
/// SQLite file.
enum Fault {
    /// PostgreSQL through the proxy, in a fresh schema of `base`'s database.
    Proxy { proxy: PgProxy, base: String, schema: String },
    /// A SQLite file on a small tmpfs of its own.
    Disk(SmallDisk),
}

/// One server whose store the test can take away.
pub(super) struct Setup {
    fault: Fault,
    server: child_cli::ServedChild,
    /// The store as the checks reach it (directly, not through the proxy).
    pub(super) direct: String,
    pub(super) ledger: PathBuf,
    _dir: tempfile::TempDir,
}

impl Setup {
    /// A server over PostgreSQL behind the proxy, on a fresh schema.
    pub(super) async fn start(base: &str) -> Setup {
        Setup::start_with(base, &[]).await
    }

    /// [`start`](Self::start), with more `serve` arguments.
    pub(super) async fn start_with(base: &str, extra: &[&str]) -> Setup {
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
    pub(super) fn start_sqlite() -> Setup {
        Setup::start_sqlite_with(&[])
    }

    /// [`start_sqlite`](Self::start_sqlite), with more `serve` arguments.
    pub(super) fn start_sqlite_with(extra: &[&str]) -> Setup {
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
    pub(super) fn proxy(&self) -> &PgProxy {
        match &self.fault {
            Fault::Proxy { proxy, .. } => proxy,
            Fault::Disk(_) => panic!("a SQLite setup has no proxy"),
        }
    }

    /// The small disk under the SQLite file.
    pub(super) fn disk(&self) -> &SmallDisk {
        match &self.fault {
            Fault::Disk(disk) => disk,
            Fault::Proxy { .. } => panic!("a PostgreSQL setup has no disk"),
        }
    }

    /// A marker file beside the ledger (`<ledger>.SUFFIX`).
    pub(super) fn marker(&self, suffix: &str) -> PathBuf {
        PathBuf::from(format!("{}.{suffix}", self.ledger.display()))
    }

    /// Sends the approval of `fault-pay` for `amount` (its request state `state`) until it
    /// runs; the distinct answers seen on the way.
    pub(super) async fn approve_until_paid(&self, amount: u32, state: &str) -> Vec<String> {
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
    /// option that configured it) — never the whole log in the failure message. Waited for: the
    /// server writes it as the write fails, and its stderr is read on a thread of its own, so
    /// the line may arrive after the answer that shows the write kept.
    pub(super) async fn log_names_the_receipt_store(&self, store: &str) {
        let until = Instant::now() + DEADLINE;
        loop {
            let logs = self.server.logs.lock().unwrap().clone();
            if logs.lines().any(|l| l.contains("receipt store failed") && l.contains(store)) {
                return;
            }
            assert!(
                Instant::now() < until,
                "the log names the receipt store and {store}:\n{}",
                tail(&logs)
            );
            tokio::time::sleep(Duration::from_millis(100)).await;
        }
    }

    /// Waits until the one receipt reads done and no call is listed any more.
    pub(super) async fn receipt_done_and_call_gone(&self) {
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
    pub(super) async fn start_task(&self, amount: u32) -> String {
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
    pub(super) fn task(&self, task: &str) -> Value {
        cli_json(&self.direct, &["tasks", "get", task, "--json"])
    }

    /// Waits until `task`'s lease ran out, as the store shows it.
    pub(super) async fn lease_runs_out(&self, task: &str) {
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
    pub(super) async fn health(&self) -> Value {
        let url = self.server.url.replace("/mcp", "/healthz");
        let got = reqwest::get(&url).await.expect("/healthz answers");
        got.json().await.expect("a JSON health answer")
    }

    /// A 2026-07-28 `tools/call` of `fault-pay`, answering `state` with an approval when given.
    pub(super) async fn pay(&self, amount: u32, state: Option<&str>) -> Value {
        let mut params = json!({"name": "fault-pay", "arguments": {"amount": amount}});
        if let Some(state) = state {
            params["requestState"] = json!(state);
            params["inputResponses"] = json!({"approval": {"action": "accept", "content": {"approved": true}}});
        }
        self.request("tools/call", "fault-pay", params).await
    }

    /// A 2026-07-28 request (the client declares elicitation and the tasks extension): its
    /// result.
    pub(super) async fn request(&self, method: &str, name: &str, params: Value) -> Value {
        request_at(&self.server.url, method, name, params).await
    }

    pub(super) fn payments(&self) -> Vec<String> {
        std::fs::read_to_string(&self.ledger)
            .unwrap_or_default()
            .lines()
            .map(str::to_owned)
            .collect()
    }

    /// The calls the store lists (read directly, not through the proxy).
    pub(super) fn pending(&self) -> Vec<Value> {
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

    pub(super) async fn cleanup(self) {
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
pub(super) struct SmallDisk {
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
    pub(super) fn fill(&self) {
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

    pub(super) fn free(&self) {
        std::fs::remove_file(self.filler()).expect("the filler is removed");
    }
}

impl Drop for SmallDisk {
    fn drop(&mut self) {
        let _ = std::process::Command::new("umount").arg("-l").arg(&self.dir).status();
    }
}
