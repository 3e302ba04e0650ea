//! What the tests of the `toolsmith` binary share: running it to its end with its store in a
//! directory of the test process, and reading the address `serve --http` announces.

#![allow(dead_code)]

use std::process::Command;

use serde_json::Value;

/// A finished run of the binary.
pub struct Run {
    pub code: i32,
    pub stdout: String,
    pub stderr: String,
}

impl Run {
    /// Standard output as JSON (the run must have succeeded).
    pub fn json(&self) -> Value {
        assert_eq!(self.code, 0, "the command failed: {}", self.stderr);
        serde_json::from_str(&self.stdout).unwrap_or_else(|e| panic!("stdout is not JSON ({e}): {}", self.stdout))
    }
}

/// Runs the binary; its default pending-call store lives in a directory of this test process,
/// never in the user's data directory.
pub fn toolsmith(args: &[&str]) -> Run {
    static DATA: std::sync::OnceLock<tempfile::TempDir> = std::sync::OnceLock::new();
    let data = DATA.get_or_init(|| tempfile::tempdir().unwrap());
    let out = Command::new(env!("CARGO_BIN_EXE_toolsmith"))
        .env("TOOLSMITH_DATA_DIR", data.path())
        .args(args)
        .output()
        .expect("the toolsmith binary runs");
    Run {
        code: out.status.code().expect("exited normally"),
        stdout: String::from_utf8(out.stdout).unwrap(),
        stderr: String::from_utf8(out.stderr).unwrap(),
    }
}

/// `HOST:PORT` from `serve --http`'s banner (`serving MCP on http://HOST:PORT/mcp`).
pub fn served_address(banner: &str) -> String {
    banner
        .trim()
        .strip_prefix("serving MCP on http://")
        .and_then(|rest| rest.strip_suffix("/mcp"))
        .unwrap_or_else(|| panic!("no address in {banner:?}"))
        .to_owned()
}
