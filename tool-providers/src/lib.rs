//! Tool providers: HTTP clients for platforms whose tools live elsewhere, resolved into
//! ordinary Toolsmith tools.
//!
//! Owns the [`ToolProvider`](tool_core::provider::ToolProvider) implementations:
//! [`ArcadeToolProvider`] (Arcade's `/v1` API: tool listing with offset pagination, schemas
//! built from `value_schema`, execution with authorization links, health) and
//! [`mcp::McpToolProvider`] (any MCP server, over stdio or Streamable HTTP, its `tools/list`
//! kept in sync on `list_changed`). Composio is to come. Every HTTP client is
//! bounded (request timeout, page cap, response size cap, bounded 429 retries) and never lets
//! its API key reach `Debug` output, errors or logs.

pub mod arcade;
mod http;

pub use arcade::ArcadeToolProvider;
pub mod mcp;
