//! How much of one result the model may see, and the one place a result over that is cut.
//!
//! Owns [`OutputBudget`] (a maximum, in bytes of UTF-8 unless a [`Tokenizer`] is configured,
//! then in its tokens), the size syntax (`16KiB`, [`OutputBudget::parse`]) and
//! [`ModelOutput::bounded`]: over budget, what the model sees keeps its head and its tail, with a
//! marker between them saying how much was left out and how to get the rest. Every provider's
//! tool-result format (OpenAI Chat and Responses, Anthropic, Gemini, MCP) writes the output this
//! returns, so none of them decides anything about size. Text is never cut inside a character;
//! a JSON output over budget becomes text (never JSON cut into something that is not JSON);
//! content parts that cannot be cut (media, links, provider parts) are kept whole or left out.
//! Which budget applies to a call (the tool's own, or the registry's default) is the
//! registry's; the raw output, the display and transcript views are never bounded.

use std::borrow::Cow;
use std::fmt;
use std::sync::Arc;

use crate::model_output::{ContentPart, ModelOutput, ResourceContents};

/// Counts the tokens of a text, for a budget in tokens instead of bytes.
///
/// Toolsmith ships no tokenizer: without one, budgets are approximate, by bytes of UTF-8.
///
/// ```
/// use std::sync::Arc;
/// use tool_core::budget::{OutputBudget, Tokenizer};
///
/// /// Whitespace-separated words, a rough stand-in for a real tokenizer.
/// #[derive(Debug)]
/// struct Words;
/// impl Tokenizer for Words {
///     fn count(&self, text: &str) -> usize {
///         text.split_whitespace().count()
///     }
/// }
/// let budget = OutputBudget::tokens(100, Arc::new(Words));
/// assert_eq!(budget.unit(), "tokens");
/// ```
pub trait Tokenizer: Send + Sync + fmt::Debug {
    /// The number of tokens `text` takes.
    fn count(&self, text: &str) -> usize;
}

/// The most a model may see of one tool result.
///
/// ```
/// use tool_core::budget::OutputBudget;
/// use tool_core::ModelOutput;
///
/// let budget = OutputBudget::parse("1KiB").unwrap();
/// assert_eq!(budget.max(), 1024);
/// let long = ModelOutput::text("é".repeat(2000));
/// let cut = long.bounded(&budget, "Ask for less.").unwrap();
/// assert_eq!(cut.total, 4000);
/// let ModelOutput::Text(text) = &cut.output else { panic!() };
/// assert!(text.contains("bytes left out here. Ask for less."));
/// assert!(ModelOutput::text("short").bounded(&budget, "").is_none());
/// ```
#[derive(Clone)]
pub struct OutputBudget {
    max: usize,
    tokenizer: Option<Arc<dyn Tokenizer>>,
}

impl fmt::Debug for OutputBudget {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "OutputBudget({} {})", self.max, self.unit())
    }
}

impl PartialEq for OutputBudget {
    fn eq(&self, other: &Self) -> bool {
        self.max == other.max && self.tokenizer.is_some() == other.tokenizer.is_some()
    }
}

/// A size that is not one (`max_model_output`, `--max-model-output`).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("`{given}` is not a model output budget: {why}; write a size such as `16KiB`, `64kB` or `20000`")]
pub struct SizeError {
    /// What was given.
    pub given: String,
    /// What is wrong with it.
    pub why: String,
}

/// A result over budget, as the model sees it.
#[derive(Debug, Clone, PartialEq)]
pub struct Cut {
    /// What the model sees: the head, the marker, the tail.
    pub output: ModelOutput,
    /// How much was left out, in the budget's unit.
    pub omitted: usize,
    /// The whole output's size, in the budget's unit.
    pub total: usize,
}

impl OutputBudget {
    /// At most `max` bytes of UTF-8 (at least 1).
    pub fn bytes(max: usize) -> Self {
        OutputBudget {
            max: max.max(1),
            tokenizer: None,
        }
    }

    /// At most `max` tokens, as `tokenizer` counts them (at least 1).
    pub fn tokens(max: usize, tokenizer: Arc<dyn Tokenizer>) -> Self {
        OutputBudget {
            max: max.max(1),
            tokenizer: Some(tokenizer),
        }
    }

    /// A budget in bytes written as a size: `16KiB`, `64kB`, `1MiB`, `20000`.
    pub fn parse(text: &str) -> Result<Self, SizeError> {
        let error = |why: String| SizeError {
            given: text.to_owned(),
            why,
        };
        let size: bytesize::ByteSize = text.trim().parse().map_err(error)?;
        match usize::try_from(size.as_u64()) {
            Ok(0) => Err(error("it must be at least one byte".into())),
            Ok(max) => Ok(OutputBudget::bytes(max)),
            Err(_) => Err(error("it is larger than this machine can hold".into())),
        }
    }

