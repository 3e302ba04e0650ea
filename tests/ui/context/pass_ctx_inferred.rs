// Without `context = T`, the request-context type comes from the `#[ctx]` parameter's type,
// through a trait (so an alias works): it is validated against `Tenant`'s schema.
use tool_core::prelude::*;

#[derive(Deserialize, JsonSchema)]
pub struct Tenant {
    /// The tenant's id
    pub tenant: String,
}

type TenantCx = ToolContext<Tenant>;

/// List invoices
#[tool]
pub async fn invoices(#[ctx] cx: TenantCx) -> String {
    cx.request_context().tenant.clone()
}

pub fn main() {
    tokio::runtime::Runtime::new().unwrap().block_on(async {
        let registry = &Registry::from_module(module_path!()).unwrap();
        let schema = registry.get("invoices").unwrap().spec().schemas.request_context.clone().unwrap();
        assert_eq!(schema["required"], json!(["tenant"]));
        let out = registry.call("invoices", "{}", CallOptions::with_context(json!({"tenant": "acme"}))).await.unwrap();
        assert_eq!(out.value(), json!("acme"));
        let err = registry.call("invoices", "{}", CallOptions::with_context(json!({"tenant": 1}))).await.unwrap_err();
        assert_eq!(err.kind(), tool_core::ErrorKind::InvalidContext);
    });
}
