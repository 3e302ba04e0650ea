//! End-to-end tests of the real `toolsmith` binary built from this crate.

use std::collections::BTreeSet;
use std::path::Path;
use std::process::Command;

use serde_json::{Value, json};
use support::toolsmith;

use crate::support;

const ALL_IDS: [&str; 17] = [
    "ask-confirmation",
    "calculate",
    "convert-timezone",
    "convert-units",
    "example-input-available",
    "example-input-delta",
    "example-input-start",
    "example-output",
    "json-query",
    "lookup-customer",
    "search-files",
    "text-stats",
    "weather-hooks",
    "weather-mcp",
    "weather-model-output",
    "weather-tool",
    "write-file",
];

fn context(root: &Path) -> String {
    json!({ "root": root }).to_string()
}

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

fn sample_tree() -> tempfile::TempDir {
    let dir = tempfile::tempdir().unwrap();
    std::fs::create_dir(dir.path().join("docs")).unwrap();
    std::fs::write(dir.path().join("docs/guide.md"), "# Guide\nInstall with cargo.\n").unwrap();
    std::fs::write(dir.path().join("notes.txt"), "remember the cargo lock\n").unwrap();
    dir
}

#[test]
fn search_files_uses_the_context_root() {
    let dir = sample_tree();
    let cx = context(dir.path());
    let out = toolsmith(&["call", "search-files", r#"{"query": "cargo"}"#, "--context", &cx]).json();
    assert_eq!(
        out,
        json!({
            "searched": ".",
            "matches": [
                {"path": "docs/guide.md", "kind": "content", "line": 2, "text": "Install with cargo."},
                {"path": "notes.txt", "kind": "content", "line": 1, "text": "remember the cargo lock"}
            ],
            "truncated": false,
            "files_scanned": 2,
            "skipped": 0
        })
    );

    let out = toolsmith(&[
        "call",
        "search-files",
        r#"{"query": "GUIDE", "mode": "names", "path": "docs"}"#,
        "--context",
        &cx,
    ])
    .json();
    assert_eq!(out["matches"], json!([{"path": "docs/guide.md", "kind": "name"}]));
    assert_eq!(out["searched"], "docs");

    // Without the context the call fails before the tool runs.
    let run = toolsmith(&["call", "search-files", r#"{"query": "cargo"}"#]);
    assert_ne!(run.code, 0);
    assert!(run.stderr.contains("invalid request context"), "{}", run.stderr);
    assert!(run.stderr.contains("\"root\" is a required property"), "{}", run.stderr);
}

#[test]
fn search_files_refuses_to_leave_the_root() {
    let parent = tempfile::tempdir().unwrap();
    let root = parent.path().join("root");
    std::fs::create_dir(&root).unwrap();
    std::fs::write(parent.path().join("secret.txt"), "password=hunter2\n").unwrap();
    let cx = context(&root);

    for path in ["..", "../", "sub/../..", "./../secret.txt"] {
        let args = json!({"query": "password", "path": path}).to_string();
        let run = toolsmith(&["call", "search-files", &args, "--context", &cx]);
        assert_ne!(run.code, 0, "{path}: {}", run.stdout);
        assert!(run.stderr.contains("contains `..`"), "{path}: {}", run.stderr);
        assert!(!run.stderr.contains("hunter2") && !run.stdout.contains("hunter2"));
    }

    let abs = json!({"query": "password", "path": parent.path().join("secret.txt")}).to_string();
    let run = toolsmith(&["call", "search-files", &abs, "--context", &cx]);
    assert_ne!(run.code, 0);
    assert!(run.stderr.contains("is absolute"), "{}", run.stderr);

    #[cfg(unix)]
    {
        std::os::unix::fs::symlink(parent.path(), root.join("up")).unwrap();
        let run = toolsmith(&["call", "search-files", r#"{"query": "password", "path": "up"}"#, "--context", &cx]);
        assert_ne!(run.code, 0);
        assert!(run.stderr.contains("outside the root"), "{}", run.stderr);
        // Walking the root never follows the link either.
        let out = toolsmith(&["call", "search-files", r#"{"query": "password"}"#, "--context", &cx]).json();
        assert_eq!(out["matches"], json!([]));
        assert_eq!(out["skipped"], 1);
    }
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
fn write_file_suspends_on_conflicts_and_waits_for_approval_across_processes() {
    let dir = tempfile::tempdir().unwrap();
    let store_dir = tempfile::tempdir().unwrap();
    let store = store_dir.path().join("pending.sqlite3");
    let store = store.to_str().unwrap();
    let cx = context(dir.path());
    let read = || std::fs::read_to_string(dir.path().join("out/hello.txt")).unwrap();
    let call = |args: &str| toolsmith(&["--store", store, "call", "write-file", args, "--context", &cx]);
    let out = call(r#"{"path": "out/hello.txt", "content": "hello"}"#).json();
    assert_eq!(out, json!({"path": "out/hello.txt", "bytes_written": 5, "created": true}));
    assert_eq!(read(), "hello");

    // A conflict suspends the call: the user decides, in another process.
    let suspended = call(r#"{"path": "out/hello.txt", "content": "bye"}"#);
    let event = suspended.json();
    assert_eq!(event["type"], "tool-call-suspended");
    assert_eq!(
        event["suspend_payload"],
        json!({"path": "out/hello.txt", "existing_bytes": 5, "new_bytes": 3})
    );
    assert!(suspended.stderr.contains("toolsmith resume"), "{}", suspended.stderr);
    let id = event["tool_call_id"].as_str().unwrap().to_owned();
    let pending = toolsmith(&["--store", store, "pending", "--json"]).json();
    assert_eq!(pending[0]["tool_call_id"], id.as_str());
    assert_eq!(pending[0]["kind"], "suspended");
    assert_eq!(pending[0]["context"]["root"], dir.path().to_str().unwrap());
    let table = toolsmith(&["--store", store, "pending"]);
    assert!(table.stdout.contains(&id) && table.stdout.contains("suspended"), "{}", table.stdout);

    let bad = toolsmith(&["--store", store, "resume", &id, r#"{"overwrite": "yes"}"#]);
    assert_ne!(bad.code, 0);
    assert!(bad.stderr.contains("/overwrite"), "{}", bad.stderr);
    let kept = toolsmith(&["--store", store, "resume", &id, r#"{"overwrite": false}"#]);
    assert_ne!(kept.code, 0);
    assert!(kept.stderr.contains("keep the existing"), "{}", kept.stderr);
    assert_eq!(read(), "hello");
    let stale = toolsmith(&["--store", store, "resume", &id, r#"{"overwrite": true}"#]);
    assert!(stale.stderr.contains("already resolved"), "{}", stale.stderr);

    let id = call(r#"{"path": "out/hello.txt", "content": "bye"}"#).json()["tool_call_id"]
        .as_str()
        .unwrap()
        .to_owned();
    let out = toolsmith(&["--store", store, "resume", &id, r#"{"overwrite": true}"#]).json();
    assert_eq!(out, json!({"path": "out/hello.txt", "bytes_written": 3, "created": false}));
    assert_eq!(read(), "bye");

    // Overwriting on request needs approval; a decline never runs it.
    let waiting = call(r#"{"path": "out/hello.txt", "content": "again", "overwrite": true}"#);
    let event = waiting.json();
    assert_eq!(event["type"], "tool-call-approval");
    assert_eq!(event["resume_schema"]["required"], json!(["approved"]));
    let id = event["tool_call_id"].as_str().unwrap().to_owned();
    let declined = toolsmith(&["--store", store, "call", &id, "--decline", "not today"]).json();
    assert_eq!(declined["approved"], false);
    assert_eq!(declined["reason"], "not today");
    assert_eq!(read(), "bye");
    let id = call(r#"{"path": "out/hello.txt", "content": "again", "overwrite": true}"#).json()["tool_call_id"]
        .as_str()
        .unwrap()
        .to_owned();
    let events = toolsmith(&["--store", store, "call", &id, "--approve", "--events"]);
    let kinds: Vec<String> = events
        .stdout
        .lines()
        .map(|l| serde_json::from_str::<Value>(l).unwrap()["type"].as_str().unwrap().to_owned())
        .collect();
    assert_eq!(kinds, ["tool-call-resumed", "tool-result"]);
    assert_eq!(read(), "again");
    assert_eq!(toolsmith(&["--store", store, "pending", "--json"]).json(), json!([]));

    let run = toolsmith(&[
        "call",
        "write-file",
        r#"{"path": "../escape.txt", "content": "x"}"#,
        "--context",
        &cx,
    ]);
    assert_ne!(run.code, 0);
    assert!(run.stderr.contains("contains `..`"), "{}", run.stderr);
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

/// `--import-mcp NAME=…` pointing at this very binary serving its tools over stdio.
fn self_import(name: &str) -> String {
    format!("{name}={} serve --stdio", shell_quote(env!("CARGO_BIN_EXE_toolsmith")))
}

fn shell_quote(s: &str) -> String {
    format!("'{}'", s.replace('\'', r"'\''"))
}

#[test]
fn imported_mcp_tools_sit_next_to_the_linked_ones() {
    let me = self_import("me");
    let listed = toolsmith(&["--import-mcp", &me, "list", "--json"]).json();
    let ids: BTreeSet<String> = listed
        .as_array()
        .unwrap()
        .iter()
        .map(|t| t["id"].as_str().unwrap().to_owned())
        .collect();
    let expected: BTreeSet<String> = ALL_IDS.iter().flat_map(|id| [id.to_string(), format!("me_{id}")]).collect();
    assert_eq!(ids, expected);

    // An imported tool answers what the linked one does, through the child server.
    let args = r#"{"value": 100, "from": "C", "to": "F"}"#;
    let local = toolsmith(&["call", "convert-units", args]).json();
    let imported = toolsmith(&["call", "me_convert-units", args, "--import-mcp", &me]).json();
    assert_eq!(imported, local);

    // Its schema came over the wire, as MCP lists it (without schemars' own `format`s, such as
    // `double`); bad arguments are refused before the server is called.
    let schema = toolsmith(&["--import-mcp", &me, "schema", "me_convert-units"]).json();
    let linked = toolsmith(&["schema", "convert-units"]).json();
    let sent = tool_core::schema::without_foreign_formats(&linked["input"]).expect("`value` is a `double`");
    assert_eq!(schema["input"]["properties"], sent["properties"]);
    let refused = toolsmith(&["--import-mcp", &me, "call", "me_convert-units", r#"{"value": "hot"}"#]);
    assert_ne!(refused.code, 0);
    assert!(refused.stderr.contains("/value"), "{}", refused.stderr);

    // Catalogs include them.
    let catalog = toolsmith(&["--import-mcp", &me, "catalog", "--format", "mcp"]).json();
    let names: Vec<&str> = catalog["tools"]
        .as_array()
        .unwrap()
        .iter()
        .map(|t| t["name"].as_str().unwrap())
        .collect();
    assert!(names.contains(&"me_calculate") && names.contains(&"calculate"), "{names:?}");
}

#[test]
fn import_mcp_refuses_bad_values_clashes_and_servers_that_do_not_start() {
    for (value, why) in [
        ("no-equals", "expected NAME=TARGET"),
        ("bad name=x", "must be letters"),
        ("x=", "no command or URL"),
        ("x=/nonexistent/mcp-server --stdio", "`--import-mcp x`"),
        ("x=http://127.0.0.1:1/mcp", "`--import-mcp x`"),
    ] {
        let run = toolsmith(&["--import-mcp", value, "list"]);
        assert_eq!(run.code, 1, "{value}: {}", run.stderr);
        assert!(run.stderr.contains(why), "{value}: {}", run.stderr);
        assert!(run.stdout.is_empty(), "{value}: {}", run.stdout);
    }

    let twice = toolsmith(&["--import-mcp", &self_import("me"), "--import-mcp", &self_import("ME"), "list"]);
    assert!(twice.stderr.contains("used twice"), "{}", twice.stderr);

    // `a` (a gateway importing `b`) brings `a_b_calculate`; `a_b` would bring it again.
    let nested = format!(
        "a={} --import-mcp {} serve --stdio",
        shell_quote(env!("CARGO_BIN_EXE_toolsmith")),
        shell_quote(&self_import("b"))
    );
    let clash = toolsmith(&["--import-mcp", &nested, "--import-mcp", &self_import("a_b"), "list"]);
    assert_eq!(clash.code, 1, "{}", clash.stderr);
    assert!(
        clash.stderr.contains("`--import-mcp a_b`") && clash.stderr.contains("a_b_calculate"),
        "{}",
        clash.stderr
    );
}

/// A `toolsmith … serve --stdio` child spoken to in line-delimited JSON-RPC; what it prints
/// is read on a thread, so a message that never comes fails the test instead of hanging it.
struct StdioGateway {
    child: std::process::Child,
    stdin: Option<std::process::ChildStdin>,
    lines: std::sync::mpsc::Receiver<Value>,
    /// Messages read while waiting for another one, kept for a later `next`.
    backlog: Vec<Value>,
    _data: tempfile::TempDir,
}

impl StdioGateway {
    fn start(imports: &[String]) -> StdioGateway {
        use std::io::BufRead;
        let data = tempfile::tempdir().unwrap();
        let mut args: Vec<&str> = Vec::new();
        for import in imports {
            args.extend(["--import-mcp", import]);
        }
        args.extend(["serve", "--stdio"]);
        let mut child = Command::new(env!("CARGO_BIN_EXE_toolsmith"))
            .env("TOOLSMITH_DATA_DIR", data.path())
            .args(args)
            .stdin(std::process::Stdio::piped())
            .stdout(std::process::Stdio::piped())
            .stderr(std::process::Stdio::null())
            .spawn()
            .unwrap();
        let stdout = child.stdout.take().unwrap();
        let (tx, lines) = std::sync::mpsc::channel();
        std::thread::spawn(move || {
            for line in std::io::BufReader::new(stdout).lines().map_while(Result::ok) {
                if tx.send(serde_json::from_str::<Value>(&line).unwrap()).is_err() {
                    return;
                }
            }
        });
        let mut gateway = StdioGateway {
            stdin: child.stdin.take(),
            child,
            lines,
            backlog: Vec::new(),
            _data: data,
        };
        let init = gateway.request(
            1,
            "initialize",
            json!({"protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": {"name": "test", "version": "0"}}),
        );
        assert!(init["result"]["serverInfo"].is_object(), "{init}");
        gateway.send(json!({"jsonrpc": "2.0", "method": "notifications/initialized"}));
        gateway
    }

    fn send(&mut self, message: Value) {
        use std::io::Write;
        writeln!(self.stdin.as_mut().unwrap(), "{message}").unwrap();
    }

    /// The first message for which `wanted` holds, read now or kept from an earlier wait
    /// (others are kept: a notification may come before the answer it follows from).
    fn next(&mut self, what: &str, wanted: impl Fn(&Value) -> bool) -> Value {
        if let Some(i) = self.backlog.iter().position(&wanted) {
            return self.backlog.remove(i);
        }
        loop {
            let message = self
                .lines
                .recv_timeout(std::time::Duration::from_secs(20))
                .unwrap_or_else(|e| panic!("no {what} from the gateway: {e}"));
            if wanted(&message) {
                return message;
            }
            self.backlog.push(message);
        }
    }

    fn request(&mut self, id: u64, method: &str, params: Value) -> Value {
        self.send(json!({"jsonrpc": "2.0", "id": id, "method": method, "params": params}));
        self.next(&format!("answer to {method}"), |m| m["id"] == id)
    }

    fn tool_names(&mut self, id: u64) -> BTreeSet<String> {
        let listed = self.request(id, "tools/list", json!({}));
        listed["result"]["tools"]
            .as_array()
            .unwrap()
            .iter()
            .map(|t| t["name"].as_str().unwrap().to_owned())
            .collect()
    }

    /// Closes its input and waits for it to end.
    fn finish(mut self) {
        drop(self.stdin.take());
        let status = self.child.wait().unwrap();
        assert!(status.success(), "the gateway did not end cleanly: {status}");
    }
}

#[test]
fn serve_puts_imported_servers_behind_one_mcp_endpoint() {
    let mut gateway = StdioGateway::start(&[self_import("me")]);
    let names = gateway.tool_names(2);
    assert!(names.contains("me_calculate") && names.contains("calculate"), "{names:?}");
    let called = gateway.request(
        3,
        "tools/call",
        json!({"name": "me_calculate", "arguments": {"expression": "x * 2", "variables": {"x": 21}}}),
    );
    assert_eq!(
        called["result"]["structuredContent"],
        json!({"expression": "x * 2", "result": 42.0, "result_type": "float"}),
        "{called}"
    );
    gateway.finish();
}

#[test]
fn an_imported_servers_list_changes_reach_the_gateways_clients() {
    let fixture = format!("fx={} --stdio", shell_quote(env!("CARGO_BIN_EXE_mcp_fixture")));
    let mut gateway = StdioGateway::start(&[fixture]);
    let list_changed = |m: &Value| m["method"] == "notifications/tools/list_changed";
    assert!(!gateway.tool_names(2).contains("fx_dynamic_echo"));

    // The imported server adds a tool: its list_changed makes the gateway's set, and so the
    // gateway's clients, follow.
    let added = gateway.request(3, "tools/call", json!({"name": "fx_add_tool", "arguments": {}}));
    assert_eq!(added["result"]["isError"], Value::Null, "{added}");
    gateway.next("tools/list_changed after the addition", list_changed);
    assert!(gateway.tool_names(4).contains("fx_dynamic_echo"));
    let echoed = gateway.request(
        5,
        "tools/call",
        json!({"name": "fx_dynamic_echo", "arguments": {"text": "through two servers"}}),
    );
    assert_eq!(echoed["result"]["content"][0]["text"], "through two servers", "{echoed}");

    // And removes it again.
    gateway.request(6, "tools/call", json!({"name": "fx_remove_tool", "arguments": {}}));
    gateway.next("tools/list_changed after the removal", list_changed);
    assert!(!gateway.tool_names(7).contains("fx_dynamic_echo"));
    gateway.finish();
}

#[test]
fn an_http_import_sends_the_bearer_token_read_from_the_environment() {
    use std::io::BufRead;
    const SECRET: &str = "s3cret-import-token";
    let data = tempfile::tempdir().unwrap();
    let mut server = Command::new(env!("CARGO_BIN_EXE_toolsmith"))
        .env("TOOLSMITH_DATA_DIR", data.path())
        .env("SERVER_TOKEN", SECRET)
        .args(["serve", "--http", "127.0.0.1:0", "--auth-token-env", "SERVER_TOKEN"])
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    let mut banner = String::new();
    std::io::BufReader::new(server.stderr.take().unwrap())
        .read_line(&mut banner)
        .unwrap();
    let url = banner
        .trim()
        .strip_prefix("serving MCP on ")
        .unwrap_or_else(|| panic!("no address in {banner:?}"))
        .to_owned();
    let import = format!("remote={url}");
    let run = |token: Option<&str>| {
        let mut command = Command::new(env!("CARGO_BIN_EXE_toolsmith"));
        command.env("TOOLSMITH_DATA_DIR", data.path()).env_remove("CLIENT_TOKEN");
        if let Some(t) = token {
            command.env("CLIENT_TOKEN", t);
        }
        let out = command
            .args([
                "--import-mcp",
                &import,
                "--import-mcp-token-env",
                "remote=CLIENT_TOKEN",
                "list",
                "--json",
            ])
            .output()
            .unwrap();
        (
            out.status.code(),
            String::from_utf8(out.stdout).unwrap(),
            String::from_utf8(out.stderr).unwrap(),
        )
    };

    let (code, stdout, stderr) = run(Some(SECRET));
    assert_eq!(code, Some(0), "{stderr}");
    let listed: Value = serde_json::from_str(&stdout).unwrap();
    assert!(listed.as_array().unwrap().iter().any(|t| t["id"] == "remote_calculate"), "{listed}");

    let (code, _, stderr) = run(Some("wrong-token"));
    assert_eq!(code, Some(1));
    assert!(stderr.contains("`--import-mcp remote`") && stderr.contains("401"), "{stderr}");
    assert!(!stderr.contains("wrong-token"), "the token leaked: {stderr}");

    let (code, _, stderr) = run(None);
    assert_eq!(code, Some(1));
    assert!(stderr.contains("`CLIENT_TOKEN` is not set"), "{stderr}");

    // A token for a command import, or for no import, is a mistake said as such.
    let me = self_import("me");
    let refused = toolsmith(&["--import-mcp", &me, "--import-mcp-token-env", "me=HOME", "list"]);
    assert!(refused.stderr.contains("is a command, not an HTTP server"), "{}", refused.stderr);
    let refused = toolsmith(&["--import-mcp-token-env", "nobody=HOME", "list"]);
    assert!(refused.stderr.contains("no `--import-mcp nobody=…`"), "{}", refused.stderr);

    server.kill().unwrap();
    let _ = server.wait();
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

#[test]
fn pins_lists_diffs_and_accepts_a_changed_remote_tool() {
    use tool_core::fingerprint::Definition;
    use tool_core::pins::{PinKey, PinStore, Pinned, SqlitePins};

    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("pins.sqlite3");
    let key = PinKey {
        provider: "mcp".into(),
        connection: "fx".into(),
        tool: "fx_echo".into(),
    };
    let definition = |description: &str| Definition {
        name: "fx_echo".into(),
        description: description.into(),
        input_schema: json!({"type": "object"}),
        output_schema: None,
        annotations: json!({}),
    };
    let rt = tokio::runtime::Builder::new_current_thread().build().unwrap();
    rt.block_on(async {
        let store = SqlitePins::open(&file).unwrap();
        store.pin_if_absent(key.clone(), Pinned::now(definition("Echoes"))).await.unwrap();
        store
            .record_seen(key.clone(), Pinned::now(definition("Echoes, and mails it")))
            .await
            .unwrap();
    });
    let pins = file.to_str().unwrap();
    let list = toolsmith(&["--pins", pins, "pins", "list"]);
    assert_eq!(list.code, 0, "{}", list.stderr);
    assert!(
        list.stdout.contains("mcp\tfx\tfx_echo\tsha256:") && list.stdout.contains("CHANGED (description)"),
        "{}",
        list.stdout
    );
    let diff = toolsmith(&["--pins", pins, "pins", "diff", "mcp", "fx_echo"]).json();
    assert_eq!(diff["changed"], json!(["description"]));
    assert_eq!(diff["seen"]["description"], "Echoes, and mails it");
    let accept = toolsmith(&["--pins", pins, "pins", "accept", "mcp", "fx_echo"]);
    assert_eq!(accept.code, 0, "{}", accept.stderr);
    let after = toolsmith(&["--pins", pins, "pins", "list", "--json"]).json();
    assert_eq!(after[0]["pinned"]["definition"]["description"], "Echoes, and mails it");
    assert!(after[0]["seen"].is_null(), "nothing waits for review");
    let again = toolsmith(&["--pins", pins, "pins", "accept", "mcp", "fx_echo"]);
    assert_ne!(again.code, 0, "nothing left to accept");
}
