// The output type is serialised for the model: it needs `Serialize`.
use tool_core::prelude::*;

#[derive(JsonSchema)]
pub struct Weather {
    pub celsius: f64,
}

/// Get the weather
#[tool]
pub async fn weather(city: String) -> Weather {
    let _ = city;
    Weather { celsius: 21.0 }
}

fn main() {}
