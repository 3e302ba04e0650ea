//! The command line of the bench servers that serve a fixed set of tools (`main.rs`, and
//! `../../examples/src/main.rs`, which includes this file): `ADDR [--stateless]
//! [--json-response]`.

use std::net::SocketAddr;
use std::process::ExitCode;

use tool_core::mcp::http::HttpOptions;

/// The address and options of `std::env::args()`; the exit code (after printing `usage`)
/// when they are not `ADDR [--stateless] [--json-response]`.
pub fn parse(usage: &str) -> Result<(SocketAddr, HttpOptions), ExitCode> {
    let mut args = std::env::args().skip(1);
    let Some(addr) = args.next().and_then(|a| a.parse().ok()) else {
        eprintln!("{usage}");
        return Err(ExitCode::from(2));
    };
    let mut options = HttpOptions::default();
    for flag in args {
        match flag.as_str() {
            "--stateless" => options.stateless = true,
            "--json-response" => options.json_response = true,
            _ => {
                eprintln!("{usage}");
                return Err(ExitCode::from(2));
            }
        }
    }
    Ok((addr, options))
}
