//! The audit trail, against every backend ([`CASES`]: memory, a SQLite file, PostgreSQL): rows
//! appended from several handles, listed in order, filtered by time and call, expired; every
//! decision of the runtime recorded with its actor and never an argument value; the retention
//! removing old rows. And through the real command line ([`STORE_CASES`]: SQLite and PostgreSQL):
//! a scripted run of approve, decline, edit, a token decision, a cancelled task and a cleared
//! receipt, then `toolsmith audit list` showing exactly those, `--call` filtering, and a row
//! edited with SQL listed as damaged.

use std::time::Duration;

use serde_json::{Value, json};
use tool_core::prelude::*;
use tool_core::runtime::backend::{AuditStore, NewTask, ReceiptClaim};
use tool_core::runtime::{
    Actor, Answer, AuditAction, AuditEntry, AuditFilter, AuditRecord, Decision, DecisionKey, Outcome, ResumeOptions, Runtime, STORE_KEY_ENV,
};

use super::{Backend, Case, KEY, child_cli, fresh_ledger, pg};

/// The cases every backend passes.
pub const CASES: &[(&str, Case)] = &[
    ("audit_rows_are_appended_listed_filtered_and_expired", |b| Box::pin(contract(b))),
    ("every_runtime_decision_is_audited_with_its_actor_and_no_arguments", |b| {
        Box::pin(runtime_decisions(b))
    }),
];

/// The cases of the stores the command line opens (SQLite, PostgreSQL).
pub const STORE_CASES: &[(&str, Case)] = &[(
    "audit_through_the_cli_records_decisions_lists_filters_and_shows_an_edited_row_as_damaged",
    |b| Box::pin(through_the_cli(b)),
)];

/// What the user answers a suspended call.
#[derive(Debug, Serialize, Deserialize, JsonSchema)]
pub struct AuditReply {
    /// Whether to go on
    pub go: bool,
}

/// Asks the user before going on (suspends until resumed)
#[tool(id = "suite-audit-ask", resume = AuditReply)]
async fn suite_audit_ask(
    /// What to do
    what: String,
    #[ctx] cx: ToolContext<RequestContext, Value, AuditReply>,
) -> Result<String, ToolError> {
    match cx.resume_data()? {
        None => Err(cx.suspend(json!({"question": "go on?"}))),
        Some(AuditReply { go }) => Ok(format!("{what}: {go}")),
    }
}

/// What the browser shows.
#[derive(Debug, Serialize, Deserialize, JsonSchema)]
pub struct AuditShown {
    /// Whether it was shown
    pub shown: bool,
}

/// Shows something in the browser (answered by the application)
#[tool(id = "suite-audit-show")]
fn suite_audit_show(what: String) -> AuditShown;

async fn audit_of(b: &Backend) -> std::sync::Arc<dyn AuditStore> {
    b.open().await.audit().expect("every store keeps an audit trail")
}

fn recorded(rows: Vec<AuditEntry>) -> Vec<AuditRecord> {
    rows.into_iter()
        .map(|row| match row {
            AuditEntry::Recorded(record) => record,
            damaged => panic!("an intact row was listed as {damaged:?}"),
        })
        .collect()
}

