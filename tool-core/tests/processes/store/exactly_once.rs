//! Exactly once across a crash: a `toolsmith call ID --approve` process SIGKILLed while its tool
//! runs leaves the call *interrupted* (listed with its tool, owner and start), never `running`
//! with a dead owner and never run again silently. Running it again is an explicit decision
//! (`--rerun`, `Runtime::approve_rerun`), automatic only for a tool declared idempotent.
//!
//! The `toolsmith` processes are this test binary run as the command line
//! (`support/child_cli.rs`), over a real SQLite file.

use crate::support::child_cli;

use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use tool_core::prelude::*;
use tool_core::runtime::backend::{CallState, StoredCall};
use tool_core::runtime::{Outcome, ResumeOptions, Runtime, RuntimeError, SqliteStore, StoreError};

/// Appends a line to `path` (the effect counted), then waits for `release` to exist (never, in
/// these tests: the process is killed while it waits)
#[tool(id = "once-effect", require_approval)]
async fn effect(
    /// The file that counts runs
    path: String,
    /// The file whose existence lets the tool finish
    release: String,
) -> Result<String, ToolError> {
    run_effect(&path, &release).await
}

/// The same effect, declared idempotent
#[tool(id = "once-idempotent", require_approval, mcp(idempotent_hint = true))]
async fn idempotent(
    /// The file that counts runs
    path: String,
    /// The file whose existence lets the tool finish
    release: String,
) -> Result<String, ToolError> {
    run_effect(&path, &release).await
}

/// The same effect over a receipt (`idempotent = "recover"`): a run told that an earlier run
/// was interrupted answers `found` without having the effect again
#[tool(id = "once-receipt", require_approval, idempotent = "recover")]
async fn receipted(
    /// The file that counts runs
    path: String,
    /// The file whose existence lets the tool finish
    release: String,
    #[ctx] cx: ToolContext,
) -> Result<String, ToolError> {
    if cx.idempotency_key().after_interruption() {
        return Ok("found".into());
    }
    run_effect(&path, &release).await
}

/// What the suspended tool asks.
#[derive(Debug, Serialize, Deserialize, JsonSchema)]
pub struct Question {
    /// The question.
    pub question: String,
}

/// The answer it resumes with.
#[derive(Debug, Serialize, Deserialize, JsonSchema)]
pub struct Go {
    /// Whether to go on.
    pub go: bool,
}

/// Suspends until told to go, then has the effect
#[tool(id = "once-resume", suspend = Question, resume = Go)]
async fn resumable(
    /// The file that counts runs
    path: String,
    /// The file whose existence lets the tool finish
    release: String,
    #[ctx] cx: ToolContext<RequestContext, Question, Go>,
) -> Result<String, ToolError> {
    match cx.resume_data()? {
        Some(_) => run_effect(&path, &release).await,
        None => Err(cx.suspend(Question { question: "go?".into() })),
    }
}

async fn run_effect(path: &str, release: &str) -> Result<String, ToolError> {
    use std::io::Write;
    let mut file = std::fs::OpenOptions::new()
        .create(true)
        .append(true)
        .open(path)
        .map_err(|e| ToolError::new(e.to_string()))?;
    file.write_all(b"ran\n")
        .and_then(|()| file.sync_all())
        .map_err(|e| ToolError::new(e.to_string()))?;
    while !Path::new(release).exists() {
        tokio::time::sleep(Duration::from_millis(5)).await;
    }
    Ok("done".into())
}

struct Scene {
    _dir: tempfile::TempDir,
    store: PathBuf,
    effects: PathBuf,
    release: PathBuf,
}

impl Scene {
    fn new() -> Scene {
        let dir = tempfile::tempdir().unwrap();
        Scene {
            store: dir.path().join("pending.sqlite3"),
            effects: dir.path().join("effects"),
            release: dir.path().join("release"),
            _dir: dir,
        }
    }

    fn runtime(&self) -> Runtime {
        Runtime::builder(Registry::global())
            .store(SqliteStore::open(&self.store).unwrap())
            .build()
    }

    fn runs(&self) -> usize {
        std::fs::read_to_string(&self.effects).map_or(0, |s| s.lines().count())
    }

    fn store(&self) -> &str {
        self.store.to_str().unwrap()
    }

