//! A suspended call answered in parts: a tool whose resume type has several parts (each
//! property of its resume schema an object of its own: one question each) gets them one at a
//! time, from anyone who may resume it, on any instance sharing the store.
//!
//! Owns [`Runtime::answer_part`] and [`Parted`]. The parts given so far are kept with the
//! waiting call ([`PendingCall::answers`]), written under the call's claim (so two instances
//! giving parts at once both land: the second waits for the first's write), and the call
//! resumes ([`Runtime::resume`]) once the last part is in. Which parts a call is asked in is
//! [`PendingCall::parts`].

use std::time::Duration;

use serde_json::{Map, Value, json};

use super::decide::{Held, ResumeOptions};
use super::outcome::EventStream;
use super::pending::{PendingCall, PendingKind};
use super::store::StoreError;
use super::{Runtime, RuntimeError};
use crate::error::ToolError;

/// How often a part waits for another instance's write to the same call before it gives up.
const BUSY_TRIES: u32 = 40;

/// What a part of a suspended call's resume data came to.
pub enum Parted {
    /// Kept with the waiting call; these parts are still missing.
    Waiting {
        /// The parts not given yet, in the resume schema's order.
        missing: Vec<String>,
    },
    /// It was the last part: the call resumed with them all.
    Resumed(Box<EventStream>),
}

impl PendingCall {
    /// The parts a suspended call is asked in: the properties of its resume schema when every
    /// one is an object schema (each a question of its own), in the schema's order. Empty: the
    /// call is asked its resume data whole.
    pub fn parts(&self) -> Vec<String> {
        if self.kind != PendingKind::Suspended {
            return Vec::new();
        }
        let props = self
            .resume_schema
            .as_ref()
            .and_then(|s| s.get("properties"))
            .and_then(Value::as_object);
        let Some(props) = props.filter(|p| !p.is_empty()) else {
            return Vec::new();
        };
        let is_object = |k: &String| {
            self.part_schema(k)
                .is_some_and(|p| p.get("type").and_then(Value::as_str) == Some("object") && p.get("properties").is_some())
        };
        if !props.keys().all(is_object) {
            return Vec::new();
        }
        props.keys().cloned().collect()
    }

    /// The schema of the property `part` of the resume schema, a local reference
    /// (`#/$defs/…`, `#/definitions/…`, alone or as the one entry of an `allOf`) resolved.
    pub fn part_schema(&self, part: &str) -> Option<Value> {
        let root = self.resume_schema.as_ref()?;
        let mut schema = root.get("properties")?.get(part)?.clone();
        for _ in 0..4 {
            let one = schema
                .get("allOf")
                .and_then(Value::as_array)
                .filter(|a| a.len() == 1)
                .map(|a| a[0].clone());
            let reference = one
                .as_ref()
                .unwrap_or(&schema)
                .get("$ref")
                .and_then(Value::as_str)
                .map(str::to_owned);
            let Some(reference) = reference else { break };
            let target = reference.strip_prefix('#').and_then(|pointer| root.pointer(pointer))?.clone();
            let mut merged = target;
            // What the property says of itself (its title, description) is kept over the target's.
            for key in ["title", "description"] {
                if let (Some(said), Some(o)) = (schema.get(key).cloned(), merged.as_object_mut()) {
                    o.insert(key.to_owned(), said);
                }
            }
            schema = merged;
        }
        Some(schema)
    }

    /// The parts not given yet ([`parts`](Self::parts) without [`answers`](Self::answers)).
    pub fn missing_parts(&self) -> Vec<String> {
        self.parts().into_iter().filter(|p| !self.answers.contains_key(p)).collect()
    }

    /// Whether `value` is a valid part `part`: the resume schema with that property alone,
    /// required (its `$defs` kept), checks `{part: value}`. `Err`: why not, in words a model
    /// or a person reads.
    fn check_part(&self, part: &str, value: &Value) -> Result<(), String> {
        let Some(mut schema) = self.resume_schema.clone() else {
            return Ok(());
        };
        let property = schema.get("properties").and_then(|p| p.get(part)).cloned();
        let Some(object) = schema.as_object_mut() else { return Ok(()) };
        object.insert("properties".into(), json!({ part: property }));
        object.insert("required".into(), json!([part]));
        object.remove("additionalProperties");
        let validator = jsonschema::validator_for(&schema).map_err(|e| format!("the resume schema does not compile: {e}"))?;
        let candidate = json!({ part: value });
        let errors: Vec<String> = validator.iter_errors(&candidate).take(3).map(|e| e.to_string()).collect();
        match errors.is_empty() {
            true => Ok(()),
            false => Err(format!("the part `{part}` does not match the resume schema: {}", errors.join("; "))),
        }
    }
}

