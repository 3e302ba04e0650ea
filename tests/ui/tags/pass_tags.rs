// `tags = [...]` is stored in the spec and selects tools into catalogs.
use tool_core::catalog::Catalog;
use tool_core::Dialect;
use tool_core::prelude::*;

/// Get the weather
#[tool(tags = ["weather", "read-only"])]
pub async fn weather(city: String) -> String {
    city
}

/// Add two numbers
#[tool(tags = ["math"])]
pub async fn add(a: f64, b: f64) -> f64 {
    a + b
}

pub fn main() {
    let spec = Registry::from_module(module_path!()).unwrap().get("weather").unwrap().spec().clone();
    assert_eq!(spec.presentation.tags, ["weather", "read-only"]);
    let catalog = Catalog::new("default", "0.0.0", Registry::from_module(module_path!()).unwrap()).tagged("read-only");
    let doc = catalog.export(Dialect::Mcp).unwrap().document();
    assert_eq!(doc["tools"].as_array().unwrap().len(), 1);
    assert_eq!(doc["tools"][0]["name"], "weather");
}
