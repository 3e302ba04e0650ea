//! What a function named in `#[tool(...)]` (hook, transform, approval predicate) fails with
//! reaches the runtime as a `ToolError`: its own kept whole, any other error as its text.

use tool_core::__private_v0_1::{ApprovalReturn, hook, transformed};
use tool_core::{ErrorKind, ToolError};

#[test]
fn a_tool_error_a_hook_returns_keeps_its_kind_and_any_other_error_its_text() {
    let own = hook(Err::<(), _>(ToolError::with_kind(ErrorKind::InputRejected, "not on Sundays"))).unwrap_err();
    assert_eq!((own.kind(), own.message()), (ErrorKind::InputRejected, "not on Sundays"));
    let text = hook(Err::<(), _>("blank location".to_owned())).unwrap_err();
    assert_eq!((text.kind(), text.message()), (ErrorKind::Execution, "blank location"));
    let io = transformed(Err::<serde_json::Value, _>(std::io::Error::other("disk")))
        .unwrap()
        .unwrap_err();
    assert_eq!((io.kind(), io.message()), (ErrorKind::Execution, "disk"));
    assert!(hook(()).is_ok() && ApprovalReturn::into_approval(Ok::<bool, String>(true)).unwrap());
}
