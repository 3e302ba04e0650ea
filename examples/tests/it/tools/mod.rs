pub mod crash_inputs;
pub mod implied_props;
pub mod seed_hooks;
