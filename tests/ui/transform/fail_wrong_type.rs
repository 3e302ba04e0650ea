// A display output transform receives `&Output`: here it takes the input type.
use tool_core::prelude::*;

#[derive(Deserialize, JsonSchema)]
pub struct Lookup {
    pub customer_id: String,
}

#[derive(Serialize, JsonSchema)]
pub struct Customer {
    pub name: String,
}

fn show(lookup: &Lookup) -> Value {
    json!({ "id": lookup.customer_id })
}

/// Look up a customer
#[tool(transform(display(output = show)))]
pub async fn lookup_customer(input: Lookup) -> Customer {
    Customer { name: input.customer_id }
}

fn main() {}
