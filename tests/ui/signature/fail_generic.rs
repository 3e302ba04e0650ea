// A tool needs one concrete input type: generics are refused.
use tool_core::prelude::*;

/// Echo a value
#[tool]
pub async fn echo<T: Clone>(value: T) -> T {
    value
}

fn main() {}
