// A mistake in the signature is one error too, however the tool is used.
use tool_core::prelude::*;

/// Get the weather
#[tool]
pub fn weather(city: String) -> String {
    city
}

fn main() {
    let input = InputOf::<weather> { city: "Paris".into() };
    let _ = (input.city, weather::tool());
}
