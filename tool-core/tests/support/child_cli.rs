//! This test binary as the `toolsmith` command line, in a child process of its own.
//!
//! The `processes` test binary has no libtest harness (`harness = false` in `Cargo.toml`); its
//! `main` calls [`child_main`] first, then runs every suite's [`trials`]. [`toolsmith`] starts the test binary
//! again with the command line's arguments in [`CLI_ENV`]: `main` then runs the real command
//! line (`tool_core::cli::run_from`) over the tools linked into the binary and exits with its
//! code, and no test runs. A child can be SIGKILLed anywhere, like a real `toolsmith` process.
//! Otherwise the tests run under `libtest-mimic` (the usual filters and flags), so no test
//! exists only to return at once in the parent.

#![allow(dead_code)]

use std::io::{BufRead, BufReader};
use std::process::{Child, Command, ExitCode, Output, Stdio};
use std::sync::{Arc, Mutex};
use std::time::Duration;

/// The environment variable that carries the child's command line (a JSON array).
pub const CLI_ENV: &str = "TOOLSMITH_TEST_CLI_ARGS";

/// The tests of one suite as `libtest-mimic` trials named `SUITE::TEST`; a panic fails the
/// trial with its message.
pub fn trials(suite: &str, tests: &[(&'static str, fn())]) -> Vec<libtest_mimic::Trial> {
    trials_under(suite, tests, None)
}

/// [`trials`] that run one at a time, each holding `turn` (the others of the binary run beside
/// them as usual).
pub fn trials_one_at_a_time(suite: &str, tests: &[(&'static str, fn())], turn: &'static Mutex<()>) -> Vec<libtest_mimic::Trial> {
    trials_under(suite, tests, Some(turn))
}

fn trials_under(suite: &str, tests: &[(&'static str, fn())], turn: Option<&'static Mutex<()>>) -> Vec<libtest_mimic::Trial> {
    tests
        .iter()
        .map(|&(name, test)| {
            libtest_mimic::Trial::test(format!("{suite}::{name}"), move || {
                let _turn = turn.map(|t| t.lock().unwrap_or_else(|poisoned| poisoned.into_inner()));
                run_test(test)
            })
        })
        .collect()
}

/// Runs one test body, its panic turned into the trial's failure.
fn run_test(test: fn()) -> Result<(), libtest_mimic::Failed> {
    std::panic::catch_unwind(test).map_err(|panic| {
        let text = panic
            .downcast_ref::<String>()
            .cloned()
            .or_else(|| panic.downcast_ref::<&str>().map(|s| s.to_string()));
        libtest_mimic::Failed::from(text.unwrap_or_else(|| "the test panicked".into()))
    })
}

/// In the child: runs the command line given in [`CLI_ENV`] over the tools of the suite named
/// in [`CLI_SUITE_ENV`], and exits with its code (0 or 1, clap's 2). Outside a child it returns
/// at once.
pub fn child_main() {
    let Ok(args) = std::env::var(CLI_ENV) else { return };
    let args: Vec<String> = serde_json::from_str(&args).expect("the child's arguments are a JSON array");
    let argv = std::iter::once("toolsmith".to_owned()).chain(args);
    let code = match std::env::var(CLI_SUITE_ENV) {
        Ok(suite) => {
            tool_core::cli::run_parsed::<tool_core::cli::Cli, _, _, _, _, _>(argv, move |cli: tool_core::cli::Cli, mut out| async move {
                tool_core::cli::execute(cli, suite_registry(&suite), &mut out).await
            })
        }
        Err(_) => tool_core::cli::run_from(argv),
    };
    std::process::exit(if code == ExitCode::SUCCESS { 0 } else { 1 });
}

/// The environment variable naming the module whose tools a child's command line serves.
pub const CLI_SUITE_ENV: &str = "TOOLSMITH_TEST_CLI_SUITE";

/// The `#[tool]`s defined in `suite` (a module path, `processes::mcp::oauth`) or below it: the
/// binary links every suite's tools, and each suite's command line sees its own, as it did
/// when each suite was a binary of its own.
fn suite_registry(suite: &str) -> tool_core::Registry {
    let tools = tool_core::Registry::global().tools().into_iter().filter(|tool| {
        let module = tool.spec().source.module_path.as_str();
        module
            .strip_prefix(suite)
            .is_some_and(|rest| rest.is_empty() || rest.starts_with("::"))
    });
    tool_core::Registry::try_from_tools(tools.collect::<Vec<_>>()).expect("a suite's tools have unique ids")
}

/// The suite a test file belongs to, from its path: `…/tests/processes/mcp/oauth.rs` (or a
/// file below it, `…/store/suite/tasks.rs`) is `processes::mcp::oauth`.
fn suite_of(file: &str) -> String {
    let within = file.rsplit_once("tests/processes/").map_or(file, |(_, rest)| rest);
    let parts: Vec<&str> = within.trim_end_matches(".rs").split('/').take(2).collect();
    format!("processes::{}", parts.join("::"))
}

/// `toolsmith ARGS` as a child process (this test binary, see [`child_main`]), over the tools of
/// the suite whose file calls it.
#[track_caller]
pub fn toolsmith(args: &[&str]) -> Command {
    let suite = suite_of(std::panic::Location::caller().file());
    let mut command = Command::new(std::env::current_exe().expect("the test binary has a path"));
    command
        .env(CLI_ENV, serde_json::json!(args).to_string())
        .env(CLI_SUITE_ENV, suite)
        .env_remove("TOOLSMITH_STORE_KEY")
        .env_remove("TOOLSMITH_STORE")
        .env_remove("TOOLSMITH_PINS")
        .stdin(Stdio::null());
    command
}

/// Starts `toolsmith ARGS` with its output piped.
#[track_caller]
pub fn spawn(args: &[&str]) -> Child {
    let mut command = toolsmith(args);
    command.stdout(Stdio::piped()).stderr(Stdio::piped());
    command.spawn().expect("the child starts")
}

/// What a finished command printed, the test harness's header taken off.
pub struct Ran {
    pub ok: bool,
    pub stdout: String,
    pub stderr: String,
}

impl From<Output> for Ran {
    fn from(out: Output) -> Ran {
        Ran {
            ok: out.status.success(),
            stdout: String::from_utf8_lossy(&out.stdout).into_owned(),
            stderr: String::from_utf8_lossy(&out.stderr).into_owned(),
        }
    }
}

/// Runs `toolsmith ARGS` to its end (bounded: a child still running after 30 s is killed and
/// the test fails).
#[track_caller]
pub fn run(args: &[&str]) -> Ran {
    let mut child = spawn(args);
    let started = std::time::Instant::now();
    loop {
        if child.try_wait().expect("the child can be waited for").is_some() {
            return child.wait_with_output().expect("the child's output").into();
        }
        if started.elapsed() > std::time::Duration::from_secs(30) {
            let _ = child.kill();
            panic!("`toolsmith {}` did not end within 30 s", args.join(" "));
        }
        std::thread::sleep(std::time::Duration::from_millis(2));
    }
}

/// A `toolsmith serve --http` child (see [`toolsmith`]), once it has printed its address;
/// killed when dropped. What it writes to standard error is kept in `logs`, line by line, by a
/// thread that reads until the pipe closes.
pub struct ServedChild {
    pub child: Child,
    /// The `http(s)://ADDR/mcp` it printed.
    pub url: String,
    pub logs: Arc<Mutex<String>>,
}

impl ServedChild {
    /// Spawns `command` with its standard error piped and waits for its "serving MCP on URL"
    /// line (the test fails if it ends before).
    pub fn start(command: &mut Command) -> ServedChild {
        let mut child = command.stderr(Stdio::piped()).spawn().expect("the server starts");
        let mut lines = BufReader::new(child.stderr.take().expect("a piped standard error"));
        let logs = Arc::new(Mutex::new(String::new()));
        let url = loop {
            let mut line = String::new();
            let read = lines.read_line(&mut line).expect("the server's standard error");
            assert!(read > 0, "the server ended before it served:\n{}", logs.lock().unwrap());
            logs.lock().unwrap().push_str(&line);
            if let Some(url) = line.split("serving MCP on ").nth(1) {
                break url.trim().to_owned();
            }
        };
        let kept = logs.clone();
        std::thread::spawn(move || {
            let mut line = String::new();
            while lines.read_line(&mut line).is_ok_and(|n| n > 0) {
                kept.lock().unwrap().push_str(&line);
                line.clear();
            }
        });
        ServedChild { child, url, logs }
    }

    /// Kills the child and returns all it wrote to standard error (waiting at most `patience`
    /// for the reader to reach the closed pipe).
    pub fn stop(&mut self, patience: Duration) -> String {
        let _ = self.child.kill();
        let _ = self.child.wait();
        let deadline = std::time::Instant::now() + patience;
        while Arc::strong_count(&self.logs) > 1 && std::time::Instant::now() < deadline {
            std::thread::sleep(Duration::from_millis(10));
        }

        self.logs.lock().unwrap().clone()
    }
}

impl Drop for ServedChild {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// Runs an async test body on a two-worker runtime of its own.
pub fn block_on(test: impl std::future::Future<Output = ()>) {
    tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .expect("a runtime")
        .block_on(test)
}
