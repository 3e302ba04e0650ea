//! `TypedTool::meta`: the id, description and every option of the attribute, as data.

use proc_macro2::TokenStream;
use quote::{format_ident, quote, quote_spanned};
use syn::LitInt;
use syn::spanned::Spanned;

use super::{Tool, opt};
use crate::attr::{Approval, Transforms};
use crate::valid::Names;

/// `fn meta()`; `input_type` is the input's name for messages and `plain_input` whether it
/// decodes exactly what its schema accepts (expressions).
pub fn expand(t: &Tool, names: &Names, input_type: &TokenStream, plain_input: &TokenStream) -> TokenStream {
    let (pr, attrs) = (&t.pr, t.attrs);
    let (id, description) = (&names.id, &names.description);
    let title = opt(&attrs.title, pr);
    let strict = attrs.strict.is_some();
    let blocking = attrs.blocking.is_some();
    let isolate = match &attrs.isolate {
        Some(_) => quote!(#pr::Isolation::Process),
        None => quote!(#pr::Isolation::InProcess),
    };
    let approval = match &attrs.require_approval {
        None => quote!(#pr::ApprovalRule::Never),
        Some(Approval::Always) => quote!(#pr::ApprovalRule::Always),
        Some(Approval::Predicate(_)) => quote!(#pr::ApprovalRule::Predicate),
    };
    let (mcp, background, hooks, transforms) = (mcp(t), background(t), hooks(t), transforms(t));
    let provider_options = attrs.provider_options.iter().flatten().map(|(k, e)| {
        let k = k.to_string();
        quote_spanned!(e.span()=> (#k, #pr::to_json(#e)))
    });
    let tags = attrs.tags.iter().flatten();
    let scopes = attrs.scopes.iter().flatten();
    let has_model_output = attrs.to_model_output.is_some();
    let max_model_output = opt(&attrs.max_model_output.map(proc_macro2::Literal::u64_unsuffixed), pr);
    let idempotent = match attrs.idempotent {
        None => quote!(#pr::Option::None),
        Some((_, false)) => quote!(#pr::Option::Some(#pr::Idempotent::Fail)),
        Some((_, true)) => quote!(#pr::Option::Some(#pr::Idempotent::Recover)),
    };
    let (has_suspend, has_resume) = (attrs.suspend.is_some(), attrs.resume.is_some());
    let client_side = t.f.client_side.is_some();
    let defer_loading = attrs.defer_loading.is_some();
    let namespace = opt(&attrs.namespace.as_ref().map(|n| quote!(#pr::String::from(#n))), pr);
    let eager_input_streaming = opt(&attrs.eager_input_streaming.map(|_| quote!(true)), pr);
    let allowed_callers = attrs.allowed_callers.iter().flatten();
    let behavior = opt(
        &attrs.behavior.map(|nb| match nb {
            true => quote!(#pr::CallBehavior::NonBlocking),
            false => quote!(#pr::CallBehavior::Blocking),
        }),
        pr,
    );
    quote! {
        fn meta() -> #pr::ToolMeta {
            #pr::ToolMeta {
                id: #id,
                description: #description,
                title: #title,
                policy: #pr::Policy {
                    strict: #strict,
                    require_approval: #approval,
                    scopes: #pr::strings(&[#(#scopes),*]),
                    blocking: #blocking,
                    isolate: #isolate,
                    background: #background,
                    idempotent: #idempotent,
                    max_model_output: #max_model_output,
                },
                presentation: #pr::Presentation {
                    mcp: #mcp,
                    provider_options: #pr::options(#pr::vec![#(#provider_options),*]),
                    tags: #pr::strings(&[#(#tags),*]),
                    input_examples: #pr::Vec::new(),
                    defer_loading: #defer_loading,
                    namespace: #namespace,
                    eager_input_streaming: #eager_input_streaming,
                    allowed_callers: #pr::strings(&[#(#allowed_callers),*]),
                    behavior: #behavior,
                },
                behaviour: #pr::Behaviour {
                    hooks: #hooks,
                    transforms: #pr::vec![#(#transforms),*],
                    has_model_output: #has_model_output,
                    client_side: #client_side,
                },
                has_suspend: #has_suspend,
                has_resume: #has_resume,
                input_type: #input_type,
                plain_input: #plain_input,
                plain_output: #pr::Probe::<<Self as #pr::TypedTool>::Output>::ENCODES_PLAIN,
                source: #pr::SourceLocation {
                    crate_name: #pr::String::from(#pr::env!("CARGO_PKG_NAME")),
                    module_path: #pr::String::from(#pr::module_path!()),
                    file: #pr::String::from(#pr::file!()),
                    line: #pr::line!(),
                },
            }
        }
    }
}

/// `McpSpec`: only the hints the author set.
fn mcp(t: &Tool) -> TokenStream {
    let pr = &t.pr;
    let icons = t.attrs.icon.iter();
    let icons = quote!(#pr::vec![#(#pr::String::from(#icons)),*]);
    let Some(m) = &t.attrs.mcp else {
        if t.attrs.icon.is_none() {
            return quote!(#pr::Default::default());
        }
        return quote!(#pr::McpSpec { icons: #icons, ..#pr::Default::default() });
    };
    let title = opt(&m.title.as_ref().map(|t| quote!(#pr::String::from(#t))), pr);
    let (r, d) = (opt(&m.read_only_hint, pr), opt(&m.destructive_hint, pr));
    let (i, o) = (opt(&m.idempotent_hint, pr), opt(&m.open_world_hint, pr));
    let meta = opt(&m.meta.as_ref().map(|e| quote_spanned!(e.span()=> #pr::to_json(#e))), pr);
    let requires = m.requires.iter().flatten();
    quote! {
        #pr::McpSpec {
            title: #title, read_only_hint: #r, destructive_hint: #d, idempotent_hint: #i, open_world_hint: #o, meta: #meta,
            icons: #icons, requires: #pr::vec![#(#pr::String::from(#requires)),*],
        }
    }
}

/// `BackgroundSpec`, when `background` is set.
fn background(t: &Tool) -> TokenStream {
    let pr = &t.pr;
    let Some(b) = &t.attrs.background else {
        return quote!(#pr::Option::None);
    };
    let enabled = b.enabled.as_ref().is_none_or(|l| l.value);
    let required = b.required.is_some();
    let asks_first = b.asks_first.is_some();
    let int = |v: &Option<LitInt>| opt(v, pr);
    let (timeout, retries, wait) = (int(&b.timeout_ms), int(&b.max_retries), int(&b.wait_timeout_ms));
    quote! {
        #pr::Option::Some(#pr::BackgroundSpec { enabled: #enabled, required: #required, asks_first: #asks_first, timeout_ms: #timeout, max_retries: #retries, wait_timeout_ms: #wait })
    }
}

/// `HookSet`: which lifecycle hooks are set.
fn hooks(t: &Tool) -> TokenStream {
    let (pr, a) = (&t.pr, t.attrs);
    let (s, d) = (a.on_input_start.is_some(), a.on_input_delta.is_some());
    let (i, o) = (a.on_input_available.is_some(), a.on_output.is_some());
    quote!(#pr::HookSet { on_input_start: #s, on_input_delta: #d, on_input_available: #i, on_output: #o })
}

/// `(TransformTarget, TransformPhase)` for every configured transform.
fn transforms(t: &Tool) -> Vec<TokenStream> {
    let pr = &t.pr;
    [("Display", &t.attrs.display), ("Transcript", &t.attrs.transcript)]
        .into_iter()
        .flat_map(|(target, tr)| tr.iter().flat_map(Transforms::entries).map(move |(phase, _)| (target, phase)))
        .map(|(target, phase)| {
            let target = format_ident!("{}", target);
            let phase = format_ident!("{}", heck::ToUpperCamelCase::to_upper_camel_case(phase));
            quote!((#pr::TransformTarget::#target, #pr::TransformPhase::#phase))
        })
        .collect()
}
