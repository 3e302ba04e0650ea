// One mistake in the attribute is one error: the tool's marker type, `weather::tool()`,
// `InputOf<weather>` (with its fields) and `OutputOf<weather>` still resolve, so the code that
// names them reports nothing more.
use tool_core::prelude::*;
use tool_core::OutputOf;

/// Get the weather
#[tool(titel = "Weather")]
pub async fn weather(city: String, days: Option<u8>) -> Result<String, ToolError> {
    Ok(format!("{city}: {days:?}"))
}

fn describe(input: &InputOf<weather>) -> String {
    format!("{} for {:?} days", input.city, input.days)
}

fn main() {
    let tool = weather::tool().unwrap();
    let input = InputOf::<weather> { city: "Paris".into(), days: None };
    let output: OutputOf<weather> = describe(&input);
    let _ = (tool, output);
    let _ = Registry::new().insert(weather::tool());
}
