// `blocking` is a flag, not a key with a value.
use tool_core::prelude::*;

/// Hash a file
#[tool(blocking = true)]
pub async fn hash_file(path: String) -> String {
    path
}

fn main() {}