    /// The same measure (bytes, or the same tokenizer's tokens) with another maximum.
    pub fn with_max(&self, max: usize) -> Self {
        OutputBudget {
            max: max.max(1),
            tokenizer: self.tokenizer.clone(),
        }
    }

    /// The budget of a tool that sets `tool_max` (in the default's unit) under a registry
    /// default: the tool's own maximum wins.
    pub fn resolve(tool_max: Option<usize>, default: Option<&OutputBudget>) -> Option<OutputBudget> {
        match (tool_max, default) {
            (Some(max), Some(default)) => Some(default.with_max(max)),
            (Some(max), None) => Some(OutputBudget::bytes(max)),
            (None, default) => default.cloned(),
        }
    }

    /// The maximum, in [`Self::unit`]s.
    pub fn max(&self) -> usize {
        self.max
    }

    /// `"bytes"`, or `"tokens"` when a tokenizer counts.
    pub fn unit(&self) -> &'static str {
        if self.tokenizer.is_some() { "tokens" } else { "bytes" }
    }

    /// The size of `text` in this budget's unit.
    pub fn measure(&self, text: &str) -> usize {
        match &self.tokenizer {
            Some(t) => t.count(text),
            None => text.len(),
        }
    }

    /// Whether `text` fits the whole budget.
    pub fn admits(&self, text: &str) -> bool {
        self.measure(text) <= self.max
    }

    /// The length in bytes of the longest head (or tail, `from_end`) of `text` within `room`
    /// units, cut between characters.
    fn fit(&self, text: &str, room: usize, from_end: bool) -> usize {
        let piece = |len: usize| if from_end { &text[text.len() - len..] } else { &text[..len] };
        let boundary = |len: usize| {
            let mut len = len.min(text.len());
            while !text.is_char_boundary(if from_end { text.len() - len } else { len }) {
                len -= 1;
            }
            len
        };
        match &self.tokenizer {
            None => boundary(room),
            Some(t) => {
                // The longest piece whose token count fits: binary search over its length.
                let (mut lo, mut hi) = (0, text.len());
                while lo < hi {
                    let mid = boundary(lo + (hi - lo).div_ceil(2));
                    if mid <= lo {
                        break;
                    }
                    if t.count(piece(mid)) <= room {
                        lo = mid;
                    } else {
                        hi = mid - 1;
                    }
                }
                boundary(lo)
            }
        }
    }
}

/// A part's payload: what its size is counted on.
fn payload(part: &ContentPart) -> Cow<'_, str> {
    Cow::Borrowed(match part {
        ContentPart::Text { text } => text,
        ContentPart::Resource { contents, .. } => match contents {
            ResourceContents::Text(t) | ResourceContents::Blob(t) => t,
        },
        ContentPart::ImageData { data, .. } | ContentPart::FileData { data, .. } | ContentPart::AudioData { data, .. } => data,
        ContentPart::ImageUrl { url } | ContentPart::FileUrl { url, .. } => url,
        ContentPart::FileId { file_id } | ContentPart::ImageFileId { file_id } => file_id,
        ContentPart::ResourceLink { uri, .. } => uri,
        ContentPart::Custom { provider_options } => return Cow::Owned(provider_options.to_string()),
    })
}

/// The text of a part that can be cut (text, an embedded text resource), or `None`.
fn cuttable(part: &ContentPart) -> Option<&str> {
    match part {
        ContentPart::Text { text }
        | ContentPart::Resource {
            contents: ResourceContents::Text(text),
            ..
        } => Some(text),
        _ => None,
    }
}

/// The same part holding `text` instead of its own (a part [`cuttable`] says can be cut).
fn with_text(part: &ContentPart, text: &str) -> ContentPart {
    match part {
        ContentPart::Resource { uri, media_type, .. } => ContentPart::Resource {
            uri: uri.clone(),
            media_type: media_type.clone(),
            contents: ResourceContents::Text(text.to_owned()),
        },
        _ => ContentPart::text(text),
    }
}

/// What is kept of a list of parts: whole parts and cut pieces from the front, and from the back.
struct Kept {
    head: Vec<ContentPart>,
    tail: Vec<ContentPart>,
    size: usize,
    /// Parts of which nothing is kept.
    left_out: usize,
}

