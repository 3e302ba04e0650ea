//! Reads the annotated function into small typed structs: its parameters (input fields, a
//! single parameter, an `#[input]` whole input, a `#[field]`, the `#[ctx]` parameter), its
//! return type and its doc text.
//!
//! Nothing here looks at how a type is spelled: whether a single parameter is one field or the
//! whole input, and whether the return type is a `Result`, is decided by the types themselves
//! in the generated code (see `expand::input` and `expand::output`).

use proc_macro2::Span;
use syn::spanned::Spanned;
use syn::{Attribute, FnArg, Ident, ItemFn, Meta, Pat, PatType, ReturnType, Type};

use crate::ctxt::Ctxt;

/// One parameter that becomes a field of the generated input struct.
pub struct Field {
    pub ident: Ident,
    pub ty: Type,
    pub docs: Vec<Attribute>,
    /// Its `#[tool(header = "...")]`: the HTTP header an MCP client mirrors it into.
    pub header: Option<syn::LitStr>,
}

/// The only input parameter, unmarked: one field if its type is a plain value (a scalar, a
/// string, a collection, `Option`, …), the whole input otherwise. (Marked `#[field]`, it is
/// one of [`Input::Fields`]; marked `#[input]`, [`Input::Whole`].)
pub struct Single {
    pub ty: Type,
    /// Its name, `None` for a pattern (which only the whole input may be).
    pub ident: Option<Ident>,
    /// Where its name or pattern is.
    pub pat_span: Span,
    pub docs: Vec<Attribute>,
    /// Its `#[tool(header = "...")]` (see [`Field::header`]).
    pub header: Option<syn::LitStr>,
}

/// How the function receives its input.
pub enum Input {
    /// No input parameters: the input is an empty object.
    Empty,
    /// `#[input] p: T`: `T` is the whole input, whatever it is.
    Whole(Type),
    /// One unmarked parameter (see [`Single`]).
    Single(Single),
    /// Several parameters (or one marked `#[field]`), gathered into a generated struct.
    Fields(Vec<Field>),
}

/// What one parameter is, in call order.
pub enum Param {
    /// The input itself (`#[input]`, or the single parameter).
    Input,
    /// The `n`th field of the generated struct.
    Field(usize),
    /// The `#[ctx]` parameter.
    Context(Box<Type>),
}

pub struct ToolFn {
    /// The function as it is re-emitted (tool-only attributes removed); for a declaration
    /// without a body, with an empty one (and never re-emitted).
    pub item: ItemFn,
    /// Where the `;` of a declaration without a body is (`fn name(input: In) -> Out;`): a
    /// client-side tool, whose calls the application answers.
    pub client_side: Option<Span>,
    pub docs: String,
    pub input: Input,
    pub params: Vec<Param>,
    /// The return type (`()` when there is none).
    pub output: Type,
    /// Whether the parameter and return types can be named in generated code: not after a
    /// mistake in a parameter, nor in a generic function. The stubs emitted beside errors use
    /// them only then.
    pub types_sound: bool,
}

/// Doc text of `#[doc = "..."]` attributes, one line each, the leading space rustdoc adds removed.
pub fn doc_text(attrs: &[Attribute]) -> String {
    let lines: Vec<String> = attrs
        .iter()
        .filter(|a| a.path().is_ident("doc"))
        .filter_map(|a| match &a.meta {
            syn::Meta::NameValue(nv) => match &nv.value {
                syn::Expr::Lit(syn::ExprLit { lit: syn::Lit::Str(s), .. }) => Some(s.value()),
                _ => None,
            },
            _ => None,
        })
        .flat_map(|s| {
            s.split('\n')
                .map(|l| l.strip_prefix(' ').unwrap_or(l).trim_end().to_owned())
                .collect::<Vec<_>>()
        })
        .collect();
    lines.join("\n").trim().to_owned()
}

