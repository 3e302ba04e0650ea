//! Trust over MCP, as deployed: `toolsmith serve --http` (stateless, JSON responses) in a child
//! of this test binary (`support/child_cli.rs`), spoken to over real HTTP, with `toolsmith
//! pending --token` as the approver's command line on the same SQLite store.
//!
//! - A client's idempotency key (`_meta["io.toolsmith/idempotencyKey"]`) makes two calls of an
//!   `idempotent` tool run it once; a malformed key is a protocol error.
//! - A signed decision (`_meta["io.toolsmith/decision"]`, from `pending --token`) approves the
//!   waiting call it names, once; a tampered, expired, foreign-key, other-tool or
//!   other-arguments token is refused and nothing runs.
//! - The decision key never shows: not in the server's logs, the command line's output, an
//!   error, a token.

use crate::support::child_cli;

use std::time::Duration;

use base64::Engine as _;
use serde_json::{Value, json};
use tool_core::mcp::{DECISION_META, IDEMPOTENCY_KEY_META};
use tool_core::prelude::*;
use tool_core::runtime::{Answer, Binding, Decision, DecisionKey};

/// How long a test waits for what must come.
const PATIENCE: Duration = Duration::from_secs(20);
const MODERN: &str = "2026-07-28";
/// The server's decision key: a canary that must never be printed.
const KEY: &str = "CANARY-mcp-decision-key-7c1e0b9a44d2";

/// Appends a line to `ledger` (a charge that must happen once per key)
#[tool(id = "trust-charge", idempotent)]
async fn charge(
    /// The file the charge is written to
    ledger: String,
    /// Cents
    amount: u32,
) -> String {
    append(&ledger, &format!("charge {amount}"));
    format!("charged {amount}")
}

/// Pays `amount` (a person approves first); writes a line to `ledger` when it runs
#[tool(id = "trust-pay", require_approval)]
async fn pay(
    /// The file the payment is written to
    ledger: String,
    /// Cents
    amount: u32,
) -> String {
    append(&ledger, &format!("pay {amount}"));
    format!("paid {amount}")
}

/// Refunds `amount` (a person approves first)
#[tool(id = "trust-refund", require_approval)]
async fn refund(
    /// The file the refund is written to
    ledger: String,
    /// Cents
    amount: u32,
) -> String {
    append(&ledger, &format!("refund {amount}"));
    format!("refunded {amount}")
}

fn append(path: &str, line: &str) {
    use std::io::Write as _;
    let mut file = std::fs::OpenOptions::new().create(true).append(true).open(path).unwrap();
    writeln!(file, "{line}").unwrap();
}

/// This suite's tests, named `SUITE::TEST`.
pub fn trials(suite: &str) -> Vec<libtest_mimic::Trial> {
    child_cli::trials(
        suite,
        &[
            (
                "a_client_idempotency_key_runs_an_idempotent_tool_once",
                a_client_idempotency_key_runs_an_idempotent_tool_once,
            ),
            (
                "a_decision_token_approves_a_waiting_call_over_mcp_once",
                a_decision_token_approves_a_waiting_call_over_mcp_once,
            ),
        ],
    )
}

/// A `toolsmith serve --http` child with the decision key, killed when dropped; its standard
/// error is kept (the canary is looked for in it).
struct Served {
    server: child_cli::ServedChild,
    url: String,
    dir: tempfile::TempDir,
}

impl Served {
    fn start() -> Served {
        let dir = tempfile::tempdir().unwrap();
        let store = dir.path().join("store.db");
        let args = [
            "--store",
            store.to_str().unwrap(),
            "serve",
            "--http",
            "127.0.0.1:0",
            "--stateless",
            "--json-response",
        ];
        let server = child_cli::ServedChild::start(
            child_cli::toolsmith(&args)
                .env("TOOLSMITH_DECISION_KEY", KEY)
                // Everything: rmcp at trace logs whole messages (arguments, `_meta`, results).
                .env("RUST_LOG", "debug,rmcp=trace"),
        );
        let url = server.url.clone();
        Served { server, url, dir }
    }

    fn store(&self) -> String {
        self.dir.path().join("store.db").to_str().unwrap().to_owned()
    }

    fn ledger(&self) -> String {
        self.dir.path().join("ledger.txt").to_str().unwrap().to_owned()
    }

    /// The lines written to the ledger so far.
    fn ledger_lines(&self) -> Vec<String> {
        let text = std::fs::read_to_string(self.ledger()).unwrap_or_default();
        text.lines().map(str::to_owned).collect()
    }

    /// `toolsmith --store S ARGS` with `key` as the decision key.
    fn cli(&self, key: &str, args: &[&str]) -> child_cli::Ran {
        let store = self.store();
        let mut all = vec!["--store", store.as_str()];
        all.extend_from_slice(args);
        let out = child_cli::toolsmith(&all).env("TOOLSMITH_DECISION_KEY", key).output().unwrap();
        child_cli::Ran::from(out)
    }

