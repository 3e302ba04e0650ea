//! Writes the tokens: the original function, a same-named marker type that implements
//! `TypedTool`, the generated input struct, and the `inventory` registration.
//!
//! Generated code names the runtime only through the versioned path `facade` resolves.

use proc_macro2::TokenStream;
use quote::{format_ident, quote, quote_spanned, ToTokens};
use syn::spanned::Spanned;
use syn::{ItemFn, Path, Type};

use crate::ast::{self, Input, Output, Param, ToolFn};
use crate::attr::{self, Approval, ToolAttrs, Transforms};
use crate::ctxt::Ctxt;
use crate::facade;
use crate::valid::{self, Names};

/// Entry point: parse → validate → expand. On error, the function is re-emitted unchanged
/// (minus tool-only attributes) beside the errors, so one mistake does not cascade.
pub fn tool(args: TokenStream, item: TokenStream) -> TokenStream {
    let item: ItemFn = match syn::parse2(item.clone()) {
        Ok(f) => f,
        Err(e) => {
            let mut out = e.to_compile_error();
            out.extend(item);
            return out;
        }
    };
    let mut cx = Ctxt::new();
    let attrs = attr::parse(&mut cx, args);
    let f = ast::parse(&mut cx, item);
    let names = valid::check(&mut cx, &attrs, &f);
    match cx.check() {
        Ok(()) => expand(&attrs, &f, &names),
        Err(e) => {
            let mut out = e.to_compile_error();
            f.item.to_tokens(&mut out);
            out
        }
    }
}

