// `eager_input_streaming` is a flag; `allowed_callers` lists `direct`, `programmatic` or
// `code_execution_<date>`; `behavior` is "blocking" or "non_blocking".
use tool_core::prelude::*;

/// Sum a list of numbers
#[tool(eager_input_streaming = true)]
pub async fn sum(numbers: Vec<f64>) -> f64 {
    numbers.iter().sum()
}

/// Add two numbers
#[tool(allowed_callers = ["model", "code_execution_2025"])]
pub async fn add(a: f64, b: f64) -> f64 {
    a + b
}

/// Multiply two numbers
#[tool(allowed_callers = [])]
pub async fn mul(a: f64, b: f64) -> f64 {
    a * b
}

/// Divide two numbers
#[tool(behavior = "later")]
pub async fn div(a: f64, b: f64) -> f64 {
    a / b
}

fn main() {}
