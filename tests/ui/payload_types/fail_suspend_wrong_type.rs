// With `suspend = AskUser`, the `#[ctx]` parameter is `ToolContext<C, AskUser, R>` and
// `cx.suspend` takes an `AskUser`: a context naming another suspend type does not compile (one
// error, at the parameter, with or without `context = T`), nor does suspending with another type.
use tool_core::prelude::*;

#[derive(Serialize, Deserialize, JsonSchema)]
pub struct AskUser {
    pub question: String,
}

#[derive(Serialize, Deserialize, JsonSchema)]
pub struct Other {
    pub note: String,
}

#[derive(Deserialize, JsonSchema)]
pub struct Tenant {
    pub tenant: String,
}

/// Book a flight
#[tool(suspend = AskUser)]
pub async fn book(flight: String, #[ctx] cx: ToolContext<RequestContext, Other>) -> Result<String, ToolError> {
    Err(cx.suspend(Other { note: flight }))
}

/// Book a seat
#[tool(context = Tenant, suspend = AskUser)]
pub async fn seat(seat: String, #[ctx] cx: ToolContext<Tenant, Other>) -> Result<String, ToolError> {
    Err(cx.suspend(Other { note: seat }))
}

/// Book a hotel
#[tool(suspend = AskUser)]
pub async fn hotel(city: String, #[ctx] cx: ToolContext<RequestContext, AskUser>) -> Result<String, ToolError> {
    Err(cx.suspend(Other { note: city }))
}

fn main() {}