    /// A call of `tool` waiting for approval, made in this process.
    fn waiting_call(&self, tool: &str, id: &str) {
        let args = json!({"path": self.effects, "release": self.release});
        let rt = tokio::runtime::Runtime::new().unwrap();
        let run = rt.block_on(async { self.runtime().call(tool, args, CallOptions::default().id(id)).finish().await });
        assert!(matches!(run.outcome, Outcome::AwaitingApproval(_)), "{:?}", run.outcome);
    }

    /// `toolsmith call ID --approve` in a child, SIGKILLed once its tool has had its effect.
    /// Returns the child's pid.
    fn approve_and_kill_mid_run(&self, id: &str) -> u32 {
        self.kill_mid_run(&["--store", self.store(), "call", id, "--approve"])
    }

    /// `toolsmith ARGS` in a child, SIGKILLed once its tool has had its effect; its pid.
    fn kill_mid_run(&self, args: &[&str]) -> u32 {
        let before = self.runs();
        let mut child = child_cli::spawn(args);
        let started = Instant::now();
        while self.runs() == before {
            assert!(
                started.elapsed() < Duration::from_secs(10),
                "the approved tool did not run within 10 s"
            );
            assert!(child.try_wait().unwrap().is_none(), "the child ended before its tool ran");
            std::thread::sleep(Duration::from_millis(2));
        }
        let pid = child.id();
        child.kill().unwrap(); // SIGKILL
        child.wait().unwrap();
        pid
    }

    fn state(&self, id: &str) -> Option<CallState> {
        let rt = tokio::runtime::Builder::new_current_thread().enable_all().build().unwrap();
        let entries = rt.block_on(self.runtime().pending_entries()).unwrap();
        entries.into_iter().find_map(|e| match e {
            StoredCall::Call { call, state } if call.tool_call_id == id => Some(state),
            _ => None,
        })
    }
}

fn a_call_killed_mid_run_is_interrupted_and_runs_again_only_on_purpose() {
    let s = Scene::new();
    s.waiting_call("once-effect", "c1");
    let pid = s.approve_and_kill_mid_run("c1");
    assert_eq!(s.runs(), 1);

    // Listed as interrupted, with what is known: tool, owner, start.
    let Some(CallState::Interrupted(claim)) = s.state("c1") else {
        panic!("{:?}", s.state("c1"))
    };
    assert_eq!(claim.owner_pid, Some(pid));
    assert!(claim.claimed_at_ms.is_some());
    let listed = child_cli::run(&["--store", s.store(), "pending", "--json"]);
    assert!(listed.ok, "{}", listed.stderr);
    let listed: Value = serde_json::from_str(&listed.stdout).unwrap();
    assert_eq!(listed[0]["tool_call_id"], "c1");
    assert_eq!(listed[0]["state"], "interrupted");
    assert_eq!(listed[0]["tool_name"], "once-effect");
    assert_eq!(listed[0]["owner_pid"], json!(pid));
    let table = child_cli::run(&["--store", s.store(), "pending"]);
    assert!(
        table.stdout.contains("interrupted") && table.stdout.contains(&format!("process {pid}")),
        "{}",
        table.stdout
    );

    // A second plain approval is refused, in another process and in this one.
    let again = child_cli::run(&["--store", s.store(), "call", "c1", "--approve"]);
    assert!(!again.ok, "{}", again.stdout);
    assert!(
        again.stderr.contains("interrupted") && again.stderr.contains("--rerun"),
        "{}",
        again.stderr
    );
    let rt = tokio::runtime::Runtime::new().unwrap();
    let refused = rt
        .block_on(s.runtime().approve("c1", ResumeOptions::default()))
        .map(drop)
        .unwrap_err();
    assert!(
        matches!(&refused, RuntimeError::Store(StoreError::Interrupted(i)) if i.tool_name == "once-effect"),
        "{refused}"
    );
    assert_eq!(s.runs(), 1, "nothing ran again");
    assert!(
        matches!(s.state("c1"), Some(CallState::Interrupted(_))),
        "refusing keeps it interrupted"
    );

    // The explicit decision runs it once more.
    std::fs::write(&s.release, b"").unwrap();
    let rerun = child_cli::run(&["--store", s.store(), "call", "c1", "--approve", "--rerun"]);
    assert!(rerun.ok, "{}", rerun.stderr);
    assert_eq!(rerun.stdout.trim(), "\"done\"");
    assert!(
        rerun.stderr.contains("was interrupted") && rerun.stderr.contains("--rerun"),
        "the rerun is told: {}",
        rerun.stderr
    );
    assert_eq!(s.runs(), 2);
    assert_eq!(s.state("c1"), None, "resolved");
}

