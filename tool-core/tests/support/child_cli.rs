//! This test binary as the `toolsmith` command line, in a child process of its own.
//!
//! A test file that includes this module has no libtest harness (`harness = false` in
//! `Cargo.toml`); its `main` is [`main`] with its tests. [`toolsmith`] starts the test binary
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

/// The test binary's `main`: in a child, the command line (see [`child_main`]) or `other_child`
/// (a child mode of the file's own, when it returns `true`); otherwise the tests.
pub fn main(tests: &[(&'static str, fn())], other_child: fn() -> bool) -> std::process::ExitCode {
    child_main();
    if other_child() {
        return std::process::ExitCode::SUCCESS;
    }
    let args = libtest_mimic::Arguments::from_args();
    let trials = tests
        .iter()
        .map(|&(name, test)| {
            libtest_mimic::Trial::test(name, move || {
                std::panic::catch_unwind(test).map_err(|panic| {
                    let text = panic
                        .downcast_ref::<String>()
                        .cloned()
                        .or_else(|| panic.downcast_ref::<&str>().map(|s| s.to_string()));
                    libtest_mimic::Failed::from(text.unwrap_or_else(|| "the test panicked".into()))
                })
            })
        })
        .collect();
    libtest_mimic::run(&args, trials).exit_code()
}

/// In the child: runs the command line given in [`CLI_ENV`] and exits with its code (0 or 1,
/// clap's 2). Outside a child it returns at once.
pub fn child_main() {
    let Ok(args) = std::env::var(CLI_ENV) else { return };
    let args: Vec<String> = serde_json::from_str(&args).expect("the child's arguments are a JSON array");
    let code = tool_core::cli::run_from(std::iter::once("toolsmith".to_owned()).chain(args));
    std::process::exit(if code == ExitCode::SUCCESS { 0 } else { 1 });
}

/// `toolsmith ARGS` as a child process (this test binary, see [`child_main`]).
pub fn toolsmith(args: &[&str]) -> Command {
    let mut command = Command::new(std::env::current_exe().expect("the test binary has a path"));
    command
        .env(CLI_ENV, serde_json::json!(args).to_string())
        .env_remove("TOOLSMITH_STORE_KEY")
        .stdin(Stdio::null());
    command
}

/// Starts `toolsmith ARGS` with its output piped.
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
        let logs = self.logs.lock().unwrap().clone();
        logs
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
