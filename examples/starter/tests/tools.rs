//! The starter's tools, tested with the test kit and through the binary as a user runs it.

use serde_json::json;
use tool_core::testing::{self, McpPair};
use tool_core::{ErrorKind, Registry};
use toolsmith_starter::convert_temperature;

#[tokio::test]
async fn converts_celsius() {
    let got = testing::call(convert_temperature::tool())
        .args(json!({"value": 100.0, "from": "C"}))
        .await;
    assert_eq!(got.output(), json!({"value": 212.0, "unit": "F"}));
}

#[tokio::test]
async fn refuses_a_unit_it_does_not_know() {
    let got = testing::call(convert_temperature::tool())
        .args(json!({"value": 1.0, "from": "K"}))
        .await;
    assert_eq!(got.error().kind(), ErrorKind::InvalidInput);
}

#[tokio::test]
async fn over_mcp() {
    let mcp = McpPair::of(Registry::from_iter([convert_temperature::tool()])).await;
    let call = mcp.call("convert-temperature", json!({"value": 50.0, "from": "F"})).await;
    assert_eq!(call.structured(), json!({"value": 10.0, "unit": "C"}));
}

#[test]
fn the_binary_lists_and_calls_it() {
    let run = |args: &[&str]| {
        let out = std::process::Command::new(env!("CARGO_BIN_EXE_my-agent"))
            .args(args)
            .output()
            .unwrap();
        assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
        String::from_utf8(out.stdout).unwrap()
    };
    assert!(run(&["list"]).contains("convert-temperature"));
    let answer: serde_json::Value = serde_json::from_str(&run(&["call", "convert-temperature", r#"{"value": 0, "from": "C"}"#])).unwrap();
    assert_eq!(answer, json!({"value": 32.0, "unit": "F"}));
}
