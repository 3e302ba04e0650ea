// `background(...)`: the settings land in the spec as written; `enabled` defaults to true
// (bare `background` and `background()` opt in too).
use tool_core::prelude::*;
use tool_core::spec::BackgroundSpec;

/// Render a long report
#[tool(background(timeout_ms = 30_000, max_retries = 2, wait_timeout_ms = 500))]
pub async fn render_report(name: String) -> String {
    format!("report {name}")
}

/// Bare `background` opts in with the defaults
#[tool(background)]
pub async fn bare(name: String) -> String {
    name
}

/// So does `background()`
#[tool(background())]
pub async fn empty_parens(name: String) -> String {
    name
}

/// Only ever a task (task-required)
#[tool(background(required, wait_timeout_ms = 0))]
pub async fn only_a_task(name: String) -> String {
    name
}

/// Gathers its input in the foreground, then is a task
#[tool(background(required, asks_first))]
pub async fn asks_then_works(name: String) -> String {
    name
}

/// Never in the background
#[tool(background(enabled = false))]
pub async fn quick(name: String) -> String {
    name
}

pub fn main() {
    tokio::runtime::Runtime::new().unwrap().block_on(async {
        let registry = &Registry::from_module(module_path!()).unwrap();
        assert_eq!(
            registry.get("render-report").unwrap().spec().policy.background,
            Some(BackgroundSpec {
                enabled: true,
                required: false,
                asks_first: false,
                timeout_ms: Some(30_000),
                max_retries: Some(2),
                wait_timeout_ms: Some(500),
            })
        );
        assert_eq!(
            registry.get("quick").unwrap().spec().policy.background,
            Some(BackgroundSpec {
                enabled: false,
                required: false,
                asks_first: false,
                timeout_ms: None,
                max_retries: None,
                wait_timeout_ms: None,
            })
        );
        assert_eq!(
            registry.get("only-a-task").unwrap().spec().policy.background,
            Some(BackgroundSpec {
                enabled: true,
                required: true,
                asks_first: false,
                timeout_ms: None,
                max_retries: None,
                wait_timeout_ms: Some(0),
            })
        );
        assert_eq!(
            registry.get("asks-then-works").unwrap().spec().policy.background,
            Some(BackgroundSpec {
                enabled: true,
                required: true,
                asks_first: true,
                timeout_ms: None,
                max_retries: None,
                wait_timeout_ms: None,
            })
        );
        for id in ["bare", "empty-parens"] {
            assert_eq!(
                registry.get(id).unwrap().spec().policy.background,
                Some(BackgroundSpec {
                    enabled: true,
                    required: false,
                    asks_first: false,
                    timeout_ms: None,
                    max_retries: None,
                    wait_timeout_ms: None,
                })
            );
        }
        let out = registry
            .call("render-report", json!({"name": "q3"}), CallOptions::default())
            .await
            .unwrap();
        assert_eq!(out.value(), json!("report q3"));
    });
}
