//! A value's [`Node`] as `serde_json` writes it, built by serialising into the tree instead of
//! parsing `serde_json`'s text back: what the output check of a call validates.
//!
//! [`to_tree`] answers `None` wherever its tree could differ from [`Node::parse`] of
//! `serde_json::to_string` of the same value (a raw value, a map key it does not write the way
//! `serde_json` does, a repeated key, integers past 64 bits, nesting deeper than the parser
//! reads); the caller then parses the text as before. Where it answers, the trees are equal
//! (`tests/it/schema/output_tree.rs` holds it against `serde_json` for generated values of every shape).

use std::borrow::Cow;
use std::fmt;

use serde::ser::{self, Impossible, Serialize};

use super::unique::Seen;
use super::{Node, Number};

/// Nesting beyond which the text path decides (`serde_json`'s parser stops at 128).
const MAX_DEPTH: usize = 100;

/// The tree `serde_json` would write for `value`, or `None` where only its text can tell.
///
/// ```
/// use tool_core::json::{to_tree, Node};
/// let value = serde_json::json!({"city": "Oslo", "high": 21.5, "days": [1, 2]});
/// let text = serde_json::to_string(&value).unwrap();
/// assert_eq!(to_tree(&value), Some(Node::parse(&text).unwrap()));
/// assert_eq!(to_tree(&f64::NAN), Some(Node::Null)); // `serde_json` writes `null`
/// let raw = serde_json::value::RawValue::from_string("[1]".into()).unwrap();
/// assert_eq!(to_tree(&raw), None); // written verbatim: parse its text
/// ```
pub fn to_tree<T: Serialize + ?Sized>(value: &T) -> Option<Node<'static>> {
    value.serialize(Tree { depth: 0 }).ok()
}

/// The value has no tree here: the text decides.
#[derive(Debug)]
pub(crate) struct Unrepresented;

impl fmt::Display for Unrepresented {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("the value is checked from its text")
    }
}

impl std::error::Error for Unrepresented {}

impl ser::Error for Unrepresented {
    fn custom<T: fmt::Display>(_: T) -> Self {
        Unrepresented
    }
}

type Result<T> = std::result::Result<T, Unrepresented>;
type Key = Cow<'static, str>;

/// Serialises one value at `depth`.
#[derive(Clone, Copy)]
struct Tree {
    depth: usize,
}

impl Tree {
    fn inner(self) -> Result<Tree> {
        if self.depth >= MAX_DEPTH {
            return Err(Unrepresented);
        }
        Ok(Tree { depth: self.depth + 1 })
    }

    fn seq(self, len: Option<usize>, variant: Option<&'static str>) -> Result<Seq> {
        Ok(Seq {
            items: Vec::with_capacity(len.unwrap_or(0).min(4096)),
            inner: self.inner()?,
            variant,
        })
    }

    fn map(self, len: Option<usize>, variant: Option<&'static str>) -> Result<Map> {
        Ok(Map {
            members: Vec::with_capacity(len.unwrap_or(0).min(4096)),
            seen: Seen::new(),
            key: None,
            inner: self.inner()?,
            variant,
        })
    }
}

/// `{"variant": value}`, as `serde_json` writes an enum's non-unit variants.
fn tagged(variant: &'static str, value: Node<'static>) -> Node<'static> {
    Node::Object(vec![(Cow::Borrowed(variant), value)])
}

fn int(v: i64) -> Node<'static> {
    Node::Number(if v < 0 { Number::NegInt(v) } else { Number::PosInt(v as u64) })
}

impl ser::Serializer for Tree {
    type Ok = Node<'static>;
    type Error = Unrepresented;
    type SerializeSeq = Seq;
    type SerializeTuple = Seq;
    type SerializeTupleStruct = Seq;
    type SerializeTupleVariant = Seq;
    type SerializeMap = Map;
    type SerializeStruct = Map;
    type SerializeStructVariant = Map;

