//! What the tests share: fakes of the hosted providers' APIs (and the ways they misbehave), an
//! MCP server of ours and a TLS one to import from, captured logs, and tool-core's test
//! authorization server.

pub mod arcade_fake;
#[path = "../../../tool-core/tests/support/auth_server.rs"]
pub mod auth_server;
pub mod composio_fake;
pub mod logs;
pub mod misbehave;
pub mod tls_server;
pub mod toolsmith_server;
