// `require_approval` (always) and `require_approval = predicate` over the typed input and context;
// a failing predicate means approval is required, and `call` never runs a tool that needs it.
use tool_core::prelude::*;
use tool_core::spec::ApprovalRule;

#[derive(Deserialize, JsonSchema)]
pub struct Transfer {
    /// Amount in cents
    pub amount: u64,
}

#[derive(Deserialize, JsonSchema)]
pub struct Limits {
    /// Largest amount allowed without approval
    pub max_unapproved: u64,
}

fn over_limit(input: &Transfer, cx: &Limits) -> bool {
    input.amount > cx.max_unapproved
}

fn large(input: &Transfer, _cx: &RequestContext) -> Result<bool, String> {
    if input.amount == 0 {
        return Err("zero transfers are suspicious".into());
    }
    Ok(input.amount > 1000)
}

/// Transfer money within the tenant's limit
#[tool(require_approval = over_limit, context = Limits)]
pub async fn transfer(input: Transfer) -> u64 {
    input.amount
}

/// Transfer money
#[tool(require_approval = large)]
pub async fn transfer_any(input: Transfer) -> u64 {
    input.amount
}

/// Approval unless the caller's token grants `payments.admin`: a predicate may take the
/// call's authenticated caller as a third parameter.
fn unless_admin(_: &Transfer, _: &RequestContext, caller: Option<&Caller>) -> bool {
    !caller.is_some_and(|c| c.scopes().contains("payments.admin"))
}

/// Transfer money, freely for administrators
#[tool(require_approval = unless_admin)]
pub async fn transfer_as_admin(input: Transfer) -> u64 {
    input.amount
}

/// Delete everything
#[tool(require_approval)]
pub async fn delete_all() -> bool {
    true
}

/// Read something
#[tool]
pub async fn read() -> bool {
    true
}

fn ctx(v: Value) -> serde_json::Map<String, Value> {
    v.as_object().unwrap().clone()
}

pub fn main() {
    tokio::runtime::Runtime::new().unwrap().block_on(async {
        let registry = &Registry::from_module(module_path!()).unwrap();

        let t = registry.get("transfer").unwrap();
        assert_eq!(t.spec().policy.require_approval, ApprovalRule::Predicate);
        let limits = ctx(json!({"max_unapproved": 500}));
        assert!(!t.requires_approval(tool_core::ToolInput::Value(&json!({"amount": 100})), &limits, None));
        assert!(t.requires_approval(tool_core::ToolInput::Value(&json!({"amount": 900})), &limits, None));
        // A context that does not decode: fail closed.
        assert!(t.requires_approval(tool_core::ToolInput::Value(&json!({"amount": 100})), &ctx(json!({})), None));

        let t = registry.get("transfer-any").unwrap();
        let none = ctx(json!({}));
        assert!(!t.requires_approval(tool_core::ToolInput::Value(&json!({"amount": 10})), &none, None));
        assert!(t.requires_approval(tool_core::ToolInput::Value(&json!({"amount": 5000})), &none, None));
        assert!(t.requires_approval(tool_core::ToolInput::Value(&json!({"amount": 0})), &none, None));

        let t = registry.get("delete-all").unwrap();
        assert_eq!(t.spec().policy.require_approval, ApprovalRule::Always);
        assert!(t.requires_approval(tool_core::ToolInput::Value(&json!({})), &none, None));

        let t = registry.get("read").unwrap();
        assert_eq!(t.spec().policy.require_approval, ApprovalRule::Never);
        assert!(!t.requires_approval(tool_core::ToolInput::Value(&json!({})), &none, None));

        let t = registry.get("transfer-as-admin").unwrap();
        let admin = Caller::new("ada", ["payments.admin"]);
        let clerk = Caller::new("bob", ["payments.read"]);
        let amount = json!({"amount": 10});
        assert!(!t.requires_approval(tool_core::ToolInput::Value(&amount), &none, Some(&admin)));
        assert!(t.requires_approval(tool_core::ToolInput::Value(&amount), &none, Some(&clerk)));
        assert!(t.requires_approval(tool_core::ToolInput::Value(&amount), &none, None));
        let as_caller = |caller: Caller| {
            let mut options = CallOptions::default();
            options.data.caller = Some(std::sync::Arc::new(caller));
            options
        };
        let out = registry.call("transfer-as-admin", amount.clone(), as_caller(admin)).await.unwrap();
        assert_eq!(out.value(), json!(10));
        let err = registry.call("transfer-as-admin", amount.clone(), as_caller(clerk)).await.unwrap_err();
        assert_eq!(err.kind(), tool_core::ErrorKind::ApprovalRequired, "{err}");

        // `call` runs a tool only when no approval is needed; otherwise it fails closed.
        let limits = || CallOptions::with_context(json!({"max_unapproved": 500}));
        let out = registry.call("transfer", json!({"amount": 100}), limits()).await.unwrap();
        assert_eq!(out.value(), json!(100));
        let err = registry.call("transfer", json!({"amount": 900}), limits()).await.unwrap_err();
        assert_eq!(err.kind(), tool_core::ErrorKind::ApprovalRequired, "{err}");
        let err = registry.call("delete-all", json!({}), CallOptions::default()).await.unwrap_err();
        assert_eq!(err.kind(), tool_core::ErrorKind::ApprovalRequired, "{err}");
    });
}