    fn serialize_bool(self, v: bool) -> Result<Node<'static>> {
        Ok(Node::Bool(v))
    }
    fn serialize_i8(self, v: i8) -> Result<Node<'static>> {
        Ok(int(v.into()))
    }
    fn serialize_i16(self, v: i16) -> Result<Node<'static>> {
        Ok(int(v.into()))
    }
    fn serialize_i32(self, v: i32) -> Result<Node<'static>> {
        Ok(int(v.into()))
    }
    fn serialize_i64(self, v: i64) -> Result<Node<'static>> {
        Ok(int(v))
    }
    fn serialize_i128(self, v: i128) -> Result<Node<'static>> {
        match (i64::try_from(v), u64::try_from(v)) {
            (Ok(v), _) => Ok(int(v)),
            (_, Ok(v)) => Ok(Node::Number(Number::PosInt(v))),
            _ => Err(Unrepresented),
        }
    }
    fn serialize_u8(self, v: u8) -> Result<Node<'static>> {
        Ok(Node::Number(Number::PosInt(v.into())))
    }
    fn serialize_u16(self, v: u16) -> Result<Node<'static>> {
        Ok(Node::Number(Number::PosInt(v.into())))
    }
    fn serialize_u32(self, v: u32) -> Result<Node<'static>> {
        Ok(Node::Number(Number::PosInt(v.into())))
    }
    fn serialize_u64(self, v: u64) -> Result<Node<'static>> {
        Ok(Node::Number(Number::PosInt(v)))
    }
    fn serialize_u128(self, v: u128) -> Result<Node<'static>> {
        u64::try_from(v).map(|v| Node::Number(Number::PosInt(v))).map_err(|_| Unrepresented)
    }
    fn serialize_f32(self, v: f32) -> Result<Node<'static>> {
        if !v.is_finite() {
            return Ok(Node::Null);
        }
        // `serde_json` writes an `f32`'s shortest digits, which read back as an `f64` that is
        // not `v as f64` (0.1f32 is written `0.1`): the number the text says.
        let text = serde_json::to_string(&v).map_err(|_| Unrepresented)?;
        text.parse().map(|f| Node::Number(Number::Float(f))).map_err(|_| Unrepresented)
    }
    fn serialize_f64(self, v: f64) -> Result<Node<'static>> {
        // `serde_json` writes a NaN or an infinity as `null`; a finite one reads back exactly.
        Ok(if v.is_finite() {
            Node::Number(Number::Float(v))
        } else {
            Node::Null
        })
    }
    fn serialize_char(self, v: char) -> Result<Node<'static>> {
        Ok(Node::String(Cow::Owned(v.to_string())))
    }
    fn serialize_str(self, v: &str) -> Result<Node<'static>> {
        Ok(Node::String(Cow::Owned(v.to_owned())))
    }
    fn serialize_bytes(self, v: &[u8]) -> Result<Node<'static>> {
        self.inner()?;
        Ok(Node::Array(v.iter().map(|&b| Node::Number(Number::PosInt(b.into()))).collect()))
    }
    fn serialize_none(self) -> Result<Node<'static>> {
        Ok(Node::Null)
    }
    fn serialize_some<T: Serialize + ?Sized>(self, value: &T) -> Result<Node<'static>> {
        value.serialize(self)
    }
    fn serialize_unit(self) -> Result<Node<'static>> {
        Ok(Node::Null)
    }
    fn serialize_unit_struct(self, _: &'static str) -> Result<Node<'static>> {
        Ok(Node::Null)
    }
    fn serialize_unit_variant(self, _: &'static str, _: u32, variant: &'static str) -> Result<Node<'static>> {
        Ok(Node::String(Cow::Borrowed(variant)))
    }
    fn serialize_newtype_struct<T: Serialize + ?Sized>(self, _: &'static str, value: &T) -> Result<Node<'static>> {
        value.serialize(self)
    }
    fn serialize_newtype_variant<T: Serialize + ?Sized>(
        self,
        _: &'static str,
        _: u32,
        variant: &'static str,
        value: &T,
    ) -> Result<Node<'static>> {
        Ok(tagged(variant, value.serialize(self.inner()?)?))
    }
    fn serialize_seq(self, len: Option<usize>) -> Result<Seq> {
        self.seq(len, None)
    }
    fn serialize_tuple(self, len: usize) -> Result<Seq> {
        self.seq(Some(len), None)
    }
    fn serialize_tuple_struct(self, _: &'static str, len: usize) -> Result<Seq> {
        self.seq(Some(len), None)
    }
    fn serialize_tuple_variant(self, _: &'static str, _: u32, variant: &'static str, len: usize) -> Result<Seq> {
        self.inner()?.seq(Some(len), Some(variant))
    }
    fn serialize_map(self, len: Option<usize>) -> Result<Map> {
        self.map(len, None)
    }
    fn serialize_struct(self, name: &'static str, len: usize) -> Result<Map> {
        // `serde_json`'s own types that write themselves verbatim (`RawValue`, an arbitrary-
        // precision `Number`) pass through a struct of this name: their text decides.
        if name.starts_with("$serde_json::private::") {
            return Err(Unrepresented);
        }
        self.map(Some(len), None)
    }
    fn serialize_struct_variant(self, _: &'static str, _: u32, variant: &'static str, len: usize) -> Result<Map> {
        self.inner()?.map(Some(len), Some(variant))
    }
}

