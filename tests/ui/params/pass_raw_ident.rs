// A parameter may have a raw name (`r#type`, a keyword otherwise): the model sees the key
// without `r#`, alone or beside other parameters.
use tool_core::prelude::*;

/// Name a kind
#[tool]
pub async fn kind_of(
    /// The kind
    r#type: String,
) -> String {
    format!("kind {type}", type = r#type)
}

/// Match a kind against a number
#[tool]
pub async fn match_kind(r#type: String, r#match: u32) -> String {
    format!("{}#{}", r#type, r#match)
}

pub fn main() {
    tokio::runtime::Runtime::new().unwrap().block_on(async {
        let registry = &Registry::from_module(module_path!()).unwrap();

        let schema = registry.get("kind-of").unwrap().spec().schemas.input.clone();
        assert_eq!(schema["required"], json!(["type"]), "{schema}");
        assert_eq!(schema["properties"]["type"]["description"], "The kind");
        let out = registry.call("kind-of", json!({"type": "bird"}), CallOptions::default()).await.unwrap();
        assert_eq!(out.value(), json!("kind bird"));
        let input: InputOf<kind_of> = serde_json::from_value(json!({"type": "fish"})).unwrap();
        assert_eq!(input.r#type, "fish");

        let schema = registry.get("match-kind").unwrap().spec().schemas.input.clone();
        assert_eq!(schema["required"], json!(["type", "match"]), "{schema}");
        let out = registry
            .call("match-kind", json!({"type": "bird", "match": 2}), CallOptions::default())
            .await
            .unwrap();
        assert_eq!(out.value(), json!("bird#2"));
    });
}