/// Keeps parts from the front within half the budget and from the back within the rest; a part
/// that can be cut is cut at the edge, one that cannot is left out whole.
fn keep(parts: &[ContentPart], budget: &OutputBudget) -> Kept {
    let head_room = budget.max.div_ceil(2);
    let mut kept = Kept {
        head: Vec::new(),
        tail: Vec::new(),
        size: 0,
        left_out: 0,
    };
    // Front: whole parts while they fit, then the head of the first one that does not.
    let (mut front, mut taken) = (0, 0);
    let mut used = 0;
    while let Some(part) = parts.get(front) {
        let size = budget.measure(&payload(part));
        if used + size <= head_room {
            kept.head.push(part.clone());
            used += size;
            front += 1;
            continue;
        }
        if let Some(text) = cuttable(part) {
            taken = budget.fit(text, head_room - used, false);
            if taken > 0 {
                kept.head.push(with_text(part, &text[..taken]));
                used += budget.measure(&text[..taken]);
            }
        }
        break;
    }
    let tail_room = budget.max.saturating_sub(used);
    kept.size = used;
    let head_cut = usize::from(taken > 0);
    // Back: whole parts while they fit (down to the one the front cut), then a tail.
    let (mut back, mut used, mut tail_cut) = (parts.len(), 0, 0);
    while back > front {
        let part = &parts[back - 1];
        let rest = match cuttable(part) {
            Some(text) if back - 1 == front => Some(&text[taken..]),
            Some(text) => Some(text),
            None => None,
        };
        let size = rest.map_or_else(|| budget.measure(&payload(part)), |t| budget.measure(t));
        if used + size <= tail_room && !(back - 1 == front && taken > 0) {
            kept.tail.push(part.clone());
            used += size;
            back -= 1;
            continue;
        }
        if let Some(text) = rest {
            let len = budget.fit(text, tail_room - used, true);
            if len > 0 {
                let piece = &text[text.len() - len..];
                kept.tail.push(with_text(part, piece));
                used += budget.measure(piece);
                tail_cut = usize::from(back - 1 != front || taken == 0);
            }
        }
        break;
    }
    kept.tail.reverse();
    kept.size += used;
    kept.left_out = (back - front).saturating_sub(head_cut + tail_cut);
    kept
}

impl ModelOutput {
    /// What the model sees of this output under `budget`: `None` when it fits, else its head and
    /// tail with a marker between them saying how much was left out, then `hint` (how to get
    /// the rest). Text keeps its kind; JSON becomes text (its head and tail are not JSON);
    /// content keeps whole parts from both ends, cuts a text part at the edge and leaves out
    /// media, links and provider parts that do not fit, naming them in the marker.
    pub fn bounded(&self, budget: &OutputBudget, hint: &str) -> Option<Cut> {
        let (parts, kind) = match self {
            ModelOutput::Content(parts) => (Cow::Borrowed(parts.as_slice()), Kind::Content),
            ModelOutput::Text(_) | ModelOutput::Json(_) => (Cow::Owned(vec![ContentPart::text(self.to_text())]), Kind::Text),
            ModelOutput::ErrorText(_) | ModelOutput::ErrorJson(_) => (Cow::Owned(vec![ContentPart::text(self.to_text())]), Kind::Error),
        };
        let total: usize = parts.iter().map(|p| budget.measure(&payload(p))).sum();
        if total <= budget.max {
            return None;
        }
        let kept = keep(&parts, budget);
        let omitted = total.saturating_sub(kept.size);
        let dropped = match kind {
            Kind::Content if kept.left_out > 0 => format!(", with {} of {} content parts", kept.left_out, parts.len()),
            _ => String::new(),
        };
        let marker = format!("[… {omitted} of {total} {} left out here{dropped}. {hint}]", budget.unit());
        let output = match kind {
            Kind::Content => ModelOutput::Content(kept.head.into_iter().chain([ContentPart::text(marker)]).chain(kept.tail).collect()),
            Kind::Text | Kind::Error => {
                let text = |parts: &[ContentPart]| parts.iter().filter_map(cuttable).collect::<String>();
                let joined = format!("{}\n{marker}\n{}", text(&kept.head), text(&kept.tail));
                match kind {
                    Kind::Error => ModelOutput::ErrorText(joined),
                    _ => ModelOutput::Text(joined),
                }
            }
        };
        Some(Cut { output, omitted, total })
    }
}

/// The shape a cut output keeps.
#[derive(Clone, Copy)]
enum Kind {
    Text,
    Error,
    Content,
}

#[cfg(test)]
#[path = "budget_tests.rs"]
mod tests;
