// `defer_loading` and `namespace = "..."` are the tool's defaults for tool search, in its spec.
use tool_core::prelude::*;

/// Find a customer by name
#[tool(defer_loading, namespace = "crm")]
pub async fn find_customer(name: String) -> String {
    name
}

/// Add two numbers
#[tool]
pub async fn add(a: f64, b: f64) -> f64 {
    a + b
}

pub fn main() {
    let registry = Registry::from_module(module_path!()).unwrap();
    let find = registry.get("find-customer").unwrap().spec().clone();
    assert!(find.presentation.defer_loading);
    assert_eq!(find.presentation.namespace.as_deref(), Some("crm"));
    let add = registry.get("add").unwrap().spec().clone();
    assert!(!add.presentation.defer_loading);
    assert_eq!(add.presentation.namespace, None);
}