/// A type as source text, for messages (`Vec<u8>`, not `Vec < u8 >`).
pub fn type_text(ty: &Type) -> String {
    let text = quote::quote!(#ty).to_string();
    [
        (" < ", "<"),
        ("< ", "<"),
        (" <", "<"),
        (" >", ">"),
        (" ,", ","),
        (" :: ", "::"),
        (":: ", "::"),
        ("& ", "&"),
        (" ]", "]"),
        ("[ ", "["),
    ]
    .iter()
    .fold(text, |t, (from, to)| t.replace(from, to))
}

/// The owned counterpart of a borrowed parameter type: `str` → `String`, `[T]` → `Vec<T>`,
/// `Path` → `PathBuf`, anything else as is.
fn owned_type_text(referent: &Type) -> String {
    match referent {
        Type::Path(p) if p.qself.is_none() && p.path.is_ident("str") => "String".to_owned(),
        Type::Path(p) if p.qself.is_none() && p.path.is_ident("Path") => "PathBuf".to_owned(),
        Type::Slice(s) => format!("Vec<{}>", type_text(&s.elem)),
        other => type_text(other),
    }
}

/// Reads a function, or a declaration without a body (`fn name(input: In) -> Out;`), as the
/// function it declares with an empty body and the `;`'s span.
pub fn read_item(item: proc_macro2::TokenStream) -> syn::Result<(ItemFn, Option<Span>)> {
    match syn::parse2::<ItemFn>(item.clone()) {
        Ok(f) => Ok((f, None)),
        Err(e) => match syn::parse2::<syn::ForeignItemFn>(item) {
            Ok(decl) => {
                let semi = decl.semi_token.span;
                let block = Box::new(syn::Block {
                    brace_token: syn::token::Brace(semi),
                    stmts: Vec::new(),
                });
                let f = ItemFn {
                    attrs: decl.attrs,
                    vis: decl.vis,
                    sig: decl.sig,
                    block,
                };
                Ok((f, Some(semi)))
            }
            Err(_) => Err(e),
        },
    }
}

/// Reads the function, recording every mistake in `cx`.
pub fn parse(cx: &mut Ctxt, mut item: ItemFn, client_side: Option<Span>) -> ToolFn {
    let mut r = Reader {
        cx,
        sound: item.sig.generics.params.is_empty(),
    };
    let docs = doc_text(&item.attrs);
    let mut inputs = Vec::new();
    let mut params = Vec::new();
    for arg in item.sig.inputs.iter_mut() {
        match arg {
            FnArg::Typed(pt) => r.param(pt, &mut inputs, &mut params),
            FnArg::Receiver(_) => r.error(
                &*arg,
                "a `#[tool]` must be a free function: remove the `self` receiver (move the function out of the `impl` block)",
            ),
        }
    }
    let input = r.gather(inputs, &mut params);
    let output = r.output(&item.sig.output);
    let types_sound = r.sound;
    ToolFn {
        item,
        client_side,
        docs,
        input,
        params,
        output,
        types_sound,
    }
}

/// An input parameter as written, before it is known to be one field or the whole input.
struct Raw {
    pat: Pat,
    ty: Type,
    docs: Vec<Attribute>,
    /// Its `#[input]` attribute.
    whole: Option<Attribute>,
    /// Whether it is marked `#[field]`.
    field: bool,
    header: Option<syn::LitStr>,
}

/// A parameter's tool-only attributes, taken off it: at most one marker, and its docs.
#[derive(Default)]
struct Marks {
    ctx: Option<Attribute>,
    input: Option<Attribute>,
    field: Option<Attribute>,
    docs: Vec<Attribute>,
    /// `#[tool(header = "...")]`.
    header: Option<syn::LitStr>,
}

struct Reader<'a> {
    cx: &'a mut Ctxt,
    sound: bool,
}

