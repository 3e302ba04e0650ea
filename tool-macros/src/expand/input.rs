//! The tool's input type and how `execute` hands it to the function.
//!
//! A single unmarked parameter `p: T` is one field (`{"p": …}`) when `T` is a plain value and
//! the whole input otherwise. The macro cannot see what `T` is, so the generated code asks the
//! type: `Probe::<T>::IS_PLAIN` is a constant the compiler computes from `T`'s impls (an alias
//! answers like what it names), and `Shape<{IS_PLAIN}>` picks the input type, the generated
//! one-field struct or `T`. `#[input]` makes `T` the whole input without asking, `#[field]` one
//! field (`ast` then reads the parameter as one of `Input::Fields`).

use proc_macro2::TokenStream;
use quote::{ToTokens, format_ident, quote, quote_spanned};
use syn::ext::IdentExt;
use syn::spanned::Spanned;
use syn::{Attribute, Expr, Ident, Type};

use super::{Tool, respan};
use crate::ast::{self, Field, Single};

/// The input side of the expansion.
pub struct Input {
    /// Items beside the impl: the generated struct, the probe's answer, checks on it.
    pub items: TokenStream,
    /// The `Input` type.
    pub ty: TokenStream,
    /// Statements at the start of `execute` (the generated struct taken apart).
    pub receive: TokenStream,
    /// The argument for `Param::Input`.
    pub whole_arg: TokenStream,
    /// The arguments for `Param::Field(i)`.
    pub field_args: Vec<Ident>,
    /// `fn input_schema` where the derived schema is not the one (no parameters).
    pub schema_fn: TokenStream,
    /// The input's name in messages (`ToolMeta::input_type`), an expression.
    pub type_name: TokenStream,
    /// Whether the input decodes exactly what its derived schema accepts
    /// (`ToolMeta::plain_input`), an expression: only a generated struct whose every field's
    /// type answers `Probe::<T>::DECODES_PLAIN` (tool-core's sealed `PlainDecode`). A type
    /// of the user's (`#[input]`, a struct parameter) may decode other than its schema says
    /// (`alias`, `with`, `default`, `flatten`, its own impls): it is always validated.
    pub plain: TokenStream,
}

impl Input {
    pub fn new(t: &Tool) -> Input {
        match &t.f.input {
            ast::Input::Empty => empty(t),
            ast::Input::Whole(ty) => whole(ty),
            ast::Input::Single(single) => self::single(t, single),
            ast::Input::Fields(fields) => self::fields(t, fields),
        }
    }

