//! Tool-name rules and the reversible mapping for names a dialect forbids.
//!
//! Owns [`NameRule`] (which dialect follows which rule is [`Dialect::name_rule`]) and
//! [`NameMap`]. A valid id is used as is; another is mapped to a valid name (invalid characters
//! to `_`, shortened, and suffixed with a hash of the id when needed to stay unique), and the
//! map routes a model's tool call back to the id. Must not touch schemas or entries.

use std::collections::BTreeMap;

use crate::dialect::Dialect;

/// A dialect's tool-name rule.
#[derive(Debug, Clone, Copy)]
pub struct NameRule {
    /// Longest accepted name.
    pub max_len: usize,
    /// Characters allowed anywhere.
    pub allowed: fn(char) -> bool,
    /// Characters allowed first.
    pub first: fn(char) -> bool,
    /// The rule as a regex, for messages.
    pub pattern: &'static str,
}

fn common(c: char) -> bool {
    c.is_ascii_alphanumeric() || c == '_' || c == '-'
}
fn gemini(c: char) -> bool {
    c.is_ascii_alphanumeric() || matches!(c, '_' | '.' | ':' | '-')
}
fn gemini_first(c: char) -> bool {
    c.is_ascii_alphabetic() || c == '_'
}
fn mcp(c: char) -> bool {
    c.is_ascii_alphanumeric() || matches!(c, '_' | '.' | '-')
}

impl NameRule {
    /// Letters, digits, `_` and `-`, up to 64: OpenAI (Chat and Responses) and Anthropic.
    pub(crate) const PLAIN: NameRule = NameRule {
        max_len: 64,
        allowed: common,
        first: common,
        pattern: "^[a-zA-Z0-9_-]{1,64}$",
    };
    /// Gemini: also `.` and `:`, starting with a letter or `_`, up to 64.
    pub(crate) const GEMINI: NameRule = NameRule {
        max_len: 64,
        allowed: gemini,
        first: gemini_first,
        pattern: "^[A-Za-z_][A-Za-z0-9_.:-]{0,63}$",
    };
    /// MCP: also `.`, up to 128.
    pub(crate) const MCP: NameRule = NameRule {
        max_len: 128,
        allowed: mcp,
        first: mcp,
        pattern: "^[A-Za-z0-9_.-]{1,128}$",
    };

    /// Whether a name satisfies the rule.
    pub fn accepts(&self, name: &str) -> bool {
        let mut chars = name.chars();
        chars.next().is_some_and(self.first) && chars.all(self.allowed) && name.len() <= self.max_len
    }
}

/// FNV-1a: a stable, dependency-free hash for name suffixes (not for security).
fn fnv(text: &str) -> u32 {
    text.bytes()
        .fold(0x811c_9dc5u32, |h, b| (h ^ u32::from(b)).wrapping_mul(0x0100_0193))
}

/// Provider names of one dialect, both ways.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct NameMap {
    to_name: BTreeMap<String, String>,
    to_id: BTreeMap<String, String>,
}

impl NameMap {
    /// Maps every id for a dialect. Ids the dialect accepts keep their spelling; the others get
    /// a valid, unique name.
    pub fn build<'a>(dialect: Dialect, ids: impl IntoIterator<Item = &'a str>) -> NameMap {
        NameMap::build_in_order(dialect, ids).0
    }

    /// Like [`NameMap::build`], with the names also listed in the order of `ids`, so a catalog
    /// finds a tool's name by its position.
    pub(crate) fn build_in_order<'a>(dialect: Dialect, ids: impl IntoIterator<Item = &'a str>) -> (NameMap, Vec<String>) {
        let rule = dialect.name_rule();
        let ids: Vec<&str> = ids.into_iter().collect();
        let mut map = NameMap::default();
        let mut in_order = vec![String::new(); ids.len()];
        // Valid ids first, so a mapped name never takes an id's own spelling.
        for (i, id) in ids.iter().enumerate().filter(|(_, id)| rule.accepts(id)) {
            map.insert(id, id);
            in_order[i] = (*id).to_owned();
        }
        for (i, id) in ids.iter().enumerate().filter(|(_, id)| !rule.accepts(id)) {
            let mut base: String = id.chars().map(|c| if (rule.allowed)(c) { c } else { '_' }).collect();
            if !base.chars().next().is_some_and(rule.first) {
                base.insert(0, '_');
            }
            let mut name = base.clone();
            let mut salt = 0u32;
            while name.len() > rule.max_len || map.to_id.contains_key(&name) {
                let suffix = format!("_{:08x}", fnv(&format!("{id}#{salt}")));
                let keep = rule.max_len.saturating_sub(suffix.len()).min(base.len());
                name = format!("{}{suffix}", &base[..keep]);
                salt += 1;
            }
            map.insert(id, &name);
            in_order[i] = name;
        }
        (map, in_order)
    }

    fn insert(&mut self, id: &str, name: &str) {
        self.to_name.insert(id.to_owned(), name.to_owned());
        self.to_id.insert(name.to_owned(), id.to_owned());
    }

    /// The provider name of an id.
    pub fn name(&self, id: &str) -> Option<&str> {
        self.to_name.get(id).map(String::as_str)
    }

    /// The id behind a provider name.
    pub fn id(&self, name: &str) -> Option<&str> {
        self.to_id.get(name).map(String::as_str)
    }

    /// Every provider name, ordered.
    pub fn names(&self) -> impl Iterator<Item = &str> {
        self.to_id.keys().map(String::as_str)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn valid_ids_keep_their_spelling_and_dotted_ones_map_back() {
        let ids = ["weather", "Github.CreateIssue", "Github_CreateIssue", "Slack.Send@1.2"];
        let m = NameMap::build(Dialect::OpenAiChat, ids);
        assert_eq!(m.name("weather"), Some("weather"));
        assert_eq!(m.name("Github_CreateIssue"), Some("Github_CreateIssue"));
        let dotted = m.name("Github.CreateIssue").unwrap();
        assert_ne!(dotted, "Github_CreateIssue", "a mapped name never takes a real id's spelling");
        assert!(dotted.starts_with("Github_CreateIssue_"), "{dotted}");
        for id in ids {
            let name = m.name(id).unwrap();
            assert!(Dialect::OpenAiChat.name_rule().accepts(name), "{name}");
            assert_eq!(m.id(name), Some(id));
        }
        // Gemini and MCP accept dots: no mapping there.
        assert_eq!(
            NameMap::build(Dialect::GeminiJsonSchema, ids).name("Github.CreateIssue"),
            Some("Github.CreateIssue")
        );
        assert_eq!(
            NameMap::build(Dialect::Mcp, ids).name("Github.CreateIssue"),
            Some("Github.CreateIssue")
        );
    }

    #[test]
    fn long_and_badly_started_names_are_shortened_and_fixed() {
        let long = format!("toolkit.{}", "x".repeat(100));
        let m = NameMap::build(Dialect::Anthropic, [long.as_str()]);
        let name = m.name(&long).unwrap();
        assert!(name.len() <= 64 && Dialect::Anthropic.name_rule().accepts(name), "{name}");
        let g = NameMap::build(Dialect::GeminiOpenApi, ["1password-lookup"]);
        assert_eq!(g.name("1password-lookup"), Some("_1password-lookup"));
        assert_eq!(g.id("_1password-lookup"), Some("1password-lookup"));
    }
}
