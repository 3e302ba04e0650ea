//! The per-tool fields only some providers carry (Anthropic `eager_input_streaming`,
//! `allowed_callers`, Gemini `behavior`) and the catalog's cache breakpoint: sent where the
//! format has them, in its spelling, and warned about everywhere else (MCP: only what its
//! clients would lose); the tool programmatic callers need, added once.

use serde_json::{Value, json};
use tool_core::catalog::{Catalog, LoadedTools, ToolSearchMode};
use tool_core::spec::CallBehavior;
use tool_core::{Dialect, DynamicTool, Registry};

fn tool(id: &str) -> tool_core::tool::DynamicToolBuilder {
    DynamicTool::builder(id, "A tool").input_schema(json!({"type": "object", "properties": {"n": {"type": "number"}}}))
}

fn built(builder: tool_core::tool::DynamicToolBuilder) -> DynamicTool {
    builder.handler(|_, _| async { Ok(json!(null)) }).unwrap()
}

/// `plain` with none of the fields; `sum` with all three.
fn catalog() -> Catalog {
    let sum = tool("sum")
        .eager_input_streaming(true)
        .allowed_callers(["direct", "programmatic", "code_execution_20260120"])
        .behavior(CallBehavior::NonBlocking);
    Catalog::new("fields", "1.0.0", Registry::from_iter([built(tool("plain")), built(sum)]))
}

fn entry(doc: &Value, dialect: Dialect, i: usize) -> Value {
    match dialect {
        Dialect::GeminiOpenApi | Dialect::GeminiJsonSchema => doc["functionDeclarations"][i].clone(),
        Dialect::Mcp => doc["tools"][i].clone(),
        Dialect::OpenAiChat => doc[i]["function"].clone(),
        _ => doc[i].clone(),
    }
}

#[test]
fn each_field_is_sent_where_the_format_has_it_and_warned_about_elsewhere() {
    let catalog = catalog();
    // (dialect, the fields sent with their values)
    let cases = [
        (
            Dialect::Anthropic,
            json!({"eager_input_streaming": true, "allowed_callers": ["direct", "code_execution_20250825", "code_execution_20260120"]}),
        ),
        (Dialect::OpenAiResponses, json!({"allowed_callers": ["direct", "programmatic"]})),
        (Dialect::OpenAiChat, json!({})),
        (Dialect::GeminiJsonSchema, json!({"behavior": "NON_BLOCKING"})),
        (Dialect::GeminiOpenApi, json!({"behavior": "NON_BLOCKING"})),
        (Dialect::Mcp, json!({})),
    ];
    for (dialect, sent) in cases {
        let export = catalog.export(dialect).unwrap();
        let doc = export.document();
        let sum = entry(&doc, dialect, 1);
        let plain = entry(&doc, dialect, 0);
        for field in ["eager_input_streaming", "allowed_callers", "behavior"] {
            assert!(plain.get(field).is_none(), "{dialect}: `plain` has no {field}: {plain}");
            let warned = export
                .warnings
                .iter()
                .any(|w| w.contains("tool `sum`") && w.contains(&format!("`{field}`")));
            match sent.get(field) {
                Some(value) => {
                    assert_eq!(sum.get(field), Some(value), "{dialect}: {field}");
                    assert!(!warned, "{dialect}: {field} is sent, yet warned about: {:?}", export.warnings);
                }
                // MCP leaves the provider request to its client: nothing it cannot carry here
                // is lost (the callers include `direct`), so nothing is said.
                None if dialect == Dialect::Mcp => {
                    assert!(sum.get(field).is_none(), "{dialect}: {field} sent: {sum}");
                    assert!(
                        !warned,
                        "{dialect}: {field} is irrelevant to MCP, yet warned about: {:?}",
                        export.warnings
                    );
                }
                None => {
                    assert!(sum.get(field).is_none(), "{dialect}: {field} sent: {sum}");
                    assert!(warned, "{dialect}: {field} dropped without a warning: {:?}", export.warnings);
                }
            }
        }
    }
}

#[test]
fn a_caller_that_is_none_is_refused_when_the_tool_is_built() {
    let err = tool("sum")
        .allowed_callers(["model"])
        .handler(|_, _| async { Ok(json!(null)) })
        .unwrap_err();
    assert!(err.to_string().contains("`model` is not a caller"), "{err}");
}

