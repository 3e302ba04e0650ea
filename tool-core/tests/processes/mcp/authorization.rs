//! The authorization matrix: every object a call leaves behind × every path that reads, answers,
//! decides, cancels or reuses one × every kind of caller, over real HTTP against three
//! `toolsmith serve` instances on one PostgreSQL with OAuth on (a local authorization server,
//! `support/auth_server.rs`).
//!
//! Alice makes each object on one instance; on another instance (the session's own for a
//! session) an anonymous request, then Bob, then Alice take the path. The table
//! ([`expected`]) says what each must get: the owner's attempt works; another subject is told
//! exactly what a request naming an object that does not exist is told (the same JSON-RPC
//! answer, ids aside: no oracle) and nothing happens to the object (the owner's attempt after
//! it still works); an anonymous request is refused with a 401 challenge before anything is
//! read. The paths, objects and callers are enums whose lists are made with them
//! ([`listed!`]), and the table is an exhaustive `match`: a path or object added without its
//! rows does not compile, and an object no path reaches fails the test.

use std::time::Duration;

use serde_json::{Value, json};
use tool_core::prelude::*;

use crate::support::auth_server::AuthServer;
use crate::support::child_cli;
use crate::support::postgres as pg;

/// The canonical URI every instance is configured with (one public name behind a balancer).
const RESOURCE: &str = "http://localhost/mcp";
/// The key the instances share (row integrity, sealed states, decision tokens).
const STORE_KEY: &str = "authorization-matrix-store-key-0123456789";
const MODERN: &str = "2026-07-28";
const TASKS: &str = "io.modelcontextprotocol/tasks";

/// Pays an amount once a person approves
#[tool(id = "authz-pay", require_approval)]
async fn authz_pay(
    /// The amount
    amount: u32,
) -> String {
    format!("paid {amount}")
}

/// The question a suspended call asks.
#[derive(serde::Serialize, serde::Deserialize, schemars::JsonSchema)]
struct Question {
    /// What is asked
    question: String,
}

/// The answer a suspended call resumes with.
#[derive(serde::Serialize, serde::Deserialize, schemars::JsonSchema)]
struct Answer {
    /// Go on
    ok: bool,
}

/// Waits for a person to say whether to go on
#[tool(id = "authz-wait", suspend = Question, resume = Answer)]
async fn authz_wait(
    /// A note
    note: String,
    #[ctx] cx: ToolContext<tool_core::RequestContext, Question, Answer>,
) -> Result<String, ToolError> {
    match cx.resume_data()? {
        Some(answer) => Ok(format!("resumed {note} with {}", answer.ok)),
        None => Err(cx.suspend(Question {
            question: format!("go on with {note}?"),
        })),
    }
}

/// Asks the client's user for a word mid-call
#[tool(id = "authz-ask")]
async fn authz_ask(#[ctx] cx: ToolContext) -> Result<String, ToolError> {
    let mcp = cx.mcp().ok_or_else(|| ToolError::new("call me over MCP"))?;
    let form = json!({"type": "object", "properties": {"word": {"type": "string"}}, "required": ["word"]});
    match mcp.elicit("Say a word".into(), form).await? {
        tool_core::context::Elicitation::Accept { content } => Ok(format!("heard {}", content["word"].as_str().unwrap_or_default())),
        _ => Ok("heard nothing".into()),
    }
}

/// Finishes at once, as a durable background task
#[tool(id = "authz-task", background(enabled = true))]
async fn authz_task() -> String {
    "task done".into()
}

/// Runs as a background task once a person approves
#[tool(id = "authz-task-approve", require_approval, background(enabled = true))]
async fn authz_task_approve() -> String {
    "approved task done".into()
}

/// Sleeps (at most a minute) as a background task, until cancelled
#[tool(id = "authz-task-slow", background(enabled = true))]
async fn authz_task_slow() -> String {
    tokio::time::sleep(Duration::from_secs(60)).await;
    "slept".into()
}

