// `defer_loading` is a flag; `namespace` is a string of 1 to 64 of a-z, A-Z, 0-9, `_`, `-`.
use tool_core::prelude::*;

/// Find a customer
#[tool(defer_loading = true)]
pub async fn find(name: String) -> String {
    name
}

/// Find an order
#[tool(namespace = "crm.orders")]
pub async fn order(id: String) -> String {
    id
}

/// Find an invoice
#[tool(namespace = crm)]
pub async fn invoice(id: String) -> String {
    id
}

/// Find a contact
#[tool(namespace = "")]
pub async fn contact(id: String) -> String {
    id
}

fn main() {}
