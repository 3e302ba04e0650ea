//! Arcade's statuses mapped onto ours: a user connection's `connection_status` and an
//! authorization flow's `status`.
//!
//! Owns only the mapping; it must not fetch anything.

use tool_core::provider::{AuthStatus, Connection, ConnectionStatus};

use super::api::UserConnection;

/// Arcade's `connection_status` as a [`ConnectionStatus`]: `active`/`connected`/`completed`
/// are active; `pending`/`not_started`/`initializing`/`initiated` pending;
/// `failed`/`error`/`expired`/`revoked` failed; anything else (`inactive`, unknown values)
/// inactive, so it is never pinned by mistake.
pub(super) fn connection_status(status: Option<&str>) -> ConnectionStatus {
    match status.map(|s| s.trim().to_ascii_lowercase()).as_deref() {
        Some("active" | "connected" | "completed") => ConnectionStatus::Active,
        Some("pending" | "not_started" | "initializing" | "initiated") => ConnectionStatus::Pending,
        Some("failed" | "error" | "expired" | "revoked") => ConnectionStatus::Failed,
        _ => ConnectionStatus::Inactive,
    }
}

/// An authorization flow's `status`: `completed`, `pending`/`not_started`, `failed`; `None`
/// for any other (the caller decides what an unknown status means).
pub(super) fn auth_status(status: Option<&str>) -> Option<AuthStatus> {
    match status {
        Some("completed") => Some(AuthStatus::Completed),
        Some("pending" | "not_started") => Some(AuthStatus::Pending),
        Some("failed") => Some(AuthStatus::Failed),
        _ => None,
    }
}

impl UserConnection {
    /// Its state.
    pub(super) fn status(&self) -> ConnectionStatus {
        connection_status(self.connection_status.as_deref())
    }

    /// As a listed [`Connection`] (none without an `id`).
    pub(super) fn to_connection(&self) -> Option<Connection> {
        let id = self.id.as_deref().filter(|s| !s.is_empty())?;
        Some(Connection {
            connection_id: id.to_owned(),
            status: self.status(),
            created_at: self.created_at.clone().or_else(|| self.created.clone()),
            author_id: self.user_id.clone(),
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn statuses_map_onto_ours() {
        assert_eq!(connection_status(Some(" Connected ")), ConnectionStatus::Active);
        assert_eq!(connection_status(Some("initiated")), ConnectionStatus::Pending);
        assert_eq!(connection_status(Some("revoked")), ConnectionStatus::Failed);
        assert_eq!(connection_status(Some("something-new")), ConnectionStatus::Inactive);
        assert_eq!(connection_status(None), ConnectionStatus::Inactive);
        assert_eq!(auth_status(Some("not_started")), Some(AuthStatus::Pending));
        assert_eq!(auth_status(Some("completed")), Some(AuthStatus::Completed));
        assert_eq!(auth_status(Some("weird")), None);
    }
}
