// `idempotent` is a flag or names a policy (`"fail"`, `"recover"`): anything else is reported
// at the value, and a tool without a body cannot be idempotent.
use tool_core::prelude::*;

/// Send an email
#[tool(idempotent = true)]
pub async fn send_email(to: String) -> String {
    to
}

/// Send a letter
#[tool(idempotent = "sometimes")]
pub async fn send_letter(to: String) -> String {
    to
}

/// Confirm in the browser
#[tool(idempotent)]
pub fn confirm(question: String) -> bool;

fn main() {}
