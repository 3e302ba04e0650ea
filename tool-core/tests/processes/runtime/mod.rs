pub mod isolation;
pub mod otel_export;
