// With `context = Tenant` the `#[ctx]` parameter is `ToolContext<Tenant>`, not the untyped `ToolContext`.
use tool_core::prelude::*;

#[derive(Deserialize, JsonSchema)]
pub struct Tenant {
    pub tenant: String,
}

/// List invoices
#[tool(context = Tenant)]
pub async fn invoices(#[ctx] cx: ToolContext) -> String {
    format!("{:?}", cx.request_context())
}

fn main() {}