/// An array being built (a tuple variant's, wrapped in its tag at the end).
struct Seq {
    items: Vec<Node<'static>>,
    inner: Tree,
    variant: Option<&'static str>,
}

impl Seq {
    fn push<T: Serialize + ?Sized>(&mut self, value: &T) -> Result<()> {
        self.items.push(value.serialize(self.inner)?);
        Ok(())
    }
    fn done(self) -> Result<Node<'static>> {
        let array = Node::Array(self.items);
        Ok(match self.variant {
            Some(variant) => tagged(variant, array),
            None => array,
        })
    }
}

macro_rules! seq_impls {
    ($($trait:ident :: $method:ident),*) => {$(
        impl ser::$trait for Seq {
            type Ok = Node<'static>;
            type Error = Unrepresented;
            fn $method<T: Serialize + ?Sized>(&mut self, value: &T) -> Result<()> {
                self.push(value)
            }
            fn end(self) -> Result<Node<'static>> {
                self.done()
            }
        }
    )*};
}

seq_impls!(
    SerializeSeq::serialize_element,
    SerializeTuple::serialize_element,
    SerializeTupleStruct::serialize_field,
    SerializeTupleVariant::serialize_field
);

/// An object being built (a struct variant's, wrapped in its tag at the end).
struct Map {
    members: Vec<(Key, Node<'static>)>,
    seen: Seen<'static>,
    key: Option<Key>,
    inner: Tree,
    variant: Option<&'static str>,
}

impl Map {
    fn member<T: Serialize + ?Sized>(&mut self, key: Key, value: &T) -> Result<()> {
        // The parser refuses a repeated key (a flattened map may repeat a field): the text decides.
        if self.seen.repeats(&key, self.members.iter().map(|(k, _)| k)) {
            return Err(Unrepresented);
        }
        let value = value.serialize(self.inner)?;
        self.members.push((key, value));
        Ok(())
    }
    fn done(self) -> Result<Node<'static>> {
        let object = Node::Object(self.members);
        Ok(match self.variant {
            Some(variant) => tagged(variant, object),
            None => object,
        })
    }
}

impl ser::SerializeMap for Map {
    type Ok = Node<'static>;
    type Error = Unrepresented;
    fn serialize_key<T: Serialize + ?Sized>(&mut self, key: &T) -> Result<()> {
        self.key = Some(key.serialize(KeyText)?);
        Ok(())
    }
    fn serialize_value<T: Serialize + ?Sized>(&mut self, value: &T) -> Result<()> {
        let key = self.key.take().ok_or(Unrepresented)?;
        self.member(key, value)
    }
    fn end(self) -> Result<Node<'static>> {
        self.done()
    }
}

macro_rules! field_impls {
    ($($trait:ident),*) => {$(
        impl ser::$trait for Map {
            type Ok = Node<'static>;
            type Error = Unrepresented;
            fn serialize_field<T: Serialize + ?Sized>(&mut self, key: &'static str, value: &T) -> Result<()> {
                self.member(Cow::Borrowed(key), value)
            }
            fn end(self) -> Result<Node<'static>> {
                self.done()
            }
        }
    )*};
}

field_impls!(SerializeStruct, SerializeStructVariant);

/// A map key as the text `serde_json` writes for it: strings, chars, integers (quoted), unit
/// variants and newtypes of those; anything else has no tree here.
struct KeyText;

/// An integer key: `serde_json` writes its decimal digits, quoted.
fn number_key(v: impl ToString) -> Result<Key> {
    Ok(Cow::Owned(v.to_string()))
}

