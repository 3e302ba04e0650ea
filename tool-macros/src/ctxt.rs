//! Collects every error with its span, reported together at the end.

use std::fmt::Display;

use quote::ToTokens;

/// Error collector. Consumed by [`Ctxt::check`]; dropping it unchecked is a bug.
#[derive(Default)]
pub struct Ctxt {
    errors: Option<Vec<syn::Error>>,
}

impl Ctxt {
    pub fn new() -> Self {
        Ctxt { errors: Some(Vec::new()) }
    }

    /// Records an error spanning `tokens`.
    pub fn error_spanned_by<T: ToTokens, M: Display>(&mut self, tokens: T, message: M) {
        self.syn_error(syn::Error::new_spanned(tokens, message));
    }

    /// Records a syn error.
    pub fn syn_error(&mut self, err: syn::Error) {
        if let Some(errors) = self.errors.as_mut() {
            errors.push(err);
        }
    }

    /// All errors, combined; `Ok` when there were none.
    pub fn check(mut self) -> Result<(), syn::Error> {
        let mut errors = self.errors.take().unwrap_or_default().into_iter();
        let Some(mut combined) = errors.next() else {
            return Ok(());
        };
        for e in errors {
            combined.combine(e);
        }
        Err(combined)
    }
}

impl Drop for Ctxt {
    fn drop(&mut self) {
        if self.errors.is_some() && !std::thread::panicking() {
            panic!("Ctxt dropped without check()");
        }
    }
}
