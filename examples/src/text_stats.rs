//! `text-stats`: counts and word frequencies of a text.

use std::collections::HashMap;

use tool_core::prelude::*;

/// Default number of most frequent words reported.
pub const DEFAULT_TOP_N: u32 = 10;
/// Largest accepted `top_n`.
pub const MAX_TOP_N: u32 = 100;
/// Longest accepted text, in bytes (UTF-8).
pub const MAX_TEXT_BYTES: usize = 1 << 20;

/// A word and how often it occurs.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, JsonSchema)]
pub struct WordCount {
    /// The word, lower-cased.
    pub word: String,
    /// Occurrences in the text.
    pub count: usize,
}

/// Statistics of a text.
#[derive(Debug, Clone, PartialEq, Serialize, JsonSchema)]
pub struct TextStats {
    /// Characters (Unicode scalar values), whitespace included.
    pub characters: usize,
    /// Characters that are not whitespace.
    pub characters_no_spaces: usize,
    /// Words: runs of letters and digits, with inner apostrophes and hyphens (`don't`, `e-mail`).
    pub words: usize,
    /// Distinct words, ignoring case.
    pub unique_words: usize,
    /// Lines (a final line break does not start a new line; empty text has 0).
    pub lines: usize,
    /// Sentences: runs of text ending in `.`, `!`, `?`, `…` or their full-width forms, plus a
    /// final unterminated run that contains a word.
    pub sentences: usize,
    /// Paragraphs: blocks separated by blank lines.
    pub paragraphs: usize,
    /// Mean word length in characters, rounded to 2 decimals (0 when there are no words).
    pub average_word_length: f64,
    /// The most frequent words, most frequent first, ties in alphabetical order.
    pub top_words: Vec<WordCount>,
}

fn is_word_char(c: char) -> bool {
    c.is_alphanumeric()
}

fn is_joiner(c: char) -> bool {
    matches!(c, '\'' | '’' | '-')
}

/// The words of `text`, in order.
pub fn words(text: &str) -> Vec<&str> {
    let mut out = Vec::new();
    let mut start: Option<usize> = None;
    let mut chars = text.char_indices().peekable();
    while let Some((i, c)) = chars.next() {
        if is_word_char(c) {
            start.get_or_insert(i);
            continue;
        }
        // An apostrophe or hyphen joins two word characters (`don't`, `well-known`).
        let next_is_word = chars.peek().is_some_and(|&(_, n)| is_word_char(n));
        if start.is_some() && is_joiner(c) && next_is_word {
            continue;
        }
        if let Some(s) = start.take() {
            out.push(&text[s..i]);
        }
    }
    if let Some(s) = start {
        out.push(&text[s..]);
    }
    out
}

fn is_terminator(c: char) -> bool {
    matches!(c, '.' | '!' | '?' | '…' | '。' | '！' | '？')
}

fn count_sentences(text: &str) -> usize {
    let mut sentences = 0;
    let mut has_word = false;
    let mut chars = text.chars().peekable();
    while let Some(c) = chars.next() {
        if is_word_char(c) {
            has_word = true;
        } else if is_terminator(c) && has_word {
            // `...` and `?!` end one sentence; a terminator inside a token (`3.14`, `e.g`) does not.
            while chars
                .peek()
                .is_some_and(|&n| is_terminator(n) || matches!(n, '"' | '\'' | ')' | '”' | '’'))
            {
                chars.next();
            }
            if chars.peek().is_none_or(|n| n.is_whitespace()) || matches!(c, '。' | '！' | '？') {
                sentences += 1;
                has_word = false;
            }
        }
    }
    sentences + usize::from(has_word)
}

fn count_paragraphs(text: &str) -> usize {
    let mut paragraphs = 0;
    let mut in_paragraph = false;
    for line in text.lines() {
        if line.trim().is_empty() {
            in_paragraph = false;
        } else if !in_paragraph {
            paragraphs += 1;
            in_paragraph = true;
        }
    }
    paragraphs
}

/// Computes the statistics of `text` with the `top_n` most frequent words.
pub fn analyze(text: &str, top_n: usize) -> TextStats {
    let words = words(text);
    let mut frequency: HashMap<String, usize> = HashMap::new();
    let mut total_len = 0usize;
    for w in &words {
        total_len += w.chars().count();
        *frequency.entry(w.to_lowercase()).or_default() += 1;
    }
    let unique_words = frequency.len();
    let mut ranked: Vec<(String, usize)> = frequency.into_iter().collect();
    ranked.sort_by(|a, b| b.1.cmp(&a.1).then_with(|| a.0.cmp(&b.0)));
    let average_word_length = if words.is_empty() {
        0.0
    } else {
        (total_len as f64 / words.len() as f64 * 100.0).round() / 100.0
    };
    TextStats {
        characters: text.chars().count(),
        characters_no_spaces: text.chars().filter(|c| !c.is_whitespace()).count(),
        words: words.len(),
        unique_words,
        lines: text.lines().count(),
        sentences: count_sentences(text),
        paragraphs: count_paragraphs(text),
        average_word_length,
        top_words: ranked
            .into_iter()
            .take(top_n)
            .map(|(word, count)| WordCount { word, count })
            .collect(),
    }
}

