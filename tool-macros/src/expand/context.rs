//! The request-context type and how the `#[ctx]` parameter receives the call's context.
//!
//! `context = T` names the type; otherwise the `#[ctx]` parameter's type says it, asked of the
//! type itself (`Probe::<P>::IS_CONTEXT`, so an alias works): a `ToolContext<C>` gives `C`.
//! Any other parameter type is one error at that type, and `Shape<false>` keeps the rest of the
//! expansion quiet. The `suspend`/`resume` types are the attribute's (untyped `Value` where it
//! declares none); the parameter's `ToolContext<C, S, R>` must name the same, checked by trait
//! at its type, so `cx.suspend(…)` and `cx.resume_data()` are typed as the tool declares.

use proc_macro2::{Span, TokenStream};
use quote::{quote, quote_spanned};
use syn::Type;
use syn::spanned::Spanned;

use super::{Tool, respan};
use crate::ast::{self, Param};

/// The context side of the expansion.
pub struct Context {
    /// The probe's answer and the checks on it, beside the impl.
    pub items: TokenStream,
    /// The `Context` type.
    pub ty: TokenStream,
    /// The `Suspend` type: the declared one, or the untyped `NoPayload`.
    pub suspend: TokenStream,
    /// The `Resume` type: the declared one, or the untyped `NoPayload`.
    pub resume: TokenStream,
    /// The argument for `Param::Context`.
    pub arg: TokenStream,
}

impl Context {
    pub fn new(t: &Tool) -> Context {
        let pr = &t.pr;
        let payload = |ty: &Option<Type>| match ty {
            Some(ty) => quote_spanned!(ty.span()=> #ty),
            None => quote!(#pr::NoPayload),
        };
        let (suspend, resume) = (payload(&t.attrs.suspend), payload(&t.attrs.resume));
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
                suspend,
                resume,
                arg: TokenStream::new(),
            };
        };
        let span = param.span();
        let shape = quote_spanned!(span=> <#pr::Shape<{ __TOOLSMITH_CONTEXT }> as #pr::ContextParam<#param, #suspend, #resume>>);
        let (ty, arg) = match &t.attrs.context {
            // The parameter must then be a `ToolContext<T, ..>`: the call's context with the
            // payload types the parameter names (every type explicit, so that a different
            // request-context type is reported against the function's own signature, as
            // `ToolContext<T>`, and different payload types only by their checks).
            Some(ty) => (
                quote_spanned!(ty.span()=> #ty),
                respan(
                    quote!(#pr::context_param::<#ty, #suspend, #resume, __ToolsmithCtxSuspend, __ToolsmithCtxResume>(__toolsmith_cx)),
                    span,
                ),
            ),
            None => (
                quote_spanned!(span=> #shape::Context),
                quote_spanned!(span=> #shape::param(__toolsmith_cx)),
            ),
        };
        let mut items = check(t, param);
        items.extend(payload_checks(t, &shape, span));
        Context {
            items,
            ty,
            suspend,
            resume,
            arg,
        }
    }
}

/// The parameter's payload types (`__ToolsmithCtxSuspend`, `__ToolsmithCtxResume`) and that
/// they are the declared ones (`Value` where none is): one error each, at the parameter's
/// type, naming both.
fn payload_checks(t: &Tool, shape: &TokenStream, span: Span) -> TokenStream {
    let pr = &t.pr;
    let suspend = match &t.attrs.suspend {
        Some(ty) => quote_spanned!(span=> #pr::suspends_with::<__ToolsmithCtxSuspend, #ty>),
        None => quote_spanned!(span=> #pr::suspends_untyped::<__ToolsmithCtxSuspend>),
    };
    let resume = match &t.attrs.resume {
        Some(ty) => quote_spanned!(span=> #pr::resumes_with::<__ToolsmithCtxResume, #ty>),
        None => quote_spanned!(span=> #pr::resumes_untyped::<__ToolsmithCtxResume>),
    };
    quote_spanned! {span=>
        type __ToolsmithCtxSuspend = #shape::Suspend;
        type __ToolsmithCtxResume = #shape::Resume;
        const _: () = { #suspend(); #resume(); };
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
