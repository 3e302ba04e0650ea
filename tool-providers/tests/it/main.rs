//! tool-providers' integration tests, in one binary: the hosted providers (Composio, Arcade)
//! against fakes of their APIs, the MCP client against real servers, the command line's
//! provider flags, pins and fan-out.

#[path = "../support/mod.rs"]
#[allow(dead_code)]
mod support;

pub mod cli;
pub mod fanout_conventions;
pub mod hosted;
pub mod mcp;
pub mod pins;
