//! Tool catalogs in provider formats.
//!
//! Owns the conversion of [`ToolSpec`]s into the tool lists each target expects. For now the
//! MCP `tools/list` shape; the other providers' formats and their schema passes join here.

use serde_json::{json, Map, Value};

use crate::schema::without_meta;
use crate::spec::ToolSpec;
use crate::tool::Tool;

/// One tool in MCP `tools/list` shape: `name`, `title`, `description`, `inputSchema`,
/// `outputSchema` (only for object outputs, as MCP requires), `annotations` (only the hints
/// the author set) and `_meta`.
///
/// ```
/// let spec = tool_core::ToolSpec::new("echo", "Echo text", serde_json::json!({"type": "object"}));
/// let t = tool_core::catalog::mcp_tool(&spec);
/// assert_eq!(t["name"], "echo");
/// assert!(t.get("annotations").is_none());
/// ```
pub fn mcp_tool(spec: &ToolSpec) -> Value {
    let mut t = Map::new();
    t.insert("name".into(), json!(spec.id));
    if let Some(title) = spec.title.as_ref().or(spec.mcp.title.as_ref()) {
        t.insert("title".into(), json!(title));
    }
    t.insert("description".into(), json!(spec.description));
    t.insert("inputSchema".into(), without_meta(&spec.input_schema));
    if let Some(out) = spec.output_schema.as_ref().filter(|s| s.get("type") == Some(&json!("object"))) {
        t.insert("outputSchema".into(), without_meta(out));
    }
    if let Some(a) = spec.mcp.annotations() {
        t.insert("annotations".into(), a);
    }
    if let Some(meta) = &spec.mcp.meta {
        t.insert("_meta".into(), meta.clone());
    }
    Value::Object(t)
}

/// The MCP `tools/list` result for a set of tools: `{"tools": [...]}`.
pub fn mcp_tools_list<'a>(tools: impl IntoIterator<Item = &'a dyn Tool>) -> Value {
    json!({ "tools": tools.into_iter().map(|t| mcp_tool(t.spec())).collect::<Vec<_>>() })
}