    /// `fn input_examples`, each example typed as the input (a wrong one is reported at it).
    pub fn examples_fn(&self, t: &Tool) -> TokenStream {
        let Some(examples) = &t.attrs.input_examples else {
            return TokenStream::new();
        };
        let (pr, ty) = (&t.pr, &self.ty);
        let typed = examples
            .iter()
            .map(|e: &Expr| quote_spanned!(e.span()=> { let __example: #ty = #e; __example }));
        quote! {
            fn input_examples() -> #pr::Vec<#pr::serde_json::Value> { #pr::examples::<Self::Input>(#pr::vec![#(#typed),*]) }
        }
    }
}

/// `#[derive(...)]` and crate paths of a generated input struct.
fn derives(t: &Tool) -> TokenStream {
    let pr = &t.pr;
    let flat = pr.to_string().replace(' ', "");
    let (serde, schemars) = (format!("{flat}::serde"), format!("{flat}::schemars"));
    quote! {
        #[derive(#pr::serde::Deserialize, #pr::serde::Serialize, #pr::schemars::JsonSchema)]
        #[serde(crate = #serde)]
        #[schemars(crate = #schemars)]
        #[doc(hidden)]
    }
}

fn params_name(t: &Tool) -> TokenStream {
    format!("{} parameters", t.name()).into_token_stream()
}

/// No parameters: an empty object that refuses extra keys (tool-core's `NoParams`).
fn empty(t: &Tool) -> Input {
    let pr = &t.pr;
    Input {
        items: TokenStream::new(),
        ty: quote!(#pr::NoParams),
        receive: quote!(let _ = __toolsmith_input;),
        whole_arg: TokenStream::new(),
        field_args: Vec::new(),
        schema_fn: quote! {
            fn input_schema() -> #pr::serde_json::Value { #pr::empty_object_schema() }
        },
        type_name: params_name(t),
        plain: quote!(false),
    }
}

/// `#[input] p: T`: `T` is the input.
fn whole(ty: &Type) -> Input {
    Input {
        items: TokenStream::new(),
        ty: quote_spanned!(ty.span()=> #ty),
        receive: TokenStream::new(),
        whole_arg: quote!(__toolsmith_input),
        field_args: Vec::new(),
        schema_fn: TokenStream::new(),
        type_name: ast::type_text(ty).into_token_stream(),
        plain: quote!(false),
    }
}

/// One unmarked parameter: a field or the whole input, as its type says (see the module docs).
fn single(t: &Tool, s: &Single) -> Input {
    let (pr, ty) = (&t.pr, &s.ty);
    let probe = quote_spanned!(ty.span()=> const __TOOLSMITH_PLAIN: bool = #pr::Probe::<#ty>::IS_PLAIN;);
    let checks = single_checks(pr, s);
    let Some(ident) = &s.ident else {
        // A pattern can only be the whole input (`single_checks` says so if it is not).
        let mut input = whole(ty);
        input.items = quote!(#probe #checks);
        return input;
    };
    let vis = t.vis();
    // The key serde's derive gave it: the name without `r#`.
    let name = ident.unraw().to_string();
    let docs = doc_text(pr, &s.docs);
    let header = match &s.header {
        Some(header) => quote!(#pr::Option::Some(#header)),
        None => quote!(#pr::Option::None),
    };
    let shape = quote_spanned!(ty.span()=> <#pr::Shape<{ __TOOLSMITH_PLAIN }> as #pr::SingleParam<#ty, __ToolInput<#ty>>>);
    let type_name = ast::type_text(ty);
    let params_name = params_name(t);
    // The struct's serde and schemars impls are tool-core's, written once (`one_field`).
    Input {
        items: quote! {
            #probe
            #checks
            #[doc(hidden)]
            #vis struct __ToolInput<__T> { pub #ident: __T }
            impl<__T> #pr::OneField for __ToolInput<__T> {
                type Value = __T;
                const NAME: &'static str = #name;
                const DOCS: &'static str = #docs;
                const HEADER: #pr::Option<&'static str> = #header;
                fn from_value(__value: __T) -> Self { __ToolInput { #ident: __value } }
                fn value(&self) -> &__T { &self.#ident }
                fn into_value(self) -> __T { self.#ident }
            }
            impl<'de, __T: #pr::serde::Deserialize<'de>> #pr::serde::Deserialize<'de> for __ToolInput<__T> {
                fn deserialize<__D: #pr::serde::Deserializer<'de>>(__d: __D) -> #pr::Result<Self, __D::Error> { #pr::one_field::deserialize(__d) }
            }
            impl<__T: #pr::serde::Serialize + #pr::PlainValue> #pr::serde::Serialize for __ToolInput<__T> {
                fn serialize<__S: #pr::serde::Serializer>(&self, __s: __S) -> #pr::Result<__S::Ok, __S::Error> { #pr::one_field::serialize(self, __s) }
            }
            impl<__T: #pr::schemars::JsonSchema> #pr::schemars::JsonSchema for __ToolInput<__T> {
                fn schema_name() -> #pr::Cow<'static, str> { #pr::one_field::schema_name() }
                fn schema_id() -> #pr::Cow<'static, str> { #pr::one_field::schema_id::<__T>(#pr::module_path!()) }
                fn json_schema(__g: &mut #pr::schemars::SchemaGenerator) -> #pr::schemars::Schema { #pr::one_field::json_schema::<Self>(__g) }
            }
        },
        ty: quote_spanned!(ty.span()=> #shape::Input),
        receive: TokenStream::new(),
        whole_arg: quote_spanned!(ty.span()=> #shape::param(__toolsmith_input)),
        field_args: Vec::new(),
        schema_fn: TokenStream::new(),
        type_name: quote!(if __TOOLSMITH_PLAIN { #params_name } else { #type_name }),
        plain: quote_spanned!(ty.span()=> __TOOLSMITH_PLAIN && #pr::Probe::<#ty>::DECODES_PLAIN),
    }
}

/// A parameter's `#[tool(header = "Name")]` as the schema keyword MCP reads (`x-mcp-header`,
/// SEP-2243) on its field: one place, the tool's input schema, that the MCP server's header
/// check and every catalog read.
fn header_attr(header: Option<&syn::LitStr>) -> Option<TokenStream> {
    header.map(|name| quote_spanned!(name.span()=> #[schemars(extend("x-mcp-header" = #name))]))
}

/// A parameter's doc comment as one string, joined as schemars' derive joins it (lines with
/// their leading space taken off, `"\n"` between them), for `OneField::DOCS`.
fn doc_text(pr: &TokenStream, docs: &[Attribute]) -> TokenStream {
    let lines = docs
        .iter()
        .filter_map(|doc| doc.meta.require_name_value().ok())
        .map(|line| match &line.value {
            Expr::Lit(syn::ExprLit {
                lit: syn::Lit::Str(text), ..
            }) => {
                let text = text.value();
                text.strip_prefix(' ')
                    .map_or_else(|| text.to_token_stream(), |trimmed| trimmed.to_token_stream())
            }
            other => other.to_token_stream(),
        });
    let mut text = TokenStream::new();
    for (i, line) in lines.enumerate() {
        if i > 0 {
            text.extend(quote!("\n",));
        }
        text.extend(quote!(#line,));
    }
    if text.is_empty() {
        return quote!("");
    }
    quote!(#pr::concat!(#text))
}

/// What a single parameter's shape rules out, checked once its type is known: the whole input
/// keeps no doc comment of its own (its fields carry them), one field needs a name. Each is a
/// constant that fails to evaluate, reported at the doc comment or at the pattern.
fn single_checks(pr: &TokenStream, s: &Single) -> TokenStream {
    let ty = ast::type_text(&s.ty).replace('{', "{{").replace('}', "}}");
    let doc = s.docs.first().map(|doc: &Attribute| {
        let message = format!("this parameter is the whole input, as `{ty}` is not a plain value (a number, string, collection or `Option`): document the fields of `{ty}` instead, they are what the model sees, or mark the parameter `#[field]` to make it one field of the input");
        respan(quote!(const _: () = #pr::assert!(__TOOLSMITH_PLAIN, #message);), doc.span())
    });
    let name = s.ident.is_none().then(|| {
        let message = format!("this parameter is one field of the input, as `{ty}` is a plain value (not a struct), so it needs a name: write `name: {ty}` instead of a pattern");
        respan(quote!(const _: () = #pr::assert!(!__TOOLSMITH_PLAIN, #message);), s.pat_span)
    });
    let header = s.header.as_ref().map(|header| {
        let message = format!("this parameter is the whole input, as `{ty}` is not a plain value, and travels in no header: put the header on a field of `{ty}` (`#[schemars(extend(\"x-mcp-header\" = \"Name\"))]`), or mark the parameter `#[field]`");
        respan(quote!(const _: () = #pr::assert!(__TOOLSMITH_PLAIN, #message);), header.span())
    });
    quote!(#doc #name #header)
}

/// Several parameters: a generated struct with one field each, taken apart for the call.
fn fields(t: &Tool, fields: &[Field]) -> Input {
    let (pr, vis, derives) = (&t.pr, t.vis(), derives(t));
    let flat = pr.to_string().replace(' ', "");
    let defs = fields.iter().map(|fl| {
        let (id, ty, docs) = (&fl.ident, &fl.ty, &fl.docs);
        // Examples leave an absent optional parameter out rather than write `null`.
        let absent = format!("{flat}::Probe::<{}>::is_absent", ast::type_text(ty));
        let header = header_attr(fl.header.as_ref());
        quote_spanned!(ty.span()=> #(#docs)* #header #[serde(skip_serializing_if = #absent)] pub #id: #ty)
    });
    let plain = fields.iter().map(|fl| {
        let ty = &fl.ty;
        quote_spanned!(ty.span()=> #pr::Probe::<#ty>::DECODES_PLAIN)
    });
    let binds: Vec<_> = (0..fields.len()).map(|i| format_ident!("__p{}", i)).collect();
    let ids = fields.iter().map(|fl| &fl.ident);
    Input {
        items: quote! {
            #derives
            #vis struct __ToolInput { #(#defs,)* }
        },
        ty: quote!(__ToolInput),
        receive: quote!(let __ToolInput { #(#ids: #binds,)* } = __toolsmith_input;),
        whole_arg: TokenStream::new(),
        field_args: binds,
        schema_fn: TokenStream::new(),
        type_name: params_name(t),
        plain: quote!(true #(&& #plain)*),
    }
}