fn invalid(message: String) -> RuntimeError {
    RuntimeError::InvalidResume(ToolError::new(message))
}

impl Runtime {
    /// Gives parts of the resume data of the suspended call `id` (one value per part, see
    /// [`PendingCall::parts`]; a part given again replaces the earlier one). The parts are kept
    /// with the waiting call, so any instance sharing the store can take the rest; once every
    /// part is in, the call resumes with them as its resume data (checked against the resume
    /// schema as [`resume`](Self::resume) checks it; refused data leaves the call waiting with
    /// its parts) and `options` apply. A name that is not one of the call's parts is refused,
    /// and nothing is kept.
    pub async fn answer_part(&self, id: &str, given: Map<String, Value>, options: ResumeOptions) -> Result<Parted, RuntimeError> {
        let mut call = self.claim_for_parts(id).await?;
        let parts = call.parts();
        let unknown: Vec<&String> = given.keys().filter(|k| !parts.contains(k)).collect();
        if parts.is_empty() || !unknown.is_empty() {
            self.release(id).await;
            return Err(invalid(match parts.is_empty() {
                true => format!("The call `{id}` is not asked its resume data in parts."),
                false => format!(
                    "The call `{id}` has no part {}; its parts are: {}.",
                    unknown.iter().map(|k| format!("`{k}`")).collect::<Vec<_>>().join(", "),
                    parts.join(", ")
                ),
            }));
        }
        if let Some(why) = given.iter().find_map(|(part, value)| call.check_part(part, value).err()) {
            self.release(id).await;
            return Err(invalid(format!(
                "The call `{id}` cannot take this answer: {why}; nothing was kept."
            )));
        }
        let given_now: Vec<String> = given.keys().cloned().collect();
        call.answers.extend(given);
        let missing = call.missing_parts();
        // Written back as waiting, which ends this claim.
        let saved = self.inner.store.save(&call).await;
        drop(Held(id.to_owned()));
        saved?;
        if !missing.is_empty() {
            return Ok(Parted::Waiting { missing });
        }
        let data = Value::Object(call.answers);
        match self.resume(id, data, options).await {
            Ok(run) => Ok(Parted::Resumed(Box::new(run))),
            // Another instance's last part resumed it first: nothing is missing any more.
            Err(RuntimeError::UnknownCall(_) | RuntimeError::Store(StoreError::Busy(_))) => Ok(Parted::Waiting { missing }),
            // The parts together do not make valid resume data: the ones given now are asked
            // again (the call never waits with every part in and nothing left to ask).
            Err(refused @ RuntimeError::InvalidResume(_)) => {
                let mut call = self.claim_for_parts(id).await?;
                call.answers.retain(|part, _| !given_now.contains(part));
                let saved = self.inner.store.save(&call).await;
                drop(Held(id.to_owned()));
                saved?;
                Err(refused)
            }
            Err(e) => Err(e),
        }
    }

    /// Claims a suspended call to write its parts, waiting a little while another instance
    /// writes its own.
    async fn claim_for_parts(&self, id: &str) -> Result<PendingCall, RuntimeError> {
        let store = &self.inner.store;
        let mut tries = 0;
        loop {
            let hold = super::reconcile::active().hold(id);
            match store.claim(id).await {
                Ok(Some(call)) if call.kind == PendingKind::Suspended => {
                    hold.keep();
                    return Ok(call);
                }
                Ok(Some(call)) => {
                    hold.keep();
                    self.release(id).await;
                    return Err(RuntimeError::WrongKind {
                        id: id.to_owned(),
                        waits: call.kind.waits_for(),
                        asked: "parts of resume data",
                    });
                }
                Ok(None) => return Err(RuntimeError::UnknownCall(id.to_owned())),
                Err(StoreError::Busy(_)) if tries < BUSY_TRIES => {
                    tries += 1;
                    tokio::time::sleep(Duration::from_millis(25)).await;
                }
                Err(e) => return Err(e.into()),
            }
        }
    }
}
