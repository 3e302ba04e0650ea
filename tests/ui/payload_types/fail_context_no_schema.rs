// `context = T` needs `T: JsonSchema`.
use tool_core::prelude::*;

#[derive(Deserialize)]
pub struct Tenant {
    pub tenant: String,
}

/// List invoices
#[tool(context = Tenant)]
pub async fn invoices(#[ctx] cx: ToolContext<Tenant>) -> String {
    cx.request_context().tenant.clone()
}

fn main() {}
