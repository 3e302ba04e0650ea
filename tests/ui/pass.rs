//! Every `ui/<feature>/pass_*.rs` case but `registry/`'s, as one program. Each file is a module
//! whose `pub fn main` runs its checks over a registry of its own tools
//! (`Registry::from_module(module_path!())`), so ids may repeat across files. One program is
//! linked where 24 were, each linking tool-core with every feature (≈ 30 MB apiece), which kept
//! `target/` above 5 GB. `ui.rs` checks that every case file is listed here.
//! `registry/`'s cases stay programs of their own: they test the global registry itself.

#[path = "approval/pass_require_approval.rs"]
mod require_approval;
#[path = "background/pass_background.rs"]
mod background;
#[path = "client_side/pass_client_side.rs"]
mod client_side;
#[path = "context/pass_ctx_inferred.rs"]
mod ctx_inferred;
#[path = "context/pass_ctx_param.rs"]
mod ctx_param;
#[path = "header/pass_header.rs"]
mod header;
#[path = "hooks/pass_hooks.rs"]
mod hooks;
#[path = "idempotent/pass_idempotent.rs"]
mod idempotent;
#[path = "input/pass_field_marker.rs"]
mod field_marker;
#[path = "input/pass_input_marker.rs"]
mod input_marker;
#[path = "input_examples/pass_input_examples.rs"]
mod input_examples;
#[path = "isolation/pass_blocking_isolate.rs"]
mod blocking_isolate;
#[path = "max_model_output/pass_max_model_output.rs"]
mod max_model_output;
#[path = "mcp/pass_mcp.rs"]
mod mcp;
#[path = "model_output/pass_to_model_output.rs"]
mod to_model_output;
#[path = "output/pass_result_alias.rs"]
mod result_alias;
#[path = "params/pass_alias_param.rs"]
mod alias_param;
#[path = "params/pass_plain_params.rs"]
mod plain_params;
#[path = "params/pass_raw_ident.rs"]
mod raw_ident;
#[path = "payload_types/pass_suspend_resume.rs"]
mod suspend_resume;
#[path = "provider_options/pass_provider_options.rs"]
mod provider_options;
#[path = "provider_fields/pass_provider_fields.rs"]
mod provider_fields;
#[path = "scopes/pass_scopes.rs"]
mod scopes;
#[path = "strict/pass_strict.rs"]
mod strict;
#[path = "tags/pass_tags.rs"]
mod tags;
#[path = "tool_search/pass_defer_and_namespace.rs"]
mod defer_and_namespace;
#[path = "transform/pass_transform.rs"]
mod transform;
#[path = "weather/pass_weather.rs"]
mod weather;

fn main() {
    // The cases share ids (`weather` in several): the global registry cannot be built, and a
    // registry of the whole program reports each shared id with both definitions.
    assert!(tool_core::Registry::try_global().is_err());
    let whole = tool_core::Registry::from_module(module_path!()).unwrap_err();
    let weather = whole.0.iter().find_map(|p| match p {
        tool_core::RegistryProblem::DuplicateId { id, first, second } if id == "weather" => Some((first, second)),
        _ => None,
    });
    let (first, second) = weather.expect("the shared id `weather` is reported");
    assert_ne!(first.module_path, second.module_path);
    require_approval::main();
    header::main();
    background::main();
    client_side::main();
    ctx_inferred::main();
    ctx_param::main();
    hooks::main();
    idempotent::main();
    field_marker::main();
    input_marker::main();
    input_examples::main();
    blocking_isolate::main();
    max_model_output::main();
    mcp::main();
    to_model_output::main();
    result_alias::main();
    alias_param::main();
    plain_params::main();
    raw_ident::main();
    suspend_resume::main();
    provider_options::main();
    provider_fields::main();
    scopes::main();
    strict::main();
    tags::main();
    defer_and_namespace::main();
    transform::main();
    weather::main();
}
