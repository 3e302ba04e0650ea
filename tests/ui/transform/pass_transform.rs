// Customer lookup: display and transcript transforms over the typed input, output, approval
// and error, returning `Value`, `Option<Value>` and `Result<Value, E>`.
use tool_core::prelude::*;
use tool_core::spec::{TransformPhase, TransformTarget};

#[derive(Debug, Deserialize, JsonSchema)]
pub struct Lookup {
    /// The customer's id, e.g. "c-42"
    pub customer_id: String,
}

#[derive(Debug, Serialize, JsonSchema)]
pub struct Customer {
    pub id: String,
    pub name: String,
    pub email: String,
}

fn display_input(input: &Lookup) -> Value {
    json!({ "label": format!("Looking up {}", input.customer_id) })
}

fn display_output(c: &Customer) -> Value {
    json!({ "card": { "name": c.name } })
}

fn transcript_output(c: &Customer) -> Option<Value> {
    (!c.email.is_empty()).then(|| json!(format!("Found {} <redacted>", c.name)))
}

fn transcript_approval(input: &Lookup) -> Result<Value, String> {
    if input.customer_id.is_empty() {
        Err("no id".into())
    } else {
        Ok(json!(format!("Allow looking up {}?", input.customer_id)))
    }
}

fn display_error(e: &ToolError) -> Value {
    json!({ "toast": e.message() })
}

fn display_delta(delta: &str) -> Value {
    json!(delta.len())
}

/// Look up a customer by id
#[tool(transform(
    display(input = display_input, input_delta = display_delta, output = display_output, error = display_error),
    transcript(output = transcript_output, approval = transcript_approval)
))]
pub async fn lookup_customer(input: Lookup) -> Result<Customer, ToolError> {
    if input.customer_id == "c-0" {
        return Err(ToolError::new("no such customer"));
    }
    Ok(Customer {
        id: input.customer_id,
        name: "Ada".into(),
        email: "ada@example.com".into(),
    })
}

pub fn main() {
    tokio::runtime::Runtime::new().unwrap().block_on(async {
        use TransformPhase as P;
        use TransformTarget as T;
        let registry = &Registry::from_module(module_path!()).unwrap();
        let tool = registry.get("lookup-customer").unwrap();
        let spec = tool.spec();
        for (t, p) in [
            (T::Display, P::Input),
            (T::Display, P::InputDelta),
            (T::Display, P::Output),
            (T::Display, P::Error),
            (T::Transcript, P::Output),
            (T::Transcript, P::Approval),
        ] {
            assert!(spec.has_transform(t, p), "{t:?} {p:?}");
        }
        assert!(!spec.has_transform(T::Transcript, P::Input));

        let out = registry
            .call("lookup-customer", json!({"customer_id": "c-42"}), CallOptions::default())
            .await
            .unwrap();
        assert_eq!(out.value()["email"], "ada@example.com");
        assert_eq!(out.display(), Some(&Ok(json!({"card": {"name": "Ada"}}))));
        assert_eq!(out.transcript(), Some(&Ok(json!("Found Ada <redacted>"))));

        let input = json!({"customer_id": "c-42"});
        assert_eq!(
            tool.transform(T::Display, P::Input, &input),
            Some(Ok(json!({"label": "Looking up c-42"})))
        );
        assert_eq!(tool.transform(T::Display, P::InputDelta, &json!("abc")), Some(Ok(json!(3))));
        assert_eq!(
            tool.transform(T::Transcript, P::Approval, &input),
            Some(Ok(json!("Allow looking up c-42?")))
        );
        let refused = tool.transform(T::Transcript, P::Approval, &json!({"customer_id": ""}));
        assert_eq!(refused.and_then(Result::err).map(|e| e.message().to_owned()).as_deref(), Some("no id"));
        assert_eq!(tool.transform(T::Transcript, P::Input, &input), None);

        let err = registry
            .call("lookup-customer", json!({"customer_id": "c-0"}), CallOptions::default())
            .await
            .unwrap_err();
        let shown = tool.transform(T::Display, P::Error, &serde_json::to_value(&err).unwrap());
        assert_eq!(shown, Some(Ok(json!({"toast": "no such customer"}))));
    });
}
