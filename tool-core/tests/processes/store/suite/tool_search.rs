//! Tool search's loaded set kept with a waiting call, against every backend ([`CASES`]: memory,
//! a SQLite file, PostgreSQL): a deferred tool needing approval, found by the catalog's search
//! and called on one instance, is approved and run on another over the same store, which reads
//! the same loaded set back.

use tool_core::catalog::{Catalog, LoadedTools};
use tool_core::prelude::*;
use tool_core::runtime::{Outcome, ResumeOptions};
use tool_core::{Dialect, ErrorKind};

use super::{Backend, Case};

/// Delete a record from the archive for good (a person approves)
#[tool(id = "suite-archive-delete", defer_loading, require_approval)]
async fn archive_delete(
    /// The record
    record: String,
) -> String {
    format!("deleted {record}")
}

/// Read a record of the archive
#[tool(id = "suite-archive-read", defer_loading)]
async fn archive_read(
    /// The record
    record: String,
) -> String {
    format!("read {record}")
}

/// The cases every backend passes.
pub const CASES: &[(&str, Case)] = &[(
    "the_loaded_set_is_kept_with_a_waiting_call_and_read_back_on_another_instance",
    |b| Box::pin(loaded_set_travels(b)),
)];

async fn loaded_set_travels(b: Backend) {
    let (a, other) = (b.runtime().await, b.runtime().await);
    let catalog = Catalog::new(
        "agent",
        "1.0.0",
        Registry::from_iter([archive_delete::tool(), archive_read::tool()]),
    );
    let mut loaded = LoadedTools::default();
    let query = json!({"query": "delete or read an archive record", "limit": 2});
    catalog.answer_search(Dialect::OpenAiChat, &query, &mut loaded).unwrap();
    assert!(
        loaded.contains("suite-archive-delete") && loaded.contains("suite-archive-read"),
        "{loaded:?}"
    );

    // Another conversation, which searched for nothing, may not call it.
    let refused = a
        .call(
            "suite-archive-delete",
            json!({"record": "r-0"}),
            CallOptions::default().loaded_tools(LoadedTools::default()),
        )
        .finish()
        .await;
    let Outcome::Failed(error) = refused.outcome else {
        panic!("{:?}", refused.outcome)
    };
    assert_eq!(error.kind(), ErrorKind::UnknownTool, "{error:?}");

    let run = a
        .call(
            "suite-archive-delete",
            json!({"record": "r-1"}),
            CallOptions::default().loaded_tools(loaded.clone()),
        )
        .finish()
        .await;
    let Outcome::AwaitingApproval(waiting) = run.outcome else {
        panic!("{:?}", run.outcome)
    };
    let listed = other.pending().await.unwrap();
    let stored = listed
        .iter()
        .find(|p| p.tool_call_id == waiting.id())
        .expect("the other instance lists it");
    assert_eq!(stored.data.loaded_tools.as_ref(), Some(&loaded));

    let stream = other.approve(waiting.id(), ResumeOptions::default()).await.unwrap();
    assert_eq!(stream.loaded_tools(), Some(&loaded), "instance B hands back instance A's set");
    let Outcome::Done(output) = stream.finish().await.outcome else {
        panic!("not run on B")
    };
    assert_eq!(output.value(), json!("deleted r-1"));
}
