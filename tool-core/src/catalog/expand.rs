//! Query expansion for tool search: the words a query may use that no description does.
//!
//! Owns the curated synonym table (verb synonyms, abbreviations, British and American
//! spellings, and words that name what a tool works on — "kilometres" is a length, "square
//! root" is mathematics) and the light stemming of query words the index does not hold
//! ("converting" finds "convert", "deleted" finds "delete"). Both only add terms to a query,
//! each with a weight below the query's own words, so a query's exact words still rank first
//! and the index stays as it is. Must not rank (that is `search`'s).

use std::collections::HashMap;
use std::sync::OnceLock;

/// The weight of a term a synonym brings, against 1 for the query's own words.
pub(super) const SYNONYM_WEIGHT: f32 = 0.5;

/// Words that mean the same for tool search: each expands to the others.
const GROUPS: &[&[&str]] = &[
    &["find", "search", "lookup", "locate", "seek", "grep"],
    &["get", "fetch", "retrieve", "obtain"],
    &["create", "make", "add", "insert"],
    &["delete", "remove", "erase", "destroy"],
    &["update", "edit", "modify", "change"],
    &["list", "enumerate"],
    &["show", "display", "render"],
    &["write", "save", "store", "persist"],
    &["run", "execute", "launch", "invoke"],
    &["stop", "cancel", "abort", "halt", "terminate"],
    &["book", "reserve", "schedule"],
    &["buy", "purchase"],
    &["send", "deliver"],
    &["email", "mail"],
    &["customer", "client"],
    &["folder", "directory", "dir"],
    &["image", "picture", "photo", "img", "pic"],
    &["convert", "transform"],
    &["count", "tally"],
    &["confirm", "approve"],
    &["repository", "repo"],
    &["message", "msg"],
    &["database", "db"],
    &["document", "doc"],
    &["configuration", "config"],
    &["authentication", "auth", "login"],
    &["information", "info"],
    &["text", "txt"],
    &["number", "num"],
    &["quantity", "qty"],
    &["address", "addr"],
    &["calculate", "calc", "compute"],
    &["kilometre", "kilometer", "km"],
    &["metre", "meter"],
    &["centimetre", "centimeter", "cm"],
    &["millimetre", "millimeter", "mm"],
    &["litre", "liter"],
    &["millilitre", "milliliter", "ml"],
    &["pound", "lb"],
    &["ounce", "oz"],
    &["kilogram", "kg"],
    &["colour", "color"],
];

/// Words that name what a tool works on without being in its description: each brings the
/// words of the kind (one way: "length" does not bring "mile").
const KINDS: &[(&[&str], &[&str])] = &[
    (
        &[
            "kilometre",
            "kilometer",
            "km",
            "mile",
            "metre",
            "meter",
            "centimetre",
            "centimeter",
            "cm",
            "millimetre",
            "millimeter",
            "mm",
            "inch",
            "foot",
            "feet",
            "yard",
            "distance",
        ],
        &["length", "unit"],
    ),
    (
        &[
            "pound", "lb", "kilogram", "kg", "gram", "ounce", "oz", "stone", "ton", "tonne", "weight",
        ],
        &["mass", "unit"],
    ),
    (&["celsius", "fahrenheit", "kelvin", "degree"], &["temperature"]),
    (
        &[
            "litre",
            "liter",
            "millilitre",
            "milliliter",
            "ml",
            "gallon",
            "cup",
            "pint",
            "quart",
            "teaspoon",
            "tablespoon",
        ],
        &["volume", "unit"],
    ),
    (
        &[
            "math",
            "maths",
            "arithmetic",
            "sqrt",
            "root",
            "square",
            "percent",
            "percentage",
            "sum",
            "multiply",
            "divide",
            "plus",
            "minus",
            "formula",
            "equation",
            "logarithm",
            "log",
            "sine",
            "cosine",
            "factorial",
        ],
        &["mathematical", "expression", "calculate"],
    ),
    (&["tz", "timezone"], &["time", "zone"]),
];

