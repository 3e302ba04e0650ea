// `context = T` with a `#[ctx] cx: ToolContext<T>` parameter: the request context is validated
// against `T`'s schema and handed over typed; the `#[ctx]` parameter is not part of the input.
use tool_core::prelude::*;

#[derive(Debug, Deserialize, JsonSchema)]
pub struct Tenant {
    /// The tenant's id
    pub tenant: String,
    #[serde(default)]
    pub limit: Option<u32>,
}

/// List a tenant's invoices
#[tool(context = Tenant)]
pub async fn list_invoices(
    /// Only invoices of this status
    status: String,
    #[ctx] cx: ToolContext<Tenant>,
) -> Vec<String> {
    let tenant = &cx.request_context().tenant;
    let limit = cx.request_context().limit.unwrap_or(2) as usize;
    assert_eq!(cx.tool_call_id(), "call_ctx");
    (1..=limit).map(|i| format!("{tenant}/{status}/{i}")).collect()
}

/// Which tenant is calling (untyped context)
#[tool]
pub async fn whoami(#[ctx] cx: ToolContext) -> Option<String> {
    cx.request_context().get::<String>("tenant")
}

pub fn main() {
    tokio::runtime::Runtime::new().unwrap().block_on(async {
        let registry = &Registry::from_module(module_path!()).unwrap();
        let spec = registry.get("list-invoices").unwrap().spec().clone();
        assert_eq!(spec.schemas.input["required"], json!(["status"]));
        assert!(spec.schemas.input["properties"].get("cx").is_none());
        let ctx_schema = spec.schemas.request_context.expect("context = T gives a context schema");
        assert_eq!(ctx_schema["required"], json!(["tenant"]));

        let options = CallOptions::default().context(json!({"tenant": "acme", "limit": 3})).id("call_ctx");
        let out = registry.call("list-invoices", json!({"status": "open"}), options).await.unwrap();
        assert_eq!(out.value(), json!(["acme/open/1", "acme/open/2", "acme/open/3"]));

        let options = CallOptions::default().context(json!({"limit": 3})).id("call_ctx");
        let err = registry
            .call("list-invoices", json!({"status": "open"}), options)
            .await
            .unwrap_err();
        assert_eq!(err.kind(), tool_core::ErrorKind::InvalidContext, "{err}");

        assert!(registry.get("whoami").unwrap().spec().schemas.request_context.is_none());
        let out = registry
            .call("whoami", json!({}), CallOptions::with_context(json!({"tenant": "globex"})))
            .await
            .unwrap();
        assert_eq!(out.value(), json!("globex"));
    });
}
