//! Nothing pending is lost: a process that suspends and resumes calls in a loop is SIGKILLed at
//! random moments, 100 times; after each kill a new process resumes every call the dead one
//! announced as suspended (and had not resolved) and gets its result.
//!
//! The child is this test binary itself, started again with `KILL_CHILD_STORE` set: the test
//! `child` then runs the loop instead of returning.

use std::io::{BufRead, BufReader};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use tool_core::prelude::*;
use tool_core::runtime::{RunEventKind as K, Runtime, RuntimeError, SqliteStore};

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

/// Suspends until told what to add
#[tool(id = "kill-ask", suspend = Ask, resume = Reply)]
async fn ask(
    /// The number
    n: u64,
    #[ctx] cx: ToolContext,
) -> Result<u64, ToolError> {
    match cx.resume_data::<Reply>()? {
        Some(r) => Ok(n + r.add),
        None => Err(cx.suspend(Ask { n })),
    }
}

fn runtime(path: &std::path::Path) -> Runtime {
    Runtime::builder(Registry::from_iter([ask::tool()]))
        .store(SqliteStore::open(path).expect("the store opens"))
        .build()
}

/// The child's loop: suspend call `i`, announce it; resume call `i - 1`, announce its result.
#[test]
fn child() {
    let Ok(path) = std::env::var("KILL_CHILD_STORE") else { return };
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
                let events = runtime.resume(&prev, json!({"add": 1000})).await.unwrap().collect().await;
                assert!(matches!(&events.last().unwrap().raw.kind, K::ToolResult { output } if output.value() == json!(i - 1 + 1000)));
                println!("RESOLVED {prev}");
            }
        }
    });
}

/// A small deterministic generator (no timing in assertions; the randomness only spreads the
/// kill moments).
fn next(seed: &mut u64) -> u64 {
    *seed ^= *seed << 13;
    *seed ^= *seed >> 7;
    *seed ^= *seed << 17;
    *seed
}

#[cfg(unix)]
#[test]
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
            .args(["--exact", "child", "--nocapture", "--test-threads=1"])
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
                let stream = match runtime.resume(id, json!({"add": 1})).await {
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
            for call in runtime.pending().unwrap() {
                let events = runtime.resume(&call.tool_call_id, json!({"add": 1})).await.unwrap().collect().await;
                assert!(matches!(events.last().unwrap().raw.kind, K::ToolResult { .. }));
            }
            assert!(runtime.pending().unwrap().is_empty());
        });
    }
    assert_eq!(kills, 100);
    assert!(
        resumed_after_kill >= 100,
        "every round left at least its last announced call: {resumed_after_kill}"
    );
}
