//! The seed's `createTool()` examples, shape for shape: a client written against the seed's
//! example inputs and outputs (`temperatureCelsius`, `radarImageUrl`, `customerId`,
//! `displayName`, …) works unchanged against the example tools. Each seed example is written
//! here as the seed gives it (its schema's field names and its `execute` result), and compared
//! with our tool's schema and output.

extern crate examples;

use std::collections::BTreeSet;

use serde_json::{Value, json};
use tool_core::prelude::*;
use tool_core::{ToolOutput, ToolSpec};

/// The property names of an object schema, and its required ones.
fn fields(schema: &Value) -> (BTreeSet<String>, BTreeSet<String>) {
    let names = |v: &Value| -> BTreeSet<String> {
        match v {
            Value::Object(m) => m.keys().cloned().collect(),
            Value::Array(a) => a.iter().filter_map(Value::as_str).map(str::to_owned).collect(),
            _ => BTreeSet::new(),
        }
    };
    (names(&schema["properties"]), names(&schema["required"]))
}

fn set(names: &[&str]) -> BTreeSet<String> {
    names.iter().map(|s| s.to_string()).collect()
}

fn spec(id: &str) -> ToolSpec {
    Registry::global()
        .get(id)
        .unwrap_or_else(|| panic!("{id} is linked"))
        .spec()
        .clone()
}

async fn call(id: &str, args: Value) -> ToolOutput {
    Registry::global().call(id, args, CallOptions::default()).await.unwrap()
}

/// The seed's first example: `weather-tool`, `{location}` → `{location, temperatureCelsius,
/// conditions}` = `{location, 21, 'sunny'}` for Seattle.
#[tokio::test]
async fn weather_tool_is_the_seeds_usage_example() {
    let s = spec("weather-tool");
    assert_eq!(s.description.lines().next(), Some("Get the current weather for a location"));
    assert_eq!(fields(&s.schemas.input), (set(&["location"]), set(&["location"])));
    let output = s.schemas.output.unwrap();
    let seed = set(&["location", "temperatureCelsius", "conditions"]);
    assert_eq!(fields(&output), (seed.clone(), seed));
    assert_eq!(output["properties"]["temperatureCelsius"]["type"], "number");
    let out = call("weather-tool", json!({"location": "Seattle"})).await;
    assert_eq!(
        out.value(),
        json!({"location": "Seattle", "temperatureCelsius": 21.0, "conditions": "sunny"})
    );
}

/// The `toModelOutput` example: the app gets `{…, radarImageUrl}`, the model a text part
/// `Seattle: 21°C and sunny` and an `image-url` part.
#[tokio::test]
async fn weather_model_output_is_the_seeds_to_model_output_example() {
    let s = spec("weather-model-output");
    let seed = set(&["location", "temperatureCelsius", "conditions", "radarImageUrl"]);
    assert_eq!(fields(&s.schemas.output.unwrap()), (seed.clone(), seed));
    let out = call("weather-model-output", json!({"location": "Seattle"})).await;
    assert_eq!(
        out.value(),
        json!({"location": "Seattle", "temperatureCelsius": 21.0, "conditions": "sunny",
               "radarImageUrl": "https://example.com/radar/seattle.png"})
    );
    assert_eq!(
        serde_json::to_value(out.for_model()).unwrap(),
        json!({"type": "content", "value": [
            {"type": "text", "text": "Seattle: 21°C and sunny"},
            {"type": "image-url", "url": "https://example.com/radar/seattle.png"}
        ]})
    );
}

/// The `transform` example: `lookup-customer`, `{customerId, internalPath}` → `{displayName,
/// apiKey, debugScore}` = `{'Acme', 'secret-value', 0.97}`; display and transcript show
/// `{customerId}` and `{displayName}`, and an error as `{message: 'Customer lookup failed'}`.
#[tokio::test]
async fn lookup_customer_is_the_seeds_transform_example() {
    let s = spec("lookup-customer");
    let input = set(&["customerId", "internalPath"]);
    assert_eq!(fields(&s.schemas.input), (input.clone(), input));
    let output = set(&["displayName", "apiKey", "debugScore"]);
    assert_eq!(fields(&s.schemas.output.unwrap()), (output.clone(), output));
    let out = call("lookup-customer", json!({"customerId": "cus_001", "internalPath": "/crm"})).await;
    assert_eq!(
        out.value(),
        json!({"displayName": "Acme", "apiKey": "secret-value", "debugScore": 0.97})
    );
    assert_eq!(out.display(), Some(&Ok(json!({"displayName": "Acme"}))));
    assert_eq!(out.transcript(), Some(&Ok(json!({"displayName": "Acme"}))));
}
