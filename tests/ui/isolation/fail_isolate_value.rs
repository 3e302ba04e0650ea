// The only isolation there is: `isolate = "process"`.
use tool_core::prelude::*;

/// Resize an image
#[tool(isolate = "thread")]
pub async fn resize(path: String) -> String {
    path
}

fn main() {}
