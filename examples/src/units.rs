//! `convert-units`: length, mass, temperature and volume conversions.
//!
//! Shows a struct input with typed `input_examples` (a wrong example would not compile) and a
//! closed set of units as an enum, so the schema lists every accepted unit.

use tool_core::prelude::*;

/// A unit of measurement, by symbol. Customary volume units are US units.
///
/// The variants have no doc comments on purpose: documented variants make the schema a long
/// `oneOf` of `const`s; undocumented ones give a compact `enum` of the symbols, which every
/// provider reads.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize, Serialize, JsonSchema)]
#[allow(missing_docs)]
pub enum Unit {
    // Length
    #[serde(rename = "mm")]
    Millimeter,
    #[serde(rename = "cm")]
    Centimeter,
    #[serde(rename = "m")]
    Meter,
    #[serde(rename = "km")]
    Kilometer,
    #[serde(rename = "in")]
    Inch,
    #[serde(rename = "ft")]
    Foot,
    #[serde(rename = "yd")]
    Yard,
    // statute mile
    #[serde(rename = "mi")]
    Mile,
    #[serde(rename = "nmi")]
    NauticalMile,
    // Mass
    #[serde(rename = "mg")]
    Milligram,
    #[serde(rename = "g")]
    Gram,
    #[serde(rename = "kg")]
    Kilogram,
    // metric tonne
    #[serde(rename = "t")]
    Tonne,
    // avoirdupois ounce
    #[serde(rename = "oz")]
    Ounce,
    // avoirdupois pound
    #[serde(rename = "lb")]
    Pound,
    // stone (14 lb)
    #[serde(rename = "st")]
    Stone,
    // Temperature
    #[serde(rename = "C")]
    Celsius,
    #[serde(rename = "F")]
    Fahrenheit,
    #[serde(rename = "K")]
    Kelvin,
    // Volume
    #[serde(rename = "ml")]
    Milliliter,
    #[serde(rename = "l")]
    Liter,
    #[serde(rename = "m3")]
    CubicMeter,
    #[serde(rename = "tsp")]
    Teaspoon,
    #[serde(rename = "tbsp")]
    Tablespoon,
    #[serde(rename = "fl_oz")]
    FluidOunce,
    // US legal cup (240 ml)
    #[serde(rename = "cup")]
    Cup,
    #[serde(rename = "pt")]
    Pint,
    #[serde(rename = "qt")]
    Quart,
    #[serde(rename = "gal")]
    Gallon,
}

/// What a unit measures.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, JsonSchema)]
#[serde(rename_all = "lowercase")]
pub enum Quantity {
    /// Distance.
    Length,
    /// Mass (weight).
    Mass,
    /// Temperature.
    Temperature,
    /// Volume (capacity).
    Volume,
}

impl Unit {
    /// The quantity and, for linear units, the size in the base unit (m, kg, m³).
    fn definition(self) -> (Quantity, f64) {
        use Quantity::*;
        use Unit::*;
        const US_GALLON_M3: f64 = 3.785_411_784e-3;
        match self {
            Millimeter => (Length, 1e-3),
            Centimeter => (Length, 1e-2),
            Meter => (Length, 1.0),
            Kilometer => (Length, 1e3),
            Inch => (Length, 0.0254),
            Foot => (Length, 0.3048),
            Yard => (Length, 0.9144),
            Mile => (Length, 1609.344),
            NauticalMile => (Length, 1852.0),
            Milligram => (Mass, 1e-6),
            Gram => (Mass, 1e-3),
            Kilogram => (Mass, 1.0),
            Tonne => (Mass, 1e3),
            Ounce => (Mass, 0.028_349_523_125),
            Pound => (Mass, 0.453_592_37),
            Stone => (Mass, 6.350_293_18),
            Celsius | Fahrenheit | Kelvin => (Temperature, 1.0),
            Milliliter => (Volume, 1e-6),
            Liter => (Volume, 1e-3),
            CubicMeter => (Volume, 1.0),
            Teaspoon => (Volume, US_GALLON_M3 / 768.0),
            Tablespoon => (Volume, US_GALLON_M3 / 256.0),
            FluidOunce => (Volume, US_GALLON_M3 / 128.0),
            Cup => (Volume, 2.4e-4),
            Pint => (Volume, US_GALLON_M3 / 8.0),
            Quart => (Volume, US_GALLON_M3 / 4.0),
            Gallon => (Volume, US_GALLON_M3),
        }
    }

    /// What the unit measures.
    pub fn quantity(self) -> Quantity {
        self.definition().0
    }

