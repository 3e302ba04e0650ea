//! The output check validates the tree a typed output serialises into (`json::to_tree`), not its
//! text parsed back. That is sound only if the two trees are the same: property tests generate
//! values of every serde shape (every number width, floats with `NaN` and infinities, escapes,
//! enums of each variant kind, maps with non-string keys, nesting) and compare `to_tree` with
//! `Node::parse` of `serde_json::to_string`. Where the tree cannot be sure (raw values, repeated
//! keys, keys or integers `serde_json` writes its own way, nesting past the parser's limit) it
//! answers nothing and the text decides; the tests pin those too, so the fallback stays narrow.

use std::collections::{BTreeMap, HashMap};
use std::fmt::Debug;

use proptest::prelude::*;
use serde::Serialize;
use serde_json::{Value, json};
use tool_core::json::{Node, to_tree};

/// `to_tree(value)`, checked equal to the parsed text when it answers; whether it answered.
fn agrees<T: Serialize + Debug + ?Sized>(value: &T) -> Result<bool, TestCaseError> {
    let text = serde_json::to_string(value).expect("serialisable");
    match to_tree(value) {
        Some(tree) => {
            let parsed = Node::parse(&text);
            prop_assert!(parsed.is_ok(), "{value:?} was written as {text}, which does not parse back");
            prop_assert_eq!(&tree, &parsed.unwrap(), "{:?} was written as {}", value, text);
            Ok(true)
        }
        None => Ok(false),
    }
}

fn value() -> impl Strategy<Value = Value> {
    let leaf = prop_oneof![
        Just(Value::Null),
        any::<bool>().prop_map(Value::Bool),
        any::<i64>().prop_map(Value::from),
        any::<u64>().prop_map(Value::from),
        any::<f64>().prop_map(Value::from), // a non-finite one becomes `null`
        prop_oneof![any::<String>(), "[a-z\"\\\\\u{0}-\u{1f}\u{7f}-\u{10ffff}]{0,8}"].prop_map(Value::String),
    ];
    leaf.prop_recursive(6, 64, 8, |inner| {
        prop_oneof![
            prop::collection::vec(inner.clone(), 0..8).prop_map(Value::Array),
            prop::collection::vec((any::<String>(), inner), 0..8).prop_map(|members| Value::Object(members.into_iter().collect())),
        ]
    })
}

#[derive(Debug, Clone, Serialize)]
enum Kind {
    Unit,
    Newtype(u16),
    Tuple(i32, String),
    Struct { flag: bool, ratio: Option<f32> },
}

#[derive(Debug, Clone, Serialize)]
struct Meters(f64);

#[derive(Debug, Serialize)]
struct Nothing;

#[derive(Debug, Clone, Serialize, PartialEq, Eq, Hash, PartialOrd, Ord)]
enum Side {
    Left,
    Right,
}

#[derive(Debug, Serialize)]
struct Shapes {
    single: f32,
    double: f64,
    letter: char,
    wide: i128,
    unsigned_wide: u128,
    small: Option<i8>,
    kinds: Vec<Kind>,
    by_number: HashMap<u32, bool>,
    by_letter: BTreeMap<char, i64>,
    by_side: BTreeMap<Side, Meters>,
    pair: (u8, String),
    bytes: Vec<u8>,
    nothing: Nothing,
    unit: (),
    #[serde(rename = "renamed field")]
    renamed: Option<Option<u64>>,
}

fn kind() -> impl Strategy<Value = Kind> {
    prop_oneof![
        Just(Kind::Unit),
        any::<u16>().prop_map(Kind::Newtype),
        (any::<i32>(), any::<String>()).prop_map(|(n, s)| Kind::Tuple(n, s)),
        (any::<bool>(), any::<Option<f32>>()).prop_map(|(flag, ratio)| Kind::Struct { flag, ratio }),
    ]
}