/// Answers with more text than the model may see (the rest is kept, behind a link)
#[tool(id = "authz-big")]
async fn authz_big() -> String {
    "secret ledger line; ".repeat(100)
}

/// Records a run that happens once per idempotency key, and names it
#[tool(id = "authz-once", idempotent)]
async fn authz_once() -> String {
    let nanos = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap_or_default()
        .as_nanos();
    format!("run-{}-{nanos}", std::process::id())
}

/// Declares an enum and the list of its values, made together, so the list cannot miss one.
macro_rules! listed {
    ($name:ident { $($variant:ident),* $(,)? }) => {
        #[derive(Debug, Clone, Copy, PartialEq, Eq)]
        enum $name { $($variant),* }
        impl $name {
            const ALL: &'static [$name] = &[$($name::$variant),*];
        }
    };
}

listed!(Object {
    WaitingApproval,
    WaitingResume,
    ParkedRun,
    Task,
    TaskWaitingApproval,
    KeptResult,
    Receipt,
    Session,
});

listed!(Path {
    AnswerApproval,
    DecideWithToken,
    AnswerResume,
    AnswerParkedRun,
    GetTask,
    UpdateTask,
    CancelTask,
    ReadKeptResult,
    ReuseIdempotencyKey,
    UseSession,
});

listed!(Who {
    Owner,
    OtherSubject,
    Anonymous
});

/// The object a path acts on.
fn object_of(path: Path) -> Object {
    match path {
        Path::AnswerApproval | Path::DecideWithToken => Object::WaitingApproval,
        Path::AnswerResume => Object::WaitingResume,
        Path::AnswerParkedRun => Object::ParkedRun,
        Path::GetTask | Path::CancelTask => Object::Task,
        Path::UpdateTask => Object::TaskWaitingApproval,
        Path::ReadKeptResult => Object::KeptResult,
        Path::ReuseIdempotencyKey => Object::Receipt,
        Path::UseSession => Object::Session,
    }
}

/// What an attempt must get.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Expect {
    /// It works as the path promises (checked per path).
    Works,
    /// Exactly the answer a request naming no such object gets, ids aside.
    AsUnknown,
    /// HTTP 401 with a bearer challenge, before anything is read.
    Unauthorized,
}

/// The table: every path × every caller. No arm is a wildcard, so a new path or caller kind
/// does not compile until its rows are written.
fn expected(path: Path, who: Who) -> Expect {
    use Expect::*;
    match (path, who) {
        (Path::AnswerApproval, Who::Owner) => Works,
        (Path::AnswerApproval, Who::OtherSubject) => AsUnknown,
        (Path::AnswerApproval, Who::Anonymous) => Unauthorized,
        (Path::DecideWithToken, Who::Owner) => Works,
        (Path::DecideWithToken, Who::OtherSubject) => AsUnknown,
        (Path::DecideWithToken, Who::Anonymous) => Unauthorized,
        (Path::AnswerResume, Who::Owner) => Works,
        (Path::AnswerResume, Who::OtherSubject) => AsUnknown,
        (Path::AnswerResume, Who::Anonymous) => Unauthorized,
        (Path::AnswerParkedRun, Who::Owner) => Works,
        (Path::AnswerParkedRun, Who::OtherSubject) => AsUnknown,
        (Path::AnswerParkedRun, Who::Anonymous) => Unauthorized,
        (Path::GetTask, Who::Owner) => Works,
        (Path::GetTask, Who::OtherSubject) => AsUnknown,
        (Path::GetTask, Who::Anonymous) => Unauthorized,
        (Path::UpdateTask, Who::Owner) => Works,
        (Path::UpdateTask, Who::OtherSubject) => AsUnknown,
        (Path::UpdateTask, Who::Anonymous) => Unauthorized,
        (Path::CancelTask, Who::Owner) => Works,
        (Path::CancelTask, Who::OtherSubject) => AsUnknown,
        (Path::CancelTask, Who::Anonymous) => Unauthorized,
        (Path::ReadKeptResult, Who::Owner) => Works,
        (Path::ReadKeptResult, Who::OtherSubject) => AsUnknown,
        (Path::ReadKeptResult, Who::Anonymous) => Unauthorized,
        (Path::ReuseIdempotencyKey, Who::Owner) => Works,
        (Path::ReuseIdempotencyKey, Who::OtherSubject) => AsUnknown,
        (Path::ReuseIdempotencyKey, Who::Anonymous) => Unauthorized,
        (Path::UseSession, Who::Owner) => Works,
        (Path::UseSession, Who::OtherSubject) => AsUnknown,
        (Path::UseSession, Who::Anonymous) => Unauthorized,
    }
}

