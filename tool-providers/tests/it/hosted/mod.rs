pub mod arcade;
pub mod composio;
pub mod oauth_tenants;
pub mod placement;
