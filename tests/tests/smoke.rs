extern crate toolsmith_tests;
use serde_json::json;
use tool_core::prelude::*;

#[tokio::test]
async fn smoke() {
    let r = Registry::global();
    println!("{:?}", r.ids());
    let t = r.get("test-weather").unwrap();
    println!("{}", serde_json::to_string_pretty(t.spec()).unwrap());
    let out = r.call("test-add", r#"{"a": 1, "b": 2}"#, CallOptions::default()).await;
    println!("{out:?}");
    let out = r.call("test-add", r#"{"a": "x"}"#, CallOptions::default()).await;
    println!("{}", out.unwrap_err());
    let out = r.call("test-wether", json!({}), CallOptions::default()).await;
    println!("{}", out.unwrap_err());
}
