// A `require_approval` predicate takes `(&Input, &Context)`.
use tool_core::prelude::*;

#[derive(Deserialize, JsonSchema)]
pub struct Transfer {
    pub amount: u64,
}

fn large(input: &Transfer) -> bool {
    input.amount > 1000
}

/// Transfer money
#[tool(require_approval = large)]
pub async fn transfer(input: Transfer) -> u64 {
    input.amount
}

fn main() {}