async fn contract(b: Backend) {
    let (one, two) = (audit_of(&b).await, audit_of(&b).await);
    let old = AuditRecord {
        at_ms: 1_000,
        ..AuditRecord::new(Actor::Operator, AuditAction::Approve).call("call_a", "suite-approve")
    };
    let edit = AuditAction::Edit {
        args_before: "sha256:1".into(),
        args_after: "sha256:2".into(),
    };
    let mut edit = AuditRecord::new(Actor::Caller("subject:alice".into()), edit).call("call_b", "suite-approve");
    (edit.token, edit.rerun) = (true, true);
    let cancel = AuditRecord::new(Actor::Application, AuditAction::CancelTask { task_id: "task_1".into() });
    one.append(&old).await.unwrap();
    one.append(&edit).await.unwrap();
    two.append(&cancel).await.unwrap();
    let all = AuditFilter::default();
    assert_eq!(
        recorded(two.list(&all).await.unwrap()),
        [old.clone(), edit.clone(), cancel.clone()],
        "in the order appended, from another handle, every field read back"
    );
    let by_call = AuditFilter {
        call_id: Some("call_b".into()),
        ..AuditFilter::default()
    };
    assert_eq!(recorded(one.list(&by_call).await.unwrap()), [edit.clone()]);
    let since = AuditFilter {
        since_ms: Some(edit.at_ms),
        ..AuditFilter::default()
    };
    assert_eq!(recorded(one.list(&since).await.unwrap()), [edit.clone(), cancel.clone()]);
    assert_eq!(two.expire(2_000).await.unwrap(), 1, "the old row only");
    assert_eq!(recorded(one.list(&all).await.unwrap()), [edit, cancel]);
}

/// A call of `suite-approve` that waits for approval, its ledger marked so any leak of an
/// argument value into the audit trail is found.
async fn waiting(runtime: &Runtime) -> (String, String) {
    let ledger = format!("{}-ARG-VALUE", fresh_ledger());
    let run = runtime
        .call("suite-approve", json!({"ledger": ledger}), CallOptions::default())
        .finish()
        .await;
    let Outcome::AwaitingApproval(w) = run.outcome else {
        panic!("{:?}", run.outcome)
    };
    (w.id().to_owned(), ledger)
}

