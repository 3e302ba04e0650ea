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
#[derive(Debug, Clone)]
pub struct ToolOutput {
    /// The raw output as JSON text, as the application receives it (`null` for `()`).
    pub json: Box<RawValue>,
    /// What the model sees, when the tool has a `to_model_output` (skipped for null output).
    pub model_output: Option<ModelOutput>,
    /// The output as the display target shows it, when a display output transform is set.
    pub display: Option<Result<Value, ToolError>>,
    /// The output as the transcript shows it, when a transcript output transform is set.
    pub transcript: Option<Result<Value, ToolError>>,
    /// What bounds the model's view of it: set by the registry when the call ran (see
    /// [`ToolOutput::with_budget`]); never serialised.
    pub bound: Option<OutputBound>,
    /// The output as a tree, when the tool built one for the registry's output check (which
    /// takes it); never cloned, compared or serialised.
    pub(crate) tree: OutputTree,
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
            model_output: self.model_output.clone(),
        }
        .serialize(s)
    }
}

impl<'de> Deserialize<'de> for ToolOutput {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        let wire = OutputWire::deserialize(d)?;
        Ok(ToolOutput {
            model_output: wire.model_output,
            ..ToolOutput::new(wire.result)
        })
    }
}

impl PartialEq for ToolOutput {
    fn eq(&self, other: &Self) -> bool {
        self.value() == other.value()
            && self.model_output == other.model_output
            && self.display == other.display
            && self.transcript == other.transcript
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
            model_output: None,
            display: None,
            transcript: None,
            bound: None,
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
        self.model_output.clone().unwrap_or_else(|| ModelOutput::Json(self.value()))
    }

    /// The cut the model receives when the output is over its call's budget (`None` within it,
    /// or without one), the marker ending with `hint(call id)`: how to get the rest.
    pub fn for_model_hinting(&self, hint: impl FnOnce(&str) -> String) -> Option<Cut> {
        let bound = self.bound.as_ref()?;
        self.full_model_output().bounded(&bound.budget, &hint(&bound.call_id))
    }

    /// The same output, its model view bounded by `budget` with `call_id` named as the call
    /// that holds the whole (what the registry sets on every call that ran).
    pub fn with_budget(mut self, budget: OutputBudget, call_id: impl Into<String>) -> Self {
        self.bound = Some(OutputBound {
            budget,
            call_id: call_id.into(),
        });
        self
    }

    /// The budget of the model's view of this output, when there is one.
    pub fn budget(&self) -> Option<&OutputBudget> {
        self.bound.as_ref().map(|b| &b.budget)
    }
}

fn null_json() -> Box<RawValue> {
    static NULL: std::sync::OnceLock<Box<RawValue>> = std::sync::OnceLock::new();
    NULL.get_or_init(|| RawValue::from_string("null".to_owned()).unwrap_or_else(|_| unreachable!("`null` is JSON")))
        .clone()
}
