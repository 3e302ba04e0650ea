//! # Toolsmith
//!
//! Typed tools for LLM agents. Put `#[tool]` on a documented `async fn` and the tool is
//! registered at link time, with JSON Schemas derived from its Rust types, validated calls and
//! model-readable errors.
//!
//! ```
//! use tool_core::prelude::*;
//!
//! /// Add two numbers
//! #[tool]
//! pub async fn add(
//!     /// The first addend
//!     a: f64,
//!     /// The second addend
//!     b: f64,
//! ) -> f64 {
//!     a + b
//! }
//!
//! # tokio::runtime::Runtime::new().unwrap().block_on(async {
//! let registry = Registry::global();
//! let spec = registry.get("add").unwrap().spec().clone();
//! assert_eq!(spec.schemas.input["required"], json!(["a", "b"]));
//! assert_eq!(spec.schemas.input["properties"]["a"]["description"], "The first addend");
//!
//! let out = registry.call("add", r#"{"a": 2, "b": 3}"#, CallOptions::default()).await.unwrap();
//! assert_eq!(out.value(), json!(5.0));
//! assert_eq!(out.json.get(), "5.0");
//!
//! let err = registry.call("add", r#"{"a": "two"}"#, CallOptions::default()).await.unwrap_err();
//! assert!(err.message().contains("/a"));
//! # });
//! ```
//!
//! Modules, one concept each: [`spec`] (what a tool is), [`schema`] (schemas from types),
//! [`tool`](mod@tool) (the tool traits), [`call`] (validation and execution of one call), [`Registry`]
//! (the set of tools), [`isolate`] (where a tool's body runs: async workers, the blocking pool
//! or a child process), [`context`] (what a tool receives), [`Dialect`] (which model provider,
//! and what it can do), [`catalog`] (provider formats), [`stream`] and [`partial_json`]
//! (streamed model output), `runtime` (calls as runs of typed events ending in one outcome:
//! approval, suspension, background tasks, views), `mcp` (the MCP server) and `cli` (the
//! `toolsmith` command line).
//!
//! ## Features
//!
//! All on by default. With `default-features = false` a crate that only defines tools gets the
//! macro, the registry, validated calls, catalogs and the stream decoders, and none of the heavy
//! parts: `runtime` (runs, approval, suspension, background tasks), `sqlite` (the SQLite store
//! for waiting calls; bundled SQLite), `mcp` (the MCP server: rmcp, axum), `oauth` (the MCP
//! HTTP server as an OAuth 2.1 resource server: jsonwebtoken, reqwest), `check`
//! ([`Registry::check`]: every tool tested against its own schemas), `isolate` (tools in a child
//! process with resource limits: libc, Tokio's process support) and `cli` (the `toolsmith`
//! command line: clap; implies the others). `testing` (the test kit, `tool_core::testing`: for
//! dev-dependencies; not in `default`).

#![warn(missing_docs)]
#![cfg_attr(docsrs, feature(doc_cfg))]

extern crate self as tool_core;

pub mod budget;
pub mod call;
mod caller;
pub mod catalog;
#[cfg(feature = "check")]
#[cfg_attr(docsrs, doc(cfg(feature = "check")))]
pub mod check;
#[cfg(feature = "cli")]
#[cfg_attr(docsrs, doc(cfg(feature = "cli")))]
pub mod cli;
pub mod context;
pub mod credentials;
mod dialect;
mod error;
pub mod fingerprint;
pub mod idempotency;
pub mod isolate;
// reason: the call-overhead bench and the output-tree tests measure the tree and the duplicate-key
// scan alone; not part of the API.
#[doc(hidden)]
pub mod json;
#[cfg(feature = "mcp")]
#[cfg_attr(docsrs, doc(cfg(feature = "mcp")))]
pub mod mcp;
mod model_output;
#[cfg(feature = "otel")]
#[cfg_attr(docsrs, doc(cfg(feature = "otel")))]
pub mod otel;
mod panic;
pub mod partial_json;
pub mod pins;
pub mod provider;
mod registry;
mod respecified;
#[cfg(feature = "runtime")]
#[cfg_attr(docsrs, doc(cfg(feature = "runtime")))]
pub mod runtime;
pub mod schema;
pub mod spec;
pub mod stream;
#[cfg(feature = "testing")]
#[cfg_attr(docsrs, doc(cfg(feature = "testing")))]
pub mod testing;
pub mod tool;

/// The guide's chapters (`docs/src/`) and the README, as doc tests: `cargo test --doc` compiles
/// and runs every Rust example in them (`.ci/guide-check` holds that every chapter with one is
/// listed here, or in tool-providers for the providers chapter).
#[cfg(doctest)]
mod guide {
    #[doc = include_str!("../../README.md")]
    struct Readme;
    #[doc = include_str!("../../docs/src/getting-started.md")]
    struct GettingStarted;
    #[doc = include_str!("../../docs/src/attribute.md")]
    struct Attribute;
    #[doc = include_str!("../../docs/src/calls.md")]
    struct Calls;
    #[doc = include_str!("../../docs/src/catalogs.md")]
    struct Catalogs;
    #[doc = include_str!("../../docs/src/model-output.md")]
    struct ModelOutput;
    #[doc = include_str!("../../docs/src/hooks-and-streaming.md")]
    struct HooksAndStreaming;
    #[doc = include_str!("../../docs/src/runtime.md")]
    struct Runtime;
    #[doc = include_str!("../../docs/src/stores.md")]
    struct Stores;
    #[doc = include_str!("../../docs/src/mcp-server.md")]
    struct McpServer;
    #[doc = include_str!("../../docs/src/testing.md")]
    struct Testing;
    #[doc = include_str!("../../docs/src/observability.md")]
    struct Observability;
}

/// What `#[tool]`'s generated code uses; the name carries the version (`__private_v{MAJOR}_{MINOR}`)
/// so that only the `tool-macros` of the same version compiles against it.
#[doc(hidden)]
#[path = "private.rs"]
pub mod __private_v0_1;

pub use call::{CallArgs, CallOptions, Finished, Limits, Suspension};
pub use caller::Caller;
pub use context::{CallData, CallEnv, LogLevel, Observe, RequestContext, ToolCallInfo, ToolContext};
pub use dialect::Dialect;
pub use error::{ErrorKind, Issue, ToolError};
pub use model_output::{ContentPart, ModelOutput, ResourceContents};
pub use registry::{IntoTool, Registry, RegistryError, RegistryProblem};
pub use schema::SchemaError;
pub use spec::{Isolation, ToolSpec};
pub use tokio_util::sync::CancellationToken;
pub use tool::{DynamicTool, InputOf, OutputOf, Tool, ToolInput, ToolOutput, TypedTool};
pub use tool_macros::tool;

/// Everything a tool author needs: `use tool_core::prelude::*;`.
pub mod prelude {
    pub use crate::{
        CallOptions, Caller, ContentPart, DynamicTool, InputOf, LogLevel, ModelOutput, Registry, RequestContext, Tool, ToolCallInfo,
        ToolContext, ToolError, TypedTool, tool,
    };
    pub use schemars::JsonSchema;
    pub use serde::{Deserialize, Serialize};
    pub use serde_json::{Value, json};
}
