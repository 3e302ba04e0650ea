//! What the test binaries share: `it` (in-process tests) uses the HTTP server, the run-event
//! wire and the partial-JSON checks; `processes` (tests with real child processes) the command
//! line as a child, the PostgreSQL connection and the test authorization server. Each binary
//! compiles all of it and uses its part.

pub mod auth_server;
pub mod child_cli;
pub mod http_server;
pub mod partial_json_check;
pub mod pg_proxy;
pub mod postgres;
pub mod wire;
