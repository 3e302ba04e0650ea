//! What the command line says about itself: help grouped under headings with one-line short
//! help and examples at the end of each command's long help, shell completions, the man page,
//! hints naming the binary as it is run, and the guide's CLI reference generated from clap.

use std::process::Command;

use clap::CommandFactory;
use tool_providers::cli::ImportingCli;

use crate::support::{Run, toolsmith};

/// The `toolsmith` binary under another name, as a user's own binary is named: a symbolic link
/// (the name the process is run as), not a copy, whose file another test's child could still
/// hold open for writing when it runs ("text file busy").
fn renamed(name: &str) -> (tempfile::TempDir, std::path::PathBuf) {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join(name);
    std::os::unix::fs::symlink(env!("CARGO_BIN_EXE_toolsmith"), &path).unwrap();
    (dir, path)
}

fn run(program: &std::path::Path, data: &std::path::Path, args: &[&str]) -> Run {
    let out = Command::new(program).env("TOOLSMITH_DATA_DIR", data).args(args).output().unwrap();
    Run {
        code: out.status.code().expect("exited normally"),
        stdout: String::from_utf8(out.stdout).unwrap(),
        stderr: String::from_utf8(out.stderr).unwrap(),
    }
}

/// `PROGRAM serve --stdio`, asked by a client that declares no elicitation to call `write-file`
/// (which needs approval): the text of its answer.
fn served_approval_answer(program: &std::path::Path, data: &std::path::Path, context: &str) -> String {
    use std::io::{BufRead, BufReader, Write};
    let mut child = Command::new(program)
        .env("TOOLSMITH_DATA_DIR", data)
        .args(["serve", "--stdio", "--context", context])
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::null())
        .spawn()
        .unwrap();
    let mut stdin = child.stdin.take().unwrap();
    let mut lines = BufReader::new(child.stdout.take().unwrap()).lines();
    let mut send = |message: serde_json::Value| writeln!(stdin, "{message}").unwrap();
    let mut answer_to = |id: u64| loop {
        let line = lines.next().expect("the server answers").unwrap();
        let message: serde_json::Value = serde_json::from_str(&line).unwrap();
        if message["id"] == id {
            return message;
        }
    };
    send(serde_json::json!({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
        "protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": {"name": "help-test", "version": "1"}}}));
    answer_to(1);
    send(serde_json::json!({"jsonrpc": "2.0", "method": "notifications/initialized"}));
    send(serde_json::json!({"jsonrpc": "2.0", "id": 2, "method": "tools/call", "params": {
        "name": "write-file", "arguments": {"path": "b.txt", "content": "x", "overwrite": true}}}));
    let answer = answer_to(2);
    let _ = child.kill();
    let _ = child.wait();
    answer["result"]["content"][0]["text"].as_str().unwrap_or_default().to_owned()
}

/// Every command, depth first, with its path (`toolsmith store status`).
fn commands(command: &clap::Command, path: &str, out: &mut Vec<(String, clap::Command)>) {
    out.push((path.to_owned(), command.clone()));
    for sub in command.get_subcommands().filter(|s| s.get_name() != "help") {
        commands(sub, &format!("{path} {}", sub.get_name()), out);
    }
}

#[test]
fn serve_help_is_grouped_under_headings() {
    let help = toolsmith(&["serve", "--help"]);
    assert_eq!(help.code, 0, "{}", help.stderr);
    let headings = [
        "Server:",
        "Authorization:",
        "HTTP limits:",
        "Storage:",
        "TLS and deployment:",
        "Tool execution:",
        "Background tasks:",
        "MCP imports:",
        "Providers:",
        "Logging:",
    ];
    let at: Vec<usize> = headings
        .iter()
        .map(|h| {
            help.stdout
                .lines()
                .position(|l| l == *h)
                .unwrap_or_else(|| panic!("no `{h}` in:\n{}", help.stdout))
        })
        .collect();
    let mut sorted = at.clone();
    sorted.sort();
    assert_eq!(at, sorted, "the headings are in this order");
    // Each flag under the heading it belongs to.
    let section = |heading: &str| {
        let lines: Vec<&str> = help.stdout.lines().collect();
        let start = lines.iter().position(|l| *l == heading).unwrap();
        let end = lines[start + 1..]
            .iter()
            .position(|l| l.ends_with(':') && !l.starts_with(' '))
            .map_or(lines.len(), |e| start + 1 + e);
        lines[start..end].join("\n")
    };
    assert!(section("Server:").contains("--stateless"));
    assert!(section("HTTP limits:").contains("--caller-rate"));
    assert!(section("Authorization:").contains("--auth-issuer"));
    assert!(section("Storage:").contains("--store"));
    assert!(section("Providers:").contains("--provider-tools"));
    assert!(section("MCP imports:").contains("--import-mcp"));
    assert!(section("Logging:").contains("--log-format"));
    // The long help ends with examples.
    assert!(
        help.stdout.trim_end().contains("Examples:\n  toolsmith serve --stdio"),
        "{}",
        help.stdout
    );
}

