//! Deferred loading: each dialect's tool list with tool search, and the generated search
//! tool's answers loading tools into the conversation's loaded set.

use serde_json::{Value, json};
use tool_core::catalog::{Catalog, LoadedTools, SEARCH_TOOL, ToolSearchMode};
use tool_core::{CallOptions, Dialect, DynamicTool, Registry};

fn tool(id: &str, description: &str, edit: impl FnOnce(&mut tool_core::spec::ToolSpec)) -> DynamicTool {
    let id_owned = id.to_owned();
    DynamicTool::builder(id, description)
        .input_schema(json!({"type": "object", "properties": {"name": {"type": "string", "description": "Whom to look up"}}}))
        .with_spec(edit)
        .handler(move |input, _| {
            let id = id_owned.clone();
            async move { Ok(json!({"tool": id, "input": input})) }
        })
        .unwrap()
}

/// A web search loaded up front; three CRM tools deferred, two of them namespaced.
fn catalog() -> Catalog {
    Catalog::new(
        "agent",
        "1.0.0",
        Registry::from_iter([
            tool("search_web", "Search the web", |_| {}),
            tool("crm_find", "Find a customer record by name", |s| {
                s.presentation.defer_loading = true;
                s.presentation.namespace = Some("crm".into());
            }),
            tool("crm_merge", "Merge two duplicate customer records", |s| {
                s.presentation.defer_loading = true;
                s.presentation.namespace = Some("crm".into());
            }),
            tool("invoice_send", "Email an invoice to a customer", |s| {
                s.presentation.defer_loading = true
            }),
        ]),
    )
}

fn names(list: &[Value]) -> Vec<String> {
    list.iter()
        .map(|t| {
            t.get("name")
                .or_else(|| t.get("function").and_then(|f| f.get("name")))
                .or_else(|| t.get("type"))
                .and_then(Value::as_str)
                .unwrap_or("?")
                .to_owned()
        })
        .collect()
}

#[test]
fn openai_responses_defers_natively_with_namespaces_and_tool_search() {
    let export = catalog()
        .export_deferred(Dialect::OpenAiResponses, ToolSearchMode::Native, &LoadedTools::default())
        .unwrap();
    let doc = export.document();
    let list = doc.as_array().unwrap();
    assert_eq!(names(list), ["invoice_send", "search_web", "crm", "tool_search"]);
    assert_eq!(list[0]["defer_loading"], true);
    assert!(list[1].get("defer_loading").is_none());
    let crm = &list[2];
    assert_eq!(crm["type"], "namespace");
    assert_eq!(crm["description"], "The crm tools: crm_find, crm_merge.");
    assert_eq!(names(crm["tools"].as_array().unwrap()), ["crm_find", "crm_merge"]);
    assert!(
        crm["tools"]
            .as_array()
            .unwrap()
            .iter()
            .all(|t| t["defer_loading"] == true && t["type"] == "function")
    );
    assert_eq!(list[3], json!({"type": "tool_search"}));
    // The serialised export is the same document, written from the cached entries.
    assert_eq!(serde_json::to_value(&export).unwrap(), doc);

    let described = catalog().describe_namespace("crm", "Customer records: find and merge them.");
    let doc = described
        .export_deferred(Dialect::OpenAiResponses, ToolSearchMode::Native, &LoadedTools::default())
        .unwrap()
        .document();
    assert_eq!(doc[2]["description"], "Customer records: find and merge them.");
}