fn an_interrupted_call_can_be_declined_and_rerun_through_the_runtime() {
    let s = Scene::new();
    for id in ["d1", "d2"] {
        s.waiting_call("once-effect", id);
        s.approve_and_kill_mid_run(id);
    }
    assert_eq!(s.runs(), 2);
    let rt = tokio::runtime::Runtime::new().unwrap();
    let runtime = s.runtime();
    let declined = rt.block_on(async { runtime.decline("d1", "it already ran").await.unwrap().finish().await });
    assert!(matches!(declined.outcome, Outcome::Declined { .. }), "{:?}", declined.outcome);
    std::fs::write(&s.release, b"").unwrap();
    let rerun = rt.block_on(async {
        runtime
            .approve("d2", ResumeOptions::default().rerun())
            .await
            .unwrap()
            .finish()
            .await
    });
    assert!(matches!(rerun.outcome, Outcome::Done(_)), "{:?}", rerun.outcome);
    assert_eq!(s.runs(), 3, "the decline ran nothing, the rerun ran once");
    assert!(rt.block_on(runtime.pending_entries()).unwrap().is_empty());
}

/// `toolsmith call ID --approve --rerun` keeps its receipts in the store it opens (not in its
/// own memory): the rerun of a call whose process died after its effect is told so.
fn a_rerun_through_the_command_line_finds_the_receipt_of_the_killed_run() {
    let s = Scene::new();
    s.waiting_call("once-receipt", "r1");
    s.approve_and_kill_mid_run("r1");
    assert_eq!(s.runs(), 1);
    std::fs::write(&s.release, b"").unwrap();
    let rerun = child_cli::run(&["--store", s.store(), "call", "r1", "--approve", "--rerun"]);
    assert!(rerun.ok, "{}", rerun.stderr);
    assert_eq!(rerun.stdout.trim(), "\"found\"", "the rerun was told: {}", rerun.stderr);
    assert_eq!(s.runs(), 1, "the effect happened once");
    assert_eq!(s.state("r1"), None, "resolved");
}

fn an_idempotent_tool_is_run_again_on_its_own() {
    let s = Scene::new();
    s.waiting_call("once-idempotent", "i1");
    s.approve_and_kill_mid_run("i1");
    assert!(matches!(s.state("i1"), Some(CallState::Interrupted(_))));
    std::fs::write(&s.release, b"").unwrap();
    let again = child_cli::run(&["--store", s.store(), "call", "i1", "--approve"]);
    assert!(again.ok, "{}", again.stderr);
    assert_eq!(s.runs(), 2);
    assert_eq!(s.state("i1"), None);
}

