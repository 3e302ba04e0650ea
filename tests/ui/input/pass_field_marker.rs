// `#[field]` says a single parameter is one field of the input, whatever its type: here an
// enum and a newtype, which alone would be the whole input (and refused, their schemas are
// not objects).
use tool_core::prelude::*;

#[derive(Debug, Deserialize, Serialize, JsonSchema)]
#[serde(rename_all = "lowercase")]
pub enum Unit {
    Celsius,
    Fahrenheit,
}

#[derive(Debug, Deserialize, Serialize, JsonSchema)]
#[serde(transparent)]
pub struct City(String);

/// Say the unit
#[tool(input_examples = [InputOf::<unit_name> { unit: Unit::Celsius }])]
pub async fn unit_name(
    /// The temperature unit
    #[field]
    unit: Unit,
) -> String {
    format!("{unit:?}")
}

/// Greet a city
#[tool]
pub async fn greet(#[field] city: City) -> String {
    format!("hello {}", city.0)
}

pub fn main() {
    tokio::runtime::Runtime::new().unwrap().block_on(async {
        let registry = &Registry::from_module(module_path!()).unwrap();

        let spec = registry.get("unit-name").unwrap().spec().clone();
        assert_eq!(spec.schemas.input["type"], "object");
        assert_eq!(spec.schemas.input["required"], json!(["unit"]));
        assert_eq!(spec.presentation.input_examples, vec![json!({"unit": "celsius"})]);
        let out = registry.call("unit-name", json!({"unit": "fahrenheit"}), CallOptions::default()).await.unwrap();
        assert_eq!(out.value(), json!("Fahrenheit"));
        let input: InputOf<unit_name> = serde_json::from_value(json!({"unit": "celsius"})).unwrap();
        assert!(matches!(input.unit, Unit::Celsius));

        let out = registry.call("greet", json!({"city": "Oslo"}), CallOptions::default()).await.unwrap();
        assert_eq!(out.value(), json!("hello Oslo"));
    });
}
