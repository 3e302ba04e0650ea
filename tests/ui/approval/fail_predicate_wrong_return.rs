// A `require_approval` predicate returns `bool` or `Result<bool, E>`.
use tool_core::prelude::*;

#[derive(Deserialize, JsonSchema)]
pub struct Transfer {
    pub amount: u64,
}

fn large(input: &Transfer, _cx: &RequestContext) -> &'static str {
    if input.amount > 1000 {
        "yes"
    } else {
        "no"
    }
}

/// Transfer money
#[tool(require_approval = large)]
pub async fn transfer(input: Transfer) -> u64 {
    input.amount
}

fn main() {}
