//! The audit trail: every decision on a call, a task, a receipt or a pin, appended to the store.
//!
//! Owns who decided ([`Actor`]), what one row records ([`AuditRecord`], [`AuditAction`]), a
//! listed row ([`AuditEntry`]: intact, or damaged with why), a listing's filter
//! ([`AuditFilter`]) and how the runtime appends a row ([`record`]). The store trait and its
//! in-memory backend are `store::audit`'s; the SQLite and PostgreSQL tables are their stores'.
//!
//! A row says who, when, which call, tool or task, and what: never argument values, resume
//! data, results or reasons (an edit records the SHA-256 digests of the old and the new
//! arguments, [`crate::fingerprint::hash`]), never a secret (a token decision records that a
//! token was used, not the token).
//!
//! # When a row is appended, and why then
//!
//! After the decision is *accepted* and before it *takes effect*: for a waiting call, once the
//! call is claimed and the decision validated (bound to the call, an edit's arguments valid, a
//! result matching the output schema), before the tool runs or the call is forgotten. Before
//! the claim, a refused decision (an unknown call, another process holding it, a stale binding)
//! would leave a row for something that never happened; after the effect, a process dying while
//! the tool runs (exactly when the record matters) would leave the effect without its row. A
//! decision that is one statement of the store (cancelling a task, clearing a receipt,
//! accepting a pin, expiring calls) is accepted and takes effect at once: its row is appended
//! right after that statement succeeds.
//!
//! Appending never fails a decision: a store that refuses the row is logged as a warning (the
//! action, the actor, the call and tool ids and the store's error; never arguments), and the
//! decision goes on. The rows are append-only through the API ([`AuditStore`] can append,
//! list and expire, nothing else) and tagged like the store's other rows, so a row edited in the
//! database is listed as damaged.

use std::time::{SystemTime, UNIX_EPOCH};

use serde::{Deserialize, Serialize};

use super::store::AuditStore;

/// Who made a decision.
///
/// ```
/// use tool_core::Caller;
/// use tool_core::runtime::Actor;
///
/// assert_eq!(Actor::Operator.to_string(), "operator");
/// let alice = Actor::from(&Caller::new("alice", ["crm.read"]));
/// assert_eq!(alice, Actor::Caller("subject:alice".into()));
/// assert_eq!(alice.to_string().parse::<Actor>().unwrap(), alice);
/// assert_eq!(Actor::default(), Actor::Application);
/// assert_eq!(Actor::of(None), Actor::Anonymous);
/// assert_eq!("anonymous".parse::<Actor>().unwrap(), Actor::Anonymous);
/// ```
#[derive(Debug, Clone, Default, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(into = "String", try_from = "String")]
pub enum Actor {
    /// The operator at the command line (`toolsmith`), who may see and decide everything.
    Operator,
    /// An authenticated caller, by its owner key ([`Caller::owner`](crate::Caller::owner):
    /// `subject:<sub>` or `bearer-token`).
    Caller(String),
    /// A client with no identity (stdio, an open HTTP endpoint): an MCP request's when the
    /// transport established no caller.
    Anonymous,
    /// The application, through the Rust API, naming no one (the default).
    #[default]
    Application,
}

impl Actor {
    /// The actor of a request whose transport established `caller` (none: [`Actor::Anonymous`]).
    pub fn of(caller: Option<&crate::caller::Caller>) -> Actor {
        caller.map_or(Actor::Anonymous, Actor::from)
    }
}

impl From<&crate::caller::Caller> for Actor {
    fn from(caller: &crate::caller::Caller) -> Actor {
        Actor::Caller(caller.owner())
    }
}

impl std::fmt::Display for Actor {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Actor::Operator => f.write_str("operator"),
            Actor::Caller(owner) => write!(f, "caller:{owner}"),
            Actor::Anonymous => f.write_str("anonymous"),
            Actor::Application => f.write_str("application"),
        }
    }
}

