//! The request-context type and how the `#[ctx]` parameter receives the call's context.
//!
//! `context = T` names the type; otherwise the `#[ctx]` parameter's type says it, asked of the
//! type itself (`Probe::<P>::IS_CONTEXT`, so an alias works): a `ToolContext<C>` gives `C`.
//! Any other parameter type is one error at that type, and `Shape<false>` keeps the rest of the
//! expansion quiet.

use proc_macro2::TokenStream;
use quote::{quote, quote_spanned};
use syn::Type;
use syn::spanned::Spanned;

use super::{Tool, respan};
use crate::ast::{self, Param};

/// The context side of the expansion.
pub struct Context {
    /// The probe's answer and the check on it, beside the impl.
    pub items: TokenStream,
    /// The `Context` type.
    pub ty: TokenStream,
    /// The argument for `Param::Context`.
    pub arg: TokenStream,
}

impl Context {
    pub fn new(t: &Tool) -> Context {
        let pr = &t.pr;
        let param = t.f.params.iter().find_map(|p| match p {
            Param::Context(ty) => Some(&**ty),
            _ => None,
        });
        let Some(param) = param else {
            let ty = match &t.attrs.context {
                Some(ty) => quote_spanned!(ty.span()=> #ty),
                None => quote!(#pr::RequestContext),
            };
            return Context {
                items: TokenStream::new(),
                ty,
                arg: TokenStream::new(),
            };
        };
        let span = param.span();
        let shape = quote_spanned!(span=> <#pr::Shape<{ __TOOLSMITH_CONTEXT }> as #pr::ContextParam<#param>>);
        let (ty, arg) = match &t.attrs.context {
            // The parameter must then be a `ToolContext<T>`: passed as is, a different one is
            // reported against the function's own signature.
            Some(ty) => (quote_spanned!(ty.span()=> #ty), quote_spanned!(span=> __toolsmith_cx)),
            None => (
                quote_spanned!(span=> #shape::Context),
                quote_spanned!(span=> #shape::param(__toolsmith_cx)),
            ),
        };
        Context {
            items: check(t, param),
            ty,
            arg,
        }
    }
}

/// `__TOOLSMITH_CONTEXT`, and a constant that fails to evaluate, at the parameter's type, when
/// it is not a `ToolContext`.
fn check(t: &Tool, param: &Type) -> TokenStream {
    let pr = &t.pr;
    let found = ast::type_text(param).replace('{', "{{").replace('}', "}}");
    let message = format!(
        "the `#[ctx]` parameter must be a `ToolContext`, found `{found}`: write `#[ctx] cx: ToolContext` (the untyped request context) or `#[ctx] cx: ToolContext<MyContext>`"
    );
    let probe = quote_spanned!(param.span()=> const __TOOLSMITH_CONTEXT: bool = #pr::Probe::<#param>::IS_CONTEXT;);
    let assert = respan(quote!(const _: () = #pr::assert!(__TOOLSMITH_CONTEXT, #message);), param.span());
    quote!(#probe #assert)
}
