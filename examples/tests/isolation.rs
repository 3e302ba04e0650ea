//! End to end: `toolsmith serve --http --isolate-tools` survives a call that crashes its tool
//! and answers the next call. The MCP client is the real `toolsmith` binary too, importing the
//! server over Streamable HTTP (`--import-mcp remote=URL`).

use std::io::{BufRead, BufReader};
use std::process::{Child, Command, Stdio};
use std::sync::mpsc;
use std::time::Duration;

use serde_json::{json, Value};

/// A JSONPath filter nested this deep overflows the parser's stack (the query is ~40 KB: under
/// the 1 MiB argument limit, and under the 128 KiB a command-line argument may have). In
/// process, a thousand levels already take the whole server down.
const DEPTH: usize = 20_000;

/// The server, killed when the test ends however it ends.
struct Server {
    child: Child,
    url: String,
}

impl Drop for Server {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

fn serve(data: &std::path::Path, extra: &[&str]) -> Server {
    let mut child = Command::new(env!("CARGO_BIN_EXE_toolsmith"))
        .env("TOOLSMITH_DATA_DIR", data)
        .args(["serve", "--http", "127.0.0.1:0"])
        .args(extra)
        .stderr(Stdio::piped())
        .spawn()
        .expect("the toolsmith binary starts");
    let mut stderr = BufReader::new(child.stderr.take().unwrap());
    let mut banner = String::new();
    stderr.read_line(&mut banner).unwrap();
    let url = banner
        .trim()
        .strip_prefix("serving MCP on ")
        .unwrap_or_else(|| panic!("no address in {banner:?}"))
        .to_owned();
    // Keep draining the server's standard error so it never blocks on a full pipe.
    std::thread::spawn(move || for _ in stderr.lines() {});
    Server { child, url }
}

/// One MCP client call of `tool` on the server (a `toolsmith --import-mcp` process), bounded:
/// its exit code and what it printed.
fn call_through(server: &Server, data: &std::path::Path, tool: &str, args: &Value) -> (Option<i32>, String, String) {
    let mut client = Command::new(env!("CARGO_BIN_EXE_toolsmith"))
        .env("TOOLSMITH_DATA_DIR", data)
        .args(["--import-mcp", &format!("remote={}", server.url), "call", &format!("remote_{tool}")])
        .arg(args.to_string())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let (tx, rx) = mpsc::channel();
    let (stdout, stderr) = (client.stdout.take().unwrap(), client.stderr.take().unwrap());
    std::thread::spawn(move || {
        let read = |r: &mut dyn std::io::Read| {
            let mut s = String::new();
            let _ = r.read_to_string(&mut s);
            s
        };
        let (mut stdout, mut stderr) = (stdout, stderr);
        let err = std::thread::spawn(move || read(&mut stderr));
        let out = read(&mut stdout);
        let _ = tx.send((out, err.join().unwrap_or_default()));
    });
    let (out, err) = rx.recv_timeout(Duration::from_secs(120)).unwrap_or_else(|_| {
        let _ = client.kill();
        panic!("the MCP client got no answer within 120 s")
    });
    let code = client.wait().unwrap().code();
    (code, out, err)
}

fn deep_query() -> String {
    format!("$[?{}@.a{}]", "(".repeat(DEPTH), ")".repeat(DEPTH))
}

#[test]
fn an_isolated_server_survives_a_crashing_call_and_answers_the_next() {
    let data = tempfile::tempdir().unwrap();
    let mut server = serve(data.path(), &["--isolate-tools", "--isolate-stack-mib", "1"]);
    let args = json!({"document": {"a": 1}, "query": deep_query()});
    let (code, stdout, stderr) = call_through(&server, data.path(), "json-query", &args);
    assert_ne!(code, Some(0), "the crashing call succeeded: {stdout}");
    assert!(
        stderr.contains("the tool's process died: stack overflow"),
        "the client did not get the clear error: {stderr}"
    );
    assert!(server.child.try_wait().unwrap().is_none(), "the server died");

    let (code, stdout, stderr) = call_through(&server, data.path(), "calculate", &json!({"expression": "6 * 7"}));
    assert_eq!(code, Some(0), "the next call failed: {stderr}");
    let out: Value = serde_json::from_str(&stdout).unwrap_or_else(|e| panic!("not JSON ({e}): {stdout}"));
    assert_eq!(out["result"], json!(42), "{out}");
    let (code, _, stderr) = call_through(&server, data.path(), "json-query", &json!({"document": {"a": 1}, "query": "$.a"}));
    assert_eq!(code, Some(0), "the same tool no longer answers: {stderr}");
    assert!(server.child.try_wait().unwrap().is_none(), "the server died");
}
