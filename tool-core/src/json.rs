//! A borrowed JSON tree for the hot path of a call.
//!
//! Owns [`Node`] (parsed from argument text without copying strings that need no unescaping)
//! and [`Borrowed`], its representation for the `jsonschema` validator. `call` validates
//! arguments and outputs on this tree and falls back to `serde_json::Value` only to explain a
//! failure. Nothing here knows about tools. Text from outside keeps one value per key
//! (`unique`): a repeated key is an error, never a silent choice; messages repeat a bounded
//! part of it (`quote`). A call's output is validated on the tree it serialises into
//! (`tree`), not on its text parsed back.

mod quote;
mod scan;
mod tree;
mod unique;

pub(crate) use quote::{QUOTE_LIMIT, bound_quotes, bounded};
pub(crate) use scan::{Scanned, scan};
pub use tree::to_tree;
pub use unique::{DuplicateKey, TextError, surely_unique};
pub(crate) use unique::{locate_duplicate, parse_unique};

use std::borrow::Cow;
use std::fmt;

use jsonschema::JsonType;
use jsonschema::json::{Array, Json, JsonNumber, Node as JsonNode, NodeIdentity, Object};
use serde::de::{Deserialize, Deserializer, MapAccess, SeqAccess, Visitor};
use serde_json::Value;

/// A JSON number as it was read.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Number {
    /// A non-negative integer.
    PosInt(u64),
    /// A negative integer.
    NegInt(i64),
    /// Anything else.
    Float(f64),
}

/// One JSON value borrowing its strings from the text it was parsed from.
#[derive(Debug, Clone, Default, PartialEq)]
pub enum Node<'a> {
    /// `null`
    #[default]
    Null,
    /// `true` / `false`
    Bool(bool),
    /// A number.
    Number(Number),
    /// A string (borrowed unless it had escapes).
    String(Cow<'a, str>),
    /// An array.
    Array(Vec<Node<'a>>),
    /// An object, members in document order.
    Object(Vec<(Cow<'a, str>, Node<'a>)>),
}

impl<'a> Node<'a> {
    /// Parses JSON text; an object that repeats a key is an error (I-JSON: see
    /// [`locate_duplicate`] for where).
    ///
    /// ```
    /// let text = r#"{"city": "Oslo", "days": [1, 2]}"#;
    /// let node = tool_core::json::Node::parse(text).unwrap();
    /// assert_eq!(node.to_value(), serde_json::json!({"city": "Oslo", "days": [1, 2]}));
    /// assert!(tool_core::json::Node::parse(r#"{"city": "Oslo", "city": "Bergen"}"#).is_err());
    /// ```
    pub fn parse(text: &'a str) -> Result<Node<'a>, serde_json::Error> {
        serde_json::from_str(text)
    }

    /// The equivalent `serde_json::Value` (for error reporting).
    pub fn to_value(&self) -> Value {
        match self {
            Node::Null => Value::Null,
            Node::Bool(b) => Value::Bool(*b),
            Node::Number(n) => Value::Number(n.to_serde()),
            Node::String(s) => Value::String(s.to_string()),
            Node::Array(items) => Value::Array(items.iter().map(Node::to_value).collect()),
            Node::Object(members) => Value::Object(members.iter().map(|(k, v)| (k.to_string(), v.to_value())).collect()),
        }
    }
}

impl Number {
    fn to_serde(self) -> serde_json::Number {
        match self {
            Number::PosInt(u) => u.into(),
            Number::NegInt(i) => i.into(),
            Number::Float(f) => serde_json::Number::from_f64(f).unwrap_or_else(|| 0.into()),
        }
    }
}

struct NodeVisitor;

impl<'de> Visitor<'de> for NodeVisitor {
    type Value = Node<'de>;

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("any JSON value")
    }
    fn visit_bool<E>(self, v: bool) -> Result<Node<'de>, E> {
        Ok(Node::Bool(v))
    }
    fn visit_i64<E>(self, v: i64) -> Result<Node<'de>, E> {
        Ok(Node::Number(if v < 0 { Number::NegInt(v) } else { Number::PosInt(v as u64) }))
    }
    fn visit_u64<E>(self, v: u64) -> Result<Node<'de>, E> {
        Ok(Node::Number(Number::PosInt(v)))
    }
    fn visit_f64<E>(self, v: f64) -> Result<Node<'de>, E> {
        Ok(Node::Number(Number::Float(v)))
    }
    fn visit_borrowed_str<E>(self, v: &'de str) -> Result<Node<'de>, E> {
        Ok(Node::String(Cow::Borrowed(v)))
    }
    fn visit_str<E>(self, v: &str) -> Result<Node<'de>, E> {
        Ok(Node::String(Cow::Owned(v.to_owned())))
    }
    fn visit_string<E>(self, v: String) -> Result<Node<'de>, E> {
        Ok(Node::String(Cow::Owned(v)))
    }
    fn visit_unit<E>(self) -> Result<Node<'de>, E> {
        Ok(Node::Null)
    }
    fn visit_none<E>(self) -> Result<Node<'de>, E> {
        Ok(Node::Null)
    }
    fn visit_some<D: Deserializer<'de>>(self, d: D) -> Result<Node<'de>, D::Error> {
        Node::deserialize(d)
    }
    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<Node<'de>, A::Error> {
        let mut items = Vec::with_capacity(seq.size_hint().unwrap_or(0).min(4096));
        while let Some(item) = seq.next_element()? {
            items.push(item);
        }
        Ok(Node::Array(items))
    }
    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Node<'de>, A::Error> {
        let mut members: Vec<(Cow<'de, str>, Node<'de>)> = Vec::with_capacity(map.size_hint().unwrap_or(0).min(4096));
        let mut seen = unique::Seen::new();
        while let Some(Key(k)) = map.next_key()? {
            if seen.repeats(&k, members.iter().map(|(m, _)| m)) {
                return Err(unique::repeated(&k));
            }
            members.push((k, map.next_value()?));
        }
        Ok(Node::Object(members))
    }
}

