// `scopes` reach the spec in order; a tool without them has none.
use tool_core::prelude::*;

/// Update a CRM record
#[tool(scopes = ["crm.write", "https://api.example.com/crm"])]
pub async fn crm_update(id: String) -> String {
    id
}

/// Read a CRM record
#[tool]
pub async fn crm_read(id: String) -> String {
    id
}

pub fn main() {
    assert_eq!(Registry::from_module(module_path!()).unwrap().get("crm-update").unwrap().spec().policy.scopes, ["crm.write", "https://api.example.com/crm"]);
    assert!(Registry::from_module(module_path!()).unwrap().get("crm-read").unwrap().spec().policy.scopes.is_empty());
}
