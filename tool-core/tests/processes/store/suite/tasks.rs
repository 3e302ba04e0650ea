//! The background-task queue, against every backend ([`CASES`], run by the suite for memory,
//! SQLite and PostgreSQL): claims exclusive under concurrency, expired leases taken over, stale
//! owners refused, retries exhausted, cancellation, and two runtimes sharing the queue. And,
//! PostgreSQL only ([`POSTGRES_TESTS`]): a real `toolsmith serve` process killed with SIGKILL
//! mid-task, its task taken over by another process and completed exactly once.
//!
//! This file holds the lists of tests and the helpers they share; the tests are in `claims`,
//! `runtimes`, `retention` and `postgres_only`.

use std::collections::HashMap;
use std::future::Future;
use std::pin::Pin;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use tool_core::ToolOutput;
use tool_core::prelude::*;
use tool_core::runtime::backend::{Began, NewTask, ReceiptClaim, TaskState, TaskStore};
use tool_core::runtime::{Outcome, PostgresStore, RunEventKind, Runtime, TaskOptions};

use super::{Backend, Case, KEY, child_cli, fresh_ledger, options, pg};

mod claims;
mod postgres_only;
mod retention;
mod runtimes;

/// The cases every backend passes.
pub const CASES: &[(&str, Case)] = &[
    ("tasks_are_claimed_oldest_first_and_their_result_is_readable_everywhere", |b| {
        Box::pin(claims::round_trip(b))
    }),
    ("twenty_concurrent_claimers_take_each_task_once", |b| {
        Box::pin(claims::concurrent_claims(b))
    }),
    ("an_expired_lease_is_taken_over_and_the_stale_owner_is_refused", |b| {
        Box::pin(claims::takeover(b))
    }),
    ("retries_exhausted_end_failed_and_cancelled_tasks_never_run", |b| {
        Box::pin(claims::retries_and_cancel(b))
    }),
    ("a_background_call_queued_by_one_runtime_is_run_by_another", |b| {
        Box::pin(runtimes::two_runtimes(b))
    }),
    ("a_task_with_a_chosen_id_cancelled_while_running_stops_at_once", |b| {
        Box::pin(runtimes::cancel_running(b))
    }),
    ("a_task_that_ended_without_running_is_kept_and_never_claimed", |b| {
        Box::pin(runtimes::ended_unrun(b))
    }),
    ("an_idempotent_task_has_its_effect_once_across_attempts", |b| {
        Box::pin(runtimes::idempotent_task(b))
    }),
    ("retention_expires_ended_tasks_and_done_receipts_and_keeps_the_rest", |b| {
        Box::pin(retention::retention(b))
    }),
];

type Test = fn(String) -> Pin<Box<dyn Future<Output = Result<(), String>> + Send>>;

/// The PostgreSQL-only tests.
pub const POSTGRES_TESTS: &[(&str, Test)] = &[
    ("a_task_of_a_killed_instance_is_taken_over_and_completes_once", |url| {
        Box::pin(postgres_only::killed_instance(url))
    }),
    ("a_task_row_edited_in_the_database_is_never_run", |url| {
        Box::pin(postgres_only::edited_row(url))
    }),
];

fn task(id: &str, at: u64, max_retries: u32) -> NewTask {
    let task = json!({"task_id": id, "tool_name": "suite-bg", "args": {"ledger": id}, "context": {"api_key": "sk-1"},
        "tool_call_id": format!("call_{id}"), "max_retries": max_retries, "created_at_ms": at});
    serde_json::from_value(task).unwrap()
}

const LONG: Duration = Duration::from_secs(60);

fn receipt(key: &str) -> ReceiptClaim {
    ReceiptClaim {
        key: key.into(),
        tool_name: "suite-bg-once".into(),
        args_digest: "args".into(),
    }
}
