//! `toolsmith serve --stdio --tool-search --defer-all-except`: the real binary over stdio, the
//! rule over the example tools' own `defer_loading` (`convert-units` is deferred by its own).

use std::io::{BufRead, BufReader, Write};
use std::process::{Child, ChildStdin, Command, Stdio};

use serde_json::{Value, json};

struct Served {
    child: Child,
    stdin: ChildStdin,
    lines: std::io::Lines<BufReader<std::process::ChildStdout>>,
    _data: tempfile::TempDir,
}

impl Drop for Served {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

impl Served {
    fn start(flags: &[&str]) -> Served {
        let data = tempfile::tempdir().unwrap();
        let mut child = Command::new(env!("CARGO_BIN_EXE_toolsmith"))
            .env("TOOLSMITH_DATA_DIR", data.path())
            .args(["serve", "--stdio"])
            .args(flags)
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::null())
            .spawn()
            .expect("the toolsmith binary runs");
        let stdin = child.stdin.take().unwrap();
        let lines = BufReader::new(child.stdout.take().unwrap()).lines();
        let mut served = Served {
            child,
            stdin,
            lines,
            _data: data,
        };
        let init = served.request(
            1,
            "initialize",
            json!({"protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": {"name": "t", "version": "0"}}),
        );
        assert!(init["result"]["serverInfo"].is_object(), "{init}");
        writeln!(served.stdin, "{}", json!({"jsonrpc": "2.0", "method": "notifications/initialized"})).unwrap();
        served
    }

    /// The response to one request (notifications before it skipped).
    fn request(&mut self, id: u64, method: &str, params: Value) -> Value {
        let message = json!({"jsonrpc": "2.0", "id": id, "method": method, "params": params});
        writeln!(self.stdin, "{message}").unwrap();
        loop {
            let line = self.lines.next().expect("the server answers").unwrap();
            let answer: Value = serde_json::from_str(&line).unwrap();
            if answer["id"] == id {
                return answer;
            }
        }
    }

    fn names(&mut self, id: u64) -> Vec<String> {
        let list = self.request(id, "tools/list", json!({}));
        let tools = list["result"]["tools"].as_array().unwrap_or_else(|| panic!("{list}"));
        tools.iter().map(|t| t["name"].as_str().unwrap().to_owned()).collect()
    }
}

#[test]
fn defer_all_except_decides_what_serve_lists_and_refuses() {
    let mut served = Served::start(&["--tool-search", "--defer-all-except", "calculate,convert-units"]);
    assert_eq!(served.names(2), ["calculate", "convert-units", "search_tools"]);
    // Deferred by its own declaration, loaded up front by the rule: it runs.
    let call = served.request(
        3,
        "tools/call",
        json!({"name": "convert-units", "arguments": {"value": 10, "from": "km", "to": "m"}}),
    );
    assert_eq!(call["result"]["structuredContent"]["result"], 10000.0, "{call}");
    // Loaded up front by its own, deferred by the rule: refused until found.
    let refused = served.request(4, "tools/call", json!({"name": "text-stats", "arguments": {"text": "a b"}}));
    assert_eq!(refused["result"]["isError"], true, "{refused}");
    assert!(refused.to_string().contains("search_tools"), "{refused}");
    let found = served.request(
        5,
        "tools/call",
        json!({"name": "search_tools", "arguments": {"query": "count the words of a text", "limit": 1}}),
    );
    let text = found["result"]["content"][0]["text"].as_str().unwrap_or_else(|| panic!("{found}"));
    let found: Value = serde_json::from_str(text).unwrap();
    assert_eq!(found["loaded"], json!(["text-stats"]), "{found}");
    assert_eq!(served.names(6), ["calculate", "convert-units", "text-stats", "search_tools"]);
}

#[test]
fn defer_all_except_needs_tool_search() {
    let out = Command::new(env!("CARGO_BIN_EXE_toolsmith"))
        .args(["serve", "--stdio", "--defer-all-except", "calculate"])
        .stdin(Stdio::null())
        .output()
        .unwrap();
    assert!(!out.status.success());
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(stderr.contains("--tool-search"), "{stderr}");
}

#[test]
fn serve_says_nothing_of_provider_fields_mcp_clients_do_not_need() {
    use std::io::Read;
    // `calculate` allows direct and programmatic callers: MCP lists it, its clients call it
    // directly, and nothing is lost; `convert-units` is deferred (listed up front here).
    let data = tempfile::tempdir().unwrap();
    let mut child = Command::new(env!("CARGO_BIN_EXE_toolsmith"))
        .env("TOOLSMITH_DATA_DIR", data.path())
        .env("RUST_LOG", "info")
        .args(["serve", "--stdio"])
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("the toolsmith binary runs");
    let mut input = child.stdin.take().unwrap();
    let init = r#"{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"t","version":"1"}}}"#;
    writeln!(input, "{init}").unwrap();
    let mut lines = BufReader::new(child.stdout.take().unwrap()).lines();
    let answer = lines.next().expect("the server answers").unwrap();
    assert!(answer.contains("serverInfo"), "{answer}");
    drop(input);
    let _ = child.wait();
    let mut stderr = String::new();
    child.stderr.take().unwrap().read_to_string(&mut stderr).unwrap();
    for field in ["allowed_callers", "eager_input_streaming", "behavior", "cannot carry"] {
        assert!(!stderr.contains(field), "serve warned about `{field}`:\n{stderr}");
    }
}
