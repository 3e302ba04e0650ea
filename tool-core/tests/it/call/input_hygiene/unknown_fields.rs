//! Unknown fields: a strict tool (or a `deny_unknown_fields` input) refuses them at every depth,
//! naming them.

use super::*;

#[tokio::test]
async fn a_strict_tool_refuses_unknown_fields_at_every_depth_naming_them() {
    let registry = registry();
    let extra = r#"{"name": "n", "to": {"city": "Oslo"}, "stops": [], "budget": 100}"#;
    // The lenient tool ignores it (its schema allows more fields)...
    let out = registry.call("hy-trip", extra, CallOptions::default()).await.unwrap();
    assert_eq!(out.value(), json!("n to Oslo via []"));
    // ...the strict one, with the same schema, refuses it by name.
    let e = refused(&registry, "hy-trip-strict", extra).await;
    assert_eq!(e.kind(), ErrorKind::InvalidInput, "{e}");
    assert!(e.message().contains("unknown field `budget`"), "{e}");

    let nested = r#"{"name": "n", "to": {"city": "Oslo", "zip": "0150"}, "stops": [{"city": "A", "hotel": "H"}]}"#;
    let e = refused(&registry, "hy-trip-strict", nested).await;
    assert!(e.message().contains("`zip`") && e.message().contains("`hotel`"), "{e}");
    let paths: Vec<&str> = e.issues().iter().map(|i| i.path.as_str()).collect();
    assert!(paths.contains(&"/to") && paths.contains(&"/stops/0"), "{paths:?}");
    // As a value too (not only as text).
    let value = json!({"name": "n", "to": {"city": "Oslo"}, "stops": [], "budget": 1});
    let e = registry.call("hy-trip-strict", value, CallOptions::default()).await.unwrap_err();
    assert!(e.message().contains("`budget`"), "{e}");

    let fine = r#"{"name": "n", "to": {"city": "Oslo", "country": null}, "stops": [{"city": "A"}]}"#;
    let out = registry.call("hy-trip-strict", fine, CallOptions::default()).await.unwrap();
    assert_eq!(out.value(), json!("n to Oslo via [A]"));
}

#[tokio::test]
async fn a_strict_tool_with_a_flattened_enum_accepts_each_variants_fields_and_nothing_else() {
    let registry = registry();
    let circle = r#"{"label": "c", "kind": "circle", "r": 2}"#;
    assert_eq!(
        registry.call("hy-draw", circle, CallOptions::default()).await.unwrap().value(),
        json!("c: circle 2")
    );
    let square = r#"{"label": "s", "kind": "square", "side": 3}"#;
    assert_eq!(
        registry.call("hy-draw", square, CallOptions::default()).await.unwrap().value(),
        json!("s: square 3")
    );
    let e = refused(&registry, "hy-draw", r#"{"label": "c", "kind": "circle", "r": 2, "colour": "red"}"#).await;
    assert!(e.message().contains("`colour`"), "{e}");
}

#[tokio::test]
async fn deny_unknown_fields_on_an_input_type_is_honoured_with_the_field_named() {
    let registry = registry();
    let e = refused(&registry, "hy-exact", r#"{"n": 1, "m": 2}"#).await;
    assert_eq!(e.kind(), ErrorKind::InvalidInput, "{e}");
    assert!(e.message().contains("unknown field `m`"), "{e}");
    let out = registry.call("hy-exact", r#"{"n": 7}"#, CallOptions::default()).await.unwrap();
    assert_eq!(out.value(), json!(7));
}