    /// The symbol used in the input (`km`, `lb`, `C`, …).
    pub fn symbol(self) -> String {
        serde_json::to_value(self)
            .ok()
            .and_then(|v| v.as_str().map(str::to_owned))
            .unwrap_or_default()
    }
}

/// An amount and the units to convert it between.
#[derive(Debug, Clone, PartialEq, Deserialize, Serialize, JsonSchema)]
pub struct ConvertUnitsInput {
    /// The amount to convert.
    pub value: f64,
    /// The unit of `value`.
    pub from: Unit,
    /// The unit to convert to; must measure the same quantity as `from`.
    pub to: Unit,
}

/// The result of a conversion.
#[derive(Debug, Clone, PartialEq, Serialize, JsonSchema)]
pub struct Conversion {
    /// What both units measure.
    pub quantity: Quantity,
    /// The amount converted.
    pub value: f64,
    /// Its unit.
    pub from: Unit,
    /// The converted amount, rounded to 12 significant digits.
    pub result: f64,
    /// Its unit.
    pub to: Unit,
    /// The conversion as text, e.g. `100 C = 212 F`.
    pub formatted: String,
}

/// Rounds to `digits` significant digits, which removes binary floating-point noise
/// (`2.5399999999999996` becomes `2.54`).
fn round_significant(x: f64, digits: usize) -> f64 {
    if x == 0.0 || !x.is_finite() {
        return x;
    }
    format!("{:.*e}", digits.saturating_sub(1), x).parse().unwrap_or(x)
}

fn to_kelvin(unit: Unit, v: f64) -> f64 {
    match unit {
        Unit::Celsius => v + 273.15,
        Unit::Fahrenheit => (v - 32.0) * 5.0 / 9.0 + 273.15,
        _ => v,
    }
}

fn from_kelvin(unit: Unit, k: f64) -> f64 {
    match unit {
        Unit::Celsius => k - 273.15,
        Unit::Fahrenheit => (k - 273.15) * 9.0 / 5.0 + 32.0,
        _ => k,
    }
}

/// Converts `value` from one unit to another of the same quantity.
pub fn convert(value: f64, from: Unit, to: Unit) -> Result<Conversion, ToolError> {
    let ((q_from, f_from), (q_to, f_to)) = (from.definition(), to.definition());
    if q_from != q_to {
        return Err(ToolError::new(format!(
            "Cannot convert {} ({q_from:?}) to {} ({q_to:?}): the units measure different quantities. Pick a target unit that also measures {}.",
            from.symbol(),
            to.symbol(),
            format!("{q_from:?}").to_lowercase(),
        )));
    }
    let raw = if q_from == Quantity::Temperature {
        let kelvin = to_kelvin(from, value);
        // Compare after rounding so that -273.15 C (exactly absolute zero) is accepted.
        if round_significant(kelvin, 12) < 0.0 {
            return Err(ToolError::new(format!(
                "{value} {} is below absolute zero (0 K = -273.15 C = -459.67 F), so it is not a temperature.",
                from.symbol()
            )));
        }
        from_kelvin(to, kelvin)
    } else {
        value * f_from / f_to
    };
    if !raw.is_finite() {
        return Err(ToolError::new(format!(
            "{value} {} is too large to express in {}.",
            from.symbol(),
            to.symbol()
        )));
    }
    let result = round_significant(raw, 12) + 0.0; // `+ 0.0` turns -0 into 0
    Ok(Conversion {
        quantity: q_from,
        value,
        from,
        result,
        to,
        formatted: format!("{value} {} = {result} {}", from.symbol(), to.symbol()),
    })
}

/// Convert an amount between units of length, mass, temperature or volume
///
/// Units: length mm, cm, m, km, in, ft, yd, mi, nmi; mass mg, g, kg, t, oz, lb, st;
/// temperature C, F, K; volume ml, l, m3, tsp, tbsp, fl_oz, cup, pt, qt, gal (US units).
/// Both units must measure the same quantity.
#[tool(
    id = "convert-units",
    tags = ["math", "offline"],
    // Found by tool search (`serve --tool-search`) rather than listed up front.
    defer_loading,
    input_examples = [
        ConvertUnitsInput { value: 5.0, from: Unit::Kilometer, to: Unit::Mile },
        ConvertUnitsInput { value: 100.0, from: Unit::Celsius, to: Unit::Fahrenheit },
        ConvertUnitsInput { value: 2.0, from: Unit::Cup, to: Unit::Milliliter },
    ],
    mcp(read_only_hint = true, idempotent_hint = true, open_world_hint = false)
)]
pub async fn convert_units(input: ConvertUnitsInput) -> Result<Conversion, ToolError> {
    convert(input.value, input.from, input.to)
}

