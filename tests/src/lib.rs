//! Tools defined in a second crate (to prove link-time collection across crates) and used by
//! the workspace integration tests and benches.

use std::time::Duration;

use tool_core::prelude::*;

#[derive(Debug, Deserialize, Serialize, JsonSchema)]
pub struct WeatherInput {
    /// City name or coordinates
    pub location: String,
}

#[derive(Debug, Serialize, JsonSchema)]
pub struct Weather {
    pub location: String,
    pub temperature_celsius: f64,
    pub conditions: String,
}

/// Get the current weather for a location (test crate copy)
#[tool(id = "test-weather", strict)]
pub async fn weather(input: WeatherInput) -> Result<Weather, ToolError> {
    if input.location.is_empty() {
        return Err(ToolError::new("location must not be empty"));
    }
    Ok(Weather {
        location: input.location,
        temperature_celsius: 21.0,
        conditions: "sunny".into(),
    })
}

/// Add two numbers
#[tool(id = "test-add")]
pub async fn add(
    /// The first addend
    a: f64,
    /// The second addend
    b: f64,
) -> f64 {
    a + b
}

#[derive(Debug, Deserialize, Serialize, JsonSchema)]
pub struct Filter {
    pub field: String,
    pub values: Vec<String>,
}

#[derive(Debug, Deserialize, JsonSchema)]
pub struct SearchInput {
    /// Free-text query
    pub query: String,
    /// Optional structured filter
    pub filter: Option<Filter>,
    /// Optional tags
    pub tags: Option<Vec<String>>,
    /// Page size
    #[serde(default = "default_limit")]
    pub limit: u32,
}

fn default_limit() -> u32 {
    10
}

/// Search records: echoes how it understood the request
#[tool(id = "test-search")]
pub async fn search(input: SearchInput) -> Value {
    json!({
        "query": input.query,
        "filter": input.filter,
        "tags": input.tags,
        "limit": input.limit,
    })
}

/// Always panics, to prove a panic is caught
#[tool(id = "test-panic")]
pub async fn panics(
    /// Message to panic with
    message: String,
) -> String {
    panic!("boom: {message}")
}

/// Sleeps, then answers; cancellable
#[tool(id = "test-slow")]
pub async fn slow(
    /// How long to sleep, in milliseconds
    millis: u64,
    #[ctx] cx: ToolContext,
) -> Result<String, ToolError> {
    tokio::select! {
        _ = tokio::time::sleep(Duration::from_millis(millis)) => Ok("done".into()),
        _ = cx.cancellation().cancelled() => Err(ToolError::new("interrupted")),
    }
}

/// The request context a tenant-scoped tool needs
#[derive(Debug, Deserialize, JsonSchema)]
pub struct TenantContext {
    /// Tenant id
    pub tenant: String,
    /// Credential used to reach the backend
    pub api_key: String,
    /// Row limit
    pub max_rows: u32,
}

/// Reads the tenant from a typed request context
#[tool(id = "test-tenant", context = TenantContext)]
pub async fn tenant(#[ctx] cx: ToolContext<TenantContext>) -> String {
    let c = cx.request_context();
    format!("{} (max {}) key-len {}", c.tenant, c.max_rows, c.api_key.len())
}

/// Returns nothing
#[tool(id = "test-unit")]
pub async fn unit() {}

/// Deletes a record (needs approval)
#[tool(id = "test-delete", require_approval)]
pub async fn delete(
    /// Record id
    id: String,
) -> String {
    format!("deleted {id}")
}

fn big_transfers_need_approval(input: &InputOf<transfer>, _cx: &RequestContext) -> bool {
    if input.amount < 0.0 {
        panic!("negative amount");
    }
    input.amount > 1000.0
}

/// Transfers money (approval above 1000; a failing predicate means approval)
#[tool(id = "test-transfer", require_approval = big_transfers_need_approval)]
pub async fn transfer(
    /// Amount
    amount: f64,
) -> f64 {
    amount
}
