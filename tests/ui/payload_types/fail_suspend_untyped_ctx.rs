// A tool that declares `suspend = AskUser` cannot take the untyped `ToolContext<C>` (whose
// `suspend` takes any `Value`): the parameter must name `AskUser`.
use tool_core::prelude::*;

#[derive(Serialize, Deserialize, JsonSchema)]
pub struct AskUser {
    pub question: String,
}

#[derive(Deserialize, JsonSchema)]
pub struct Ctx {
    pub user: String,
}

/// Book a flight
#[tool(context = Ctx, suspend = AskUser)]
pub async fn book(flight: String, #[ctx] cx: ToolContext<Ctx>) -> Result<String, ToolError> {
    Err(cx.suspend(json!({ "question": flight })))
}

fn main() {}
