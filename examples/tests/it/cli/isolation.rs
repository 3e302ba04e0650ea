//! End to end, through a real MCP client (the `toolsmith` binary importing the server over
//! Streamable HTTP, `--import-mcp remote=URL`): a server survives a call whose isolated tool
//! overflows its stack and answers the next call (`mcp_fixture`'s `overflow`, `isolate =
//! "process"`), and `toolsmith serve --http --isolate-tools` answers calls from its workers. (The
//! example tools themselves no longer crash on any input: `crash_inputs.rs`.)

use std::io::{BufRead, BufReader};
use std::process::{Child, Command, Stdio};
use std::sync::mpsc;
use std::time::Duration;

use serde_json::{Value, json};

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

fn serve(program: &str, data: &std::path::Path, args: &[&str]) -> Server {
    let mut child = Command::new(program)
        .env("TOOLSMITH_DATA_DIR", data)
        .args(args)
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

#[test]
fn a_server_survives_a_call_whose_isolated_tool_overflows_its_stack() {
    let data = tempfile::tempdir().unwrap();
    let mut server = serve(env!("CARGO_BIN_EXE_mcp_fixture"), data.path(), &["--http", "127.0.0.1:0"]);
    let (code, stdout, stderr) = call_through(&server, data.path(), "overflow", &json!({}));
    assert_ne!(code, Some(0), "the crashing call succeeded: {stdout}");
    assert!(
        stderr.contains("the tool's process died: stack overflow"),
        "the client did not get the clear error: {stderr}"
    );
    assert!(server.child.try_wait().unwrap().is_none(), "the server died");
    let (code, stdout, stderr) = call_through(&server, data.path(), "echo", &json!({"text": "still here"}));
    assert_eq!(code, Some(0), "the next call failed: {stderr}");
    assert_eq!(serde_json::from_str::<Value>(&stdout).ok(), Some(json!("still here")), "{stdout}");
    assert!(server.child.try_wait().unwrap().is_none(), "the server died");
}

#[test]
fn serve_isolate_tools_answers_calls_from_its_workers() {
    let data = tempfile::tempdir().unwrap();
    let args = ["serve", "--http", "127.0.0.1:0", "--isolate-tools", "--isolate-stack-mib", "1"];
    let mut server = serve(env!("CARGO_BIN_EXE_toolsmith"), data.path(), &args);
    let (code, stdout, stderr) = call_through(&server, data.path(), "calculate", &json!({"expression": "6 * 7"}));
    assert_eq!(code, Some(0), "the call failed: {stderr}");
    let out: Value = serde_json::from_str(&stdout).unwrap_or_else(|e| panic!("not JSON ({e}): {stdout}"));
    assert_eq!(out["result"], json!(42), "{out}");
    // An input at json-query's limits is refused with the limit named, in the worker, and the
    // server goes on.
    let deep = format!("$[?{}@.a{}]", "(".repeat(2_000), ")".repeat(2_000));
    let (code, _, stderr) = call_through(&server, data.path(), "json-query", &json!({"document": {"a": 1}, "query": deep}));
    assert_ne!(code, Some(0));
    assert!(
        stderr.contains("1000 characters") || stderr.contains("deep"),
        "the limit is named: {stderr}"
    );
    let (code, _, stderr) = call_through(&server, data.path(), "json-query", &json!({"document": {"a": 1}, "query": "$.a"}));
    assert_eq!(code, Some(0), "the same tool no longer answers: {stderr}");
    assert!(server.child.try_wait().unwrap().is_none(), "the server died");
}
