// `isolate` names where the calls run, as a string.
use tool_core::prelude::*;

/// Resize an image
#[tool(isolate = true)]
pub async fn resize(path: String) -> String {
    path
}

fn main() {}