/// This suite's tests, named `SUITE::TEST`.
pub fn trials(suite: &str) -> Vec<libtest_mimic::Trial> {
    child_cli::trials(
        suite,
        &[(
            "every_object_on_every_path_answers_its_owner_only",
            every_object_on_every_path_answers_its_owner_only,
        )],
    )
}

/// Three instances on one PostgreSQL schema, with OAuth on.
struct Fleet {
    servers: Vec<child_cli::ServedChild>,
    store: String,
    /// Kept alive for the instances, which fetch its keys.
    _auth: AuthServer,
    alice: String,
    bob: String,
}

/// An HTTP answer: its status and its JSON-RPC message (`Null` when it has none).
#[derive(Debug)]
struct Reply {
    status: u16,
    content_type: String,
    challenge: String,
    session: Option<String>,
    body: Value,
}

impl Reply {
    /// The message without its id, with every `(id, placeholder)` replaced: what two answers
    /// about different objects share when they say the same.
    fn normalized(&self, ids: &[(String, String)]) -> String {
        let mut body = self.body.clone();
        if let Some(o) = body.as_object_mut() {
            o.remove("id");
        }
        let mut text = format!("{} {} {body}", self.status, self.content_type);
        for (id, placeholder) in ids {
            text = text.replace(id, placeholder);
        }
        text
    }

    fn result(&self) -> &Value {
        &self.body["result"]
    }

    fn text(&self) -> String {
        self.result()["content"][0]["text"].as_str().unwrap_or_default().to_owned()
    }
}

/// The JSON-RPC message of an answer (a JSON body, or the last SSE event that has one), else
/// the body's text.
fn message_of(text: &str) -> Value {
    if let Ok(v) = serde_json::from_str::<Value>(text) {
        return v;
    }
    let events = text.lines().filter_map(|l| l.strip_prefix("data:"));
    let mut messages = events
        .filter_map(|d| serde_json::from_str::<Value>(d.trim()).ok())
        .filter(|v| v.get("id").is_some());
    messages.next_back().unwrap_or_else(|| Value::String(text.to_owned()))
}

impl Fleet {
    fn url(&self, instance: usize) -> &str {
        &self.servers[instance % self.servers.len()].url
    }

    fn token(&self, who: Who) -> Option<&str> {
        match who {
            Who::Owner => Some(&self.alice),
            Who::OtherSubject => Some(&self.bob),
            Who::Anonymous => None,
        }
    }

    /// One 2026-07-28 request (capabilities: elicitation and the tasks extension).
    async fn modern(&self, instance: usize, who: Who, method: &str, name: &str, mut params: Value) -> Reply {
        let meta = json!({
            "io.modelcontextprotocol/protocolVersion": MODERN,
            "io.modelcontextprotocol/clientCapabilities": {"elicitation": {}, "extensions": {TASKS: {}}},
            "io.modelcontextprotocol/clientInfo": {"name": "matrix", "version": "1"},
        });
        let extra = params.get("_meta").cloned();
        params["_meta"] = meta;
        if let Some(Value::Object(extra)) = extra {
            params["_meta"].as_object_mut().unwrap().extend(extra);
        }
        let headers = [("MCP-Protocol-Version", MODERN), ("Mcp-Method", method), ("Mcp-Name", name)];
        self.post(
            instance,
            who,
            &headers,
            json!({"jsonrpc": "2.0", "id": 1, "method": method, "params": params}),
        )
        .await
    }

