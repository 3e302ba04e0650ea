// A `#[ctx]` parameter cannot name suspend or resume types the attribute does not declare:
// without `suspend = …`/`resume = …` no schema is published and nothing is checked, so the
// context stays untyped (`ToolContext<C>`).
use tool_core::prelude::*;

#[derive(Serialize, Deserialize, JsonSchema)]
pub struct AskUser {
    pub question: String,
}

#[derive(Deserialize, JsonSchema)]
pub struct Answer {
    pub confirmed: bool,
}

/// Book a flight
#[tool]
pub async fn book(flight: String, #[ctx] cx: ToolContext<RequestContext, AskUser, Answer>) -> Result<String, ToolError> {
    match cx.resume_data()? {
        Some(_) => Ok(flight),
        None => Err(cx.suspend(AskUser { question: flight })),
    }
}

fn main() {}
