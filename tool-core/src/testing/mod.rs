//! The test kit: test a tool in one line, over MCP in-process, against a scripted model, and
//! snapshot its schemas. Feature `testing` (not in `default`; enable it in dev-dependencies:
//! `tool-core = { version = "…", features = ["testing"] }`).
//!
//! Owns nothing the tools run with; it drives the real paths and records what they do:
//!
//! - [`call`]: one call through the runtime, with a request context, the fake clock
//!   ([`Call::fake_clock`]), a scripted MCP client (elicitation and sampling answers) and, in
//!   the [`Called`] it returns, the output or error, the writer's chunks, the `tracing` logs and
//!   spans, the MCP progress and log notifications and the hooks that ran (`hooks`, `capture`,
//!   `client`);
//! - [`McpPair`]: the registry's MCP server and `rmcp`'s client, connected in memory (`mcp`);
//! - [`ScriptedStream`] and [`replay`]: provider streams built from tool calls, and any stream
//!   (built or recorded) fed through [`Runtime::stream`](crate::runtime::Runtime::stream)
//!   (`scripted`, `replay`);
//! - [`assert_tool_schema_snapshot!`](crate::assert_tool_schema_snapshot) and
//!   [`assert_catalog_snapshot!`](crate::assert_catalog_snapshot): `insta` snapshots of a tool's
//!   schemas and of a catalog in one provider's format (`snapshot`).
//!
//! ```
//! use tool_core::prelude::*;
//! use tool_core::testing::{self, ScriptedStream};
//!
//! /// Weather for a city
//! #[tool(id = "kit-doc-weather")]
//! async fn weather(city: String) -> String {
//!     format!("sunny in {city}")
//! }
//!
//! # tokio::runtime::Builder::new_current_thread().enable_all().build().unwrap().block_on(async {
//! let got = ScriptedStream::anthropic()
//!     .tool_call("toolu_1", "kit-doc-weather", json!({"city": "Paris"}))
//!     .chunk_size(5)
//!     .replay()
//!     .tools([weather::tool()])
//!     .await;
//! assert_eq!(got.result_of("toolu_1"), json!("sunny in Paris"));
//! assert_eq!(got.previews("toolu_1").last(), Some(&json!({"city": "Paris"})));
//! # });
//! ```

mod call;
mod capture;
mod client;
mod hooks;
mod mcp;
mod replay;
mod scripted;
mod snapshot;

pub use call::{Call, Called, call};
pub use capture::{Capture, Captured, Log, SpanRecord};
pub use client::{Answers, McpLog, Progress, ScriptedClient};
pub use hooks::{Hook, HookCall, HookLog};
pub use mcp::{McpCall, McpPair};
pub use replay::{Replay, Replayed, replay};
pub use scripted::ScriptedStream;
pub use snapshot::{catalog_snapshot, tool_schema_snapshot};

/// `insta`, for the snapshot macros (and for tests that want its other assertions).
pub use insta;
