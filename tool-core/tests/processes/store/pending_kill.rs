//! Nothing pending is lost, and nothing runs twice: a process that suspends and resumes calls in
//! a loop is SIGKILLed at random moments, 100 times; after each kill a new process resumes every
//! call the dead one announced as suspended (and had not resolved) and gets its result (its tool
//! is declared idempotent, so a resume cut short runs again on its own). Then `toolsmith call ID
//! --approve` and `toolsmith serve --stdio` with a call waiting for approval are SIGKILLed at
//! random moments, 30 times each: the tool's effect happens at most once, and a row whose process
//! died is never left `running`: it is reported interrupted, and refused until a person decides.
//!
//! The children are this test binary itself (it has no libtest harness: `main` picks the mode),
//! started again with `KILL_CHILD_STORE` set (it then runs the loop) or as the command line
//! (`support/child_cli.rs`).

use crate::support::child_cli;

use std::io::{BufRead, BufReader};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use tool_core::prelude::*;
use tool_core::runtime::backend::{CallState, StoredCall};
use tool_core::runtime::{Outcome, ResumeOptions, RunEventKind as K, Runtime, RuntimeError, SqliteStore};

/// What to ask.
#[derive(Debug, Serialize, Deserialize, JsonSchema)]
pub struct Ask {
    /// The number asked about.
    pub n: u64,
}

/// The answer.
#[derive(Debug, Serialize, Deserialize, JsonSchema)]
pub struct Reply {
    /// The number to add.
    pub add: u64,
}

/// Suspends until told what to add (running it twice has no extra effect)
#[tool(id = "kill-ask", suspend = Ask, resume = Reply, mcp(idempotent_hint = true))]
async fn ask(
    /// The number
    n: u64,
    #[ctx] cx: ToolContext<RequestContext, Ask, Reply>,
) -> Result<u64, ToolError> {
    match cx.resume_data()? {
        Some(r) => Ok(n + r.add),
        None => Err(cx.suspend(Ask { n })),
    }
}

fn runtime(path: &std::path::Path) -> Runtime {
    Runtime::builder(Registry::from_iter([ask::tool()]))
        .store(SqliteStore::open(path).expect("the store opens"))
        .build()
}

/// The child's loop, when this binary is started as one (`KILL_CHILD_STORE` set): suspend call
/// `i`, announce it; resume call `i - 1`, announce its result; until it is killed.
pub fn child() -> bool {
    let Ok(path) = std::env::var("KILL_CHILD_STORE") else {
        return false;
    };
    let prefix = std::env::var("KILL_CHILD_PREFIX").unwrap();
    let rt = tokio::runtime::Builder::new_multi_thread().enable_all().build().unwrap();
    rt.block_on(async {
        let runtime = runtime(path.as_ref());
        for i in 0u64.. {
            let id = format!("{prefix}-{i}");
            let options = CallOptions::default().id(id.clone());
            let events = runtime.call("kill-ask", json!({"n": i}), options).collect().await;
            assert!(matches!(events.last().unwrap().raw.kind, K::ToolCallSuspended { .. }));
            println!("SUSPENDED {id}");
            if i > 0 {
                let prev = format!("{prefix}-{}", i - 1);
                let events = runtime
                    .resume(&prev, json!({"add": 1000}), ResumeOptions::default())
                    .await
                    .unwrap()
                    .collect()
                    .await;
                assert!(matches!(&events.last().unwrap().raw.kind, K::ToolResult { output } if output.value() == json!(i - 1 + 1000)));
                println!("RESOLVED {prev}");
            }
        }
    });
    true
}

/// A small deterministic generator (no timing in assertions; the randomness only spreads the
/// kill moments).
fn next(seed: &mut u64) -> u64 {
    *seed ^= *seed << 13;
    *seed ^= *seed >> 7;
    *seed ^= *seed << 17;
    *seed
}

