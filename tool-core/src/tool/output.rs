//! What a call produced: [`ToolOutput`] (the raw JSON as the application receives it, what
//! the model sees, the display and transcript views) and [`OutputBound`] (the budget that cuts
//! the model's view). It runs and validates nothing.

use std::fmt;

use serde::{Deserialize, Serialize};
use serde_json::Value;
use serde_json::value::RawValue;

use crate::budget::{Cut, OutputBudget};
use crate::error::ToolError;
use crate::json::Node;
use crate::model_output::ModelOutput;

/// What a successful call produced.
///
/// Serialised as `{"result": <output>, "model_output"?: …}` (the shape of a result event); the
/// views' transform results stay in the process.
///
/// The raw JSON is a field; the parts most calls lack (the model's view, the display and
/// transcript views, the budget) sit behind one pointer and are read and set through methods,
/// so a call's output stays small as it moves from the body to its caller.
///
/// ```
/// use tool_core::{ModelOutput, tool::ToolOutput};
/// let mut out = ToolOutput::new(serde_json::json!({"rows": 3}));
/// assert!(out.model_output().is_none() && out.display().is_none());
/// out.set_model_output(Some(ModelOutput::Text("3 rows".into())));
/// assert_eq!(out.for_model(), ModelOutput::Text("3 rows".into()));
/// assert_eq!(out.value(), serde_json::json!({"rows": 3}));
/// ```
#[derive(Debug, Clone)]
pub struct ToolOutput {
    /// The raw output as JSON text, as the application receives it (`null` for `()`).
    pub json: Box<RawValue>,
    /// The model output, views and bound, when any is set.
    views: Option<Box<Views>>,
    /// The output as a tree, when the tool built one for the registry's output check (which
    /// takes it); never cloned, compared or serialised.
    pub(crate) tree: OutputTree,
}

/// The parts of an output most calls lack.
#[derive(Debug, Clone, Default, PartialEq)]
struct Views {
    model_output: Option<ModelOutput>,
    display: Option<Result<Value, ToolError>>,
    transcript: Option<Result<Value, ToolError>>,
    bound: Option<OutputBound>,
}

/// The tree of an output a typed tool serialised for the output check ([`crate::json::to_tree`]),
/// so the check does not parse the text back.
#[derive(Default)]
pub(crate) struct OutputTree(pub(crate) Option<Node<'static>>);

impl Clone for OutputTree {
    fn clone(&self) -> Self {
        // Only the check reads it, once.
        OutputTree(None)
    }
}

impl fmt::Debug for OutputTree {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(if self.0.is_some() {
            "OutputTree(built)"
        } else {
            "OutputTree(none)"
        })
    }
}

/// A call's model-output budget, and the call the marker names as holding the whole result.
#[derive(Debug, Clone, PartialEq)]
pub struct OutputBound {
    /// The budget.
    pub budget: OutputBudget,
    /// The call whose full result the application keeps.
    pub call_id: String,
}

/// The serialised shape of a [`ToolOutput`].
#[derive(Serialize, Deserialize)]
struct OutputWire {
    result: Value,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    model_output: Option<ModelOutput>,
}

impl Serialize for ToolOutput {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        OutputWire {
            result: self.value(),
            model_output: self.model_output().cloned(),
        }
        .serialize(s)
    }
}

impl<'de> Deserialize<'de> for ToolOutput {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        let wire = OutputWire::deserialize(d)?;
        let mut output = ToolOutput::new(wire.result);
        output.set_model_output(wire.model_output);
        Ok(output)
    }
}

impl PartialEq for ToolOutput {
    fn eq(&self, other: &Self) -> bool {
        let (empty, empty_too) = (Views::default(), Views::default());
        let (a, b) = (
            self.views.as_deref().unwrap_or(&empty),
            other.views.as_deref().unwrap_or(&empty_too),
        );
        self.value() == other.value() && a.model_output == b.model_output && a.display == b.display && a.transcript == b.transcript
    }
}

impl ToolOutput {
    /// A plain output with no model output and no transforms.
    pub fn new(value: Value) -> Self {
        // A `null` (a tool with nothing to say) is copied, not serialised through a buffer.
        if value.is_null() {
            return Self::from_json(null_json());
        }
        Self::from_json(serde_json::value::to_raw_value(&value).unwrap_or_else(|_| null_json()))
    }

    /// A plain output from JSON text already produced.
    pub fn from_json(json: Box<RawValue>) -> Self {
        ToolOutput {
            json,
            views: None,
            tree: OutputTree(None),
        }
    }

    /// The raw output as a JSON value.
    pub fn value(&self) -> Value {
        serde_json::from_str(self.json.get()).unwrap_or(Value::Null)
    }

    /// Whether the output is `null` (a `()` tool).
    pub fn is_null(&self) -> bool {
        self.json.get() == "null"
    }

    /// What the model receives: the `to_model_output` result, or the raw value as JSON; within
    /// the call's budget when it has one (its head and tail, with a marker saying what was left
    /// out: [`ModelOutput::bounded`]). The raw output ([`Self::value`]) and the views are never
    /// bounded: the application always has the whole result.
    pub fn for_model(&self) -> ModelOutput {
        let hint = |call_id: &str| {
            format!(
                "The application keeps the full result of call `{call_id}`; to see another part, call the tool again asking for less (a narrower query, a page)."
            )
        };
        self.for_model_hinting(hint)
            .map(|cut| cut.output)
            .unwrap_or_else(|| self.full_model_output())
    }