/// The terms each (folded) query term brings.
fn table() -> &'static HashMap<String, Vec<String>> {
    static TABLE: OnceLock<HashMap<String, Vec<String>>> = OnceLock::new();
    TABLE.get_or_init(|| {
        let mut table: HashMap<String, Vec<String>> = HashMap::new();
        let mut add = |from: &str, to: &str| {
            let (from, to) = (term(from), term(to));
            if from != to {
                let entry = table.entry(from).or_default();
                if !entry.contains(&to) {
                    entry.push(to);
                }
            }
        };
        for group in GROUPS {
            for from in *group {
                for to in *group {
                    add(from, to);
                }
            }
        }
        for (words, kinds) in KINDS {
            for from in *words {
                for to in *kinds {
                    add(from, to);
                }
            }
        }
        table
    })
}

/// A table word as the tokeniser folds it (`kilometres` and `kilometre` alike).
fn term(word: &str) -> String {
    let mut out = String::new();
    super::search::for_each_term(word, |t| {
        if out.is_empty() {
            out.push_str(t);
        }
    });
    out
}

/// The terms a query term brings (its synonyms and kinds), folded as the index folds words.
pub(super) fn synonyms(term: &str) -> &'static [String] {
    table().get(term).map_or(&[], Vec::as_slice)
}

/// Whether a query mixes digits with an arithmetic sign (`17% of 2340`, `2+2`, `3*4`): it
/// asks for a calculation whatever its words.
pub(super) fn is_arithmetic(query: &str) -> bool {
    query.chars().any(|c| c.is_ascii_digit()) && query.chars().any(|c| matches!(c, '%' | '+' | '*' | '/' | '^' | '√' | '='))
}

/// The terms arithmetic brings.
pub(super) fn arithmetic() -> &'static [String] {
    synonyms("math")
}

/// The stems to try for a query term the index does not hold: `converting` → `convert`,
/// `converte`; `deleted` → `delet`, `delete`; `mapping` → `mapp`, `map`. ASCII words of five
/// letters or more only (the rules are English); `has` says whether the index holds a term.
pub(super) fn stem(term: &str, has: impl Fn(&str) -> bool) -> Option<String> {
    if term.len() < 5 || !term.bytes().all(|b| b.is_ascii_lowercase()) {
        return None;
    }
    for suffix in ["ing", "ed", "er", "ion", "ment", "able"] {
        let Some(base) = term.strip_suffix(suffix) else {
            continue;
        };
        if base.len() < 3 {
            continue;
        }
        let mut tries = vec![base.to_owned(), format!("{base}e")];
        let bytes = base.as_bytes();
        // A doubled last consonant (`mapping`, `stopped`), but not `ss`, `ll` or `zz`.
        if bytes.len() >= 4 && bytes[bytes.len() - 1] == bytes[bytes.len() - 2] && !matches!(bytes[bytes.len() - 1], b's' | b'l' | b'z') {
            tries.push(base[..base.len() - 1].to_owned());
        }
        if let Some(found) = tries.into_iter().find(|t| has(t)) {
            return Some(found);
        }
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn synonyms_are_folded_and_one_way_for_kinds() {
        assert!(synonyms("kilometre").iter().any(|t| t == "length"));
        assert!(synonyms("km").iter().any(|t| t == "kilometre"));
        assert!(synonyms("pound").iter().any(|t| t == "mass"));
        assert!(synonyms("length").is_empty());
        assert!(synonyms("delete").iter().any(|t| t == "remove"));
        assert!(synonyms("unknownword").is_empty());
    }

    #[test]
    fn stems_are_found_only_where_the_index_has_them() {
        let has = |t: &str| ["convert", "delete", "map", "stop"].contains(&t);
        assert_eq!(stem("converting", has).as_deref(), Some("convert"));
        assert_eq!(stem("deleted", has).as_deref(), Some("delete"));
        assert_eq!(stem("mapping", has).as_deref(), Some("map"));
        assert_eq!(stem("stopped", has).as_deref(), Some("stop"));
        assert_eq!(stem("string", has), None);
        assert_eq!(stem("погода", has), None);
    }

    #[test]
    fn arithmetic_is_digits_with_a_sign() {
        assert!(is_arithmetic("what is 17% of 2340"));
        assert!(is_arithmetic("2+2"));
        assert!(!is_arithmetic("route 66"));
        assert!(!is_arithmetic("a/b testing"));
    }
}