#[test]
fn every_option_has_a_one_line_summary_and_every_command_examples() {
    let mut all = Vec::new();
    commands(&ImportingCli::command(), "toolsmith", &mut all);
    let mut long = Vec::new();
    let mut no_examples = Vec::new();
    for (path, command) in &all {
        for arg in command.get_arguments().filter(|a| !a.is_hide_set()) {
            let help = arg.get_help().map(|h| h.to_string()).unwrap_or_default();
            if help.is_empty() || help.contains('\n') || help.chars().count() > 90 {
                long.push(format!("{path} {}: {help:?}", arg.get_id()));
            }
        }
        let about = command.get_about().map(|a| a.to_string()).unwrap_or_default();
        if path != "toolsmith" && (about.is_empty() || about.contains('\n') || about.chars().count() > 90) {
            long.push(format!("{path}: {about:?}"));
        }
        let is_leaf_or_group = path != "toolsmith";
        let examples = command.get_after_long_help().map(|h| h.to_string()).unwrap_or_default();
        // A subcommand of a group shares the group's examples.
        let depth = path.split(' ').count();
        if is_leaf_or_group && depth == 2 && !(examples.starts_with("Examples:\n") && examples.contains("toolsmith ")) {
            no_examples.push(path.clone());
        }
    }
    assert!(
        long.is_empty(),
        "short help (or a command's summary) over one line of 90 characters:\n{}",
        long.join("\n")
    );
    assert!(no_examples.is_empty(), "commands without examples: {no_examples:?}");
}

#[test]
fn completions_and_the_man_page() {
    for (shell, mark) in [
        ("bash", "complete -F"),
        ("zsh", "#compdef toolsmith"),
        ("fish", "complete -c toolsmith"),
    ] {
        let script = toolsmith(&["completions", shell]);
        assert_eq!(script.code, 0, "{shell}: {}", script.stderr);
        assert!(
            script.stdout.contains(mark),
            "{shell}: {}",
            &script.stdout[..script.stdout.len().min(300)]
        );
        // Every command and the options extending command lines add are completed.
        for word in ["serve", "pending", "import-mcp", "provider-tools", "caller-rate"] {
            assert!(script.stdout.contains(word), "{shell} completes {word}");
        }
    }
    assert_ne!(toolsmith(&["completions", "tcsh"]).code, 0);
    let man = toolsmith(&["man"]);
    assert_eq!(man.code, 0, "{}", man.stderr);
    assert!(
        man.stdout.contains(".TH toolsmith 1"),
        "{}",
        &man.stdout[..man.stdout.len().min(300)]
    );
    assert!(man.stdout.contains("serve") && man.stdout.contains("\\-\\-store"));
}

#[test]
fn hints_name_the_binary_as_it_is_run() {
    let (dir, agent) = renamed("my-agent");
    let sandbox = tempfile::tempdir().unwrap();
    let context = serde_json::json!({"root": sandbox.path()}).to_string();
    std::fs::write(sandbox.path().join("a.txt"), "old").unwrap();
    let waiting = run(
        &agent,
        dir.path(),
        &[
            "call",
            "write-file",
            r#"{"path": "a.txt", "content": "x", "overwrite": true}"#,
            "--context",
            &context,
        ],
    );
    assert_eq!(waiting.code, 0, "{}", waiting.stderr);
    assert!(
        waiting.stderr.contains("waiting for approval: `my-agent call call_") && waiting.stderr.contains("--approve` runs it"),
        "{}",
        waiting.stderr
    );
    assert!(!waiting.stderr.contains("toolsmith"), "{}", waiting.stderr);
    let unknown = run(&agent, dir.path(), &["check", "no-such-tool"]);
    assert!(unknown.stderr.contains("(see `my-agent list`)"), "{}", unknown.stderr);
    let completions = run(&agent, dir.path(), &["completions", "fish"]);
    assert!(
        completions.stdout.contains("complete -c my-agent"),
        "{}",
        &completions.stdout[..200]
    );
    // So does what it serves: an MCP client that cannot be asked is told which command decides.
    let answer = served_approval_answer(&agent, dir.path(), &context);
    assert!(
        answer.contains("`my-agent call call_") || answer.contains("`my-agent call mcp_"),
        "{answer}"
    );
    assert!(answer.contains("--approve`") && !answer.contains("`toolsmith "), "{answer}");
    // The same binary under its own name says `toolsmith`.
    let (dir, own) = renamed("toolsmith");
    let unknown = run(&own, dir.path(), &["check", "no-such-tool"]);
    assert!(unknown.stderr.contains("(see `toolsmith list`)"), "{}", unknown.stderr);
}

/// The guide's command-line reference is generated from clap: a change to an option that is
/// not carried into `docs/src/reference/cli.md` fails here. `TOOLSMITH_BLESS=1` rewrites it.
#[test]
fn the_guide_reference_is_generated_from_the_command_line() {
    let path = concat!(env!("CARGO_MANIFEST_DIR"), "/../docs/src/reference/cli.md");
    let generated = format!(
        "# Command line\n\n<!-- Generated from clap by `TOOLSMITH_BLESS=1 cargo test -p examples --test it cli::help`; do not edit. -->\n\n\
         The `toolsmith` command line of the repository's example binary: tool-core's commands\n\
         (`tool_core::cli::run()`, which a binary of your own gets), plus the MCP imports and\n\
         providers of `tool_providers::cli::run()`. A binary of your own is named as you run it.\n\n{}",
        tool_core::cli::reference(&ImportingCli::command())
    );
    if std::env::var_os("TOOLSMITH_BLESS").is_some() {
        std::fs::write(path, &generated).unwrap();
    }
    let committed = std::fs::read_to_string(path).unwrap_or_default();
    assert!(
        committed == generated,
        "docs/src/reference/cli.md differs from the command line; regenerate it with \
         `TOOLSMITH_BLESS=1 cargo test -p examples --test it cli::help`"
    );
}
