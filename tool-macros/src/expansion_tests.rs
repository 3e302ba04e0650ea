//! Snapshots of whole expansions for the main shapes (reviewed by hand; `cargo insta review`).

use quote::quote;

fn expand(args: proc_macro2::TokenStream, item: proc_macro2::TokenStream) -> String {
    let tokens = crate::expand::tool(args, item);
    let file: syn::File = syn::parse2(tokens).expect("the expansion parses as a file");
    prettyplease::unparse(&file)
}

#[test]
fn struct_input_with_strict_and_result() {
    insta::assert_snapshot!(expand(
        quote!(id = "weather-tool", strict),
        quote! {
            /// Get the current weather for a location
            pub async fn weather(input: WeatherInput) -> Result<Weather, ToolError> {
                todo!()
            }
        }
    ));
}

#[test]
fn client_side_without_a_body() {
    insta::assert_snapshot!(expand(
        quote!(id = "show-map", on_output = shown),
        quote! {
            /// Shows a map in the user's browser
            pub fn show_map(input: MapInput) -> MapShown;
        }
    ));
}

#[test]
fn plain_parameters_with_docs_and_context() {
    insta::assert_snapshot!(expand(
        quote!(context = Tenant),
        quote! {
            /// Add two numbers
            pub async fn add(
                /// The first addend
                a: f64,
                /// The second addend
                b: Option<f64>,
                /// Where the sum is wanted (sent as the HTTP header `Mcp-Param-Region` too)
                #[tool(header = "Region")]
                region: String,
                #[ctx] cx: ToolContext<Tenant>,
            ) -> f64 {
                a + b.unwrap_or_default()
            }
        }
    ));
}

#[test]
fn suspend_and_resume_through_the_context() {
    insta::assert_snapshot!(expand(
        quote!(suspend = Ask, resume = Reply),
        quote! {
            /// Delete a file once the user agrees
            pub async fn delete_file(path: String, #[ctx] cx: ToolContext<RequestContext, Ask, Reply>) -> Result<String, ToolError> {
                todo!()
            }
        }
    ));
}

#[test]
fn every_option() {
    insta::assert_snapshot!(expand(
        quote!(
            title = "Customer",
            icon = "https://example.com/customer.png",
            blocking,
            isolate = "process",
            max_model_output = "16KiB",
            idempotent = "recover",
            require_approval = needs_approval,
            to_model_output = summary,
            transform(display(input = show_in, error = show_err), transcript(output = show_out)),
            suspend = Pause,
            resume = Resume,
            mcp(
                title = "Lookup",
                read_only_hint = true,
                meta = json!({"v": 1}),
                requires = ["elicitation"]
            ),
            provider_options(anthropic = json!({"cache_control": {"type": "ephemeral"}})),
            input_examples = [Lookup { id: "c1".into() }],
            background(timeout_ms = 1000, max_retries = 2),
            on_input_start = started,
            on_output = finished,
            defer_loading,
            namespace = "crm",
            eager_input_streaming,
            allowed_callers = ["direct", "code_execution_20250825"],
            behavior = "non_blocking",
        ),
        quote! {
            /// Look up a customer
            async fn lookup(input: Lookup) -> Customer {
                todo!()
            }
        }
    ));
}

#[test]
fn no_parameters_and_unit_output() {
    insta::assert_snapshot!(expand(
        quote!(),
        quote! {
            /// Ping
            async fn ping() {}
        }
    ));
}

#[test]
fn single_parameter_decided_by_its_type() {
    insta::assert_snapshot!(expand(
        quote!(),
        quote! {
            /// Convert to Fahrenheit
            pub async fn to_fahrenheit(
                /// Degrees Celsius
                celsius: Celsius,
            ) -> Outcome<f64> {
                Ok(celsius * 1.8 + 32.0)
            }
        }
    ));
}

#[test]
fn marked_whole_input() {
    insta::assert_snapshot!(expand(
        quote!(),
        quote! {
            /// Set labels
            pub async fn set_labels(#[input] labels: HashMap<String, String>) -> usize {
                labels.len()
            }
        }
    ));
}

#[test]
fn errors_keep_the_function_and_stub_what_is_named() {
    insta::assert_snapshot!(expand(
        quote!(titel = "Weather"),
        quote! {
            /// Get the weather
            pub async fn weather(city: String, days: Option<u8>) -> String {
                city
            }
        }
    ));
}

#[test]
fn errors_in_a_method_keep_only_the_function() {
    let out = expand(
        quote!(),
        quote! {
            /// Get the weather
            pub async fn weather(&self, city: String) -> String {
                city
            }
        },
    );
    assert!(out.contains("remove the `self` receiver"), "{out}");
    assert!(!out.contains("struct weather"), "{out}");
}

#[test]
fn errors_keep_the_function() {
    let out = expand(
        quote!(idd = "x"),
        quote! {
            async fn undocumented() {}
        },
    );
    assert!(out.contains("compile_error!"), "{out}");
    assert!(out.contains("unknown `#[tool]` key `idd` (did you mean `id`?)"), "{out}");
    assert!(out.contains("has no description"), "{out}");
    assert!(out.contains("async fn undocumented()"), "{out}");
}
