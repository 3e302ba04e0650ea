//! `toolsmith catalog` for tool search: deferred exports per format (`--tool-search`), the
//! catalog's overrides from the command line, the `allowed_tools` tool choice and the cache
//! breakpoint. The SDK types check the same exports in tests/ts/check.sh.

use serde_json::Value;

use crate::support::toolsmith;

const CORE: &str = "weather-tool,calculate";

fn names(list: &Value) -> Vec<String> {
    list.as_array()
        .unwrap()
        .iter()
        .map(|t| {
            t.pointer("/function/name")
                .or(t.get("name"))
                .or(t.get("type"))
                .and_then(Value::as_str)
                .unwrap()
                .to_owned()
        })
        .collect()
}

#[test]
fn native_search_for_openai_responses_with_namespaces() {
    let run = toolsmith(&[
        "catalog",
        "--format",
        "openai-responses",
        "--tool-search",
        "native",
        "--defer-all-except",
        CORE,
        "--namespace",
        "weather=weather",
        "--tag",
        "weather",
        "--tag",
        "math",
    ]);
    assert_eq!(run.code, 0, "{}", run.stderr);
    let list = run.json();
    // calculate allows programmatic callers: the hosted tool they need comes last, once.
    assert_eq!(
        names(&list),
        ["calculate", "convert-units", "weather", "tool_search", "programmatic_tool_calling"]
    );
    assert!(list[0].get("defer_loading").is_none(), "core tools load up front: {}", list[0]);
    assert_eq!(list[1]["defer_loading"], true);
    // calculate declares allowed_callers: OpenAI's spelling.
    assert_eq!(list[0]["allowed_callers"], serde_json::json!(["direct", "programmatic"]));
    let group = &list[2];
    assert_eq!(group["type"], "namespace");
    assert_eq!(
        names(&group["tools"]),
        ["weather-hooks", "weather-mcp", "weather-model-output", "weather-tool"]
    );
    assert!(group["tools"][3].get("defer_loading").is_none() && group["tools"][0]["defer_loading"] == true);
    assert_eq!(list[3], serde_json::json!({"type": "tool_search"}));
    assert_eq!(list[4], serde_json::json!({"type": "programmatic_tool_calling"}));

    let client = toolsmith(&[
        "catalog",
        "--format",
        "openai-responses",
        "--tool-search",
        "client",
        "--defer-all-except",
        CORE,
        "--tag",
        "math",
    ])
    .json();
    let search = &client[2];
    assert_eq!(
        (search["type"].as_str(), search["execution"].as_str()),
        (Some("tool_search"), Some("client"))
    );
    assert!(search["parameters"]["properties"]["query"].is_object());
}

#[test]
fn generated_search_lists_the_loaded_tools_only() {
    let list = toolsmith(&[
        "catalog",
        "--format",
        "openai",
        "--tool-search",
        "native",
        "--defer-all-except",
        "weather-tool",
        "--loaded",
        "convert-units",
        "--tag",
        "weather",
        "--tag",
        "math",
    ])
    .json();
    assert_eq!(names(&list), ["convert-units", "weather-tool", "search_tools"]);
    for format in ["gemini", "mcp"] {
        let doc = toolsmith(&[
            "catalog",
            "--format",
            format,
            "--tool-search",
            "generated",
            "--defer-all-except",
            "",
            "--tag",
            "math",
        ])
        .json();
        let key = if format == "mcp" { "tools" } else { "functionDeclarations" };
        assert_eq!(names(&doc[key]), ["search_tools"], "{format}");
    }
}

