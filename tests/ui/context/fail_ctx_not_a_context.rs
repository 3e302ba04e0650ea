// The `#[ctx]` parameter must be a `ToolContext<C>`.
use tool_core::prelude::*;

/// List invoices
#[tool]
pub async fn invoices(#[ctx] cx: String) -> String {
    cx
}

fn main() {}