async fn runtime_decisions(b: Backend) {
    let key = DecisionKey::from_bytes(b"audit suite decision key, 32 bytes").unwrap();
    let runtime = Runtime::builder(Registry::global())
        .shared_store(b.open().await)
        .decision_key(key)
        .build();
    let alice = Actor::from(&tool_core::Caller::new("alice", ["a"]));
    let (approved, declined, edited, tokened, verified) = (
        waiting(&runtime).await,
        waiting(&runtime).await,
        waiting(&runtime).await,
        waiting(&runtime).await,
        waiting(&runtime).await,
    );
    let done = |stream: tool_core::runtime::EventStream| async move { stream.finish().await.outcome };
    let operator = || ResumeOptions::default().by(Actor::Operator);
    assert!(runtime.approve("call_unknown", operator()).await.is_err(), "refused: no row");
    assert!(matches!(
        done(runtime.approve(&approved.0, operator().rerun()).await.unwrap()).await,
        Outcome::Done(_)
    ));
    let reject = runtime.decline_with(&declined.0, "no", ResumeOptions::default().by(alice.clone()));
    assert!(matches!(done(reject.await.unwrap()).await, Outcome::Declined { .. }));
    let new_args = json!({"ledger": "EDITED-ARG-VALUE"});
    let edit = Decision::new(runtime.binding(&edited.0).await.unwrap(), Answer::Edit { args: new_args.clone() });
    assert!(matches!(
        done(runtime.decide(edit, ResumeOptions::default()).await.unwrap()).await,
        Outcome::Done(_)
    ));
    let approve = |binding| Decision::new(binding, Answer::Approve);
    let token = runtime
        .sign_decision(&approve(runtime.binding(&tokened.0).await.unwrap()), Duration::from_secs(60))
        .unwrap();
    let by_token = runtime.decide_token(&token, ResumeOptions::default().by(alice.clone())).await;
    assert!(matches!(done(by_token.unwrap()).await, Outcome::Done(_)));
    // An edge that checks the token first, then decides (what the MCP server does).
    let signed = runtime
        .sign_decision(&approve(runtime.binding(&verified.0).await.unwrap()), Duration::from_secs(60))
        .unwrap();
    let decision = runtime.verify_decision(&signed).unwrap();
    assert!(matches!(
        done(runtime.decide(decision, ResumeOptions::default()).await.unwrap()).await,
        Outcome::Done(_)
    ));
    let ask = runtime
        .call("suite-audit-ask", json!({"what": "ASK-ARG-VALUE"}), CallOptions::default())
        .finish()
        .await;
    let Outcome::Suspended(asked) = ask.outcome else {
        panic!("{:?}", ask.outcome)
    };
    let resumed = runtime.resume(asked.id(), json!({"go": true}), operator()).await.unwrap();
    assert!(matches!(done(resumed).await, Outcome::Done(_)));
    let show = runtime
        .call("suite-audit-show", json!({"what": "SHOW-ARG-VALUE"}), CallOptions::default())
        .finish()
        .await;
    let Outcome::AwaitingResult(shown) = show.outcome else {
        panic!("{:?}", show.outcome)
    };
    assert!(
        runtime
            .submit_result_with(shown.id(), json!({"shown": "no"}), operator())
            .await
            .is_err(),
        "refused: no row"
    );
    let submitted = runtime
        .submit_result_with(shown.id(), json!({"shown": true}), operator())
        .await
        .unwrap();
    assert!(matches!(done(submitted).await, Outcome::Done(_)));

    // Read through another handle on the same rows.
    let rows = recorded(audit_of(&b).await.list(&AuditFilter::default()).await.unwrap());
    let seen: Vec<(&str, String, Option<&str>, bool, bool)> = rows
        .iter()
        .map(|r| (r.action.name(), r.actor.to_string(), r.call_id.as_deref(), r.token, r.rerun))
        .collect();
    fn id(c: &(String, String)) -> Option<&str> {
        Some(c.0.as_str())
    }
    assert_eq!(
        seen,
        [
            ("approve", "operator".into(), id(&approved), false, true),
            ("reject", "caller:subject:alice".into(), id(&declined), false, false),
            ("edit", "application".into(), id(&edited), false, false),
            ("approve", "caller:subject:alice".into(), id(&tokened), true, false),
            ("approve", "application".into(), id(&verified), true, false),
            ("resume", "operator".into(), Some(asked.id()), false, false),
            ("submit-result", "operator".into(), Some(shown.id()), false, false),
        ],
        "exactly the decisions that took effect, in order"
    );
    let tools: Vec<Option<&str>> = rows.iter().map(|r| r.tool.as_deref()).collect();
    assert_eq!(tools[..3], [Some("suite-approve"); 3]);
    assert_eq!(tools[5..], [Some("suite-audit-ask"), Some("suite-audit-show")]);
    assert_eq!(
        rows[2].action,
        AuditAction::Edit {
            args_before: tool_core::fingerprint::hash(&json!({"ledger": edited.1})),
            args_after: tool_core::fingerprint::hash(&new_args),
        }
    );
    let text = serde_json::to_string(&rows.iter().map(|r| serde_json::to_value(r).unwrap()).collect::<Vec<_>>()).unwrap();
    assert!(
        !text.contains("ARG-VALUE") && !text.contains("tsd1."),
        "no argument value, no token: {text}"
    );

    // The retention: rows older than it go, and a call expired unanswered is recorded.
    let audit = audit_of(&b).await;
    let old = AuditRecord {
        at_ms: 1_000,
        ..AuditRecord::new(Actor::Operator, AuditAction::Approve)
    };
    audit.append(&old).await.unwrap();
    let stale: tool_core::runtime::PendingCall = serde_json::from_value(json!({"tool_call_id": "call_stale_audit",
        "tool_name": "suite-approve", "kind": "approval", "args": {"ledger": "x"}, "created_at_ms": 1}))
    .unwrap();
    b.open().await.save(&stale).await.unwrap();
    let expired = runtime.expire(Duration::from_secs(3_600)).await.unwrap();
    assert_eq!(expired.audit, 1, "only the row older than the retention: {expired:?}");
    let after = recorded(audit.list(&AuditFilter::default()).await.unwrap());
    assert_eq!(after.len(), rows.len() + 1, "the old row gone, the expiry recorded");
    let last = after.last().unwrap();
    assert_eq!(
        (last.action.name(), last.call_id.as_deref(), last.actor.clone()),
        ("expire", Some("call_stale_audit"), Actor::Application)
    );
}

