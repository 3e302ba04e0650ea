//! End-to-end tests of the real `toolsmith` binary built from this crate: listing, schemas,
//! catalogs and calls. The file tools under a context root are in `file_tools`, imported MCP
//! servers and pins in `mcp_import`.

use std::collections::BTreeSet;

use serde_json::{Value, json};
use support::toolsmith;

use super::shared::ALL_IDS;
use crate::support;

#[test]
fn list_shows_every_tool() {
    let table = toolsmith(&["list"]);
    assert_eq!(table.code, 0, "{}", table.stderr);
    assert!(table.stdout.starts_with("ID "), "{}", table.stdout);
    for id in ALL_IDS {
        assert!(
            table.stdout.lines().any(|l| l.split_whitespace().next() == Some(id)),
            "`{id}` missing from:\n{}",
            table.stdout
        );
    }

    let listed = toolsmith(&["list", "--json"]).json();
    let ids: BTreeSet<&str> = listed.as_array().unwrap().iter().map(|t| t["id"].as_str().unwrap()).collect();
    assert_eq!(ids, ALL_IDS.into_iter().collect());
    let weather = listed.as_array().unwrap().iter().find(|t| t["id"] == "weather-tool").unwrap();
    assert!(
        weather["description"]
            .as_str()
            .unwrap()
            .starts_with("Get the current weather for a location")
    );
}

#[test]
fn schema_prints_input_and_output_schemas() {
    let s = toolsmith(&["schema", "weather-tool"]).json();
    assert_eq!(s["id"], "weather-tool");
    assert_eq!(s["input"]["type"], "object");
    assert_eq!(s["input"]["required"], json!(["location"]));
    assert_eq!(
        s["input"]["properties"]["location"],
        json!({"type": "string", "description": "City name or coordinates"})
    );
    assert_eq!(s["output"]["required"], json!(["location", "temperatureCelsius", "conditions"]));
    assert_eq!(s["output"]["properties"]["temperatureCelsius"]["type"], "number");
    assert!(s.get("context").is_none());

    let s = toolsmith(&["schema", "search-files"]).json();
    assert_eq!(s["context"]["required"], json!(["root"]));
    assert_eq!(s["input"]["required"], json!(["query"]));

    let s = toolsmith(&["schema", "write-file"]).json();
    assert_eq!(s["suspend"]["required"], json!(["path", "existing_bytes", "new_bytes"]));
    assert_eq!(s["resume"]["properties"]["overwrite"]["type"], "boolean");

    let missing = toolsmith(&["schema", "weather-tools"]);
    assert_ne!(missing.code, 0);
    assert!(missing.stderr.contains("There is no tool `weather-tools`"), "{}", missing.stderr);
    assert!(missing.stderr.contains("(closest first): `weather-tool`"), "{}", missing.stderr);
}

#[test]
fn mcp_catalog_carries_annotations_and_meta() {
    let catalog = toolsmith(&["catalog", "--format", "mcp"]).json();
    let tools = catalog["tools"].as_array().unwrap();
    let names: BTreeSet<&str> = tools.iter().map(|t| t["name"].as_str().unwrap()).collect();
    assert_eq!(names, ALL_IDS.into_iter().collect());
    let find = |name: &str| tools.iter().find(|t| t["name"] == name).unwrap();

    let mcp = find("weather-mcp");
    assert_eq!(
        mcp["annotations"],
        json!({
            "title": "Weather Lookup",
            "readOnlyHint": true,
            "destructiveHint": false,
            "idempotentHint": true,
            "openWorldHint": true,
        })
    );
    assert_eq!(mcp["_meta"], json!({"version": "1.0.0", "category": "weather"}));
    assert_eq!(mcp["title"], "Weather Lookup");
    assert_eq!(
        mcp["inputSchema"]["properties"]["location"]["description"],
        "City name or coordinates"
    );
    // MCP schemas keep the dialect they name (SEP-1613).
    assert_eq!(mcp["inputSchema"]["$schema"], "https://json-schema.org/draft/2020-12/schema");
    assert_eq!(mcp["outputSchema"]["type"], "object");

    // Unset hints are omitted, not defaulted.
    let basic = find("weather-tool");
    assert!(basic.get("annotations").is_none());
    assert!(basic.get("_meta").is_none());
    assert_eq!(
        find("convert-timezone")["annotations"],
        json!({"readOnlyHint": true, "openWorldHint": false})
    );

    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("catalog.json");
    let written = toolsmith(&["catalog", "--format", "mcp", "--out", file.to_str().unwrap()]);
    assert_eq!(written.code, 0, "{}", written.stderr);
    assert!(written.stdout.is_empty());
    let from_file: Value = serde_json::from_str(&std::fs::read_to_string(&file).unwrap()).unwrap();
    assert_eq!(from_file, catalog);
}

