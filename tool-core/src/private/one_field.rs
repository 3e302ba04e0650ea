//! The input types of tools with one plain parameter or none, written once here instead of
//! derived in every tool.
//!
//! `#[tool]` on `fn square(x: f64)` generates `struct __ToolInput<T> { pub x: T }` (its users
//! name it `InputOf<square>`, write `InputOf::<square> { x: 2.0 }` in examples and read
//! `input.x`), says what its field is through [`OneField`], and forwards `Deserialize`,
//! `Serialize` and `JsonSchema` to [`deserialize`], [`serialize`] and [`json_schema`]. A tool
//! without parameters takes [`NoParams`]. Both read, write and describe exactly what
//! `#[derive(Deserialize, Serialize, JsonSchema)]` on the generated struct did, named
//! `__ToolInput` as it was: unknown keys are ignored (refused by [`NoParams`]), a missing
//! `Option` is `None`, a repeated key is an error, an array of one value is accepted as serde
//! accepts it for any struct; an absent value ([`PlainValue::is_absent`]) is left out when
//! written; the field's doc comment is its `description` (a leading `# heading` its `title`),
//! its header its `x-mcp-header`, and it is `required` unless its type is an `Option`. Every
//! tool would otherwise expand and type-check three derives on each build, even those whose
//! parameter is a struct (then the generated struct is never used).

use std::borrow::Cow;
use std::fmt;
use std::marker::PhantomData;

use schemars::{JsonSchema, Schema, SchemaGenerator};
use serde::de::{self, DeserializeSeed, Deserializer, IgnoredAny, MapAccess, SeqAccess, Unexpected, Visitor};
use serde::ser::{SerializeStruct, Serializer};
use serde::{Deserialize, Serialize};

use super::PlainValue;

/// The name serde and schemars know a generated input by (its derives named it so).
const STRUCT_NAME: &str = "__ToolInput";

/// The struct `#[tool]` generates around a single plain parameter (`{"x": …}`).
pub trait OneField: Sized {
    /// The parameter's type.
    type Value;
    /// The parameter's name, the input's only key.
    const NAME: &'static str;
    /// The parameter's doc comment, its lines joined as schemars joins them (`""`: none).
    const DOCS: &'static str;
    /// Its `#[tool(header = "Name")]`.
    const HEADER: Option<&'static str>;
    /// The input holding `value`.
    fn from_value(value: Self::Value) -> Self;
    /// The parameter.
    fn value(&self) -> &Self::Value;
    /// The parameter, out of the input.
    fn into_value(self) -> Self::Value;
}

/// The keys a [`OneField`] input decodes: its one name.
struct Fields<F>(PhantomData<F>);

impl<F: OneField> Fields<F> {
    const NAMES: &'static [&'static str] = &[F::NAME];
}

/// Decodes a [`OneField`] input.
pub fn deserialize<'de, F, D>(deserializer: D) -> Result<F, D::Error>
where
    F: OneField,
    F::Value: Deserialize<'de>,
    D: Deserializer<'de>,
{
    deserializer.deserialize_struct(STRUCT_NAME, Fields::<F>::NAMES, OneFieldVisitor(PhantomData))
}

struct OneFieldVisitor<F>(PhantomData<F>);

impl<'de, F> Visitor<'de> for OneFieldVisitor<F>
where
    F: OneField,
    F::Value: Deserialize<'de>,
{
    type Value = F;

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("struct __ToolInput")
    }

    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<F, A::Error> {
        match seq.next_element()? {
            Some(value) => Ok(F::from_value(value)),
            None => Err(de::Error::invalid_length(0, &"struct __ToolInput with 1 element")),
        }
    }

    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<F, A::Error> {
        let mut value = None;
        while let Some(is_field) = map.next_key_seed(Key::<F>(PhantomData))? {
            if !is_field {
                map.next_value::<IgnoredAny>()?;
            } else if value.is_some() {
                return Err(de::Error::duplicate_field(F::NAME));
            } else {
                value = Some(map.next_value()?);
            }
        }
        match value {
            Some(value) => Ok(F::from_value(value)),
            None => F::Value::deserialize(MissingField(F::NAME, PhantomData)).map(F::from_value),
        }
    }
}

/// A key of a [`OneField`] input: `true` for its field, `false` for any other (ignored).
struct Key<F>(PhantomData<F>);

impl<'de, F: OneField> DeserializeSeed<'de> for Key<F> {
    type Value = bool;

    fn deserialize<D: Deserializer<'de>>(self, deserializer: D) -> Result<bool, D::Error> {
        deserializer.deserialize_identifier(self)
    }
}

impl<'de, F: OneField> Visitor<'de> for Key<F> {
    type Value = bool;

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("field identifier")
    }

    fn visit_u64<E: de::Error>(self, index: u64) -> Result<bool, E> {
        Ok(index == 0)
    }

    fn visit_str<E: de::Error>(self, key: &str) -> Result<bool, E> {
        Ok(key == F::NAME)
    }

    fn visit_bytes<E: de::Error>(self, key: &[u8]) -> Result<bool, E> {
        Ok(key == F::NAME.as_bytes())
    }
}

/// What decodes an absent field: `None` for an `Option`, "missing field" for anything else.
struct MissingField<E>(&'static str, PhantomData<E>);

impl<'de, E: de::Error> Deserializer<'de> for MissingField<E> {
    type Error = E;

    fn deserialize_any<V: Visitor<'de>>(self, _: V) -> Result<V::Value, E> {
        Err(E::missing_field(self.0))
    }

    fn deserialize_option<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value, E> {
        visitor.visit_none()
    }

    serde::forward_to_deserialize_any! {
        bool i8 i16 i32 i64 i128 u8 u16 u32 u64 u128 f32 f64 char str string
        bytes byte_buf unit unit_struct newtype_struct seq tuple
        tuple_struct map struct enum identifier ignored_any
    }
}

