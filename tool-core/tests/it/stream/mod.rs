pub mod drivers;
pub mod partial_json_props;
pub mod runtime;