    /// The server's logs so far, once it has stopped (so they are complete).
    fn stop(mut self) -> String {
        self.server.stop(PATIENCE)
    }
}

/// A stateless 2026-07-28 `tools/call` with `meta` added to the request's `_meta`: the whole
/// JSON-RPC answer.
async fn call(served: &Served, tool: &str, arguments: Value, meta: Value) -> Value {
    let mut all_meta = json!({
        "io.modelcontextprotocol/protocolVersion": MODERN,
        "io.modelcontextprotocol/clientCapabilities": {},
    });
    for (k, v) in meta.as_object().unwrap() {
        all_meta[k] = v.clone();
    }
    let body = json!({
        "jsonrpc": "2.0", "id": 1, "method": "tools/call",
        "params": {"name": tool, "arguments": arguments, "_meta": all_meta},
    });
    let request = reqwest::Client::new()
        .post(&served.url)
        .header("Accept", "application/json, text/event-stream")
        .header("Content-Type", "application/json")
        .header("MCP-Protocol-Version", MODERN)
        .header("Mcp-Method", "tools/call")
        .header("Mcp-Name", tool)
        .body(body.to_string());
    let response = tokio::time::timeout(PATIENCE, request.send())
        .await
        .expect("an answer in time")
        .unwrap();
    assert_eq!(response.status(), 200);
    response.json().await.unwrap()
}

/// The text of a call's result, and whether it is an error result.
fn text(answer: &Value) -> (String, bool) {
    let result = answer.get("result").unwrap_or_else(|| panic!("no result: {answer}"));
    let text = result["content"][0]["text"].as_str().unwrap_or_default().to_owned();
    (text, result["isError"] == json!(true))
}

fn a_client_idempotency_key_runs_an_idempotent_tool_once() {
    let served = Served::start();
    child_cli::block_on(async {
        let args = json!({"ledger": served.ledger(), "amount": 250});
        let keyed = json!({IDEMPOTENCY_KEY_META: "order-42/charge"});
        let first = call(&served, "trust-charge", args.clone(), keyed.clone()).await;
        let second = call(&served, "trust-charge", args.clone(), keyed.clone()).await;
        assert_eq!(text(&first), ("charged 250".to_owned(), false), "{first}");
        assert_eq!(text(&second), text(&first), "answered from the receipt: {second}");
        assert_eq!(served.ledger_lines(), ["charge 250"], "one key, one run");

        // Another key is another charge; no key, each call its own.
        call(
            &served,
            "trust-charge",
            args.clone(),
            json!({IDEMPOTENCY_KEY_META: "order-43/charge"}),
        )
        .await;
        call(&served, "trust-charge", args.clone(), json!({})).await;
        assert_eq!(served.ledger_lines().len(), 3);

        // The same key with other arguments: refused, nothing runs.
        let other = json!({"ledger": served.ledger(), "amount": 999});
        let reused = call(&served, "trust-charge", other, keyed).await;
        let (said, error) = text(&reused);
        assert!(error && said.contains("other arguments"), "{reused}");
        assert_eq!(served.ledger_lines().len(), 3);

        // A key that is no key: a protocol error saying what one is, nothing runs.
        for bad in [json!(""), json!(7), json!("line\nbreak"), json!("k".repeat(300))] {
            let answer = call(&served, "trust-charge", args.clone(), json!({ IDEMPOTENCY_KEY_META: bad })).await;
            let message = answer["error"]["message"].as_str().unwrap_or_default();
            assert!(message.contains("printable ASCII"), "{answer}");
        }
        assert_eq!(served.ledger_lines().len(), 3);
    });
}

/// The waiting calls the approver's `pending --json --token` lists: (call id, tool, binding,
/// approve token).
fn pending_tokens(served: &Served, seconds: &str) -> Vec<(String, String, Binding, String)> {
    let ran = served.cli(KEY, &["pending", "--json", "--token", seconds]);
    assert!(ran.ok, "{}", ran.stderr);
    assert!(
        !ran.stdout.contains(KEY) && !ran.stderr.contains(KEY),
        "the key leaked: {}",
        ran.stdout
    );
    let rows: Vec<Value> = serde_json::from_str(&ran.stdout).unwrap();
    rows.into_iter()
        .map(|row| {
            let binding: Binding = serde_json::from_value(row["binding"].clone()).unwrap();
            let token = row["approve_token"]
                .as_str()
                .expect("an approve token per waiting approval")
                .to_owned();
            let id = row["tool_call_id"].as_str().unwrap().to_owned();
            (id, row["tool_name"].as_str().unwrap().to_owned(), binding, token)
        })
        .collect()
}