/// Count the characters, words, sentences, lines and paragraphs of a text, with its most frequent words
///
/// Also reports the average word length.
/// Works for any language that separates words with spaces or punctuation. The text may be at
/// most 1 MiB (UTF-8).
#[tool(
    id = "text-stats",
    tags = ["text", "offline"],
    // A long text argument reaches Anthropic's streaming hooks as it is written.
    eager_input_streaming,
    mcp(read_only_hint = true, idempotent_hint = true, open_world_hint = false)
)]
pub async fn text_stats(
    /// The text to analyse (at most 1 MiB).
    text: String,
    /// How many of the most frequent words to report (default 10, at most 100; 0 for none).
    top_n: Option<u32>,
) -> Result<TextStats, ToolError> {
    let top_n = top_n.unwrap_or(DEFAULT_TOP_N);
    if top_n > MAX_TOP_N {
        return Err(ToolError::new(format!("top_n is {top_n}; it can be at most {MAX_TOP_N}.")));
    }
    if text.len() > MAX_TEXT_BYTES {
        return Err(ToolError::new(format!(
            "The text is {} bytes; the limit is {MAX_TEXT_BYTES} bytes (1 MiB). Send it in parts.",
            text.len()
        )));
    }
    Ok(analyze(&text, top_n as usize))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn words_keep_inner_apostrophes_and_hyphens() {
        assert_eq!(
            words("Don't stop—it's well-known, 'quoted' 3.14"),
            vec!["Don't", "stop", "it's", "well-known", "quoted", "3", "14"]
        );
        assert_eq!(words("안녕하세요, 세계!"), vec!["안녕하세요", "세계"]);
        assert!(words("  -- ... ").is_empty());
        assert_eq!(words("trailing-"), vec!["trailing"]);
    }

    #[test]
    fn sentences() {
        assert_eq!(count_sentences("Hello world. How are you? Fine!"), 3);
        assert_eq!(count_sentences("Wait... what?! Really"), 3);
        assert_eq!(count_sentences("Pi is 3.14 exactly."), 1);
        assert_eq!(count_sentences("He said \"stop.\" Then left."), 2);
        assert_eq!(count_sentences("你好。世界！"), 2);
        assert_eq!(count_sentences("..."), 0);
        assert_eq!(count_sentences(""), 0);
    }

    #[test]
    fn full_statistics() {
        let text = "The cat sat. The cat ran!\n\nA dog barked at the cat.\n";
        let s = analyze(text, 2);
        assert_eq!(s.characters, text.chars().count());
        assert_eq!(s.characters_no_spaces, text.chars().filter(|c| !c.is_whitespace()).count());
        assert_eq!(s.words, 12);
        assert_eq!(s.unique_words, 8);
        assert_eq!(s.lines, 3);
        assert_eq!(s.sentences, 3);
        assert_eq!(s.paragraphs, 2);
        // 3+3+3+3+3+3+1+3+6+2+3+3 = 36 characters over 12 words
        assert_eq!(s.average_word_length, 3.0);
        assert_eq!(
            s.top_words,
            vec![
                WordCount {
                    word: "cat".into(),
                    count: 3
                },
                WordCount {
                    word: "the".into(),
                    count: 3
                }
            ]
        );
    }

    #[test]
    fn empty_text() {
        let s = analyze("", 10);
        assert_eq!((s.characters, s.words, s.lines, s.sentences, s.paragraphs), (0, 0, 0, 0, 0));
        assert_eq!(s.average_word_length, 0.0);
        assert!(s.top_words.is_empty());
    }

    #[tokio::test]
    async fn top_n_is_optional_and_capped() {
        let r = Registry::global();
        let out = r
            .call("text-stats", json!({"text": "b a b"}), CallOptions::default())
            .await
            .unwrap();
        assert_eq!(
            out.value()["top_words"],
            json!([{"word": "b", "count": 2}, {"word": "a", "count": 1}])
        );
        let out = r
            .call("text-stats", json!({"text": "b a b", "top_n": 0}), CallOptions::default())
            .await
            .unwrap();
        assert_eq!(out.value()["top_words"], json!([]));
        let err = r
            .call("text-stats", json!({"text": "x", "top_n": 101}), CallOptions::default())
            .await
            .unwrap_err();
        assert!(err.message().contains("at most 100"), "{err}");
        let big = "word ".repeat(MAX_TEXT_BYTES / 5 + 1);
        let err = text_stats(big, None).await.unwrap_err();
        assert!(err.message().contains("the limit is 1048576 bytes"), "{err}");
        let err = r
            .call("text-stats", json!({"text": "x", "top_n": -1}), CallOptions::default())
            .await
            .unwrap_err();
        assert_eq!(err.issues()[0].path, "/top_n");
    }
}
