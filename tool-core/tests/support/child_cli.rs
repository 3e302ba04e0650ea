//! This test binary as the `toolsmith` command line, in a child process of its own.
//!
//! A test file that includes this module defines `#[test] fn toolsmith_child() {
//! child_cli::child_main() }`; [`toolsmith`] starts the test binary again, filtered to that
//! test, with the command line's arguments in [`CLI_ENV`]: the child then runs the real command
//! line (`tool_core::cli::run_from`) over the tools linked into the binary and exits with its
//! code. A child can be SIGKILLed anywhere, like a real `toolsmith` process.

#![allow(dead_code)]

use std::process::{Child, Command, ExitCode, Output, Stdio};

/// The environment variable that carries the child's command line (a JSON array).
pub const CLI_ENV: &str = "TOOLSMITH_TEST_CLI_ARGS";

/// In the child: runs the command line given in [`CLI_ENV`] and exits with its code (0 or 1,
/// clap's 2). Outside a child it returns at once.
pub fn child_main() {
    let Ok(args) = std::env::var(CLI_ENV) else { return };
    let args: Vec<String> = serde_json::from_str(&args).expect("the child's arguments are a JSON array");
    let code = tool_core::cli::run_from(std::iter::once("toolsmith".to_owned()).chain(args));
    std::process::exit(if code == ExitCode::SUCCESS { 0 } else { 1 });
}

/// `toolsmith ARGS` as a child process (this test binary, see [`child_main`]). More than one
/// test thread keeps the harness from printing the test's name before the command's output.
pub fn toolsmith(args: &[&str]) -> Command {
    let mut command = Command::new(std::env::current_exe().expect("the test binary has a path"));
    command
        .args(["--exact", "toolsmith_child", "--nocapture", "--test-threads=2"])
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

/// The command's own standard output: what follows the harness's `running 1 test` line.
pub fn own_output(raw: &str) -> String {
    match raw.find("running 1 test\n") {
        Some(at) => raw[at + "running 1 test\n".len()..].to_owned(),
        None => raw.to_owned(),
    }
}

impl From<Output> for Ran {
    fn from(out: Output) -> Ran {
        Ran {
            ok: out.status.success(),
            stdout: own_output(&String::from_utf8_lossy(&out.stdout)),
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
