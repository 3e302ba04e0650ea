//! A call continued from the pending store (approved, resumed) and queued as a durable task
//! leaves the store once its task is queued, and only while it is still the claim this runtime
//! took: a worker on another thread may have run the task already and seen its tool suspend
//! itself again, and the waiting call it saved under the same id must survive the removal.
//!
//! The interleaving is made deterministic by the store: its removals wait until the worker has
//! saved the call again (what a worker on another thread does first under load).

use std::collections::HashMap;
use std::sync::atomic::{AtomicBool, Ordering::SeqCst};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use tool_core::prelude::*;
use tool_core::runtime::backend::{CallState, Claim, PendingStore, StoredCall, TaskStore};
use tool_core::runtime::{MemoryStore, Outcome, PendingCall, PendingKind, ResumeOptions, Runtime, StoreError, TaskOptions};

use super::background_support::PATIENCE;

/// What the tool asks.
#[derive(Serialize, Deserialize, JsonSchema)]
pub struct Question {
    /// The question
    pub question: String,
}

/// The reply it resumes with.
#[derive(Serialize, Deserialize, JsonSchema)]
pub struct Reply {
    /// `done` ends the call; anything else makes it ask again
    pub answer: String,
}

/// Needs approval, runs as a task, and asks again until the reply is `done`
#[tool(id = "race-asks-again", require_approval, background(enabled = true), suspend = Question, resume = Reply)]
pub async fn asks_again(#[ctx] cx: ToolContext<RequestContext, Question, Reply>) -> Result<String, ToolError> {
    match cx.resume_data()? {
        Some(Reply { answer }) if answer == "done" => Ok("finished".into()),
        _ => Err(cx.suspend(Question { question: "again?".into() })),
    }
}

/// A memory store whose removals, once armed, wait until the call was saved again (at most
/// [`PATIENCE`]), and which records what removed what.
#[derive(Default)]
struct LateRemoval {
    inner: MemoryStore,
    armed: AtomicBool,
    /// `state` fails (the store is unreachable) while set.
    unreadable: AtomicBool,
    saves: Mutex<HashMap<String, u32>>,
    removals: Mutex<Vec<&'static str>>,
}

impl LateRemoval {
    fn saves(&self, id: &str) -> u32 {
        self.saves.lock().unwrap().get(id).copied().unwrap_or(0)
    }

    /// Arms the next removal: it waits for a save of `id` after this one.
    fn arm(&self) {
        self.armed.store(true, SeqCst);
    }

    async fn wait_for_resave(&self, id: &str, before: u32) {
        if !self.armed.swap(false, SeqCst) {
            return;
        }
        let until = std::time::Instant::now() + PATIENCE;
        while self.saves(id) <= before && std::time::Instant::now() < until {
            tokio::time::sleep(Duration::from_millis(5)).await;
        }
    }

    fn removals(&self) -> Vec<&'static str> {
        self.removals.lock().unwrap().clone()
    }
}

#[async_trait::async_trait]
impl PendingStore for LateRemoval {
    async fn save(&self, call: &PendingCall) -> Result<(), StoreError> {
        self.inner.save(call).await?;
        *self.saves.lock().unwrap().entry(call.tool_call_id.clone()).or_default() += 1;
        Ok(())
    }
    async fn claim(&self, id: &str) -> Result<Option<PendingCall>, StoreError> {
        self.inner.claim(id).await
    }
    async fn release(&self, id: &str) -> Result<(), StoreError> {
        self.inner.release(id).await
    }
    async fn remove(&self, id: &str) -> Result<(), StoreError> {
        let before = self.saves(id);
        self.wait_for_resave(id, before).await;
        self.removals.lock().unwrap().push("remove");
        self.inner.remove(id).await
    }
    async fn remove_claimed(&self, id: &str, claim: &Claim) -> Result<bool, StoreError> {
        let before = self.saves(id);
        self.wait_for_resave(id, before).await;
        let removed = self.inner.remove_claimed(id, claim).await?;
        self.removals.lock().unwrap().push(if removed {
            "remove_claimed: removed"
        } else {
            "remove_claimed: kept"
        });
        Ok(removed)
    }
    async fn state(&self, id: &str) -> Result<Option<CallState>, StoreError> {
        if self.unreadable.load(SeqCst) {
            return Err(StoreError::storage("the store is unreachable"));
        }
        self.inner.state(id).await
    }
    async fn get(&self, id: &str) -> Result<Option<PendingCall>, StoreError> {
        self.inner.get(id).await
    }
    async fn entries(&self) -> Result<Vec<StoredCall>, StoreError> {
        self.inner.entries().await
    }
}

