// `require_approval` is a flag or a predicate, never `= true`.
use tool_core::prelude::*;

/// Delete everything
#[tool(require_approval = true)]
pub async fn delete_all() -> bool {
    true
}

fn main() {}
