//! The slug rule the providers' naming conventions share: a slug that starts with its
//! toolkit and a separator (`GMAIL_SEND_EMAIL`, `Github.GetRepository`).
//!
//! Owns only the comparison; which separators and case rules apply is each provider's
//! choice (its `ToolProvider::slug_belongs_to`), and tool-core's fan-out knows none of them.

/// Whether `slug` is `<toolkit><separator><something>`, the toolkit compared without case
/// when `fold_case` (`GMAIL_SEND_EMAIL` starts with `gmail` and `_`; `GMAILX_OTHER` does not).
pub(crate) fn slug_has_prefix(slug: &str, toolkit: &str, separator: char, fold_case: bool) -> bool {
    match (slug.get(..toolkit.len()), slug.get(toolkit.len()..)) {
        (Some(head), Some(rest)) if !toolkit.is_empty() && rest.len() > 1 && rest.starts_with(separator) => {
            if fold_case {
                head.eq_ignore_ascii_case(toolkit)
            } else {
                head == toolkit
            }
        }
        _ => false,
    }
}

#[cfg(test)]
mod tests {
    use super::slug_has_prefix;

    #[test]
    fn a_slug_starts_with_its_toolkit_and_a_separator() {
        assert!(slug_has_prefix("GMAIL_SEND_EMAIL", "gmail", '_', true));
        assert!(!slug_has_prefix("GMAIL_SEND_EMAIL", "gmail", '_', false));
        assert!(!slug_has_prefix("GMAILX_OTHER", "gmail", '_', true), "the separator must follow");
        assert!(!slug_has_prefix("GMAIL_", "gmail", '_', true), "something must follow it");
        assert!(slug_has_prefix("Github.GetRepository", "Github", '.', false));
        assert!(!slug_has_prefix("anything", "", '.', false));
    }
}