impl<'de> Deserialize<'de> for Node<'de> {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        d.deserialize_any(NodeVisitor)
    }
}

/// An object key, borrowed when it can be.
struct Key<'a>(Cow<'a, str>);

impl<'de> Deserialize<'de> for Key<'de> {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct KeyVisitor;
        impl<'de> Visitor<'de> for KeyVisitor {
            type Value = Key<'de>;
            fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str("an object key")
            }
            fn visit_borrowed_str<E>(self, v: &'de str) -> Result<Key<'de>, E> {
                Ok(Key(Cow::Borrowed(v)))
            }
            fn visit_str<E>(self, v: &str) -> Result<Key<'de>, E> {
                Ok(Key(Cow::Owned(v.to_owned())))
            }
            fn visit_string<E>(self, v: String) -> Result<Key<'de>, E> {
                Ok(Key(Cow::Owned(v)))
            }
        }
        d.deserialize_str(KeyVisitor)
    }
}

/// The [`Node`] representation for `jsonschema` validators: `options_for::<Borrowed>()`.
#[derive(Debug, Clone, Copy)]
pub struct Borrowed;

impl Json for Borrowed {
    type Node<'a> = &'a Node<'a>;
    type PreparedKey = Box<str>;
    type StringBuffer = Node<'static>;
    const KEYS_PER_LOOKUP: usize = 8;
    const ACYCLIC: bool = true;

    fn prepare_key(key: &str) -> Box<str> {
        key.into()
    }

    fn with_string_node<T>(buffer: &mut Node<'static>, string: &str, f: impl FnOnce(Self::Node<'_>) -> T) -> T {
        *buffer = Node::String(Cow::Owned(string.to_owned()));
        f(buffer)
    }
}