/// Where the command line finds a backend's store.
fn location(b: &Backend) -> String {
    match b {
        Backend::Sqlite(dir) => dir.path().join("pending.sqlite3").display().to_string(),
        Backend::Postgres { url, schema } => pg::url_in_schema(url, schema),
        Backend::Memory(_) => unreachable!("the memory store has no location"),
    }
}

/// `toolsmith ARGS --store AT` with the suite's store key, run to its end.
fn toolsmith(at: &str, args: &[&str]) -> child_cli::Ran {
    let mut all = args.to_vec();
    all.extend(["--store", at]);
    let mut command = child_cli::toolsmith(&all);
    command.env(STORE_KEY_ENV, std::str::from_utf8(KEY).unwrap());
    let ran = child_cli::Ran::from(command.output().expect("the child runs"));
    assert!(ran.ok, "`toolsmith {}` failed: {}{}", all.join(" "), ran.stdout, ran.stderr);
    ran
}

/// A listed row as the script checks it: action, actor, call, tool, whether a token was used.
type Listed<'a> = (&'a str, &'a str, Option<&'a str>, Option<&'a str>, bool);

/// The rows `audit list --json` printed, one object per line.
fn listed(ran: &child_cli::Ran) -> Vec<Value> {
    ran.stdout
        .lines()
        .map(|line| serde_json::from_str(line).unwrap_or_else(|e| panic!("{e}: {line}")))
        .collect()
}

/// Edits an audit row's stored record behind the store's back, as a person with SQL would:
/// the operator's decision on `call` made to look like the application's.
async fn edit_row(b: &Backend, call: &str) {
    let sql = |table: &str| {
        format!("UPDATE {table} SET record_json = replace(record_json, '\"operator\"', '\"application\"') WHERE call_id = '{call}'")
    };
    match b {
        Backend::Sqlite(dir) => {
            let db = rusqlite::Connection::open(dir.path().join("pending.sqlite3")).unwrap();
            assert_eq!(db.execute(&sql("audit"), []).unwrap(), 1);
        }
        Backend::Postgres { url, schema } => {
            let client = pg::connect(url).await.unwrap();
            assert_eq!(client.execute(&sql(&format!("{schema}.toolsmith_audit")), &[]).await.unwrap(), 1);
        }
        Backend::Memory(_) => unreachable!("the memory store has no rows to edit"),
    }
}

