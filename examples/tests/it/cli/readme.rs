//! Every command the README shows runs: each line of its `sh` blocks, with the example binary
//! for `cargo run -p examples --bin toolsmith --`, through `sh` (so its comments and
//! redirections are the shell's). `serve --http` runs until it announces its address on standard error (on a port
//! of its own: `:0` for the README's); the test command is CI's own `test` stage.

use std::io::{BufRead, BufReader};
use std::process::{Command, Stdio};

const CARGO_RUN: &str = "cargo run -p examples --bin toolsmith --";

/// The command lines of the README's `sh` blocks (continuation lines joined).
fn readme_commands() -> Vec<String> {
    let readme = include_str!("../../../../README.md");
    let mut commands = Vec::new();
    let mut in_sh = false;
    let mut pending = String::new();
    for line in readme.lines() {
        let fence = line.trim_start().starts_with("```");
        if fence {
            in_sh = !in_sh && line.trim() == "```sh";
            continue;
        }
        let text = line.trim();
        if !in_sh || text.is_empty() || (text.starts_with('#') && pending.is_empty()) {
            continue;
        }
        match text.strip_suffix('\\') {
            Some(head) => pending.push_str(head),
            None => {
                pending.push_str(text);
                commands.push(std::mem::take(&mut pending));
            }
        }
    }
    commands
}

#[test]
fn every_readme_command_runs() {
    let commands = readme_commands();
    assert!(commands.len() >= 8, "the README's commands: {commands:?}");
    let data = tempfile::tempdir().unwrap();
    let binary = env!("CARGO_BIN_EXE_toolsmith");
    let mut ran = 0;
    for command in &commands {
        if command.contains("cargo test --workspace") {
            // The README's test command is CI's `test` stage.
            let ci = include_str!("../../../../.ci/run");
            assert!(ci.contains("cargo test --workspace 2>&1"), ".ci/run runs the README's test command");
            continue;
        }
        assert!(command.starts_with(CARGO_RUN), "a README command CI does not run: {command}");
        let line = command.replacen(CARGO_RUN, &format!("'{binary}'"), 1);
        if line.contains(" serve --http ") {
            let line = line.replace("127.0.0.1:8931", "127.0.0.1:0");
            let mut child = Command::new("sh")
                .args(["-c", &format!("exec {line}")])
                .env("TOOLSMITH_DATA_DIR", data.path())
                .stdout(Stdio::null())
                .stderr(Stdio::piped())
                .spawn()
                .unwrap();
            let mut banner = String::new();
            BufReader::new(child.stderr.take().unwrap()).read_line(&mut banner).unwrap();
            let _ = child.kill();
            let _ = child.wait();
            assert!(banner.starts_with("serving MCP on http://127.0.0.1:"), "{command}: {banner}");
        } else {
            let out = Command::new("sh")
                .args(["-c", &line])
                .env("TOOLSMITH_DATA_DIR", data.path())
                .output()
                .unwrap();
            assert!(
                out.status.success(),
                "{command} failed: {}{}",
                String::from_utf8_lossy(&out.stdout),
                String::from_utf8_lossy(&out.stderr)
            );
        }
        ran += 1;
    }
    assert!(ran >= 8, "ran {ran} commands");
}