#[test]
fn anthropic_search_and_the_cache_breakpoint() {
    let run = toolsmith(&[
        "catalog",
        "--format",
        "anthropic",
        "--tool-search",
        "native",
        "--defer-all-except",
        CORE,
        "--tag",
        "math",
        "--cache-tools",
    ]);
    assert_eq!(run.code, 0, "{}", run.stderr);
    let list = run.json();
    // calculate's programmatic callers need Anthropic's code execution tool: added once, last,
    // so the cache breakpoint is on it.
    assert_eq!(
        names(&list),
        ["calculate", "convert-units", "tool_search_tool_bm25", "code_execution"]
    );
    assert_eq!(list[0]["allowed_callers"], serde_json::json!(["direct", "code_execution_20250825"]));
    assert_eq!(list[1]["defer_loading"], true);
    assert_eq!(list[3]["type"], "code_execution_20250825");
    assert_eq!(list[3]["cache_control"]["type"], "ephemeral");
    assert!((0..3).all(|i| list[i].get("cache_control").is_none()), "{list}");

    // Where the format cannot carry a field, standard error says so.
    let openai = toolsmith(&["catalog", "--format", "openai", "--cache-tools", "--tag", "math"]);
    assert_eq!(openai.code, 0, "{}", openai.stderr);
    assert!(openai.stderr.contains("`cache_control`"), "{}", openai.stderr);
    assert!(
        openai
            .stderr
            .contains("tool `calculate`: openai-chat cannot carry `allowed_callers`"),
        "{}",
        openai.stderr
    );
}

#[test]
fn allowed_tools_choice_and_refusals() {
    let choice = toolsmith(&[
        "catalog",
        "--format",
        "openai-responses",
        "--allowed-tools",
        "--defer-all-except",
        "weather-tool",
        "--loaded",
        "calculate",
        "--tag",
        "weather",
        "--tag",
        "math",
    ])
    .json();
    assert_eq!(choice["type"], "allowed_tools");
    assert_eq!(names(&choice["tools"]), ["calculate", "weather-tool"]);
    let chat = toolsmith(&[
        "catalog",
        "--format",
        "openai",
        "--allowed-tools",
        "--defer-all-except",
        "weather-tool",
        "--tag",
        "weather",
    ])
    .json();
    assert_eq!(names(&chat["allowed_tools"]["tools"]), ["weather-tool"]);

    for (args, says) in [
        (&["catalog", "--format", "anthropic", "--allowed-tools"][..], "no `allowed_tools`"),
        (
            &["catalog", "--format", "toolsmith", "--tool-search", "native"][..],
            "provider's --format",
        ),
        (&["catalog", "--format", "openai", "--namespace", "weather"][..], "TAG=NAMESPACE"),
        (
            &["catalog", "--format", "openai", "--namespace", "weather=a.b"][..],
            "not a namespace",
        ),
        (
            &["catalog", "--format", "openai", "--tool-search", "native", "--strict"][..],
            "--strict",
        ),
    ] {
        let run = toolsmith(args);
        assert_ne!(run.code, 0, "{args:?}");
        assert!(run.stderr.contains(says), "{args:?}: {}", run.stderr);
    }
}

#[test]
fn the_answer_to_a_client_search() {
    let search = |format: &str| {
        toolsmith(&[
            "catalog",
            "--format",
            format,
            "--tool-search",
            "client",
            "--defer-all-except",
            "calculate",
            "--answer-search",
            "weather forecast for a city",
        ])
        .json()
    };
    let item = search("openai-responses");
    assert_eq!(
        (item["type"].as_str(), item["execution"].as_str()),
        (Some("tool_search_output"), Some("client"))
    );
    let found = names(&item["tools"]);
    // The four weather tools rank first; the search loads up to five.
    let weather = ["weather-hooks", "weather-mcp", "weather-model-output", "weather-tool"];
    assert!(
        found.len() <= 5 && found[..4].iter().all(|n| weather.contains(&n.as_str())),
        "{found:?}"
    );
    assert!(item["tools"][0]["parameters"].is_object(), "the found tools' definitions: {item}");
    let block = search("anthropic");
    assert_eq!(block["type"], "tool_result");
    let references = block["content"].as_array().unwrap();
    assert_eq!(references.len(), found.len(), "{block}");
    assert!(references.iter().all(|b| b["type"] == "tool_reference"), "{block}");
    assert!(
        block["content"][0]["tool_name"].as_str().unwrap().starts_with("weather-"),
        "{block}"
    );
    let refused = toolsmith(&["catalog", "--format", "openai", "--tool-search", "client", "--answer-search", "x"]);
    assert_ne!(refused.code, 0);
    assert!(refused.stderr.contains("--answer-search needs"), "{}", refused.stderr);
}