async fn through_the_cli(b: Backend) {
    let store = b.open().await;
    let runtime = Runtime::builder(Registry::global()).shared_store(store.clone()).build();
    let (approved, declined, edited, tokened) = (
        waiting(&runtime).await,
        waiting(&runtime).await,
        waiting(&runtime).await,
        waiting(&runtime).await,
    );
    let task: NewTask = serde_json::from_value(json!({"task_id": "task_audit", "tool_name": "suite-bg",
        "args": {"ledger": "TASK-ARG-VALUE"}, "tool_call_id": "call_task_audit", "max_retries": 0, "created_at_ms": 1}))
    .unwrap();
    b.open_tasks().await.enqueue_task(&task).await.unwrap();
    let receipts = store.receipts().expect("the store keeps receipts");
    let claim = ReceiptClaim {
        key: "RECEIPT-KEY-VALUE".into(),
        tool_name: "suite-approve".into(),
        args_digest: "a".into(),
    };
    receipts.begin(&claim, false).await.unwrap();
    receipts.finish("RECEIPT-KEY-VALUE", &json!("sent")).await.unwrap();
    let digest = receipts.list().await.unwrap()[0].key_digest.clone();

    let at = location(&b);
    let ids = [&approved.0, &declined.0, &edited.0, &tokened.0].map(String::clone);
    let script_digest = digest.clone();
    let (all, by_call) = tokio::task::spawn_blocking(move || {
        let [approved, declined, edited, tokened] = ids;
        toolsmith(&at, &["call", &approved, "--approve"]);
        toolsmith(&at, &["call", &declined, "--decline", "not today"]);
        toolsmith(&at, &["call", &edited, "--edit", r#"{"ledger": "EDITED-ARG-VALUE"}"#]);
        let token = toolsmith(&at, &["call", &tokened, "--approve", "--sign", "60"]).stdout;
        toolsmith(&at, &["call", &tokened, "--token", token.trim()]);
        toolsmith(&at, &["tasks", "cancel", "task_audit"]);
        toolsmith(&at, &["receipts", "clear", "--digest", &script_digest]);
        let all = toolsmith(&at, &["audit", "list", "--json"]);
        let by_call = toolsmith(&at, &["audit", "list", "--json", "--call", &edited]);
        (all, by_call)
    })
    .await
    .unwrap();
    assert!(
        !all.stdout.contains("ARG-VALUE") && !all.stdout.contains("RECEIPT-KEY-VALUE") && !all.stdout.contains("tsd1."),
        "no argument value, key or token: {}",
        all.stdout
    );
    let rows = listed(&all);
    let seen: Vec<Listed<'_>> = rows
        .iter()
        .map(|r| {
            let text = |k: &str| r[k].as_str();
            (
                text("action").unwrap(),
                text("actor").unwrap(),
                text("call_id"),
                text("tool"),
                r["token"] == true,
            )
        })
        .collect();
    let approve = Some("suite-approve");
    assert_eq!(
        seen,
        [
            ("approve", "operator", Some(approved.0.as_str()), approve, false),
            ("reject", "operator", Some(declined.0.as_str()), approve, false),
            ("edit", "operator", Some(edited.0.as_str()), approve, false),
            ("approve", "operator", Some(tokened.0.as_str()), approve, true),
            ("cancel-task", "operator", Some("call_task_audit"), Some("suite-bg"), false),
            ("clear-receipt", "operator", None, approve, false),
        ],
        "exactly the decisions of the script: {}",
        all.stdout
    );
    assert_eq!(rows[4]["task_id"], "task_audit");
    assert_eq!(rows[5]["key_digest"], json!(digest));
    assert!(rows[2]["args_before"].as_str().unwrap().starts_with("sha256:"), "{}", rows[2]);
    assert!(
        rows.iter().all(|r| r["at"].as_str().is_some_and(|t| t.ends_with('Z'))),
        "{}",
        all.stdout
    );
    let by_call = listed(&by_call);
    assert_eq!(by_call.len(), 1, "{by_call:?}");
    assert_eq!(by_call[0]["action"], "edit");

    edit_row(&b, &edited.0).await;
    let at = location(&b);
    let (json_list, table) =
        tokio::task::spawn_blocking(move || (toolsmith(&at, &["audit", "list", "--json"]), toolsmith(&at, &["audit", "list"])))
            .await
            .unwrap();
    let rows = listed(&json_list);
    assert_eq!(rows.len(), 6, "a damaged row is listed, not dropped: {}", json_list.stdout);
    assert_eq!(rows[2]["damaged"], true, "{}", rows[2]);
    assert!(rows[2]["reason"].as_str().unwrap().contains("integrity tag"), "{}", rows[2]);
    assert!(rows[2].get("actor").is_none(), "a damaged row is never shown as a decision");
    assert!(rows.iter().enumerate().all(|(i, r)| i == 2 || r.get("damaged").is_none()));
    assert!(table.stdout.contains("DAMAGED"), "{}", table.stdout);
    assert!(table.stdout.contains(&approved.0), "{}", table.stdout);
}