#[test]
fn anthropic_defers_natively_with_the_bm25_search_tool_and_warns_of_namespaces() {
    let export = catalog()
        .export_deferred(Dialect::Anthropic, ToolSearchMode::Native, &LoadedTools::default())
        .unwrap();
    let doc = export.document();
    let list = doc.as_array().unwrap();
    assert_eq!(
        names(list),
        ["crm_find", "crm_merge", "invoice_send", "search_web", "tool_search_tool_bm25"]
    );
    assert_eq!(
        list[4],
        json!({"type": "tool_search_tool_bm25_20251119", "name": "tool_search_tool_bm25"})
    );
    assert!(list[..3].iter().all(|t| t["defer_loading"] == true));
    assert!(list[3].get("defer_loading").is_none());
    assert_eq!(
        export.warnings,
        ["anthropic has no namespaces: namespace `crm` (2 tools) is not sent"]
    );
}

#[test]
fn other_dialects_get_the_generated_search_tool_and_the_loaded_tools() {
    for dialect in [Dialect::OpenAiChat, Dialect::GeminiJsonSchema, Dialect::GeminiOpenApi, Dialect::Mcp] {
        let catalog = catalog();
        let mut loaded = LoadedTools::default();
        let first = catalog
            .export_deferred(dialect, ToolSearchMode::Native, &loaded)
            .unwrap()
            .document();
        let list = |doc: &Value| {
            let list = doc.get("functionDeclarations").or_else(|| doc.get("tools")).unwrap_or(doc);
            names(list.as_array().unwrap())
        };
        assert_eq!(list(&first), ["search_web", SEARCH_TOOL], "{dialect}");
        assert!(!serde_json::to_string(&first).unwrap().contains("defer_loading"), "{dialect}");

        // One search loads several tools.
        let answer = catalog
            .answer_search(dialect, &json!({"query": "customer records", "limit": 2}), &mut loaded)
            .unwrap();
        assert_eq!(answer["tools"].as_array().unwrap().len(), 2, "{answer}");
        assert_eq!(answer["tools"][0]["namespace"], "crm", "{answer}");
        assert_eq!(loaded.iter().collect::<Vec<_>>(), ["crm_find", "crm_merge"], "{dialect}");
        let next = catalog
            .export_deferred(dialect, ToolSearchMode::Native, &loaded)
            .unwrap()
            .document();
        assert_eq!(list(&next), ["crm_find", "crm_merge", "search_web", SEARCH_TOOL], "{dialect}");
    }
}

#[test]
fn generated_mode_is_used_for_native_dialects_when_asked() {
    let doc = catalog()
        .export_deferred(Dialect::Anthropic, ToolSearchMode::Generated, &LoadedTools::default())
        .unwrap()
        .document();
    assert_eq!(names(doc.as_array().unwrap()), ["search_web", SEARCH_TOOL]);
    assert_eq!(doc[1]["input_schema"]["required"], json!(["query"]));
}

#[test]
fn without_deferred_tools_the_export_is_the_plain_one() {
    let catalog = catalog().defer_none();
    for dialect in Dialect::ALL {
        let deferred = catalog
            .export_deferred(dialect, ToolSearchMode::Native, &LoadedTools::default())
            .unwrap();
        assert_eq!(deferred, catalog.export(dialect).unwrap(), "{dialect}");
    }
}

#[test]
fn a_tool_named_like_the_search_tool_is_refused() {
    let catalog = Catalog::new(
        "agent",
        "1.0.0",
        Registry::from_iter([
            tool(SEARCH_TOOL, "My own search", |_| {}),
            tool("crm_find", "Find a customer", |s| s.presentation.defer_loading = true),
        ]),
    );
    let err = catalog
        .export_deferred(Dialect::OpenAiChat, ToolSearchMode::Native, &LoadedTools::default())
        .unwrap_err();
    assert!(err.to_string().contains("the generated search tool's name"), "{err}");
}

