// `provider_options(name = expr)`: any `Serialize` expression, stored per provider.
use tool_core::prelude::*;

#[derive(Serialize)]
struct OpenAiOptions {
    parallel_tool_calls: bool,
}

/// Search the docs
#[tool(provider_options(
    anthropic = json!({"cache_control": {"type": "ephemeral"}}),
    openai = OpenAiOptions { parallel_tool_calls: false },
))]
pub async fn search_docs(query: String) -> Vec<String> {
    vec![query]
}

pub fn main() {
    tokio::runtime::Runtime::new().unwrap().block_on(async {
        let registry = &Registry::from_module(module_path!()).unwrap();
        let spec = registry.get("search-docs").unwrap().spec().clone();
        assert_eq!(spec.presentation.provider_options.len(), 2);
        assert_eq!(spec.presentation.provider_options["anthropic"], json!({"cache_control": {"type": "ephemeral"}}));
        assert_eq!(spec.presentation.provider_options["openai"], json!({"parallel_tool_calls": false}));

        let out = registry
            .call("search-docs", json!({"query": "tool"}), CallOptions::default())
            .await
            .unwrap();
        assert_eq!(out.value(), json!(["tool"]));
    });
}