/// A text that names no [`Actor`].
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("`{0}` is not an actor: expected `operator`, `application` or `caller:<owner>`")]
pub struct UnknownActor(String);

impl std::str::FromStr for Actor {
    type Err = UnknownActor;
    fn from_str(text: &str) -> Result<Actor, UnknownActor> {
        match text {
            "operator" => Ok(Actor::Operator),
            "application" => Ok(Actor::Application),
            "anonymous" => Ok(Actor::Anonymous),
            other => match other.strip_prefix("caller:") {
                Some(owner) if !owner.is_empty() => Ok(Actor::Caller(owner.to_owned())),
                _ => Err(UnknownActor(other.chars().take(64).collect())),
            },
        }
    }
}

impl From<Actor> for String {
    fn from(actor: Actor) -> String {
        actor.to_string()
    }
}

impl TryFrom<String> for Actor {
    type Error = UnknownActor;
    fn try_from(text: String) -> Result<Actor, UnknownActor> {
        text.parse()
    }
}

/// What was decided.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "action", rename_all = "kebab-case")]
pub enum AuditAction {
    /// A call waiting for approval was approved.
    Approve,
    /// A call waiting for approval was declined (rejected); it never runs.
    Reject,
    /// A call waiting for approval was approved with other arguments.
    Edit {
        /// The digest of the arguments the call waited with.
        args_before: String,
        /// The digest of the arguments it runs with.
        args_after: String,
    },
    /// Resume data was supplied to a suspended call (the data is not recorded).
    Resume,
    /// A client-side call was completed with its result (the result is not recorded).
    SubmitResult,
    /// A background task was cancelled.
    CancelTask {
        /// The task.
        task_id: String,
    },
    /// An idempotent call's receipt was cleared, so the call may run once more.
    ClearReceipt {
        /// The digest of its idempotency key (never the key).
        key_digest: String,
    },
    /// A pinned remote tool's changed definition was accepted.
    AcceptPin {
        /// The provider.
        provider: String,
        /// The connection.
        connection: String,
        /// The accepted definition's fingerprint.
        fingerprint: String,
    },
    /// A call waited past the store's retention and was removed unanswered (never run).
    Expire,
}

impl AuditAction {
    /// Its name (`approve`, `reject`, `edit`, `resume`, `submit-result`, `cancel-task`,
    /// `clear-receipt`, `accept-pin`, `expire`).
    pub fn name(&self) -> &'static str {
        match self {
            AuditAction::Approve => "approve",
            AuditAction::Reject => "reject",
            AuditAction::Edit { .. } => "edit",
            AuditAction::Resume => "resume",
            AuditAction::SubmitResult => "submit-result",
            AuditAction::CancelTask { .. } => "cancel-task",
            AuditAction::ClearReceipt { .. } => "clear-receipt",
            AuditAction::AcceptPin { .. } => "accept-pin",
            AuditAction::Expire => "expire",
        }
    }
}

/// One decision as the audit trail keeps it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct AuditRecord {
    /// The row's id (`audit_…`, drawn when it was made).
    pub id: String,
    /// When, in milliseconds since the Unix epoch.
    pub at_ms: u64,
    /// Who.
    pub actor: Actor,
    /// What.
    #[serde(flatten)]
    pub action: AuditAction,
    /// The call it decided, when it decided one.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub call_id: Option<String>,
    /// The tool concerned, when known.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tool: Option<String>,
    /// The decision came in a signed decision token (the token is not recorded).
    #[serde(default)]
    pub token: bool,
    /// The decision ran again a call whose earlier run was interrupted
    /// ([`ResumeOptions::rerun`](super::ResumeOptions::rerun)).
    #[serde(default)]
    pub rerun: bool,
}

