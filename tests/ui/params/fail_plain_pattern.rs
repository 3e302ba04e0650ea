// A single parameter of a plain type is one field of the input, and a field needs a name.
use tool_core::prelude::*;

/// Sum a pair
#[tool]
pub async fn sum((a, b): (i64, i64)) -> i64 {
    a + b
}

fn main() {}