fn no_pending_call_is_lost_across_100_kills() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("pending.sqlite3");
    let exe = std::env::current_exe().unwrap();
    let rt = tokio::runtime::Builder::new_multi_thread().enable_all().build().unwrap();
    let started = Instant::now();
    let mut seed = 0x9E37_79B9_7F4A_7C15u64;
    let (mut kills, mut resumed_after_kill) = (0, 0);
    for round in 0..100 {
        assert!(started.elapsed() < Duration::from_secs(240), "the loop is bounded in time");
        let prefix = format!("r{round}");
        let mut child = Command::new(&exe)
            .env("KILL_CHILD_STORE", &path)
            .env("KILL_CHILD_PREFIX", &prefix)
            .stdout(Stdio::piped())
            .stderr(Stdio::null())
            .spawn()
            .unwrap();
        let mut lines = BufReader::new(child.stdout.take().unwrap()).lines();
        let (mut announced, mut resolved) = (Vec::new(), Vec::new());
        // Kill after 1 to 6 announcements, plus up to 3 ms: sometimes mid-write, mid-resume.
        let wait_for = 1 + next(&mut seed) % 6;
        while (announced.len() as u64) < wait_for {
            let line = lines.next().expect("the child announces").unwrap();
            if let Some(id) = line.strip_prefix("SUSPENDED ") {
                announced.push(id.to_owned());
            } else if let Some(id) = line.strip_prefix("RESOLVED ") {
                resolved.push(id.to_owned());
            }
        }
        std::thread::sleep(Duration::from_micros(next(&mut seed) % 3000));
        child.kill().unwrap(); // SIGKILL
        child.wait().unwrap();
        kills += 1;
        // Lines the child wrote before it died still count as announced.
        for line in lines.map_while(Result::ok) {
            if let Some(id) = line.strip_prefix("SUSPENDED ") {
                announced.push(id.to_owned());
            } else if let Some(id) = line.strip_prefix("RESOLVED ") {
                resolved.push(id.to_owned());
            }
        }
        // This process is the new one: every announced, unresolved call must resume.
        let runtime = runtime(&path);
        rt.block_on(async {
            for id in announced.iter().filter(|id| !resolved.contains(id)) {
                let n: u64 = id.rsplit('-').next().unwrap().parse().unwrap();
                let stream = match runtime.resume(id, json!({"add": 1}), ResumeOptions::default()).await {
                    Ok(s) => s,
                    Err(RuntimeError::UnknownCall(_)) => {
                        // The child may have resolved it in the instant it was killed, before
                        // its line got out; then the call is gone because it finished.
                        assert_eq!(id, &announced[announced.len() - 2.min(announced.len())], "lost call {id}");
                        continue;
                    }
                    Err(e) => panic!("call {id} could not be resumed: {e}"),
                };
                let events = stream.collect().await;
                let last = &events.last().unwrap().raw;
                assert!(
                    matches!(&last.kind, K::ToolResult { output } if output.value() == json!(n + 1)),
                    "{id}: {last:?}"
                );
                resumed_after_kill += 1;
            }
            // Whatever else the dead child left (saved but not yet announced) is resumable too.
            for call in runtime.pending().await.unwrap() {
                let events = runtime
                    .resume(&call.tool_call_id, json!({"add": 1}), ResumeOptions::default())
                    .await
                    .unwrap()
                    .collect()
                    .await;
                assert!(matches!(events.last().unwrap().raw.kind, K::ToolResult { .. }));
            }
            assert!(runtime.pending().await.unwrap().is_empty());
        });
    }
    assert_eq!(kills, 100);
    assert!(
        resumed_after_kill >= 100,
        "every round left at least its last announced call: {resumed_after_kill}"
    );
}

