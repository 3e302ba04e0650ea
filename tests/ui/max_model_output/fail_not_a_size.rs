// `max_model_output` takes a size (`"16KiB"`, a number of bytes): anything else is reported at
// the value, at compile time.
use tool_core::prelude::*;

/// Read a log
#[tool(max_model_output = "16 bananas")]
pub async fn read_log(path: String) -> String {
    path
}

/// Read another log
#[tool(max_model_output = 0)]
pub async fn read_other(path: String) -> String {
    path
}

/// Read a third log
#[tool(max_model_output = big)]
pub async fn read_third(path: String) -> String {
    path
}

fn main() {}