#[test]
fn the_cache_breakpoint_is_on_the_last_tool_of_anthropic_exports_only() {
    let catalog = catalog().cache_tool_definitions();
    let tools = catalog.export(Dialect::Anthropic).unwrap().document();
    let marked: Vec<bool> = tools.as_array().unwrap().iter().map(|t| t.get("cache_control").is_some()).collect();
    // The last tool is the code execution tool `sum`'s programmatic callers need.
    assert_eq!(marked, [false, false, true]);
    assert_eq!(tools[2]["cache_control"], json!({"type": "ephemeral"}));
    assert_eq!(tools[2]["type"], "code_execution_20260120");
    // A deferred export ends with the search tool: the breakpoint follows it.
    let deferred = catalog.defer_all_except(["plain"]);
    for mode in [ToolSearchMode::Native, ToolSearchMode::Client, ToolSearchMode::Generated] {
        let tools = deferred
            .export_deferred(Dialect::Anthropic, mode, &LoadedTools::default())
            .unwrap()
            .document();
        let list = tools.as_array().unwrap();
        let with: Vec<usize> = (0..list.len()).filter(|i| list[*i].get("cache_control").is_some()).collect();
        assert_eq!(with, [list.len() - 1], "{mode:?}: {tools}");
    }
    // Elsewhere: nothing is marked, and the export says why.
    for dialect in [
        Dialect::OpenAiChat,
        Dialect::OpenAiResponses,
        Dialect::GeminiJsonSchema,
        Dialect::Mcp,
    ] {
        let export = deferred
            .export_deferred(dialect, ToolSearchMode::Native, &LoadedTools::default())
            .unwrap();
        assert!(!export.document().to_string().contains("cache_control"), "{dialect}");
        assert!(
            export.warnings.iter().any(|w| w.contains("`cache_control`")),
            "{dialect}: {:?}",
            export.warnings
        );
    }
}

#[test]
fn without_the_option_no_tool_is_marked() {
    let tools = catalog().export(Dialect::Anthropic).unwrap();
    assert!(!tools.document().to_string().contains("cache_control"));
    assert!(!tools.warnings.iter().any(|w| w.contains("cache_control")));
}

#[test]
fn programmatic_callers_bring_the_tool_their_request_needs_once() {
    let code = |id: &str, callers: &[&str]| built(tool(id).allowed_callers(callers.iter().copied()));
    let catalog = Catalog::new(
        "ptc",
        "1.0.0",
        Registry::from_iter([
            built(tool("plain")),
            code("a", &["direct", "programmatic"]),
            code("b", &["programmatic"]),
        ]),
    );
    let anthropic = catalog.export(Dialect::Anthropic).unwrap();
    let tools = anthropic.document();
    let added: Vec<&Value> = tools.as_array().unwrap().iter().filter(|t| t.get("type").is_some()).collect();
    assert_eq!(
        added,
        [&json!({"type": "code_execution_20250825", "name": "code_execution"})],
        "{tools}"
    );
    assert!(anthropic.warnings.is_empty(), "{:?}", anthropic.warnings);
    let responses = catalog.export(Dialect::OpenAiResponses).unwrap().document();
    let hosted: Vec<&Value> = responses.as_array().unwrap().iter().filter(|t| t["type"] != "function").collect();
    assert_eq!(hosted, [&json!({"type": "programmatic_tool_calling"})], "{responses}");
    // Deferred exports too (the tools code calls may be found later).
    let deferred = catalog
        .defer_all_except(["plain"])
        .export_deferred(Dialect::Anthropic, ToolSearchMode::Native, &LoadedTools::default())
        .unwrap()
        .document();
    assert_eq!(
        deferred.to_string().matches(r#""type":"code_execution_20250825""#).count(),
        1,
        "{deferred}"
    );
    // Formats without programmatic calling add nothing.
    assert!(
        !Catalog::new("ptc", "1.0.0", Registry::from_iter([code("b", &["programmatic"])]))
            .export(Dialect::OpenAiChat)
            .unwrap()
            .document()
            .to_string()
            .contains("code_execution")
    );
    // Without programmatic callers, nothing is added.
    let plain = Catalog::new("p", "1.0.0", Registry::from_iter([built(tool("plain"))]));
    assert_eq!(plain.export(Dialect::Anthropic).unwrap().document().as_array().unwrap().len(), 1);
    assert_eq!(
        plain.export(Dialect::OpenAiResponses).unwrap().document().as_array().unwrap().len(),
        1
    );
}

#[test]
fn mcp_warns_only_about_a_tool_that_only_code_may_call() {
    let code = |id: &str, callers: &[&str]| built(tool(id).allowed_callers(callers.iter().copied()));
    let catalog = Catalog::new(
        "ptc",
        "1.0.0",
        Registry::from_iter([code("both", &["direct", "programmatic"]), code("only_code", &["programmatic"])]),
    );
    let export = catalog.export(Dialect::Mcp).unwrap();
    assert_eq!(export.warnings.len(), 1, "{:?}", export.warnings);
    assert!(
        export.warnings[0].contains("tool `only_code`") && export.warnings[0].contains("directly"),
        "{:?}",
        export.warnings
    );
}
