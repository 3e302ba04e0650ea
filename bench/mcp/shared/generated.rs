//! The generated tools of the start-up bench (`bench/mcp/startup.sh`), the same for every server
//! of bench/mcp: `TOOLS=N` in a server's environment adds N tools `tool_0000`… beside `echo`,
//! each with a realistic description and a three-parameter input schema (a string, a bounded
//! integer, a boolean), so both servers list, check and route the same set. Included by path
//! (`#[path = "../../shared/generated.rs"]`) in bench/mcp/rmcp and bench/mcp/toolsmith, and in
//! tool-core's `call_loop` example (`register` mode: what registering one costs).

use serde_json::{Map, Value, json};

/// Topics the generated descriptions are written over (what a catalog of integrations looks like).
const TOPICS: [&str; 8] = [
    "invoice",
    "calendar event",
    "support ticket",
    "customer",
    "repository",
    "shipment",
    "forecast",
    "document",
];

/// The number of generated tools the environment asks for (`TOOLS`, default 0).
pub fn count() -> usize {
    std::env::var("TOOLS").ok().and_then(|n| n.parse().ok()).unwrap_or(0)
}

/// Generated tool `i`: its name, description and input schema.
pub fn tool(i: usize) -> (String, String, Map<String, Value>) {
    let topic = TOPICS[i % TOPICS.len()];
    let name = format!("tool_{i:04}");
    let description = format!("Looks up the {topic} named by its id in account {i} and returns its current fields, newest first");
    let schema = json!({
        "type": "object",
        "properties": {
            "id": {"type": "string", "description": format!("The {topic}'s id"), "maxLength": 200},
            "limit": {"type": "integer", "description": "How many fields to return", "minimum": 1, "maximum": 100},
            "archived": {"type": "boolean", "description": "Whether archived entries count"}
        },
        "required": ["id"],
        "additionalProperties": false
    });
    let Value::Object(schema) = schema else {
        unreachable!("a JSON object literal")
    };
    (name, description, schema)
}
