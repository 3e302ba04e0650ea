//! The starter's tools. Every `#[tool]` in a crate the binary links is registered: no list to
//! keep.

use tool_core::prelude::*;

/// A temperature unit.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub enum Unit {
    /// Degrees Celsius.
    C,
    /// Degrees Fahrenheit.
    F,
}

/// A converted temperature.
#[derive(Debug, Serialize, JsonSchema)]
pub struct Converted {
    /// The value in the other unit, rounded to one decimal.
    pub value: f64,
    /// The unit it is in.
    pub unit: Unit,
}

/// Convert a temperature between Celsius and Fahrenheit
#[tool(id = "convert-temperature", strict, mcp(read_only_hint = true, open_world_hint = false))]
pub async fn convert_temperature(
    /// The temperature to convert
    value: f64,
    /// The unit the temperature is in
    from: Unit,
) -> Result<Converted, ToolError> {
    if !value.is_finite() {
        return Err(ToolError::new("the temperature must be a finite number"));
    }
    let (value, unit) = match from {
        Unit::C => (value * 9.0 / 5.0 + 32.0, Unit::F),
        Unit::F => ((value - 32.0) * 5.0 / 9.0, Unit::C),
    };
    Ok(Converted {
        value: (value * 10.0).round() / 10.0,
        unit,
    })
}
