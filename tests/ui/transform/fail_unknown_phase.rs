// Transform phases are a fixed set; a misspelt one is suggested.
use tool_core::prelude::*;

fn show(name: &String) -> Value {
    json!(name)
}

/// Look up a customer
#[tool(transform(display(outputs = show)))]
pub async fn lookup_customer(customer_id: String) -> String {
    customer_id
}

fn main() {}