    /// What the model would receive with no budget.
    pub fn full_model_output(&self) -> ModelOutput {
        self.model_output().cloned().unwrap_or_else(|| ModelOutput::Json(self.value()))
    }

    /// The cut the model receives when the output is over its call's budget (`None` within it,
    /// or without one), the marker ending with `hint(call id)`: how to get the rest.
    pub fn for_model_hinting(&self, hint: impl FnOnce(&str) -> String) -> Option<Cut> {
        let bound = self.bound()?;
        self.full_model_output().bounded(&bound.budget, &hint(&bound.call_id))
    }

    /// The same output, its model view bounded by `budget` with `call_id` named as the call
    /// that holds the whole (what the registry sets on every call that ran).
    pub fn with_budget(mut self, budget: OutputBudget, call_id: impl Into<String>) -> Self {
        self.views_mut().bound = Some(OutputBound {
            budget,
            call_id: call_id.into(),
        });
        self
    }

    /// The budget of the model's view of this output, when there is one.
    pub fn budget(&self) -> Option<&OutputBudget> {
        self.bound().map(|b| &b.budget)
    }

    /// What the model sees, when the tool has a `to_model_output` (none for a null output).
    pub fn model_output(&self) -> Option<&ModelOutput> {
        self.views.as_ref()?.model_output.as_ref()
    }

    /// Sets (or clears) what the model sees.
    pub fn set_model_output(&mut self, model_output: Option<ModelOutput>) {
        self.set(model_output, |v| &mut v.model_output);
    }

    /// The same output with `model_output` as what the model sees.
    pub fn with_model_output(mut self, model_output: ModelOutput) -> Self {
        self.set_model_output(Some(model_output));
        self
    }

    /// The output as the display target shows it, when a display output transform is set.
    pub fn display(&self) -> Option<&Result<Value, ToolError>> {
        self.views.as_ref()?.display.as_ref()
    }

    /// Sets (or clears) the display view.
    pub fn set_display(&mut self, display: Option<Result<Value, ToolError>>) {
        self.set(display, |v| &mut v.display);
    }

    /// The output as the transcript shows it, when a transcript output transform is set.
    pub fn transcript(&self) -> Option<&Result<Value, ToolError>> {
        self.views.as_ref()?.transcript.as_ref()
    }

    /// Sets (or clears) the transcript view.
    pub fn set_transcript(&mut self, transcript: Option<Result<Value, ToolError>>) {
        self.set(transcript, |v| &mut v.transcript);
    }

    /// What bounds the model's view of it: set by the registry when the call ran (see
    /// [`ToolOutput::with_budget`]); never serialised.
    pub fn bound(&self) -> Option<&OutputBound> {
        self.views.as_ref()?.bound.as_ref()
    }

    /// Sets (or clears) the bound of the model's view.
    pub fn set_bound(&mut self, bound: Option<OutputBound>) {
        self.set(bound, |v| &mut v.bound);
    }

    /// Sets one optional part; clearing one that was never set allocates nothing.
    fn set<T>(&mut self, value: Option<T>, field: impl FnOnce(&mut Views) -> &mut Option<T>) {
        match (value, &mut self.views) {
            (None, None) => {}
            (None, Some(views)) => *field(views) = None,
            (Some(value), _) => *field(self.views_mut()) = Some(value),
        }
    }

    fn views_mut(&mut self) -> &mut Views {
        self.views.get_or_insert_with(Box::default)
    }
}

fn null_json() -> Box<RawValue> {
    static NULL: std::sync::OnceLock<Box<RawValue>> = std::sync::OnceLock::new();
    NULL.get_or_init(|| RawValue::from_string("null".to_owned()).unwrap_or_else(|_| unreachable!("`null` is JSON")))
        .clone()
}

// A call's output moves from the body to its caller several times: its rare parts stay
// behind one pointer so that each move is a few words.
const _: () = assert!(std::mem::size_of::<ToolOutput>() <= 56);

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn optional_parts_are_set_cleared_and_compared() {
        let mut out = ToolOutput::new(serde_json::json!(1));
        out.set_display(None);
        assert!(out.views.is_none(), "clearing a part never set allocates nothing");
        out.set_display(Some(Ok(serde_json::json!("one"))));
        out.set_transcript(Some(Err(ToolError::new("hidden"))));
        assert_eq!(out.display(), Some(&Ok(serde_json::json!("one"))));
        assert!(out.transcript().is_some_and(Result::is_err));
        assert!(out.model_output().is_none() && out.bound().is_none());
        let copy = out.clone();
        assert_eq!(copy, out);
        out.set_display(None);
        assert!(out.display().is_none() && out.transcript().is_some());
        assert_ne!(copy, out, "a view is part of the comparison");
        out.set_transcript(None);
        assert_eq!(out, ToolOutput::new(serde_json::json!(1)), "no parts compares equal to never set");
        let bounded = out.with_budget(OutputBudget::bytes(10), "c1");
        assert_eq!(bounded.bound().map(|b| b.call_id.as_str()), Some("c1"));
    }
}
