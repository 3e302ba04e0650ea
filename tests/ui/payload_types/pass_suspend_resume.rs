// `suspend = T` (Serialize + Deserialize: suspended calls are stored and read back) and `resume = U`
// put their schemas in the spec; a resume transform receives `&U`
// and a suspend transform `&T`.
use tool_core::prelude::*;
use tool_core::spec::{TransformPhase, TransformTarget};

#[derive(Serialize, Deserialize, JsonSchema)]
pub struct AskUser {
    /// The question to put to the user
    pub question: String,
}

#[derive(Deserialize, JsonSchema)]
pub struct Answer {
    /// Whether the user confirmed
    pub confirmed: bool,
}

fn show_question(ask: &AskUser) -> Value {
    json!(ask.question)
}

fn show_answer(answer: &Answer) -> Value {
    json!(if answer.confirmed { "confirmed" } else { "declined" })
}

/// Book a flight, asking the user to confirm
#[tool(suspend = AskUser, resume = Answer, transform(display(suspend = show_question, resume = show_answer)))]
pub async fn book_flight(flight: String) -> String {
    format!("booked {flight}")
}

pub fn main() {
    tokio::runtime::Runtime::new().unwrap().block_on(async {
        let registry = &Registry::from_module(module_path!()).unwrap();
        let tool = registry.get("book-flight").unwrap();
        let spec = tool.spec();
        let suspend = spec.suspend_schema.clone().expect("suspend schema");
        assert_eq!(suspend["properties"]["question"]["description"], "The question to put to the user");
        let resume = spec.resume_schema.clone().expect("resume schema");
        assert_eq!(resume["required"], json!(["confirmed"]));
        assert!(spec.request_context_schema.is_none());

        assert_eq!(
            tool.transform(TransformTarget::Display, TransformPhase::Resume, &json!({"confirmed": true})),
            Some(Ok(json!("confirmed")))
        );
        assert!(spec.has_transform(TransformTarget::Display, TransformPhase::Suspend));
        assert_eq!(
            show_question(&AskUser {
                question: "Book AF12?".into()
            }),
            json!("Book AF12?")
        );

        let out = registry
            .call("book-flight", json!({"flight": "AF12"}), CallOptions::default())
            .await
            .unwrap();
        assert_eq!(out.value(), json!("booked AF12"));

        // Without `suspend`/`resume` there are no payload schemas.
        assert!(registry.get("plain").unwrap().spec().suspend_schema.is_none());
        assert!(registry.get("plain").unwrap().spec().resume_schema.is_none());
    });
}

/// A tool with no payload types
#[tool]
pub async fn plain() {}
