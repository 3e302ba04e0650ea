// `to_model_output` returns `ModelOutput` or `Option<ModelOutput>`.
use tool_core::prelude::*;

fn summarize(text: &String) -> String {
    text.clone()
}

/// Get the weather
#[tool(to_model_output = summarize)]
pub async fn weather(city: String) -> String {
    city
}

fn main() {}
