//! The functions the attribute names (`to_model_output`, the approval predicate, transforms,
//! lifecycle hooks), each called through a fn pointer of the signature it must have.

use proc_macro2::TokenStream;
use quote::{format_ident, quote, quote_spanned};
use syn::Path;
use syn::spanned::Spanned;

use super::Tool;
use crate::attr::Approval;

/// The `TypedTool` methods that call the user's functions, and the `HAS_*` constants that
/// say which the tool has (each `false` keeps tool-core's code for that part out of the crate).
pub fn expand(t: &Tool) -> TokenStream {
    let (model_output, approval, transform) = (to_model_output(t), approval(t), transform(t));
    let hooks = hooks(t);
    let a = t.attrs;
    let has = [
        ("HAS_TRANSFORM", !transform.is_empty()),
        (
            "HAS_INPUT_HOOKS",
            a.on_input_start.is_some() || a.on_input_delta.is_some() || a.on_input_available.is_some(),
        ),
        ("HAS_ON_OUTPUT", a.on_output.is_some()),
        ("HAS_MODEL_OUTPUT", !model_output.is_empty()),
        ("HAS_APPROVAL", !approval.is_empty()),
        ("HAS_RESULT", t.f.client_side.is_some()),
    ];
    // Only the `false` ones: the trait's default is `true`.
    let lacks = has.into_iter().filter(|(_, has)| !has).map(|(name, _)| {
        let name = format_ident!("{}", name);
        quote!(const #name: bool = false;)
    });
    quote!(#(#lacks)* #model_output #approval #transform #hooks)
}

/// Calls the user function `path` through a fn pointer of the type the attribute expects
/// (`fn_ty`, e.g. `fn(&Self::Output) -> _`), all spanned at the path: a function of the wrong
/// shape is reported there as "expected fn pointer `fn(&Weather) -> _`, found fn item ...",
/// which names the signature to write.
fn typed_call(path: &Path, fn_ty: TokenStream, args: TokenStream) -> TokenStream {
    quote_spanned!(path.span()=> { let __f: #fn_ty = #path; __f(#args) })
}

fn to_model_output(t: &Tool) -> TokenStream {
    let pr = &t.pr;
    let Some(path) = &t.attrs.to_model_output else {
        return TokenStream::new();
    };
    let call = typed_call(path, quote!(fn(&Self::Output) -> _), quote!(__toolsmith_output));
    quote! {
        fn to_model_output(__toolsmith_output: &Self::Output) -> #pr::Option<#pr::ModelOutput> { #pr::model_output(#call) }
    }
}

fn approval(t: &Tool) -> TokenStream {
    let pr = &t.pr;
    let Some(Approval::Predicate(path)) = &t.attrs.require_approval else {
        return TokenStream::new();
    };
    let predicate = quote_spanned!(path.span()=> #pr::approval(#path, __toolsmith_input, __toolsmith_context, __toolsmith_caller));
    quote! {
        fn approval(
            __toolsmith_input: &Self::Input,
            __toolsmith_context: &Self::Context,
            __toolsmith_caller: #pr::Option<&#pr::Caller>,
        ) -> #pr::Result<bool, #pr::ToolError> {
            #predicate
        }
    }
}

/// `transform`: one arm per configured target and phase.
fn transform(t: &Tool) -> TokenStream {
    let pr = &t.pr;
    let mut arms = Vec::new();
    for (target, tr) in [("Display", &t.attrs.display), ("Transcript", &t.attrs.transcript)] {
        let Some(tr) = tr else { continue };
        let target = format_ident!("{}", target);
        for (phase, path) in tr.entries() {
            let variant = format_ident!("{}", heck::ToUpperCamelCase::to_upper_camel_case(phase));
            let arg_ty = match phase {
                "input" | "approval" => quote!(Self::Input),
                "input_delta" => quote!(str),
                "output" => quote!(Self::Output),
                "error" => quote!(#pr::ToolError),
                "suspend" => quote!(Self::Suspend),
                _ => quote!(Self::Resume),
            };
            let call = typed_call(path, quote!(fn(&#arg_ty) -> _), quote!(__toolsmith_payload));
            arms.push(quote!((#pr::TransformTarget::#target, #pr::Payload::#variant(__toolsmith_payload)) => #pr::transformed(#call),));
        }
    }
    if arms.is_empty() {
        return TokenStream::new();
    }
    quote! {
        fn transform(__toolsmith_target: #pr::TransformTarget, _phase: #pr::TransformPhase, __toolsmith_value: #pr::Payload<'_, Self>) -> #pr::Option<#pr::Result<#pr::serde_json::Value, #pr::ToolError>> {
            #[allow(unreachable_patterns)]
            match (__toolsmith_target, __toolsmith_value) {
                #(#arms)*
                _ => #pr::Option::None,
            }
        }
    }
}

/// `on_input_start`, `on_input_delta`, `on_input_available`, `on_output`.
fn hooks(t: &Tool) -> TokenStream {
    let (pr, a) = (&t.pr, t.attrs);
    let info = quote!(__toolsmith_call: &#pr::ToolCallInfo);
    let hooks = [
        (
            &a.on_input_start,
            quote!(on_input_start(#info)),
            quote!(fn(&#pr::ToolCallInfo) -> _),
            quote!(__toolsmith_call),
        ),
        (
            &a.on_input_delta,
            quote!(on_input_delta(#info, __toolsmith_delta: &str)),
            quote!(fn(&#pr::ToolCallInfo, &str) -> _),
            quote!(__toolsmith_call, __toolsmith_delta),
        ),
        (
            &a.on_input_available,
            quote!(on_input_available(#info, __toolsmith_input: &Self::Input)),
            quote!(fn(&#pr::ToolCallInfo, &Self::Input) -> _),
            quote!(__toolsmith_call, __toolsmith_input),
        ),
        (
            &a.on_output,
            quote!(on_output(#info, __toolsmith_output: &Self::Output)),
            quote!(fn(&#pr::ToolCallInfo, &Self::Output) -> _),
            quote!(__toolsmith_call, __toolsmith_output),
        ),
    ];
    hooks
        .into_iter()
        .filter_map(|(path, sig, fn_ty, args)| {
            let call = typed_call(path.as_ref()?, fn_ty, args);
            Some(quote!(fn #sig -> #pr::Result<(), #pr::ToolError> { #pr::hook(#call) }))
        })
        .collect()
}
