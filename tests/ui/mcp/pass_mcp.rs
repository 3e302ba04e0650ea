// `mcp(...)`: only the hints that are set appear in the annotations; `meta` is passed as is.
use tool_core::prelude::*;

/// Delete a file
#[tool(mcp(title = "Delete file", destructive_hint = true, idempotent_hint = false, meta = json!({"owner": "fs-team", "version": 2})))]
pub async fn delete_file(path: String) -> bool {
    !path.is_empty()
}

/// Read a file
#[tool(mcp(read_only_hint = true))]
pub async fn read_file(path: String) -> String {
    path
}

/// Touch a file (no MCP settings)
#[tool]
pub async fn touch_file(path: String) -> String {
    path
}

pub fn main() {
    tokio::runtime::Runtime::new().unwrap().block_on(async {
        let registry = &Registry::from_module(module_path!()).unwrap();

        let spec = registry.get("delete-file").unwrap().spec().clone();
        assert_eq!(
            spec.presentation.mcp.annotations(),
            Some(json!({"title": "Delete file", "destructiveHint": true, "idempotentHint": false}))
        );
        assert_eq!(spec.presentation.mcp.meta, Some(json!({"owner": "fs-team", "version": 2})));
        assert_eq!(spec.presentation.mcp.read_only_hint, None);
        assert_eq!(spec.presentation.mcp.open_world_hint, None);

        let spec = registry.get("read-file").unwrap().spec().clone();
        assert_eq!(spec.presentation.mcp.annotations(), Some(json!({"readOnlyHint": true})));
        assert_eq!(spec.presentation.mcp.meta, None);

        let spec = registry.get("touch-file").unwrap().spec().clone();
        assert_eq!(spec.presentation.mcp.annotations(), None);

        let out = registry
            .call("delete-file", json!({"path": "/tmp/x"}), CallOptions::default())
            .await
            .unwrap();
        assert_eq!(out.value(), json!(true));
    });
}
