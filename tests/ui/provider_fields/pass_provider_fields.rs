// `eager_input_streaming` (Anthropic), `allowed_callers` (Anthropic, OpenAI Responses) and
// `behavior` (Gemini) land in the spec and in each provider's catalog entry; a format that
// cannot carry one warns.
use tool_core::catalog::Catalog;
use tool_core::prelude::*;
use tool_core::spec::CallBehavior;
use tool_core::Dialect;

/// Sum a list of numbers
#[tool(eager_input_streaming, allowed_callers = ["direct", "programmatic"], behavior = "non_blocking")]
pub async fn sum(numbers: Vec<f64>) -> f64 {
    numbers.iter().sum()
}

/// Add two numbers
#[tool(allowed_callers = ["code_execution_20260120"], behavior = "blocking")]
pub async fn add(a: f64, b: f64) -> f64 {
    a + b
}

pub fn main() {
    let registry = Registry::from_module(module_path!()).unwrap();
    let spec = registry.get("sum").unwrap().spec().clone();
    assert_eq!(spec.presentation.eager_input_streaming, Some(true));
    assert_eq!(spec.presentation.allowed_callers, ["direct", "programmatic"]);
    assert_eq!(spec.presentation.behavior, Some(CallBehavior::NonBlocking));
    let add = registry.get("add").unwrap().spec().clone();
    assert_eq!(add.presentation.eager_input_streaming, None);
    assert_eq!(add.presentation.behavior, Some(CallBehavior::Blocking));

    let catalog = Catalog::new("fields", "1.0.0", registry);
    let anthropic = catalog.export(Dialect::Anthropic).unwrap();
    let doc = anthropic.document();
    assert_eq!(doc[1]["eager_input_streaming"], true);
    assert_eq!(doc[1]["allowed_callers"], serde_json::json!(["direct", "code_execution_20250825"]));
    assert_eq!(doc[0]["allowed_callers"], serde_json::json!(["code_execution_20260120"]));
    assert!(anthropic.warnings.iter().any(|w| w.contains("`behavior`")), "{:?}", anthropic.warnings);
    let responses = catalog.export(Dialect::OpenAiResponses).unwrap();
    let doc = responses.document();
    assert_eq!(doc[1]["allowed_callers"], serde_json::json!(["direct", "programmatic"]));
    assert_eq!(doc[0]["allowed_callers"], serde_json::json!(["programmatic"]));
    assert!(doc[1].get("eager_input_streaming").is_none());
    assert!(responses.warnings.iter().any(|w| w.contains("tool `sum`") && w.contains("`eager_input_streaming`")));
    let gemini = catalog.export(Dialect::GeminiJsonSchema).unwrap().document();
    assert_eq!(gemini["functionDeclarations"][1]["behavior"], "NON_BLOCKING");
    assert_eq!(gemini["functionDeclarations"][0]["behavior"], "BLOCKING");
}
