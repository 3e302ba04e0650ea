//! The runtime with the conversation's loaded set (`CallOptions::loaded_tools`): a deferred
//! tool the conversation has not loaded is refused as unknown, saying to search first; a loaded
//! one runs as any tool (its `to_model_output` applied); without a set nothing changes; a call
//! that waits keeps the set and hands it back when continued; a catalog's deferral rule
//! (`CallOptions::deferral`) decides which tools are deferred instead of their own.

use std::sync::atomic::{AtomicU32, Ordering};

use tool_core::catalog::{Catalog, Deferral, LoadedTools};
use tool_core::prelude::*;
use tool_core::runtime::{Outcome, ResumeOptions, Runtime};
use tool_core::{Dialect, ErrorKind};

static RAN: AtomicU32 = AtomicU32::new(0);

fn receipt(id: &String) -> ModelOutput {
    ModelOutput::text(format!("refund receipt {id}"))
}

/// Refund an order to the customer's card
#[tool(id = "lt_refund", defer_loading, to_model_output = receipt)]
async fn refund(
    /// The order
    order: String,
) -> String {
    RAN.fetch_add(1, Ordering::SeqCst);
    order
}

/// Cancel an order before it ships (a person approves)
#[tool(id = "lt_cancel", defer_loading, require_approval)]
async fn cancel(
    /// The order
    order: String,
) -> String {
    format!("cancelled {order}")
}

/// The time now
#[tool(id = "lt_now")]
async fn now() -> String {
    "noon".into()
}

fn tools() -> Registry {
    Registry::from_iter([refund::tool(), cancel::tool(), now::tool()])
}

fn runtime() -> Runtime {
    Runtime::new(tools())
}

#[tokio::test]
async fn a_deferred_tool_not_loaded_is_refused_and_a_loaded_one_runs() {
    let runtime = runtime();
    let before = RAN.load(Ordering::SeqCst);
    let run = runtime
        .call(
            "lt_refund",
            json!({"order": "A-1"}),
            CallOptions::default().loaded_tools(LoadedTools::default()),
        )
        .finish()
        .await;
    let Outcome::Failed(error) = run.outcome else {
        panic!("{:?}", run.outcome)
    };
    assert_eq!(error.kind(), ErrorKind::UnknownTool);
    assert_eq!(
        error.message(),
        "The tool `lt_refund` is not loaded: find it with `search_tools` first"
    );
    assert_eq!(RAN.load(Ordering::SeqCst), before, "the refused tool ran");

    // A tool loaded up front needs no search.
    let run = runtime
        .call("lt_now", json!({}), CallOptions::default().loaded_tools(LoadedTools::default()))
        .finish()
        .await;
    assert!(matches!(run.outcome, Outcome::Done(_)), "{:?}", run.outcome);

    // Found by the catalog's search: loaded, then it runs as any tool.
    let catalog = Catalog::new("agent", "1.0.0", tools());
    let mut loaded = LoadedTools::default();
    catalog
        .answer_search(Dialect::OpenAiChat, &json!({"query": "refund an order", "limit": 1}), &mut loaded)
        .unwrap();
    assert!(loaded.contains("lt_refund"), "{loaded:?}");
    let run = runtime
        .call(
            "lt_refund",
            json!({"order": "A-1"}),
            CallOptions::default().loaded_tools(loaded.clone()),
        )
        .finish()
        .await;
    let Outcome::Done(output) = run.outcome else {
        panic!("{:?}", run.outcome)
    };
    assert_eq!(output.for_model(), ModelOutput::text("refund receipt A-1"));
    assert_eq!(RAN.load(Ordering::SeqCst), before + 1);
}

#[tokio::test]
async fn without_a_loaded_set_deferred_tools_run_as_before() {
    let run = runtime()
        .call("lt_refund", json!({"order": "B-2"}), CallOptions::default())
        .finish()
        .await;
    assert!(matches!(run.outcome, Outcome::Done(_)), "{:?}", run.outcome);
}

#[tokio::test]
async fn a_waiting_call_keeps_the_loaded_set_and_hands_it_back() {
    let runtime = runtime();
    let mut loaded = LoadedTools::default();
    loaded.extend(["lt_cancel", "lt_refund"]);
    let stream = runtime.call(
        "lt_cancel",
        json!({"order": "C-3"}),
        CallOptions::default().loaded_tools(loaded.clone()),
    );
    assert_eq!(stream.loaded_tools(), Some(&loaded));
    let Outcome::AwaitingApproval(waiting) = stream.finish().await.outcome else {
        panic!()
    };
    let pending = runtime.pending().await.unwrap();
    assert_eq!(pending[0].data.loaded_tools.as_ref(), Some(&loaded));
    let stream = runtime.approve(waiting.id(), ResumeOptions::default()).await.unwrap();
    assert_eq!(stream.loaded_tools(), Some(&loaded), "the stored set, handed back");
    let Outcome::Done(output) = stream.finish().await.outcome else {
        panic!()
    };
    assert_eq!(output.value(), json!("cancelled C-3"));
}

#[tokio::test]
async fn the_catalogs_deferral_decides_what_the_runtime_refuses() {
    let runtime = runtime();
    // Everything but `lt_refund` deferred: `lt_now` (loaded up front by its own declaration)
    // is refused, `lt_refund` (deferred by its own) runs without a search.
    let catalog = Catalog::new("agent", "1.0.0", tools()).defer_all_except(["lt_refund"]);
    let options = || {
        CallOptions::default()
            .loaded_tools(LoadedTools::default())
            .deferral(catalog.deferral().clone())
    };
    let run = runtime.call("lt_now", json!({}), options()).finish().await;
    let Outcome::Failed(error) = run.outcome else {
        panic!("{:?}", run.outcome)
    };
    assert_eq!(error.kind(), ErrorKind::UnknownTool);
    assert!(error.message().contains("`lt_now` is not loaded"), "{}", error.message());
    let run = runtime.call("lt_refund", json!({"order": "D-4"}), options()).finish().await;
    assert!(matches!(run.outcome, Outcome::Done(_)), "{:?}", run.outcome);

    // `defer_none`: the declared-deferred tool runs with nothing loaded.
    let none = Catalog::new("agent", "1.0.0", tools()).defer_none();
    let run = runtime
        .call(
            "lt_refund",
            json!({"order": "D-5"}),
            CallOptions::default()
                .loaded_tools(LoadedTools::default())
                .deferral(none.deferral().clone()),
        )
        .finish()
        .await;
    assert!(matches!(run.outcome, Outcome::Done(_)), "{:?}", run.outcome);

    // A tag rule: the tools carrying it wait; a waiting call keeps the rule with its data.
    let tagged = Deferral::tagged(["orders"]);
    let mut loaded = LoadedTools::default();
    loaded.extend(["lt_cancel"]);
    let stream = runtime.call(
        "lt_cancel",
        json!({"order": "D-6"}),
        CallOptions::default().loaded_tools(loaded).deferral(tagged.clone()),
    );
    let Outcome::AwaitingApproval(_) = stream.finish().await.outcome else {
        panic!()
    };
    let pending = runtime.pending().await.unwrap();
    let stored = pending.iter().find(|p| p.args["order"] == "D-6").unwrap();
    assert_eq!(stored.data.deferral.as_ref(), Some(&tagged));
}
