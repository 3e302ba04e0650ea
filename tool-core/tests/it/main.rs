//! tool-core's integration tests, in one binary: modules by subject. The tests that need real
//! child processes are in the `processes` binary.

#[path = "../support/mod.rs"]
#[allow(dead_code)]
mod support;

pub mod call;
pub mod catalog;
pub mod kit;
pub mod mcp;
pub mod runtime;
pub mod schema;
pub mod stream;
