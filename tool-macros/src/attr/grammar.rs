//! The grammar every key of `#[tool(...)]` shares: values stored once (a duplicate is an
//! error at the key), unknown keys answered with the closest known one, function paths,
//! booleans and integers checked at the value.

use proc_macro2::TokenStream;
use syn::meta::ParseNestedMeta;
use syn::{Expr, ExprLit, Lit, LitBool, LitInt, Path, Token};

use crate::ctxt::Ctxt;

/// The key as written (`title`, or `a::b` for a path).
pub fn key_name(meta: &ParseNestedMeta) -> String {
    meta.path.get_ident().map(|i| i.to_string()).unwrap_or_else(|| {
        let path = &meta.path;
        quote::quote!(#path).to_string().replace(' ', "")
    })
}

/// Stores `value` in `slot`, or reports a duplicate at the key.
pub fn set<T>(cx: &mut Ctxt, meta: &ParseNestedMeta, slot: &mut Option<T>, value: T) {
    if slot.is_some() {
        let key = key_name(meta);
        cx.error_spanned_by(
            &meta.path,
            format!("duplicate key `{key}`: each key may appear once; remove one of them"),
        );
    } else {
        *slot = Some(value);
    }
}

/// Stores `value` unless it was refused (already reported).
pub fn set_some<T>(cx: &mut Ctxt, meta: &ParseNestedMeta, slot: &mut Option<T>, value: Option<T>) {
    if let Some(v) = value {
        set(cx, meta, slot, v);
    }
}

/// Consumes whatever follows a key (`= expr` or `(...)`) so parsing can go on.
pub fn skip_value(meta: &ParseNestedMeta) -> syn::Result<()> {
    if meta.input.peek(Token![=]) {
        meta.value()?.parse::<Expr>()?;
    } else if meta.input.peek(syn::token::Paren) {
        let content;
        syn::parenthesized!(content in meta.input);
        let _: TokenStream = content.parse()?;
    }
    Ok(())
}

/// Reports an unknown key at the key, with the closest allowed one, and skips its value.
pub fn unknown(cx: &mut Ctxt, meta: &ParseNestedMeta, what: &str, allowed: &str) -> syn::Result<()> {
    let key = key_name(meta);
    let hint = closest(&key, allowed)
        .map(|k| format!(" (did you mean `{k}`?)"))
        .unwrap_or_default();
    cx.error_spanned_by(&meta.path, format!("unknown {what} key `{key}`{hint}; expected one of: {allowed}"));
    skip_value(meta)
}

/// The allowed key closest to `key`: a small edit away, or containing it (`read_only` for
/// `read_only_hint`), or contained in it (`description_text` for `description`).
fn closest<'a>(key: &str, allowed: &'a str) -> Option<&'a str> {
    allowed
        .split(", ")
        .filter(|k| levenshtein(k, key) <= 3 || (key.len() >= 4 && k.contains(key)) || (k.len() >= 4 && key.contains(k)))
        .min_by_key(|k| levenshtein(k, key))
}

fn levenshtein(a: &str, b: &str) -> usize {
    let b: Vec<char> = b.chars().collect();
    let mut prev: Vec<usize> = (0..=b.len()).collect();
    for (i, ca) in a.chars().enumerate() {
        let mut cur = vec![i + 1];
        for (j, cb) in b.iter().enumerate() {
            cur.push((prev[j] + usize::from(ca != *cb)).min(prev[j + 1] + 1).min(cur[j] + 1));
        }
        prev = cur;
    }
    prev[b.len()]
}

/// A value that must name a function: a plain path (`my_fn`, `module::my_fn`). Anything else
/// (a closure, a call, a literal) is reported at the value, saying what to write instead.
pub fn fn_path(cx: &mut Ctxt, value: Expr, key: &str, signature: &str) -> Option<Path> {
    match value {
        Expr::Path(p) if p.qself.is_none() && p.attrs.is_empty() => Some(p.path),
        other => {
            cx.error_spanned_by(
                &other,
                format!("`{key}` takes the name of a function `{signature}`, e.g. `{key} = my_fn`; closures and other expressions are not accepted, move the code into a `fn`"),
            );
            None
        }
    }
}

/// Parses `= my_fn` (see [`fn_path`]).
pub fn parse_fn_path(cx: &mut Ctxt, meta: &ParseNestedMeta, key: &str, signature: &str) -> syn::Result<Option<Path>> {
    let value: Expr = meta.value()?.parse()?;
    Ok(fn_path(cx, value, key, signature))
}

/// Parses `= true` / `= false`; anything else is reported at the value.
pub fn parse_bool(cx: &mut Ctxt, meta: &ParseNestedMeta, key: &str) -> syn::Result<Option<LitBool>> {
    match meta.value()?.parse::<Expr>()? {
        Expr::Lit(ExprLit { lit: Lit::Bool(b), .. }) => Ok(Some(b)),
        other => {
            cx.error_spanned_by(&other, format!("`{key}` takes `true` or `false`, e.g. `{key} = true`"));
            Ok(None)
        }
    }
}

/// Parses `= <integer literal>`; anything else is reported at the value.
pub fn parse_int(cx: &mut Ctxt, meta: &ParseNestedMeta, key: &str, example: &str) -> syn::Result<Option<LitInt>> {
    match meta.value()?.parse::<Expr>()? {
        Expr::Lit(ExprLit { lit: Lit::Int(i), .. }) => Ok(Some(i)),
        other => {
            let unit = if key.ends_with("_ms") { " of milliseconds" } else { "" };
            cx.error_spanned_by(
                &other,
                format!("`{key}` takes a non-negative integer literal{unit}, e.g. `{key} = {example}`"),
            );
            Ok(None)
        }
    }
}
