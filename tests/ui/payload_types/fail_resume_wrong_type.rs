// With `resume = Answer`, the `#[ctx]` parameter is `ToolContext<C, S, Answer>` and
// `cx.resume_data()` gives an `Answer`: a context naming another resume type (or the untyped
// one) does not compile, nor does reading the resume data as another type.
use tool_core::prelude::*;

#[derive(Deserialize, JsonSchema)]
pub struct Answer {
    pub confirmed: bool,
}

#[derive(Deserialize, JsonSchema)]
pub struct Other {
    pub note: String,
}

/// Book a flight
#[tool(resume = Answer)]
pub async fn book(flight: String, #[ctx] cx: ToolContext<RequestContext, Value, Other>) -> Result<String, ToolError> {
    let _ = cx.resume_data()?;
    Ok(flight)
}

/// Book a train
#[tool(resume = Answer)]
pub async fn train(train: String, #[ctx] cx: ToolContext) -> Result<String, ToolError> {
    let _ = cx.resume_data()?;
    Ok(train)
}

/// Book a hotel
#[tool(resume = Answer)]
pub async fn hotel(city: String, #[ctx] cx: ToolContext<RequestContext, Value, Answer>) -> Result<String, ToolError> {
    let other: Option<Other> = cx.resume_data()?;
    Ok(format!("{city} {}", other.is_some()))
}

fn main() {}
