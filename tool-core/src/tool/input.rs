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
    pub fn decode<T: DeserializeOwned>(self) -> Result<T, serde_json::Error> {
        match self {
            ToolInput::Text(t) | ToolInput::Decoded(t, _) => serde_json::from_str(t),
            ToolInput::Value(v) => T::deserialize(v),
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
