// Scopes are OAuth scope tokens (printable ASCII without space, `"` and `\`), each once.
use tool_core::prelude::*;

/// Update a CRM record
#[tool(scopes = ["crm.write", "crm write", "crm.write", true])]
pub async fn crm_update(id: String) -> String {
    id
}

fn main() {}