impl JsonNumber for Number {
    fn as_u64(&self) -> Option<u64> {
        match *self {
            Number::PosInt(u) => Some(u),
            _ => None,
        }
    }
    fn as_i64(&self) -> Option<i64> {
        match *self {
            Number::PosInt(u) => i64::try_from(u).ok(),
            Number::NegInt(i) => Some(i),
            Number::Float(_) => None,
        }
    }
    fn as_f64(&self) -> Option<f64> {
        Some(match *self {
            Number::PosInt(u) => u as f64,
            Number::NegInt(i) => i as f64,
            Number::Float(f) => f,
        })
    }
    fn as_str(&self) -> Cow<'_, str> {
        Cow::Owned(self.to_serde().to_string())
    }
    fn to_number(&self) -> Cow<'_, serde_json::Number> {
        Cow::Owned(self.to_serde())
    }
    fn is_integer(&self) -> bool {
        match *self {
            Number::Float(f) => f.is_finite() && f.fract() == 0.0,
            _ => true,
        }
    }
    fn is_written_as_integer(&self) -> bool {
        !matches!(self, Number::Float(_))
    }
}

type Members<'a> = &'a [(Cow<'a, str>, Node<'a>)];

impl<'a> JsonNode<'a, Borrowed> for &'a Node<'a> {
    type Object = Members<'a>;
    type Array = &'a [Node<'a>];
    type Number = Number;

    fn as_object(&self) -> Option<Members<'a>> {
        match self {
            Node::Object(m) => Some(m),
            _ => None,
        }
    }
    fn as_array(&self) -> Option<&'a [Node<'a>]> {
        match self {
            Node::Array(a) => Some(a),
            _ => None,
        }
    }
    fn as_string(&self) -> Option<Cow<'a, str>> {
        match self {
            Node::String(s) => Some(Cow::Borrowed(s.as_ref())),
            _ => None,
        }
    }
    fn as_number(&self) -> Option<Number> {
        match self {
            Node::Number(n) => Some(*n),
            _ => None,
        }
    }
    fn as_boolean(&self) -> Option<bool> {
        match self {
            Node::Bool(b) => Some(*b),
            _ => None,
        }
    }
    fn is_null(&self) -> bool {
        matches!(self, Node::Null)
    }
    fn json_type(&self) -> JsonType {
        match self {
            Node::Null => JsonType::Null,
            Node::Bool(_) => JsonType::Boolean,
            Node::Number(_) => JsonType::Number,
            Node::String(_) => JsonType::String,
            Node::Array(_) => JsonType::Array,
            Node::Object(_) => JsonType::Object,
        }
    }
    fn equals_value(&self, expected: &Value) -> bool {
        match (self, expected) {
            (Node::String(s), Value::String(e)) => s == e,
            (Node::String(_), _) => false,
            (Node::Bool(b), Value::Bool(e)) => b == e,
            (Node::Null, Value::Null) => true,
            _ => jsonschema::json::cmp::equal(&self.to_value(), expected),
        }
    }
    fn to_value(&self) -> Cow<'a, Value> {
        Cow::Owned(Node::to_value(self))
    }
    fn identity(&self) -> Option<NodeIdentity> {
        Some(NodeIdentity::new(std::ptr::from_ref::<Node<'a>>(*self) as usize))
    }
}

/// Member iterator of a [`Node::Object`].
pub struct MembersIter<'a>(std::slice::Iter<'a, (Cow<'a, str>, Node<'a>)>);

impl<'a> Iterator for MembersIter<'a> {
    type Item = (&'a str, &'a Node<'a>);
    fn next(&mut self) -> Option<Self::Item> {
        self.0.next().map(|(k, v)| (k.as_ref(), v))
    }
}

impl<'a> Object<'a, Borrowed> for Members<'a> {
    type Node = &'a Node<'a>;
    type MemberName = &'a str;
    type MembersIter = MembersIter<'a>;

    fn len(&self) -> usize {
        <[_]>::len(self)
    }
    fn get(&self, key: &Box<str>) -> Option<&'a Node<'a>> {
        self.iter().find(|(k, _)| k.as_ref() == key.as_ref()).map(|(_, v)| v)
    }
    fn members(&self) -> MembersIter<'a> {
        MembersIter(self.iter())
    }
}

impl<'a> Array<'a, Borrowed> for &'a [Node<'a>] {
    type Node = &'a Node<'a>;
    type ElementsIter = std::slice::Iter<'a, Node<'a>>;

    fn len(&self) -> usize {
        <[_]>::len(self)
    }
    fn elements(&self) -> Self::ElementsIter {
        self.iter()
    }
}