impl Reader<'_> {
    /// Records a mistake in the function's parameters or return type.
    fn error<T: quote::ToTokens, M: std::fmt::Display>(&mut self, tokens: T, message: M) {
        self.sound = false;
        self.cx.error_spanned_by(tokens, message);
    }

    /// One typed parameter: `#[ctx]`, or an input parameter.
    fn param(&mut self, pt: &mut PatType, inputs: &mut Vec<Raw>, params: &mut Vec<Param>) {
        let marks = self.marks(pt);
        if let Some(mark) = &marks.ctx {
            if let Some(header) = &marks.header {
                self.error(header, "the `#[ctx]` parameter is not part of the input: it travels in no header");
            }
            self.context(mark, &marks.docs, &pt.ty, params);
            return;
        }
        if self.owned(&pt.ty) {
            params.push(Param::Field(inputs.len()));
            inputs.push(Raw {
                pat: (*pt.pat).clone(),
                ty: (*pt.ty).clone(),
                docs: marks.docs,
                whole: marks.input,
                field: marks.field.is_some(),
                header: marks.header,
            });
        }
    }

    /// Takes `#[ctx]`, `#[input]`, `#[field]` and doc comments off a parameter; a marker is
    /// written bare, and a parameter has at most one.
    fn marks(&mut self, pt: &mut PatType) -> Marks {
        let mut marks = Marks::default();
        for attr in std::mem::take(&mut pt.attrs) {
            let path = attr.path();
            if path.is_ident("doc") {
                marks.docs.push(attr);
                continue;
            }
            if path.is_ident("tool") {
                self.param_options(&attr, &mut marks);
                continue;
            }
            if !["ctx", "input", "field"].iter().any(|m| path.is_ident(m)) {
                pt.attrs.push(attr);
                continue;
            }
            if !matches!(attr.meta, Meta::Path(_)) {
                self.error(
                    &attr.meta,
                    "`#[ctx]`, `#[input]` and `#[field]` take no arguments: write the name alone",
                );
            }
            let taken = [&marks.ctx, &marks.input, &marks.field].into_iter().flatten().next();
            match taken {
                Some(first) if first.path() == attr.path() => self.error(&attr, "this attribute is repeated: remove it"),
                Some(_) => self.error(
                    &attr,
                    "a parameter is one of `#[ctx]` (the context), `#[input]` (the whole input) or `#[field]` (one field of the input): keep one",
                ),
                None if attr.path().is_ident("ctx") => marks.ctx = Some(attr),
                None if attr.path().is_ident("input") => marks.input = Some(attr),
                None => marks.field = Some(attr),
            }
        }
        marks
    }

    /// `#[tool(header = "Name")]` on a parameter: the one option a parameter takes.
    fn param_options(&mut self, attr: &Attribute, marks: &mut Marks) {
        let parsed = attr.parse_nested_meta(|meta| {
            if !meta.path.is_ident("header") {
                return Err(meta.error("a parameter's `#[tool(...)]` takes `header = \"Name\"` only"));
            }
            let value: syn::LitStr = meta.value()?.parse()?;
            if marks.header.is_some() {
                return Err(syn::Error::new(value.span(), "`header` is given twice: keep one"));
            }
            if let Some(why) = crate::valid::header_name_problem(&value.value()) {
                return Err(syn::Error::new(value.span(), why));
            }
            marks.header = Some(value);
            Ok(())
        });
        if let Err(e) = parsed {
            self.sound = false;
            self.cx.syn_error(e);
        }
    }

    /// The `#[ctx]` parameter.
    fn context(&mut self, mark: &Attribute, docs: &[Attribute], ty: &Type, params: &mut Vec<Param>) {
        if params.iter().any(|p| matches!(p, Param::Context(_))) {
            self.error(mark, "only one parameter can be `#[ctx]`: remove this one");
        }
        if let Some(doc) = docs.first() {
            self.error(doc, "the `#[ctx]` parameter is not part of the input: remove its doc comment");
        }
        params.push(Param::Context(Box::new(ty.clone())));
    }

    /// Whether an input parameter's type can be deserialised into; reports it otherwise.
    fn owned(&mut self, ty: &Type) -> bool {
        match ty {
            Type::Reference(r) => {
                let (owned, found) = (owned_type_text(&r.elem), type_text(ty));
                self.error(
                    r,
                    format!(
                        "tool parameters must be owned types, the input is deserialised into them: take `{owned}` instead of `{found}`"
                    ),
                );
                false
            }
            Type::ImplTrait(t) => {
                self.error(
                    t,
                    "tool parameters need concrete types: `impl Trait` has no JSON Schema; name the type",
                );
                false
            }
            _ => true,
        }
    }

    /// The input parameters, as the tool's input.
    fn gather(&mut self, mut inputs: Vec<Raw>, params: &mut [Param]) -> Input {
        if inputs.len() > 1 {
            return Input::Fields(self.fields(inputs));
        }
        if inputs.first().is_some_and(|p| p.field) {
            return Input::Fields(self.fields(inputs));
        }
        let Some(p) = inputs.pop() else { return Input::Empty };
        for param in params.iter_mut().filter(|p| matches!(p, Param::Field(_))) {
            *param = Param::Input;
        }
        if p.whole.is_none() {
            return Input::Single(Single {
                ident: plain_name(&p.pat),
                pat_span: p.pat.span(),
                ty: p.ty,
                docs: p.docs,
                header: p.header,
            });
        }
        if let Some(header) = &p.header {
            self.error(
                header,
                "this parameter is the whole input (`#[input]`): put the header on a field of its type, `#[schemars(extend(\"x-mcp-header\" = \"Name\"))]`",
            );
        }
        if let Some(doc) = p.docs.first() {
            let ty = type_text(&p.ty);
            self.error(
                doc,
                format!("this parameter is the whole input (`#[input]`): document the fields of `{ty}` instead"),
            );
        }
        Input::Whole(p.ty)
    }

    /// Several input parameters, or one marked `#[field]`: each one named field of the
    /// generated struct.
    fn fields(&mut self, inputs: Vec<Raw>) -> Vec<Field> {
        let count = inputs.len();
        let mut fields = Vec::new();
        for p in inputs {
            if let Some(mark) = &p.whole {
                self.error(
                    mark,
                    format!("`#[input]` marks the only input parameter as the whole input, but this tool has {count}, each one field of the input: remove `#[input]`, or take one struct"),
                );
            }
            match plain_name(&p.pat) {
                Some(ident) => fields.push(Field {
                    ident,
                    ty: p.ty,
                    docs: p.docs,
                    header: p.header,
                }),
                None => self.error(
                    &p.pat,
                    "each parameter here is one field of the input, and a field needs a plain name (`location: String`), not a pattern",
                ),
            }
        }
        fields
    }

    /// The return type; `impl Trait` is refused (the output needs a schema).
    fn output(&mut self, output: &ReturnType) -> Type {
        match output {
            ReturnType::Default => syn::parse_quote_spanned!(output.span()=> ()),
            ReturnType::Type(_, ty) => {
                if let Type::ImplTrait(t) = &**ty {
                    self.error(
                        t,
                        "a `#[tool]` must return a concrete type: `impl Trait` has no JSON Schema; name the type",
                    );
                }
                (**ty).clone()
            }
        }
    }
}

/// The field a parameter pattern names, if it is a plain name. A raw name stays raw (`r#type`
/// is the field `r#type`, a keyword otherwise); serde and schemars call its key `type`.
fn plain_name(pat: &Pat) -> Option<Ident> {
    match pat {
        Pat::Ident(pi) if pi.by_ref.is_none() && pi.subpat.is_none() => Some(pi.ident.clone()),
        _ => None,
    }
}
