//! End-to-end tests of the `toolsmith` binary with imported MCP servers (`--import-mcp`, over
//! stdio and HTTP, behind `serve`'s one endpoint) and the pins of remote tools.

use std::collections::BTreeSet;
use std::process::Command;

use serde_json::{Value, json};
use support::toolsmith;

use super::shared::ALL_IDS;
use crate::support;

/// `--import-mcp NAME=…` pointing at this very binary serving its tools over stdio.
fn self_import(name: &str) -> String {
    format!("{name}={} serve --stdio", shell_quote(env!("CARGO_BIN_EXE_toolsmith")))
}

fn shell_quote(s: &str) -> String {
    format!("'{}'", s.replace('\'', r"'\''"))
}

#[test]
fn imported_mcp_tools_sit_next_to_the_linked_ones() {
    let me = self_import("me");
    let listed = toolsmith(&["--import-mcp", &me, "list", "--json"]).json();
    let ids: BTreeSet<String> = listed
        .as_array()
        .unwrap()
        .iter()
        .map(|t| t["id"].as_str().unwrap().to_owned())
        .collect();
    let expected: BTreeSet<String> = ALL_IDS.iter().flat_map(|id| [id.to_string(), format!("me_{id}")]).collect();
    assert_eq!(ids, expected);

    // An imported tool answers what the linked one does, through the child server.
    let args = r#"{"value": 100, "from": "C", "to": "F"}"#;
    let local = toolsmith(&["call", "convert-units", args]).json();
    let imported = toolsmith(&["call", "me_convert-units", args, "--import-mcp", &me]).json();
    assert_eq!(imported, local);

    // Its schema came over the wire, as MCP lists it (without schemars' own `format`s, such as
    // `double`); bad arguments are refused before the server is called.
    let schema = toolsmith(&["--import-mcp", &me, "schema", "me_convert-units"]).json();
    let linked = toolsmith(&["schema", "convert-units"]).json();
    let sent = tool_core::schema::without_foreign_formats(&linked["input"]).expect("`value` is a `double`");
    assert_eq!(schema["input"]["properties"], sent["properties"]);
    let refused = toolsmith(&["--import-mcp", &me, "call", "me_convert-units", r#"{"value": "hot"}"#]);
    assert_ne!(refused.code, 0);
    assert!(refused.stderr.contains("/value"), "{}", refused.stderr);

    // Catalogs include them.
    let catalog = toolsmith(&["--import-mcp", &me, "catalog", "--format", "mcp"]).json();
    let names: Vec<&str> = catalog["tools"]
        .as_array()
        .unwrap()
        .iter()
        .map(|t| t["name"].as_str().unwrap())
        .collect();
    assert!(names.contains(&"me_calculate") && names.contains(&"calculate"), "{names:?}");
}

#[test]
fn import_mcp_refuses_bad_values_clashes_and_servers_that_do_not_start() {
    for (value, why) in [
        ("no-equals", "expected NAME=TARGET"),
        ("bad name=x", "must be letters"),
        ("x=", "no command or URL"),
        ("x=/nonexistent/mcp-server --stdio", "`--import-mcp x`"),
        ("x=http://127.0.0.1:1/mcp", "`--import-mcp x`"),
    ] {
        let run = toolsmith(&["--import-mcp", value, "list"]);
        assert_eq!(run.code, 1, "{value}: {}", run.stderr);
        assert!(run.stderr.contains(why), "{value}: {}", run.stderr);
        assert!(run.stdout.is_empty(), "{value}: {}", run.stdout);
    }

    let twice = toolsmith(&["--import-mcp", &self_import("me"), "--import-mcp", &self_import("ME"), "list"]);
    assert!(twice.stderr.contains("used twice"), "{}", twice.stderr);

    // `a` (a gateway importing `b`) brings `a_b_calculate`; `a_b` would bring it again.
    let nested = format!(
        "a={} --import-mcp {} serve --stdio",
        shell_quote(env!("CARGO_BIN_EXE_toolsmith")),
        shell_quote(&self_import("b"))
    );
    let clash = toolsmith(&["--import-mcp", &nested, "--import-mcp", &self_import("a_b"), "list"]);
    assert_eq!(clash.code, 1, "{}", clash.stderr);
    assert!(
        clash.stderr.contains("`--import-mcp a_b`") && clash.stderr.contains("a_b_calculate"),
        "{}",
        clash.stderr
    );
}

/// A `toolsmith … serve --stdio` child spoken to in line-delimited JSON-RPC; what it prints
/// is read on a thread, so a message that never comes fails the test instead of hanging it.
struct StdioGateway {
    child: std::process::Child,
    stdin: Option<std::process::ChildStdin>,
    lines: std::sync::mpsc::Receiver<Value>,
    /// Messages read while waiting for another one, kept for a later `next`.
    backlog: Vec<Value>,
    _data: tempfile::TempDir,
}

impl StdioGateway {
    fn start(imports: &[String]) -> StdioGateway {
        use std::io::BufRead;
        let data = tempfile::tempdir().unwrap();
        let mut args: Vec<&str> = Vec::new();
        for import in imports {
            args.extend(["--import-mcp", import]);
        }
        args.extend(["serve", "--stdio"]);
        let mut child = Command::new(env!("CARGO_BIN_EXE_toolsmith"))
            .env("TOOLSMITH_DATA_DIR", data.path())
            .args(args)
            .stdin(std::process::Stdio::piped())
            .stdout(std::process::Stdio::piped())
            .stderr(std::process::Stdio::null())
            .spawn()
            .unwrap();
        let stdout = child.stdout.take().unwrap();
        let (tx, lines) = std::sync::mpsc::channel();
        std::thread::spawn(move || {
            for line in std::io::BufReader::new(stdout).lines().map_while(Result::ok) {
                if tx.send(serde_json::from_str::<Value>(&line).unwrap()).is_err() {
                    return;
                }
            }
        });
        let mut gateway = StdioGateway {
            stdin: child.stdin.take(),
            child,
            lines,
            backlog: Vec::new(),
            _data: data,
        };
        let init = gateway.request(
            1,
            "initialize",
            json!({"protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": {"name": "test", "version": "0"}}),
        );
        assert!(init["result"]["serverInfo"].is_object(), "{init}");
        gateway.send(json!({"jsonrpc": "2.0", "method": "notifications/initialized"}));
        gateway
    }

    fn send(&mut self, message: Value) {
        use std::io::Write;
        writeln!(self.stdin.as_mut().unwrap(), "{message}").unwrap();
    }

    /// The first message for which `wanted` holds, read now or kept from an earlier wait
    /// (others are kept: a notification may come before the answer it follows from).
    fn next(&mut self, what: &str, wanted: impl Fn(&Value) -> bool) -> Value {
        if let Some(i) = self.backlog.iter().position(&wanted) {
            return self.backlog.remove(i);
        }
        loop {
            let message = self
                .lines
                .recv_timeout(std::time::Duration::from_secs(20))
                .unwrap_or_else(|e| panic!("no {what} from the gateway: {e}"));
            if wanted(&message) {
                return message;
            }
            self.backlog.push(message);
        }
    }

    fn request(&mut self, id: u64, method: &str, params: Value) -> Value {
        self.send(json!({"jsonrpc": "2.0", "id": id, "method": method, "params": params}));
        self.next(&format!("answer to {method}"), |m| m["id"] == id)
    }

    fn tool_names(&mut self, id: u64) -> BTreeSet<String> {
        let listed = self.request(id, "tools/list", json!({}));
        listed["result"]["tools"]
            .as_array()
            .unwrap()
            .iter()
            .map(|t| t["name"].as_str().unwrap().to_owned())
            .collect()
    }

    /// Closes its input and waits for it to end.
    fn finish(mut self) {
        drop(self.stdin.take());
        let status = self.child.wait().unwrap();
        assert!(status.success(), "the gateway did not end cleanly: {status}");
    }
}

#[test]
fn serve_puts_imported_servers_behind_one_mcp_endpoint() {
    let mut gateway = StdioGateway::start(&[self_import("me")]);
    let names = gateway.tool_names(2);
    assert!(names.contains("me_calculate") && names.contains("calculate"), "{names:?}");
    let called = gateway.request(
        3,
        "tools/call",
        json!({"name": "me_calculate", "arguments": {"expression": "x * 2", "variables": {"x": 21}}}),
    );
    assert_eq!(
        called["result"]["structuredContent"],
        json!({"expression": "x * 2", "result": 42.0, "result_type": "float"}),
        "{called}"
    );
    gateway.finish();
}

#[test]
fn an_imported_servers_list_changes_reach_the_gateways_clients() {
    let fixture = format!("fx={} --stdio", shell_quote(env!("CARGO_BIN_EXE_mcp_fixture")));
    let mut gateway = StdioGateway::start(&[fixture]);
    let list_changed = |m: &Value| m["method"] == "notifications/tools/list_changed";
    assert!(!gateway.tool_names(2).contains("fx_dynamic_echo"));

    // The imported server adds a tool: its list_changed makes the gateway's set, and so the
    // gateway's clients, follow.
    let added = gateway.request(3, "tools/call", json!({"name": "fx_add_tool", "arguments": {}}));
    assert_eq!(added["result"]["isError"], Value::Null, "{added}");
    gateway.next("tools/list_changed after the addition", list_changed);
    assert!(gateway.tool_names(4).contains("fx_dynamic_echo"));
    let echoed = gateway.request(
        5,
        "tools/call",
        json!({"name": "fx_dynamic_echo", "arguments": {"text": "through two servers"}}),
    );
    assert_eq!(echoed["result"]["content"][0]["text"], "through two servers", "{echoed}");

    // And removes it again.
    gateway.request(6, "tools/call", json!({"name": "fx_remove_tool", "arguments": {}}));
    gateway.next("tools/list_changed after the removal", list_changed);
    assert!(!gateway.tool_names(7).contains("fx_dynamic_echo"));
    gateway.finish();
}

#[test]
fn an_http_import_sends_the_bearer_token_read_from_the_environment() {
    use std::io::BufRead;
    const SECRET: &str = "s3cret-import-token";
    let data = tempfile::tempdir().unwrap();
    let mut server = Command::new(env!("CARGO_BIN_EXE_toolsmith"))
        .env("TOOLSMITH_DATA_DIR", data.path())
        .env("SERVER_TOKEN", SECRET)
        .args(["serve", "--http", "127.0.0.1:0", "--auth-token-env", "SERVER_TOKEN"])
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    let mut banner = String::new();
    std::io::BufReader::new(server.stderr.take().unwrap())
        .read_line(&mut banner)
        .unwrap();
    let url = banner
        .trim()
        .strip_prefix("serving MCP on ")
        .unwrap_or_else(|| panic!("no address in {banner:?}"))
        .to_owned();
    let import = format!("remote={url}");
    let run = |token: Option<&str>| {
        let mut command = Command::new(env!("CARGO_BIN_EXE_toolsmith"));
        command.env("TOOLSMITH_DATA_DIR", data.path()).env_remove("CLIENT_TOKEN");
        if let Some(t) = token {
            command.env("CLIENT_TOKEN", t);
        }
        let out = command
            .args([
                "--import-mcp",
                &import,
                "--import-mcp-token-env",
                "remote=CLIENT_TOKEN",
                "list",
                "--json",
            ])
            .output()
            .unwrap();
        (
            out.status.code(),
            String::from_utf8(out.stdout).unwrap(),
            String::from_utf8(out.stderr).unwrap(),
        )
    };

    let (code, stdout, stderr) = run(Some(SECRET));
    assert_eq!(code, Some(0), "{stderr}");
    let listed: Value = serde_json::from_str(&stdout).unwrap();
    assert!(listed.as_array().unwrap().iter().any(|t| t["id"] == "remote_calculate"), "{listed}");

    let (code, _, stderr) = run(Some("wrong-token"));
    assert_eq!(code, Some(1));
    assert!(stderr.contains("`--import-mcp remote`") && stderr.contains("401"), "{stderr}");
    assert!(!stderr.contains("wrong-token"), "the token leaked: {stderr}");

    let (code, _, stderr) = run(None);
    assert_eq!(code, Some(1));
    assert!(stderr.contains("`CLIENT_TOKEN` is not set"), "{stderr}");

    // A token for a command import, or for no import, is a mistake said as such.
    let me = self_import("me");
    let refused = toolsmith(&["--import-mcp", &me, "--import-mcp-token-env", "me=HOME", "list"]);
    assert!(refused.stderr.contains("is a command, not an HTTP server"), "{}", refused.stderr);
    let refused = toolsmith(&["--import-mcp-token-env", "nobody=HOME", "list"]);
    assert!(refused.stderr.contains("no `--import-mcp nobody=…`"), "{}", refused.stderr);

    server.kill().unwrap();
    let _ = server.wait();
}

#[test]
fn pins_lists_diffs_and_accepts_a_changed_remote_tool() {
    use tool_core::fingerprint::Definition;
    use tool_core::pins::{PinKey, PinStore, Pinned, SqlitePins};

    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("pins.sqlite3");
    let key = PinKey {
        provider: "mcp".into(),
        connection: "fx".into(),
        tool: "fx_echo".into(),
    };
    let definition = |description: &str| Definition {
        name: "fx_echo".into(),
        description: description.into(),
        input_schema: json!({"type": "object"}),
        output_schema: None,
        annotations: json!({}),
    };
    let rt = tokio::runtime::Builder::new_current_thread().build().unwrap();
    rt.block_on(async {
        let store = SqlitePins::open(&file).unwrap();
        store.pin_if_absent(key.clone(), Pinned::now(definition("Echoes"))).await.unwrap();
        store
            .record_seen(key.clone(), Pinned::now(definition("Echoes, and mails it")))
            .await
            .unwrap();
    });
    let pins = file.to_str().unwrap();
    let list = toolsmith(&["--pins", pins, "pins", "list"]);
    assert_eq!(list.code, 0, "{}", list.stderr);
    assert!(
        list.stdout.contains("mcp\tfx\tfx_echo\tsha256:") && list.stdout.contains("CHANGED (description)"),
        "{}",
        list.stdout
    );
    let diff = toolsmith(&["--pins", pins, "pins", "diff", "mcp", "fx_echo"]).json();
    assert_eq!(diff["changed"], json!(["description"]));
    assert_eq!(diff["seen"]["description"], "Echoes, and mails it");
    let accept = toolsmith(&["--pins", pins, "pins", "accept", "mcp", "fx_echo"]);
    assert_eq!(accept.code, 0, "{}", accept.stderr);
    let after = toolsmith(&["--pins", pins, "pins", "list", "--json"]).json();
    assert_eq!(after[0]["pinned"]["definition"]["description"], "Echoes, and mails it");
    assert!(after[0]["seen"].is_null(), "nothing waits for review");
    let again = toolsmith(&["--pins", pins, "pins", "accept", "mcp", "fx_echo"]);
    assert_ne!(again.code, 0, "nothing left to accept");
}
