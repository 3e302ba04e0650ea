//! `toolsmith serve --http` limit flags reach the server: the real binary, real TCP.

use crate::support;

use std::io::{BufRead, BufReader, Read, Write};
use std::net::TcpStream;
use std::process::{Child, Command, Stdio};
use std::time::Duration;

/// How long a test waits for what must come.
const PATIENCE: Duration = Duration::from_secs(10);

struct Server {
    child: Child,
    addr: String,
}

impl Drop for Server {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

fn serve(flags: &[&str]) -> Server {
    let data = tempfile::tempdir().unwrap();
    let mut child = Command::new(env!("CARGO_BIN_EXE_toolsmith"))
        .env("TOOLSMITH_DATA_DIR", data.path())
        .args(["serve", "--http", "127.0.0.1:0"])
        .args(flags)
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .expect("the toolsmith binary runs");
    let mut banner = String::new();
    BufReader::new(child.stderr.take().unwrap()).read_line(&mut banner).unwrap();
    let addr = support::served_address(&banner);
    Server { child, addr }
}

/// The status of an `initialize` sent on a new connection.
fn initialize(addr: &str) -> String {
    let body = r#"{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"t","version":"1"}}}"#;
    let mut tcp = TcpStream::connect(addr).unwrap();
    tcp.set_read_timeout(Some(PATIENCE)).unwrap();
    let head = format!(
        "POST /mcp HTTP/1.1\r\nHost: {addr}\r\nAccept: application/json, text/event-stream\r\nContent-Type: application/json\r\nContent-Length: {}\r\nConnection: close\r\n\r\n{body}",
        body.len()
    );
    tcp.write_all(head.as_bytes()).unwrap();
    let mut status = String::new();
    BufReader::new(tcp).read_line(&mut status).unwrap();
    status.split_whitespace().nth(1).unwrap_or_default().to_owned()
}

#[test]
fn the_limit_flags_reach_the_server() {
    let server = serve(&["--max-sessions", "1", "--header-read-timeout", "0.5"]);
    assert_eq!(initialize(&server.addr), "200");
    assert_eq!(initialize(&server.addr), "503", "--max-sessions 1 was not applied");

    let mut stalled = TcpStream::connect(&server.addr).unwrap();
    stalled.write_all(b"POST /mcp HT").unwrap();
    stalled.set_read_timeout(Some(PATIENCE)).unwrap();
    let mut rest = Vec::new();
    // Closed by the server (EOF or reset) well before PATIENCE; a read timeout is an error
    // of kind WouldBlock/TimedOut.
    match stalled.read_to_end(&mut rest) {
        Ok(_) => {}
        Err(e) => assert!(
            !matches!(e.kind(), std::io::ErrorKind::WouldBlock | std::io::ErrorKind::TimedOut),
            "--header-read-timeout 0.5 was not applied: {e}"
        ),
    }
}

#[test]
fn zero_or_invalid_limits_are_refused_on_the_command_line() {
    for flags in [
        ["--idle-timeout", "0"],
        ["--header-read-timeout", "1e99"],
        ["--body-read-timeout", "soon"],
        ["--max-connections", "0"],
    ] {
        let out = Command::new(env!("CARGO_BIN_EXE_toolsmith"))
            .args(["serve", "--http", "127.0.0.1:0"])
            .args(flags)
            .output()
            .unwrap();
        assert_eq!(out.status.code(), Some(2), "{flags:?} was accepted");
        let stderr = String::from_utf8(out.stderr).unwrap();
        assert!(stderr.contains(flags[0]), "{flags:?}: {stderr}");
    }
}
