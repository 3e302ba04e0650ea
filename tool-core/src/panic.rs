//! Panics in user code: caught, and turned into text a model or a log can read.
//!
//! Owns [`catch_panic`] (run a synchronous user function — a hook, predicate or transform —
//! turning a panic into `Err`) and [`panic_message`]. The async path (a tool's future) catches
//! its panics in `call`; both word the panic through [`panic_message`]. Imports nothing of the
//! crate but the error type.

use std::any::Any;
use std::panic::AssertUnwindSafe;

/// The text of a caught panic payload.
pub(crate) fn panic_message(payload: &(dyn Any + Send)) -> String {
    payload
        .downcast_ref::<&str>()
        .map(|s| (*s).to_owned())
        .or_else(|| payload.downcast_ref::<String>().cloned())
        .unwrap_or_else(|| "a non-text panic payload".to_owned())
}

/// Runs a synchronous user function (hook, predicate, transform), turning a panic into `Err`.
pub(crate) fn catch_panic<R>(f: impl FnOnce() -> R) -> Result<R, String> {
    std::panic::catch_unwind(AssertUnwindSafe(f)).map_err(|p| format!("panicked: {}", panic_message(&*p)))
}

/// Runs a synchronous user function that may fail with a [`ToolError`](crate::ToolError), a
/// panic becoming one of kind `panic` (worded as [`catch_panic`] words it).
pub(crate) fn guarded<R>(f: impl FnOnce() -> Result<R, crate::ToolError>) -> Result<R, crate::ToolError> {
    catch_panic(f).unwrap_or_else(|message| Err(crate::ToolError::with_kind(crate::ErrorKind::Panic, message)))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn panics_become_text() {
        assert_eq!(catch_panic(|| 3), Ok(3));
        assert_eq!(catch_panic(|| -> u8 { panic!("boom") }), Err("panicked: boom".to_owned()));
        let owned = String::from("owned");
        assert_eq!(catch_panic(move || -> u8 { panic!("{owned}") }), Err("panicked: owned".to_owned()));
        let err = catch_panic(|| std::panic::panic_any(7u8)).unwrap_err();
        assert_eq!(err, "panicked: a non-text panic payload");
    }

    #[test]
    fn guarded_panics_are_errors_of_kind_panic() {
        let e = guarded(|| -> Result<u8, crate::ToolError> { panic!("boom") }).unwrap_err();
        assert_eq!((e.kind(), e.message()), (crate::ErrorKind::Panic, "panicked: boom"));
        let own = guarded(|| -> Result<u8, crate::ToolError> { Err(crate::ToolError::new("no")) }).unwrap_err();
        assert_eq!((own.kind(), own.message()), (crate::ErrorKind::Execution, "no"));
        assert_eq!(guarded(|| Ok(3)).unwrap(), 3);
    }
}
