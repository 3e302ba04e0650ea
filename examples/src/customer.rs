//! The seed document's `transform` example: `lookup-customer`.
//!
//! The tool receives the raw input (including an internal storage path) and returns the raw
//! record (including an API key and a debug score) to the application. What the UI stream
//! (`display`) and the user-visible transcript (`transcript`) show is rewritten: only the
//! customer id going in, only the display name coming out, and a fixed message on failure.

use tool_core::prelude::*;

/// The customer to look up.
#[derive(Debug, Clone, PartialEq, Deserialize, Serialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct CustomerQuery {
    /// The customer's id, e.g. `cus_001` (at most 64 characters).
    pub customer_id: String,
    /// Internal storage path of the customer record, e.g. `/crm/eu/customers` (at most 1024
    /// characters). Never shown to users.
    pub internal_path: String,
}

/// A customer record, as the application receives it.
#[derive(Debug, Clone, PartialEq, Serialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct Customer {
    /// The name shown to users.
    pub display_name: String,
    /// The customer's API key. Secret: the display and transcript transforms drop it.
    pub api_key: String,
    /// Internal risk score between 0 and 1, for debugging.
    pub debug_score: f64,
}

/// Longest accepted `customerId`, in characters.
pub const MAX_CUSTOMER_ID_CHARS: usize = 64;
/// Longest accepted `internalPath`, in characters.
pub const MAX_INTERNAL_PATH_CHARS: usize = 1_024;

/// `(customer_id, display_name, api_key, debug_score)`: the offline customer store.
const CUSTOMERS: &[(&str, &str, &str, f64)] = &[
    ("cus_001", "Acme", "secret-value", 0.97),
    ("cus_002", "Globex", "sk_test_globex_5f2a", 0.42),
    ("cus_003", "Initech", "sk_test_initech_91c0", 0.13),
];

/// Looks up a customer
///
/// Returns the customer's display name, API key and internal debug score. Users only ever see
/// the customer id and the display name.
#[tool(
    id = "lookup-customer",
    tags = ["crm"],
    transform(
        display(input = visible_input, output = visible_output, error = visible_error),
        transcript(input = visible_input, output = visible_output, error = visible_error),
    )
)]
pub async fn lookup_customer(query: CustomerQuery) -> Result<Customer, ToolError> {
    for (field, text, limit) in [
        ("customerId", &query.customer_id, MAX_CUSTOMER_ID_CHARS),
        ("internalPath", &query.internal_path, MAX_INTERNAL_PATH_CHARS),
    ] {
        let chars = text.chars().count();
        if chars > limit {
            return Err(ToolError::new(format!("{field} is {chars} characters long; the limit is {limit}.")));
        }
    }
    // A real backend would read the record at `query.internal_path`; the offline store is flat.
    tracing::debug!(path = %query.internal_path, "looking up customer {}", query.customer_id);
    CUSTOMERS
        .iter()
        .find(|(id, ..)| *id == query.customer_id)
        .map(|&(_, name, key, score)| Customer {
            display_name: name.to_owned(),
            api_key: key.to_owned(),
            debug_score: score,
        })
        .ok_or_else(|| {
            let ids: Vec<&str> = CUSTOMERS.iter().map(|c| c.0).collect();
            ToolError::new(format!(
                "No customer with id `{}`. Known ids: {}.",
                query.customer_id,
                ids.join(", ")
            ))
        })
}

/// The input as users see it: the customer id only (the internal path stays hidden).
pub fn visible_input(input: &CustomerQuery) -> Value {
    json!({ "customerId": input.customer_id })
}

/// The output as users see it: the display name only (no API key, no debug score).
pub fn visible_output(output: &Customer) -> Value {
    json!({ "displayName": output.display_name })
}

/// An error as users see it: a fixed message that reveals nothing of the failure.
pub fn visible_error(_error: &ToolError) -> Value {
    json!({ "message": "Customer lookup failed" })
}

#[cfg(test)]
mod tests {
    use super::*;
    use tool_core::spec::{TransformPhase, TransformTarget};

    fn query(id: &str) -> Value {
        json!({"customerId": id, "internalPath": "/crm/eu/customers"})
    }

    #[tokio::test]
    async fn the_app_gets_the_raw_record_and_users_the_display_name() {
        let out = Registry::global()
            .call("lookup-customer", query("cus_001"), CallOptions::default())
            .await
            .unwrap();
        assert_eq!(
            out.value(),
            json!({"displayName": "Acme", "apiKey": "secret-value", "debugScore": 0.97})
        );
        assert_eq!(out.display(), Some(&Ok(json!({"displayName": "Acme"}))));
        assert_eq!(out.transcript(), Some(&Ok(json!({"displayName": "Acme"}))));
    }

    #[tokio::test]
    async fn unknown_customers_list_the_known_ids() {
        let err = Registry::global()
            .call("lookup-customer", query("cus_999"), CallOptions::default())
            .await
            .unwrap_err();
        assert_eq!(
            err.message(),
            "No customer with id `cus_999`. Known ids: cus_001, cus_002, cus_003."
        );
    }

    #[tokio::test]
    async fn long_ids_and_paths_are_refused() {
        let long_id = json!({"customerId": "c".repeat(65), "internalPath": "/crm"});
        let err = Registry::global()
            .call("lookup-customer", long_id, CallOptions::default())
            .await
            .unwrap_err();
        assert_eq!(err.message(), "customerId is 65 characters long; the limit is 64.");
        let long_path = json!({"customerId": "cus_001", "internalPath": "/".repeat(1025)});
        let err = Registry::global()
            .call("lookup-customer", long_path, CallOptions::default())
            .await
            .unwrap_err();
        assert_eq!(err.message(), "internalPath is 1025 characters long; the limit is 1024.");
    }

    #[test]
    fn input_and_error_transforms_hide_internals() {
        let tool = Registry::global().get("lookup-customer").unwrap();
        for target in [TransformTarget::Display, TransformTarget::Transcript] {
            let shown = tool.transform(target, TransformPhase::Input, &query("cus_002")).unwrap().unwrap();
            assert_eq!(shown, json!({"customerId": "cus_002"}));
            let err = ToolError::new("database at /crm/eu is down").to_json();
            let shown = tool.transform(target, TransformPhase::Error, &err).unwrap().unwrap();
            assert_eq!(shown, json!({"message": "Customer lookup failed"}));
            // Phases that are not configured are left to the runtime.
            assert!(tool.transform(target, TransformPhase::Approval, &query("cus_002")).is_none());
        }
        assert_eq!(tool.spec().behaviour.transforms.len(), 6);
    }
}