/// Appends a line to `path` (the effect counted), then takes `pause_ms`
#[tool(id = "kill-effect", require_approval)]
async fn effect(
    /// The file that counts runs
    path: String,
    /// How long the tool goes on after its effect
    pause_ms: u64,
) -> Result<String, ToolError> {
    use std::io::Write;
    let mut file = std::fs::OpenOptions::new()
        .create(true)
        .append(true)
        .open(&path)
        .map_err(|e| ToolError::new(e.to_string()))?;
    file.write_all(b"ran\n")
        .and_then(|()| file.sync_all())
        .map_err(|e| ToolError::new(e.to_string()))?;
    tokio::time::sleep(Duration::from_millis(pause_ms)).await;
    Ok("done".into())
}

fn runs(path: &std::path::Path) -> usize {
    std::fs::read_to_string(path).map_or(0, |s| s.lines().count())
}

/// Every row of the store, as a runtime lists them.
fn entries_of(store: &std::path::Path) -> Vec<StoredCall> {
    let runtime = Runtime::builder(Registry::global())
        .store(SqliteStore::open(store).unwrap())
        .build();
    let listing = tokio::runtime::Builder::new_current_thread().enable_all().build().unwrap();
    listing.block_on(runtime.pending_entries()).unwrap()
}

/// The call's state in the store; a row left `running` by a dead process, or a damaged one,
/// fails the test.
fn state_after_kill(store: &std::path::Path, id: &str) -> Option<CallState> {
    let entries = entries_of(store);
    let state = entries.into_iter().find(|e| e.tool_call_id() == id).map(|e| match e {
        StoredCall::Call { state, .. } => state,
        damaged => panic!("{id} is damaged: {damaged:?}"),
    });
    assert!(
        !matches!(state, Some(CallState::Running(_))),
        "{id} is left running by a dead process"
    );
    state
}

/// What a person does after a kill: a waiting call is approved (it runs once); an interrupted
/// one is refused a plain approval, then declined or explicitly rerun. Returns whether it was
/// rerun.
fn settle(store: &str, id: &str, state: Option<CallState>, rerun: bool) -> bool {
    match state {
        None => {
            let again = child_cli::run(&["--store", store, "call", id, "--approve"]);
            assert!(!again.ok && again.stderr.contains("already resolved"), "{id}: {}", again.stderr);
            false
        }
        Some(CallState::Waiting) => {
            let approved = child_cli::run(&["--store", store, "call", id, "--approve"]);
            assert!(approved.ok, "{id}: {}", approved.stderr);
            false
        }
        Some(CallState::Interrupted(_)) => {
            let listed = child_cli::run(&["--store", store, "pending"]);
            assert!(
                listed.stdout.contains(id) && listed.stdout.contains("interrupted"),
                "{}",
                listed.stdout
            );
            let refused = child_cli::run(&["--store", store, "call", id, "--approve"]);
            assert!(!refused.ok && refused.stderr.contains("interrupted"), "{id}: {}", refused.stderr);
            let decided = if rerun {
                child_cli::run(&["--store", store, "call", id, "--approve", "--rerun"])
            } else {
                child_cli::run(&["--store", store, "call", id, "--decline", "it may have run"])
            };
            assert!(decided.ok, "{id}: {}", decided.stderr);
            rerun
        }
        Some(CallState::Running(_)) => unreachable!("refused by state_after_kill"),
    }
}

