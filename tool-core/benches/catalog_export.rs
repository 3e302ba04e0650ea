//! `catalog_export`: 1,000 generated tools exported to all six formats (schema passes, name
//! mapping, entry layout, serialisation) against serialising the same schemas with
//! `serde_json::to_vec` once per format, in the same run.

use criterion::{Criterion, criterion_group, criterion_main};
use serde_json::Value;
use tool_core::catalog::Catalog;
use tool_core::{Dialect, DynamicTool, Registry};

#[path = "support/catalog_schema.rs"]
mod catalog_schema;
use catalog_schema::schema;

fn catalog_export(c: &mut Criterion) {
    let schemas: Vec<Value> = (0..1000).map(schema).collect();
    let tools = schemas.iter().enumerate().map(|(i, s)| {
        DynamicTool::builder(format!("toolkit{}.search_{i}", i % 7), format!("Search collection {i}"))
            .input_schema(s.clone())
            .handler(|_, _| async { Ok(Value::Null) })
            .unwrap()
    });
    let registry = Registry::from_iter(tools);
    let all_tools = registry.tools();
    let catalog = Catalog::new("bench", "1", registry);
    let mut group = c.benchmark_group("catalog_export");
    group.sample_size(20);
    group.bench_function("baseline_to_vec_schemas_x6", |b| {
        b.iter(|| {
            let mut bytes = 0;
            for _ in Dialect::ALL {
                bytes += serde_json::to_vec(std::hint::black_box(&schemas)).unwrap().len();
            }
            bytes
        })
    });
    group.bench_function("export_six_formats_warm", |b| {
        b.iter(|| {
            let mut bytes = 0;
            for format in Dialect::ALL {
                let export = catalog.export(format).unwrap();
                bytes += serde_json::to_vec(&export).unwrap().len();
            }
            bytes
        })
    });
    // The first export of a catalog runs the schema passes and caches each entry serialised;
    // measured on a fresh catalog every time.
    group.bench_function("export_six_formats_cold", |b| {
        b.iter_batched_ref(
            || Catalog::new("bench", "1", Registry::try_from_tools(all_tools.clone()).unwrap()),
            |catalog: &mut Catalog| {
                let mut bytes = 0;
                for format in Dialect::ALL {
                    bytes += serde_json::to_vec(&catalog.export(format).unwrap()).unwrap().len();
                }
                bytes
            },
            criterion::BatchSize::LargeInput,
        )
    });
    group.finish();
}

criterion_group!(benches, catalog_export);
criterion_main!(benches);
