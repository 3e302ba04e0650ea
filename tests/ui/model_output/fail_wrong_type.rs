// `to_model_output` receives `&Output`: here the function takes another type.
use tool_core::prelude::*;

#[derive(Serialize, JsonSchema)]
pub struct Weather {
    pub celsius: f64,
}

fn summarize(text: &String) -> ModelOutput {
    ModelOutput::text(text.clone())
}

/// Get the weather
#[tool(to_model_output = summarize)]
pub async fn weather(city: String) -> Weather {
    let _ = city;
    Weather { celsius: 21.0 }
}

fn main() {}
