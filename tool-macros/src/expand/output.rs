//! The tool's output type and how the function's return value becomes the tool's result.
//!
//! Whether the function can fail is a question about its return type `R`, answered by the
//! compiler: `Probe::<R>::IS_RESULT` is `true` for any `Result<T, E>`, however it is spelt (an
//! alias such as `io::Result<T>` or `type Outcome = Result<T, MyError>` included), and
//! `Shape<{IS_RESULT}>` splits `R` into the output `T` and the error `E`, or keeps `R` whole.

use proc_macro2::TokenStream;
use quote::{quote, quote_spanned};
use syn::spanned::Spanned;

use super::{Tool, respan};

/// The output side of the expansion.
pub struct Output {
    /// The probe's answer, beside the impl.
    pub items: TokenStream,
    /// The `Output` type.
    pub ty: TokenStream,
    /// The function turning what the function returned into the tool's result.
    pub finish: TokenStream,
}

impl Output {
    pub fn new(t: &Tool) -> Output {
        let (pr, ret) = (&t.pr, &t.f.output);
        let span = ret.span();
        let shape = quote!(#pr::Shape<{ __TOOLSMITH_RESULT }>);
        Output {
            items: quote_spanned!(span=> const __TOOLSMITH_RESULT: bool = #pr::Probe::<#ret>::IS_RESULT;),
            ty: quote_spanned!(span=> <#shape as #pr::Returned<#ret>>::Output),
            // Spanned at the return type, so a wrong error type is reported there rather than
            // at `#[tool]`.
            finish: respan(quote!(#pr::tool_result::<#shape, #ret>), span),
        }
    }
}