#[tokio::test]
async fn dispatch_answers_the_search_then_runs_a_loaded_tool_and_refuses_an_unloaded_one() {
    let catalog = catalog();
    let mut loaded = LoadedTools::default();
    let dialect = Dialect::OpenAiChat;
    let refused = catalog
        .dispatch_deferred(dialect, "invoice_send", r#"{"name": "Ada"}"#, CallOptions::default(), &mut loaded)
        .await
        .unwrap_err();
    assert!(
        refused.message().contains("find it with `search_tools` first"),
        "{}",
        refused.message()
    );

    let found = catalog
        .dispatch_deferred(
            dialect,
            SEARCH_TOOL,
            r#"{"query": "email an invoice"}"#,
            CallOptions::default(),
            &mut loaded,
        )
        .await
        .unwrap();
    assert_eq!(found.value()["tools"][0]["name"], "invoice_send");
    assert!(loaded.contains("invoice_send"));

    // The loaded set is conversation state: stored and read back (another instance), it still
    // lets the call through.
    let mut restored: LoadedTools = serde_json::from_str(&serde_json::to_string(&loaded).unwrap()).unwrap();
    let out = catalog
        .dispatch_deferred(dialect, "invoice_send", r#"{"name": "Ada"}"#, CallOptions::default(), &mut restored)
        .await
        .unwrap();
    assert_eq!(out.value()["tool"], "invoice_send");
    // Tools loaded up front run without a search.
    let web = catalog
        .dispatch_deferred(dialect, "search_web", r#"{}"#, CallOptions::default(), &mut LoadedTools::default())
        .await
        .unwrap();
    assert_eq!(web.value()["tool"], "search_web");
    let bad = catalog
        .dispatch_deferred(dialect, SEARCH_TOOL, r#"{"q": 1}"#, CallOptions::default(), &mut loaded)
        .await
        .unwrap_err();
    assert!(bad.message().contains("needs a `query`"), "{}", bad.message());
}

mod crm {
    use tool_core::prelude::*;

    fn available(_call: &ToolCallInfo, _input: &InputOf<crm_lookup>) {}

    fn for_model(found: &String) -> ModelOutput {
        ModelOutput::text(format!("model sees: {found}"))
    }

    /// Look up a customer record in the CRM by the customer's name
    #[tool(id = "crm-lookup", defer_loading, namespace = "crm", on_input_available = available, to_model_output = for_model)]
    pub async fn crm_lookup(
        /// The customer's name
        name: String,
    ) -> String {
        format!("record of {name}")
    }

    /// Search the web for pages
    #[tool(id = "web-search")]
    pub async fn web_search(query: String) -> String {
        query
    }
}

/// Through the test kit's scripted model and the runtime, per streamed dialect: the model calls
/// the generated search tool (an ordinary registered tool), the conversation records what it
/// loaded, the next request lists the found tool, and the model's call of it runs with its
/// hooks and its model output.
#[tokio::test]
async fn the_scripted_model_searches_then_calls_a_found_tool_through_the_runtime() {
    use tool_core::testing::ScriptedStream;
    for dialect in [Dialect::OpenAiChat, Dialect::OpenAiResponses, Dialect::Anthropic] {
        let catalog = std::sync::Arc::new(Catalog::new(
            "agent",
            "1.0.0",
            Registry::from_iter([crm::crm_lookup::tool(), crm::web_search::tool()]),
        ));
        catalog.registry().insert(catalog.search_tool(dialect)).unwrap();
        let mode = ToolSearchMode::Generated;
        let mut loaded = LoadedTools::default();
        let listed = |loaded: &LoadedTools| {
            let doc = catalog.export_deferred(dialect, mode, loaded).unwrap().document();
            serde_json::to_string(&doc).unwrap()
        };
        assert!(!listed(&loaded).contains("crm-lookup"), "{dialect}");

        let searched = ScriptedStream::new(dialect)
            .tool_call("call_1", SEARCH_TOOL, json!({"query": "customer record"}))
            .replay()
            .registry(catalog.registry())
            .await;
        let answer = searched.result_of("call_1");
        assert_eq!(answer["tools"][0]["name"], "crm-lookup", "{dialect}: {answer}");
        loaded.record(&answer);
        assert!(loaded.contains("crm-lookup"), "{dialect}");
        assert!(listed(&loaded).contains("crm-lookup"), "{dialect}");

        let called = ScriptedStream::new(dialect)
            .tool_call("call_2", "crm-lookup", json!({"name": "Ada"}))
            .replay()
            .registry(catalog.registry())
            .await;
        assert_eq!(called.result_of("call_2"), json!("record of Ada"), "{dialect}");
        let hooks = called.hook_lines("call_2");
        assert!(hooks.iter().any(|l| l.starts_with("on_input_available")), "{dialect}: {hooks:?}");
        let Some(last) = called.events_of("call_2").pop() else {
            panic!("no events")
        };
        let shown = serde_json::to_value(&last).unwrap();
        assert!(shown.to_string().contains("model sees: record of Ada"), "{dialect}: {shown}");
    }
}

#[test]
fn client_mode_searches_here_in_the_providers_own_shapes() {
    let catalog = catalog();
    // OpenAI Responses: a client-executed `tool_search`, answered with a `tool_search_output`
    // item carrying the found tools' definitions.
    let doc = catalog
        .export_deferred(Dialect::OpenAiResponses, ToolSearchMode::Client, &LoadedTools::default())
        .unwrap()
        .document();
    let search = doc.as_array().unwrap().last().unwrap();
    assert_eq!(search["type"], "tool_search");
    assert_eq!(search["execution"], "client");
    assert_eq!(search["parameters"]["required"], json!(["query"]));
    let mut loaded = LoadedTools::default();
    let output = catalog
        .tool_search_output("call_9", &json!({"query": "email an invoice", "limit": 1}), &mut loaded)
        .unwrap();
    assert_eq!(output["type"], "tool_search_output");
    assert_eq!(output["call_id"], "call_9");
    assert_eq!(output["tools"][0]["name"], "invoice_send");
    assert_eq!(output["tools"][0]["type"], "function");
    assert!(loaded.contains("invoice_send"));

    // Anthropic: a `search_tools` tool of our own beside the deferred tools, answered with
    // `tool_reference` blocks.
    let doc = catalog
        .export_deferred(Dialect::Anthropic, ToolSearchMode::Client, &LoadedTools::default())
        .unwrap()
        .document();
    let list = doc.as_array().unwrap();
    assert_eq!(list.last().unwrap()["name"], SEARCH_TOOL);
    assert!(list.iter().filter(|t| t["defer_loading"] == true).count() == 3);
    let mut loaded = LoadedTools::default();
    let blocks = catalog
        .tool_references(&json!({"query": "customer records", "limit": 2}), &mut loaded)
        .unwrap();
    assert_eq!(
        blocks,
        json!([{"type": "tool_reference", "tool_name": "crm_find"}, {"type": "tool_reference", "tool_name": "crm_merge"}])
    );
    let none = catalog.tool_references(&json!({"query": "zzzz"}), &mut loaded).unwrap();
    assert_eq!(none[0]["type"], "text");
}

#[test]
fn allowed_tools_keeps_deferred_tools_out_of_reach_until_loaded() {
    let catalog = catalog();
    let mut loaded = LoadedTools::default();
    let chat = catalog.allowed_tools(Dialect::OpenAiChat, &loaded).unwrap();
    assert_eq!(
        chat,
        json!({"type": "allowed_tools", "allowed_tools": {"mode": "auto", "tools": [{"type": "function", "function": {"name": "search_web"}}]}})
    );
    loaded.extend(["crm_find"]);
    let responses = catalog.allowed_tools(Dialect::OpenAiResponses, &loaded).unwrap();
    assert_eq!(
        responses,
        json!({"type": "allowed_tools", "mode": "auto", "tools": [{"type": "function", "name": "crm_find"}, {"type": "function", "name": "search_web"}]})
    );
    assert!(catalog.allowed_tools(Dialect::Anthropic, &loaded).is_none());
}