impl ser::Serializer for KeyText {
    type Ok = Key;
    type Error = Unrepresented;
    type SerializeSeq = Impossible<Key, Unrepresented>;
    type SerializeTuple = Impossible<Key, Unrepresented>;
    type SerializeTupleStruct = Impossible<Key, Unrepresented>;
    type SerializeTupleVariant = Impossible<Key, Unrepresented>;
    type SerializeMap = Impossible<Key, Unrepresented>;
    type SerializeStruct = Impossible<Key, Unrepresented>;
    type SerializeStructVariant = Impossible<Key, Unrepresented>;

    fn serialize_str(self, v: &str) -> Result<Key> {
        Ok(Cow::Owned(v.to_owned()))
    }
    fn serialize_char(self, v: char) -> Result<Key> {
        Ok(Cow::Owned(v.to_string()))
    }
    fn serialize_unit_variant(self, _: &'static str, _: u32, variant: &'static str) -> Result<Key> {
        Ok(Cow::Borrowed(variant))
    }
    fn serialize_newtype_struct<T: Serialize + ?Sized>(self, _: &'static str, value: &T) -> Result<Key> {
        value.serialize(self)
    }
    fn serialize_i8(self, v: i8) -> Result<Key> {
        number_key(v)
    }
    fn serialize_i16(self, v: i16) -> Result<Key> {
        number_key(v)
    }
    fn serialize_i32(self, v: i32) -> Result<Key> {
        number_key(v)
    }
    fn serialize_i64(self, v: i64) -> Result<Key> {
        number_key(v)
    }
    fn serialize_i128(self, v: i128) -> Result<Key> {
        number_key(v)
    }
    fn serialize_u8(self, v: u8) -> Result<Key> {
        number_key(v)
    }
    fn serialize_u16(self, v: u16) -> Result<Key> {
        number_key(v)
    }
    fn serialize_u32(self, v: u32) -> Result<Key> {
        number_key(v)
    }
    fn serialize_u64(self, v: u64) -> Result<Key> {
        number_key(v)
    }
    fn serialize_u128(self, v: u128) -> Result<Key> {
        number_key(v)
    }
    // `serde_json` versions differ on these as keys: the text decides.
    fn serialize_bool(self, _: bool) -> Result<Key> {
        Err(Unrepresented)
    }
    fn serialize_f32(self, _: f32) -> Result<Key> {
        Err(Unrepresented)
    }
    fn serialize_f64(self, _: f64) -> Result<Key> {
        Err(Unrepresented)
    }
    fn serialize_bytes(self, _: &[u8]) -> Result<Key> {
        Err(Unrepresented)
    }
    fn serialize_none(self) -> Result<Key> {
        Err(Unrepresented)
    }
    fn serialize_some<T: Serialize + ?Sized>(self, _: &T) -> Result<Key> {
        Err(Unrepresented)
    }
    fn serialize_unit(self) -> Result<Key> {
        Err(Unrepresented)
    }
    fn serialize_unit_struct(self, _: &'static str) -> Result<Key> {
        Err(Unrepresented)
    }
    fn serialize_newtype_variant<T: Serialize + ?Sized>(self, _: &'static str, _: u32, _: &'static str, _: &T) -> Result<Key> {
        Err(Unrepresented)
    }
    fn serialize_seq(self, _: Option<usize>) -> Result<Self::SerializeSeq> {
        Err(Unrepresented)
    }
    fn serialize_tuple(self, _: usize) -> Result<Self::SerializeTuple> {
        Err(Unrepresented)
    }
    fn serialize_tuple_struct(self, _: &'static str, _: usize) -> Result<Self::SerializeTupleStruct> {
        Err(Unrepresented)
    }
    fn serialize_tuple_variant(self, _: &'static str, _: u32, _: &'static str, _: usize) -> Result<Self::SerializeTupleVariant> {
        Err(Unrepresented)
    }
    fn serialize_map(self, _: Option<usize>) -> Result<Self::SerializeMap> {
        Err(Unrepresented)
    }
    fn serialize_struct(self, _: &'static str, _: usize) -> Result<Self::SerializeStruct> {
        Err(Unrepresented)
    }
    fn serialize_struct_variant(self, _: &'static str, _: u32, _: &'static str, _: usize) -> Result<Self::SerializeStructVariant> {
        Err(Unrepresented)
    }
}
