//! The server of `bench/mcp/fairness.sh`: one tool, `work` (`{"text", "ms"}` → the text), whose
//! calls share a pool of `--backend N` connections to a backend (a database pool, say; 4 by
//! default): each call holds one for `ms` milliseconds. That pool is what one caller's slow calls
//! fill, making every other caller wait, unless the server limits each caller
//! (`HttpLimits::per_caller`, what `toolsmith serve --caller-concurrency/--caller-rate/
//! --caller-burst` set). No authorization: callers are told apart by IP address.
//!
//! `mcp-toolsmith-fair ADDR [--stateless] [--json-response] [--backend N]
//! [--caller-concurrency N] [--caller-rate PER_SECOND] [--caller-burst N]`; prints
//! `serving MCP on http://ADDR/mcp` on stderr once it listens.

mod serve;

use std::num::NonZeroU32;
use std::process::ExitCode;
use std::sync::{Arc, OnceLock};
use std::time::Duration;

use tokio::sync::Semaphore;
use tool_core::mcp::http::{CallRate, HttpOptions};
use tool_core::prelude::*;

/// The backend's connections, shared by every call.
static BACKEND: OnceLock<Arc<Semaphore>> = OnceLock::new();

/// Holds one backend connection for `ms` milliseconds, then returns the text
#[tool(id = "work")]
pub async fn work(
    /// The text to return
    text: String,
    /// How long the call holds its backend connection, in milliseconds
    ms: u64,
) -> Result<String, ToolError> {
    let backend = BACKEND.get().ok_or_else(|| ToolError::new("the backend is not set up"))?;
    let _connection = backend.acquire().await.map_err(|_| ToolError::new("the backend is closed"))?;
    tokio::time::sleep(Duration::from_millis(ms)).await;
    Ok(text)
}

const USAGE: &str = "usage: mcp-toolsmith-fair ADDR [--stateless] [--json-response] [--backend N] \
[--caller-concurrency N] [--caller-rate PER_SECOND] [--caller-burst N]";

/// The options and the backend's size, from the command line.
fn parse(mut args: impl Iterator<Item = String>) -> Option<(std::net::SocketAddr, HttpOptions, usize)> {
    let addr = args.next()?.parse().ok()?;
    let mut options = HttpOptions::default();
    let (mut backend, mut rate, mut burst) = (4usize, None, None);
    while let Some(flag) = args.next() {
        match flag.as_str() {
            "--stateless" => options.stateless = true,
            "--json-response" => options.json_response = true,
            "--backend" => backend = args.next()?.parse().ok().filter(|n| *n > 0)?,
            "--caller-concurrency" => options.limits.per_caller.concurrent_calls = Some(args.next()?.parse::<NonZeroU32>().ok()?),
            "--caller-rate" => rate = Some(args.next()?.parse::<f64>().ok()?),
            "--caller-burst" => burst = Some(args.next()?.parse::<NonZeroU32>().ok()?),
            _ => return None,
        }
    }
    if let Some(rate) = rate {
        let burst = burst.or(NonZeroU32::new(rate.ceil() as u32)).unwrap_or(NonZeroU32::MIN);
        options.limits.per_caller.rate = Some(CallRate::per_second(rate, burst)?);
    }
    Some((addr, options, backend))
}

fn main() -> ExitCode {
    let Some((addr, options, backend)) = parse(std::env::args().skip(1)) else {
        eprintln!("{USAGE}");
        return ExitCode::from(2);
    };
    BACKEND.get_or_init(|| Arc::new(Semaphore::new(backend)));
    serve::serve(
        "mcp-toolsmith-fair",
        "toolsmith-fair",
        Registry::from_iter([work::tool()]),
        addr,
        options,
    )
}
