pub mod calls;
pub mod content;
pub mod dpop;
pub mod jwt_bearer;
pub mod provider;
pub mod questions;
pub mod tls;
