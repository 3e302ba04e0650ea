//! `call_overhead`: a three-field tool called through the registry (limits, validation,
//! deserialise, execute, serialise, output validation) against the hand-written baseline
//! (`serde_json::from_str` + direct call + `serde_json::to_string`) in the same run.

use criterion::{Criterion, criterion_group, criterion_main};
use tool_core::prelude::*;

#[path = "support/forecast.rs"]
mod forecast_tool;
use forecast_tool::{ARGS, Forecast, ForecastInput, forecast};

fn call_overhead(c: &mut Criterion) {
    let rt = tokio::runtime::Builder::new_current_thread().enable_all().build().unwrap();
    let registry = Registry::global();
    let mut group = c.benchmark_group("call_overhead");
    group.bench_function("baseline_direct", |b| {
        b.to_async(&rt).iter(|| async {
            let input: ForecastInput = serde_json::from_str(std::hint::black_box(ARGS)).unwrap();
            let out = forecast(input.city, input.days, input.metric).await;
            serde_json::to_string(&out).unwrap()
        })
    });
    group.bench_function("registry_call", |b| {
        b.to_async(&rt).iter(|| async {
            let out = registry
                .call("bench-forecast", std::hint::black_box(ARGS), CallOptions::default())
                .await
                .unwrap();
            out.json
        })
    });
    let noop = DynamicTool::builder("noop", "Does nothing")
        .handler(|_, _| async { Ok(serde_json::Value::Null) })
        .unwrap();
    let small = Registry::from_iter([noop]);
    group.bench_function("registry_fixed_cost_noop", |b| {
        b.to_async(&rt).iter(|| async {
            small
                .call("noop", std::hint::black_box("{}"), CallOptions::default())
                .await
                .unwrap()
        })
    });
    group.finish();
}

/// The parts of the registry path, measured alone, to show where the time goes.
fn parts(c: &mut Criterion) {
    let tool = forecast::tool().unwrap();
    let spec = tool.spec();
    let input_validator = jsonschema::validator_for(&spec.schemas.input).unwrap();
    let output_validator = jsonschema::validator_for(spec.schemas.output.as_ref().unwrap()).unwrap();
    let input: serde_json::Value = serde_json::from_str(ARGS).unwrap();
    let output = Forecast {
        city: "Lisbon".into(),
        days: 3,
        high: 21.5,
        summary: "sunny".into(),
    };
    let output_value = serde_json::to_value(&output).unwrap();
    let fast_validator = jsonschema::options_for::<tool_core::json::Borrowed>()
        .build(&spec.schemas.input)
        .unwrap();
    let tree = tool_core::json::Node::parse(ARGS).unwrap();
    let output_text = serde_json::to_string(&output).unwrap();
    let output_fast = jsonschema::options_for::<tool_core::json::Borrowed>()
        .build(spec.schemas.output.as_ref().unwrap())
        .unwrap();
    let mut group = c.benchmark_group("call_overhead_parts");
    // What the guarantees cost beyond the baseline's parse and serialise, at the least: the
    // arguments' duplicate-key pass (`{"days": 1, "days": 999}` must not decode as the last
    // one) and the output check of a type nothing vouches for (the typed output serialised
    // into a tree, then validated, as a registry call does). Baseline + this is the floor of a
    // registry call with these checks.
    group.bench_function("guarantee_checks", |b| {
        b.iter(|| {
            let unique = tool_core::json::surely_unique(std::hint::black_box(ARGS));
            let tree = tool_core::json::to_tree(std::hint::black_box(&output)).unwrap();
            unique && output_fast.is_valid(&tree)
        })
    });
    // The check as it was until session 12: the output's text parsed back into a tree.
    group.bench_function("output_check_by_parsing_text", |b| {
        b.iter(|| {
            let tree = tool_core::json::Node::parse(std::hint::black_box(&output_text)).unwrap();
            output_fast.is_valid(&tree)
        })
    });
    group.bench_function("output_check_by_tree", |b| {
        b.iter(|| {
            let tree = tool_core::json::to_tree(std::hint::black_box(&output)).unwrap();
            output_fast.is_valid(&tree)
        })
    });
    group.bench_function("parse_args_to_borrowed_tree", |b| {
        b.iter(|| tool_core::json::Node::parse(std::hint::black_box(ARGS)).unwrap())
    });
    group.bench_function("validate_borrowed_tree", |b| {
        b.iter(|| fast_validator.is_valid(std::hint::black_box(&tree)))
    });
    group.bench_function("parse_args_to_input", |b| {
        b.iter(|| serde_json::from_str::<ForecastInput>(std::hint::black_box(ARGS)).unwrap())
    });
    group.bench_function("output_to_string", |b| {
        b.iter(|| serde_json::to_string(std::hint::black_box(&output)).unwrap())
    });
    group.bench_function("parse_args_to_value", |b| {
        b.iter(|| serde_json::from_str::<serde_json::Value>(std::hint::black_box(ARGS)).unwrap())
    });
    group.bench_function("validate_input", |b| {
        b.iter(|| input_validator.is_valid(std::hint::black_box(&input)))
    });
    group.bench_function("value_to_input", |b| {
        b.iter(|| serde_json::from_value::<ForecastInput>(std::hint::black_box(input.clone())).unwrap())
    });
    group.bench_function("output_to_value", |b| {
        b.iter(|| serde_json::to_value(std::hint::black_box(&output)).unwrap())
    });
    group.bench_function("validate_output", |b| {
        b.iter(|| output_validator.is_valid(std::hint::black_box(&output_value)))
    });
    group.bench_function("value_to_string", |b| {
        b.iter(|| serde_json::to_string(std::hint::black_box(&output_value)).unwrap())
    });
    group.finish();
}

criterion_group!(benches, call_overhead, parts);
criterion_main!(benches);
