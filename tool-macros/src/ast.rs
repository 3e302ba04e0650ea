//! Reads the annotated function into small typed structs: its parameters (input fields, a
//! whole-input argument, the `#[ctx]` parameter), its return type and its doc text.

use syn::{Attribute, FnArg, GenericArgument, Ident, ItemFn, Pat, PathArguments, ReturnType, Type};

use crate::ctxt::Ctxt;

/// One parameter that becomes a field of the generated input struct.
pub struct Field {
    pub ident: Ident,
    pub ty: Type,
    pub docs: Vec<Attribute>,
}

/// How the function receives its input.
pub enum Input {
    /// No input parameters: the input is an empty object.
    Empty,
    /// One parameter whose type is the whole input (a struct).
    Whole(Type),
    /// Plain parameters, gathered into a generated struct.
    Fields(Vec<Field>),
}

/// What one parameter is, in call order.
pub enum Param {
    Input,
    Field(usize),
    Context(Box<Type>),
}

/// What the function returns.
pub enum Output {
    Unit,
    Plain(Type),
    Result(Type),
}

pub struct ToolFn {
    /// The function as it is re-emitted (tool-only attributes removed).
    pub item: ItemFn,
    pub docs: String,
    pub input: Input,
    pub params: Vec<Param>,
    pub output: Output,
}

fn is_ctx_marker(attr: &Attribute) -> bool {
    attr.path().is_ident("ctx")
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

/// Whether a type is spelled `Option<...>` (used only to leave `None` out of serialised
/// examples; serde and schemars decide optionality themselves).
pub fn is_option(ty: &Type) -> bool {
    matches!(ty, Type::Path(p) if p.qself.is_none() && p.path.segments.last().is_some_and(|s| s.ident == "Option"))
}

/// Types whose schema is never an object: a single parameter of such a type is a plain
/// parameter (`fn square(x: f64)` takes `{"x": …}`), not the whole input.
fn is_plain_value_type(ty: &Type) -> bool {
    match ty {
        Type::Path(p) if p.qself.is_none() => {
            let Some(last) = p.path.segments.last() else { return false };
            matches!(
                last.ident.to_string().as_str(),
                "bool"
                    | "char"
                    | "str"
                    | "String"
                    | "i8"
                    | "i16"
                    | "i32"
                    | "i64"
                    | "i128"
                    | "isize"
                    | "u8"
                    | "u16"
                    | "u32"
                    | "u64"
                    | "u128"
                    | "usize"
                    | "f32"
                    | "f64"
                    | "Option"
                    | "Vec"
                    | "VecDeque"
                    | "HashSet"
                    | "BTreeSet"
                    | "HashMap"
                    | "BTreeMap"
                    | "Value"
                    | "Box"
                    | "NonZeroU8"
                    | "NonZeroU16"
                    | "NonZeroU32"
                    | "NonZeroU64"
                    | "NonZeroUsize"
                    | "PathBuf"
            )
        }
        Type::Array(_) | Type::Slice(_) | Type::Tuple(_) | Type::Reference(_) | Type::Paren(_) => true,
        _ => false,
    }
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

/// `Result<T, E>` (any path ending in `Result` with a type argument): returns `T`.
fn result_ok_type(ty: &Type) -> Option<Type> {
    let Type::Path(p) = ty else { return None };
    let last = p.path.segments.last()?;
    if last.ident != "Result" {
        return None;
    }
    let PathArguments::AngleBracketed(args) = &last.arguments else {
        return None;
    };
    args.args.iter().find_map(|a| match a {
        GenericArgument::Type(t) => Some(t.clone()),
        _ => None,
    })
}

pub fn parse(cx: &mut Ctxt, mut item: ItemFn) -> ToolFn {
    let docs = doc_text(&item.attrs);
    let mut fields = Vec::new();
    let mut params = Vec::new();
    let mut plain: Vec<(Pat, Type, Vec<Attribute>)> = Vec::new();
    let mut seen_ctx = false;

    for arg in item.sig.inputs.iter_mut() {
        let FnArg::Typed(pt) = arg else {
            cx.error_spanned_by(
                &*arg,
                "a `#[tool]` must be a free function: remove the `self` receiver (move the function out of the `impl` block)",
            );
            continue;
        };
        let (ctx_marks, rest): (Vec<_>, Vec<_>) = pt.attrs.drain(..).partition(is_ctx_marker);
        let (docs, rest): (Vec<_>, Vec<_>) = rest.into_iter().partition(|a| a.path().is_ident("doc"));
        pt.attrs = rest;
        if let Some(mark) = ctx_marks.first() {
            if seen_ctx {
                cx.error_spanned_by(mark, "only one parameter can be `#[ctx]`");
            }
            if !docs.is_empty() {
                cx.error_spanned_by(&docs[0], "the `#[ctx]` parameter is not part of the input: remove its doc comment");
            }
            seen_ctx = true;
            params.push(Param::Context(pt.ty.clone()));
            continue;
        }
        if let Type::Reference(r) = &*pt.ty {
            let owned = owned_type_text(&r.elem);
            let found = type_text(&Type::Reference(r.clone()));
            cx.error_spanned_by(
                r,
                format!("tool parameters must be owned types, the input is deserialised into them: take `{owned}` instead of `{found}`"),
            );
            continue;
        }
        if let Type::ImplTrait(t) = &*pt.ty {
            cx.error_spanned_by(t, "tool parameters need concrete types: `impl Trait` has no JSON Schema");
            continue;
        }
        params.push(Param::Field(plain.len()));
        plain.push(((*pt.pat).clone(), (*pt.ty).clone(), docs));
    }

    let input = match plain.len() {
        0 => Input::Empty,
        1 if !is_plain_value_type(&plain[0].1) => {
            for p in &mut params {
                if let Param::Field(_) = p {
                    *p = Param::Input;
                }
            }
            if let Some(d) = plain[0].2.first() {
                cx.error_spanned_by(
                    d,
                    "this parameter is the whole input (its type is a struct): document the struct's fields instead",
                );
            }
            Input::Whole(plain[0].1.clone())
        }
        _ => {
            for (pat, ty, docs) in plain {
                match pat {
                    Pat::Ident(pi) if pi.by_ref.is_none() && pi.subpat.is_none() => {
                        let ident = Ident::new(pi.ident.to_string().trim_start_matches("r#"), pi.ident.span());
                        fields.push(Field { ident, ty, docs });
                    }
                    other => cx.error_spanned_by(
                        other,
                        "with several parameters each is one input field: use a plain name (`location: String`), not a pattern",
                    ),
                }
            }
            Input::Fields(fields)
        }
    };

    let output = match &item.sig.output {
        ReturnType::Default => Output::Unit,
        ReturnType::Type(_, ty) => match result_ok_type(ty) {
            Some(_) => Output::Result((**ty).clone()),
            None => Output::Plain((**ty).clone()),
        },
    };

    ToolFn {
        item,
        docs,
        input,
        params,
        output,
    }
}
