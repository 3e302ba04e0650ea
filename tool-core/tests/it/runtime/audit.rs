//! The audit trail never fails a decision: an audit store that refuses every row leaves the
//! approval, the decline and the task-less cancellation as they would be without it, and it
//! is asked for each decision (so the refusal is seen, and logged, not skipped).

use std::sync::Arc;
use std::sync::atomic::{AtomicU32, Ordering};

use tool_core::prelude::*;
use tool_core::runtime::backend::AuditStore;
use tool_core::runtime::{Actor, AuditEntry, AuditFilter, AuditRecord, Outcome, ResumeOptions, Runtime, StoreError};

/// Publishes a post (a person approves it first)
#[tool(id = "audit-publish", require_approval)]
async fn publish(
    /// The post's title
    title: String,
) -> String {
    format!("published {title}")
}

/// An audit store that refuses every row, counting the attempts.
#[derive(Default)]
struct Refusing(AtomicU32);

#[async_trait::async_trait]
impl AuditStore for Refusing {
    async fn append(&self, _: &AuditRecord) -> Result<(), StoreError> {
        self.0.fetch_add(1, Ordering::SeqCst);
        Err(StoreError::storage("the audit table is full"))
    }
    async fn list(&self, _: &AuditFilter) -> Result<Vec<AuditEntry>, StoreError> {
        Ok(Vec::new())
    }
    async fn expire(&self, _: u64) -> Result<u64, StoreError> {
        Ok(0)
    }
}

#[tokio::test]
async fn a_refused_audit_row_never_fails_the_decision() {
    let refusing = Arc::new(Refusing::default());
    let runtime = Runtime::builder(Registry::from_iter([publish::tool()]))
        .audit_store(refusing.clone())
        .build();
    let waiting = |title: &'static str| {
        let runtime = runtime.clone();
        async move {
            let run = runtime
                .call("audit-publish", json!({"title": title}), CallOptions::default())
                .finish()
                .await;
            let Outcome::AwaitingApproval(w) = run.outcome else {
                panic!("{:?}", run.outcome)
            };
            w.id().to_owned()
        }
    };
    let (one, two) = (waiting("a").await, waiting("b").await);
    let run = runtime
        .approve(&one, ResumeOptions::default().by(Actor::Operator))
        .await
        .unwrap()
        .finish()
        .await;
    assert!(matches!(run.outcome, Outcome::Done(_)), "{:?}", run.outcome);
    let run = runtime.decline(&two, "no").await.unwrap().finish().await;
    assert!(matches!(run.outcome, Outcome::Declined { .. }), "{:?}", run.outcome);
    assert_eq!(refusing.0.load(Ordering::SeqCst), 2, "each decision tried to append its row");
    assert!(runtime.pending().await.unwrap().is_empty());
}

#[tokio::test]
async fn a_memory_runtime_keeps_its_audit_trail() {
    let runtime = Runtime::new(Registry::from_iter([publish::tool()]));
    let run = runtime
        .call("audit-publish", json!({"title": "t"}), CallOptions::default())
        .finish()
        .await;
    let Outcome::AwaitingApproval(w) = run.outcome else {
        panic!("{:?}", run.outcome)
    };
    runtime.approve(w.id(), ResumeOptions::default()).await.unwrap().finish().await;
    let rows = runtime.audit().list(&AuditFilter::default()).await.unwrap();
    let [AuditEntry::Recorded(row)] = rows.as_slice() else {
        panic!("{rows:?}")
    };
    assert_eq!((row.action.name(), &row.actor), ("approve", &Actor::Application));
    assert_eq!(row.call_id.as_deref(), Some(w.id()));
}
