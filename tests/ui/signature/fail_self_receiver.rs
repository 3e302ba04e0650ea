// A tool is a free function: a method with a `self` receiver is refused.
use tool_core::prelude::*;

pub struct Station;

impl Station {
    /// Get the weather
    #[tool]
    pub async fn weather(&self, city: String) -> String {
        city
    }
}

fn main() {}