fn call_approve_killed_30_times_never_runs_a_call_twice() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("pending.sqlite3");
    let store = path.to_str().unwrap();
    let runtime = Runtime::builder(Registry::global())
        .store(SqliteStore::open(&path).unwrap())
        .build();
    let rt = tokio::runtime::Builder::new_multi_thread().enable_all().build().unwrap();
    let started = Instant::now();
    let mut seed = 0x2545_F491_4F6C_DD1Du64;
    let mut interrupted = 0;
    for round in 0..30 {
        assert!(started.elapsed() < Duration::from_secs(120), "the loop is bounded in time");
        let (id, effects) = (format!("a{round}"), dir.path().join(format!("effects-{round}")));
        let args = json!({"path": effects, "pause_ms": 20 + next(&mut seed) % 30});
        let made = rt.block_on(async {
            runtime
                .call("kill-effect", args, CallOptions::default().id(id.clone()))
                .finish()
                .await
        });
        assert!(matches!(made.outcome, Outcome::AwaitingApproval(_)), "{:?}", made.outcome);
        let mut child = child_cli::spawn(&["--store", store, "call", &id, "--approve"]);
        match next(&mut seed) % 3 {
            // Any moment: before the claim, mid-claim, mid-run, after.
            0 => std::thread::sleep(Duration::from_millis(next(&mut seed) % 60)),
            // After the effect, before the call is resolved.
            1 => {
                let waiting = Instant::now();
                while runs(&effects) == 0 && child.try_wait().unwrap().is_none() {
                    assert!(waiting.elapsed() < Duration::from_secs(10), "the tool did not run within 10 s");
                    std::thread::sleep(Duration::from_millis(1));
                }
                std::thread::sleep(Duration::from_micros(next(&mut seed) % 5000));
            }
            // Not at all: it finishes (within 10 s).
            _ => {
                let waiting = Instant::now();
                while child.try_wait().unwrap().is_none() {
                    assert!(
                        waiting.elapsed() < Duration::from_secs(10),
                        "the approval did not finish within 10 s"
                    );
                    std::thread::sleep(Duration::from_millis(1));
                }
            }
        }
        let _ = child.kill(); // SIGKILL
        child.wait().unwrap();
        let state = state_after_kill(&path, &id);
        let ran = runs(&effects);
        match state {
            None => assert_eq!(ran, 1, "{id} resolved without running once"),
            Some(CallState::Waiting) => assert_eq!(ran, 0, "{id} ran but waits again"),
            Some(CallState::Interrupted(claim)) => {
                assert!(ran <= 1, "{id} ran {ran} times");
                assert_eq!(claim.owner_pid, Some(child.id()), "{id}: the owner is the killed process");
                interrupted += 1;
            }
            Some(CallState::Running(_)) => unreachable!(),
        }
        let rerun = settle(store, &id, state, round % 2 == 0);
        // Each run is one a person asked for: the approval, or an explicit rerun.
        let expected = match state {
            Some(CallState::Interrupted(_)) => ran + usize::from(rerun),
            _ => 1,
        };
        assert_eq!(runs(&effects), expected, "{id}");
        assert!(state_after_kill(&path, &id).is_none(), "{id} is settled");
    }
    eprintln!("call --approve, 30 kills: {interrupted} left interrupted");
    assert!(interrupted >= 1, "no kill landed mid-run: {interrupted}");
}

/// A `toolsmith serve --stdio` child and its output lines (JSON only: the test harness's
/// header is skipped).
struct Served {
    child: std::process::Child,
    stdin: std::process::ChildStdin,
    lines: std::sync::mpsc::Receiver<Value>,
}

impl Served {
    fn start(store: &str) -> Served {
        let mut command = child_cli::toolsmith(&["--store", store, "serve", "--stdio"]);
        command.stdin(Stdio::piped()).stdout(Stdio::piped()).stderr(Stdio::null());
        let mut child = command.spawn().unwrap();
        let (stdin, stdout) = (child.stdin.take().unwrap(), child.stdout.take().unwrap());
        let (tx, lines) = std::sync::mpsc::channel();
        std::thread::spawn(move || {
            for line in BufReader::new(stdout).lines().map_while(Result::ok) {
                if let Ok(v) = serde_json::from_str::<Value>(line.trim())
                    && tx.send(v).is_err()
                {
                    return;
                }
            }
        });
        Served { child, stdin, lines }
    }

    fn send(&mut self, message: Value) {
        use std::io::Write;
        writeln!(self.stdin, "{message}").unwrap();
        self.stdin.flush().unwrap();
    }

