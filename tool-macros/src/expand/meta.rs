//! `TypedTool::meta`: the id, description and every option of the attribute, as data.

use proc_macro2::TokenStream;
use quote::{ToTokens, format_ident, quote, quote_spanned};
use syn::LitInt;
use syn::spanned::Spanned;

use super::{Tool, opt};
use crate::attr::{Approval, Transforms};
use crate::valid::Names;

/// `fn meta()`; `input_type` is the input's name for messages and `plain_input` whether it
/// decodes exactly what its schema accepts (expressions). Only what differs from
/// `ToolMeta::default()` is written (the rest is `..Default::default()`): most tools set few
/// options, and each field written is code compiled again for every tool on every build.
pub fn expand(t: &Tool, names: &Names, input_type: &TokenStream, plain_input: &TokenStream) -> TokenStream {
    let (pr, attrs) = (&t.pr, t.attrs);
    let (id, description) = (&names.id, &names.description);
    // The fields `ToolMeta` has besides the six always written below.
    let mut top = Fields::of(6, pr);
    top.set(attrs.title.as_ref().map(|title| quote!(title: #pr::Option::Some(#title))));
    for (name, ty, fields) in [
        ("policy", "Policy", policy(t)),
        ("presentation", "Presentation", presentation(t)),
        ("behaviour", "Behaviour", behaviour(t)),
    ] {
        let (name, ty) = (format_ident!("{}", name), format_ident!("{}", ty));
        top.set((!fields.is_empty()).then(|| quote!(#name: #pr::#ty { #fields })));
    }
    top.set(attrs.suspend.is_some().then(|| quote!(has_suspend: true)));
    top.set(attrs.resume.is_some().then(|| quote!(has_resume: true)));
    quote! {
        fn meta() -> #pr::ToolMeta {
            #pr::ToolMeta {
                id: #id,
                description: #description,
                input_type: #input_type,
                plain_input: #plain_input,
                plain_output: #pr::Probe::<<Self as #pr::TypedTool>::Output>::ENCODES_PLAIN,
                source: #pr::source(#pr::env!("CARGO_PKG_NAME"), #pr::module_path!(), #pr::file!(), #pr::line!()),
                #top
            }
        }
    }
}

/// The fields of a struct literal that differ from the struct's default, and
/// `..Default::default()` for the rest when there is a rest.
struct Fields {
    set: Vec<TokenStream>,
    /// How many fields the struct has (of those this literal may leave out).
    of: usize,
    /// `Default::default()` through the private path.
    default: TokenStream,
}

impl Fields {
    fn of(of: usize, pr: &TokenStream) -> Self {
        Fields {
            set: Vec::new(),
            of,
            default: quote!(#pr::Default::default()),
        }
    }

    fn set(&mut self, field: Option<TokenStream>) {
        self.set.extend(field);
    }

    fn is_empty(&self) -> bool {
        self.set.is_empty()
    }
}

impl ToTokens for Fields {
    fn to_tokens(&self, tokens: &mut TokenStream) {
        let (set, default) = (&self.set, &self.default);
        tokens.extend(quote!(#(#set,)*));
        if set.len() < self.of {
            tokens.extend(quote!(..#default));
        }
    }
}

/// `Policy`'s fields that differ from its default.
fn policy(t: &Tool) -> Fields {
    let (pr, attrs) = (&t.pr, t.attrs);
    let mut f = Fields::of(8, pr);
    f.set(attrs.strict.is_some().then(|| quote!(strict: true)));
    f.set(attrs.require_approval.as_ref().map(|approval| match approval {
        Approval::Always => quote!(require_approval: #pr::ApprovalRule::Always),
        Approval::Predicate(_) => quote!(require_approval: #pr::ApprovalRule::Predicate),
    }));
    f.set(attrs.scopes.as_ref().map(|scopes| quote!(scopes: #pr::strings(&[#(#scopes),*]))));
    f.set(attrs.blocking.is_some().then(|| quote!(blocking: true)));
    f.set(attrs.isolate.is_some().then(|| quote!(isolate: #pr::Isolation::Process)));
    f.set(background(t).map(|background| quote!(background: #background)));
    f.set(attrs.idempotent.map(|(_, recover)| match recover {
        false => quote!(idempotent: #pr::Option::Some(#pr::Idempotent::Fail)),
        true => quote!(idempotent: #pr::Option::Some(#pr::Idempotent::Recover)),
    }));
    f.set(attrs.max_model_output.map(|max| {
        let max = proc_macro2::Literal::u64_unsuffixed(max);
        quote!(max_model_output: #pr::Option::Some(#max))
    }));
    f
}

/// `Presentation`'s fields that differ from its default.
fn presentation(t: &Tool) -> Fields {
    let (pr, attrs) = (&t.pr, t.attrs);
    // `input_examples` is never written (`TypedTool::input_examples` gives them).
    let mut f = Fields::of(10, pr);
    f.set(mcp(t).map(|mcp| quote!(mcp: #mcp)));
    f.set(attrs.provider_options.as_ref().map(|options| {
        let options = options.iter().map(|(k, e)| {
            let k = k.to_string();
            quote_spanned!(e.span()=> (#k, #pr::to_json(#e)))
        });
        quote!(provider_options: #pr::options(#pr::vec![#(#options),*]))
    }));
    f.set(attrs.tags.as_ref().map(|tags| quote!(tags: #pr::strings(&[#(#tags),*]))));
    f.set(attrs.defer_loading.is_some().then(|| quote!(defer_loading: true)));
    f.set(
        attrs
            .namespace
            .as_ref()
            .map(|n| quote!(namespace: #pr::Option::Some(#pr::String::from(#n)))),
    );
    f.set(
        attrs
            .eager_input_streaming
            .map(|_| quote!(eager_input_streaming: #pr::Option::Some(true))),
    );
    f.set(
        attrs
            .allowed_callers
            .as_ref()
            .map(|callers| quote!(allowed_callers: #pr::strings(&[#(#callers),*]))),
    );
    f.set(attrs.behavior.map(|nb| match nb {
        true => quote!(behavior: #pr::Option::Some(#pr::CallBehavior::NonBlocking)),
        false => quote!(behavior: #pr::Option::Some(#pr::CallBehavior::Blocking)),
    }));
    f
}

/// `Behaviour`'s fields that differ from its default.
fn behaviour(t: &Tool) -> Fields {
    let (pr, a) = (&t.pr, t.attrs);
    let mut f = Fields::of(4, pr);
    let hooks = [
        a.on_input_start.is_some(),
        a.on_input_delta.is_some(),
        a.on_input_available.is_some(),
        a.on_output.is_some(),
    ];
    f.set(hooks.contains(&true).then(|| {
        let [s, d, i, o] = hooks;
        quote!(hooks: #pr::HookSet { on_input_start: #s, on_input_delta: #d, on_input_available: #i, on_output: #o })
    }));
    let transforms = transforms(t);
    f.set((!transforms.is_empty()).then(|| quote!(transforms: #pr::vec![#(#transforms),*])));
    f.set(a.to_model_output.is_some().then(|| quote!(has_model_output: true)));
    f.set(t.f.client_side.is_some().then(|| quote!(client_side: true)));
    f
}

/// `McpSpec`: only the hints the author set (`None`: none, the default).
fn mcp(t: &Tool) -> Option<TokenStream> {
    let pr = &t.pr;
    let icons = t.attrs.icon.iter();
    let icons = quote!(#pr::vec![#(#pr::String::from(#icons)),*]);
    let Some(m) = &t.attrs.mcp else {
        t.attrs.icon.as_ref()?;
        return Some(quote!(#pr::McpSpec { icons: #icons, ..#pr::Default::default() }));
    };
    let title = opt(&m.title.as_ref().map(|t| quote!(#pr::String::from(#t))), pr);
    let (r, d) = (opt(&m.read_only_hint, pr), opt(&m.destructive_hint, pr));
    let (i, o) = (opt(&m.idempotent_hint, pr), opt(&m.open_world_hint, pr));
    let meta = opt(&m.meta.as_ref().map(|e| quote_spanned!(e.span()=> #pr::to_json(#e))), pr);
    let requires = m.requires.iter().flatten();
    Some(quote! {
        #pr::McpSpec {
            title: #title, read_only_hint: #r, destructive_hint: #d, idempotent_hint: #i, open_world_hint: #o, meta: #meta,
            icons: #icons, requires: #pr::vec![#(#pr::String::from(#requires)),*],
        }
    })
}

/// `Some(BackgroundSpec)`, when `background` is set.
fn background(t: &Tool) -> Option<TokenStream> {
    let pr = &t.pr;
    let b = t.attrs.background.as_ref()?;
    let enabled = b.enabled.as_ref().is_none_or(|l| l.value);
    let required = b.required.is_some();
    let asks_first = b.asks_first.is_some();
    let int = |v: &Option<LitInt>| opt(v, pr);
    let (timeout, retries, wait) = (int(&b.timeout_ms), int(&b.max_retries), int(&b.wait_timeout_ms));
    Some(quote! {
        #pr::Option::Some(#pr::BackgroundSpec { enabled: #enabled, required: #required, asks_first: #asks_first, timeout_ms: #timeout, max_retries: #retries, wait_timeout_ms: #wait })
    })
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