#[test]
fn calls_print_the_exact_result() {
    let out = toolsmith(&["call", "convert-units", r#"{"value": 100, "from": "C", "to": "F"}"#]).json();
    assert_eq!(
        out,
        json!({"quantity": "temperature", "value": 100.0, "from": "C", "result": 212.0, "to": "F", "formatted": "100 C = 212 F"})
    );

    let out = toolsmith(&["call", "weather-tool", r#"{"location": "Seattle"}"#]).json();
    assert_eq!(
        out,
        json!({"location": "Seattle", "temperatureCelsius": 21.0, "conditions": "sunny"})
    );

    let out = toolsmith(&["call", "calculate", r#"{"expression": "x * 2", "variables": {"x": 21}}"#]).json();
    assert_eq!(out, json!({"expression": "x * 2", "result": 42.0, "result_type": "float"}));

    let out = toolsmith(&[
        "call",
        "convert-timezone",
        r#"{"time": "2024-03-10T09:30:00", "from_timezone": "America/Los_Angeles", "to_timezone": "Asia/Seoul"}"#,
    ])
    .json();
    assert_eq!(out["target"]["datetime"], "2024-03-11T01:30:00+09:00");
    assert_eq!(out["utc"], "2024-03-10T16:30:00Z");

    // The application gets the raw record; the display/transcript transforms are not printed.
    let out = toolsmith(&["call", "lookup-customer", r#"{"customerId": "cus_001", "internalPath": "/crm"}"#]).json();
    assert_eq!(out, json!({"displayName": "Acme", "apiKey": "secret-value", "debugScore": 0.97}));
}

#[test]
fn model_output_is_printed_on_request() {
    let out = toolsmith(&["call", "weather-model-output", r#"{"location": "seoul"}"#, "--model-output"]).json();
    assert_eq!(
        out,
        json!({
            "value": {
                "location": "Seoul",
                "temperatureCelsius": 18.5,
                "conditions": "partly cloudy",
                "radarImageUrl": "https://example.com/radar/seoul.png"
            },
            "modelOutput": {"type": "content", "value": [
                {"type": "text", "text": "Seoul: 18.5°C and partly cloudy"},
                {"type": "image-url", "url": "https://example.com/radar/seoul.png"}
            ]}
        })
    );
    // Without a `to_model_output`, the model sees the raw value as JSON.
    let out = toolsmith(&["call", "weather-tool", r#"{"location": "Paris"}"#, "--model-output"]).json();
    assert_eq!(out["modelOutput"], json!({"type": "json", "value": out["value"]}));
}

#[test]
fn invalid_arguments_fail_naming_the_path() {
    let run = toolsmith(&["call", "convert-units", r#"{"value": "hot", "from": "C", "to": "F"}"#]);
    assert_ne!(run.code, 0);
    assert!(run.stdout.is_empty(), "{}", run.stdout);
    assert!(
        run.stderr.contains("Tool `convert-units` received invalid arguments"),
        "{}",
        run.stderr
    );
    assert!(run.stderr.contains("- /value:"), "{}", run.stderr);

    let run = toolsmith(&["call", "convert-units", r#"{"value": 1, "from": "meters", "to": "ft"}"#]);
    assert_ne!(run.code, 0);
    assert!(run.stderr.contains("- /from:"), "{}", run.stderr);

    let run = toolsmith(&["call", "weather-tool", "{}"]);
    assert_ne!(run.code, 0);
    assert!(run.stderr.contains("\"location\" is a required property"), "{}", run.stderr);

    let run = toolsmith(&["call", "text-stats", "{not json"]);
    assert_ne!(run.code, 0);
    assert!(run.stderr.contains("not valid JSON"), "{}", run.stderr);
}

#[test]
fn tool_errors_reach_stderr() {
    let run = toolsmith(&["call", "convert-units", r#"{"value": 1, "from": "kg", "to": "m"}"#]);
    assert_ne!(run.code, 0);
    assert!(run.stderr.contains("Cannot convert kg (Mass) to m (Length)"), "{}", run.stderr);

    let run = toolsmith(&["call", "weather-tool", r#"{"location": "Atlantis"}"#]);
    assert_ne!(run.code, 0);
    assert!(run.stderr.contains("Known cities: Seattle, Seoul"), "{}", run.stderr);
}

#[test]
fn unknown_ids_list_the_closest_first() {
    let run = toolsmith(&["call", "wether-tool", "{}"]);
    assert_ne!(run.code, 0);
    assert!(run.stdout.is_empty());
    let (_, list) = run
        .stderr
        .split_once("There is no tool `wether-tool`. Available tools (closest first): ")
        .unwrap_or_else(|| panic!("{}", run.stderr));
    let listed: Vec<&str> = list.trim().split(", ").map(|s| s.trim_matches('`')).collect();
    assert_eq!(listed[0], "weather-tool");
    assert_eq!(listed.len(), ALL_IDS.len());
}

#[test]
fn a_client_side_call_waits_and_another_process_completes_it_once() {
    let store_dir = tempfile::tempdir().unwrap();
    let store = store_dir.path().join("pending.sqlite3");
    let store = store.to_str().unwrap();
    let args = r#"{"question": "Deploy now?", "confirmLabel": "Deploy"}"#;
    let waiting = toolsmith(&["--store", store, "call", "ask-confirmation", args]);
    let event = waiting.json();
    assert_eq!(event["type"], "tool-call-awaiting-result");
    assert_eq!(event["args"], json!({"question": "Deploy now?", "confirmLabel": "Deploy"}));
    assert_eq!(event["output_schema"]["required"], json!(["confirmed", "answeredAt"]));
    let id = event["tool_call_id"].as_str().unwrap().to_owned();
    assert!(
        waiting.stderr.contains("waiting for a result") && waiting.stderr.contains(&format!("toolsmith call {id} --result")),
        "{}",
        waiting.stderr
    );
    let pending = toolsmith(&["--store", store, "pending", "--json"]).json();
    assert_eq!(pending[0]["tool_call_id"], id.as_str());
    assert_eq!(pending[0]["kind"], "result");
    let table = toolsmith(&["--store", store, "pending"]);
    assert!(table.stdout.contains(&id) && table.stdout.contains("result"), "{}", table.stdout);

    // A result that does not match the output schema is refused; the call keeps waiting.
    let wrong = toolsmith(&["--store", store, "call", &id, "--result", r#"{"confirmed": "yes"}"#]);
    assert_ne!(wrong.code, 0);
    assert!(
        wrong.stderr.contains("/confirmed") && wrong.stderr.contains("answeredAt"),
        "{}",
        wrong.stderr
    );
    let not_json = toolsmith(&["--store", store, "call", &id, "--result", "{"]);
    assert!(not_json.stderr.contains("--result is not valid JSON"), "{}", not_json.stderr);
    // Approving or resuming does not answer it.
    let approve = toolsmith(&["--store", store, "call", &id, "--approve"]);
    assert!(approve.stderr.contains("a result from the application"), "{}", approve.stderr);

    let answer = r#"{"confirmed": true, "answeredAt": "2026-12-01T15:00:00Z"}"#;
    let done = toolsmith(&["--store", store, "call", &id, "--result", answer, "--model-output"]).json();
    assert_eq!(done["value"], json!({"confirmed": true, "answeredAt": "2026-12-01T15:00:00Z"}));
    assert_eq!(done["modelOutput"], json!({"type": "text", "value": "The user confirmed."}));
    assert_eq!(toolsmith(&["--store", store, "pending", "--json"]).json(), json!([]));
    let again = toolsmith(&["--store", store, "call", &id, "--result", answer]);
    assert_ne!(again.code, 0);
    assert!(again.stderr.contains("already resolved"), "{}", again.stderr);
}

#[test]
fn catalog_formats_tags_and_strict() {
    let ids = |doc: &Value, pointer: &str| -> Vec<String> {
        let list = doc.pointer(pointer).and_then(Value::as_array).unwrap();
        list.iter()
            .map(|t| {
                t.pointer("/function/name")
                    .or(t.get("name"))
                    .and_then(Value::as_str)
                    .unwrap()
                    .to_owned()
            })
            .collect()
    };
    let openai = toolsmith(&["catalog", "--format", "openai", "--tag", "weather"]).json();
    assert_eq!(
        ids(&openai, ""),
        ["weather-hooks", "weather-mcp", "weather-model-output", "weather-tool"]
    );
    assert_eq!(openai[3]["type"], "function");
    assert_eq!(openai[3]["function"]["strict"], true);

    let responses = toolsmith(&["catalog", "--format", "openai-responses", "--tag", "time"]).json();
    assert_eq!(responses[0]["name"], "convert-timezone");
    assert_eq!(responses[0]["strict"], false);

    let anthropic = toolsmith(&["catalog", "--format", "anthropic", "--tag", "math"]).json();
    // `calculate` allows programmatic callers: Anthropic's code execution tool comes last.
    assert_eq!(ids(&anthropic, ""), ["calculate", "convert-units", "code_execution"]);
    assert!(anthropic[0]["input_schema"].is_object() && anthropic[0]["input_examples"].is_array());

    let gemini = toolsmith(&["catalog", "--format", "gemini", "--tag", "weather"]).json();
    assert!(gemini["functionDeclarations"][0]["parametersJsonSchema"].is_object());
    let gemini = toolsmith(&["catalog", "--format", "gemini", "--gemini-schema", "openapi", "--tag", "weather"]).json();
    let decl = &gemini["functionDeclarations"][0];
    assert!(decl["parameters"].is_object() && decl.get("parametersJsonSchema").is_none());
    assert!(!decl.to_string().contains("$ref"));

    let own = toolsmith(&[
        "catalog",
        "--format",
        "toolsmith",
        "--tag",
        "crm",
        "--name",
        "crm-tools",
        "--catalog-version",
        "2.1.0",
    ])
    .json();
    assert_eq!(own["format"], "toolsmith-catalog");
    assert_eq!(own["name"], "crm-tools");
    assert_eq!(own["version"], "2.1.0");
    assert_eq!(own["tools"][0]["id"], "lookup-customer");
    assert!(own["tools"][0]["hash"].as_str().unwrap().starts_with("sha256:"));

    // --strict never downgrades: a tool that cannot be strict is an error naming it and the path.
    let refused = toolsmith(&["catalog", "--format", "openai", "--strict", "--tag", "math"]);
    assert_ne!(refused.code, 0);
    assert!(
        refused.stderr.contains("tool `calculate`") && refused.stderr.contains("/properties/variables"),
        "{}",
        refused.stderr
    );
    let strict = toolsmith(&["catalog", "--format", "anthropic", "--strict", "--tag", "files"]);
    assert_eq!(strict.code, 0, "{}", strict.stderr);
    assert!(strict.stderr.contains("warning: tool `search-files`"), "{}", strict.stderr);
}

#[test]
fn call_prints_provider_tool_results() {
    let anthropic = toolsmith(&["call", "weather-model-output", r#"{"location": "Seattle"}"#, "--as", "anthropic"]).json();
    assert_eq!(anthropic["type"], "tool_result");
    assert_eq!(
        anthropic["content"][1]["source"],
        json!({"type": "url", "url": "https://example.com/radar/seattle.png"})
    );
    let chat = toolsmith(&[
        "call",
        "convert-units",
        r#"{"value": 100, "from": "C", "to": "F"}"#,
        "--as",
        "openai",
    ])
    .json();
    assert_eq!(chat["role"], "tool");
    let content: Value = serde_json::from_str(chat["content"].as_str().unwrap()).unwrap();
    assert_eq!(content["result"], json!(212.0));
    let mcp = toolsmith(&["call", "weather-tool", r#"{"location": "Nowhere"}"#, "--as", "mcp"]).json();
    assert_eq!(mcp["isError"], true);
    assert!(mcp["content"][0]["text"].as_str().unwrap().contains("Known cities"));
    let ok = toolsmith(&["call", "weather-tool", r#"{"location": "Paris"}"#, "--as", "mcp"]).json();
    assert!(ok.get("isError").is_none());
    assert_eq!(ok["structuredContent"]["location"], "Paris");
    let text: Value = serde_json::from_str(ok["content"][0]["text"].as_str().unwrap()).unwrap();
    assert_eq!(text, ok["structuredContent"]);
    let responses = toolsmith(&[
        "call",
        "weather-model-output",
        r#"{"location": "Seattle"}"#,
        "--as",
        "openai-responses",
    ])
    .json();
    assert_eq!(responses["output"][1]["type"], "input_image");
}

#[test]
fn a_captured_stream_replays_through_the_hooks_showing_display_events() {
    let fixture = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/fixtures/two_calls.anthropic.sse");
    let run = toolsmith(&["call", "--stream", fixture, "--format", "anthropic"]);
    assert_eq!(run.code, 0, "{}", run.stderr);
    let events: Vec<Value> = run.stdout.lines().map(|l| serde_json::from_str(l).unwrap()).collect();
    let of = |id: &str| -> Vec<&Value> { events.iter().filter(|e| e["tool_call_id"] == id).collect() };
    let customer = of("toolu_01A09q90qw90lq917835lq9");
    let kinds: Vec<&str> = customer.iter().map(|e| e["type"].as_str().unwrap()).collect();
    // The display view hides this tool's input: no deltas, the transformed args and output.
    assert_eq!(kinds, ["input-streaming-start", "tool-call", "tool-result"]);
    assert_eq!(customer[1]["args"], json!({"customerId": "cus_002"}));
    assert_eq!(customer[2]["result"], json!({"displayName": "Globex"}));
    assert!(
        !run.stdout.contains("/crm/eu") && !run.stdout.contains("sk_test_globex"),
        "{}",
        run.stdout
    );
    let units = of("toolu_01B7xq2pP9vRx3mE8nYt4kQ");
    let kinds: Vec<&str> = units.iter().map(|e| e["type"].as_str().unwrap()).collect();
    assert_eq!(
        kinds,
        ["input-streaming-start", "input-delta", "input-delta", "tool-call", "tool-result"]
    );
    assert_eq!(units[4]["result"]["result"], 2500.0);

    let missing = toolsmith(&["call", "--stream", "/nonexistent.sse", "--format", "openai"]);
    assert_ne!(missing.code, 0);
    assert!(missing.stderr.contains("cannot read"), "{}", missing.stderr);
    let no_format = toolsmith(&["call", "--stream", fixture]);
    assert_ne!(no_format.code, 0);
    assert!(no_format.stderr.contains("--format"), "{}", no_format.stderr);
}

#[test]
fn max_model_output_bounds_what_the_model_sees_and_keeps_the_raw_output() {
    let rows: Vec<String> = (0..2000).map(|i| format!("ünïcödé row {i}")).collect();
    let args = json!({"document": {"rows": rows}, "query": "$.rows[*]"}).to_string();
    let raw = toolsmith(&["call", "json-query", &args]).json();
    let message = toolsmith(&["call", "json-query", &args, "--as", "openai", "--max-model-output", "1KiB"]).json();
    let seen = message["content"].as_str().unwrap();
    assert!(seen.len() <= 1024 + 300, "the model sees {} bytes", seen.len());
    assert!(seen.contains("bytes left out here"), "{seen}");
    let whole = raw.to_string();
    assert!(whole.len() > 4096 && whole.starts_with(&seen[..200]), "the raw output is whole");
    let refused = toolsmith(&["call", "json-query", &args, "--max-model-output", "lots"]);
    assert_eq!(refused.code, 2, "{}", refused.stderr);
    assert!(refused.stderr.contains("such as `16KiB`"), "{}", refused.stderr);
}
