//! Full results of calls whose model view was cut, kept for the client to read.
//!
//! Owns the `toolsmith://results/<call-id>` address. A cut result's content carries a
//! `resource_link` to it; `resources/read` on it returns the full result to the caller that made
//! the call and to no other. Where results are kept is the runtime store's
//! ([`ResultStore`], [`MemoryResults`]): the runtime's SQLite or PostgreSQL
//! store when it has one (so any instance sharing it answers `resources/read`), else this
//! process's memory. What is cut, and how, is the budget's ([`crate::budget`]); when a link is
//! offered is the call's (`convert`).

pub(crate) use crate::runtime::{KeptResult, MemoryResults, ResultError, ResultLimits, ResultStore};

/// The scheme and path every kept result's address starts with.
pub const RESULTS_URI: &str = "toolsmith://results/";

/// The address of call `call_id`'s full result.
pub(super) fn result_uri(call_id: &str) -> String {
    format!("{RESULTS_URI}{call_id}")
}
