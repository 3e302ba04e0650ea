// A parameter's `#[tool(header = "…")]` is its `x-mcp-header` in the input schema; a struct's
// field says the same with schemars' `extend`.
use tool_core::prelude::*;

/// Route by region
#[tool(id = "ui-header-route", icon = "https://example.com/route.png", mcp(requires = ["sampling"]))]
pub async fn route(
    /// The region
    #[tool(header = "Region")]
    region: String,
    /// How many
    count: u32,
) -> String {
    format!("{region} {count}")
}

/// Where to route
#[derive(Deserialize, JsonSchema)]
pub struct Where {
    /// The region
    #[schemars(extend("x-mcp-header" = "Region"))]
    pub region: String,
}

/// Route a struct's region
#[tool(id = "ui-header-struct")]
pub async fn route_struct(input: Where) -> String {
    input.region
}

pub fn main() {
    let registry = Registry::from_module(module_path!()).unwrap();
    let route = registry.get("ui-header-route").unwrap();
    let spec = route.spec();
    assert_eq!(spec.schemas.input["properties"]["region"]["x-mcp-header"], "Region");
    assert!(spec.schemas.input["properties"]["count"].get("x-mcp-header").is_none());
    assert_eq!(spec.presentation.mcp.icons, ["https://example.com/route.png"]);
    assert_eq!(spec.presentation.mcp.requires, ["sampling"]);
    assert!(spec.presentation.mcp.annotations().is_none(), "icons and requires are no annotations");
    let whole = registry.get("ui-header-struct").unwrap();
    assert_eq!(whole.spec().schemas.input["properties"]["region"]["x-mcp-header"], "Region");
}
