//! Logging of the real `toolsmith` binary: `RUST_LOG` picks what is logged, `--log-format`
//! how, and logs go to standard error only (with `serve --stdio`, standard output carries
//! nothing but JSON-RPC).

use crate::support;

use std::io::Write;
use std::process::{Command, Output, Stdio};
use std::time::Duration;

use serde_json::Value;

/// How long a run may take before the test calls it hung.
const PATIENCE: Duration = Duration::from_secs(60);

fn toolsmith(args: &[&str], rust_log: Option<&str>, stdin: &str) -> Output {
    let data = tempfile::tempdir().unwrap();
    let mut command = Command::new(env!("CARGO_BIN_EXE_toolsmith"));
    command
        .env("TOOLSMITH_DATA_DIR", data.path())
        .env_remove("RUST_LOG")
        .args(args)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped());
    if let Some(filter) = rust_log {
        command.env("RUST_LOG", filter);
    }
    let mut child = command.spawn().expect("the toolsmith binary runs");
    let mut input = child.stdin.take().unwrap();
    input.write_all(stdin.as_bytes()).unwrap();
    drop(input);
    let (tx, rx) = std::sync::mpsc::channel();
    std::thread::spawn(move || {
        let _ = tx.send(child.wait_with_output());
    });
    rx.recv_timeout(PATIENCE).expect("toolsmith did not end in time").unwrap()
}

