// `max_model_output = "16KiB"` reaches the spec, and a call over it gives the model its head and
// tail while the application keeps the whole output.
use tool_core::prelude::*;

/// Read a log
#[tool(max_model_output = "1KiB")]
pub async fn read_log(lines: usize) -> String {
    (0..lines).map(|i| format!("line {i}\n")).collect()
}

pub fn main() {
    let tool = read_log::tool().unwrap();
    assert_eq!(tool.spec().policy.max_model_output, Some(1024));
    let rt = tokio::runtime::Builder::new_current_thread().enable_all().build().unwrap();
    rt.block_on(async {
        let out = Registry::from_module(module_path!()).unwrap().call("read-log", json!({"lines": 10_000}), CallOptions::default()).await.unwrap();
        let whole = out.value();
        assert!(whole.as_str().unwrap().ends_with("line 9999\n"));
        let ModelOutput::Text(seen) = out.for_model() else { panic!("text") };
        assert!(seen.starts_with("line 0\n") && seen.ends_with("line 9999\n"), "{seen}");
        assert!(seen.len() < 1024 + 300 && seen.contains("bytes left out here"));
    });
}
