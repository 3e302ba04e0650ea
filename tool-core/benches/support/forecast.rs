//! The three-field tool of the `call_overhead` bench, shared with the allocation test
//! (`tests/it/call/allocations.rs`) and the instruction-count loop (`examples/call_loop.rs`), so
//! each measures the same tool: plain parameters (the input struct `#[tool]` generates, whose
//! decoding a registry trusts) and a struct of the user's with an `f64` as output (nothing
//! vouches for it: its outputs are checked).

use tool_core::prelude::*;

/// The same input as a struct of the user's (the hand-written baseline decodes it).
#[derive(Debug, Deserialize, JsonSchema)]
pub struct ForecastInput {
    /// City name
    pub city: String,
    /// Days ahead
    pub days: u32,
    /// Metric units
    pub metric: bool,
}

/// The output.
#[derive(Debug, Serialize, JsonSchema)]
pub struct Forecast {
    pub city: String,
    pub days: u32,
    pub high: f64,
    pub summary: String,
}

/// Forecast for a city (plain parameters: the input struct `#[tool]` generates is one whose
/// decoding a registry trusts, so valid arguments skip the validator; a struct of the user's
/// would validate, see the guide's performance chapter)
#[tool(id = "bench-forecast")]
pub async fn forecast(
    /// City name
    city: String,
    /// Days ahead
    days: u32,
    /// Metric units
    metric: bool,
) -> Forecast {
    let high = if metric { 21.5 } else { 70.7 };
    Forecast {
        city,
        days,
        high,
        summary: "sunny".to_owned(),
    }
}

/// The arguments as the bench sends them.
pub const ARGS: &str = r#"{"city": "Lisbon", "days": 3, "metric": true}"#;