const FAILING: [&str; 3] = ["call", "convert-units", r#"{"value": 1, "from": "kg", "to": "m"}"#];

#[test]
fn a_failing_call_is_a_warn_line_on_stderr() {
    let run = toolsmith(&FAILING, Some("warn"), "");
    let stderr = String::from_utf8(run.stderr).unwrap();
    assert!(!run.status.success());
    let line = stderr
        .lines()
        .find(|l| l.contains("WARN") && l.contains("tool call failed"))
        .unwrap_or_else(|| panic!("no warn line for the failing call in: {stderr}"));
    assert!(line.contains("convert-units") && line.contains("execution"), "{line}");

    // Without RUST_LOG, a command other than serve only prints its own error.
    let quiet = toolsmith(&FAILING, None, "");
    let stderr = String::from_utf8(quiet.stderr).unwrap();
    assert!(!stderr.contains("WARN"), "{stderr}");
    assert!(stderr.contains("Cannot convert kg (Mass) to m (Length)"), "{stderr}");
}

#[test]
fn log_format_json_writes_json_lines() {
    let mut args = vec!["--log-format", "json"];
    args.extend(FAILING);
    let run = toolsmith(&args, Some("warn"), "");
    let stderr = String::from_utf8(run.stderr).unwrap();
    let warn = stderr
        .lines()
        .filter_map(|l| serde_json::from_str::<Value>(l).ok())
        .find(|v| v["level"] == "WARN")
        .unwrap_or_else(|| panic!("no JSON warn line in: {stderr}"));
    assert_eq!(warn["fields"]["message"], "tool call failed", "{warn}");
    assert_eq!(warn["fields"]["tool"], "convert-units", "{warn}");
    assert_eq!(warn["fields"]["kind"], "execution", "{warn}");
}

#[test]
fn serve_stdio_logs_to_stderr_and_never_to_stdout() {
    use std::io::{BufRead, BufReader, Read};

    let data = tempfile::tempdir().unwrap();
    let mut child = Command::new(env!("CARGO_BIN_EXE_toolsmith"))
        .env("TOOLSMITH_DATA_DIR", data.path())
        .env("RUST_LOG", "trace")
        .args(["serve", "--stdio"])
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("the toolsmith binary runs");
    let mut input = child.stdin.take().unwrap();
    let lines = [
        r#"{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"t","version":"1"}}}"#,
        r#"{"jsonrpc":"2.0","method":"notifications/initialized"}"#,
        "this is not json",
        r#"{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"convert-units","arguments":{"value":1,"from":"kg","to":"s3cr3t-unit"}}}"#,
    ];
    for line in lines {
        writeln!(input, "{line}").unwrap();
    }
    input.flush().unwrap();
    // Every stdout line until the call's answer, read on a thread (bounded by PATIENCE).
    let stdout = child.stdout.take().unwrap();
    let (tx, rx) = std::sync::mpsc::channel();
    std::thread::spawn(move || {
        for line in BufReader::new(stdout).lines() {
            let Ok(line) = line else { break };
            if tx.send(line).is_err() {
                break;
            }
        }
    });
    let mut out = Vec::new();
    while !out.iter().any(|l: &String| l.contains("\"id\":2")) {
        out.push(
            rx.recv_timeout(PATIENCE)
                .unwrap_or_else(|_| panic!("no answer to the call; stdout so far: {out:?}")),
        );
    }
    drop(input);
    let (done_tx, done_rx) = std::sync::mpsc::channel();
    let mut stderr = child.stderr.take().unwrap();
    std::thread::spawn(move || {
        let mut text = String::new();
        let _ = stderr.read_to_string(&mut text);
        let _ = done_tx.send((text, child.wait()));
    });
    let (stderr, status) = done_rx
        .recv_timeout(PATIENCE)
        .expect("serve --stdio did not end after its input closed");
    assert!(status.unwrap().success(), "{stderr}");
    out.extend(rx.try_iter());

    for line in &out {
        let v: Value = serde_json::from_str(line).unwrap_or_else(|e| panic!("stdout has a line that is not JSON ({e}): {line}"));
        assert_eq!(v["jsonrpc"], "2.0", "stdout has a line that is not JSON-RPC: {line}");
    }
    assert!(
        stderr
            .lines()
            .any(|l| l.contains("WARN") && l.contains("refused an MCP stdio message")),
        "the refused line was not logged: {stderr}"
    );
    assert!(
        stderr
            .lines()
            .any(|l| l.contains("WARN") && l.contains("tool call failed") && l.contains("convert-units")),
        "the failing call was not logged: {stderr}"
    );
    assert!(!stderr.contains("s3cr3t-unit"), "an argument value reached the log: {stderr}");
}

#[test]
fn serve_http_logs_refused_requests_with_their_reason() {
    use std::io::{BufRead, BufReader, Read};
    use std::net::TcpStream;

    let data = tempfile::tempdir().unwrap();
    let mut server = Command::new(env!("CARGO_BIN_EXE_toolsmith"))
        .env("TOOLSMITH_DATA_DIR", data.path())
        .env_remove("RUST_LOG")
        .args(["--log-format", "json", "serve", "--http", "127.0.0.1:0"])
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .expect("the toolsmith binary runs");
    let (tx, rx) = std::sync::mpsc::channel();
    let stderr = server.stderr.take().unwrap();
    std::thread::spawn(move || {
        for line in BufReader::new(stderr).lines() {
            let Ok(line) = line else { break };
            if tx.send(line).is_err() {
                break;
            }
        }
    });
    let banner = rx.recv_timeout(PATIENCE).expect("no banner");
    let addr = support::served_address(&banner);
    let status = |head: String| {
        let mut tcp = TcpStream::connect(&addr).unwrap();
        tcp.set_read_timeout(Some(PATIENCE)).unwrap();
        tcp.write_all(head.as_bytes()).unwrap();
        let mut answer = String::new();
        let _ = tcp.read_to_string(&mut answer);
        answer.split_whitespace().nth(1).unwrap_or_default().to_owned()
    };
    let body = r#"{"jsonrpc":"2.0","id":1,"method":"ping"}"#;
    let post = |host: &str, extra: &str| {
        format!(
            "POST /mcp HTTP/1.1\r\nHost: {host}\r\n{extra}Accept: application/json, text/event-stream\r\nContent-Type: application/json\r\nContent-Length: {}\r\nConnection: close\r\n\r\n{body}",
            body.len()
        )
    };
    assert_eq!(status(post(&addr, &format!("Host: {addr}\r\n"))), "400");
    assert_eq!(status(post("evil.example.com", "")), "403");

    // Without RUST_LOG, serve logs warnings: one JSON line per refusal, with its reason.
    let mut reasons = Vec::new();
    while reasons.len() < 2 {
        let line = rx
            .recv_timeout(PATIENCE)
            .unwrap_or_else(|_| panic!("refusals not logged; got {reasons:?}"));
        let v: Value = serde_json::from_str(&line).unwrap_or_else(|e| panic!("not a JSON log line ({e}): {line}"));
        if v["fields"]["message"] == "refused an MCP HTTP request" {
            assert_eq!(v["level"], "WARN", "{v}");
            reasons.push(v["fields"]["reason"].as_str().unwrap_or_default().to_owned());
        }
    }
    let _ = server.kill();
    let _ = server.wait();
    assert_eq!(reasons, ["duplicate header", "Host or Origin not allowed"]);
}

#[test]
fn a_standard_error_nobody_reads_does_not_stall_the_server() {
    use std::io::{BufRead, BufReader, Read};
    use std::net::TcpStream;

    let data = tempfile::tempdir().unwrap();
    let mut server = Command::new(env!("CARGO_BIN_EXE_toolsmith"))
        .env("TOOLSMITH_DATA_DIR", data.path())
        .env("RUST_LOG", "warn")
        .args(["serve", "--http", "127.0.0.1:0"])
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .expect("the toolsmith binary runs");
    // The banner, then standard error is left unread (kept open: writes to it would block).
    let mut stderr = BufReader::new(server.stderr.take().unwrap());
    let mut banner = String::new();
    stderr.read_line(&mut banner).unwrap();
    let addr = support::served_address(&banner);
    // Each refusal is a warn line of about 200 bytes: far more than a pipe holds (64 KiB).
    let body = "{not json";
    let request = format!(
        "POST /mcp HTTP/1.1\r\nHost: {addr}\r\nAccept: application/json, text/event-stream\r\nContent-Type: application/json\r\nContent-Length: {}\r\nConnection: close\r\n\r\n{body}",
        body.len()
    );
    let (tx, rx) = std::sync::mpsc::channel();
    std::thread::spawn(move || {
        for _ in 0..1500 {
            let mut tcp = TcpStream::connect(&addr).unwrap();
            tcp.set_read_timeout(Some(Duration::from_secs(10))).unwrap();
            tcp.write_all(request.as_bytes()).unwrap();
            let mut answer = String::new();
            let _ = tcp.read_to_string(&mut answer);
            if !answer.starts_with("HTTP/1.1 400") {
                let _ = tx.send(Err(answer));
                return;
            }
        }
        let _ = tx.send(Ok(()));
    });
    let outcome = rx.recv_timeout(PATIENCE);
    let _ = server.kill();
    let _ = server.wait();
    drop(stderr);
    match outcome {
        Ok(Ok(())) => {}
        Ok(Err(answer)) => panic!("a request was not answered 400: {answer:?}"),
        Err(_) => panic!("the server stalled while its standard error was not read"),
    }
}
