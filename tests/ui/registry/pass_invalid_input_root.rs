//! A whole-input type whose schema root is not an object is refused at registration, with
//! the tool and the type named, never at call time. (A program of its own: the global registry
//! is the whole binary's, and the tests binary's must start.)

use tool_core::prelude::*;

#[derive(Debug, Deserialize, JsonSchema)]
pub enum Shape {
    Circle { r: f64 },
    Square { side: f64 },
}

/// Area of a shape
#[tool]
pub async fn area(shape: Shape) -> f64 {
    match shape {
        Shape::Circle { r } => std::f64::consts::PI * r * r,
        Shape::Square { side } => side * side,
    }
}

fn main() {
    let err = Registry::try_global().unwrap_err().to_string();
    assert!(err.contains("tool `area`"), "{err}");
    assert!(err.contains("`Shape`"), "{err}");
    assert!(err.contains("root `oneOf`"), "{err}");
    assert!(err.contains("ui/registry/pass_invalid_input_root.rs"), "{err}");
    assert!(area::tool().is_err());
}