#[cfg(test)]
mod tests {
    use super::*;
    use Unit::*;

    fn r(value: f64, from: Unit, to: Unit) -> f64 {
        convert(value, from, to).unwrap().result
    }

    #[test]
    fn lengths() {
        assert_eq!(r(1.0, Inch, Centimeter), 2.54);
        assert_eq!(r(1.0, Mile, Kilometer), 1.609344);
        assert_eq!(r(3.0, Foot, Yard), 1.0);
        assert_eq!(r(1.0, NauticalMile, Meter), 1852.0);
        assert_eq!(r(12.0, Inch, Foot), 1.0);
        assert_eq!(r(-2.0, Meter, Millimeter), -2000.0);
    }

    #[test]
    fn masses() {
        assert_eq!(r(1.0, Pound, Kilogram), 0.45359237);
        assert_eq!(r(16.0, Ounce, Pound), 1.0);
        assert_eq!(r(1.0, Stone, Pound), 14.0);
        assert_eq!(r(2.5, Tonne, Kilogram), 2500.0);
        assert_eq!(r(1.0, Gram, Milligram), 1000.0);
    }

    #[test]
    fn temperatures() {
        assert_eq!(r(100.0, Celsius, Fahrenheit), 212.0);
        assert_eq!(r(32.0, Fahrenheit, Celsius), 0.0);
        assert_eq!(r(-40.0, Celsius, Fahrenheit), -40.0);
        assert_eq!(r(0.0, Kelvin, Celsius), -273.15);
        assert_eq!(r(-273.15, Celsius, Kelvin), 0.0);
        assert_eq!(r(98.6, Fahrenheit, Celsius), 37.0);
        assert_eq!(r(20.0, Celsius, Celsius), 20.0);
    }

    #[test]
    fn volumes() {
        assert_eq!(r(1.0, Gallon, Liter), 3.785411784);
        assert_eq!(r(1.0, Gallon, Quart), 4.0);
        assert_eq!(r(1.0, Quart, Pint), 2.0);
        assert_eq!(r(1.0, FluidOunce, Tablespoon), 2.0);
        assert_eq!(r(1.0, Tablespoon, Teaspoon), 3.0);
        assert_eq!(r(2.0, Cup, Milliliter), 480.0);
        assert_eq!(r(1.0, CubicMeter, Liter), 1000.0);
    }

    #[test]
    fn incompatible_units_are_refused_with_the_reason() {
        let e = convert(1.0, Kilogram, Meter).unwrap_err();
        assert_eq!(
            e.message(),
            "Cannot convert kg (Mass) to m (Length): the units measure different quantities. Pick a target unit that also measures mass."
        );
        assert!(convert(1.0, Celsius, Liter).is_err());
    }

    #[test]
    fn below_absolute_zero_and_overflow_are_refused() {
        assert!(convert(-300.0, Celsius, Kelvin).unwrap_err().message().contains("absolute zero"));
        assert!(convert(-1.0, Kelvin, Celsius).unwrap_err().message().contains("absolute zero"));
        assert!(convert(1e308, Kilometer, Millimeter).unwrap_err().message().contains("too large"));
    }

    #[test]
    fn formatted_and_symbols() {
        let c = convert(100.0, Celsius, Fahrenheit).unwrap();
        assert_eq!(c.formatted, "100 C = 212 F");
        assert_eq!(c.quantity, Quantity::Temperature);
        assert_eq!(FluidOunce.symbol(), "fl_oz");
        assert_eq!(CubicMeter.symbol(), "m3");
    }

    #[test]
    fn examples_and_schema_reach_the_spec() {
        let tool = Registry::global().get("convert-units").unwrap();
        let spec = tool.spec();
        assert_eq!(spec.presentation.input_examples[0], json!({"value": 5.0, "from": "km", "to": "mi"}));
        assert_eq!(spec.presentation.input_examples.len(), 3);
        let symbols = spec.schemas.input["$defs"]["Unit"]["enum"].as_array().unwrap();
        assert_eq!(symbols.len(), 29);
        for unit in ["nmi", "fl_oz", "K", "st", "m3"] {
            assert!(symbols.contains(&json!(unit)), "{unit} missing from {symbols:?}");
        }
    }

    #[tokio::test]
    async fn unknown_units_fail_validation_naming_the_field() {
        let err = Registry::global()
            .call(
                "convert-units",
                json!({"value": 1, "from": "meters", "to": "ft"}),
                CallOptions::default(),
            )
            .await
            .unwrap_err();
        assert_eq!(err.kind(), tool_core::ErrorKind::InvalidInput);
        assert_eq!(err.issues()[0].path, "/from");
    }
}
