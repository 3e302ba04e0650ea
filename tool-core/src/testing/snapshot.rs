//! Snapshots of what a model sees of tools: a tool's schemas, a catalog in one provider's
//! format, kept as `insta` snapshot files next to the test.
//!
//! Owns [`tool_schema_snapshot`] and [`catalog_snapshot`] (the values snapshotted) and the
//! macros [`assert_tool_schema_snapshot!`](crate::assert_tool_schema_snapshot) and
//! [`assert_catalog_snapshot!`](crate::assert_catalog_snapshot), which hand them to
//! `insta::assert_json_snapshot!` at the caller's place (so the snapshot file is the caller's).
//! Review changed snapshots with `cargo insta review`.

use serde_json::{Map, Value, json};

use crate::catalog::Catalog;
use crate::dialect::Dialect;
use crate::tool::Tool;

/// A tool's id, description and schemas (input, output, request context, suspend, resume),
/// the parts of its spec a model or client relies on. Where it was defined is left out, so
/// moving it does not change its snapshot.
pub fn tool_schema_snapshot(tool: &dyn Tool) -> Value {
    let spec = tool.spec();
    let mut out = Map::new();
    out.insert("id".into(), json!(spec.id));
    out.insert("description".into(), json!(spec.description));
    out.insert("input_schema".into(), spec.schemas.input.clone());
    let optional = [
        ("output_schema", &spec.schemas.output),
        ("request_context_schema", &spec.schemas.request_context),
        ("suspend_schema", &spec.schemas.suspend),
        ("resume_schema", &spec.schemas.resume),
    ];
    for (key, schema) in optional {
        if let Some(schema) = schema {
            out.insert(key.into(), schema.clone());
        }
    }
    Value::Object(out)
}

/// A catalog exported in `dialect`, with the export's warnings when there are any:
/// `{"document": …, "warnings": [...]}`, or the error when it cannot be exported.
pub fn catalog_snapshot(catalog: &Catalog, dialect: Dialect) -> Value {
    match catalog.export(dialect) {
        Ok(export) if export.warnings.is_empty() => export.document(),
        Ok(export) => json!({"document": export.document(), "warnings": export.warnings}),
        Err(e) => json!({"error": e.to_string()}),
    }
}

/// Snapshots a tool's schemas ([`tool_schema_snapshot`](crate::testing::tool_schema_snapshot))
/// under the name `schema_<tool id>`, or the name given first.
///
/// ```ignore
/// tool_core::assert_tool_schema_snapshot!(weather::tool().unwrap());
/// tool_core::assert_tool_schema_snapshot!("weather_v2", weather::tool().unwrap());
/// ```
#[macro_export]
macro_rules! assert_tool_schema_snapshot {
    ($name:expr, $tool:expr $(,)?) => {{
        let tool: ::std::sync::Arc<dyn $crate::Tool> = $crate::IntoTool::into_tool($tool).expect("the tool is valid");
        let schemas = $crate::testing::tool_schema_snapshot(&*tool);
        $crate::testing::insta::assert_json_snapshot!($name, schemas);
    }};
    ($tool:expr $(,)?) => {{
        let tool: ::std::sync::Arc<dyn $crate::Tool> = $crate::IntoTool::into_tool($tool).expect("the tool is valid");
        let name = ::std::format!("schema_{}", tool.spec().id);
        let schemas = $crate::testing::tool_schema_snapshot(&*tool);
        $crate::testing::insta::assert_json_snapshot!(name, schemas);
    }};
}

/// Snapshots a catalog in one dialect ([`catalog_snapshot`](crate::testing::catalog_snapshot))
/// under the name `catalog_<Dialect>`, or the name given first. The catalog is a
/// `&`[`Catalog`](crate::catalog::Catalog).
///
/// ```ignore
/// tool_core::assert_catalog_snapshot!(&catalog, Dialect::Anthropic);
/// tool_core::assert_catalog_snapshot!("weather_only", &catalog, Dialect::OpenAiChat);
/// ```
#[macro_export]
macro_rules! assert_catalog_snapshot {
    ($name:expr, $catalog:expr, $dialect:expr $(,)?) => {{
        let catalog: &$crate::catalog::Catalog = $catalog;
        let export = $crate::testing::catalog_snapshot(catalog, $dialect);
        $crate::testing::insta::assert_json_snapshot!($name, export);
    }};
    ($catalog:expr, $dialect:expr $(,)?) => {{
        let dialect: $crate::Dialect = $dialect;
        let name = ::std::format!("catalog_{dialect:?}");
        $crate::assert_catalog_snapshot!(name, $catalog, dialect)
    }};
}
