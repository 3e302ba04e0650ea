// `resume = T` needs `T: JsonSchema`.
use tool_core::prelude::*;

#[derive(Deserialize)]
pub struct Answer {
    pub confirmed: bool,
}

/// Book a flight
#[tool(resume = Answer)]
pub async fn book(flight: String) -> String {
    flight
}

fn main() {}