impl AuditRecord {
    /// A record of `action` by `actor`, now, with a fresh id.
    pub fn new(actor: Actor, action: AuditAction) -> AuditRecord {
        AuditRecord {
            id: format!("audit_{}", crate::call::new_call_id().trim_start_matches("call_")),
            at_ms: now_ms(),
            actor,
            action,
            call_id: None,
            tool: None,
            token: false,
            rerun: false,
        }
    }

    /// The call and its tool.
    pub fn call(mut self, call_id: &str, tool: &str) -> AuditRecord {
        self.call_id = Some(call_id.to_owned());
        self.tool = Some(tool.to_owned());
        self
    }
}

/// One listed row: a record whose checks passed, or a damaged row with its id and why.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum AuditEntry {
    /// An intact row.
    Recorded(AuditRecord),
    /// A row that fails its checks (edited in the database, unreadable): never shown as a
    /// decision.
    Damaged {
        /// The row's id as stored.
        id: String,
        /// What is wrong with it (never the stored text).
        reason: String,
    },
}

/// Which rows a listing shows (every row by default), oldest first.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct AuditFilter {
    /// Only rows made at or after this time (milliseconds since the Unix epoch).
    pub since_ms: Option<u64>,
    /// Only rows about this call.
    pub call_id: Option<String>,
}

impl AuditFilter {
    /// Whether a row made at `at_ms` about `call_id` is shown.
    pub fn matches(&self, at_ms: u64, call_id: Option<&str>) -> bool {
        self.since_ms.is_none_or(|since| at_ms >= since) && self.call_id.as_deref().is_none_or(|c| call_id == Some(c))
    }
}

/// Appends `record` to `store`; a refusal is logged as a warning (never arguments) and does not
/// fail the decision (see the module's doc for when this is called).
pub(crate) async fn record(store: &dyn AuditStore, record: AuditRecord) {
    if let Err(error) = store.append(&record).await {
        tracing::warn!(
            action = record.action.name(),
            actor = %record.actor,
            call_id = record.call_id.as_deref().unwrap_or("-"),
            tool = record.tool.as_deref().unwrap_or("-"),
            %error,
            "the audit row of a decision could not be written; the decision stands"
        );
    }
}

/// Records that `actor` cancelled the task `task_id` of `tasks` (its tool and call read back
/// from the store when it still answers).
pub(crate) async fn task_cancelled(audit: &dyn AuditStore, tasks: &dyn super::store::TaskStore, task_id: &str, actor: Actor) {
    let mut row = AuditRecord::new(
        actor,
        AuditAction::CancelTask {
            task_id: task_id.to_owned(),
        },
    );
    if let Ok(Some(task)) = tasks.get_task(task_id).await {
        row.tool = Some(task.task.tool_name.clone());
        row.call_id = task.task.data.tool_call_id.clone();
    }
    record(audit, row).await;
}

pub(crate) fn now_ms() -> u64 {
    let since_epoch = SystemTime::now().duration_since(UNIX_EPOCH).unwrap_or_default();
    u64::try_from(since_epoch.as_millis()).unwrap_or(u64::MAX)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn records_read_back_and_actors_round_trip() {
        let edit = AuditAction::Edit {
            args_before: "sha256:a".into(),
            args_after: "sha256:b".into(),
        };
        let mut row = AuditRecord::new(Actor::Caller("subject:alice".into()), edit).call("call_1", "send");
        row.token = true;
        let json = serde_json::to_value(&row).unwrap();
        assert_eq!(json["actor"], "caller:subject:alice");
        assert_eq!(json["action"], "edit");
        assert_eq!(json["args_before"], "sha256:a");
        assert_eq!(serde_json::from_value::<AuditRecord>(json).unwrap(), row);
        for bad in ["", "caller:", "root"] {
            assert!(bad.parse::<Actor>().is_err(), "{bad}");
        }
        let filter = AuditFilter {
            since_ms: Some(10),
            call_id: Some("c".into()),
        };
        assert!(filter.matches(10, Some("c")));
        assert!(!filter.matches(9, Some("c")));
        assert!(!filter.matches(10, None));
    }
}