    async fn post(&self, instance: usize, who: Who, headers: &[(&str, &str)], body: Value) -> Reply {
        let mut request = reqwest::Client::new()
            .post(self.url(instance))
            .header("Accept", "application/json, text/event-stream")
            .header("Content-Type", "application/json")
            .timeout(Duration::from_secs(60))
            .body(body.to_string());
        for (k, v) in headers {
            request = request.header(*k, *v);
        }
        if let Some(token) = self.token(who) {
            request = request.bearer_auth(token);
        }
        let r = request.send().await.expect("the server answers");
        let status = r.status().as_u16();
        let header = |name: &str| r.headers().get(name).and_then(|v| v.to_str().ok()).map(str::to_owned);
        let (challenge, session) = (header("www-authenticate").unwrap_or_default(), header("mcp-session-id"));
        let content_type = header("content-type").unwrap_or_default();
        let text = r.text().await.unwrap_or_default();
        Reply {
            status,
            challenge,
            session,
            content_type,
            body: message_of(&text),
        }
    }

    async fn call(&self, instance: usize, who: Who, tool: &str, params: Value) -> Reply {
        let mut params = params;
        params["name"] = json!(tool);
        if params.get("arguments").is_none() {
            params["arguments"] = json!({});
        }
        self.modern(instance, who, "tools/call", tool, params).await
    }

    /// `toolsmith pending --json --token` on the shared store: the operator's approve token for
    /// the waiting call `id`.
    fn approve_token(&self, id: &str) -> String {
        let ran = child_cli::Ran::from(
            child_cli::toolsmith(&["--store", &self.store, "pending", "--json", "--token", "600"])
                .env("TOOLSMITH_STORE_KEY", STORE_KEY)
                .output()
                .unwrap(),
        );
        assert!(ran.ok, "pending --token failed: {}", ran.stderr);
        let listed: Value = serde_json::from_str(&ran.stdout).unwrap_or_else(|e| panic!("{e}: {}", ran.stdout));
        let entry = listed
            .as_array()
            .into_iter()
            .flatten()
            .find(|e| e["tool_call_id"] == id)
            .unwrap_or_else(|| panic!("`{id}` is not listed: {listed}"));
        entry["approve_token"].as_str().expect("an approve token").to_owned()
    }
}

/// An object of Alice's (or one that does not exist), and how each path names it.
struct Made {
    /// What the path's request names it by: a request state, a token, a task id, a URI, a key,
    /// a session id.
    handle: String,
    /// The strings that differ between two objects of the kind (replaced before answers are
    /// compared).
    ids: Vec<String>,
    /// Where it was made (an attempt goes to the next instance, a session's to its own).
    home: usize,
}

/// A request state's call id (`<id>.<seal>`).
fn call_id_of_state(state: &str) -> &str {
    state.split('.').next().unwrap_or(state)
}

const APPROVE: &str = r#"{"approval": {"action": "accept", "content": {"approved": true}}}"#;