fn opt<T: ToTokens>(v: &Option<T>, pr: &TokenStream) -> TokenStream {
    match v {
        Some(v) => quote!(#pr::Option::Some(#v)),
        None => quote!(#pr::Option::None),
    }
}

fn opt_lit_int(v: &Option<syn::LitInt>, pr: &TokenStream) -> TokenStream {
    match v {
        Some(v) => quote!(#pr::Option::Some(#v)),
        None => quote!(#pr::Option::None),
    }
}

fn expand(attrs: &ToolAttrs, f: &ToolFn, names: &Names) -> TokenStream {
    let pr = facade::private();
    let item = &f.item;
    let vis = &item.vis;
    let name = &item.sig.ident;
    let serde_crate = format!("{}::serde", pr.to_string().replace(' ', ""));
    let schemars_crate = format!("{}::schemars", pr.to_string().replace(' ', ""));

    // Input type and its destructuring.
    let (input_struct, input_ty, destructure, field_args, input_schema_override) = match &f.input {
        Input::Empty => (
            quote! {
                #[derive(#pr::serde::Deserialize, #pr::serde::Serialize, #pr::schemars::JsonSchema)]
                #[serde(crate = #serde_crate, deny_unknown_fields)]
                #[schemars(crate = #schemars_crate)]
                #[doc(hidden)]
                #vis struct __ToolInput {}
            },
            quote!(__ToolInput),
            quote!(let _ = __toolsmith_input;),
            Vec::new(),
            quote! {
                fn input_schema() -> #pr::serde_json::Value { #pr::empty_object_schema() }
            },
        ),
        Input::Whole(ty) => (
            TokenStream::new(),
            ty.to_token_stream(),
            TokenStream::new(),
            Vec::new(),
            TokenStream::new(),
        ),
        Input::Fields(fields) => {
            let defs = fields.iter().map(|fl| {
                let (id, ty, docs) = (&fl.ident, &fl.ty, &fl.docs);
                // Examples serialise absent optional parameters as absent, not `null`.
                let skip = ast::is_option(ty).then(|| quote!(#[serde(skip_serializing_if = "Option::is_none")]));
                quote_spanned!(ty.span()=> #(#docs)* #skip pub #id: #ty)
            });
            let binds: Vec<_> = (0..fields.len()).map(|i| format_ident!("__p{}", i)).collect();
            let ids = fields.iter().map(|fl| &fl.ident);
            (
                quote! {
                    #[derive(#pr::serde::Deserialize, #pr::serde::Serialize, #pr::schemars::JsonSchema)]
                    #[serde(crate = #serde_crate)]
                    #[schemars(crate = #schemars_crate)]
                    #[doc(hidden)]
                    #vis struct __ToolInput { #(#defs,)* }
                },
                quote!(__ToolInput),
                quote!(let __ToolInput { #(#ids: #binds,)* } = __toolsmith_input;),
                binds,
                TokenStream::new(),
            )
        }
    };

    // The request-context type: `context = T`, else what the `#[ctx]` parameter's type says
    // (through a trait, so aliases work), else the untyped map.
    let ctx_param = f.params.iter().find_map(|p| match p {
        Param::Context(ty) => Some(ty),
        _ => None,
    });
    let context_ty = match (&attrs.context, ctx_param) {
        (Some(t), _) => quote_spanned!(t.span()=> #t),
        (None, Some(ty)) => quote_spanned!(ty.span()=> <#ty as #pr::ContextParam>::Context),
        (None, None) => quote!(#pr::RequestContext),
    };
    let payload_ty = |t: &Option<Type>| match t {
        Some(t) => quote_spanned!(t.span()=> #t),
        None => quote!(#pr::NoPayload),
    };
    let (suspend_ty, resume_ty) = (payload_ty(&attrs.suspend), payload_ty(&attrs.resume));

    // The call of the user's function, in parameter order.
    let args = f.params.iter().map(|p| match p {
        Param::Input => quote!(__toolsmith_input),
        Param::Field(i) => field_args[*i].to_token_stream(),
        Param::Context(ty) => quote_spanned!(ty.span()=> __toolsmith_cx),
    });
    let call = quote!(#name(#(#args),*).await);
    let (output_ty, body) = match &f.output {
        Output::Unit => (quote!(()), quote!({ #call; #pr::ok(()) })),
        Output::Plain(ty) => (quote_spanned!(ty.span()=> #ty), quote!(#pr::ok(#call))),
        Output::Result(ty) => {
            // The function's path and its argument carry the return type's span, so a wrong
            // error type is reported there rather than at `#[tool]`.
            let tool_result = respan(quote!(#pr::tool_result), ty.span());
            (
                quote_spanned!(ty.span()=> <#ty as #pr::IntoToolResult>::Output),
                quote_spanned!(ty.span()=> { let __result = #call; #tool_result(__result) }),
            )
        }
    };

    let id = &names.id;
    let description = &names.description;
    let title = opt(&attrs.title, &pr);
    let strict = attrs.strict.is_some();
    let approval = match attrs.require_approval.as_ref() {
        None => quote!(#pr::Option::None),
        Some(Approval::Always) => quote!(#pr::Option::Some(#pr::ApprovalRule::Always)),
        Some(Approval::Predicate(_)) => quote!(#pr::Option::Some(#pr::ApprovalRule::Predicate)),
    };
    let mcp = attrs.mcp.as_ref().map(|m| {
        let title = opt(&m.title.as_ref().map(|t| quote!(#pr::String::from(#t))), &pr);
        let (r, d, i, o) = (opt(&m.read_only_hint, &pr), opt(&m.destructive_hint, &pr), opt(&m.idempotent_hint, &pr), opt(&m.open_world_hint, &pr));
        let meta = opt(&m.meta.as_ref().map(|e| quote_spanned!(e.span()=> #pr::to_json(#e))), &pr);
        quote! { #pr::McpSpec { title: #title, read_only_hint: #r, destructive_hint: #d, idempotent_hint: #i, open_world_hint: #o, meta: #meta } }
    });
    let mcp = mcp.unwrap_or_else(|| quote!(#pr::Default::default()));
    let provider_options = attrs.provider_options.iter().flatten().map(|(k, e)| {
        let k = k.to_string();
        quote_spanned!(e.span()=> (#k, #pr::to_json(#e)))
    });
    let tags = attrs.tags.iter().flatten();
    let background = match &attrs.background {
        None => quote!(#pr::Option::None),
        Some(b) => {
            let enabled = b.enabled.as_ref().is_none_or(|l| l.value);
            let (t, r, w) = (
                opt_lit_int(&b.timeout_ms, &pr),
                opt_lit_int(&b.max_retries, &pr),
                opt_lit_int(&b.wait_timeout_ms, &pr),
            );
            quote!(#pr::Option::Some(#pr::BackgroundSpec { enabled: #enabled, timeout_ms: #t, max_retries: #r, wait_timeout_ms: #w }))
        }
    };
    let hooks = {
        let (s, d, a, o) = (
            attrs.on_input_start.is_some(),
            attrs.on_input_delta.is_some(),
            attrs.on_input_available.is_some(),
            attrs.on_output.is_some(),
        );
        quote!(#pr::HookSet { on_input_start: #s, on_input_delta: #d, on_input_available: #a, on_output: #o })
    };
    let transform_list = [("Display", &attrs.display), ("Transcript", &attrs.transcript)]
        .into_iter()
        .flat_map(|(target, t)| t.iter().flat_map(Transforms::entries).map(move |(phase, _)| (target, phase)))
        .map(|(target, phase)| {
            let target = format_ident!("{}", target);
            let phase = format_ident!("{}", heck::ToUpperCamelCase::to_upper_camel_case(phase));
            quote!((#pr::TransformTarget::#target, #pr::TransformPhase::#phase))
        });
    let has_model_output = attrs.to_model_output.is_some();
    let (has_suspend, has_resume) = (attrs.suspend.is_some(), attrs.resume.is_some());
    let input_type_name = match &f.input {
        Input::Whole(ty) => ty.to_token_stream().to_string(),
        _ => format!("{name} parameters"),
    };

    let to_model_output = attrs.to_model_output.as_ref().map(|p| {
        let call = typed_call(p, quote!(fn(&Self::Output) -> _), quote!(__toolsmith_output));
        quote! {
            fn to_model_output(__toolsmith_output: &Self::Output) -> #pr::Option<#pr::ModelOutput> { #pr::model_output(#call) }
        }
    });
    let approval_fn = match attrs.require_approval.as_ref() {
        Some(Approval::Predicate(p)) => {
            let call = typed_call(
                p,
                quote!(fn(&Self::Input, &Self::Context) -> _),
                quote!(__toolsmith_input, __toolsmith_context),
            );
            quote! {
                fn approval(__toolsmith_input: &Self::Input, __toolsmith_context: &Self::Context) -> #pr::Result<bool, #pr::String> { #pr::approval(#call) }
            }
        }
        _ => TokenStream::new(),
    };
    let transform_fn = transform_fn(attrs, &pr);
    let hook = |p: &Option<Path>, sig: TokenStream, fn_ty: TokenStream, args: TokenStream| {
        p.as_ref().map(|p| {
            let call = typed_call(p, fn_ty, args);
            quote!(#sig -> #pr::Result<(), #pr::String> { #pr::hook(#call) })
        })
    };
    let hooks_fns = [
        hook(
            &attrs.on_input_start,
            quote!(fn on_input_start(__toolsmith_call: &#pr::ToolCallInfo)),
            quote!(fn(&#pr::ToolCallInfo) -> _),
            quote!(__toolsmith_call),
        ),
        hook(
            &attrs.on_input_delta,
            quote!(fn on_input_delta(__toolsmith_call: &#pr::ToolCallInfo, __toolsmith_delta: &str)),
            quote!(fn(&#pr::ToolCallInfo, &str) -> _),
            quote!(__toolsmith_call, __toolsmith_delta),
        ),
        hook(
            &attrs.on_input_available,
            quote!(fn on_input_available(__toolsmith_call: &#pr::ToolCallInfo, __toolsmith_input: &Self::Input)),
            quote!(fn(&#pr::ToolCallInfo, &Self::Input) -> _),
            quote!(__toolsmith_call, __toolsmith_input),
        ),
        hook(
            &attrs.on_output,
            quote!(fn on_output(__toolsmith_call: &#pr::ToolCallInfo, __toolsmith_output: &Self::Output)),
            quote!(fn(&#pr::ToolCallInfo, &Self::Output) -> _),
            quote!(__toolsmith_call, __toolsmith_output),
        ),
    ];
    let examples = attrs.input_examples.as_ref().map(|ex| {
        let elems = ex
            .iter()
            .map(|e| quote_spanned!(e.span()=> { let __example: #input_ty = #e; __example }));
        quote! {
            fn input_examples() -> #pr::Vec<#pr::serde_json::Value> { #pr::examples::<Self::Input>(#pr::vec![#(#elems),*]) }
        }
    });
    let schema_asserts = [&attrs.suspend, &attrs.resume, &attrs.context]
        .into_iter()
        .flatten()
        .map(|t| quote_spanned!(t.span()=> #pr::assert_schema::<#t>();));
    let marker_doc = format!("The `#[tool]` definition of [`{name}()`]: `{name}::tool()` is the registered tool `{id}`.");

    quote! {
        #item

        #[allow(non_camel_case_types)]
        #[doc = #marker_doc]
        #vis struct #name {}

        const _: () = {
            #input_struct

            const _: () = { #(#schema_asserts)* };

            impl #pr::TypedTool for #name {
                type Input = #input_ty;
                type Output = #output_ty;
                type Context = #context_ty;
                type Suspend = #suspend_ty;
                type Resume = #resume_ty;

                fn meta() -> #pr::ToolMeta {
                    #pr::ToolMeta {
                        id: #id,
                        description: #description,
                        title: #title,
                        strict: #strict,
                        require_approval: #approval,
                        mcp: #mcp,
                        provider_options: #pr::vec![#(#provider_options),*],
                        tags: &[#(#tags),*],
                        background: #background,
                        hooks: #hooks,
                        transforms: #pr::vec![#(#transform_list),*],
                        has_model_output: #has_model_output,
                        has_suspend: #has_suspend,
                        has_resume: #has_resume,
                        input_type: #input_type_name,
                        source: #pr::SourceLocation {
                            crate_name: #pr::String::from(#pr::env!("CARGO_PKG_NAME")),
                            module_path: #pr::String::from(#pr::module_path!()),
                            file: #pr::String::from(#pr::file!()),
                            line: #pr::line!(),
                        },
                    }
                }

                #input_schema_override
                #examples

                fn execute(__toolsmith_input: Self::Input, __toolsmith_cx: #pr::ToolContext<Self::Context>) -> impl #pr::Future<Output = #pr::Result<Self::Output, #pr::ToolError>> + #pr::Send + 'static {
                    let _ = &__toolsmith_cx;
                    async move {
                        #destructure
                        #body
                    }
                }

                #to_model_output
                #approval_fn
                #transform_fn
                #(#hooks_fns)*
            }

            impl #name {
                /// The registered tool (spec and schemas built once per process).
                #vis fn tool() -> #pr::Result<#pr::Arc<dyn #pr::Tool>, #pr::SchemaError> {
                    static TOOL: #pr::OnceLock<#pr::Result<#pr::Arc<dyn #pr::Tool>, #pr::SchemaError>> = #pr::OnceLock::new();
                    TOOL.get_or_init(<#name as #pr::TypedTool>::into_tool).clone()
                }
            }

            #pr::inventory::submit! {
                #pr::ToolDef {
                    id: #id,
                    crate_name: #pr::env!("CARGO_PKG_NAME"),
                    module_path: #pr::module_path!(),
                    file: #pr::file!(),
                    line: #pr::line!(),
                    build: #name::tool,
                }
            }
        };
    }
}

/// `tokens` with every token given `span`.
fn respan(tokens: TokenStream, span: proc_macro2::Span) -> TokenStream {
    tokens
        .into_iter()
        .map(|mut tt| {
            if let proc_macro2::TokenTree::Group(g) = &tt {
                let mut group = proc_macro2::Group::new(g.delimiter(), respan(g.stream(), span));
                group.set_span(span);
                tt = proc_macro2::TokenTree::Group(group);
            } else {
                tt.set_span(span);
            }
            tt
        })
        .collect()
}

/// Calls the user function `path` through a fn pointer of the type the attribute expects
/// (`fn_ty`, e.g. `fn(&Self::Output) -> _`), all spanned at the path: a function of the wrong
/// shape is reported there as "expected fn pointer `fn(&Weather) -> _`, found fn item ...",
/// which names the signature to write.
fn typed_call(path: &Path, fn_ty: TokenStream, args: TokenStream) -> TokenStream {
    quote_spanned!(path.span()=> { let __f: #fn_ty = #path; __f(#args) })
}

fn transform_fn(attrs: &ToolAttrs, pr: &TokenStream) -> TokenStream {
    let mut arms = Vec::new();
    for (target, t) in [("Display", &attrs.display), ("Transcript", &attrs.transcript)] {
        let Some(t) = t else { continue };
        let target = format_ident!("{}", target);
        for (phase, path) in t.entries() {
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
        fn transform(__toolsmith_target: #pr::TransformTarget, _phase: #pr::TransformPhase, __toolsmith_value: #pr::Payload<'_, Self>) -> #pr::Option<#pr::Result<#pr::serde_json::Value, #pr::String>> {
            #[allow(unreachable_patterns)]
            match (__toolsmith_target, __toolsmith_value) {
                #(#arms)*
                _ => #pr::Option::None,
            }
        }
    }
}
