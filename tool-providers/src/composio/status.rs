//! Composio's connected-account statuses mapped onto ours: `ACTIVE` → completed/active;
//! `INITIALIZING`/`INITIATED` → pending; `FAILED`/`EXPIRED`/`INACTIVE`/`REVOKED` → failed
//! (a listed `INACTIVE` or disabled account is inactive).
//!
//! Owns only the mapping, over the wire's [`Account`]; it must not fetch anything.

use tool_core::provider::{AuthStatus, ConnectionStatus};

use super::api::Account;

/// What the chat tools report for one toolkit of a user.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum ToolkitStatus {
    /// An account is active.
    Active,
    /// An authorization is under way.
    Pending,
    /// The user holds no account of the toolkit.
    NotConnected,
    /// Accounts exist, none usable.
    Failed,
}

impl ToolkitStatus {
    /// The word the model reads.
    pub(super) fn as_str(self) -> &'static str {
        match self {
            ToolkitStatus::Active => "active",
            ToolkitStatus::Pending => "pending",
            ToolkitStatus::NotConnected => "not_connected",
            ToolkitStatus::Failed => "failed",
        }
    }

    /// Where a user's accounts of one toolkit leave it.
    pub(super) fn of(accounts: &[&Account]) -> Self {
        if accounts.iter().any(|a| a.is_active()) {
            ToolkitStatus::Active
        } else if accounts.iter().any(|a| a.is_pending()) {
            ToolkitStatus::Pending
        } else if accounts.is_empty() {
            ToolkitStatus::NotConnected
        } else {
            ToolkitStatus::Failed
        }
    }
}

impl Account {
    fn status(&self) -> &str {
        self.status.as_deref().unwrap_or_default()
    }

    /// Usable: `ACTIVE` and not disabled.
    pub(super) fn is_active(&self) -> bool {
        self.status() == "ACTIVE" && self.is_disabled != Some(true)
    }

    /// Authorization under way: `INITIALIZING` or `INITIATED`.
    pub(super) fn is_pending(&self) -> bool {
        matches!(self.status(), "INITIALIZING" | "INITIATED")
    }

    /// Where its authorization flow stands.
    pub(super) fn auth_status(&self) -> AuthStatus {
        match self.status() {
            "ACTIVE" => AuthStatus::Completed,
            _ if self.is_pending() => AuthStatus::Pending,
            _ => AuthStatus::Failed,
        }
    }

    /// Its state in a listing.
    pub(super) fn connection_status(&self) -> ConnectionStatus {
        match self.status() {
            "ACTIVE" if self.is_disabled == Some(true) => ConnectionStatus::Inactive,
            "ACTIVE" => ConnectionStatus::Active,
            "INACTIVE" => ConnectionStatus::Inactive,
            _ if self.is_pending() => ConnectionStatus::Pending,
            _ => ConnectionStatus::Failed,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn account(v: serde_json::Value) -> Account {
        serde_json::from_value(v).unwrap()
    }

    #[test]
    fn statuses_map_as_the_reference_says() {
        for (s, a, c) in [
            ("ACTIVE", AuthStatus::Completed, ConnectionStatus::Active),
            ("INITIALIZING", AuthStatus::Pending, ConnectionStatus::Pending),
            ("INITIATED", AuthStatus::Pending, ConnectionStatus::Pending),
            ("FAILED", AuthStatus::Failed, ConnectionStatus::Failed),
            ("EXPIRED", AuthStatus::Failed, ConnectionStatus::Failed),
            ("INACTIVE", AuthStatus::Failed, ConnectionStatus::Inactive),
            ("REVOKED", AuthStatus::Failed, ConnectionStatus::Failed),
        ] {
            let account = account(serde_json::json!({"status": s}));
            assert_eq!((account.auth_status(), account.connection_status()), (a, c), "{s}");
        }
        assert_eq!(
            account(serde_json::json!({"status": "ACTIVE", "is_disabled": true})).connection_status(),
            ConnectionStatus::Inactive
        );
    }

    #[test]
    fn a_toolkit_is_as_connected_as_its_best_account() {
        let active = account(serde_json::json!({"status": "ACTIVE"}));
        let pending = account(serde_json::json!({"status": "INITIATED"}));
        let failed = account(serde_json::json!({"status": "EXPIRED"}));
        assert_eq!(ToolkitStatus::of(&[&failed, &active]), ToolkitStatus::Active);
        assert_eq!(ToolkitStatus::of(&[&failed, &pending]), ToolkitStatus::Pending);
        assert_eq!(ToolkitStatus::of(&[&failed]), ToolkitStatus::Failed);
        assert_eq!(ToolkitStatus::of(&[]).as_str(), "not_connected");
    }
}
