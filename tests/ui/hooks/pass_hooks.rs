// All four lifecycle hooks, returning `()` and `Result<(), E>`; failures are reported, not raised.
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Mutex;

use tool_core::prelude::*;
use tool_core::tool::InputHook;

static STARTS: AtomicUsize = AtomicUsize::new(0);
static DELTAS: Mutex<String> = Mutex::new(String::new());
static AVAILABLE: Mutex<Vec<String>> = Mutex::new(Vec::new());
static OUTPUTS: Mutex<Vec<f64>> = Mutex::new(Vec::new());

#[derive(Deserialize, JsonSchema)]
pub struct WeatherInput {
    /// City name
    pub location: String,
}

fn on_start(call: &ToolCallInfo) {
    assert_eq!(&*call.tool_name, "weather");
    STARTS.fetch_add(1, Ordering::SeqCst);
}

fn on_delta(_call: &ToolCallInfo, delta: &str) -> Result<(), String> {
    if delta.contains('!') {
        return Err("no shouting".into());
    }
    DELTAS.lock().unwrap().push_str(delta);
    Ok(())
}

fn on_available(_call: &ToolCallInfo, input: &WeatherInput) -> Result<(), std::fmt::Error> {
    AVAILABLE.lock().unwrap().push(input.location.clone());
    Ok(())
}

fn on_out(_call: &ToolCallInfo, output: &f64) {
    OUTPUTS.lock().unwrap().push(*output);
}

/// Get the temperature for a location
#[tool(on_input_start = on_start, on_input_delta = on_delta, on_input_available = on_available, on_output = on_out)]
pub async fn weather(input: WeatherInput) -> f64 {
    input.location.len() as f64
}

pub fn main() {
    tokio::runtime::Runtime::new().unwrap().block_on(async {
        let registry = &Registry::from_module(module_path!()).unwrap();
        let tool = registry.get("weather").unwrap();
        let hooks = tool.spec().hooks;
        assert!(hooks.on_input_start && hooks.on_input_delta && hooks.on_input_available && hooks.on_output);

        let call = ToolCallInfo {
            tool_call_id: "call_1".into(),
            tool_name: "weather".into(),
            ..ToolCallInfo::default()
        };
        tool.input_hook(InputHook::Start, &call).unwrap();
        tool.input_hook(InputHook::Delta(r#"{"location": "#), &call).unwrap();
        tool.input_hook(InputHook::Delta(r#""Lima"}"#), &call).unwrap();
        assert_eq!(tool.input_hook(InputHook::Delta("!"), &call).unwrap_err().message(), "no shouting");
        tool.input_hook(InputHook::Available(&json!({"location": "Lima"})), &call).unwrap();

        let out = registry
            .call("weather", json!({"location": "Lima"}), CallOptions::default())
            .await
            .unwrap();
        assert_eq!(out.value(), json!(4.0));

        assert_eq!(STARTS.load(Ordering::SeqCst), 1);
        assert_eq!(*DELTAS.lock().unwrap(), r#"{"location": "Lima"}"#);
        assert_eq!(*AVAILABLE.lock().unwrap(), vec!["Lima".to_string()]);
        assert_eq!(*OUTPUTS.lock().unwrap(), vec![4.0]);
    });
}
