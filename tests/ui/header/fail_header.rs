// A parameter's `#[tool(header = "…")]` names an HTTP header: a token, on an input field.
use tool_core::prelude::*;

/// Route by region
#[tool]
pub async fn route(
    /// The region
    #[tool(header = "Région")]
    region: String,
    /// The zone
    #[tool(header = "")]
    zone: String,
    /// The rack
    #[tool(headr = "Rack")]
    rack: String,
    #[tool(header = "Ctx")]
    #[ctx]
    cx: ToolContext,
) -> String {
    let _ = cx;
    format!("{region} {zone} {rack}")
}

fn main() {}
