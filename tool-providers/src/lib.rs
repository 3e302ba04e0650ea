//! Tool providers: HTTP clients for platforms whose tools live elsewhere, resolved into
//! ordinary Toolsmith tools.
//!
//! Owns the [`ToolProvider`](tool_core::provider::ToolProvider) implementations:
//! [`ComposioToolProvider`] (Composio's `/api/v3.1` or `/api/v3` API: cursor-paginated
//! toolkits and tools, execution per user or connected account, auth configs, connected
//! accounts and the chat tools `COMPOSIO_MANAGE_CONNECTIONS`/`COMPOSIO_WAIT_FOR_CONNECTIONS`),
//! [`ArcadeToolProvider`] (Arcade's `/v1` API: tool listing with offset pagination, schemas
//! built from `value_schema`, execution with authorization links, health) and
//! [`mcp::McpToolProvider`] (any MCP server, over stdio or Streamable HTTP, its `tools/list`
//! kept in sync on `list_changed`). Every HTTP client is
//! bounded (request timeout, page cap, response size cap, bounded 429 retries) and never lets
//! its API key reach `Debug` output, errors or logs. [`cli`] is the `toolsmith` command line
//! with `--import-mcp`: remote MCP servers' tools next to the linked ones.

#![cfg_attr(docsrs, feature(doc_cfg))]

/// The guide's providers chapter as doc tests: `cargo test --doc` compiles its examples (the
/// other chapters are tool-core's; `.ci/guide-check` holds that each is included somewhere).
#[cfg(doctest)]
#[doc = include_str!("../../docs/src/providers.md")]
struct GuideProviders;

pub mod arcade;
pub mod cli;
pub mod composio;
mod definitions;
mod http;
mod naming;
mod owner;
mod placement;
mod wire;

pub use arcade::ArcadeToolProvider;
pub use composio::ComposioToolProvider;
pub mod mcp;