fn shapes() -> impl Strategy<Value = Shapes> {
    let numbers = (
        any::<f32>(),
        any::<f64>(),
        any::<char>(),
        prop_oneof![any::<i64>().prop_map(i128::from), any::<i128>()],
        prop_oneof![any::<u64>().prop_map(u128::from), any::<u128>()],
        any::<Option<i8>>(),
    );
    let containers = (
        prop::collection::vec(kind(), 0..4),
        prop::collection::hash_map(any::<u32>(), any::<bool>(), 0..4),
        prop::collection::btree_map(any::<char>(), any::<i64>(), 0..4),
        prop::collection::btree_map(
            prop_oneof![Just(Side::Left), Just(Side::Right)],
            any::<f64>().prop_map(Meters),
            0..2,
        ),
        (any::<u8>(), any::<String>()),
        prop::collection::vec(any::<u8>(), 0..6),
        any::<Option<Option<u64>>>(),
    );
    (numbers, containers).prop_map(
        |((single, double, letter, wide, unsigned_wide, small), (kinds, by_number, by_letter, by_side, pair, bytes, renamed))| Shapes {
            single,
            double,
            letter,
            wide,
            unsigned_wide,
            small,
            kinds,
            by_number,
            by_letter,
            by_side,
            pair,
            bytes,
            nothing: Nothing,
            unit: (),
            renamed,
        },
    )
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(512))]

    #[test]
    fn any_json_value_has_the_tree_of_its_text(value in value()) {
        prop_assert!(agrees(&value)?, "{value:?} had no tree");
    }

    #[test]
    fn every_serde_shape_has_the_tree_of_its_text(shapes in shapes()) {
        let within_64_bits = i64::try_from(shapes.wide).is_ok() || u64::try_from(shapes.wide).is_ok();
        let within_64_bits = within_64_bits && u64::try_from(shapes.unsigned_wide).is_ok();
        // Integers past 64 bits are written as digits the parser reads as a float: the text decides.
        prop_assert_eq!(agrees(&shapes)?, within_64_bits, "{:?}", shapes);
    }

    #[test]
    fn floats_read_as_the_text_says(single in any::<f32>(), double in any::<f64>()) {
        prop_assert!(agrees(&single)?);
        prop_assert!(agrees(&double)?);
        prop_assert!(agrees(&[single.into(), double])?);
    }
}

#[test]
fn an_f32_is_the_number_its_shortest_digits_say() {
    // 0.1f32 as an f64 is 0.10000000149011612; `serde_json` writes `0.1`.
    assert_eq!(to_tree(&0.1f32), Node::parse("0.1").ok());
    assert_ne!(to_tree(&0.1f32), Node::parse("0.10000000149011612").ok());
    assert_eq!(to_tree(&f32::NAN), Some(Node::Null));
    assert_eq!(to_tree(&f64::NEG_INFINITY), Some(Node::Null));
}

#[derive(Debug, Serialize)]
struct Flattened {
    id: u32,
    #[serde(flatten)]
    extra: BTreeMap<String, u32>,
}

#[derive(Debug, Serialize)]
struct WithRaw {
    id: u32,
    raw: Box<serde_json::value::RawValue>,
}

#[test]
fn what_only_the_text_can_tell_has_no_tree() {
    // A flattened map repeating a field: the parser refuses the repeated key, the check then
    // reads the text as `serde_json` does.
    let repeated = Flattened {
        id: 1,
        extra: BTreeMap::from([("id".to_owned(), 2)]),
    };
    assert!(!agrees(&repeated).unwrap());
    let distinct = Flattened {
        id: 1,
        extra: BTreeMap::from([("other".to_owned(), 2)]),
    };
    assert!(agrees(&distinct).unwrap());
    // A raw value is written verbatim.
    let raw = WithRaw {
        id: 1,
        raw: serde_json::value::RawValue::from_string(r#"{"a": [1, 2.5]}"#.into()).unwrap(),
    };
    assert!(!agrees(&raw).unwrap());
    // Keys `serde_json` versions write differently, and integers past 64 bits.
    assert!(!agrees(&HashMap::from([(true, 1)])).unwrap());
    assert!(agrees(&HashMap::<bool, u8>::new()).unwrap());
    assert!(!agrees(&u128::MAX).unwrap());
    assert!(agrees(&u128::from(u64::MAX)).unwrap());
    assert!(!agrees(&i128::MIN).unwrap());
}

#[test]
fn nesting_has_a_tree_up_to_a_depth_the_parser_reads() {
    fn nested(depth: usize) -> Value {
        (0..depth).fold(json!(1), |inner, _| json!([inner]))
    }
    assert!(agrees(&nested(100)).unwrap());
    assert!(!agrees(&nested(101)).unwrap());
    // Past the parser's own limit the text does not parse back either: no tree there.
    assert!(Node::parse(&nested(200).to_string()).is_err());
    assert_eq!(to_tree(&nested(200)), None);
}