/// Encodes a [`OneField`] input, leaving an absent value out.
pub fn serialize<F, S>(input: &F, serializer: S) -> Result<S::Ok, S::Error>
where
    F: OneField,
    F::Value: Serialize + PlainValue,
    S: Serializer,
{
    let value = input.value();
    let absent = value.is_absent();
    let mut state = serializer.serialize_struct(STRUCT_NAME, usize::from(!absent))?;
    if absent {
        state.skip_field(F::NAME)?;
    } else {
        state.serialize_field(F::NAME, value)?;
    }
    state.end()
}

/// `JsonSchema::schema_name` of a generated input.
pub fn schema_name() -> Cow<'static, str> {
    Cow::Borrowed(STRUCT_NAME)
}

/// `JsonSchema::schema_id` of a [`OneField`] input of type `T`, generated in `module_path`.
pub fn schema_id<T: JsonSchema>(module_path: &str) -> Cow<'static, str> {
    Cow::Owned(format!("{module_path}::{STRUCT_NAME}<{}>", T::schema_id()))
}

/// The schema of a [`OneField`] input: an object of one property, required unless an `Option`
/// (always optional in a schema of what is written, as an absent value is left out).
pub fn json_schema<F>(generator: &mut SchemaGenerator) -> Schema
where
    F: OneField,
    F::Value: JsonSchema,
{
    #[allow(clippy::used_underscore_items)] // what schemars' derive asks of a field's type
    let optional = !generator.contract().is_deserialize() || F::Value::_schemars_private_is_option();
    let mut field = generator.subschema_for::<F::Value>();
    let (title, description) = title_and_description(F::DOCS);
    for (key, text) in [("title", title), ("description", description)] {
        if !text.is_empty() {
            field.insert(key.to_owned(), text.into());
        }
    }
    if let Some(header) = F::HEADER {
        field.insert("x-mcp-header".to_owned(), header.into());
    }
    let mut schema = schemars::json_schema!({ "type": "object" });
    let mut properties = serde_json::Map::new();
    properties.insert(F::NAME.to_owned(), field.into());
    schema.insert("properties".to_owned(), properties.into());
    if !optional {
        schema.insert("required".to_owned(), serde_json::json!([F::NAME]));
    }
    schema
}

/// A doc comment's title and description as schemars reads them: a first line starting with
/// `#` is the title, the rest the description; otherwise all of it is the description.
fn title_and_description(doc: &str) -> (&str, &str) {
    let doc = doc.trim_matches(|c: char| c.is_ascii_whitespace());
    if !doc.starts_with('#') {
        return ("", doc);
    }
    let end = doc.find('\n').unwrap_or(doc.len());
    let title = doc[..end].trim_start_matches('#').trim_matches(|c: char| c.is_ascii_whitespace());
    (title, doc[end..].trim_matches(|c: char| c.is_ascii_whitespace()))
}

/// The input of a tool without parameters: an empty object, extra keys refused.
///
/// ```
/// # use tool_core::__private_v0_1::NoParams;
/// let _: NoParams = serde_json::from_str("{}").unwrap();
/// assert!(serde_json::from_str::<NoParams>(r#"{"x": 1}"#).is_err());
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct NoParams {}

impl<'de> Deserialize<'de> for NoParams {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<NoParams, D::Error> {
        deserializer.deserialize_struct(STRUCT_NAME, &[], NoParamsVisitor)
    }
}

struct NoParamsVisitor;

impl<'de> Visitor<'de> for NoParamsVisitor {
    type Value = NoParams;

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("struct __ToolInput")
    }

    fn visit_seq<A: SeqAccess<'de>>(self, _: A) -> Result<NoParams, A::Error> {
        Ok(NoParams {})
    }

    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<NoParams, A::Error> {
        match map.next_key_seed(NoKey)? {
            Some(never) => match never {},
            None => Ok(NoParams {}),
        }
    }
}

/// A key of [`NoParams`]: every one is refused.
struct NoKey;

/// What a [`NoKey`] decodes to: nothing.
enum NoField {}

impl<'de> DeserializeSeed<'de> for NoKey {
    type Value = NoField;

    fn deserialize<D: Deserializer<'de>>(self, deserializer: D) -> Result<NoField, D::Error> {
        deserializer.deserialize_identifier(self)
    }
}

impl<'de> Visitor<'de> for NoKey {
    type Value = NoField;

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("field identifier")
    }

    fn visit_u64<E: de::Error>(self, index: u64) -> Result<NoField, E> {
        Err(E::invalid_value(Unexpected::Unsigned(index), &"field index 0 <= i < 0"))
    }

    fn visit_str<E: de::Error>(self, key: &str) -> Result<NoField, E> {
        Err(E::unknown_field(key, &[]))
    }

    fn visit_bytes<E: de::Error>(self, key: &[u8]) -> Result<NoField, E> {
        Err(E::unknown_field(&String::from_utf8_lossy(key), &[]))
    }
}

impl Serialize for NoParams {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        serializer.serialize_struct(STRUCT_NAME, 0)?.end()
    }
}

impl JsonSchema for NoParams {
    fn schema_name() -> Cow<'static, str> {
        schema_name()
    }

    fn schema_id() -> Cow<'static, str> {
        Cow::Borrowed("tool_core::NoParams")
    }

    fn json_schema(_: &mut SchemaGenerator) -> Schema {
        schemars::json_schema!({ "type": "object", "additionalProperties": false })
    }
}