    fn recv(&self) -> Value {
        self.lines
            .recv_timeout(Duration::from_secs(10))
            .expect("the server answers within 10 s")
    }
}

fn serve_with_a_waiting_call_killed_30_times_never_runs_it_twice() {
    let started = Instant::now();
    let mut seed = 0x1234_5678_9ABC_DEF1u64;
    let mut tally = std::collections::BTreeMap::<&str, u32>::new();
    for round in 0..30 {
        assert!(started.elapsed() < Duration::from_secs(120), "the loop is bounded in time");
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("pending.sqlite3");
        let (store, effects) = (path.to_str().unwrap(), dir.path().join("effects"));
        let mut served = Served::start(store);
        let init =
            json!({"protocolVersion": "2025-06-18", "capabilities": {"elicitation": {}}, "clientInfo": {"name": "kill", "version": "0"}});
        served.send(json!({"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": init}));
        assert_eq!(served.recv()["id"], 0);
        served.send(json!({"jsonrpc": "2.0", "method": "notifications/initialized"}));
        let args = json!({"path": effects, "pause_ms": 20 + next(&mut seed) % 30});
        served.send(json!({"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": {"name": "kill-effect", "arguments": args}}));
        let ask = served.recv();
        assert_eq!(ask["method"], "elicitation/create", "{ask}");
        let approve = json!({"jsonrpc": "2.0", "id": ask["id"], "result": {"action": "accept", "content": {"approved": true}}});
        match next(&mut seed) % 3 {
            // While the call waits for the answer.
            0 => std::thread::sleep(Duration::from_millis(next(&mut seed) % 5)),
            // Any moment after the approval.
            1 => {
                served.send(approve);
                std::thread::sleep(Duration::from_millis(next(&mut seed) % 60));
            }
            // After the answer.
            _ => {
                served.send(approve);
                while served.recv().get("id") != Some(&json!(1)) {}
            }
        }
        let _ = served.child.kill(); // SIGKILL
        served.child.wait().unwrap();
        let entries = entries_of(&path);
        let id = entries.first().map(|e| e.tool_call_id().to_owned());
        let state = id.as_deref().and_then(|id| state_after_kill(&path, id));
        let ran = runs(&effects);
        match state {
            None => assert!(ran == 1 && id.is_none(), "round {round}: resolved without running once ({ran})"),
            Some(CallState::Waiting) => assert_eq!(ran, 0, "round {round}: ran but waits again"),
            Some(CallState::Interrupted(claim)) => {
                assert!(ran <= 1, "round {round}: ran {ran} times");
                assert_eq!(claim.owner_pid, Some(served.child.id()));
            }
            Some(CallState::Running(_)) => unreachable!(),
        }
        *tally.entry(state.map_or("resolved", |s| s.as_str())).or_default() += 1;
        if let Some(id) = &id {
            settle(store, id, state, false);
            assert!(state_after_kill(&path, id).is_none(), "{id} is settled");
        }
        // Interrupted calls are declined here: a run happens once, or never if it was cut short
        // before the tool's effect.
        let expected = if matches!(state, Some(CallState::Interrupted(_))) { ran } else { 1 };
        assert_eq!(runs(&effects), expected, "round {round}");
    }
    eprintln!("serve --stdio, 30 kills: {tally:?}");
}

/// This suite's tests, named `SUITE::TEST`.
pub fn trials(suite: &str) -> Vec<libtest_mimic::Trial> {
    child_cli::trials(
        suite,
        &[
            ("no_pending_call_is_lost_across_100_kills", no_pending_call_is_lost_across_100_kills),
            (
                "call_approve_killed_30_times_never_runs_a_call_twice",
                call_approve_killed_30_times_never_runs_a_call_twice,
            ),
            (
                "serve_with_a_waiting_call_killed_30_times_never_runs_it_twice",
                serve_with_a_waiting_call_killed_30_times_never_runs_it_twice,
            ),
        ],
    )
}