fn a_decision_token_approves_a_waiting_call_over_mcp_once() {
    let served = Served::start();
    let mut said = Vec::new();
    child_cli::block_on(async {
        let pay_args = json!({"ledger": served.ledger(), "amount": 500});
        let asked = call(&served, "trust-pay", pay_args.clone(), json!({})).await;
        let (text_asked, _) = text(&asked);
        assert!(
            text_asked.contains("requires approval") && text_asked.contains(DECISION_META),
            "{asked}"
        );
        call(&served, "trust-refund", json!({"ledger": served.ledger(), "amount": 80}), json!({})).await;
        assert!(served.ledger_lines().is_empty(), "nothing ran before a decision");

        let listed = pending_tokens(&served, "900");
        let (pay_id, _, pay_binding, pay_token) = listed.iter().find(|(_, t, _, _)| t == "trust-pay").unwrap().clone();
        let (_, _, _, refund_token) = listed.iter().find(|(_, t, _, _)| t == "trust-refund").unwrap().clone();
        assert_eq!(pay_binding.call_id, pay_id);
        let payload = pay_token.strip_prefix("tsd1.").unwrap().split('.').next().unwrap();
        let payload = base64::engine::general_purpose::URL_SAFE_NO_PAD.decode(payload).unwrap();
        assert!(!String::from_utf8_lossy(&payload).contains(KEY), "a token carries no key");

        // Refused, each for its own reason, and nothing runs.
        let decide = |token: String| json!({ DECISION_META: token });
        // One character of the signed payload changed (still base64): the signature fails.
        let tampered = {
            let body = pay_token.strip_prefix("tsd1.").unwrap();
            let flipped = if body.starts_with('e') { 'f' } else { 'e' };
            format!("tsd1.{flipped}{}", &body[1..])
        };
        let foreign = DecisionKey::from_bytes(b"another-key-0123456789abcdef").unwrap();
        let approve = Decision::new(pay_binding.clone(), Answer::Approve);
        let far = u64::MAX / 2;
        let mut other_args = pay_binding.clone();
        other_args.args_hash = tool_core::fingerprint::hash(&json!({"ledger": served.ledger(), "amount": 50_000}));
        let ours = DecisionKey::from_bytes(KEY.as_bytes()).unwrap();
        let cases = [
            ("trust-pay", tampered, "signature"),
            ("trust-pay", foreign.sign(&approve, far), "signature"),
            ("trust-pay", ours.sign(&approve, 1), "expired"),
            (
                "trust-pay",
                ours.sign(&Decision::new(other_args, Answer::Approve), far),
                "other arguments",
            ),
            ("trust-pay", refund_token.clone(), "another tool"),
            ("trust-pay", "tsd1.not-a-token".to_owned(), "not one"),
        ];
        for (tool, token, why) in cases {
            let answer = call(&served, tool, json!({}), decide(token)).await;
            let (text, error) = text(&answer);
            assert!(error && text.contains(why) && text.contains("Nothing ran"), "{why}: {answer}");
            said.push(text);
        }
        assert!(served.ledger_lines().is_empty(), "no refused decision ran anything");
        let expired = pending_tokens(&served, "0");
        tokio::time::sleep(Duration::from_millis(5)).await;
        let (_, _, _, stale) = expired.iter().find(|(_, t, _, _)| t == "trust-pay").unwrap().clone();
        let answer = call(&served, "trust-pay", json!({}), decide(stale)).await;
        assert!(text(&answer).0.contains("expired"), "{answer}");

        // The real token: the call runs once, with its own arguments, answered in this request.
        let approved = call(
            &served,
            "trust-pay",
            json!({"ledger": "/elsewhere", "amount": 1}),
            decide(pay_token.clone()),
        )
        .await;
        assert_eq!(text(&approved), ("paid 500".to_owned(), false), "{approved}");
        assert_eq!(served.ledger_lines(), ["pay 500"]);
        let again = call(&served, "trust-pay", json!({}), decide(pay_token)).await;
        let (text_again, error) = text(&again);
        assert!(error && text_again.contains("Nothing ran"), "a token decides once: {again}");
        said.push(text_again);
        assert_eq!(served.ledger_lines(), ["pay 500"]);
        // The other call is untouched: it still waits.
        let left = pending_tokens(&served, "60");
        assert_eq!(left.iter().map(|(_, t, _, _)| t.as_str()).collect::<Vec<_>>(), ["trust-refund"]);
    });
    let logs = served.stop();
    assert!(
        logs.contains("trust-pay") && logs.contains(DECISION_META),
        "the server logged its calls: {logs}"
    );
    for text in said.iter().chain([&logs]) {
        assert!(!text.contains(KEY), "the decision key leaked: {text}");
    }
}
