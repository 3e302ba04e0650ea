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
//!
//! This file holds the tools, the table and the test; `fleet` starts the instances and sends
//! the requests, `objects` makes the objects and takes the paths.

use std::time::Duration;

use serde_json::{Value, json};
use tool_core::prelude::*;

use crate::support::auth_server::AuthServer;
use crate::support::child_cli;
use crate::support::postgres as pg;

mod fleet;
mod objects;

use fleet::fleet;
use objects::Made;

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