fn a_resume_killed_mid_run_is_resumed_again_only_with_rerun() {
    let s = Scene::new();
    let args = json!({"path": s.effects, "release": s.release});
    let rt = tokio::runtime::Runtime::new().unwrap();
    let run = rt.block_on(async {
        s.runtime()
            .call("once-resume", args, CallOptions::default().id("r1"))
            .finish()
            .await
    });
    assert!(matches!(run.outcome, Outcome::Suspended(_)), "{:?}", run.outcome);
    let pid = s.kill_mid_run(&["--store", s.store(), "resume", "r1", r#"{"go": true}"#]);
    assert!(matches!(s.state("r1"), Some(CallState::Interrupted(c)) if c.owner_pid == Some(pid)));
    let again = child_cli::run(&["--store", s.store(), "resume", "r1", r#"{"go": true}"#]);
    assert!(!again.ok && again.stderr.contains("interrupted"), "{}", again.stderr);
    // Data the tool refuses is refused before the interrupted call is taken: it stays so.
    let bad = child_cli::run(&["--store", s.store(), "resume", "r1", r#"{"go": "yes"}"#, "--rerun"]);
    assert!(!bad.ok, "{}", bad.stdout);
    assert!(matches!(s.state("r1"), Some(CallState::Interrupted(_))), "{:?}", s.state("r1"));
    assert_eq!(s.runs(), 1);
    std::fs::write(&s.release, b"").unwrap();
    let rerun = child_cli::run(&["--store", s.store(), "resume", "r1", r#"{"go": true}"#, "--rerun"]);
    assert!(rerun.ok, "{}", rerun.stderr);
    assert!(rerun.stderr.contains("was interrupted"), "{}", rerun.stderr);
    assert_eq!(s.runs(), 2);
    assert_eq!(s.state("r1"), None);
}

/// `toolsmith call ID KEYED ARGS` with the decision key `key` in its environment.
fn keyed_cli(key: &str, args: &[&str]) -> child_cli::Ran {
    let out = child_cli::toolsmith(args).env("TOOLSMITH_DECISION_KEY", key).output().unwrap();
    child_cli::Ran::from(out)
}

fn decisions_by_signed_token_and_by_edit_through_the_command_line() {
    let s = Scene::new();
    std::fs::write(&s.release, "").unwrap();
    s.waiting_call("once-effect", "tok1");
    let key = "CANARY-decision-key-0123456789abcdef";
    let signed = keyed_cli(key, &["--store", s.store(), "call", "tok1", "--approve", "--sign", "60"]);
    assert!(signed.ok, "{}", signed.stderr);
    let token = signed.stdout.trim().to_owned();
    assert!(token.starts_with("tsd1."), "{token}");
    assert_eq!(s.runs(), 0, "signing decides nothing");

    let stranger = keyed_cli(
        "another-key-0123456789abcdef",
        &["--store", s.store(), "call", "tok1", "--token", &token],
    );
    assert!(!stranger.ok && stranger.stderr.contains("signature"), "{}", stranger.stderr);
    assert_eq!(s.runs(), 0);
    let decided = keyed_cli(key, &["--store", s.store(), "call", "tok1", "--token", &token]);
    assert!(decided.ok, "{}", decided.stderr);
    assert_eq!(s.runs(), 1);
    let again = keyed_cli(key, &["--store", s.store(), "call", "tok1", "--token", &token]);
    assert!(!again.ok, "a token decides once: {}", again.stdout);
    assert_eq!(s.runs(), 1);
    for ran in [&signed, &stranger, &decided, &again] {
        assert!(
            !ran.stdout.contains(key) && !ran.stderr.contains(key),
            "the key leaked: {} {}",
            ran.stdout,
            ran.stderr
        );
    }

    // An edit: the approver's arguments run (another effects file), never the model's.
    s.waiting_call("once-effect", "edit1");
    let other = s.effects.with_extension("edited");
    let edited = json!({"path": other, "release": s.release}).to_string();
    let bad = child_cli::run(&["--store", s.store(), "call", "edit1", "--edit", r#"{"path": 3}"#]);
    assert!(!bad.ok && bad.stderr.contains("path"), "{}", bad.stderr);
    let ran = child_cli::run(&["--store", s.store(), "call", "edit1", "--edit", &edited]);
    assert!(ran.ok, "{}", ran.stderr);
    assert_eq!(s.runs(), 1, "the original arguments did not run");
    assert_eq!(std::fs::read_to_string(&other).unwrap().lines().count(), 1);
}

/// This suite's tests, named `SUITE::TEST`.
pub fn trials(suite: &str) -> Vec<libtest_mimic::Trial> {
    child_cli::trials(
        suite,
        &[
            (
                "decisions_by_signed_token_and_by_edit_through_the_command_line",
                decisions_by_signed_token_and_by_edit_through_the_command_line,
            ),
            (
                "a_call_killed_mid_run_is_interrupted_and_runs_again_only_on_purpose",
                a_call_killed_mid_run_is_interrupted_and_runs_again_only_on_purpose,
            ),
            (
                "an_interrupted_call_can_be_declined_and_rerun_through_the_runtime",
                an_interrupted_call_can_be_declined_and_rerun_through_the_runtime,
            ),
            (
                "a_rerun_through_the_command_line_finds_the_receipt_of_the_killed_run",
                a_rerun_through_the_command_line_finds_the_receipt_of_the_killed_run,
            ),
            (
                "an_idempotent_tool_is_run_again_on_its_own",
                an_idempotent_tool_is_run_again_on_its_own,
            ),
            (
                "a_resume_killed_mid_run_is_resumed_again_only_with_rerun",
                a_resume_killed_mid_run_is_resumed_again_only_with_rerun,
            ),
        ],
    )
}
