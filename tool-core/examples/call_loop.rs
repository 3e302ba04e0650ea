//! A fixed number of calls in a loop, for counting instructions per call (`bench/instructions.sh`
//! runs it under valgrind twice and takes the difference): deterministic where a shared
//! machine's clock is not. Modes: `baseline` (the hand-written `from_str` + call + `to_string`
//! of `call_overhead`), `registry` (the same tool through the registry), `plain` (a tool whose
//! output type the registry vouches for) and `noop` (a dynamic tool that does nothing).
//!
//! `cargo run --release -p tool-core --example call_loop -- registry 1000`

use tool_core::prelude::*;

#[path = "../benches/support/forecast.rs"]
mod forecast_tool;
use forecast_tool::{ARGS, ForecastInput, forecast};

/// The same arguments, returned as words (a `Vec<String>`: vouched for, not checked again)
#[tool(id = "loop-plain")]
pub async fn plain(
    /// City name
    city: String,
    /// Days ahead
    days: u32,
    /// Metric units
    metric: bool,
) -> Vec<String> {
    vec![city, days.to_string(), metric.to_string()]
}

fn main() {
    let mut args = std::env::args().skip(1);
    let (Some(mode), Some(n)) = (args.next(), args.next().and_then(|n| n.parse::<usize>().ok())) else {
        eprintln!("usage: call_loop baseline|registry|plain|noop CALLS");
        std::process::exit(2);
    };
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .expect("a runtime");
    let registry = Registry::from_iter([forecast::tool(), plain::tool()].map(|t| t.expect("a tool")));
    let noop = DynamicTool::builder("noop", "Does nothing")
        .handler(|_, _| async { Ok(serde_json::Value::Null) })
        .expect("a tool");
    let small = Registry::from_iter([noop]);
    rt.block_on(async {
        for _ in 0..n {
            let done = match mode.as_str() {
                "baseline" => {
                    let input: ForecastInput = serde_json::from_str(std::hint::black_box(ARGS)).expect("valid");
                    let out = forecast(input.city, input.days, input.metric).await;
                    std::hint::black_box(serde_json::to_string(&out).expect("serialisable"));
                    Ok(())
                }
                "registry" => registry
                    .call("bench-forecast", std::hint::black_box(ARGS), CallOptions::default())
                    .await
                    .map(|o| {
                        std::hint::black_box(o);
                    }),
                "plain" => registry
                    .call("loop-plain", std::hint::black_box(ARGS), CallOptions::default())
                    .await
                    .map(|o| {
                        std::hint::black_box(o);
                    }),
                "noop" => small
                    .call("noop", std::hint::black_box("{}"), CallOptions::default())
                    .await
                    .map(|o| {
                        std::hint::black_box(o);
                    }),
                other => {
                    eprintln!("unknown mode `{other}`");
                    std::process::exit(2);
                }
            };
            done.expect("the call succeeds");
        }
    });
}
