//! What a tool's `execute` receives as its validated input: [`ToolInput`] (the argument text,
//! a value, or the text with the tool's own input type already decoded from it) and
//! [`Decoded`], the value kept for the call's first run so arguments are decoded once.

use serde::de::DeserializeOwned;
use serde_json::Value;

/// Validated input handed to [`Tool::execute`](super::Tool::execute): the argument text itself (decoded straight into
/// the tool's input type) or a value (when it was given as one, or repaired).
#[derive(Debug, Clone, Copy)]
pub enum ToolInput<'a> {
    /// Valid JSON text.
    Text(&'a str),
    /// A valid value.
    Value(&'a Value),
    /// Valid JSON text, and the tool's own input type decoded from it while the call was
    /// validated ([`Hints::decode_input`](super::Hints::decode_input)): the first run takes it rather than decoding again.
    Decoded(&'a str, &'a Decoded),
}

impl ToolInput<'_> {
    /// Decodes into any deserialisable type.
    ///
    /// Always from text (a value is written as text first): a type decoded from one kind of
    /// deserializer is compiled once, where decoding a value directly would compile every
    /// input type's `Deserialize` a second time, for `serde_json::Value`'s deserializer (for a
    /// crate of tools, most of what an edit of one tool's body makes rustc compile again).
    pub fn decode<T: DeserializeOwned>(self) -> Result<T, serde_json::Error> {
        match self {
            ToolInput::Text(t) | ToolInput::Decoded(t, _) => serde_json::from_str(t),
            ToolInput::Value(v) => serde_json::from_str(&value_text(v)?),
        }
    }

    /// Decodes into `T`, taking the value decoded during validation when it is a `T` and no
    /// run has taken it yet (each later run decodes the text again).
    pub fn take<T: DeserializeOwned + 'static>(self) -> Result<T, serde_json::Error> {
        match self {
            ToolInput::Decoded(_, decoded) => match decoded.take::<T>() {
                Some(value) => Ok(value),
                None => self.decode(),
            },
            _ => self.decode(),
        }
    }
}

/// `value` as JSON text (not generic: compiled once).
pub(crate) fn value_text(value: &Value) -> Result<String, serde_json::Error> {
    serde_json::to_string(value)
}

/// A tool's input already decoded into its own type, kept for the call's first run: an
/// `Option<T>`, emptied by the run that takes it.
pub struct Decoded(std::sync::Mutex<Box<dyn std::any::Any + Send>>);

impl Decoded {
    /// Keeps `value` for the first run to take.
    pub fn new<T: Send + 'static>(value: T) -> Self {
        Decoded(std::sync::Mutex::new(Box::new(Some(value))))
    }

    /// The value, once, if it is a `T`.
    pub fn take<T: 'static>(&self) -> Option<T> {
        // Only the downcast is `T`'s: the lock is compiled once, not per type.
        let mut taken = None;
        self.with_slot(&mut |slot| taken = slot.downcast_mut::<Option<T>>().and_then(Option::take));
        taken
    }

    /// Runs `f` on the slot, locked.
    fn with_slot(&self, f: &mut dyn FnMut(&mut dyn std::any::Any)) {
        let mut slot = self.0.lock().unwrap_or_else(|p| p.into_inner());
        f(&mut **slot);
    }
}

impl std::fmt::Debug for Decoded {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("Decoded")
    }
}

#[cfg(test)]
mod tests {
    use std::cell::RefCell;

    use serde::Deserialize;
    use serde_json::json;

    use super::*;

    thread_local! {
        /// The deserializers a `Recorded` was decoded with, by type name.
        static SEEN: RefCell<Vec<&'static str>> = const { RefCell::new(Vec::new()) };
    }

    /// A value that records which deserializer decoded it.
    #[derive(Debug, PartialEq)]
    struct Recorded(Value);

    impl<'de> Deserialize<'de> for Recorded {
        fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
            SEEN.with(|seen| seen.borrow_mut().push(std::any::type_name::<D>()));
            Value::deserialize(d).map(Recorded)
        }
    }

    fn seen() -> Vec<&'static str> {
        SEEN.with(|seen| seen.take())
    }

    #[test]
    fn a_value_is_decoded_from_its_text_as_text_is() {
        let value = json!({"n": u64::MAX, "m": -3, "x": 1.5, "s": "é\"\n", "a": [null, true, {"k": []}]});
        let text = value.to_string();
        let from_value = ToolInput::Value(&value).decode::<Recorded>().unwrap();
        let from_text = ToolInput::Text(&text).decode::<Recorded>().unwrap();
        assert_eq!(from_value, Recorded(value.clone()));
        assert_eq!(from_text, from_value);
        // One kind of deserializer for both: an input type's `Deserialize` is compiled once.
        let seen = seen();
        assert_eq!(seen.len(), 2, "{seen:?}");
        assert_eq!(seen[0], seen[1], "a value took a deserializer of its own: {seen:?}");
        assert!(seen[0].contains("StrRead"), "{seen:?}");
    }

    #[test]
    fn a_value_that_does_not_decode_fails_as_its_text_does() {
        #[derive(Debug, Deserialize)]
        #[allow(dead_code)]
        struct In {
            n: u8,
        }
        let value = json!({"n": 300});
        let err = ToolInput::Value(&value).decode::<In>().unwrap_err();
        assert!(err.to_string().contains("300"), "{err}");
        let text = value.to_string();
        assert_eq!(err.to_string(), ToolInput::Text(&text).decode::<In>().unwrap_err().to_string());
        let decoded = Decoded::new(7_u32);
        assert_eq!(
            ToolInput::Decoded("5", &decoded).take::<u32>().unwrap(),
            7,
            "the first run takes the kept value"
        );
        assert_eq!(
            ToolInput::Decoded("5", &decoded).take::<u32>().unwrap(),
            5,
            "a later run decodes the text"
        );
    }
}
