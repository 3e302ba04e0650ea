// The same with a struct as the whole input: `InputOf<weather>` is still the struct.
use tool_core::prelude::*;

#[derive(Deserialize, Serialize, JsonSchema)]
pub struct WeatherInput {
    pub city: String,
}

/// Get the weather
#[tool(require_approval = true)]
pub async fn weather(input: WeatherInput) -> String {
    input.city
}

fn main() {
    let input: InputOf<weather> = WeatherInput { city: "Paris".into() };
    let _ = input.city;
    let _ = weather::tool();
}
