// Providers accept at most 64 characters.
use tool_core::prelude::*;

/// Get the weather
#[tool(id = "get_the_current_weather_conditions_and_forecast_for_a_given_city_x")]
pub async fn weather(city: String) -> String {
    city
}

fn main() {}
