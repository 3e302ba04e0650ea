// `suspend = T` needs `T: JsonSchema`.
use tool_core::prelude::*;

#[derive(Serialize, Deserialize)]
pub struct AskUser {
    pub question: String,
}

/// Book a flight
#[tool(suspend = AskUser)]
pub async fn book(flight: String) -> String {
    flight
}

fn main() {}
