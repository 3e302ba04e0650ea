// Whether a tool can fail is decided by its return type, not by how it is spelt: an alias of
// `Result` (generic or not, `std::io::Result` included) splits into output and error exactly
// like `Result<T, E>`, and a type merely named like one is a plain output.
use tool_core::prelude::*;
use tool_core::OutputOf;

/// The result of a lookup.
pub type Outcome<T> = Result<T, ToolError>;
/// The result of a parse.
pub type Parsed = Result<u32, std::num::ParseIntError>;

#[derive(Debug, Serialize, JsonSchema)]
pub struct Weather {
    pub celsius: f64,
}

/// Get the weather
#[tool]
pub async fn weather(city: String) -> Outcome<Weather> {
    if city.is_empty() {
        return Err(ToolError::new("the city is empty"));
    }
    Ok(Weather { celsius: 21.0 })
}

/// Parse a number
#[tool]
pub async fn parse(text: String) -> Parsed {
    text.trim().parse()
}

/// Read nothing
#[tool]
pub async fn read(path: String) -> std::io::Result<String> {
    Err(std::io::Error::new(std::io::ErrorKind::NotFound, path))
}

mod named {
    /// Not a `std::result::Result`: a plain output that happens to be called `Result`.
    #[derive(serde::Serialize, schemars::JsonSchema)]
    pub struct Result {
        pub ok: bool,
    }
}

/// Check something
#[tool]
pub async fn check(what: String) -> named::Result {
    named::Result { ok: !what.is_empty() }
}

pub fn main() {
    tokio::runtime::Runtime::new().unwrap().block_on(async {
        let registry = &Registry::from_module(module_path!()).unwrap();

        let spec = registry.get("weather").unwrap().spec().clone();
        assert_eq!(spec.schemas.output.as_ref().unwrap()["properties"]["celsius"]["type"], "number");
        let out = registry.call("weather", json!({"city": "Oslo"}), CallOptions::default()).await.unwrap();
        assert_eq!(out.value(), json!({"celsius": 21.0}));
        let err = registry.call("weather", json!({"city": ""}), CallOptions::default()).await.unwrap_err();
        assert!(err.message().contains("the city is empty"), "{}", err.message());
        let output: OutputOf<weather> = Weather { celsius: 1.0 };
        assert_eq!(output.celsius, 1.0);

        let out = registry.call("parse", json!({"text": " 42 "}), CallOptions::default()).await.unwrap();
        assert_eq!(out.value(), json!(42));
        assert!(registry.call("parse", json!({"text": "x"}), CallOptions::default()).await.is_err());

        let spec = registry.get("read").unwrap().spec().clone();
        assert_eq!(spec.schemas.output.as_ref().unwrap()["type"], "string");
        assert!(registry.call("read", json!({"path": "/nope"}), CallOptions::default()).await.is_err());

        let out = registry.call("check", json!({"what": "x"}), CallOptions::default()).await.unwrap();
        assert_eq!(out.value(), json!({"ok": true}));
    });
}