fn runtime(store: &Arc<LateRemoval>, tasks: &Arc<MemoryStore>) -> Runtime {
    let registry = Registry::from_iter([asks_again::tool()]);
    Runtime::builder(registry)
        .shared_store(store.clone())
        .task_store(
            tasks.clone() as Arc<dyn TaskStore>,
            TaskOptions::default().poll_interval(Duration::from_millis(10)),
        )
        .build()
}

/// A runtime over a fresh store and task queue (both returned), and the id of a `race-asks-again` call it holds for approval.
async fn awaiting_approval() -> (Arc<LateRemoval>, Arc<MemoryStore>, Runtime, String) {
    let (store, tasks) = (Arc::new(LateRemoval::default()), Arc::new(MemoryStore::new()));
    let runtime = runtime(&store, &tasks);
    let run = runtime.call("race-asks-again", json!({}), CallOptions::default()).finish().await;
    let Outcome::AwaitingApproval(waiting) = run.outcome else {
        panic!("{:?}", run.outcome)
    };
    let id = waiting.id().to_owned();
    (store, tasks, runtime, id)
}

/// The call `id` waits for resume data in the store.
async fn suspended(store: &LateRemoval, id: &str) {
    let waiting = store.get(id).await.unwrap();
    let waiting = waiting.unwrap_or_else(|| panic!("the call `{id}` is no longer in the store: nothing can resume it"));
    assert_eq!(waiting.kind, PendingKind::Suspended);
    assert_eq!(store.state(id).await.unwrap(), Some(CallState::Waiting));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_continued_call_suspended_again_by_its_task_before_the_removal_is_kept() {
    let (store, _tasks, runtime, id) = awaiting_approval().await;

    // Approved: queued as a task, whose worker runs it and sees it suspend itself before the
    // approved call's removal runs.
    store.arm();
    let approved = runtime.approve(&id, ResumeOptions::default()).await.unwrap();
    let approved = tokio::time::timeout(PATIENCE, approved.finish())
        .await
        .expect("the approved run did not end");
    assert!(matches!(approved.outcome, Outcome::Suspended(_)), "{:?}", approved.outcome);
    suspended(&store, &id).await;

    // Resumed: queued again, and suspended again before the resumed call's removal runs.
    store.arm();
    let more = runtime
        .resume(&id, json!({"answer": "more"}), ResumeOptions::default())
        .await
        .unwrap();
    let more = tokio::time::timeout(PATIENCE, more.finish())
        .await
        .expect("the resumed run did not end");
    assert!(matches!(more.outcome, Outcome::Suspended(_)), "{:?}", more.outcome);
    suspended(&store, &id).await;
    assert_eq!(
        store.removals(),
        ["remove_claimed: kept", "remove_claimed: kept"],
        "each continued call is removed only under its own claim"
    );

    // Resumed with the last reply: the task ends, and the call is gone.
    let done = runtime
        .resume(&id, json!({"answer": "done"}), ResumeOptions::default())
        .await
        .unwrap();
    let done = tokio::time::timeout(PATIENCE, done.finish())
        .await
        .expect("the last run did not end");
    let Outcome::Done(output) = done.outcome else {
        panic!("{:?}", done.outcome)
    };
    assert_eq!(output.value(), json!("finished"));
    assert_eq!(store.removals().last(), Some(&"remove_claimed: removed"));
    assert!(store.get(&id).await.unwrap().is_none(), "a finished call leaves the store");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_continued_call_whose_claim_cannot_be_read_is_not_queued_and_waits_again() {
    let (store, tasks, runtime, id) = awaiting_approval().await;
    store.unreadable.store(true, SeqCst);
    let approved = runtime.approve(&id, ResumeOptions::default()).await.unwrap();
    let approved = tokio::time::timeout(PATIENCE, approved.finish())
        .await
        .expect("the approved run did not end");
    let Outcome::Failed(error) = approved.outcome else {
        panic!("{:?}", approved.outcome)
    };
    assert!(error.message().contains("could not be queued"), "{error:?}");
    assert!(tasks.list_tasks(None, 10).await.unwrap().is_empty(), "nothing was queued");
    store.unreadable.store(false, SeqCst);
    assert_eq!(store.state(&id).await.unwrap(), Some(CallState::Waiting), "the call waits again");
    assert!(store.removals().is_empty(), "nothing was removed");
    // Approved again once the store answers: queued, and it suspends itself.
    let approved = runtime.approve(&id, ResumeOptions::default()).await.unwrap();
    let approved = tokio::time::timeout(PATIENCE, approved.finish())
        .await
        .expect("the approved run did not end");
    assert!(matches!(approved.outcome, Outcome::Suspended(_)), "{:?}", approved.outcome);
    suspended(&store, &id).await;
}