impl Fleet {
    /// Makes Alice's object for `path` on instance `home`.
    async fn make(&self, path: Path, home: usize) -> Made {
        let asked = |r: &Reply, what: &str| -> String {
            let state = r.result()["requestState"].as_str();
            state
                .unwrap_or_else(|| panic!("{path:?}: no request state for {what}: {:?}", r.body))
                .to_owned()
        };
        let made = |handle: String, ids: Vec<String>| Made { handle, ids, home };
        match path {
            Path::AnswerApproval => {
                let r = self.call(home, Who::Owner, "authz-pay", json!({"arguments": {"amount": 7}})).await;
                let state = asked(&r, "an approval");
                made(state.clone(), vec![state])
            }
            Path::DecideWithToken => {
                let r = self.call(home, Who::Owner, "authz-pay", json!({"arguments": {"amount": 9}})).await;
                let id = call_id_of_state(&asked(&r, "an approval")).to_owned();
                made(self.approve_token(&id), vec![id])
            }
            Path::AnswerResume => {
                let r = self
                    .call(home, Who::Owner, "authz-wait", json!({"arguments": {"note": "n1"}}))
                    .await;
                let state = asked(&r, "resume data");
                made(state.clone(), vec![state])
            }
            Path::AnswerParkedRun => {
                let r = self.call(home, Who::Owner, "authz-ask", json!({})).await;
                let state = asked(&r, "a word");
                assert!(state.starts_with("mcp_input_"), "a parked run's state: {state}");
                made(state.clone(), vec![state])
            }
            Path::GetTask | Path::CancelTask | Path::UpdateTask => {
                let tool = match path {
                    Path::GetTask => "authz-task",
                    Path::CancelTask => "authz-task-slow",
                    _ => "authz-task-approve",
                };
                let r = self.call(home, Who::Owner, tool, json!({})).await;
                let id = r.result()["taskId"]
                    .as_str()
                    .unwrap_or_else(|| panic!("{path:?}: no task handle: {:?}", r.body))
                    .to_owned();
                made(id.clone(), vec![id])
            }
            Path::ReadKeptResult => {
                let r = self.call(home, Who::Owner, "authz-big", json!({})).await;
                let content = r.result()["content"].as_array().cloned().unwrap_or_default();
                let uri = content
                    .iter()
                    .filter_map(|c| c["uri"].as_str())
                    .find(|u| u.starts_with("toolsmith://results/"))
                    .unwrap_or_else(|| panic!("no kept-result link: {:?}", r.body))
                    .to_owned();
                made(uri.clone(), vec![uri.trim_start_matches("toolsmith://results/").to_owned()])
            }
            Path::ReuseIdempotencyKey => {
                let key = format!("matrix-key-{home}");
                let r = self.reuse_key(home, Who::Owner, &key).await;
                assert!(r.text().starts_with("run-"), "{:?}", r.body);
                // The handle is the key; the first run's answer is what its owner gets again.
                Made {
                    handle: key,
                    ids: vec![r.text()],
                    home,
                }
            }
            Path::UseSession => {
                let init = json!({"protocolVersion": "2025-11-25", "capabilities": {}, "clientInfo": {"name": "matrix", "version": "1"}});
                let r = self
                    .post(
                        home,
                        Who::Owner,
                        &[],
                        json!({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": init}),
                    )
                    .await;
                let session = r.session.clone().unwrap_or_else(|| panic!("no session: {r:?}"));
                let initialized = json!({"jsonrpc": "2.0", "method": "notifications/initialized"});
                let headers = [("MCP-Protocol-Version", "2025-11-25"), ("Mcp-Session-Id", session.as_str())];
                assert_eq!(self.post(home, Who::Owner, &headers, initialized).await.status, 202);
                made(session.clone(), vec![session])
            }
        }
    }

    /// What no object of the path's kind is named by: a made-up state, id, URI or session; for
    /// a decision token, one for a call that was since resolved (a token cannot be made up); for
    /// an idempotency key, one never used.
    async fn missing(&self, path: Path, home: usize) -> Made {
        let zeros = |n: usize| "0".repeat(n);
        let made = |handle: String| Made {
            ids: vec![handle.clone()],
            handle,
            home,
        };
        match path {
            Path::AnswerApproval | Path::AnswerResume => made(format!("mcp_{}.{}", zeros(32), zeros(64))),
            Path::AnswerParkedRun => made(format!(
                "mcp_input_{}.00000000-0000-0000-0000-000000000000.{}",
                zeros(32),
                zeros(64)
            )),
            Path::DecideWithToken => {
                let r = self.call(home, Who::Owner, "authz-pay", json!({"arguments": {"amount": 9}})).await;
                let state = r.result()["requestState"].as_str().expect("a waiting call").to_owned();
                let id = call_id_of_state(&state).to_owned();
                let token = self.approve_token(&id);
                let declined = child_cli::Ran::from(
                    child_cli::toolsmith(&["--store", &self.store, "call", &id, "--decline", "resolved"])
                        .env("TOOLSMITH_STORE_KEY", STORE_KEY)
                        .output()
                        .unwrap(),
                );
                assert!(declined.ok, "the operator declines it: {}", declined.stderr);
                Made {
                    handle: token,
                    ids: vec![id],
                    home,
                }
            }
            Path::GetTask | Path::UpdateTask | Path::CancelTask => made(format!("task_mcp_{}", zeros(32))),
            Path::ReadKeptResult => Made {
                handle: format!("toolsmith://results/mcp_{}", zeros(32)),
                ids: vec![format!("mcp_{}", zeros(32))],
                home,
            },
            Path::ReuseIdempotencyKey => Made {
                handle: format!("matrix-never-used-{home}"),
                ids: Vec::new(),
                home,
            },
            Path::UseSession => made(uuid_like()),
        }
    }

    async fn reuse_key(&self, instance: usize, who: Who, key: &str) -> Reply {
        let params = json!({"_meta": {"io.toolsmith/idempotencyKey": key}});
        self.call(instance, who, "authz-once", params).await
    }

    /// Takes `path` on `object` as `who`, on `instance`.
    async fn attempt(&self, path: Path, object: &Made, who: Who, instance: usize) -> Reply {
        let handle = object.handle.as_str();
        let approve: Value = serde_json::from_str(APPROVE).unwrap();
        match path {
            Path::AnswerApproval => {
                let params = json!({"arguments": {"amount": 7}, "requestState": handle, "inputResponses": approve});
                self.call(instance, who, "authz-pay", params).await
            }
            Path::DecideWithToken => {
                let params = json!({"arguments": {"amount": 9}, "_meta": {"io.toolsmith/decision": handle}});
                self.call(instance, who, "authz-pay", params).await
            }
            Path::AnswerResume => {
                let answer = json!({"resume": {"action": "accept", "content": {"ok": true}}});
                let params = json!({"arguments": {"note": "n1"}, "requestState": handle, "inputResponses": answer});
                self.call(instance, who, "authz-wait", params).await
            }
            Path::AnswerParkedRun => {
                let answer = json!({"input": {"action": "accept", "content": {"word": "yes"}}});
                let params = json!({"requestState": handle, "inputResponses": answer});
                self.call(instance, who, "authz-ask", params).await
            }
            Path::GetTask => self.modern(instance, who, "tasks/get", handle, json!({"taskId": handle})).await,
            Path::UpdateTask => {
                let params = json!({"taskId": handle, "inputResponses": approve});
                self.modern(instance, who, "tasks/update", handle, params).await
            }
            Path::CancelTask => self.modern(instance, who, "tasks/cancel", handle, json!({"taskId": handle})).await,
            Path::ReadKeptResult => self.modern(instance, who, "resources/read", handle, json!({"uri": handle})).await,
            Path::ReuseIdempotencyKey => self.reuse_key(instance, who, handle).await,
            Path::UseSession => {
                let headers = [("MCP-Protocol-Version", "2025-11-25"), ("Mcp-Session-Id", handle)];
                let list = json!({"jsonrpc": "2.0", "id": 2, "method": "tools/list", "params": {}});
                self.post(instance, who, &headers, list).await
            }
        }
    }

    /// Whether the owner's attempt did what the path promises (`Err`: what it did instead).
    async fn works(&self, path: Path, object: &Made, reply: &Reply) -> Result<(), String> {
        let ok = |cond: bool| {
            if cond {
                Ok(())
            } else {
                Err(format!("the owner's attempt did not work: {reply:?}"))
            }
        };
        let text = reply.text();
        match path {
            Path::AnswerApproval => ok(text == "paid 7"),
            Path::DecideWithToken => ok(text == "paid 9"),
            Path::AnswerResume => ok(text == "resumed n1 with true"),
            Path::AnswerParkedRun => ok(text == "heard yes"),
            Path::GetTask => ok(reply.result().to_string().contains(&format!("\"{}\"", object.handle))),
            Path::UpdateTask | Path::CancelTask => {
                ok(reply.status == 200 && reply.body.get("result").is_some() && reply.body.get("error").is_none())?;
                let got = self
                    .modern(
                        object.home,
                        Who::Owner,
                        "tasks/get",
                        &object.handle,
                        json!({"taskId": object.handle}),
                    )
                    .await;
                let status = got.result()["status"].as_str().unwrap_or_default().to_owned();
                let moved = match path {
                    Path::CancelTask => status == "cancelled",
                    _ => status == "working" || status == "completed",
                };
                if moved {
                    Ok(())
                } else {
                    Err(format!("the task did not move: {got:?}"))
                }
            }
            Path::ReadKeptResult => {
                let whole = reply.result()["contents"][0]["text"].as_str().unwrap_or_default();
                ok(whole == "secret ledger line; ".repeat(100).as_str())
            }
            Path::ReuseIdempotencyKey => ok(text == object.ids[0]),
            Path::UseSession => ok(reply.status == 200 && reply.result()["tools"].is_array()),
        }
    }
}

/// A version-4-looking id no server issued.
fn uuid_like() -> String {
    "00000000-0000-4000-8000-000000000000".to_owned()
}

/// Starts the fleet: a fresh schema, migrated; three stateful instances (2025 sessions, and
/// 2026-07-28 requests on their own) with OAuth and a small model output (so results are kept).
async fn fleet(url: &str) -> (Fleet, String) {
    let schema = pg::fresh_schema(url).await.expect("a fresh schema");
    let store = pg::url_in_schema(url, &schema);
    let migrated = child_cli::Ran::from(
        child_cli::toolsmith(&["--store", &store, "store", "migrate"])
            .env("TOOLSMITH_STORE_KEY", STORE_KEY)
            .output()
            .unwrap(),
    );
    assert!(migrated.ok, "store migrate: {}", migrated.stderr);
    let auth = AuthServer::start().await;
    let servers = (0..3)
        .map(|_| {
            let args = [
                "--store",
                &store,
                "serve",
                "--http",
                "127.0.0.1:0",
                "--auth-issuer",
                &auth.issuer,
                "--auth-resource",
                RESOURCE,
                "--required-scope",
                "mcp",
                "--max-model-output",
                "48",
            ];
            child_cli::ServedChild::start(child_cli::toolsmith(&args).env("TOOLSMITH_STORE_KEY", STORE_KEY))
        })
        .collect();
    let alice = auth.mint("k1", &auth.claims(RESOURCE, "alice", "mcp"));
    let bob = auth.mint("k1", &auth.claims(RESOURCE, "bob", "mcp"));
    let fleet = Fleet {
        servers,
        store,
        _auth: auth,
        alice,
        bob,
    };
    (fleet, schema)
}

fn every_object_on_every_path_answers_its_owner_only() {
    let url = match pg::postgres() {
        pg::Postgres::Url(url) => url,
        pg::Postgres::Skipped(why) => return eprintln!("{why}"),
        pg::Postgres::Missing(why) => panic!("{why}"),
    };
    for object in Object::ALL {
        assert!(
            Path::ALL.iter().any(|p| object_of(*p) == *object),
            "no path of the matrix reaches {object:?}: add its paths and their rows"
        );
    }
    child_cli::block_on(async {
        let (fleet, schema) = fleet(&url).await;
        let mut failures = Vec::new();
        for (n, &path) in Path::ALL.iter().enumerate() {
            let home = n % 3;
            // A session lives on its instance; everything else is reached from another one.
            let there = if path == Path::UseSession { home } else { home + 1 };
            let object = fleet.make(path, home).await;
            // What a request naming no such object is told (asked by the owner, on the same
            // instance the attempts go to).
            let missing = fleet.missing(path, home).await;
            let unknown = fleet.attempt(path, &missing, Who::Owner, there).await;
            let placeholders =
                |made: &Made| -> Vec<(String, String)> { made.ids.iter().map(|id| (id.clone(), "OBJECT".to_owned())).collect() };
            let runs = |text: &str| -> Vec<(String, String)> {
                // A run's own name differs between any two runs.
                text.split(|c: char| c == '"' || c.is_whitespace())
                    .filter(|w| w.starts_with("run-"))
                    .map(|w| (w.to_owned(), "RUN".to_owned()))
                    .collect()
            };
            // Anonymous, then the other subject, then the owner: a refused attempt must leave
            // the object as it was, so the owner's attempt after them still works.
            let order = [Who::Anonymous, Who::OtherSubject, Who::Owner];
            assert_eq!(order.len(), Who::ALL.len(), "every kind of caller is tried");
            for who in order {
                let reply = fleet.attempt(path, &object, who, there).await;
                let row = match expected(path, who) {
                    Expect::Works => fleet.works(path, &object, &reply).await,
                    Expect::Unauthorized if reply.status == 401 && reply.challenge.starts_with("Bearer ") => Ok(()),
                    Expect::Unauthorized => Err(format!("not refused with a 401 challenge: {reply:?}")),
                    Expect::AsUnknown => {
                        let mut ours = placeholders(&object);
                        ours.extend(runs(&reply.body.to_string()));
                        let mut theirs = placeholders(&missing);
                        theirs.extend(runs(&unknown.body.to_string()));
                        let (got, unknown) = (reply.normalized(&ours), unknown.normalized(&theirs));
                        if got != unknown {
                            Err(format!(
                                "told more than an unknown object tells:\n    got      {got}\n    unknown  {unknown}"
                            ))
                        } else if path == Path::ReuseIdempotencyKey && reply.text() == object.ids[0] {
                            Err("answered from the owner's receipt".into())
                        } else if reply.body.to_string().contains("secret ledger") {
                            Err(format!("given the owner's result: {reply:?}"))
                        } else {
                            Ok(())
                        }
                    }
                };
                if let Err(why) = row {
                    failures.push(format!("{path:?} × {who:?} (expected {:?}): {why}", expected(path, who)));
                }
            }
        }
        // The audit trail names who decided each: Alice's decisions over MCP as hers, the
        // operator's (the command line's decline of the resolved-token baseline) as the
        // operator's, and nothing of Bob's or an anonymous client's refused attempts.
        let listed = child_cli::Ran::from(
            child_cli::toolsmith(&["--store", &fleet.store, "audit", "list", "--json"])
                .env("TOOLSMITH_STORE_KEY", STORE_KEY)
                .output()
                .unwrap(),
        );
        assert!(listed.ok, "audit list: {}", listed.stderr);
        let rows: Vec<Value> = listed.stdout.lines().filter_map(|l| serde_json::from_str(l).ok()).collect();
        let by = |actor: &str, action: &str, tool: &str| {
            rows.iter()
                .filter(|r| r["actor"] == actor && r["action"] == action && r["tool"] == tool)
                .count()
        };
        assert_eq!(
            by("caller:subject:alice", "approve", "authz-pay"),
            2,
            "the state's and the token's: {rows:?}"
        );
        assert_eq!(
            rows.iter()
                .filter(|r| r["actor"] == "caller:subject:alice" && r["token"] == true)
                .count(),
            1,
            "{rows:?}"
        );
        assert_eq!(by("caller:subject:alice", "resume", "authz-wait"), 1, "{rows:?}");
        assert_eq!(by("caller:subject:alice", "approve", "authz-task-approve"), 1, "{rows:?}");
        assert_eq!(by("caller:subject:alice", "cancel-task", "authz-task-slow"), 1, "{rows:?}");
        assert_eq!(by("operator", "reject", "authz-pay"), 1, "{rows:?}");
        assert!(
            rows.iter()
                .all(|r| r["actor"] == "caller:subject:alice" || r["actor"] == "operator"),
            "only Alice and the operator decided anything: {rows:?}"
        );
        drop(fleet);
        pg::drop_schema(&url, &schema).await;
        assert!(failures.is_empty(), "rows of the matrix that fail:\n{}", failures.join("\n"));
    });
}
